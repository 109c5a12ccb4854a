"""Every metric the plugin knows, collected from the family modules' declarations.

A family module declares each of its metric fixtures once, as a ``MetricSpec`` in its
``SPECS``, next to the math; the names a run derives without a fixture (dataset-level
statistics, the judge's accounting, the comparison with a baseline) are ``MetricInfo``
declarations. Everything else is generated from here: the metric fixtures
(``pytest_ragmetrics.plugin.fixtures``), the names a gate may use
(``pytest_ragmetrics.metrics.registry.METRICS``), the corpus statistics
(``CORPUS_STATS``) and the signatures of the numbers (``SIGNATURES``). Adding a metric is
adding a ``MetricSpec`` to its family's ``SPECS``.
"""

from __future__ import annotations

from pytest_ragmetrics.metrics.abstention import SPECS as ABSTENTION
from pytest_ragmetrics.metrics.anchors import SPECS as ANCHORS
from pytest_ragmetrics.metrics.answer import SPECS as ANSWER
from pytest_ragmetrics.metrics.base import MetricInfo, MetricSpec, Reduce, Signatures
from pytest_ragmetrics.metrics.chrf import SPECS as CHRF
from pytest_ragmetrics.metrics.classification import SPECS as CLASSIFICATION
from pytest_ragmetrics.metrics.cost import SPECS as COST
from pytest_ragmetrics.metrics.grounding import SPECS as GROUNDING
from pytest_ragmetrics.metrics.judge import DERIVED as JUDGE_DERIVED
from pytest_ragmetrics.metrics.judge import SPECS as JUDGE
from pytest_ragmetrics.metrics.repeats import SPECS as REPEATS
from pytest_ragmetrics.metrics.retrieval import SPECS as RETRIEVAL
from pytest_ragmetrics.metrics.short import SPECS as SHORT
from pytest_ragmetrics.metrics.space.embedding import EMBEDDING_SPACE
from pytest_ragmetrics.metrics.space.sources import SOURCES
from pytest_ragmetrics.metrics.space.ux import UX
from pytest_ragmetrics.metrics.text import SPECS as TEXT
from pytest_ragmetrics.metrics.trust.metric import SPECS as TRUST

# The order is the order of `pytest --fixtures` and of the registry.
SPECS: tuple[MetricSpec, ...] = (
    *ANSWER,
    *ABSTENTION,
    *COST,
    *GROUNDING,
    *RETRIEVAL,
    *TEXT,
    *CHRF,
    *REPEATS,
    *CLASSIFICATION,
    *TRUST,
    *SHORT,
    *ANCHORS,
    *JUDGE,
)

# A compared system's aggregates relative to the reference system
# (pytest_ragmetrics.results.compare, which lies above this package and so cannot be
# imported here: its statistics are declared here and read there).
VS_BASELINE = "vs_baseline"
VS_BASELINE_STATS = (
    "tokens_mean_ratio",
    "tokens_p50_ratio",
    "overlap_mean_delta",
    "f1_mean_delta",
    "f1_short_mean_delta",
)
# How this run's rows pair with the stored baseline's (pytest_ragmetrics.gates.stored).
BASELINE_PAIRING_STATS = ("coverage", "shared", "added", "removed", "changed")

# Metrics a run derives without a metric fixture of their own.
DERIVED: tuple[MetricInfo, ...] = (
    EMBEDDING_SPACE,
    UX,
    SOURCES,
    MetricInfo(
        VS_BASELINE,
        "a compared system's ratios and differences to the reference system",
        dataset=VS_BASELINE_STATS,
    ),
    MetricInfo(
        "baseline",
        "this run's rows paired by id with the stored baseline's: shared / stored rows",
        dataset=BASELINE_PAIRING_STATS,
    ),
    *JUDGE_DERIVED,
    MetricInfo("errors", "the row errored (bad data or a metric input missing)", binary=True),
)


def _fixtures() -> dict[str, MetricSpec]:
    fixtures: dict[str, MetricSpec] = {}
    for spec in SPECS:
        if spec.fixture in fixtures:
            raise ValueError(f"metric fixture {spec.fixture!r} is declared twice")
        fixtures[spec.fixture] = spec
    return fixtures


def _metrics() -> dict[str, MetricInfo]:
    metrics: dict[str, MetricInfo] = {}
    for info in (*(info for spec in SPECS for info in spec.records), *DERIVED):
        if info.name in metrics:
            raise ValueError(f"metric {info.name!r} is declared twice")
        metrics[info.name] = info
    return metrics


FIXTURES: dict[str, MetricSpec] = _fixtures()
METRICS: dict[str, MetricInfo] = _metrics()
# metric -> (the breakdown holding its sufficient statistics, how to reduce their sums)
CORPUS_STATS: dict[str, tuple[str, Reduce]] = {
    spec.primary: (spec.corpus.breakdown, spec.corpus.reduce)
    for spec in SPECS
    if spec.corpus is not None
}
# metric -> (the breakdown its signatures read, or None, how to sign its numbers)
SIGNATURES: dict[str, tuple[str | None, Signatures]] = {
    spec.primary: (spec.corpus.breakdown if spec.corpus else None, spec.signatures)
    for spec in SPECS
    if spec.signatures is not None
}
# The dataset-level metric fixtures (they take `rows`), named like the metric they record.
DATASET_FIXTURES = (EMBEDDING_SPACE.name, UX.name, SOURCES.name)


def close_fixtures(name: str) -> tuple[str, ...]:
    """The metric fixtures ``name`` is one edit away from: a letter missing, added or
    replaced, or two neighbouring letters swapped (optimal string alignment distance 1).
    Empty for a known fixture's own name and for a name no fixture is close to."""
    from rapidfuzz.distance import OSA

    return tuple(
        known
        for known in (*FIXTURES, *DATASET_FIXTURES)
        if known != name and OSA.distance(name, known) == 1
    )
