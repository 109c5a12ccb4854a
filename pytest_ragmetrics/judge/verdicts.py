"""What a judge call gives back: a ``Verdict`` and the ``Call`` it cost, or a
``JudgeError``; and how a reply's text becomes a verdict.

A verdict is one JSON object of the expected shape, or an ``UnparseableVerdict``: nothing
is coerced, and such a reply is not retried (at temperature 0 the same question gets the
same answer).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.files import loads_finite

# The inclusive range of each scored prompt's "score"; "entailment" answers true/false.
SCALES: dict[str, tuple[float, float]] = {
    "faithfulness_judge": (0.0, 1.0),
    "answer_relevance": (0.0, 1.0),
    "answer_correctness": (1.0, 5.0),
    "e2e_score": (0.0, 1.0),
}
_FENCED = re.compile(r"```(?:json\b)?(.*)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Call:
    """What one verdict cost: the accounting behind latency and token metrics.

    ``latency_ms`` is the wall time of the request that produced the reply (replayed from
    the cache when ``cached``); for a failure, the time spent in all its requests.
    ``attempts`` counts requests sent now, so 0 when cached.
    """

    cached: bool
    latency_ms: float
    attempts: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Verdict:
    """One judgment: the score on the prompt's scale (entailment: 1.0 or 0.0) and why."""

    score: float
    reason: str
    call: Call


class JudgeError(Exception):
    """A judge call produced no verdict; ``call`` is what it spent (None: nothing sent)."""

    def __init__(self, message: str, call: Call | None = None) -> None:
        super().__init__(message)
        self.call = call


class JudgeUnreachable(JudgeError):
    """The endpoint cannot be used at all; the judge sends nothing more this run."""


class JudgeCallFailed(JudgeError):
    """The call kept failing through its retries, or the server refused it outright."""


class UnparseableVerdict(JudgeError):
    """The reply is not a verdict of the expected shape; ``content`` is the reply text."""

    def __init__(self, message: str, content: str, call: Call | None = None) -> None:
        super().__init__(message, call)
        self.content = content


def parse_verdict(name: str, content: str) -> tuple[float, str]:
    """``(score, reason)`` from a reply: one JSON object, optionally in a single ```json
    fence and nothing else; ``ValueError`` says what is wrong. Never coerces: a score is a
    JSON number within ``SCALES[name]``, ``entailed`` a JSON boolean, ``reason`` (optional)
    a string. Extra keys are ignored."""
    document = _json_object(_unfenced(content.strip()))
    reason = document.get("reason", "")
    if not isinstance(reason, str):
        raise ValueError('"reason" is not a string')
    if name == "entailment":
        entailed = document.get("entailed")
        if not isinstance(entailed, bool):
            raise ValueError('"entailed" is not true or false')
        return (1.0 if entailed else 0.0), reason
    low, high = SCALES[name]
    score = document.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError('"score" is not a number')
    # A huge integer is fine for the range check but would overflow math.isfinite.
    if (isinstance(score, float) and not math.isfinite(score)) or not low <= score <= high:
        raise ValueError(f'"score" {score!r} is outside {low:g}..{high:g}')
    return float(score), reason


def _unfenced(text: str) -> str:
    match = _FENCED.fullmatch(text)
    if match is None:
        return text
    inner = match.group(1)
    if "```" in inner:
        raise ValueError("more than one ``` fence")
    return inner.strip()


def _json_object(text: str) -> dict[str, Any]:
    try:
        document = loads_finite(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at character {error.pos})") from None
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise ValueError("a key appears twice")
    return document


@dataclass(frozen=True)
class Reply:
    """A reply's raw text and what it cost; kept raw (in the cache too), so that an
    unparseable reply is replayed as the same error and a parser change applies to old
    replies."""

    content: str
    call: Call


def is_token_count(value: Any) -> bool:
    """Whether ``value`` is a token count: a JSON integer, 0 or more."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def token_count(value: Any) -> int:
    """A token count the server gave, or 0 when it gave none (or something else)."""
    return int(value) if is_token_count(value) else 0
