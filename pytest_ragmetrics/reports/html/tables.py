"""The per-eval tables of the HTML report: systems, gates, breakdowns, every aggregate,
and the lists of transformations and stored-baseline pairings, their row ids linked to
the rows' drill-downs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pytest_ragmetrics.gates.evidence import evidence_text
from pytest_ragmetrics.metrics.catalog import BASELINE
from pytest_ragmetrics.metrics.registry import UnknownAggregate, split_aggregate
from pytest_ragmetrics.reports.columns import (
    NOT_COMPUTED,
    Entry,
    interval,
    interval_levels,
    stat,
    system_columns,
    vs_columns,
)
from pytest_ragmetrics.reports.document import run_verdict
from pytest_ragmetrics.reports.html.markup import (
    Html,
    escape,
    table,
    without_empty_columns,
)
from pytest_ragmetrics.reports.html.numbers import aggregate, formatted, plain
from pytest_ragmetrics.reports.html.plots import system_name
from pytest_ragmetrics.reports.model import GateView
from pytest_ragmetrics.results.pairing import not_compared_title, problem_headline

GATE_ORDER = {"failed": 0, "skipped": 1, "passed": 2}
# A stored baseline's rows that did not pair, as the page titles them.
_UNPAIRED = (("removed", "removed"), ("added", "added"), ("inputs changed", "changed"))


def verdict(entries: Sequence[Entry]) -> Html:
    """The headline badge of ``entries``: how many rows failed or errored and how many
    gates failed (red), else all gates hold (green) or none configured."""
    text, clean = run_verdict(entries)
    configured = any(entry.gates for entry in entries)
    kind = "failed" if not clean else "passed" if configured else "skipped"
    return Html(f'<span class="verdict {kind}">{escape(text)}</span>')


def systems_table(entries: Sequence[Entry]) -> Html:
    """One line per system: rows, errors and the main aggregates, each to its metric's
    precision; a column no system has is left out."""
    compared = any(entry.compare_to is not None for entry in entries)
    columns = [*system_columns(), *(vs_columns() if compared else ())]
    rows = []
    for entry in entries:
        reference = entry.compare_to
        versus = "" if reference is None else f' <span class="muted">vs {escape(reference)}</span>'
        name = Html(f"{escape(system_name(entry))}{versus}")
        counts = [plain(entry.n), plain(entry.errors)]
        cells = [formatted(stat(entry, c.metric, c.stat), c.metric, c.stat) for c in columns]
        rows.append([name, *counts, *cells])
    headings = ["System", "N", "Errors", *(c.heading for c in columns)]
    shown, kept = without_empty_columns(headings, rows, keep=3)
    return table(shown, kept, "main num")


def link(row_id: object, anchors: Mapping[str, str]) -> str:
    """``row_id``, linked to its drill-down when the system has that row."""
    key = str(row_id)
    return f'<a href="#{anchors[key]}">{escape(row_id)}</a>' if key in anchors else escape(row_id)


def links(row_ids: Sequence[object], anchors: Mapping[str, str]) -> str:
    """``(n) id, id``: each id linked to its drill-down when the system has that row."""
    shown = [link(i, anchors) for i in row_ids]
    return f"({len(shown)}) {', '.join(shown) or 'none'}"


def _row_metric(gate: GateView) -> str:
    """The per-row metric a gate's aggregate is of (``f1`` for ``f1.mean``)."""
    name = str(gate.name)
    try:
        return split_aggregate(name)[0]
    except UnknownAggregate:
        return name.rpartition(".")[0] or name


def _regressed_rows(gate: GateView, anchors: Mapping[str, str]) -> str:
    """``id before → after, ...``: the paired rows that break the rule on their own, each
    id linked to its drill-down, its values to the gated metric's precision."""
    metric = _row_metric(gate)
    shown = [
        f"{link(change.id, anchors)} "
        + " → ".join(escape(formatted(value, metric)) for value in (change.before, change.after))
        for change in gate.regressed
    ]
    return ", ".join(shown)


def _gate_message(gate: GateView, anchors: Mapping[str, str]) -> Html:
    """The gate's verdict line; the rows that regressed (linked to their drill-down),
    which for a gate that passed break its rule on their own; for a gate that did not
    pass, the whole message, collapsed."""
    lines = str(gate.message or "").splitlines()
    parts = [escape(lines[0]) if lines else ""]
    if regressed := list(gate.regressed):
        title = f"regressed ({len(regressed)})"
        if gate.status == "passed":
            title = f"passes, but {len(regressed)} paired row(s) break the rule on their own"
        rows = _regressed_rows(gate, anchors)
        parts.append(f'<br><span class="regressed">{title}</span>: {rows}')
    if gate.status != "passed" and len(lines) > 1:
        parts.append(f"<details><summary>details</summary><pre>{escape(chr(10).join(lines))}</pre>")
        parts.append("</details>")
    return Html("".join(parts))


def evidence_cell(gate: GateView) -> Html:
    """The gate's evidence (``reports.evidence.evidence_text``: the change or value with
    its interval, p-value, pairs, MDE and verdict) with the method and any advice on its
    margin; or why it has none; empty for a gate with neither."""
    stats = gate.stats
    if stats is None:
        return escape(gate.stats_note or "")
    parts: list[str] = [escape(evidence_text(stats))]
    if stats.method:
        parts.append(f'<br><span class="muted">{escape(stats.method)}</span>')
    if stats.advice:
        parts.append(f'<br><span class="advice">Advice: {escape(stats.advice)}</span>')
    return Html("".join(parts))


def _gate_order(gate: GateView) -> tuple[int, int]:
    """Failed first, then skipped, then passed, those with regressed rows before the
    others."""
    return GATE_ORDER.get(str(gate.status), 1), 0 if gate.regressed else 1


def gates_table(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> str:
    """Every gate of the eval, failed first, its numbers to the gated metric's precision,
    and its evidence when some gate of the eval has any."""
    gates = [
        (entry, ids, gate)
        for entry, ids in zip(entries, anchors, strict=True)
        for gate in entry.gates
    ]
    if not gates:
        return '<p class="note">No gates are configured for this eval.</p>'
    gates.sort(key=lambda found: _gate_order(found[2]))
    evidence = any(gate.stats is not None or gate.stats_note for *_, gate in gates)
    rows = []
    for entry, ids, gate in gates:
        status = str(gate.status)
        css = status if status in GATE_ORDER else "skipped"
        name = str(gate.name)
        rows.append(
            [
                Html(f'<span class="status {css}">{escape(status)}</span>'),
                system_name(entry),
                name,
                str(gate.rule),
                *(aggregate(value, name) for value in (gate.value, gate.bound, gate.baseline)),
                *([evidence_cell(gate)] if evidence else []),
                _gate_message(gate, ids),
            ]
        )
    headings = ["Status", "System", "Gate", "Rule", "Value", "Bound", "Baseline"]
    headings += [*(["Evidence"] if evidence else []), "Message"]
    return table(headings, rows, "gates")


_BREAKDOWNS: dict[str, tuple[str, Callable[[Mapping[str, float]], str]]] = {
    "tokens_by_stage": ("Tokens by stage (mean per row)", lambda v: f"{v['mean']:.1f}"),
    "stop_reason": ("Stop reason (rows, share)", lambda v: f"{v['sum']:.0f} ({v['mean']:.0%})"),
}


def breakdowns(entries: Sequence[Entry]) -> list[str]:
    """One table per breakdown that some system has: categories by systems."""
    parts = []
    for key, (title, fmt) in _BREAKDOWNS.items():
        per_system = [entry.breakdowns.get(key) or {} for entry in entries]
        categories = dict.fromkeys(c for breakdown in per_system for c in breakdown)
        rows = [
            [str(c), *(fmt(b[c]) if c in b else NOT_COMPUTED for b in per_system)]
            for c in categories
        ]
        if rows:
            headings = [key, *(system_name(entry) for entry in entries)]
            parts += [f"<h3>{title}</h3>", table(headings, rows, f"{key} num")]
    return parts


def with_interval(entry: Entry, metric: str, name: str) -> str:
    """An aggregate for a cell, with its confidence interval when the entry has one:
    ``0.746 (0.626–0.860)``."""
    value = formatted(stat(entry, metric, name), metric, name)
    drawn = interval(entry, metric, name)
    if value == NOT_COMPUTED or drawn is None or drawn.low is None:
        return value
    low, high = (formatted(end, metric, name) for end in (drawn.low, drawn.high))
    return f"{value} ({low}–{high})"


def _interval_note(entries: Sequence[Entry]) -> str:
    """What the brackets of the aggregates hold, when some system has intervals."""
    levels = sorted(f"{level * 100:g}%" for level in interval_levels(entries))
    if not levels:
        return ""
    level = f"{levels[0]} " if len(levels) == 1 else ""
    return (
        f'<p class="note">In brackets: the {level}confidence interval of the statistic over '
        "this run's rows.</p>"
    )


def aggregates(entries: Sequence[Entry]) -> str:
    """Every numeric aggregate of every system, with its confidence interval where the
    entry has one, collapsed."""
    names = dict.fromkeys(
        (metric, name)
        for entry in entries
        for metric, stats in sorted(entry.metrics.items())
        if isinstance(stats, Mapping)
        for name in stats
    )
    rows = [
        [f"{metric}.{name}", *(with_interval(entry, metric, name) for entry in entries)]
        for metric, name in names
        if any(stat(entry, metric, name) is not None for entry in entries)
    ]
    found = table(["Aggregate", *(system_name(entry) for entry in entries)], rows, "aggregates num")
    note = _interval_note(entries)
    return f"<details><summary>All aggregates ({len(rows)})</summary>{note}{found}</details>"


def signatures(entries: Sequence[Entry]) -> list[str]:
    """How the tool-dependent numbers were computed (sacrebleu's signature strings), one
    line per number, one column per system; nothing when no system has any."""
    per_system = [entry.signatures for entry in entries]
    names = sorted({name for signed in per_system for name in signed})
    if not names:
        return []
    rows = [[name, *(signed.get(name, NOT_COMPUTED) for signed in per_system)] for name in names]
    headings = ["Number", *(system_name(entry) for entry in entries)]
    return ["<h3>Signatures</h3>", table(headings, rows, "signatures")]


def transformations(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> list[str]:
    """Per compared system: the rows that went from IDK to supported, and back."""
    items = []
    for entry, ids in zip(entries, anchors, strict=True):
        if entry.compare_to is None:
            continue
        head = f"<b>{escape(system_name(entry))}</b> vs {escape(entry.compare_to)}"
        changes = entry.transformations
        if changes is None:
            note = entry.transformations_note or "not computed"
            items.append(f"<li>{head}: {escape(note)}</li>")
        else:
            compared = escape(plain(changes.compared))
            idk = links(changes.idk_to_supported, ids)
            items.append(
                f"<li>{head} ({compared} ids compared): IDK → supported {idk} · "
                f"supported → unsupported {links(changes.regressions, ids)}</li>"
            )
    return ["<h3>Transformations</h3>", f"<ul>{''.join(items)}</ul>"] if items else []


def stored_baselines(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> list[str]:
    """Per system with a stored baseline: how its rows pair with this run's by id."""
    items = []
    for entry, ids in zip(entries, anchors, strict=True):
        stored = entry.baseline
        status = stored.status if stored is not None else None
        if stored is None or status is None or status == "none stored":
            continue
        head = f"<b>{escape(system_name(entry))}</b> ({escape(stored.path)})"
        versions = stored.not_compared
        if versions:
            differences = "; ".join(line for lines in versions.values() for line in lines)
            title = not_compared_title(list(versions))
            items.append(f"<li>{head}: {escape(title)}: {escape(differences)}</li>")
        if status != "paired":
            why = problem_headline(str(stored.problem or stored.note or status))
            items.append(f"<li>{head}: {escape(status)}: {escape(why)}</li>")
            continue
        coverage = formatted(stored.coverage, BASELINE, "coverage")
        shared, stored_rows = (plain(stored.count(what)) for what in ("shared", "stored_rows"))
        parts = [
            f"{escape(shared)} of {escape(stored_rows)} stored rows paired "
            f"(coverage {escape(coverage)})"
        ]
        for title, key in (
            ("removed", "removed"),
            ("added", "added"),
            ("inputs changed", "changed"),
        ):
            if stored.ids(key):
                parts.append(f"{title} {links(stored.ids(key), ids)}")
        changes = stored.transformations
        if changes is not None:
            parts.append(f"IDK → supported {links(changes.idk_to_supported, ids)}")
            lost = links(changes.regressions, ids)
            parts.append(f"supported → unsupported {lost}")
        items.append(f"<li>{head}: {' · '.join(parts)}</li>")
    return ["<h3>Stored baseline</h3>", f"<ul>{''.join(items)}</ul>"] if items else []
