"""Fuzzing the rules parser and the thresholds loader: whatever a user writes, the only
error that escapes is the documented one (``RuleError``, ``ThresholdsError``), and a rule
that parses can always be checked."""

from __future__ import annotations

import math
import string
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.rules import Rule, RuleError, parse_rule
from pytest_ragmetrics.config.thresholds import Thresholds, ThresholdsError, load_thresholds

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(min_value=0, max_value=10**400).map(str),
    st.sampled_from(["1e999", "1e-999", ".5", "5.", "0", "1E+3", "nan", "inf"]),
)
RULE_TEXT = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda op, bound: f"{op} {bound}",
        st.sampled_from(["==", "<=", ">=", "<", ">", "=>", "="]),
        st.one_of(
            NUMBERS,
            st.builds(lambda n: f"{n}x baseline", NUMBERS),
            st.builds(lambda sign, n: f"baseline {sign} {n}", st.sampled_from("+-*"), NUMBERS),
            st.sampled_from(["baseline", "stored_baseline", "base", "baseline -"]),
        ),
    ),
)


@FUZZ
@given(RULE_TEXT, st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_a_rule_parses_into_a_finite_check_or_is_refused(text: str, value: float) -> None:
    try:
        rule = parse_rule(text)
    except RuleError:
        return
    assert isinstance(rule, Rule)
    for number in (rule.constant, rule.factor, rule.offset):
        assert number is None or math.isfinite(number)
    baseline = None if rule.constant is not None else 1.0
    assert rule.holds(value, baseline) in (True, False)


KEYS = st.one_of(
    st.sampled_from(["f1.mean", "tokens.p95", "errors.sum", "trust_score", "baseline.coverage"]),
    st.text(string.ascii_letters + "._@", max_size=12),
)
VALUES = st.recursive(
    st.one_of(
        st.booleans(),
        st.integers(min_value=-(10**20), max_value=10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        RULE_TEXT,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if (math.isinf(value))
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    assert isinstance(value, dict)
    items = (f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items())
    return "{" + ", ".join(items) + "}"


TABLES = st.dictionaries(
    st.sampled_from(["settings", "gates", "judge", "gate"]),
    st.dictionaries(
        st.one_of(
            KEYS,
            st.sampled_from(
                ["tau_sim", "citation_format", "row_errors", "idk_patterns", "base_url"]
            ),
        ),
        VALUES,
        max_size=4,
    ),
    max_size=3,
)


def _load(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "thresholds.toml"
        path.write_bytes(content)
        try:
            loaded: Thresholds | str = load_thresholds(path)
        except ThresholdsError as error:
            loaded = str(error)
        assert isinstance(loaded, Thresholds) or loaded.startswith(f"{path}: ")


@FUZZ
@given(TABLES)
def test_any_thresholds_document_loads_or_names_its_mistake(tables: dict[str, dict]) -> None:
    text = "".join(
        f"[{table}]\n" + "".join(f"{_toml_value(k)} = {_toml_value(v)}\n" for k, v in body.items())
        for table, body in tables.items()
    )
    _load(text.encode("utf-8"))


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_load_or_name_the_mistake(content: bytes) -> None:
    _load(content)
