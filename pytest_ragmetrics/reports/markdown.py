"""The Markdown summary (``--ragmetrics-md``, and ``$GITHUB_STEP_SUMMARY`` in GitHub
Actions): the main table, the table of each dataset-level suite (the Trust-Score), the
transformations of compared systems, and the gates. A pure function of the report
model (``reports.model``; a report document is read into it first); every text that
comes from a dataset or a path is escaped for a table cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.gates.evidence import evidence_text
from pytest_ragmetrics.printable import printable_text
from pytest_ragmetrics.reports.columns import (
    NOT_COMPUTED,
    Column,
    Entry,
    interval,
    interval_levels,
    main_columns,
    suite_columns,
)
from pytest_ragmetrics.reports.document import (
    gate_nodeid,
    gate_summary,
    gates,
    model_of,
    run_verdict,
)
from pytest_ragmetrics.reports.evidence import advice_lines
from pytest_ragmetrics.reports.model import GateView, ReportModel
from pytest_ragmetrics.reports.presentation import suites
from pytest_ragmetrics.reports.terminal import (
    history_line,
    kinds,
    more_metric_lines,
    note_lines,
    scale,
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
    rows = [[cell(e.label), str(e.n), *(c.cell(e) for c in columns)] for e in evals]
    return table(["Eval", "N", *(c.heading for c in columns)], rows)


def _why(gate: GateView) -> str:
    """Why a gate did not pass: its verdict line, how the rows paired with the baseline,
    and the rows that regressed on their own; for a gate that passed, the rows that
    break its rule on their own, if any."""
    regressed = [change.id for change in gate.regressed]
    if gate.status == "passed":
        if not regressed:
            return ""
        return cell(
            f"passes, but {len(regressed)} paired row(s) break the rule on their own: "
            f"{listing(regressed)}"
        )
    parts = [gate.message.splitlines()[0], *gate.notes]
    if regressed:
        parts.append(f"regressed ({len(regressed)}): {listing(regressed)}")
    return cell(" · ".join(parts))


_GATE_HEADINGS = ["Status", "Gate", "Rule", "Value", "Bound", "Baseline", "Why"]


def _evidence(gate: GateView) -> str:
    if gate.stats is not None:
        return cell(evidence_text(gate.stats))
    return cell(gate.stats_note or "")


def _gate_rows(found: Sequence[tuple[Entry, GateView]], evidence: bool) -> list[list[str]]:
    return [
        [
            _STATUS[gate.status],
            cell(gate_nodeid(entry, gate)),
            cell(gate.rule),
            *(
                NOT_COMPUTED if n is None else f"{n:g}"
                for n in (gate.value, gate.bound, gate.baseline)
            ),
            *([_evidence(gate)] if evidence else []),
            _why(gate),
        ]
        for entry, gate in found
    ]


def _gate_table(found: Sequence[tuple[Entry, GateView]]) -> list[str]:
    """A table of gates, with an Evidence column when some of them carry evidence."""
    evidence = any(gate.stats is not None for _, gate in found)
    headings = [*_GATE_HEADINGS[:-1], *(["Evidence"] if evidence else []), "Why"]
    return table(headings, _gate_rows(found, evidence), numeric=(3, 4, 5))


def _gate_section(evals: Sequence[Entry]) -> list[str]:
    """The summary line; the gates that did not pass, open, failed first (a reader of a
    failed run sees what broke without a click); then the passed ones, collapsed, but
    those whose rows broke their rule on their own stay open."""
    if not gates(evals):
        return ["No gates are configured for these evals."]
    found = [(entry, gate) for entry in evals for gate in entry.gates]
    open_ = sorted(
        (f for f in found if f[1].status != "passed" or f[1].regressed),
        key=lambda f: ("failed", "skipped", "passed").index(f[1].status),
    )
    passed = [f for f in found if f[1].status == "passed" and not f[1].regressed]
    lines = [gate_summary(evals)]
    if open_:
        lines += ["", *_gate_table(open_)]
    if passed:
        lines += [
            "",
            f"<details><summary>Passed gates ({len(passed)})</summary>",
            "",
            *_gate_table(passed),
            "",
            "</details>",
        ]
    return lines


def _interval_section(evals: Sequence[Entry]) -> list[str]:
    """The main metrics of each eval with their intervals (for one run, no comparison),
    collapsed; only in a document that holds them."""
    rows = []
    for entry in evals:
        for column in main_columns():
            drawn = interval(entry, column.metric, column.stat)
            if column.stat != "mean" or drawn is None:
                continue
            rows.append(
                [
                    cell(entry.label),
                    column.heading,
                    column.fmt(drawn.estimate),
                    f"{column.fmt(drawn.low)} – {column.fmt(drawn.high)}",
                    str(drawn.n),
                ]
            )
    if not rows:
        return []
    levels = interval_levels(evals)
    level = f"{levels.pop() * 100:g}%" if len(levels) == 1 else "their"
    return [
        "",
        f"<details><summary>Means with {level} intervals</summary>",
        "",
        *table(["Eval", "Metric", "Mean", "Interval", "Rows"], rows, numeric=(2, 3, 4)),
        "",
        "</details>",
    ]


def _transformation_section(evals: Sequence[Entry]) -> list[str]:
    """Per compared system: the row ids that went IDK → supported, and the regressions."""
    items = []
    for entry in evals:
        if entry.compare_to is None:
            continue
        head = f"- **{cell(entry.label)}** vs {cell(entry.compare_to)}:"
        found = entry.transformations
        if found is None:
            items.append(f"{head} {cell(entry.transformations_note or '')}")
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


def markdown_summary(report: ReportModel | Mapping[str, Any]) -> str:
    """The whole Markdown summary of a run (``report``: the model, or a report document
    read into it)."""
    model = model_of(report)
    evals, settings = model.evals, model.settings
    verdict, _ = run_verdict(evals)
    lines = [
        f"## pytest-ragmetrics: {verdict}",
        "",
        f"pytest-ragmetrics {model.plugin_version} · tau_sim {settings['tau_sim']:g} · "
        f"citations: {settings['citation_format']}",
        "",
        *_metric_table(evals, main_columns()),
    ]
    warnings = [f"> **Warning**: {cell(w)}" for e in evals for w in e.warnings]
    warnings += [f"> **Warning**: {cell(advice)}" for advice in advice_lines(evals)]
    if warnings:
        lines += ["", *warnings]
    for suite in suites():
        with_suite = [entry for entry in evals if suite.name in entry.metrics]
        if with_suite:
            judge = model.trust_judge.description if model.trust_judge else ""
            lines += [
                "",
                f"### {suite.label} ({scale(suite, '–')}; judge: {cell(judge)})",
                "",
                *_metric_table(with_suite, suite_columns(suite)),
            ]
    lines += _interval_section(evals)
    lines += _transformation_section(evals)
    lines += _collapsed(stored_baseline_lines(evals))
    lines += _collapsed(more_metric_lines(evals))
    lines += _collapsed(note_lines(evals))
    lines += _collapsed(signature_lines(evals))
    lines += ["", "### Gates", "", *_gate_section(evals), ""]
    history = history_line(model.history)
    if history is not None:
        lines += [cell(history), ""]
    return printable_text("\n".join(lines))  # GitHub's job summary: no controls, no "::"
