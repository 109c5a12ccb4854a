"""The pull-request comment (``--ragmetrics-pr-comment``): the run told for a reviewer of a
pull request, in GitHub Markdown. A pure function of the report model (``reports.model``,
the document every other report reads), so it cannot disagree with them.

Its first line is the run's verdict (``reports.document.run_verdict``, the headline of
the Markdown summary and the HTML page); then the link to the run's page, where the HTML
report is an artifact; the gates that failed or moved, with their evidence; the rows that
regressed or recovered, each with its evidence in a collapsed block; the failed and
errored rows when the model holds rows; what a query spends (tokens, time, money) before
and after; and a hidden marker line, by which a sticky-comment action finds the comment
it updates.

GitHub refuses a comment longer than 65,536 characters, and a run can have a million
rows, so the comment is rendered within a budget: every section is a heading and items,
the most important sections get their room first, and a section that runs out says how
many of its items it left out. Data text is escaped for Markdown and HTML, and, as every
output of the plugin, made printable (``printable``: no control characters, no line
starting with ``::``).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from pytest_ragmetrics.gates.evidence import evidence_text
from pytest_ragmetrics.printable import printable_text
from pytest_ragmetrics.reports.columns import FORMATS, NOT_COMPUTED, general, number
from pytest_ragmetrics.reports.document import (
    gate_nodeid,
    gate_summary,
    model_of,
    row_counts,
    run_verdict,
)
from pytest_ragmetrics.reports.markdown import cell, table
from pytest_ragmetrics.reports.model import EvalView, GateView, ReportModel, RowView
from pytest_ragmetrics.reports.presentation import columns, info
from pytest_ragmetrics.results.records import first_failing
from pytest_ragmetrics.results.transformations import Transformations

T = TypeVar("T")

# The line a sticky-comment action looks for to update the comment rather than add one.
COMMENT_MARKER = "<!-- pytest-ragmetrics -->"
# GitHub refuses a comment (an issue's or a pull request's) longer than this.
GITHUB_COMMENT_LIMIT = 65_536
# What the comment is rendered within: the limit less room for what a workflow adds.
COMMENT_BUDGET = 60_000
# Rows shown per list (a gate's regressed rows, a kind of transformation, the failed rows).
ROWS_SHOWN = 10
# Rows listed in all (a comment is read in a review, not searched: the reports have them all).
ROWS_LISTED = 20
# Characters of one text from the data (a question, an answer, an evidence line).
TEXT_SHOWN = 300
# The run's page on GitHub, from the variables GitHub Actions sets in every job.
GITHUB_LINK_ENV = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")


def run_page_link(environ: Mapping[str, str]) -> str | None:
    """The GitHub Actions run's page (its artifacts are listed there), from
    ``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY`` and ``GITHUB_RUN_ID``; ``None`` unless
    all three are set."""
    server, repository, run_id = (environ.get(name, "").strip() for name in GITHUB_LINK_ENV)
    if not (server and repository and run_id):
        return None
    return f"{server.rstrip('/')}/{repository}/actions/runs/{run_id}"


@dataclass(frozen=True)
class Section:
    """A part of the comment: its heading lines, its items (each one block of text, in
    order of importance), how many items were left out before any budget (a list's
    cap), and what its items are called (``gates``, ``rows``)."""

    heading: tuple[str, ...]
    items: tuple[str, ...]
    unit: str
    capped: int = 0

    def fit(self, room: int) -> list[str]:
        """The section in at most ``room`` characters: as many items as fit, then a line
        saying how many were left out; nothing for a section with no items."""
        total = len(self.items) + self.capped
        if not total:
            return []
        lines = ["", *self.heading]
        used = _size(lines)
        shown = 0
        for item in map(printable_text, self.items):
            if used + len(item) + 1 + _LEFT_OUT > room:
                break
            lines.append(item)
            used += len(item) + 1
            shown += 1
        left = total - shown
        if left:
            lines += ["", f"… {left:,} more {self.unit}: see the HTML report"]
        if _size(lines) > room:  # not even the heading fits (room for this is kept)
            return ["", f"… {total:,} {self.unit} left out: see the HTML report"]
        return lines


# The room a section's line saying it was left out takes (``Section.fit``).
_LEFT_OUT = 80


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _flat(value: Any, limit: int = TEXT_SHOWN) -> str:
    """A text from the data on one line, cut to ``limit`` characters (``…`` says so)."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _md(value: Any, limit: int = TEXT_SHOWN) -> str:
    """A text from the data as inline Markdown: one line, cut, markup escaped."""
    return cell(_flat(value, limit))


def _html(value: Any, limit: int = TEXT_SHOWN) -> str:
    """A text from the data inside an HTML tag (a ``<summary>``): one line, cut, escaped."""
    return html.escape(_flat(value, limit))


def _link(url: str) -> str:
    """``url`` safe as a Markdown link target: what would end or break the link
    (spaces, brackets, quotes) percent-encoded."""
    return quote(url, safe=":/?#@!$&'*+,;=%~-._[]")


def _verdict(evals: Sequence[EvalView], run_failed: bool) -> str:
    """The first line: the headline every report shows (``run_verdict``), never a clean
    one for a run that failed for a reason of its own (a test outside the evals failed,
    a file was not written)."""
    verdict, clean = run_verdict(evals) if evals else ("no eval ran", True)
    if clean and run_failed:
        verdict += ", but the run failed: see the job's log"
    icon = "✅" if clean and not run_failed else "❌"
    return f"### {icon} pytest-ragmetrics: {verdict}"


def _counts(evals: Sequence[EvalView]) -> str:
    rows = row_counts(evals)
    return (
        f"Rows: {rows['passed']:,} passed, {rows['failed']:,} failed, "
        f"{rows['error']:,} errored · {gate_summary(evals)}"
    )


# -- gates ------------------------------------------------------------------------------


def _moved(gate: GateView) -> bool:
    """A comparison gate whose statistic changed: some paired row moved."""
    return gate.stats is not None and gate.stats.verdict not in (None, "unchanged")


_ORDER = ("failed", "regressed", "improved", "changed", "within noise")


def _rank(gate: GateView) -> int:
    if gate.status == "failed":
        return 0
    verdict = gate.stats.verdict if gate.stats is not None else None
    return _ORDER.index(verdict) if verdict in _ORDER else len(_ORDER)


def _gate_row(entry: EvalView, gate: GateView) -> str:
    status = "**FAIL**" if gate.status == "failed" else gate.status
    if gate.stats is not None:
        evidence = cell(evidence_text(gate.stats))
    else:
        first = gate.message.splitlines()[0] if gate.message else ""
        evidence = _md(gate.stats_note or first)
    numbers = (
        NOT_COMPUTED if value is None else f"{value:g}"
        for value in (gate.value, gate.bound, gate.baseline)
    )
    return f"| {status} | {_md(gate_nodeid(entry, gate))} | {cell(gate.rule)} | " + (
        " | ".join([*numbers, evidence]) + " |"
    )


def gate_section(evals: Sequence[EvalView]) -> Section:
    """The gates that failed, then those whose comparison moved (regressed, improved,
    changed, within noise), each with its value, bound, baseline and evidence (the
    change, its interval, the p-value, the pairs, the verdict)."""
    found = sorted(
        (
            (entry, gate)
            for entry in evals
            for gate in entry.gates
            if gate.status == "failed" or _moved(gate)
        ),
        key=lambda pair: _rank(pair[1]),
    )
    headings = ["Status", "Gate", "Rule", "Value", "Bound", "Baseline", "Change and evidence"]
    header = tuple(table(headings, [], numeric=(3, 4, 5)))
    return Section(
        ("#### Gates that failed or moved", "", *header),
        tuple(_gate_row(entry, gate) for entry, gate in found),
        "gates",
    )


# -- rows -------------------------------------------------------------------------------


def _row_index(entry: EvalView) -> Mapping[str, RowView]:
    """The rows the comment can list of ``entry`` (``_listed_ids``), by id, found in one
    pass over its rows, the others not kept; none read when it lists none."""
    wanted = _listed_ids(entry)
    if not wanted:
        return {}
    return {str(row.id): row for row in entry.rows or () if str(row.id) in wanted}


def _listed_ids(entry: EvalView) -> set[str]:
    """The ids of the rows the comment may list of ``entry``: each gate's first regressed
    rows and the first of each kind of transformation (``_capped``)."""
    wanted = {str(change.id) for gate in entry.gates for change in _capped(gate.regressed)[0]}
    for _, found in _transformation_sides(entry):
        for _, ids in found.kinds():
            wanted.update(map(str, _capped(ids)[0]))
    return wanted


def _evidence_lines(row: RowView | None, metrics: Sequence[str] | None) -> list[str]:
    """A row's question, answer, errors and evidence (of ``metrics``, or of every
    metric), as Markdown list items; a line saying where they are when the model holds
    no rows."""
    if row is None:
        return [
            "- evidence: in the HTML report (the comment shows it when the run writes "
            "--ragmetrics-html or --ragmetrics-json)"
        ]
    lines = []
    for name, value in (("question", row.question), ("answer", row.answer)):
        if value is not None:
            lines.append(f"- {name}: {_md(value)}")
    lines += [f"- error: {_md(error)}" for error in row.errors]
    lines += [f"- failed: {_md(test)}" for test in row.failed_tests]
    shown = metrics if metrics is not None else sorted(row.evidence)
    for metric in shown:
        value = number(row.metrics.get(metric))
        said = row.evidence.get(metric)
        if value is None and said is None:
            continue
        parts = [general(value)] if value is not None else []
        parts += [_md(said)] if said else []
        lines.append(f"- {_md(metric)}: {' — '.join(parts)}")
    return lines


def _details(summary: str, lines: Sequence[str]) -> str:
    """A collapsed block: ``summary`` (HTML, escaped by the caller) and Markdown lines."""
    # the blank line after it ends the HTML block, so the next item starts afresh
    block = ["<details><summary>" + summary + "</summary>", "", *lines, "", "</details>", ""]
    return "\n".join(block)


def _capped(found: Sequence[T]) -> tuple[Sequence[T], int]:
    """The first ``ROWS_SHOWN`` of a list, and how many it leaves out."""
    return found[:ROWS_SHOWN], max(0, len(found) - ROWS_SHOWN)


def _gate_rows(entry: EvalView, rows: Mapping[str, RowView]) -> Iterator[tuple[str, int]]:
    """Each gate's regressed rows (capped), as collapsed blocks; the count left out."""
    for gate in entry.gates:
        metric = gate.name.rpartition(".")[0]
        shown, left = _capped(gate.regressed)
        for change in shown:
            summary = (
                f"regressed · {_html(entry.label)} · <code>{_html(change.id)}</code> · "
                f"{_html(gate.name)} {change.before:g} → {change.after:g}"
            )
            yield (
                _details(summary, _evidence_lines(rows.get(change.id) if rows else None, [metric])),
                0,
            )
        if left:
            yield "", left


def _role_metrics(row: RowView | None) -> list[str]:
    """The metrics of a row that the transformations read (those declaring a ``role``:
    whether it abstains, is correct, is supported): the evidence of its change."""
    if row is None:
        return []
    return [
        metric
        for metric in sorted(row.evidence)
        if (declared := info(metric)) is not None and declared.presentation.role is not None
    ]


def _transformed_rows(entry: EvalView, rows: Mapping[str, RowView]) -> Iterator[tuple[str, int]]:
    """The rows that went supported → unsupported (regressed) or IDK → supported
    (recovered), against the reference system, or the stored baseline."""
    for against, found in _transformation_sides(entry):
        for title, ids in found.kinds():
            word = "recovered" if title.startswith("IDK") else "regressed"
            shown, left = _capped(ids)
            for row_id in shown:
                summary = (
                    f"{word} · {_html(entry.label)} · <code>{_html(row_id)}</code> · "
                    f"{_html(title)} vs {_html(against)}"
                )
                row = rows.get(row_id) if rows else None
                yield _details(summary, _evidence_lines(row, _role_metrics(row))), 0
            if left:
                yield "", left


def _transformation_sides(entry: EvalView) -> list[tuple[str, Transformations]]:
    """What ``entry``'s transformations are against (its reference system, the stored
    baseline) and the transformations."""
    sides = []
    if entry.transformations is not None:
        sides.append((entry.compare_to or "", entry.transformations))
    if entry.baseline is not None and entry.baseline.transformations is not None:
        sides.append(("the stored baseline", entry.baseline.transformations))
    return sides


def row_section(evals: Sequence[EvalView]) -> Section:
    """The rows that regressed (a gate's rows that break its rule on their own; supported
    → unsupported) or recovered (IDK → supported), each with its evidence collapsed."""
    items: list[str] = []
    capped = 0
    for entry in evals:
        rows = _row_index(entry) if entry.rows is not None else {}
        for item, left in (*_gate_rows(entry, rows), *_transformed_rows(entry, rows)):
            if item and len(items) < ROWS_LISTED:
                items.append(item)
            else:
                capped += left or 1
    return Section(("#### Rows that regressed or recovered", ""), tuple(items), "rows", capped)


def failed_section(evals: Sequence[EvalView]) -> Section:
    """The rows that errored, then those that failed, with their errors, the tests that
    failed on them and their evidence; from a model that holds no rows, their count.
    One pass over the rows, only those listed kept (``first_failing``)."""
    listed, found = first_failing(((entry, entry.rows or ()) for entry in evals), ROWS_SHOWN)
    items = tuple(
        _details(
            f"{'errored' if row.status == 'error' else 'failed'} · {_html(entry.label)} · "
            f"<code>{_html(row.id)}</code>",
            _evidence_lines(row, None),
        )
        for entry, row in listed
    )
    # a model without rows (no JSON or HTML report written) only counts them
    unlisted = sum(
        int(entry.row_statuses.get(status, 0))
        for entry in evals
        if entry.rows is None
        for status in ("error", "failed")
    )
    return Section(
        ("#### Rows that failed or errored", ""),
        items,
        "rows",
        found - len(items) + unlisted,
    )


# -- what a query spends ----------------------------------------------------------------


def _before(entry: EvalView, evals: Sequence[EvalView]) -> tuple[str, Mapping[str, Any]] | None:
    """What ``entry`` is compared with: its reference system, else the stored baseline."""
    if entry.compare_to is not None:
        for other in evals:
            if other.name == entry.name and other.system == entry.compare_to:
                return entry.compare_to, other.metrics
    if entry.baseline is not None and entry.baseline.metrics:
        return "stored baseline", entry.baseline.metrics
    return None


def _spent_cell(metric: str, after: Any, before: Any) -> str:
    """``before → after (+change%)`` in the metric's declared format (its sum too: money
    and tokens add up in their own units); ``after`` alone with nothing to compare."""
    declared = info(metric)
    shown = declared.presentation.format if declared is not None else None
    fmt = FORMATS.get(shown, general) if shown is not None else general
    now, then = number(after), number(before)
    if now is None:
        return NOT_COMPUTED
    if then is None:
        return fmt(now)
    change = f" ({(now - then) / then:+.1%})" if then else ""
    return f"{fmt(then)} → {fmt(now)}{change}"


def spent_section(evals: Sequence[EvalView]) -> Section:
    """Per eval that recorded any of them, what a query spends (the statistics the
    metrics declare columns of the ``comment`` table: tokens, latency, money), before →
    after."""
    spent = [
        (shown.metric, shown.stat)
        for shown in columns("comment")
        if any(entry.stat(shown.metric, shown.stat) is not None for entry in evals)
    ]
    items = []
    for entry in evals:
        if not any(entry.stat(metric, stat) is not None for metric, stat in spent):
            continue
        before = _before(entry, evals)
        against, stored = before if before is not None else ("", {})
        cells = [
            _spent_cell(metric, entry.stat(metric, stat), (stored.get(metric) or {}).get(stat))
            for metric, stat in spent
        ]
        items.append(
            f"| {_md(entry.label)} | {cell(against) or NOT_COMPUTED} | {' | '.join(cells)} |"
        )
    headings = ["Eval", "Before", *(f"{metric}.{stat}" for metric, stat in spent)]
    return Section(
        (
            "#### Spent per query, before → after",
            "",
            "Before: the eval's reference system, or its stored baseline; each side's own "
            "aggregate, not paired rows.",
            "",
            *table(headings, []),
        ),
        tuple(items),
        "evals",
    )


# -- the comment ------------------------------------------------------------------------


def pr_comment(
    report: ReportModel | Mapping[str, Any],
    link: str | None = None,
    run_failed: bool = False,
    budget: int = COMMENT_BUDGET,
) -> str:
    """The pull-request comment of a run (``report``: the model, or a report document
    read into it); ``link``: the page the HTML report is on (no link line without one);
    ``run_failed``: the run's exit status is not 0 (the verdict then never reads clean).
    At most ``budget`` characters: sections are given room by importance (gates, what a
    query spends, the rows that regressed, the failed rows), and each says what it left
    out."""
    evals = model_of(report).evals
    head = [_verdict(evals, run_failed), "", _counts(evals) if evals else ""]
    if link:
        head += ["", f"[HTML report and the run's artifacts]({_link(link)})"]
    tail = ["", COMMENT_MARKER, ""]
    room = budget - _size(head) - _size(tail)
    by_importance = {
        "gates": gate_section(evals),
        "spent": spent_section(evals),
        "rows": row_section(evals),
        "failed": failed_section(evals),
    }
    fitted: dict[str, list[str]] = {}
    later = len(by_importance)
    for name, section in by_importance.items():
        later -= 1  # each later section keeps room to say what it left out
        lines = fitted[name] = section.fit(room - later * _LEFT_OUT)
        room -= _size(lines)
    body = [*fitted["gates"], *fitted["rows"], *fitted["failed"], *fitted["spent"]]
    return printable_text("\n".join([*head, *body, *tail]))
