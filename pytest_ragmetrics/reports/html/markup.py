"""Markup for the HTML report: escaped text, and tables in a box of their own.

Every text taken from the report document goes through ``escape``; what is built here is
an ``Html`` string, which goes into the page as it is. A table sits in a box that scrolls
sideways when the table is wider than the page, so the page itself never does.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from pytest_ragmetrics.printable import visible_controls
from pytest_ragmetrics.reports.columns import NOT_COMPUTED


class Html(str):
    """Markup built here: every text from the document inside it is already escaped."""


def escape(text: object) -> Html:
    """``text`` as HTML text, quotes included (it may go into an attribute), control
    characters as their escapes (``printable.visible_controls``)."""
    return Html(html.escape(visible_controls(str(text)), quote=True))


def cell(content: str) -> str:
    """A cell's content: plain ``str`` escaped, ``Html`` as it is."""
    return content if isinstance(content, Html) else escape(content)


def scrolling(markup: str) -> Html:
    """``markup`` in a box that scrolls sideways when it is wider than the page."""
    return Html(f'<div class="scroll">{markup}</div>')


def table(headings: Sequence[str], rows: Iterable[Sequence[str]], cls: str) -> Html:
    """A table in its scrolling box. Plain ``str`` cells are escaped, ``Html`` cells go in
    as they are."""
    head = "".join(f"<th>{cell(heading)}</th>" for heading in headings)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return scrolling(
        f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def without_empty_columns(
    headings: Sequence[str], rows: Sequence[Sequence[str]], keep: int
) -> tuple[list[str], list[list[str]]]:
    """The table without the columns, after the first ``keep``, in which every cell is
    ``NOT_COMPUTED``: a metric no row of the table has is noise on a laptop screen."""
    shown = [
        j for j in range(len(headings)) if j < keep or any(row[j] != NOT_COMPUTED for row in rows)
    ]
    return [headings[j] for j in shown], [[row[j] for j in shown] for row in rows]
