"""Cost metrics: LLM tokens per query (with a breakdown by stage), their cost in US
dollars at the prices of ``[settings.prices]``, and latency.

``tokens`` in a row takes one of three shapes (docs/metrics.md#tokens):

* an int: the total, no breakdown;
* ``{"prompt": int, "completion": int}``: one call;
* a list of ``{"stage"?: str, "prompt_tokens": int, "completion_tokens": int}``: every
  LLM call of the query. Calls without a stage are grouped under ``UNSTAGED``.

The total is prompt + completion summed over every call. Validation happens when the
dataset is loaded (see ``pytest_ragmetrics.data.dataset``); these functions assume valid shapes.

``cost_usd`` prices each call by its model (docs/metrics.md#cost_usd): the call's
``model``, else the row's ``model``, else the row's ``system`` when ``[settings.prices]``
names it. A total with no prompt/completion split cannot be priced (the two are priced
differently), and a model without a price is an error of the row: never a cost of 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from pytest_ragmetrics.metrics.prices import EXAMPLE, PRICES_TABLE, Price, Prices, dollars

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


COST_USD = "cost_usd"
# The row's cost by the model that spent it, summed over the rows: which models (and so
# which prices) an eval's cost_usd was computed with (``price_signature``).
COST_BY_MODEL = "cost_usd_by_model"
MODEL = "model"  # the row field, and the key of a call, naming the model of its tokens


@dataclass(frozen=True)
class PricedCall:
    """One LLM call of a row, with the name its price was found under."""

    model: str
    prompt: int
    completion: int
    price: Price

    @property
    def cost(self) -> float:
        return self.price.cost(self.prompt, self.completion)


def _calls(row: Row) -> list[tuple[int, int, str | None, str]]:
    """The row's calls as (prompt, completion, the call's own model or None, where the
    tokens are); a bare total cannot be priced: prompt and completion cost differently."""
    tokens = row.require("tokens", COST_USD)
    if isinstance(tokens, int):
        raise RowError(
            f"{row.where('tokens')}: {COST_USD} needs prompt and completion tokens apart (they "
            f"are priced differently) and the row has only a total ({tokens}); record tokens "
            'as {"prompt": ..., "completion": ...} or as a list of calls with prompt_tokens '
            "and completion_tokens"
        )
    if isinstance(tokens, dict):
        return [(int(tokens["prompt"]), int(tokens["completion"]), None, "tokens")]
    return [
        (
            int(call["prompt_tokens"]),
            int(call["completion_tokens"]),
            call.get(MODEL),
            f"tokens[{index}]",
        )
        for index, call in enumerate(tokens)
    ]


def call_models(row: Row, prices: Prices) -> list[PricedCall]:
    """Each LLM call of ``row`` with its price, the model of a call being, in order: the
    call's ``model`` (the list form of ``tokens``), the row's ``model``, the row's
    ``system`` when ``[settings.prices]`` has a price under that name. A call with no
    model, or a model with no price, is a ``RowError`` naming the row's file and line."""
    if not prices:
        raise RowError(
            f"{row.where()}: {COST_USD} needs [settings.{PRICES_TABLE}] in thresholds.toml, "
            f"which has none; add the price of each model the rows name, e.g. {EXAMPLE}"
        )
    row_model = row.data.get(MODEL)
    system = row.data.get("system")
    fallback = system if isinstance(system, str) and prices.price(system) else None
    priced = []
    for prompt, completion, own, where in _calls(row):
        model = own or row_model or fallback
        if model is None:
            system_hint = (
                f", or price its system {system!r} in [settings.{PRICES_TABLE}]" if system else ""
            )
            raise RowError(
                f"{row.where(where)}: {COST_USD} cannot tell which model made this call: add a "
                f'"{MODEL}" field to the row (or "{MODEL}" to each call of tokens){system_hint}'
            )
        price = prices.price(model)
        if price is None:
            field_name = f"{where}.{MODEL}" if own else (MODEL if row_model else "system")
            raise RowError(
                f"{row.where(field_name)}: model {model!r} has no price in "
                f"[settings.{PRICES_TABLE}] (priced: {prices.names()}); add "
                f'"{model}" = {{ prompt = ..., completion = ... }} in US dollars per million '
                "tokens"
            )
        priced.append(PricedCall(model, prompt, completion, price))
    return priced


def cost_usd(calls: Sequence[PricedCall]) -> float:
    """The cost of a query in US dollars: the sum over its LLM calls of
    prompt_tokens * prompt_price / 1e6 + completion_tokens * completion_price / 1e6, each
    call at the price of its own model (prices are per million tokens).

    No call (an empty list of calls) costs 0.0, as 0 tokens do. Not rounded: the floats as
    computed, summed with ``math.fsum`` so the order of the calls does not change the
    last digit."""
    return math.fsum(call.cost for call in calls)


def _by_model(calls: Sequence[PricedCall]) -> dict[str, tuple[int, int, float]]:
    """Prompt tokens, completion tokens and cost per model, in the order first called."""
    found: dict[str, tuple[int, int, float]] = {}
    for call in calls:
        prompt, completion, cost = found.get(call.model, (0, 0, 0.0))
        found[call.model] = (prompt + call.prompt, completion + call.completion, cost + call.cost)
    return found


def measure_cost_usd(row: Row, ctx: MetricContext) -> Measured:
    calls = call_models(row, ctx.settings.prices)
    value = cost_usd(calls)
    models = _by_model(calls)
    if not models:
        return Measured({COST_USD: 0.0}, "$0: no LLM call")
    breakdown = {model: cost for model, (_, _, cost) in models.items()}
    evidence = Evidence(_cost_evidence, value, models)  # built when a report shows it
    return Measured({COST_USD: value}, evidence, {COST_BY_MODEL: breakdown})


def _cost_evidence(value: float, models: dict[str, tuple[int, int, float]]) -> str:
    """``$0.000270: 1,000 prompt + 200 completion tokens of gpt-4o-mini``, each model's
    own cost in brackets when the row called several."""
    spent = [
        f"{prompt:,} prompt + {completion:,} completion tokens of {model}"
        + (f" ({dollars(cost)})" if len(models) > 1 else "")
        for model, (prompt, completion, cost) in models.items()
    ]
    return f"{dollars(value)}: {'; '.join(spent)}"


def price_signature(models: Sequence[str], prices: Prices) -> dict[str, dict[str, float]]:
    """What a baseline's signature holds of the prices an eval's ``cost_usd`` was computed
    with: under ``cost_usd.price[<model>]``, the price of each model its rows were priced
    with. Compared only for a model both the baseline and the run priced
    (``results.baseline.check_signature``): a model only one of them used says nothing of
    the other's numbers, while one priced differently makes ``cost_usd`` unlike."""
    signed = {}
    for model in models:
        price = prices.price(model)
        if price is not None:
            signed[f"{COST_USD}.price[{model}]"] = price.as_dict()
    return signed


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
                    columns=(Column("main", 40, format="amount"), Column("comment", 10)),
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
        COST_USD,
        "Cost of the query in US dollars: the sum over its LLM calls of prompt tokens x the "
        "prompt price + completion tokens x the completion price, prices per million tokens "
        "from [settings.prices], each call at its model's (the call's model, else the row's "
        "model, else a priced system); >= 0, unrounded. A row with only a total of tokens, or "
        "a model with no price, errors; an empty list of calls costs 0.",
        (
            MetricInfo(
                COST_USD,
                "US dollars the query's LLM calls cost at [settings.prices]",
                range=COUNT,
                presentation=Presentation(
                    label="Cost $",
                    format="usd",
                    columns=(
                        Column("systems", 45, format="usd"),
                        Column("comment", 30),
                        Column("comment", 40, "sum"),
                    ),
                    versus=(Versus("mean", "ratio", 3),),
                ),
            ),
        ),
        ("tokens",),
        measure_cost_usd,
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
                        Column("comment", 20, "p50"),
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
