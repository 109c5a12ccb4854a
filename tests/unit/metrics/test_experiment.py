"""The per-row metrics of an experiment comparison (METRICS.md §3), on hand-made rows."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.abstention import measure_idk_on_answerable
from pytest_ragmetrics.metrics.anchors import cited_texts, measure_anchor_coverage
from pytest_ragmetrics.metrics.answer import measure_wrong_on_answerable
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.cost import measure_rounds
from pytest_ragmetrics.metrics.repeats import measure_determinism
from pytest_ragmetrics.metrics.short import measure_em_short, measure_f1_short


def _row(**data: Any) -> Row:
    return Row("q1", "runs.jsonl", 4, 0, data)


def _unused_embed(texts: Any) -> Any:
    raise AssertionError("these metrics embed nothing")


CTX = MetricContext(Settings(), _unused_embed)
PRICE = {"question": "How much does Personal cost per month?", "gold": ["$9.99"]}


@pytest.mark.parametrize(
    ("answer", "answerable", "wrong", "idk"),
    [
        ("Personal costs $9.99 per month [1].", True, 0.0, 0.0),  # F1 > 0
        ("Family costs fourteen dollars [1].", True, 1.0, 0.0),  # answered, F1 0
        ("I don't know.", True, 0.0, 1.0),  # abstains: IDK, not wrong
        ("Family costs fourteen dollars [1].", False, 0.0, 0.0),  # not answerable
        ("I don't know.", False, 0.0, 0.0),
    ],
)
def test_wrong_and_idk_on_answerable(
    answer: str, answerable: bool, wrong: float, idk: float
) -> None:
    row = _row(answer=answer, answerable=answerable, **PRICE)
    assert measure_wrong_on_answerable(row, CTX).values == {"wrong_on_answerable": wrong}
    assert measure_idk_on_answerable(row, CTX).values == {"idk_on_answerable": idk}


def test_abstaining_by_telemetry_counts_as_idk() -> None:
    row = _row(answer="Maybe.", answerable=True, telemetry={"action": "ABSTAIN"}, **PRICE)
    assert measure_idk_on_answerable(row, CTX).values == {"idk_on_answerable": 1.0}
    assert measure_wrong_on_answerable(row, CTX).values == {"wrong_on_answerable": 0.0}


def test_rounds_multi_round_and_stop_reason() -> None:
    measured = measure_rounds(_row(telemetry={"rounds": 2, "stop_reason": "LOW_BUDGET"}), CTX)
    assert measured.values == {"rounds": 2.0, "multi_round": 1.0}
    assert measured.breakdowns == {"stop_reason": {"LOW_BUDGET": 1.0}}
    assert measured.details == {"stop_reason": "LOW_BUDGET"}
    alone = measure_rounds(_row(telemetry={"rounds": 1}), CTX)
    assert alone.values == {"rounds": 1.0, "multi_round": 0.0}
    assert alone.breakdowns == {"stop_reason": {"(none)": 1.0}}  # shares stay over all rows


@pytest.mark.parametrize(
    ("telemetry", "message"),
    [
        ({}, "runs.jsonl:4: field 'telemetry.rounds': required by rounds but missing"),
        ({"rounds": 0}, "field 'telemetry.rounds': expected an integer >= 1, got 0"),
        ({"rounds": True}, "field 'telemetry.rounds': expected an integer >= 1, got True"),
        ({"rounds": 1.5}, "expected an integer >= 1, got 1.5"),
        ({"rounds": 1, "stop_reason": ""}, "'telemetry.stop_reason': expected a non-empty string"),
    ],
)
def test_bad_telemetry_is_a_row_error(telemetry: dict[str, Any], message: str) -> None:
    with pytest.raises(RowError, match=message.replace("(", r"\(").replace(")", r"\)")):
        measure_rounds(_row(telemetry=telemetry), CTX)


def test_short_answer_metrics_score_the_finalizer_output() -> None:
    row = _row(answer="Personal costs $9.99 per month [CIT:kb-2].", **PRICE)
    f1 = measure_f1_short(row, CTX)
    # short answer "$9.99 per month" -> tokens 999, per, month; gold "$9.99" -> 999:
    # precision 1/3, recall 1, F1 0.5.
    assert f1.values == {"f1_short": pytest.approx(0.5)}
    assert f1.details == {"short_answer": {"text": "$9.99 per month", "rule": "number"}}
    assert measure_em_short(row, CTX).values == {"em_short": 0.0}
    exact = _row(
        answer="Personal costs $9.99 per month.",
        question=PRICE["question"],
        gold=["$9.99 per month"],
    )
    assert measure_em_short(exact, CTX).values == {"em_short": 1.0}


def test_anchor_coverage_reads_only_the_cited_contexts() -> None:
    contexts = [
        {"doc_id": "a", "text": "Lumen Cloud was founded in 2017."},
        {"doc_id": "b", "text": "Offices in Jakarta."},
    ]
    question = "When did Lumen Cloud open its Jakarta office?"  # anchors: Lumen Cloud, Jakarta
    cites_a = _row(question=question, answer="In 2017 [CIT:a].", contexts=contexts)
    assert cited_texts(cites_a, "anchor_coverage", CTX) == [contexts[0]["text"]]
    measured = measure_anchor_coverage(cites_a, CTX)
    assert measured.values == {"anchor_coverage": 0.5}
    assert measured.details == {"anchors": {"found": ["Lumen Cloud"], "missing": ["Jakarta"]}}
    both = _row(question=question, answer="In 2017 [1][2]. Jakarta [CIT:b].", contexts=contexts)
    assert cited_texts(both, "anchor_coverage", CTX) == [contexts[0]["text"], contexts[1]["text"]]
    assert measure_anchor_coverage(both, CTX).values == {"anchor_coverage": 1.0}


def test_determinism_compares_answers_and_resolved_citations() -> None:
    contexts = [{"doc_id": "a", "text": "A."}, {"doc_id": "b", "text": "B."}]
    first = _row(answer="It is A [1].", contexts=contexts)
    same = replace(first, line=9, data={**first.data, "latency_ms": 12})
    assert measure_determinism(first, replace(CTX, rerun=same)).values == {"determinism": 1.0}
    reworded = replace(first, data={**first.data, "answer": "It is B [1]."})
    differs = measure_determinism(first, replace(CTX, rerun=reworded))
    assert differs.values == {"determinism": 0.0}
    assert "answers differ from character 6: 'A [1].' vs 'B [1].'" in str(differs.evidence)
    # The same text, but [1] names another document in the second run's contexts.
    swapped = replace(first, data={**first.data, "contexts": contexts[::-1]})
    moved = measure_determinism(first, replace(CTX, rerun=swapped))
    assert moved.values == {"determinism": 0.0}
    assert "resolve to ['a'] here and ['b']" in str(moved.evidence)
    with pytest.raises(RowError, match="determinism needs the row's second run"):
        measure_determinism(first, CTX)
