"""The gate rule grammar."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.config.rules import RuleError, parse_rule


@pytest.mark.parametrize(
    ("text", "value", "baseline", "bound", "holds"),
    [
        ("== 0", 0.0, None, 0.0, True),
        ("== 0", 1.0, None, 0.0, False),
        ("== 0.3", 0.1 + 0.2, None, 0.3, True),  # float rounding is tolerated
        ("<= 2500", 2500.0, None, 2500.0, True),
        ("<= 2500", 2500.5, None, 2500.0, False),
        (">= 0.5", 0.49, None, 0.5, False),
        ("< 3", 3.0, None, 3.0, False),
        ("> -1", 0.0, None, -1.0, True),
        (">= baseline", 0.7, 0.7, 0.7, True),
        (">= baseline", 0.69, 0.7, 0.7, False),
        (">= baseline - 0.01", 0.695, 0.7, 0.69, True),
        ("<= baseline + 5", 104.0, 100.0, 105.0, True),
        ("<= 1.2x baseline", 540.0, 450.0, 540.0, True),
        ("<= 1.2x baseline", 541.0, 450.0, 540.0, False),
        ("<=1.2×baseline", 1.0, 1.0, 1.2, True),
        (">= stored_baseline", 0.69, 0.7, 0.7, False),
        (">= stored_baseline - 0.01", 0.695, 0.7, 0.69, True),
        ("<= 1.2x stored_baseline", 540.0, 450.0, 540.0, True),
    ],
)
def test_rules(text: str, value: float, baseline: float | None, bound: float, holds: bool) -> None:
    rule = parse_rule(text)
    assert rule.bound(baseline) == pytest.approx(bound)
    assert rule.holds(value, baseline) is holds
    assert rule.uses_baseline is (baseline is not None)


@pytest.mark.parametrize(
    "text",
    [
        "",
        ">=",
        "0.5",
        "=> 0.5",
        ">= baseline * 2",
        ">= 2 baseline",
        "<= 1.2x",
        ">= base",
        ">= stored",
        ">= stored baseline",
        ">= baseline_stored",
    ],
)
def test_malformed_rules_are_refused(text: str) -> None:
    with pytest.raises(RuleError, match="cannot read rule"):
        parse_rule(text)


@pytest.mark.parametrize("text", [">= 1e999", "<= 1e999x baseline", ">= baseline - 1e400"])
def test_a_number_no_float_holds_is_refused(text: str) -> None:
    # 1e999 reads as infinity: a bound no value could ever cross, a gate that never fails.
    with pytest.raises(RuleError, match="is not a finite number"):
        parse_rule(text)


def test_a_baseline_rule_needs_a_baseline() -> None:
    with pytest.raises(ValueError, match="needs a baseline"):
        parse_rule(">= baseline").bound(None)


def test_stored_baseline_names_the_file_in_every_eval() -> None:
    assert [parse_rule(t).stored for t in (">= baseline", "<= 2x baseline", "== 1")] == [
        False,
        False,
        False,
    ]
    assert parse_rule(">= stored_baseline").stored
    assert parse_rule("<= 1.2x stored_baseline").stored
    assert parse_rule(">= stored_baseline + 1").stored


def test_describe_bound() -> None:
    assert parse_rule("<= 1.2x stored_baseline").describe_bound(450) == (
        "540 (1.2 × stored_baseline 450)"
    )
    assert parse_rule("<= 1.2x baseline").describe_bound(450) == "540 (1.2 × baseline 450)"
    assert parse_rule(">= baseline - 0.01").describe_bound(0.7) == "0.69 (baseline 0.7 -0.01)"
    assert parse_rule("== 0").describe_bound() == "0"


numbers = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: round(x, 4))


@given(st.sampled_from(["==", "<=", ">=", "<", ">"]), numbers, numbers)
def test_constant_rules_agree_with_python_comparison(op: str, bound: float, value: float) -> None:
    rule = parse_rule(f"{op} {bound!r}")
    expected = {
        "==": value == pytest.approx(bound, rel=1e-9, abs=1e-9),
        "<=": value <= bound,
        ">=": value >= bound,
        "<": value < bound,
        ">": value > bound,
    }[op]
    assert rule.holds(value) is expected


@given(st.floats(min_value=0.01, max_value=100), numbers)
def test_factor_rules_scale_the_baseline(factor: float, baseline: float) -> None:
    rule = parse_rule(f"<= {factor!r}x baseline")
    assert rule.bound(baseline) == pytest.approx(factor * baseline)
