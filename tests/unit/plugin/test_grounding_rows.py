"""Which rows the prepare step scores: ``grounding_rows`` walks the items this process
collected and keeps each row a row test runs ``overlap`` or ``faithfulness`` on, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ragmetrics.data.dataset import Problem, Row
from pytest_ragmetrics.plugin import fixtures as fixtures_module
from pytest_ragmetrics.plugin.fixtures import grounding_rows


def _row(index: int) -> Row:
    return Row(f"r{index}", "rows.jsonl", index + 1, index, {"answer": "A.", "contexts": []})


@dataclass
class FakeItem:
    """What ``grounding_rows`` reads of an item: its metric fixtures, its rows' params and
    whether it is a bulk item."""

    metrics: list[str]
    params: list[Any] = field(default_factory=list)
    bulk: bool = False


def _param(row: Row, problems: tuple[Problem, ...] = (), live: str | None = None) -> Any:
    return SimpleNamespace(row=row, problems=problems, live=live)


@pytest.fixture(autouse=True)
def fake_items(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixtures_module, "own_metrics", lambda item: item.metrics)
    monkeypatch.setattr(fixtures_module, "row_params", lambda item: item.params)
    monkeypatch.setattr(
        fixtures_module, "batch_param", lambda item: object() if item.bulk else None
    )


def test_a_row_shared_by_an_overlap_and_a_faithfulness_test_is_kept_once_taking_overlap() -> None:
    shared, faithful_only = _row(0), _row(1)
    items = [
        FakeItem(["faithfulness", "f1"], [_param(shared), _param(faithful_only)]),
        FakeItem(["overlap"], [_param(shared)]),
        FakeItem(["faithfulness"], [_param(faithful_only)]),
    ]
    assert grounding_rows(items) == [(shared, True), (faithful_only, False)]  # type: ignore[arg-type]


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
    assert grounding_rows(items) == [(kept, True)]  # type: ignore[arg-type]
