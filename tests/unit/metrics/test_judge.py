"""How the records of one judge verdict, reported by two tests, merge on the controller, and
how the rows' records become the eval's ``judge`` statistics (the judge's declared hooks)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.fields import validate_fields
from pytest_ragmetrics.data.row import Row, RowError
from pytest_ragmetrics.data.streams import Problem
from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.judge.config import JudgeConfig
from pytest_ragmetrics.metrics.judge import (
    CONSISTENCY,
    JUDGE,
    SPECS,
    human_label,
    judge_aggregate,
    judge_run_signature,
    judge_signature,
    merge_judge_details,
    repeat_statistics,
    verdict_of,
)
from pytest_ragmetrics.results.summary import EvalContext

NO_CONTEXT = EvalContext({}, StatsSettings())  # an eval without gates, at the defaults


def _record(cached: int, requests: int, latency: float, **extra: Any) -> dict[str, Any]:
    return {
        "verdicts": 1,
        "cached": cached,
        "requests": requests,
        "replies": 1,
        "unparseable": 0,
        "failed": 0,
        "latency_ms": latency,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        **extra,
    }


def test_two_tests_records_of_one_verdict_merge_the_same_in_either_order() -> None:
    asked = {"faithfulness_judge": _record(0, 1, 40.0, score=1.0)}
    served = {"faithfulness_judge": _record(1, 0, 40.0, score=1.0)}
    # The test that asked wins over the one the cache served, whichever reported first.
    assert merge_judge_details(asked, served) == asked
    assert merge_judge_details(served, asked) == asked
    # Two real calls (the consistency pairs bypass the cache) are both counted.
    one = {"consistency_score": _record(0, 2, 30.0, scores=[1.0, 1.0])}
    two = {"consistency_score": _record(0, 3, 50.0, scores=[0.0, 1.0])}
    merged = merge_judge_details(one, two)
    assert merged == merge_judge_details(two, one)
    record = merged["consistency_score"]
    assert (record["verdicts"], record["requests"], record["latency_ms"]) == (2, 5, 80.0)
    assert (record["prompt_tokens"], record["completion_tokens"]) == (200, 20)


def test_the_judges_eval_statistics_come_from_every_rows_tallies() -> None:
    """Two rows: one verdict asked (40 ms, a reply), one that failed without a reply; by
    hand error_rate 1/2, avg_latency_ms 40/1, tokens 110 (the failed one spent none), and
    consistency_score is the rows' mean as aggregated per row."""
    failed = {**_record(0, 3, 0.0), "replies": 0, "failed": 1}
    failed.update(prompt_tokens=0, completion_tokens=0)
    details = [{"faithfulness_judge": _record(0, 1, 40.0)}, {"answer_relevance": failed}]
    aggregated = judge_aggregate(details, {CONSISTENCY: {"mean": 0.75, "count": 2.0}}, NO_CONTEXT)
    assert aggregated is not None
    stats = aggregated.stats
    assert (stats["verdicts"], stats["requests"], stats["failed"]) == (2, 4, 1)
    assert stats["error_rate"] == 0.5
    assert stats["avg_latency_ms"] == 40.0
    assert stats["tokens"] == 110
    assert stats[CONSISTENCY] == 0.75
    assert judge_aggregate([{}], {}, NO_CONTEXT) is None  # no verdict tallied: no statistics


def test_the_judge_declares_its_hooks_and_its_fixtures_ask_it() -> None:
    assert JUDGE.aggregate is judge_aggregate
    assert JUDGE.merge is merge_judge_details
    assert judge_run_signature(SimpleNamespace(judge=None, settings=Settings())) is None
    config = JudgeConfig(base_url="http://localhost:1", model="m")
    signed = judge_run_signature(SimpleNamespace(judge=config, settings=Settings()))
    assert signed == judge_signature(config)
    assert all(spec.asks_judge(Settings()) for spec in SPECS)


def test_a_temperature_other_than_zero_is_signed_and_repeats_are_not() -> None:
    plain = JudgeConfig("http://127.0.0.1:1/v1", "m")
    # The signature of every baseline stored before temperature was a key: unchanged.
    assert set(judge_signature(plain)) == {"model", "prompts_sha256"}
    assert judge_signature(JudgeConfig("http://127.0.0.1:1/v1", "m", repeats=5)) == (
        judge_signature(plain)
    )
    warm = judge_signature(JudgeConfig("http://127.0.0.1:1/v1", "m", temperature=0.7))
    assert warm == {**judge_signature(plain), "temperature": "0.7"}


def test_repeat_statistics_by_hand() -> None:
    # Rows (1, 0, 1) and (0.5, 0.5): variances 1/3 and 0, pooled sqrt(1/6); one row of two
    # has verdicts that differ; under ">= 0.8" the first row flips (1 passes, 0 does not),
    # the second does not (0.5 fails both times); a single verdict does not count.
    stats = repeat_statistics([[1.0, 0.0, 1.0], [0.5, 0.5], [1.0]], [lambda v: v >= 0.8])
    assert stats == {"spread": (1 / 6) ** 0.5, "unstable": 0.5, "flip_rate": 0.5}
    # Under "<= 0.5" as well: the second row still passes every time.
    both = [lambda v: v >= 0.8, lambda v: v <= 0.5]
    assert repeat_statistics([[1.0, 0.0, 1.0], [0.5, 0.5]], both)["flip_rate"] == 0.5
    assert "flip_rate" not in repeat_statistics([[1.0, 0.0]], [])
    assert repeat_statistics([[1.0], [0.0]], []) == {}  # nobody was asked twice


def _labelled(human: Any) -> Row:
    return Row("q1", "rows.jsonl", 3, 0, {"question": "Q?", "answer": "A.", "human": human})


def test_a_persons_label_is_read_for_its_metric() -> None:
    row = _labelled({"faithfulness_judge": 1, "answer_correctness": 4})
    assert human_label(row, "faithfulness_judge") == 1.0
    assert human_label(row, "answer_correctness") == 4.0
    assert human_label(row, "e2e_score") is None  # labelled for other metrics only
    assert human_label(Row("q2", "rows.jsonl", 4, 1, {}), "e2e_score") is None


@pytest.mark.parametrize(
    ("human", "message"),
    [
        (
            {"faithfulness": 1},
            "rows.jsonl:3: field 'human': 'faithfulness' is no LLM-judge metric; label one of "
            "faithfulness_judge, answer_relevance, answer_correctness, e2e_score",
        ),
        (
            {"faithfulness_judge": 0.7},
            "rows.jsonl:3: field 'human': the label of faithfulness_judge is 0.7; a person "
            "labels it as the judge is asked to, one of 0, 0.5, 1",
        ),
        (
            {"faithfulness_judge": 3},
            "rows.jsonl:3: field 'human': the label of faithfulness_judge is 3; a person "
            "labels it as the judge is asked to, one of 0, 0.5, 1",
        ),
    ],
)
def test_a_label_no_judge_verdict_could_be_errors_the_row(human: Any, message: str) -> None:
    with pytest.raises(RowError) as raised:
        human_label(_labelled(human), "faithfulness_judge")
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({}, "expected an object of judge metric -> label, got {}"),
        ([1], "expected an object of judge metric -> label, got [1]"),
        ({"e2e_score": "1"}, "the label of 'e2e_score' must be a finite number, got '1'"),
        ({"e2e_score": float("nan")}, "the label of 'e2e_score' must be a finite number, got nan"),
    ],
)
def test_the_human_field_is_an_object_of_numbers(value: Any, problem: str) -> None:
    assert validate_fields({"human": value}) == [Problem("human", problem)]


def test_a_rows_verdict_against_a_label_is_its_lower_median_on_the_scale() -> None:
    scale = (0.0, 0.5, 1.0)
    assert verdict_of([1.0], scale) == 1.0
    assert verdict_of([1.0, 0.0, 1.0], scale) == 1.0  # median of 0, 1, 1
    assert verdict_of([1.0, 0.0], scale) == 0.0  # the lower of the two middle verdicts
    assert verdict_of([0.7], scale) == 0.5  # between verdicts: the nearest, 0.5
    assert verdict_of([0.75], scale) == 0.5  # as near to 0.5 as to 1: the lower
    assert verdict_of([4.0, 2.0, 5.0, 3.0], (1.0, 2.0, 3.0, 4.0, 5.0)) == 3.0


def test_the_judges_cost_is_its_tokens_at_its_models_price() -> None:
    """Two rows judged by model j (100 prompt + 10 completion tokens each), one by the
    previous judge p of a comparison (100 + 10): by hand, at j = $1 / $2 per million and
    p = $3 / $4 per million, j costs 200 x 1 / 1e6 + 20 x 2 / 1e6 = 0.00024 and p
    100 x 3 / 1e6 + 10 x 4 / 1e6 = 0.00034; in all 0.00058."""
    from pytest_ragmetrics.metrics.judge import COST_STAT, JUDGE_COST_NOTE
    from pytest_ragmetrics.metrics.prices import Price, Prices

    details = [
        {"faithfulness_judge": _record(0, 1, 40.0, model="j")},
        {
            "faithfulness_judge": _record(0, 1, 40.0, model="j"),
            "faithfulness_judge@previous": _record(0, 1, 40.0, model="p"),
        },
    ]
    prices = Prices({"j": Price(1.0, 2.0), "p": Price(3.0, 4.0)})
    aggregated = judge_aggregate(details, {}, EvalContext({}, StatsSettings(), prices))
    assert aggregated is not None
    assert aggregated.stats[COST_STAT] == pytest.approx(0.00058, rel=1e-12)
    assert aggregated.notes[JUDGE_COST_NOTE] == (
        "$0.000580 in all",
        "$0.000240: 200 prompt + 20 completion tokens of j",
        "$0.000340: 100 prompt + 10 completion tokens of p",
    )
    # never mixed into the rows' cost: the judge's is a statistic of its own
    assert "cost_usd" not in {name for detail in details for name in detail}


def test_an_unpriced_judge_gets_no_cost_and_a_line_that_says_why() -> None:
    from pytest_ragmetrics.metrics.judge import COST_STAT, JUDGE_COST_NOTE
    from pytest_ragmetrics.metrics.prices import Price, Prices

    details = [{"faithfulness_judge": _record(0, 1, 40.0, model="j")}]
    context = EvalContext({}, StatsSettings(), Prices({"gpt-4o": Price(2.5, 10.0)}))
    aggregated = judge_aggregate(details, {}, context)
    assert aggregated is not None
    assert COST_STAT not in aggregated.stats
    assert aggregated.notes[JUDGE_COST_NOTE] == (
        "not priced: [settings.prices] has no price for the judge's model 'j'; add it to "
        "see judge.cost_usd",
    )
    # without [settings.prices] at all: no cost, and nothing to say
    plain = judge_aggregate(details, {}, NO_CONTEXT)
    assert plain is not None
    assert COST_STAT not in plain.stats
    assert not plain.notes
