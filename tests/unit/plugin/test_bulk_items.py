"""What is read ahead from a bulk item (a batch of rows in one test item): the texts to
embed, the outputs of live systems and the rows the judge is asked about count its rows,
exactly as the same rows' own items would. Expected values by hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.items import FakeItem

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import DatasetError, Problem, Row
from pytest_ragmetrics.plugin.fixtures import session_texts
from pytest_ragmetrics.plugin.progress import Display, bulk_progress, judged_tests, live_totals
from pytest_ragmetrics.plugin.state import (
    BatchParam,
    RowParam,
    eval_of,
    item_rows,
)
from pytest_ragmetrics.results.summary import EvalInfo

INFO = EvalInfo("test_x.py", "test_x.py", "data/q.jsonl", "0" * 64, 3)


def param(row_id: str, answer: str, live: str | None = None, bad: bool = False) -> RowParam:
    data = {"id": row_id, "question": f"{row_id}?", "answer": answer, "gold": "g"}
    row = Row(row_id, "data/q.jsonl", 1, 0, data)
    problems = (Problem("gold", "missing"),) if bad else ()
    return RowParam(INFO, row, problems, live=live)


@dataclass(frozen=True)
class GivenRows:
    """A batch source over rows made here; ``read`` counts how often rows are read."""

    rows: tuple[RowParam, ...]
    live: bool = False
    read: list[Sequence[int]] | None = None

    def params(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]:
        if self.read is not None:
            self.read.append(positions)
        return [self.rows[p] for p in positions]


def batch(nodeid: str, rows: list[RowParam], *fixtures: str) -> Any:
    source = GivenRows(tuple(rows), live=any(p.live for p in rows))
    return FakeItem(
        nodeid, ["row", *fixtures], {"row": BatchParam(INFO, source, range(len(rows)), 1)}
    )


def test_a_batch_is_named_by_the_positions_of_its_rows() -> None:
    rows = [param("a", "x"), param("b", "y"), param("c", "z")]
    later = BatchParam(INFO, GivenRows(tuple(rows)), [1, 2], 5)
    assert (later.id, later.size, later.read()) == ("rows-5-6", 2, rows[1:])
    item = batch("t::test[rows-1-3]", rows)
    assert list(item_rows(item)) == rows
    assert eval_of(item) == INFO


def test_the_texts_to_embed_are_those_of_every_valid_row_of_a_batch() -> None:
    rows = [param("a", "Paris."), param("b", "Rome."), param("c", "Oslo.", bad=True)]
    texts = session_texts([batch("t::s[rows-1-3]", rows, "semantic_similarity")], Settings())
    # the answer of each valid row and their one gold, in first-use order; c is a bad row
    assert texts == ["Paris.", "g", "Rome."]
    assert session_texts([batch("t::f[rows-1-3]", rows, "f1")], Settings()) == []


def test_live_outputs_and_judged_rows_count_the_rows_of_a_batch() -> None:
    rows = [param("a", "", "topk"), param("b", "", "topk"), param("c", "", "topk", bad=True)]
    items = [
        batch("t::a[topk/rows-1-3]", rows, "determinism"),  # two outputs for each valid row
        batch("t::j[rows-1-3]", [param("a", ""), param("b", "", bad=True)], "faithfulness_judge"),
        batch("t::f[rows-1-1]", [param("a", "")], "f1"),  # asks no judge
    ]
    assert live_totals(items) == {"topk": 4}
    assert judged_tests(items, Settings()) == {"t::j[rows-1-3]": 1}


def test_a_batch_that_no_system_answers_is_not_read_for_live_totals() -> None:
    read: list[Sequence[int]] = []
    source = GivenRows((param("a", "x"), param("b", "y")), read=read)
    item = FakeItem("t::f[rows-1-2]", ["row", "f1"], {"row": BatchParam(INFO, source, [0, 1], 1)})
    assert live_totals([item]) == {}
    assert judged_tests([item], Settings()) == {}
    assert session_texts([item], Settings()) == []
    assert read == []  # nothing asked for its rows: they stay in the dataset


@dataclass(frozen=True)
class ChangedRows(GivenRows):
    """A dataset that changed after collection: its rows cannot be read."""

    def params(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]:
        raise DatasetError("data/q.jsonl: the dataset changed while the run read it")


def test_a_batch_that_cannot_be_read_is_left_to_error_when_it_runs() -> None:
    """Reading ahead (texts to embed, live outputs, judged rows) skips it: its item then
    reports each row as an error (tests/integration/test_bulk_mode.py)."""
    source = ChangedRows((param("a", "Paris."),), live=True)
    item = FakeItem(
        "t::s[rows-1-1]",
        ["row", "semantic_similarity", "faithfulness_judge"],
        {"row": BatchParam(INFO, source, [0], 1)},
    )
    assert item_rows(item) == ()
    assert session_texts([item], Settings()) == []
    assert live_totals([item]) == {}
    assert judged_tests([item], Settings()) == {}


def test_the_progress_of_bulk_rows_counts_the_selected_batches_rows() -> None:
    # Batches of 3 and 2 rows and a row test: 5 rows in 2 bulk items, none read for it.
    read: list[Sequence[int]] = []
    source = GivenRows(tuple(param(r, "x") for r in "abcde"), read=read)
    items = [
        FakeItem("t::f[rows-1-3]", ["row", "f1"], {"row": BatchParam(INFO, source, [0, 1, 2], 1)}),
        FakeItem("t::f[rows-4-5]", ["row", "f1"], {"row": BatchParam(INFO, source, [3, 4], 4)}),
        FakeItem("t::g[a]", ["row", "f1"], {"row": param("a", "x")}),
    ]
    written: list[str] = []
    progress = bulk_progress(items, Display(written.append, tty=False), share=1)
    assert progress is not None
    assert (progress.lines.total, progress.items, read) == (5, 2, [])
    # The first item counts one row, then stops short: its 3 rows are done when it ends.

    def stops_short() -> None:
        with progress.running(3):
            progress.count(1)
            raise RuntimeError("the item stopped")

    with pytest.raises(RuntimeError):
        stops_short()
    assert progress.lines.done == 3
    with progress.running(2):
        progress.count(2)
    assert written[0] == "ragmetrics: bulk rows: 5 row(s) in 2 bulk item(s)\n"
    assert written[-1].startswith("ragmetrics: bulk rows: 5/5 (100%) in ")
    assert progress.lines.finished


def test_without_bulk_items_there_is_no_progress_of_bulk_rows() -> None:
    items = [FakeItem("t::g[a]", ["row", "f1"], {"row": param("a", "x")}), FakeItem("t::p", [])]
    assert bulk_progress(items, Display(print, tty=True), share=1) is None
