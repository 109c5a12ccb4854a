"""cost_usd: each LLM call priced at its model's [settings.prices], in US dollars.

Every expected value is worked out by hand in the comment beside it: tokens x dollars per
million tokens / 1,000,000.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.cost import COST_BY_MODEL, measure_cost_usd, price_signature
from pytest_ragmetrics.metrics.prices import Price, Prices, dollars

MINI = Price(prompt=0.15, completion=0.60)
FOUR_O = Price(prompt=2.50, completion=10.00)
PRICES = Prices({"gpt-4o-mini": MINI, "gpt-4o": FOUR_O, "compact": Price(0.10, 0.40)})


def _row(**data: Any) -> Row:
    return Row("r1", "rows.jsonl", 7, 0, data)


def _measure(row: Row, prices: Prices = PRICES) -> Any:
    context = MetricContext(Settings(prices=prices), embed=lambda texts: [])
    return measure_cost_usd(row, context)


def test_one_call() -> None:
    measured = _measure(_row(tokens={"prompt": 1000, "completion": 200}, model="gpt-4o-mini"))
    # 1000 x 0.15 / 1e6 = 0.00015; 200 x 0.60 / 1e6 = 0.00012; together 0.00027
    assert measured.values["cost_usd"] == pytest.approx(0.00027, rel=1e-12)
    assert measured.evidence == "$0.000270: 1,000 prompt + 200 completion tokens of gpt-4o-mini"


def test_calls_of_different_models_are_each_priced_at_their_own() -> None:
    row = _row(
        model="gpt-4o-mini",
        tokens=[
            {"stage": "rewrite", "prompt_tokens": 100, "completion_tokens": 20},
            {"stage": "generate", "model": "gpt-4o", "prompt_tokens": 500, "completion_tokens": 80},
            {"prompt_tokens": 300, "completion_tokens": 10},
        ],
    )
    measured = _measure(row)
    # gpt-4o-mini (the row's model, calls 1 and 3): 400 prompt x 0.15 / 1e6 = 0.00006,
    #   30 completion x 0.60 / 1e6 = 0.000018 -> 0.000078
    # gpt-4o (call 2's own model): 500 x 2.50 / 1e6 = 0.00125, 80 x 10 / 1e6 = 0.0008
    #   -> 0.00205
    # total 0.002128
    assert measured.values["cost_usd"] == pytest.approx(0.002128, rel=1e-12)
    by_model = measured.breakdowns[COST_BY_MODEL]
    assert by_model["gpt-4o-mini"] == pytest.approx(0.000078, rel=1e-12)
    assert by_model["gpt-4o"] == pytest.approx(0.00205, rel=1e-12)
    assert measured.evidence == (
        "$0.00213: 400 prompt + 30 completion tokens of gpt-4o-mini ($0.0000780); "
        "500 prompt + 80 completion tokens of gpt-4o ($0.00205)"
    )


@pytest.mark.parametrize("tokens", [[], {"prompt": 0, "completion": 0}])
def test_no_tokens_cost_nothing(tokens: Any) -> None:
    measured = _measure(_row(tokens=tokens, model="gpt-4o"))
    assert measured.values["cost_usd"] == 0.0


def test_an_empty_list_of_calls_needs_no_model() -> None:
    assert _measure(_row(tokens=[])).evidence == "$0: no LLM call"


def test_a_priced_system_prices_rows_that_name_no_model() -> None:
    measured = _measure(_row(tokens={"prompt": 1000, "completion": 1000}, system="compact"))
    # 1000 x 0.10 / 1e6 + 1000 x 0.40 / 1e6 = 0.0001 + 0.0004 = 0.0005
    assert measured.values["cost_usd"] == pytest.approx(0.0005, rel=1e-12)


def test_the_rows_model_comes_before_its_system() -> None:
    row = _row(tokens={"prompt": 1000, "completion": 0}, system="compact", model="gpt-4o")
    # 1000 x 2.50 / 1e6 = 0.0025 (not the system's 0.10)
    assert _measure(row).values["cost_usd"] == pytest.approx(0.0025, rel=1e-12)


def test_an_unknown_model_errors_the_row_at_its_line() -> None:
    with pytest.raises(RowError) as raised:
        _measure(_row(tokens={"prompt": 1, "completion": 1}, model="gpt-5"))
    assert str(raised.value) == (
        "rows.jsonl:7: field 'model': model 'gpt-5' has no price in [settings.prices] "
        '(priced: "compact", "gpt-4o", "gpt-4o-mini"); add "gpt-5" = { prompt = ..., '
        "completion = ... } in US dollars per million tokens"
    )


def test_an_unknown_model_of_a_call_names_the_call() -> None:
    calls = [{"model": "claude", "prompt_tokens": 1, "completion_tokens": 1}]
    with pytest.raises(RowError, match=r"rows.jsonl:7: field 'tokens\[0\].model': model 'claude'"):
        _measure(_row(tokens=calls, model="gpt-4o"))


def test_a_total_alone_cannot_be_priced() -> None:
    with pytest.raises(RowError) as raised:
        _measure(_row(tokens=420, model="gpt-4o"))
    assert str(raised.value).startswith(
        "rows.jsonl:7: field 'tokens': cost_usd needs prompt and completion tokens apart "
        "(they are priced differently) and the row has only a total (420); record tokens as "
        '{"prompt": ..., "completion": ...}'
    )


def test_a_row_with_no_model_and_an_unpriced_system_errors() -> None:
    with pytest.raises(RowError) as raised:
        _measure(_row(tokens={"prompt": 1, "completion": 1}, system="large"))
    assert str(raised.value) == (
        "rows.jsonl:7: field 'tokens': cost_usd cannot tell which model made this call: add a "
        '"model" field to the row (or "model" to each call of tokens), or price its system '
        "'large' in [settings.prices]"
    )


def test_without_prices_every_row_says_where_to_add_them() -> None:
    with pytest.raises(RowError, match=r"needs \[settings.prices\] in thresholds.toml"):
        _measure(_row(tokens={"prompt": 1, "completion": 1}, model="gpt-4o"), Prices())


def test_the_signature_holds_the_price_of_each_model_used() -> None:
    assert price_signature(["gpt-4o"], PRICES) == {
        "cost_usd.price[gpt-4o]": {"prompt": 2.5, "completion": 10.0}
    }


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0, "$0"),
        (0.00027, "$0.000270"),
        (0.0123, "$0.0123"),
        (0.5, "$0.500"),
        (1.5, "$1.50"),
        (1234.567, "$1,234.57"),
    ],
)
def test_dollars_to_three_significant_digits(value: float, shown: str) -> None:
    assert dollars(value) == shown


_CALL = st.fixed_dictionaries(
    {
        "prompt_tokens": st.integers(0, 10**7),
        "completion_tokens": st.integers(0, 10**7),
        "model": st.sampled_from(["gpt-4o-mini", "gpt-4o"]),
    }
)


@settings(max_examples=50, deadline=None)
@given(st.lists(_CALL, max_size=6))
def test_cost_is_the_sum_of_its_calls_whatever_their_order(calls: list[dict[str, Any]]) -> None:
    cost = _measure(_row(tokens=calls)).values["cost_usd"]
    expected = sum(
        call["prompt_tokens"] * PRICES.by_name[call["model"]].prompt / 1e6
        + call["completion_tokens"] * PRICES.by_name[call["model"]].completion / 1e6
        for call in calls
    )
    assert math.isfinite(cost)
    assert cost >= 0
    assert cost == pytest.approx(expected, rel=1e-12, abs=1e-18)
    assert _measure(_row(tokens=calls[::-1])).values["cost_usd"] == cost


def test_a_model_is_a_non_empty_string_on_the_row_and_on_a_call() -> None:
    from pytest_ragmetrics.data.fields import validate_fields

    assert validate_fields({"model": "gpt-4o"}) == []
    (problem,) = validate_fields({"model": " "})
    assert (problem.field, problem.message) == (
        "model",
        "expected the model's name, a non-empty string, got ' '",
    )
    calls = [{"prompt_tokens": 1, "completion_tokens": 1, "model": 4}]
    (problem,) = validate_fields({"tokens": calls})
    assert (problem.field, problem.message) == (
        "tokens",
        "call 0: 'model': expected the model's name, a non-empty string, got 4",
    )
