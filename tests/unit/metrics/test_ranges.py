"""Each metric's range is part of its declaration (``MetricInfo.range``): every value a
metric fixture records states the interval its definition gives it."""

from __future__ import annotations

import math

import pytest

from pytest_ragmetrics.metrics.base import Measured, MetricInfo, MetricSpec
from pytest_ragmetrics.metrics.catalog import BUILTIN_FIXTURES, FIXTURES, METRICS
from pytest_ragmetrics.metrics.registry import value_range


def test_every_recorded_per_row_metric_declares_a_range() -> None:
    recorded = [info for name in BUILTIN_FIXTURES for info in FIXTURES[name].records]
    assert [info.name for info in recorded if info.range is None] == []


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
