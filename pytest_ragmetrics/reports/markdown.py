"""The Markdown summary (``--ragmetrics-md``, and ``$GITHUB_STEP_SUMMARY`` in GitHub
Actions): the main table, the Trust-Score table, the transformations of compared systems,
and the gates. A pure function of the report document (``reports.document``); every text
that comes from a dataset or a path is escaped for a table cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.reports.columns import (
    MAIN_COLUMNS,
    NOT_COMPUTED,
    TRUST_COLUMNS,
    Column,
    Entry,
)
from pytest_ragmetrics.reports.document import entries, gate_nodeid, gate_summary, gates
from pytest_ragmetrics.reports.terminal import (
    history_line,
    kinds,
    more_metric_lines,
    signature_lines,
    stored_baseline_lines,
)
from pytest_ragmetrics.results.pairing import listing

_STATUS = {"passed": "pass", "failed": "**FAIL**", "skipped": "skip"}


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell: one line, pipes and markup escaped."""
    flat = " ".join(text.split())
    for char in ("\\", "|", "`", "*", "_", "<", ">", "[", "]"):
        flat = flat.replace(char, "\\" + char)
    return flat


def table(
    headings: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] | None = None
) -> list[str]:
    """A Markdown table; the ``numeric`` columns (by default all but the first) are
    right-aligned."""
    right = set(range(1, len(headings)) if numeric is None else numeric)
    align = ["---:" if i in right else "---" for i in range(len(headings))]
    lines = [f"| {' | '.join(headings)} |", f"| {' | '.join(align)} |"]
    return lines + [f"| {' | '.join(row)} |" for row in rows]


def _metric_table(evals: Sequence[Entry], columns: Sequence[Column]) -> list[str]:
    rows = [[cell(e["label"]), str(e["n"]), *(c.cell(e) for c in columns)] for e in evals]
    return table(["Eval", "N", *(c.heading for c in columns)], rows)


def _why(gate: Mapping[str, Any]) -> str:
    """Why a gate did not pass: its verdict line, how the rows paired with the baseline,
    and the rows that regressed on their own."""
    if gate["status"] == "passed":
        return ""
    parts = [gate["message"].splitlines()[0], *gate.get("notes", ())]
    if gate["regressed"]:
        ids = [change["id"] for change in gate["regressed"]]
        parts.append(f"regressed ({len(ids)}): {listing(ids)}")
    return cell(" · ".join(parts))


_GATE_HEADINGS = ["Status", "Gate", "Rule", "Value", "Bound", "Baseline", "Why"]


def _gate_rows(found: Sequence[tuple[Entry, Mapping[str, Any]]]) -> list[list[str]]:
    return [
        [
            _STATUS[gate["status"]],
            cell(gate_nodeid(entry, gate)),
            cell(gate["rule"]),
            *(
                NOT_COMPUTED if n is None else f"{n:g}"
                for n in (gate["value"], gate["bound"], gate["baseline"])
            ),
            _why(gate),
        ]
        for entry, gate in found
    ]


def _gate_section(evals: Sequence[Entry]) -> list[str]:
    """The summary line; the gates that did not pass, open, failed first (a reader of a
    failed run sees what broke without a click); then the passed ones, collapsed."""
    if not gates(evals):
        return ["No gates are configured for these evals."]
    found = [(entry, gate) for entry in evals for gate in entry.get("gates") or ()]
    open_ = sorted(
        (f for f in found if f[1]["status"] != "passed"),
        key=lambda f: f[1]["status"] == "skipped",
    )
    passed = [f for f in found if f[1]["status"] == "passed"]
    lines = [gate_summary(evals)]
    if open_:
        lines += ["", *table(_GATE_HEADINGS, _gate_rows(open_), numeric=(3, 4, 5))]
    if passed:
        lines += [
            "",
            f"<details><summary>Passed gates ({len(passed)})</summary>",
            "",
            *table(_GATE_HEADINGS, _gate_rows(passed), numeric=(3, 4, 5)),
            "",
            "</details>",
        ]
    return lines


def _transformation_section(evals: Sequence[Entry]) -> list[str]:
    """Per compared system: the row ids that went IDK → supported, and the regressions."""
    items = []
    for entry in evals:
        if entry.get("compare_to") is None:
            continue
        head = f"- **{cell(entry['label'])}** vs {cell(entry['compare_to'])}:"
        found = entry.get("transformations")
        if found is None:
            items.append(f"{head} {cell(entry.get('transformations_note') or '')}")
            continue
        parts = [
            f"{title} ({len(ids)}): {', '.join(map(cell, ids)) or 'none'}"
            for title, ids in kinds(found)
        ]
        items.append(f"{head} {'; '.join(parts)}")
    return ["", "### Transformations (by row id)", "", *items] if items else []


def _collapsed(block: Sequence[str]) -> list[str]:
    """A terminal block (title, then lines) as a collapsed code block."""
    if not block:
        return []
    body = [line.replace("`", "'") for line in block[1:]]
    return [
        "",
        f"<details><summary>{block[0]}</summary>",
        "",
        "```",
        *body,
        "```",
        "",
        "</details>",
    ]


def markdown_summary(document: Mapping[str, Any]) -> str:
    """The whole Markdown summary of a run."""
    evals, settings = entries(document), document["settings"]
    failed = sum(gate["status"] == "failed" for gate in gates(evals))
    verdict = f"{failed} gate(s) failed" if failed else "all gates hold"
    lines = [
        f"## pytest-ragmetrics: {verdict}",
        "",
        f"pytest-ragmetrics {document['plugin_version']} · tau_sim {settings['tau_sim']:g} · "
        f"citations: {settings['citation_format']}",
        "",
        *_metric_table(evals, MAIN_COLUMNS),
    ]
    warnings = [f"> **Warning**: {cell(w)}" for e in evals for w in e.get("warnings") or ()]
    if warnings:
        lines += ["", *warnings]
    with_trust = [entry for entry in evals if "trust" in entry["metrics"]]
    if with_trust:
        judge = document["trust_judge"]["description"]
        lines += [
            "",
            f"### Trust-Score (0–100; judge: {cell(judge)})",
            "",
            *_metric_table(with_trust, TRUST_COLUMNS),
        ]
    lines += _transformation_section(evals)
    lines += _collapsed(stored_baseline_lines(evals))
    lines += _collapsed(more_metric_lines(evals))
    lines += _collapsed(signature_lines(evals))
    lines += ["", "### Gates", "", *_gate_section(evals), ""]
    history = history_line(document)
    if history is not None:
        lines += [cell(history), ""]
    return "\n".join(lines)
