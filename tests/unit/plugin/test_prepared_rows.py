"""Which rows a before-rows hook prepares (``MetricSpec.prepare``): ``preparations``
finds each hook the taken fixtures declare once, ``prepared_rows`` walks the items this
process collected and keeps each row a row test runs one of the hook's fixtures on, once,
with the fixtures its tests take; ``session_texts`` lists no text of a declaring metric
for a row the hook has done. Expected values by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Problem, Row
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Measured,
    MetricInfo,
    MetricSpec,
    Preparation,
)
from pytest_ragmetrics.metrics.catalog import Catalog, Declared
from pytest_ragmetrics.metrics.grounding import OVERLAPS
from pytest_ragmetrics.metrics.hooks import Prepared, PrepareRow
from pytest_ragmetrics.plugin import fixtures as fixtures_module
from pytest_ragmetrics.plugin.fixtures import preparations, prepared_rows, session_texts

GROUNDING = frozenset({"overlap", "faithfulness"})


def _row(index: int) -> Row:
    return Row(f"r{index}", "rows.jsonl", index + 1, index, {"answer": "A.", "contexts": []})


@dataclass
class FakeItem:
    """What ``prepared_rows`` reads of an item: its metric fixtures, its rows' params and
    whether it is a bulk item."""

    metrics: list[str]
    params: list[Any] = field(default_factory=list)
    bulk: bool = False


def _param(row: Row, problems: tuple[Problem, ...] = (), live: str | None = None) -> Any:
    return SimpleNamespace(row=row, problems=problems, live=live)


@pytest.fixture(autouse=True)
def fake_items(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixtures_module, "own_metrics", lambda item: item.metrics)
    monkeypatch.setattr(fixtures_module, "item_rows", lambda item: item.params)
    monkeypatch.setattr(
        fixtures_module, "batch_param", lambda item: object() if item.bulk else None
    )


def test_overlap_and_faithfulness_share_one_hook_found_once() -> None:
    assert preparations(["faithfulness", "f1", "overlap"]) == [(OVERLAPS, GROUNDING)]
    assert preparations(["faithfulness"]) == [(OVERLAPS, frozenset({"faithfulness"}))]
    assert preparations(["f1", "em"]) == []


def test_a_row_shared_by_an_overlap_and_a_faithfulness_test_is_kept_once_with_both() -> None:
    shared, faithful_only = _row(0), _row(1)
    items = [
        FakeItem(["faithfulness", "f1"], [_param(shared), _param(faithful_only)]),
        FakeItem(["overlap"], [_param(shared)]),
        FakeItem(["faithfulness"], [_param(faithful_only)]),
    ]
    assert prepared_rows(items, GROUNDING) == [  # type: ignore[arg-type]
        PrepareRow(shared, GROUNDING),
        PrepareRow(faithful_only, frozenset({"faithfulness"})),
    ]


def test_problem_rows_live_rows_bulk_items_and_other_tests_are_left_out() -> None:
    kept, problem, live, in_batch, ungrounded = (_row(n) for n in range(5))
    items = [
        FakeItem(
            ["overlap"],
            [
                _param(kept),
                _param(problem, problems=(Problem("answer", "missing"),)),
                _param(live, live="system"),
            ],
        ),
        FakeItem(["overlap", "faithfulness"], [_param(in_batch)], bulk=True),
        FakeItem(["em", "f1"], [_param(ungrounded)]),
    ]
    assert prepared_rows(items, GROUNDING) == [PrepareRow(kept, frozenset({"overlap"}))]  # type: ignore[arg-type]


def _nothing(rows: Any, settings: Any, store: Any) -> Prepared:
    return Prepared({})


def _texts(row: Row, settings: Any) -> list[str]:
    return [f"{row.id} text"]


def test_a_row_the_hook_has_done_lists_none_of_its_metrics_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A metric of the user's kind declaring a hook: r0 is done (its result came from a
    cache), r1 is not; a bulk item's rows always list theirs (the hook skips them)."""
    spec = MetricSpec(
        "toy",
        "a metric with a before-rows hook",
        (MetricInfo("toy", "a share", range=UNIT),),
        ("answer",),
        lambda row, ctx: Measured({"toy": 0.0}, ""),
        _texts,
        prepare=Preparation("toy_key", _nothing),
    )
    run = Catalog([Declared(spec.records[0], spec, "conftest.py:1")])
    done, pending = _row(0), _row(1)
    items = [
        FakeItem(["toy"], [_param(done), _param(pending)]),
        FakeItem(["toy"], [_param(done)], bulk=True),
    ]
    finished = {"toy_key": {("rows.jsonl", 0)}}
    texts = session_texts(items, Settings(), finished, run)  # type: ignore[arg-type]
    assert texts == ["r1 text", "r0 text"]
    assert session_texts(items, Settings(), catalog=run) == ["r0 text", "r1 text"]  # type: ignore[arg-type]
