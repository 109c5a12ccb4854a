"""The forest plot of an eval's comparisons: one line per gate that compares with a
baseline and whose rows moved, its paired change as a point, the confidence interval of
that change as a line, no change as a grey line and the rule's bound dashed.

Differences and ratios are on different scales, and so are the changes of a score, a
count and a token count: each gets a panel of its own. The colour is the verdict on the
change (``gates[].stats.verdict``: regressed, within noise, improved); a failed gate's
line is shaded red and its label bold. Comparisons in which every pair is unchanged are
left out (the caption counts them). Drawn from ``gates[].stats`` alone, a pure function
of the report model's gates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragmetrics.gates.evidence import GateEvidence
from pytest_ragmetrics.metrics.registry import UnknownAggregate, split_aggregate
from pytest_ragmetrics.reports.columns import Entry
from pytest_ragmetrics.reports.html.numbers import Kind, metric_kind
from pytest_ragmetrics.reports.html.plots import Draw, plot_figure
from pytest_ragmetrics.reports.model import GateView

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SCALES = ("difference", "ratio")
# The verdicts in legend order, with their colours (the page's red, grey, green).
VERDICT_COLOURS = {
    "regressed": "#cf222e",
    "within noise": "#6e7781",
    "improved": "#1a7f37",
    "changed": "#8250df",
}
NO_VERDICT = "#6e7781"
FAILED_BAND = "#ffebe9"
FAILED_TEXT = "#a40e26"
NO_CHANGE = "#57606a"
# A difference panel per kind of number: a change of 0.02 in a score and of 2 in a count
# do not share an axis.
DIFFERENCE_PANELS: dict[Kind, str] = {
    "score": "Change of a score (this run − baseline)",
    "count": "Change of a count (this run − baseline)",
    "integer": "Change in tokens (this run − baseline)",
    "ms": "Change in ms (this run − baseline)",
}
OTHER_DIFFERENCES = "Change (this run − baseline)"
RATIO_PANEL = "Ratio to the baseline (this run ÷ baseline)"


@dataclass(frozen=True)
class Comparison:
    """One line of the forest plot: a gate's paired change and its interval."""

    label: str  # metric.stat, and the system when the eval names one
    panel: str  # the title of its panel
    scale: str  # "difference" or "ratio"
    estimate: float
    low: float
    high: float
    bound: float | None  # the rule's bound on the change, on the same scale
    verdict: str | None
    failed: bool
    confidence: float


def panel_title(scale: str, gate: str) -> str:
    """The panel of a comparison of ``gate`` (``f1.mean``): the ratios share one, the
    differences one per kind of number."""
    if scale == "ratio":
        return RATIO_PANEL
    try:
        metric, stat = split_aggregate(gate)
    except UnknownAggregate:
        return OTHER_DIFFERENCES
    return DIFFERENCE_PANELS.get(metric_kind(metric, stat), OTHER_DIFFERENCES)


def _comparison(entry: Entry, gate: GateView, stats: GateEvidence) -> Comparison | None:
    """The line of one gate's stats, ``None`` when it has no finite interval."""
    name = gate.name
    estimate, (low, high) = stats.estimate, stats.interval
    if not all(math.isfinite(value) for value in (estimate, low, high)):
        return None
    system = entry.system
    return Comparison(
        label=name if system is None else f"{name} · {system}",
        panel=panel_title(stats.scale, name),
        scale=stats.scale,
        estimate=estimate,
        low=low,
        high=high,
        bound=stats.bound,
        verdict=stats.verdict,
        failed=gate.status == "failed",
        confidence=stats.confidence,
    )


def comparisons(entries: Sequence[Entry]) -> tuple[list[Comparison], int]:
    """The comparisons to draw, in the order of the systems and their gates: every gate
    whose stats are a difference or a ratio, but those that passed with every pair
    unchanged; and how many were left out so."""
    drawn, unchanged = [], 0
    for entry in entries:
        for gate in entry.gates:
            stats = gate.stats
            if stats is None or stats.scale not in SCALES:
                continue
            if stats.verdict == "unchanged" and gate.status != "failed":
                unchanged += 1
            elif (found := _comparison(entry, gate, stats)) is not None:
                drawn.append(found)
    return drawn, unchanged


def panels(found: Sequence[Comparison]) -> list[tuple[str, list[Comparison]]]:
    """The comparisons by panel: the differences' panels in the order they first come,
    then the ratios."""
    grouped: dict[str, list[Comparison]] = {}
    for comparison in sorted(found, key=lambda c: c.scale == "ratio"):  # stable
        grouped.setdefault(comparison.panel, []).append(comparison)
    return list(grouped.items())


def limits(rows: Sequence[Comparison], unchanged: float) -> tuple[float, float]:
    """An x range that holds every interval, bound and the line of no change."""
    values = [unchanged, *(v for r in rows for v in (r.low, r.high))]
    values += [r.bound for r in rows if r.bound is not None]
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or 0.05 * max(1.0, abs(low))
    return low - pad, high + pad


def _label(row: Comparison, levels: bool) -> str:
    level = f" @ {row.confidence * 100:g}%" if levels else ""
    return f"{row.label}{level}{' (failed)' if row.failed else ''}"


def _draw_panel(axes: Axes, title: str, rows: Sequence[Comparison], levels: bool) -> None:
    unchanged = 1.0 if rows[0].scale == "ratio" else 0.0
    axes.axvline(unchanged, color=NO_CHANGE, linewidth=1, zorder=1)
    for y, row in enumerate(rows):
        colour = VERDICT_COLOURS.get(row.verdict or "", NO_VERDICT)
        if row.failed:
            axes.axhspan(y - 0.5, y + 0.5, color=FAILED_BAND, linewidth=0, zorder=0)
        axes.plot([row.low, row.high], [y, y], color=colour, linewidth=2, marker="|", zorder=2)
        axes.plot(
            [row.estimate],
            [y],
            marker="D" if row.failed else "o",
            markersize=6,
            color=colour,
            markeredgecolor="black" if row.failed else colour,
            zorder=3,
        )
        if row.bound is not None:
            axes.plot([row.bound] * 2, [y - 0.4, y + 0.4], "--", color="black", linewidth=1.2)
    axes.set_yticks(range(len(rows)), [_label(row, levels) for row in rows], fontsize=8)
    for tick, row in zip(axes.get_yticklabels(), rows, strict=True):
        if row.failed:
            tick.set_color(FAILED_TEXT)
            tick.set_fontweight("bold")
    axes.set_ylim(len(rows) - 0.5, -0.5)  # the first comparison on top
    axes.set_xlim(*limits(rows, unchanged))
    axes.set_title(title, loc="left", fontsize=9)
    axes.tick_params(axis="x", labelsize=8)
    axes.grid(axis="x", alpha=0.3)


def _draw_forest(grouped: Sequence[tuple[str, Sequence[Comparison]]], levels: bool) -> Draw:
    def draw(figure: Figure) -> None:
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        ratios = [len(rows) + 1.5 for _, rows in grouped]
        grid = figure.subplots(len(grouped), 1, squeeze=False, height_ratios=ratios)
        for axes, (title, rows) in zip(grid[:, 0], grouped, strict=True):
            _draw_panel(axes, title, rows, levels)
        shown = {row.verdict for _, rows in grouped for row in rows}
        handles: list[Line2D | Patch] = [
            Line2D([], [], color=colour, marker="o", linewidth=2, label=verdict)
            for verdict, colour in VERDICT_COLOURS.items()
            if verdict in shown
        ]
        handles.append(Line2D([], [], color="black", linestyle="--", label="rule's bound"))
        if any(row.failed for _, rows in grouped for row in rows):
            handles.append(Patch(color=FAILED_BAND, label="failed gate"))
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncols=min(len(handles), 5),
            fontsize=8,
            frameon=False,
        )

    return draw


def forest_size(grouped: Sequence[tuple[str, Sequence[Comparison]]]) -> tuple[float, float]:
    """Inches: the page's plot width, a line's height per comparison plus each panel's
    title and axis, and the legend."""
    height = sum(0.3 * len(rows) + 0.75 for _, rows in grouped) + 0.45
    return 7.0, height


def forest(index: int, entries: Sequence[Entry]) -> str:
    """The forest plot of an eval's comparisons; a note when every comparison is
    unchanged; nothing when the eval has none."""
    found, unchanged = comparisons(entries)
    left_out = (
        f" {unchanged} comparison(s) in which every paired row is unchanged are not drawn."
        if unchanged
        else ""
    )
    if not found:
        if not unchanged:
            return ""
        return (
            f'<p class="note">Comparisons: every paired row of the {unchanged} '
            "comparison(s) is unchanged; nothing to draw.</p>"
        )
    levels = sorted({row.confidence for row in found})
    level = f"{levels[0] * 100:g}%" if len(levels) == 1 else "the gate's own (in its label)"
    grouped = panels(found)
    caption = (
        f"Comparisons ({len(found)}): the point is the paired change from the baseline, the "
        f"line the {level} confidence interval of that change; grey: no change; "
        "dashed: the rule's bound. Colour: the verdict on the change; shaded, bold: a "
        f"failed gate.{left_out}"
    )
    draw = _draw_forest(grouped, len(levels) > 1)
    return plot_figure(f"forest-{index}", draw, caption, forest_size(grouped))
