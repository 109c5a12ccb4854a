"""Cost metrics: LLM tokens per query (with a breakdown by stage) and latency.

``tokens`` in a row takes one of three shapes (METRICS.md §0):

* an int: the total, no breakdown;
* ``{"prompt": int, "completion": int}``: one call;
* a list of ``{"stage"?: str, "prompt_tokens": int, "completion_tokens": int}``: every
  LLM call of the query. Calls without a stage are grouped under ``UNSTAGED``.

The total is prompt + completion summed over every call. Validation happens when the
dataset is loaded (see ``pytest_ragmetrics.data.dataset``); these functions assume valid shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

UNSTAGED = "(unstaged)"


@dataclass(frozen=True)
class TokenUsage:
    """Token counts of one query. ``prompt``/``completion`` are ``None`` when unknown."""

    total: int
    prompt: int | None = None
    completion: int | None = None
    by_stage: dict[str, int] = field(default_factory=dict)


def token_usage(tokens: Any) -> TokenUsage:
    """Sum a row's ``tokens`` field, keeping prompt/completion and per-stage totals."""
    if isinstance(tokens, int):
        return TokenUsage(tokens, by_stage={UNSTAGED: tokens})
    if isinstance(tokens, dict):
        prompt, completion = int(tokens["prompt"]), int(tokens["completion"])
        total = prompt + completion
        return TokenUsage(total, prompt, completion, {UNSTAGED: total})
    prompt = completion = 0
    by_stage: dict[str, int] = {}
    for call in tokens:
        call_prompt, call_completion = int(call["prompt_tokens"]), int(call["completion_tokens"])
        prompt += call_prompt
        completion += call_completion
        stage = str(call.get("stage") or UNSTAGED)
        by_stage[stage] = by_stage.get(stage, 0) + call_prompt + call_completion
    return TokenUsage(prompt + completion, prompt, completion, by_stage)
