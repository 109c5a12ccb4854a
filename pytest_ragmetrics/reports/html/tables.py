"""The per-eval tables of the HTML report: systems, gates, breakdowns, every aggregate,
and the lists of transformations and stored-baseline pairings, their row ids linked to
the rows' drill-downs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_ragmetrics.reports.columns import NOT_COMPUTED, SYSTEM_COLUMNS, VS_COLUMNS, Entry, stat
from pytest_ragmetrics.reports.html.markup import (
    Html,
    escape,
    table,
    without_empty_columns,
)
from pytest_ragmetrics.reports.html.numbers import aggregate, formatted, plain
from pytest_ragmetrics.reports.html.plots import system_name

GATE_ORDER = {"failed": 0, "skipped": 1, "passed": 2}


def verdict(gates: Sequence[Mapping[str, Any]]) -> Html:
    """The headline badge: how many gates failed, all hold, or none configured."""
    failed = sum(gate.get("status") == "failed" for gate in gates)
    if failed:
        return Html(f'<span class="verdict failed">{failed} gate(s) failed</span>')
    if gates:
        return Html('<span class="verdict passed">all gates hold</span>')
    return Html('<span class="verdict skipped">no gates configured</span>')


def systems_table(entries: Sequence[Entry]) -> Html:
    """One line per system: rows, errors and the main aggregates, each to its metric's
    precision; a column no system has is left out."""
    compared = any(entry.get("compare_to") is not None for entry in entries)
    columns = [*SYSTEM_COLUMNS, *(VS_COLUMNS if compared else ())]
    rows = []
    for entry in entries:
        reference = entry.get("compare_to")
        versus = "" if reference is None else f' <span class="muted">vs {escape(reference)}</span>'
        name = Html(f"{escape(system_name(entry))}{versus}")
        counts = [plain(entry.get("n")), plain(entry.get("errors"))]
        cells = [formatted(stat(entry, c.metric, c.stat), c.metric, c.stat) for c in columns]
        rows.append([name, *counts, *cells])
    headings = ["System", "N", "Errors", *(c.heading for c in columns)]
    shown, kept = without_empty_columns(headings, rows, keep=3)
    return table(shown, kept, "main num")


def links(row_ids: Sequence[object], anchors: Mapping[str, str]) -> str:
    """``(n) id, id``: each id linked to its drill-down when the system has that row."""
    shown = [
        f'<a href="#{anchors[str(i)]}">{escape(i)}</a>' if str(i) in anchors else escape(i)
        for i in row_ids
    ]
    return f"({len(shown)}) {', '.join(shown) or 'none'}"


def _gate_message(gate: Mapping[str, Any], anchors: Mapping[str, str]) -> Html:
    """The gate's verdict line; for a gate that did not pass, the rows that regressed
    (linked to their drill-down) and the whole message, collapsed."""
    lines = str(gate.get("message") or "").splitlines()
    parts = [escape(lines[0]) if lines else ""]
    regressed = [change.get("id") for change in gate.get("regressed") or ()]
    if regressed:
        parts.append(f"<br>regressed {links(regressed, anchors)}")
    if gate.get("status") != "passed" and len(lines) > 1:
        parts.append(f"<details><summary>details</summary><pre>{escape(chr(10).join(lines))}</pre>")
        parts.append("</details>")
    return Html("".join(parts))


def gates_table(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> str:
    """Every gate of the eval, failed first, its numbers to the gated metric's precision."""
    gates = [
        (entry, ids, gate)
        for entry, ids in zip(entries, anchors, strict=True)
        for gate in entry.get("gates") or ()
    ]
    if not gates:
        return '<p class="note">No gates are configured for this eval.</p>'
    gates.sort(key=lambda found: GATE_ORDER.get(found[2].get("status"), 1))
    rows = []
    for entry, ids, gate in gates:
        status = str(gate.get("status"))
        css = status if status in GATE_ORDER else "skipped"
        name = str(gate.get("name"))
        rows.append(
            [
                Html(f'<span class="status {css}">{escape(status)}</span>'),
                system_name(entry),
                name,
                str(gate.get("rule")),
                *(aggregate(gate.get(key), name) for key in ("value", "bound", "baseline")),
                _gate_message(gate, ids),
            ]
        )
    headings = ["Status", "System", "Gate", "Rule", "Value", "Bound", "Baseline", "Message"]
    return table(headings, rows, "gates")


_BREAKDOWNS: dict[str, tuple[str, Callable[[Mapping[str, float]], str]]] = {
    "tokens_by_stage": ("Tokens by stage (mean per row)", lambda v: f"{v['mean']:.1f}"),
    "stop_reason": ("Stop reason (rows, share)", lambda v: f"{v['sum']:.0f} ({v['mean']:.0%})"),
}


def breakdowns(entries: Sequence[Entry]) -> list[str]:
    """One table per breakdown that some system has: categories by systems."""
    parts = []
    for key, (title, fmt) in _BREAKDOWNS.items():
        per_system = [(entry.get("breakdowns") or {}).get(key) or {} for entry in entries]
        categories = dict.fromkeys(c for breakdown in per_system for c in breakdown)
        rows = [
            [str(c), *(fmt(b[c]) if c in b else NOT_COMPUTED for b in per_system)]
            for c in categories
        ]
        if rows:
            headings = [key, *(system_name(entry) for entry in entries)]
            parts += [f"<h3>{title}</h3>", table(headings, rows, f"{key} num")]
    return parts


def aggregates(entries: Sequence[Entry]) -> str:
    """Every numeric aggregate of every system, collapsed."""
    names = dict.fromkeys(
        (metric, name)
        for entry in entries
        for metric, stats in sorted((entry.get("metrics") or {}).items())
        if isinstance(stats, Mapping)
        for name in stats
    )
    rows = [
        [
            f"{metric}.{name}",
            *(formatted(stat(entry, metric, name), metric, name) for entry in entries),
        ]
        for metric, name in names
        if any(stat(entry, metric, name) is not None for entry in entries)
    ]
    found = table(["Aggregate", *(system_name(entry) for entry in entries)], rows, "aggregates num")
    return f"<details><summary>All aggregates ({len(rows)})</summary>{found}</details>"


def signatures(entries: Sequence[Entry]) -> list[str]:
    """How the tool-dependent numbers were computed (sacrebleu's signature strings), one
    line per number, one column per system; nothing when no system has any."""
    per_system = [entry.get("signatures") or {} for entry in entries]
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
        if entry.get("compare_to") is None:
            continue
        head = f"<b>{escape(system_name(entry))}</b> vs {escape(entry['compare_to'])}"
        changes = entry.get("transformations")
        if changes is None:
            note = entry.get("transformations_note") or "not computed"
            items.append(f"<li>{head}: {escape(note)}</li>")
        else:
            compared = escape(plain(changes.get("compared")))
            idk = links(changes.get("idk_to_supported") or (), ids)
            items.append(
                f"<li>{head} ({compared} ids compared): IDK → supported {idk} · "
                f"regressions {links(changes.get('regressions') or (), ids)}</li>"
            )
    return ["<h3>Transformations</h3>", f"<ul>{''.join(items)}</ul>"] if items else []


def stored_baselines(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> list[str]:
    """Per system with a stored baseline: how its rows pair with this run's by id."""
    items = []
    for entry, ids in zip(entries, anchors, strict=True):
        stored = entry.get("baseline") or {}
        status = stored.get("status")
        if status in (None, "none stored"):
            continue
        head = f"<b>{escape(system_name(entry))}</b> ({escape(stored.get('path'))})"
        if status != "paired":
            why = str(stored.get("problem") or stored.get("note") or status).splitlines()[0]
            items.append(f"<li>{head}: {escape(status)}: {escape(why)}</li>")
            continue
        coverage = formatted(stored.get("coverage"), "baseline", "coverage")
        parts = [
            f"{escape(plain(stored.get('shared')))} of {escape(plain(stored.get('stored_rows')))} "
            f"stored rows paired (coverage {escape(coverage)})"
        ]
        for title, key in (("removed", "removed_ids"), ("added", "added_ids")):
            if stored.get(key):
                parts.append(f"{title} {links(stored[key], ids)}")
        if stored.get("changed_ids"):
            parts.append(f"inputs changed {links(stored['changed_ids'], ids)}")
        changes = stored.get("transformations")
        if isinstance(changes, Mapping):
            parts.append(f"IDK → supported {links(changes.get('idk_to_supported') or (), ids)}")
            parts.append(f"regressions {links(changes.get('regressions') or (), ids)}")
        items.append(f"<li>{head}: {' · '.join(parts)}</li>")
    return ["<h3>Stored baseline</h3>", f"<ul>{''.join(items)}</ul>"] if items else []
