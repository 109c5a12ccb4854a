"""Per-row readers of the tiered metrics: where a row's ranking comes from."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.retrieval import ranking, retrieval_consistency, retrieval_measure


def _row(**data: Any) -> Row:
    return Row("r1", "rows.jsonl", 3, 0, data)


def _context(doc_id: str) -> dict[str, str]:
    return {"doc_id": doc_id, "text": f"text of {doc_id}"}


def _unused_embed(texts: Any) -> Any:
    raise AssertionError("retrieval metrics embed nothing")


CTX = MetricContext(Settings(), _unused_embed)


def test_retrieved_is_the_ranking_when_present() -> None:
    row = _row(retrieved=["b", "a"], contexts=[_context("a")])
    assert ranking(row, "mrr") == ["b", "a"]


def test_contexts_rank_each_document_once_at_its_first_chunk() -> None:
    row = _row(contexts=[_context("a"), _context("b"), _context("a"), _context("c")])
    assert ranking(row, "mrr") == ["a", "b", "c"]


def test_no_ranking_field_names_the_row() -> None:
    with pytest.raises(RowError, match=r"rows.jsonl:3: field 'retrieved': required by mrr"):
        ranking(_row(relevant=["a"]), "mrr")


def test_a_duplicate_in_retrieved_names_the_field() -> None:
    row = _row(retrieved=["a", "b", "a"], relevant=["a"])
    with pytest.raises(RowError, match=r"field 'retrieved'.*lists 'a' more than once"):
        retrieval_measure("mrr")(row, CTX)


def test_no_judgement_is_a_row_error() -> None:
    # trec_eval cannot score a query without judgements; a row must not score 0 for it.
    row = _row(retrieved=["a"], relevant=[])
    with pytest.raises(RowError, match=r"field 'relevant': mrr needs at least one judgement"):
        retrieval_measure("mrr")(row, CTX)


def test_judged_but_nothing_relevant_scores_zero() -> None:
    row = _row(retrieved=["a"], relevant={"a": 0})
    assert retrieval_measure("mrr")(row, CTX).values == {"mrr": 0.0}


def test_retrieval_consistency_by_hand() -> None:
    first = ["a", "b", "c"]
    repeats = [["a", "b", "x"], ["b", "a", "c"], ["a", "b", "c"]]
    assert retrieval_consistency(first, repeats, k=2) == pytest.approx(2 / 3)
    assert retrieval_consistency(first, repeats) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        retrieval_consistency(first, repeats, k=0)
    with pytest.raises(ValueError, match="at least one repeated retrieval"):
        retrieval_consistency(first, [], k=2)


def test_answer_groups_are_flattened_into_aliases() -> None:
    from pytest_ragmetrics.metrics.base import golds

    row = _row(gold=[["Daei", "Ali Daei"], ["Bican"]])
    assert golds(row, "f1") == ["Daei", "Ali Daei", "Bican"]
    assert golds(_row(gold="Paris"), "f1") == ["Paris"]
