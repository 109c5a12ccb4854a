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

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.reports.columns import NOT_COMPUTED, Entry, number
from pytest_ragmetrics.reports.html.markup import Html, escape, scrolling, table
from pytest_ragmetrics.reports.html.numbers import as_kind, formatted
from pytest_ragmetrics.reports.html.plots import system_name
from pytest_ragmetrics.reports.model import RowView
from pytest_ragmetrics.reports.presentation import distribution_metrics, not_row_values

STATUSES = ("passed", "failed", "error")


def row_status(row: RowView) -> str:
    """The row's ``status``; a document written before rows had one says ``error`` for a
    row with errors and ``passed`` otherwise."""
    if row.status in STATUSES:
        return str(row.status)
    return "error" if row.errors else "passed"


def row_metrics(rows: Sequence[RowView]) -> list[str]:
    """The per-row metrics some row recorded: the main ones first (those whose
    distributions are drawn), the others by name; a metric declared not to be a row
    value (``errors``) is the status's."""
    names = {metric for row in rows for metric in row.metrics} - not_row_values()
    main = [metric for metric in distribution_metrics() if metric in names]
    return [*main, *sorted(names - set(main))]


def anchors(index: int, system: int, entry: Entry) -> dict[str, str]:
    """Row id -> the id of its drill-down; built from positions, so any row id is safe."""
    found: dict[str, str] = {}
    for r, row in enumerate(entry.rows or ()):
        found.setdefault(str(row.id), f"row-{index}-{system}-{r}")
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


def _controls(rows: Sequence[RowView]) -> str:
    """Status and text filters, hidden until the page's script shows them."""
    counts = {status: sum(row_status(row) == status for row in rows) for status in STATUSES}
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


def rows_list(index: int, system: int, entry: Entry) -> str:
    """A system's rows: heading, controls and the table of rows with their drill-downs."""
    rows = list(entry.rows or ())
    heading = f"<h4>{escape(system_name(entry))} ({len(rows)} rows)</h4>"
    if not rows:
        return heading
    metrics = row_metrics(rows)
    head = "".join(
        [
            '<th data-sort="index">ID</th><th>Status</th>',
            *(f'<th data-sort="number">{escape(metric)}</th>' for metric in metrics),
        ]
    )
    bodies = "".join(
        _row(f"row-{index}-{system}-{r}", r, row, metrics) for r, row in enumerate(rows)
    )
    found = scrolling(f'<table class="rows num"><thead><tr>{head}</tr></thead>{bodies}</table>')
    return f'<div class="rows-list">{heading}{_controls(rows)}{found}</div>'
