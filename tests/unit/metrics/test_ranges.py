"""Each metric's range is part of its declaration (``MetricInfo.range``): every value a
metric fixture records states the interval its definition gives it."""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType
from typing import Any

import pytest

from pytest_ragmetrics.metrics import catalog
from pytest_ragmetrics.metrics.base import (
    COSINE,
    COUNT,
    UNIT,
    Measured,
    MetricInfo,
    MetricSpec,
    Range,
)
from pytest_ragmetrics.metrics.catalog import FIXTURES, METRICS, SPECS
from pytest_ragmetrics.metrics.registry import value_range
from pytest_ragmetrics.metrics.values import MetricValueError, check_measured
from pytest_ragmetrics.testing.strategies import as_row


@pytest.mark.parametrize(
    "info", [info for spec in SPECS for info in spec.records], ids=lambda info: info.name
)
def test_a_recorded_metric_declares_a_range_its_kind_allows(info: MetricInfo) -> None:
    assert info.range is not None
    low, high = info.range
    assert low <= high
    if info.binary:
        assert info.range == UNIT


def test_a_fixture_recording_a_value_without_a_range_is_refused() -> None:
    with pytest.raises(ValueError, match="'mine': mine declare no range"):
        MetricSpec("mine", "", (MetricInfo("mine", "mine"),), (), lambda row, ctx: Measured({}, ""))


def test_the_ranges_of_the_definitions() -> None:
    # docs/metrics.md#aggregates: percent-scaled suites keep 0-100, everything else 0-1,
    # except counts, tokens, milliseconds, distances and answer_correctness (1-5).
    assert METRICS["f1"].range == (0.0, 1.0)
    assert METRICS["bleu"].range == METRICS["chrf"].range == METRICS["trust"].range == (0, 100)
    assert METRICS["answer_correctness"].range == (1.0, 5.0)
    assert METRICS["tokens"].range == (0.0, math.inf)
    assert METRICS["rounds"].range == (1.0, math.inf)  # "an integer >= 1"
    # docs/metrics.md#semantic_similarity: a cosine; the dot product and the distance of
    # the model's own vectors, bounded only for a model that normalises them.
    assert METRICS["semantic_similarity"].range == (-1.0, 1.0)
    assert METRICS["dot_similarity"].range == (-math.inf, math.inf)
    assert METRICS["euclidean_distance"].range == (0.0, math.inf)


def test_a_cutoff_reads_the_metric_s_own_range() -> None:
    assert value_range("ndcg@10") == value_range("ndcg") == (-math.inf, 1.0)  # negative gains
    assert value_range("iprec_at_recall@0.5") == (0.0, 1.0)
    assert value_range("my_own_metric") is None
    assert value_range("ux") is None  # dataset-level: its statistics are not row values


# -- every recorded value is checked against its declaration, on every path -------------


def _spec(kind: Any = "continuous", value_range: Range = UNIT) -> MetricSpec:
    info = MetricInfo("mine", "mine", kind=kind, range=value_range, cutoff="optional")
    return MetricSpec("mine", "", (info,), (), lambda row, ctx: Measured({}, ""))


@pytest.mark.parametrize(
    ("kind", "value_range", "value", "why"),
    [
        ("continuous", UNIT, 1.5, r"mine recorded 1\.5: outside its range \[0, 1\]"),
        ("continuous", UNIT, -1e-12, r"mine recorded -1e-12: outside its range \[0, 1\]"),
        ("continuous", COUNT, math.inf, "mine recorded inf: not finite"),
        ("continuous", COUNT, math.nan, "mine recorded nan: not finite"),
        ("binary", UNIT, 0.5, r"mine recorded 0\.5: a binary metric returns 0 or 1"),
        ("continuous", UNIT, "1", "mine recorded '1': not a real number"),
    ],
)
def test_a_value_its_declaration_refuses_is_an_error_naming_all(
    kind: Any, value_range: Range, value: Any, why: str
) -> None:
    spec = _spec(kind, value_range)
    with pytest.raises(MetricValueError, match=why) as raised:
        check_measured(spec, Measured({"mine": value}, ""))
    # where it is declared: a built-in's family module (here, this test module)
    assert "its declaration (test_ranges.py) states" in str(raised.value)


@pytest.mark.parametrize(
    ("kind", "value_range", "value"),
    [
        ("continuous", UNIT, 0.0),
        ("continuous", UNIT, 1.0),  # a closed interval: both ends belong to it
        ("continuous", COUNT, 1e300),
        ("continuous", COSINE, -1.0),
        ("binary", UNIT, 1.0),
        ("binary", UNIT, 0),  # an int, as a user's metric may return
        ("continuous", UNIT, True),
    ],
)
def test_a_value_within_its_declaration_passes(kind: Any, value_range: Range, value: Any) -> None:
    check_measured(_spec(kind, value_range), Measured({"mine": value}, ""))


def test_a_cutoff_is_checked_by_its_metric_and_an_undeclared_name_is_refused() -> None:
    spec = _spec()
    check_measured(spec, Measured({"mine@10": 0.5}, ""))
    with pytest.raises(MetricValueError, match=r"mine@10 recorded 2\.0: outside its range"):
        check_measured(spec, Measured({"mine@10": 2.0}, ""))
    with pytest.raises(MetricValueError, match="mine recorded 'other', which its declaration"):
        check_measured(spec, Measured({"other": 0.5}, ""))


def test_a_user_metric_names_its_own_declaration() -> None:
    spec = dataclasses.replace(_spec(), origin="conftest.py:7")
    with pytest.raises(MetricValueError, match=r"its declaration \(conftest\.py:7\) states"):
        check_measured(spec, Measured({"mine": 2.0}, ""))


def test_the_packaged_model_s_cosine_of_a_text_with_itself_is_within_its_range() -> None:
    # Real float32 vectors, normalised by the model: their float64 cosine with themselves
    # rounds above 1 for many texts (docs/metrics.md#semantic_similarity), and the
    # metric's definition clamps it to 1, so the recorded value passes the check.
    from pytest_ragmetrics.testing import measure

    texts = ["The Eiffel Tower was built in 1889.", "Paris", "the router resets after update"]
    for text in texts:
        row = as_row({"answer": text, "gold": text})
        measured = measure("semantic_similarity", row)
        assert measured.values["semantic_similarity"] == 1.0
        check_measured(FIXTURES["semantic_similarity"], measured)


ROWS_JSONL = '{"id": "r1", "question": "q", "answer": "a", "tokens": 5}\n'
EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl"{bulk})


def test_tokens(row, tokens):
    tokens(row)
"""


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_a_built_in_value_outside_its_range_errors_its_row_in_a_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    spec = FIXTURES["tokens"]

    def negative(row: Any, ctx: Any) -> Measured:
        return Measured({"tokens": -1.0}, "a broken count")

    negative.__module__ = spec.compute.__module__  # a bug in the built-in's own module
    # the run's catalog is built from the built-in table when the run is configured
    broken = {**FIXTURES, "tokens": dataclasses.replace(spec, compute=negative)}
    monkeypatch.setattr(catalog, "FIXTURES", MappingProxyType(broken))
    pytester.makefile(".jsonl", rows=ROWS_JSONL)
    pytester.makepyfile(test_eval=EVAL.format(bulk=", batch_size=2" if mode == "bulk" else ""))
    result = pytester.runpytest(f"--ragmetrics-mode={mode}", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*rows.jsonl:1*tokens recorded -1.0: outside its range [[]0, inf[]]; its "
            "declaration (pytest_ragmetrics/metrics/cost.py) states the range [[]0, inf[]]*"
        ]
    )
