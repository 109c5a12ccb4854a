"""The rows of the HTML report: per system, one table line per row (its status and every
per-row metric) with its drill-down under it, and the controls the page's script uses to
sort and filter them.

A row's ``tbody`` holds both lines, so sorting moves a row with its drill-down; it carries
the row's status (``data-status``) and dataset position (``data-index``), each metric cell
its raw value (``data-value``), and the question and answer are marked ``data-search`` for
the text filter. Without the script the controls stay hidden and the rows stay in dataset
order, every one of them shown.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pytest_ragmetrics.reports.columns import NOT_COMPUTED, Entry, number
from pytest_ragmetrics.reports.html.markup import Html, escape, scrolling, table
from pytest_ragmetrics.reports.html.numbers import as_kind, formatted
from pytest_ragmetrics.reports.html.plots import system_name
from pytest_ragmetrics.reports.model import RowView
from pytest_ragmetrics.reports.presentation import distribution_metrics, not_row_values

STATUSES = ("passed", "failed", "error")
# A system's table shows every row up to SHOWN_ROWS. A larger one shows its errored and
# failed rows (errored first, at most SHOWN_PROBLEMS of them) and a random sample of the
# others to fill it, in dataset order: a page of a million rows' drill-downs is more than
# a browser opens. Every row stays in the JSON report (docs/reports.md).
SHOWN_ROWS = 1000
SHOWN_PROBLEMS = 750
SAMPLE_SEED = 0


def row_status(row: RowView) -> str:
    """The row's ``status``; a document written before rows had one says ``error`` for a
    row with errors and ``passed`` otherwise."""
    if row.status in STATUSES:
        return str(row.status)
    return "error" if row.errors else "passed"


def row_metrics(rows: Iterable[RowView]) -> list[str]:
    """The per-row metrics some row recorded: the main ones first (those whose
    distributions are drawn), the others by name; a metric declared not to be a row
    value (``errors``) is the status's."""
    return _ordered_metrics({metric for row in rows for metric in row.metrics})


def _ordered_metrics(recorded: set[str]) -> list[str]:
    names = recorded - not_row_values()
    main = [metric for metric in distribution_metrics() if metric in names]
    return [*main, *sorted(names - set(main))]


@dataclass(frozen=True)
class ShownRows:
    """The rows of a system's table: their positions among its rows, in dataset order,
    and how many errored and failed rows and how many others there are and were shown;
    ``metrics``, the table's columns (``row_metrics`` of every row, not only those
    shown)."""

    positions: tuple[int, ...]
    total: int
    problems: int = 0
    problems_shown: int = 0
    sampled: int = 0
    metrics: tuple[str, ...] = ()

    @property
    def every_row(self) -> bool:
        return len(self.positions) == self.total


def shown_rows(rows: Iterable[RowView]) -> ShownRows:
    """Every row when there are at most ``SHOWN_ROWS``; else the errored rows, then the
    failed ones, up to ``SHOWN_PROBLEMS``, and a sample of the others (``random.Random``
    seeded with ``SAMPLE_SEED``, so the same run shows the same rows) filling the table.

    One pass over the rows, none of them kept (a run's rows are made as they are read):
    the positions of the first ``SHOWN_PROBLEMS`` errored and failed rows, the others'
    positions (8 bytes a row: the population the sample draws from, as a list of them
    would be, so the same rows are drawn), the counts and the metrics' names."""
    errored, failed = array("q"), array("q")
    others = array("q")
    counts = {"error": 0, "failed": 0}
    names: set[str] = set()
    total = 0
    for position, row in enumerate(rows):
        total += 1
        names.update(row.metrics)
        status = row_status(row)
        if status in counts:
            counts[status] += 1
            found = errored if status == "error" else failed
            if len(found) < SHOWN_PROBLEMS:
                found.append(position)
        else:
            others.append(position)
    metrics = tuple(_ordered_metrics(names))
    if total <= SHOWN_ROWS:
        return ShownRows(tuple(range(total)), total, metrics=metrics)
    problems = [*errored, *failed][:SHOWN_PROBLEMS]
    room = min(SHOWN_ROWS - len(problems), len(others))
    sample = random.Random(SAMPLE_SEED).sample(others, room)
    return ShownRows(
        tuple(sorted([*problems, *sample])),
        total,
        counts["error"] + counts["failed"],
        len(problems),
        room,
        metrics,
    )


def anchors(
    index: int, system: int, entry: Entry, shown: ShownRows | None = None
) -> dict[str, str]:
    """Row id -> the id of its drill-down, for the rows the table shows (``shown``, the
    system's ``shown_rows``, when the caller has it already; a link to another row's id
    is its plain text); built from positions, so any row id is safe."""
    rows = entry.rows or ()
    found: dict[str, str] = {}
    for r in (shown or shown_rows(rows)).positions:
        found.setdefault(str(rows[r].id), f"row-{index}-{system}-{r}")
    return found


def _context(sentence: Mapping[str, Any]) -> Html:
    """The context a sentence was measured against (its id, then its text), or, for a
    sentence settled without one, what it cites."""
    context = sentence.get("context")
    if isinstance(context, Mapping) and context.get("text") is not None:
        return Html(
            f'<b>{escape(context.get("doc_id"))}</b> <span class="context">'
            f"{escape(context['text'])}</span>"
        )
    cited = ", ".join(map(str, sentence.get("citations") or ()))
    return escape(cited or NOT_COMPUTED)


def _sentences(sentences: Sequence[Mapping[str, Any]]) -> Html:
    rows = []
    for sentence in sentences:
        if sentence.get("supported"):
            verdict, css = "supported", "supported"
        elif sentence.get("claim"):
            verdict, css = "unsupported", "unsupported"
        else:
            verdict, css = "not a claim", "not-claim"
        rows.append(
            [
                Html(f'<span class="{css}">{verdict}</span>'),
                str(sentence.get("sentence", "")),
                as_kind(sentence.get("similarity"), "score"),  # a cosine
                _context(sentence),
                str(sentence.get("reason", "")),
            ]
        )
    headings = ["Verdict", "Sentence", "Similarity", "Cited context", "Reason"]
    return table(headings, rows, "sentences")


def _aliases(gold: object) -> str:
    """Every gold alias, answer groups flattened, separated by " | "."""
    if isinstance(gold, str):
        return gold
    items = gold if isinstance(gold, list) else [gold]
    flat = [a for item in items for a in (item if isinstance(item, list) else [item])]
    return " | ".join(str(alias) for alias in flat)


def _text(label: str, value: object, note: str = "", search: bool = False) -> str:
    marked = " data-search" if search else ""
    return f'<div class="text"><b>{label}</b> <span{marked}>{escape(value)}</span>{note}</div>'


def _drill_down(row: RowView) -> list[str]:
    """A row's drill-down: what was asked and answered, each sentence's verdict beside the
    context it was measured against, the evidence and the errors."""
    details = row.details
    body = [
        _text("Question", row.question or NOT_COMPUTED, search=True),
        _text("Answer", row.answer or NOT_COMPUTED, search=True),
    ]
    if row.gold is not None:
        flag = row.answerable
        answerable = "" if flag is None else " (answerable)" if flag else " (not answerable)"
        body.append(_text("Gold", _aliases(row.gold), escape(answerable)))
    live = details.get("live")
    if isinstance(live, Mapping):
        origin = "from the cache, as measured then" if live.get("cached") else "called in this run"
        note = (
            f' <span class="muted">(fingerprint {escape(live.get("fingerprint"))}; output '
            f"{origin})</span>"
        )
        body.append(_text("Live system", live.get("system"), note))
    short = details.get("short_answer")
    if isinstance(short, Mapping):
        note = f' <span class="muted">(finalizer rule {escape(short.get("rule"))})</span>'
        body.append(_text("Short answer", short.get("text"), note))
    if row.failed_tests:
        body.append(_text("Failed", ", ".join(map(str, row.failed_tests))))
    if details.get("sentences"):
        body.append(_sentences(details["sentences"]))
    evidence = "".join(f"<dt>{escape(m)}</dt><dd>{escape(t)}</dd>" for m, t in row.evidence.items())
    if evidence:
        body.append(f"<dl>{evidence}</dl>")
    errors = row.errors
    if errors:
        body.append(f'<ul class="error">{"".join(f"<li>{escape(e)}</li>" for e in errors)}</ul>')
    return body


def _row(anchor: str, position: int, row: RowView, metrics: Sequence[str]) -> str:
    """One row's ``tbody``: its line, then its drill-down collapsed under the question."""
    status = row_status(row)
    values = row.metrics
    cells = [
        f"<td>{escape(row.id)}</td>",
        f'<td><span class="status {status}">{status}</span></td>',
    ]
    for metric in metrics:
        value = number(values.get(metric))
        data = "" if value is None else f' data-value="{value!r}"'
        cells.append(f"<td{data}>{escape(formatted(values.get(metric), metric))}</td>")
    question = row.question or row.answer or "details"
    drill = (
        f'<details class="row" id="{anchor}"><summary>{escape(question)}</summary>'
        f"{''.join(_drill_down(row))}</details>"
    )
    return (
        f'<tbody class="row-{status}" data-status="{status}" data-index="{position}">'
        f'<tr class="line">{"".join(cells)}</tr>'
        f'<tr class="drill"><td colspan="{len(cells)}">{drill}</td></tr></tbody>'
    )


def _controls(statuses: Sequence[str]) -> str:
    """Status and text filters, hidden until the page's script shows them; ``statuses``:
    those of the rows shown."""
    counts = {status: statuses.count(status) for status in STATUSES}
    options = "".join(
        f'<option value="{status}">{status} ({counts[status]})</option>' for status in STATUSES
    )
    return (
        '<div class="controls" hidden>'
        f'<label>Status <select class="status-filter"><option value="">all</option>{options}'
        "</select></label> "
        '<label>Question or answer contains <input class="text-filter" type="search"></label> '
        '<span class="shown muted"></span><span class="muted"> · click a column heading to '
        "sort by it</span></div>"
    )


def rows_list(
    index: int,
    system: int,
    entry: Entry,
    records: str | None = None,
    shown: ShownRows | None = None,
) -> str:
    """A system's rows: heading, controls and the table of rows with their drill-downs;
    for a system of more than ``SHOWN_ROWS`` rows, those ``shown_rows`` picks (``shown``,
    when the caller has it already), under a line that says which and where every row is
    (``records``: the JSON report's path from the page's folder, when the run wrote one).
    Only the rows shown are read again, each once, by position."""
    rows = entry.rows or ()
    heading = f"<h4>{escape(system_name(entry))} ({len(rows)} rows)</h4>"
    if not rows:
        return heading
    shown = shown or shown_rows(rows)
    metrics = shown.metrics
    head = "".join(
        [
            '<th data-sort="index">ID</th><th>Status</th>',
            *(f'<th data-sort="number">{escape(metric)}</th>' for metric in metrics),
        ]
    )
    bodies, statuses = [], []
    for r in shown.positions:
        row = rows[r]
        statuses.append(row_status(row))
        bodies.append(_row(f"row-{index}-{system}-{r}", r, row, metrics))
    found = scrolling(
        f'<table class="rows num"><thead><tr>{head}</tr></thead>{"".join(bodies)}</table>'
    )
    note = "" if shown.every_row else _sampled_note(shown, records)
    return f'<div class="rows-list">{heading}{note}{_controls(statuses)}{found}</div>'


def _sampled_note(shown: ShownRows, records: str | None) -> str:
    """What a table of a large system shows, and where the rest is."""
    others = shown.total - shown.problems
    sample = f"a random sample of {shown.sampled:,} of the {others:,} other rows"
    if not shown.problems:
        picked = f"no row errored or failed; {sample}"
    elif shown.problems_shown == shown.problems:
        picked = f"all {shown.problems:,} errored and failed rows, and {sample}"
    else:
        picked = (
            f"the first {shown.problems_shown:,} of the {shown.problems:,} errored and failed "
            f"rows (errored first), and {sample}"
        )
    where = (
        f'<a href="{escape(quote(records))}">the JSON report</a>'
        if records is not None
        else "the JSON report (--ragmetrics-json=FILE)"
    )
    return (
        f'<p class="muted">Showing {len(shown.positions):,} of {shown.total:,} rows: '
        f"{picked} (seed {SAMPLE_SEED}). Every row is in {where}.</p>"
    )
