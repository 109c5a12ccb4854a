"""Cost metrics: LLM tokens per query (with a breakdown by stage) and latency.

``tokens`` in a row takes one of three shapes (docs/metrics.md#tokens):

* an int: the total, no breakdown;
* ``{"prompt": int, "completion": int}``: one call;
* a list of ``{"stage"?: str, "prompt_tokens": int, "completion_tokens": int}``: every
  LLM call of the query. Calls without a stage are grouped under ``UNSTAGED``.

The total is prompt + completion summed over every call. Validation happens when the
dataset is loaded (see ``pytest_ragmetrics.data.dataset``); these functions assume valid shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    COUNT,
    UNIT,
    Column,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    Presentation,
    Versus,
)

UNSTAGED = "(unstaged)"
NO_STOP_REASON = "(none)"


@dataclass(frozen=True, slots=True)
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


# -- the metric fixtures ----------------------------------------------------------------


def measure_tokens(row: Row, ctx: MetricContext) -> Measured:
    usage = token_usage(row.require("tokens", "tokens"))
    values = {"tokens": float(usage.total)}
    if usage.prompt is not None and usage.completion is not None:
        values["prompt_tokens"] = float(usage.prompt)
        values["completion_tokens"] = float(usage.completion)
    breakdown = {stage: float(count) for stage, count in usage.by_stage.items()}
    evidence = Evidence(_tokens_evidence, usage)
    return Measured(values, evidence, {"tokens_by_stage": breakdown})


def _tokens_evidence(usage: TokenUsage) -> str:
    """``tokens``' evidence: the total, then each stage's count."""
    stages = ", ".join(f"{stage} {count}" for stage, count in usage.by_stage.items())
    return f"{usage.total} tokens ({stages})"


def measure_latency(row: Row, ctx: MetricContext) -> Measured:
    latency = float(row.require("latency_ms", "latency"))
    return Measured({"latency_ms": latency}, Evidence("{:g} ms end to end", latency))


def _telemetry(row: Row, metric: str) -> dict[str, Any]:
    telemetry: dict[str, Any] = row.require("telemetry", metric)
    return telemetry


def measure_rounds(row: Row, ctx: MetricContext) -> Measured:
    """``telemetry.rounds`` (an integer >= 1), ``multi_round`` (rounds > 1), and
    ``telemetry.stop_reason`` as the ``stop_reason`` breakdown when the row has one."""
    telemetry = _telemetry(row, "rounds")
    if "rounds" not in telemetry:
        raise RowError(f"{row.where('telemetry.rounds')}: required by rounds but missing")
    rounds = telemetry["rounds"]
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise RowError(f"{row.where('telemetry.rounds')}: expected an integer >= 1, got {rounds!r}")
    reason = telemetry.get("stop_reason")
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        where = row.where("telemetry.stop_reason")
        raise RowError(f"{where}: expected a non-empty string, got {reason!r}")
    # A row without a reason counts as "(none)", so the shares are over every row.
    breakdowns = {"stop_reason": {reason or NO_STOP_REASON: 1.0}}
    values = {"rounds": float(rounds), "multi_round": 1.0 if rounds > 1 else 0.0}
    stop = f", stopped by {reason}" if reason else ""
    details = {"stop_reason": reason} if reason else {}
    return Measured(values, Evidence("{} round(s){}", rounds, stop), breakdowns, details)


SPECS = (
    MetricSpec(
        "tokens",
        "LLM tokens of the query: prompt + completion over every call (prompt_tokens and "
        "completion_tokens too when the row splits them; the tokens_by_stage breakdown).",
        (
            MetricInfo(
                "tokens",
                "prompt + completion tokens over every call of the query",
                range=COUNT,
                presentation=Presentation(
                    label="Tokens",
                    format="integer",
                    columns=(Column("main", 40, format="amount"),),
                    distribution=6,
                    versus=(Versus("mean", "ratio", 1), Versus("p50", "ratio", 2)),
                    pareto="cost",
                ),
            ),
            MetricInfo(
                "prompt_tokens",
                "prompt tokens over every call of the query",
                range=COUNT,
                # the tokens_by_stage breakdown shows the split
                presentation=Presentation(format="integer", listed=False),
            ),
            MetricInfo(
                "completion_tokens",
                "completion tokens over every call of the query",
                range=COUNT,
                presentation=Presentation(format="integer", listed=False),
            ),
        ),
        ("tokens",),
        measure_tokens,
    ),
    MetricSpec(
        "latency",
        "End-to-end latency of the query in milliseconds, recorded as latency_ms.",
        (
            MetricInfo(
                "latency_ms",
                "end-to-end latency of the query, milliseconds",
                range=COUNT,
                presentation=Presentation(
                    format="ms",
                    columns=(
                        Column("main", 50, "p50", "P50 ms", "ms"),
                        Column("appendix", 20, "p95", "P95 ms", "ms"),
                    ),
                    distribution=7,
                ),
            ),
        ),
        ("latency_ms",),
        measure_latency,
    ),
    MetricSpec(
        "rounds",
        "telemetry.rounds, the retrieve-generate rounds of the query (an integer >= 1); also "
        "records multi_round (1 when rounds > 1) and the stop_reason breakdown.",
        (
            MetricInfo(
                "rounds",
                "telemetry.rounds: retrieve-generate rounds of the query",
                range=(1.0, math.inf),
                presentation=Presentation(
                    label="Rounds", columns=(Column("systems", 90, format="hundredths"),)
                ),
            ),
            MetricInfo(
                "multi_round",
                "the query took more than one round",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    label="Rounds > 1", columns=(Column("systems", 100, "rate"),)
                ),
            ),
        ),
        ("telemetry",),
        measure_rounds,
    ),
)
