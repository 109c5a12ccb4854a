"""Token usage in its three shapes."""

from __future__ import annotations

from pytest_ragmetrics.metrics import token_usage
from pytest_ragmetrics.metrics.cost import UNSTAGED


def test_an_int_is_the_total() -> None:
    usage = token_usage(420)
    assert (usage.total, usage.prompt, usage.completion) == (420, None, None)
    assert usage.by_stage == {UNSTAGED: 420}


def test_prompt_and_completion() -> None:
    usage = token_usage({"prompt": 300, "completion": 45})
    assert (usage.total, usage.prompt, usage.completion) == (345, 300, 45)


def test_calls_sum_over_stages() -> None:
    calls = [
        {"stage": "rewrite", "prompt_tokens": 100, "completion_tokens": 20},
        {"stage": "generate", "prompt_tokens": 500, "completion_tokens": 80},
        {"stage": "generate", "prompt_tokens": 50, "completion_tokens": 5},
        {"prompt_tokens": 7, "completion_tokens": 3},
    ]
    usage = token_usage(calls)
    assert usage.total == 765
    assert (usage.prompt, usage.completion) == (657, 108)
    assert usage.by_stage == {"rewrite": 120, "generate": 635, UNSTAGED: 10}
