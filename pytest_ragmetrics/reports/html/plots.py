"""The plots of the HTML report, inline SVG drawn by matplotlib (imported only to draw).

Every eval gets the distribution of its main per-row metrics, one ECDF panel per metric,
a line per system and, dashed, the stored baseline's rows when one pairs with this run.
An eval of several systems also gets the Pareto view of overlap against tokens and bars
of the 0–1 metrics, with the confidence interval of each mean when the report has the
eval's ``intervals``. The same document always gives the same bytes.
"""

from __future__ import annotations

import io
import math
import re
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragmetrics.reports.columns import Entry, interval, number, stat
from pytest_ragmetrics.reports.html.markup import escape
from pytest_ragmetrics.reports.model import StoredValues
from pytest_ragmetrics.reports.presentation import (
    bar_metrics,
    not_row_values,
    pareto_axes,
)
from pytest_ragmetrics.reports.presentation import distribution_metrics as drawn_metrics

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Draw = Callable[["Figure"], None]

# The 0-1 metrics drawn as grouped bars are those declared with a ``bar`` place; the
# per-row metrics whose distributions are drawn, those declared with a ``distribution``
# place that an eval recorded (``reports.presentation``). An eval with none of them gets
# its own per-row metrics instead, by name, at most MAX_PANELS; a metric declared not to
# be a row value (``row_value=False``: the row's status says it) is never drawn.
MAX_PANELS = 6
PANEL_COLUMNS = 3

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'((?:xlink:)?href="#|url\(#)([^")]+)')


def system_name(entry: Entry) -> str:
    return "all rows" if entry.system is None else str(entry.system)


def inline_svg(draw: Draw, figure_id: str, size: tuple[float, float]) -> str:
    """What ``draw`` puts on a fresh figure, as inline SVG: matplotlib's default style,
    byte-deterministic, without prolog or comments (matplotlib copies each text into a
    comment), every id prefixed with ``figure_id`` so figures on one page do not clash."""
    from matplotlib import rc_context, style
    from matplotlib.figure import Figure

    # Fixed hash salt, glyphs as paths: the same bytes on every run and machine. No
    # mathtext: "$" in a system name is text.
    with (
        style.context("default"),
        rc_context(
            {"svg.hashsalt": "ragmetrics", "svg.fonttype": "path", "text.parse_math": False}
        ),
    ):
        figure = Figure(figsize=size, layout="constrained")
        draw(figure)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    svg = _COMMENT.sub("", text[text.index("<svg") :])
    svg = _ID.sub(lambda m: f'id="{figure_id}-{m.group(1)}"', svg)
    return _REFERENCE.sub(lambda m: f"{m.group(1)}{figure_id}-{m.group(2)}", svg)


def plot_figure(
    figure_id: str, draw: Draw, caption: str, size: tuple[float, float] = (6.4, 3.8)
) -> str:
    svg = inline_svg(draw, figure_id, size)
    return f'<figure class="plot" id="{figure_id}">{svg}<figcaption>{caption}</figcaption></figure>'


def _skipped(what: str, why: str) -> str:
    return f'<p class="note">{what} skipped: {why}.</p>'


# -- distributions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One line of a distribution panel: a system's values of one metric, this run's or
    (``stored``) its stored baseline's rows."""

    system: int  # the system's place in the eval: its colour
    name: str
    stored: bool
    values: tuple[float, ...]


def ecdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """The empirical distribution function as step points: each value in ascending order
    and the share of values at or below it (ties give several points at one x; the last is
    the share). Empty input, empty lists."""
    ordered = sorted(values)
    return ordered, [(k + 1) / len(ordered) for k in range(len(ordered))]


RowNumbers = Mapping[str, Sequence[float]]


def row_numbers(entry: Entry) -> RowNumbers:
    """Each metric's numbers over the system's rows, in row order (a row without a
    number of it has none there), read in one pass, no row kept: 8 bytes a value
    (``array('d')``), where each panel's own pass once made every row again."""
    found: dict[str, array[float]] = {}
    for row in entry.rows or ():
        for metric, value in row.metrics.items():
            if (as_number := number(value)) is not None:
                if metric not in found:
                    found[metric] = array("d")
                found[metric].append(as_number)
    return found


def _stored_values(entry: Entry, metric: str) -> tuple[float, ...]:
    stored = entry.baseline.row_values if entry.baseline is not None else {}
    # In id order: this run's are made on read in that order (``StoredValues``).
    pairs = stored.items() if isinstance(stored, StoredValues) else sorted(stored.items())
    found = (number(values.get(metric)) for _, values in pairs)
    return tuple(value for value in found if value is not None)


def distribution_series(
    entries: Sequence[Entry], metric: str, numbers: Sequence[RowNumbers] | None = None
) -> list[Series]:
    """Per system, in order: this run's values of ``metric`` over its rows, then its stored
    baseline's, each when there is any; ``numbers``: each system's ``row_numbers``, when
    the caller has them already."""
    numbers = numbers if numbers is not None else [row_numbers(entry) for entry in entries]
    series = []
    for index, entry in enumerate(entries):
        name = system_name(entry)
        now = tuple(numbers[index].get(metric) or ())
        if now:
            series.append(Series(index, name, False, now))
        before = _stored_values(entry, metric)
        if before:
            series.append(Series(index, name, True, before))
    return series


def distribution_metrics(
    entries: Sequence[Entry], numbers: Sequence[RowNumbers] | None = None
) -> list[str]:
    """The metrics to draw: those declared with a ``distribution`` place that some row
    recorded, or failing that the rows' own per-row metrics by name, at most
    ``MAX_PANELS``; ``numbers``: each system's ``row_numbers``, when the caller has them
    already."""
    numbers = numbers if numbers is not None else [row_numbers(entry) for entry in entries]
    hidden = not_row_values()
    recorded = {metric for found in numbers for metric in found if metric not in hidden}
    main = [metric for metric in drawn_metrics() if metric in recorded]
    return main or sorted(recorded)[:MAX_PANELS]


def _draw_distributions(panels: Sequence[tuple[str, Sequence[Series]]], legend: bool) -> Draw:
    def draw(figure: Figure) -> None:
        from matplotlib.lines import Line2D

        rows = math.ceil(len(panels) / PANEL_COLUMNS)
        columns = min(len(panels), PANEL_COLUMNS)
        for place, (metric, series) in enumerate(panels, start=1):
            axes = figure.add_subplot(rows, columns, place)
            for line in series:
                xs, ys = ecdf(line.values)
                style = "--" if line.stored else "-"
                colour = f"C{line.system % 10}"
                axes.step([xs[0], *xs], [0.0, *ys], where="post", linestyle=style, color=colour)
            axes.set_title(metric, fontsize=9)
            axes.set_ylim(0, 1.02)
            axes.tick_params(labelsize=7)
            axes.grid(alpha=0.3)
        if legend:
            systems = dict.fromkeys((s.system, s.name) for _, series in panels for s in series)
            handles = [Line2D([], [], color=f"C{i % 10}") for i, _ in systems]
            labels = [name for _, name in systems]
            if any(s.stored for _, series in panels for s in series):
                handles.append(Line2D([], [], color="grey", linestyle="--"))
                labels.append("stored baseline")
            # Explicit labels: a name starting with "_" would otherwise be left out.
            figure.legend(handles, labels, loc="outside right upper", fontsize=8)

    return draw


def distributions(index: int, entries: Sequence[Entry]) -> str:
    """The distribution figure of an eval (module docstring), or a note saying why none."""
    numbers = [row_numbers(entry) for entry in entries]  # one pass a system
    panels = [
        (m, distribution_series(entries, m, numbers))
        for m in distribution_metrics(entries, numbers)
    ]
    panels = [(metric, series) for metric, series in panels if series]
    if not panels:
        return _skipped("Distribution plot", "no row recorded a per-row value")
    stored = sorted({s.name for _, series in panels for s in series if s.stored})
    legend = len(entries) > 1 or bool(stored)
    caption = (
        "Distribution of each metric over the rows: the share of rows at or below each value "
        "(ECDF), one line per system."
    )
    if stored:
        which = f" ({escape(', '.join(stored))})" if len(entries) > 1 else ""
        caption += (
            f" Dashed: the rows of the stored baseline{which}, as accepted; see Stored "
            "baseline below for how they pair with this run's."
        )
    rows = math.ceil(len(panels) / PANEL_COLUMNS)
    width = 3.2 * min(len(panels), PANEL_COLUMNS) + (1.6 if legend else 0.0)
    draw = _draw_distributions(panels, legend)
    return plot_figure(f"dist-{index}", draw, caption, (width, 2.4 * rows + 0.2))


# -- systems side by side -------------------------------------------------------------------


def pareto_optimal(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For each ``(quality, cost)`` point (overlap and tokens), whether it is
    Pareto-optimal: no other point has at least its quality and at most its cost while
    being strictly better in one. Equal points are all optimal; an empty input gives an
    empty list."""
    return [
        not any(o >= overlap and t <= tokens and (o > overlap or t < tokens) for o, t in points)
        for overlap, tokens in points
    ]


def _row_cloud(entry: Entry, quality: str, cost: str) -> tuple[list[float], list[float]]:
    """Cost and quality of the rows that have both."""
    pairs = [
        (tokens, overlap)
        for row in entry.rows or ()
        if (tokens := number(row.metrics.get(cost))) is not None
        and (overlap := number(row.metrics.get(quality))) is not None
    ]
    return [t for t, _ in pairs], [o for _, o in pairs]


def _draw_pareto(
    systems: Sequence[tuple[int, str, float, float]],
    clouds: Sequence[tuple[list[float], list[float]]],
    optimal: Sequence[bool],
    axes_names: tuple[str, str],
) -> Draw:
    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for (index, name, overlap, tokens), cloud, best in zip(
            systems, clouds, optimal, strict=True
        ):
            colour = f"C{index % 10}"
            axes.scatter(*cloud, s=20, color=colour, alpha=0.35, linewidths=0)
            axes.scatter([tokens], [overlap], s=60, color=colour, zorder=3)
            if best:
                axes.scatter([tokens], [overlap], s=220, facecolors="none", edgecolors="black")
            axes.annotate(name, (tokens, overlap), xytext=(7, 7), textcoords="offset points")
        front = sorted((t, o) for (_, _, o, t), best in zip(systems, optimal, strict=True) if best)
        axes.plot([t for t, _ in front], [o for _, o in front], "--", color="grey", zorder=1)
        quality, cost = axes_names
        axes.set_xlabel(f"{cost}.mean (per row)")
        axes.set_ylabel(f"{quality}.mean")
        axes.grid(alpha=0.3)

    return draw


def pareto(index: int, entries: Sequence[Entry]) -> str:
    """The Pareto view of an eval of several systems, the quality metric (overlap)
    against the cost one (tokens) as declared (``Presentation.pareto``); nothing for one
    system."""
    axes_declared = pareto_axes()
    if len(entries) < 2 or axes_declared is None:
        return ""
    quality, cost = (declared.name for declared in axes_declared)
    systems = [
        (i, system_name(entry), overlap, tokens)
        for i, entry in enumerate(entries)
        if (overlap := stat(entry, quality, "mean")) is not None
        and (tokens := stat(entry, cost, "mean")) is not None
    ]
    if len(systems) < 2:
        why = f"fewer than two systems have {quality}.mean and {cost}.mean"
        return _skipped("Pareto plot", why)
    clouds = [_row_cloud(entries[i], quality, cost) for i, *_ in systems]
    optimal = pareto_optimal([(overlap, tokens) for _, _, overlap, tokens in systems])
    best = ", ".join(name for (_, name, _, _), b in zip(systems, optimal, strict=True) if b)
    high, low = (declared.label for declared in axes_declared)
    caption = (
        f"{high} against {low.lower()}, one point per system (light dots: its rows). Ringed "
        f"and joined: Pareto-optimal (higher {high.lower()}, fewer {low.lower()}): "
        f"{escape(best)}."
    )
    draw = _draw_pareto(systems, clouds, optimal, (quality, cost))
    return plot_figure(f"pareto-{index}", draw, caption)


def _mean(entry: Entry, metric: str) -> float | None:
    mean = stat(entry, metric, "mean")
    return stat(entry, metric, "rate") if mean is None else mean


def _mean_evidence(entry: Entry, metric: str) -> tuple[float, float, float | None] | None:
    """Low, high and confidence of the entry's interval of ``metric``'s mean, when it
    has one with both ends."""
    found = interval(entry, metric)
    if found is None:
        return None
    low, high = number(found.low), number(found.high)
    if low is None or high is None:
        return None
    return low, high, number(found.confidence)


def mean_interval(entry: Entry, metric: str) -> tuple[float, float] | None:
    """The confidence interval of ``metric``'s mean (its rate for a yes/no metric) over
    this run's rows (the entry's ``intervals``), ``None`` when the entry has none."""
    found = _mean_evidence(entry, metric)
    return None if found is None else (found[0], found[1])


def _draw_whiskers(
    axes: Axes,
    row: Sequence[float | None],
    ends: Sequence[tuple[float, float] | None],
    shift: float,
) -> None:
    """A system's confidence interval on each of its bars that has one."""
    whiskers = [
        (j + shift, v, e)
        for j, (v, e) in enumerate(zip(row, ends, strict=True))
        if v is not None and e is not None
    ]
    if whiskers:
        below = [max(0.0, v - low) for _, v, (low, _) in whiskers]
        above = [max(0.0, high - v) for _, v, (_, high) in whiskers]
        axes.errorbar(
            [x for x, _, _ in whiskers],
            [v for _, v, _ in whiskers],
            yerr=[below, above],
            fmt="none",
            ecolor="black",
            elinewidth=1,
            capsize=2,
        )


def _draw_bars(
    names: Sequence[str],
    metrics: Sequence[str],
    values: Sequence[Sequence[float | None]],
    intervals: Sequence[Sequence[tuple[float, float] | None]],
) -> Draw:
    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        width = 0.8 / len(names)
        bars = []
        for i, (row, ends) in enumerate(zip(values, intervals, strict=True)):
            shift = (i - (len(names) - 1) / 2) * width
            placed = [(j + shift, v) for j, v in enumerate(row) if v is not None]
            x, height = [x for x, _ in placed], [v for _, v in placed]
            bars.append(axes.bar(x, height, width, color=f"C{i % 10}"))
            _draw_whiskers(axes, row, ends, shift)
        # Explicit labels: a name starting with "_" would otherwise be left out.
        axes.legend(bars, names, fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
        axes.set_xticks(range(len(metrics)), metrics, rotation=20)
        axes.set_ylim(0, 1.05)
        axes.grid(axis="y", alpha=0.3)

    return draw


def _interval_level(entries: Sequence[Entry], metrics: Sequence[str]) -> str | None:
    """The confidence of the bars' intervals (``95% ``, empty when they differ), ``None``
    when no bar has one."""
    found = [e for entry in entries for m in metrics if (e := _mean_evidence(entry, m))]
    if not found:
        return None
    levels = {confidence for *_, confidence in found}
    (level,) = levels if len(levels) == 1 else (None,)
    return "" if level is None else f"{level * 100:g}% "


def bars(index: int, entries: Sequence[Entry]) -> str:
    """Bars of the 0–1 metrics per system for an eval of several systems, each with the
    confidence interval of its mean when the entry has one; nothing for one system (the
    table has every value)."""
    if len(entries) < 2:
        return ""
    metrics = [m for m in bar_metrics() if any(_mean(entry, m) is not None for entry in entries)]
    if not metrics:
        return _skipped("Metric bars", "no 0–1 metric was computed")
    values = [[_mean(entry, m) for m in metrics] for entry in entries]
    intervals = [[mean_interval(entry, m) for m in metrics] for entry in entries]
    draw = _draw_bars([system_name(entry) for entry in entries], metrics, values, intervals)
    caption = "Mean (rate for yes/no metrics) per system, 0–1."
    if (level := _interval_level(entries, metrics)) is not None:
        caption += f" Whiskers: the {level}confidence interval of the mean over the system's rows."
    return plot_figure(f"bars-{index}", draw, caption)
