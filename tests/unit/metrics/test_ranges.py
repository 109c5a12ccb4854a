"""metrics.ranges: every per-row value the catalog records has a range, as its
definition states it."""

from __future__ import annotations

import math

from pytest_ragmetrics.metrics.catalog import BUILTIN_FIXTURES, FIXTURES
from pytest_ragmetrics.metrics.ranges import RANGES, value_range


def test_every_recorded_per_row_metric_has_a_range() -> None:
    recorded = {info.name for name in BUILTIN_FIXTURES for info in FIXTURES[name].records}
    assert sorted(recorded - set(RANGES)) == []


def test_the_table_names_only_recorded_metrics() -> None:
    recorded = {info.name for name in BUILTIN_FIXTURES for info in FIXTURES[name].records}
    assert sorted(set(RANGES) - recorded) == []


def test_the_ranges_of_the_definitions() -> None:
    # docs/metrics.md#aggregates: percent-scaled suites keep 0-100, everything else 0-1,
    # except counts, tokens, milliseconds, distances and answer_correctness (1-5).
    assert RANGES["f1"] == (0.0, 1.0)
    assert RANGES["bleu"] == RANGES["chrf"] == RANGES["trust"] == (0.0, 100.0)
    assert RANGES["answer_correctness"] == (1.0, 5.0)
    assert RANGES["tokens"] == (0.0, math.inf)
    assert RANGES["rounds"] == (1.0, math.inf)  # "an integer >= 1"
    # docs/metrics.md#semantic_similarity: a cosine; the dot product and the distance of
    # the model's own vectors, bounded only for a model that normalises them.
    assert RANGES["semantic_similarity"] == (-1.0, 1.0)
    assert RANGES["dot_similarity"] == (-math.inf, math.inf)
    assert RANGES["euclidean_distance"] == (0.0, math.inf)


def test_a_cutoff_reads_the_metric_s_own_range() -> None:
    assert value_range("ndcg@10") == value_range("ndcg") == (-math.inf, 1.0)  # negative gains
    assert value_range("iprec_at_recall@0.5") == (0.0, 1.0)
    assert value_range("my_own_metric") is None
