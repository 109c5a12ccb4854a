"""The Markdown summary (``--ragmetrics-md``, and ``$GITHUB_STEP_SUMMARY`` in GitHub
Actions): the main table, the Trust-Score table, the transformations of compared systems,
and the gates. A pure function of the
results; every text that comes from a dataset or a path is escaped for a table cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.reports.terminal import (
    MAIN_COLUMNS,
    NOT_COMPUTED,
    TRUST_COLUMNS,
    Column,
    judge_description,
    more_metric_lines,
    stored_baseline_lines,
)
from pytest_ragmetrics.results.pairing import listing
from pytest_ragmetrics.results.summary import EvalSummary

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


def _metric_table(summaries: Sequence[EvalSummary], columns: Sequence[Column]) -> list[str]:
    rows = [
        [cell(s.info.label), str(s.rows_used), *(c.cell(s) for c in columns)] for s in summaries
    ]
    return table(["Eval", "N", *(c.heading for c in columns)], rows)


def _why(result: GateResult) -> str:
    """Why a gate did not pass: its verdict line, how the rows paired with the baseline,
    and the rows that regressed on their own."""
    if result.status == "passed":
        return ""
    parts = [result.message.splitlines()[0], *result.notes]
    if result.regressed:
        ids = [change.id for change in result.regressed]
        parts.append(f"regressed ({len(ids)}): {listing(ids)}")
    return cell(" · ".join(parts))


def _gate_section(results: Sequence[GateResult]) -> list[str]:
    if not results:
        return ["No gates are configured for these evals."]
    counts = {status: sum(r.status == status for r in results) for status in _STATUS}
    lines = [
        f"Gates: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    ]
    rows = [
        [
            _STATUS[r.status],
            cell(r.nodeid),
            cell(r.rule),
            *(NOT_COMPUTED if n is None else f"{n:g}" for n in (r.value, r.bound, r.baseline)),
            _why(r),
        ]
        for r in sorted(results, key=lambda r: (r.status == "passed", r.status == "skipped"))
    ]
    headings = ["Status", "Gate", "Rule", "Value", "Bound", "Baseline", "Why"]
    return [
        *lines,
        "",
        "<details><summary>All gates</summary>",
        "",
        *table(headings, rows, numeric=(3, 4, 5)),
        "",
        "</details>",
    ]


def _transformation_section(summaries: Sequence[EvalSummary]) -> list[str]:
    """Per compared system: the row ids that went IDK → supported, and the regressions."""
    items = []
    for s in summaries:
        if not s.info.compared:
            continue
        head = f"- **{cell(s.info.label)}** vs {cell(s.info.compare_to or '')}:"
        found = s.transformations
        if found is None:
            items.append(f"{head} {cell(s.transformations_note or '')}")
            continue
        parts = [
            f"{title} ({len(ids)}): {', '.join(map(cell, ids)) or 'none'}"
            for title, ids in found.kinds()
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


def markdown_summary(
    summaries: Sequence[EvalSummary],
    results: Sequence[GateResult],
    settings: Settings,
    plugin_version: str,
) -> str:
    """The whole Markdown summary of a run."""
    failed = sum(r.status == "failed" for r in results)
    verdict = f"{failed} gate(s) failed" if failed else "all gates hold"
    lines = [
        f"## pytest-ragmetrics: {verdict}",
        "",
        f"pytest-ragmetrics {plugin_version} · tau_sim {settings.tau_sim:g} · "
        f"citations: {settings.citation_format}",
        "",
        *_metric_table(summaries, MAIN_COLUMNS),
    ]
    warnings = [f"> **Warning**: {cell(w)}" for s in summaries for w in s.warnings]
    if warnings:
        lines += ["", *warnings]
    with_trust = [s for s in summaries if "trust" in s.metrics]
    if with_trust:
        lines += [
            "",
            f"### Trust-Score (0–100; judge: {cell(judge_description(settings))})",
            "",
            *_metric_table(with_trust, TRUST_COLUMNS),
        ]
    lines += _transformation_section(summaries)
    lines += _collapsed(stored_baseline_lines(summaries))
    lines += _collapsed(more_metric_lines(summaries))
    lines += ["", "### Gates", "", *_gate_section(results), ""]
    return "\n".join(lines)
