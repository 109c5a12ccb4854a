"""How the records of one judge verdict, reported by two tests, merge on the controller."""

from __future__ import annotations

from typing import Any

from pytest_ragmetrics.metrics.judge import merge_judge_details


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
