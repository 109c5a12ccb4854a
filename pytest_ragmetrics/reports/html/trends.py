"""The trends section of the HTML report: each gated metric over the recorded runs.

With ``--ragmetrics-history`` the report document holds the recorded runs (``history``,
oldest first; see ``results.history``). For every gate of every eval of this run, a small
line plot shows the gate's value in each recorded run that had one, the failed runs in
red, and the gate's bound: one horizontal line when it never moved (an absolute rule),
else a step per run (a rule relative to a baseline, whose bound moves with the
baseline). The x axis is the runs in order, labelled with the time each was recorded and
its short commit (``*`` when tracked files had changes). A collapsed table beside the
plots gives the numbers. A pure function of the report model: the same model renders to
the same string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.reports.html.markup import Html, escape, table
from pytest_ragmetrics.reports.html.plots import Draw, inline_svg
from pytest_ragmetrics.reports.model import EvalView, GateView, HistoryView, ReportModel

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TREND_SIZE = (4.8, 3.0)  # inches: small multiples, two or three to a row
MAX_TICKS = 8  # run labels on the x axis; more would overlap


@dataclass(frozen=True)
class TrendPoint:
    """One recorded run's outcome of a gate: where the run sits on the x axis (its
    position among the runs shown), the gate's value and bound, and its status."""

    run: int
    value: float | None
    bound: float | None
    status: str


def _number(value: object) -> str:
    return "—" if not isinstance(value, int | float) else f"{value:g}"


def run_label(run: Mapping[str, Any]) -> str:
    """How a run is named on the x axis: ``11-24 12:30``, with its short commit below."""
    try:
        when = datetime.fromisoformat(str(run.get("time"))).strftime("%m-%d %H:%M")
    except ValueError:
        when = str(run.get("time"))
    commit = run.get("commit")
    if not commit:
        return when
    return f"{when}\n{str(commit)[:7]}{'*' if run.get('dirty') else ''}"


def tick_positions(count: int) -> list[int]:
    """Which of ``count`` runs get a label: all of up to ``MAX_TICKS``, else
    ``MAX_TICKS`` spread evenly, the first and the last among them."""
    if count <= MAX_TICKS:
        return list(range(count))
    return sorted({round(i * (count - 1) / (MAX_TICKS - 1)) for i in range(MAX_TICKS)})


def _gate_of(run: Mapping[str, Any], label: str, name: str) -> Mapping[str, Any] | None:
    for entry in run.get("evals") or ():
        if entry.get("label") == label:
            for gate in entry.get("gates") or ():
                if gate.get("name") == name:
                    return gate  # type: ignore[no-any-return]
    return None


def gate_trend(runs: Sequence[Mapping[str, Any]], label: str, name: str) -> list[TrendPoint]:
    """The gate ``name`` of the eval ``label`` in each run that had it, in run order."""
    points = []
    for position, run in enumerate(runs):
        gate = _gate_of(run, label, name)
        if gate is not None:
            points.append(
                TrendPoint(position, gate.get("value"), gate.get("bound"), str(gate.get("status")))
            )
    return points


def _xy(pairs: Sequence[tuple[int, float]]) -> tuple[list[int], list[float]]:
    return [x for x, _ in pairs], [y for _, y in pairs]


def _draw_trend(points: Sequence[TrendPoint], labels: Sequence[str], rule: str) -> Draw:
    valued = [(p.run, v) for p in points if (v := p.value) is not None]
    failed = [(p.run, v) for p in points if (v := p.value) is not None and p.status == "failed"]
    bounded = [(p.run, b) for p in points if (b := p.bound) is not None]

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        axes.plot(*_xy(valued), marker="o", color="C0", label="value", gid="values")
        if failed:
            axes.plot(
                *_xy(failed), linestyle="none", marker="o", color="C3", label="failed", gid="failed"
            )
        bounds = {bound for _, bound in bounded}
        if len(bounds) == 1:
            axes.axhline(
                bounds.pop(), linestyle="--", color="grey", label=f"bound {rule}", gid="bound"
            )
        elif bounds:
            axes.plot(
                *_xy(bounded),
                drawstyle="steps-mid",
                linestyle="--",
                color="grey",
                label="bound per run",
                gid="bound",
            )
        ticks = tick_positions(len(labels))
        axes.set_xticks(ticks, [labels[i] for i in ticks], fontsize=7)
        axes.set_xlim(-0.5, len(labels) - 0.5)
        axes.tick_params(axis="y", labelsize=7)
        axes.legend(fontsize=7)
        axes.grid(alpha=0.3)

    return draw


def _trend_figure(
    figure_id: str, name: str, rule: str, points: Sequence[TrendPoint], labels: Sequence[str]
) -> str:
    valued = sum(point.value is not None for point in points)
    title = f"<b>{escape(name)}</b> {escape(rule)}"
    if valued < 2:
        return (
            f'<p class="note">{title}: no trend yet, {valued} recorded run(s) have a value '
            "for this gate.</p>"
        )
    failed = sum(point.status == "failed" for point in points if point.value is not None)
    without = len(points) - valued
    parts = [f"{title}: value in {valued} run(s), {failed} failed (red)"]
    if without:
        parts.append(f"{without} run(s) without a value (the gate was skipped or not checked)")
    svg = inline_svg(_draw_trend(points, labels, rule), figure_id, TREND_SIZE)
    caption = "; ".join(parts) + "; dashed: the bound."
    return f'<figure class="plot" id="{figure_id}">{svg}<figcaption>{caption}</figcaption></figure>'


def _numbers(runs: Sequence[Mapping[str, Any]], label: str, gates: Sequence[GateView]) -> str:
    """The plotted numbers, collapsed: a row per run, each gate's value and status (the
    table scrolls in its own box: a column per gate can be wider than the page)."""
    names = [str(gate.name) for gate in gates]
    rows = []
    for run in runs:
        commit = run.get("commit")
        cells = [str(run.get("time")), str(commit)[:7] if commit else "—"]
        for name in names:
            gate = _gate_of(run, label, name)
            cells.append(
                "—" if gate is None else f"{_number(gate.get('value'))} ({gate.get('status')})"
            )
        rows.append(cells)
    numbers = table(["Run", "Commit", *names], rows, "trends")
    return Html(f"<details><summary>Numbers ({len(runs)} runs)</summary>{numbers}</details>")


def _eval_trends(index: int, entry: EvalView, runs: Sequence[Mapping[str, Any]]) -> str:
    label = str(entry.label)
    gates = entry.gates
    labels = [run_label(run) for run in runs]
    figures = [
        _trend_figure(
            f"trend-{index}-{g}",
            str(gate.name),
            str(gate.rule),
            gate_trend(runs, label, str(gate.name)),
            labels,
        )
        for g, gate in enumerate(gates)
    ]
    return "\n".join([f"<h3>{escape(label)}</h3>", *figures, _numbers(runs, label, gates)])


def _about(history: HistoryView, shown: int) -> str:
    recorded = history.recorded
    parts = [f"{escape(recorded)} run(s) recorded in {escape(history.path)}"]
    if shown < recorded:
        parts.append(f"the last {shown} are drawn")
    if history.appended:
        parts.append("this run is the last")
    else:
        parts.append(f"this run was not recorded: {escape(history.note)}")
    return f'<p class="muted">{"; ".join(parts)}.</p>'


def trends_section(model: ReportModel) -> str:
    """The page's Trends section; empty when the run keeps no history."""
    history = model.history
    if history is None:
        return ""
    runs = list(history.runs)
    parts = ['<section id="trends"><h2>Trends</h2>', _about(history, len(runs))]
    gated = [entry for entry in model.evals if entry.gates]
    if len(runs) < 2:
        parts.append(
            '<p class="note">Trends need two recorded runs; they show from the next run on.</p>'
        )
    elif not gated:
        parts.append('<p class="note">No gates are configured: there is no trend to draw.</p>')
    else:
        parts += [_eval_trends(i, entry, runs) for i, entry in enumerate(gated)]
    return "\n".join([*parts, "</section>"])
