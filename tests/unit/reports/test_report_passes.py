"""Each report reads a run's rows in one pass at most, and the HTML page reads again only
the rows it shows: a large eval's rows are never all held by a renderer."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.reports.comment import pr_comment
from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.html.rows import SHOWN_ROWS
from pytest_ragmetrics.reports.markdown import markdown_summary
from pytest_ragmetrics.reports.model import ReportModel, RowView
from pytest_ragmetrics.reports.terminal import terminal_lines
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_big.py", "evals/test_big.py", "evals/data/big.jsonl", "0" * 64, 1500)


class _Counted(Sequence[RowView]):
    """A run's rows that count the passes over them and the rows read by position."""

    def __init__(self, rows: Sequence[RowView]) -> None:
        self._rows = rows
        self.passes = 0
        self.read = 0

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> RowView:  # type: ignore[override]
        self.read += 1
        return self._rows[index]

    def __iter__(self) -> Iterator[RowView]:
        self.passes += 1
        return iter(self._rows)


def _model() -> tuple[ReportModel, _Counted]:
    payloads = [
        RowPayload(INFO, f"q{i}", i, {"f1": (i % 4) / 4}, {}, "boom" if i % 100 == 0 else None)
        for i in range(1500)
    ]
    model = ReportModel.build(summarize(payloads, Settings()), [], Settings(), "9.9")
    (view,) = model.evals
    assert view.rows is not None
    counted = _Counted(view.rows)
    return replace(model, evals=(replace(view, rows=counted),)), counted


def test_the_html_page_chooses_in_one_pass_and_reads_only_the_rows_it_shows() -> None:
    model, rows = _model()
    page = render_html(model)
    assert "Showing 1,000 of 1,500 rows: all 15 errored and failed rows" in page
    # one pass to choose the table's rows, one for the plots' numbers
    assert rows.passes == 2
    assert rows.read == 2 * SHOWN_ROWS  # the rows shown: their anchors, then the table


def test_the_other_reports_go_over_the_rows_at_most_once() -> None:
    model, rows = _model()
    terminal_lines(model, None)
    markdown_summary(model)
    assert (rows.passes, rows.read) == (0, 0)  # they read the aggregates only
    pr_comment(model)
    assert (rows.passes, rows.read) == (1, 0)  # the failed rows; no regressed row to find
