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

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pytest_ragmetrics.metrics.abstention import SPECS as ABSTENTION
from pytest_ragmetrics.metrics.anchors import SPECS as ANCHORS
from pytest_ragmetrics.metrics.answer import SPECS as ANSWER
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Column,
    MetricInfo,
    MetricSpec,
    Presentation,
    Reduce,
    Signatures,
    Versus,
)
from pytest_ragmetrics.metrics.bleu import SPECS as BLEU
from pytest_ragmetrics.metrics.chrf import SPECS as CHRF
from pytest_ragmetrics.metrics.classification import SPECS as CLASSIFICATION
from pytest_ragmetrics.metrics.cost import SPECS as COST
from pytest_ragmetrics.metrics.custom import DeclarationError
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
    *BLEU,
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
# imported here: its statistics are declared here and read there). Each per-row metric
# declares its own (``Presentation.versus``): ``<metric>_<stat>_<ratio|delta>``.
VS_BASELINE = "vs_baseline"
# How this run's rows pair with the stored baseline's (pytest_ragmetrics.gates.stored);
# also the name of an eval's stored-baseline entry in the report document.
BASELINE = "baseline"
BASELINE_PAIRING_STATS = ("coverage", "shared", "added", "removed", "changed")
# 1 for a row that errored; its sum is an eval's count of errored rows (the report
# document's ``errors``).
ERRORS = "errors"


def versus_stat(metric: str, versus: Versus) -> str:
    """The name of a ``vs_baseline`` statistic: ``tokens_mean_ratio``."""
    return f"{metric}_{versus.stat}_{versus.how}"


# (statistic, metric, what of the metric), in the metrics' declared order.
VERSUS: tuple[tuple[str, str, Versus], ...] = tuple(
    (versus_stat(info.name, versus), info.name, versus)
    for versus, info in sorted(
        (
            (versus, info)
            for spec in SPECS
            for info in spec.records
            for versus in info.presentation.versus
        ),
        key=lambda pair: pair[0].priority,
    )
)
VS_BASELINE_STATS = tuple(name for name, _, _ in VERSUS)

# Metrics a run derives without a metric fixture of their own.
DERIVED: tuple[MetricInfo, ...] = (
    EMBEDDING_SPACE,
    UX,
    SOURCES,
    MetricInfo(
        VS_BASELINE,
        "a compared system's ratios and differences to the reference system",
        dataset=VS_BASELINE_STATS,
        presentation=Presentation(formats={name: how.how for name, _, how in VERSUS}),
    ),
    MetricInfo(
        BASELINE,
        "this run's rows paired by id with the stored baseline's: shared / stored rows",
        dataset=BASELINE_PAIRING_STATS,
    ),
    *JUDGE_DERIVED,
    MetricInfo(
        ERRORS,
        "the row errored (bad data or a metric input missing)",
        kind="binary",
        range=UNIT,
        # a row's status says it: no column of its own in the rows table, not drawn
        presentation=Presentation(
            label="Errors",
            columns=(Column("appendix", 40, "sum", format="count"),),
            row_value=False,
        ),
    ),
    MetricInfo(
        "unjudged",
        "the row's proxy relevance label is NULL: skipped as not judgeable, never scored",
        kind="binary",
        range=UNIT,
    ),
)
# Recorded for every row of a dataset with a proxy relevance label (SqlDataset's
# proxy_relevant): 1 for a row that cannot be judged, which is skipped, not scored 0.
UNJUDGED = "unjudged"


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


# -- metrics declared in user code (pytest_ragmetrics.metric) ---------------------------
#
# A declaration lands in FIXTURES and METRICS when the module declaring it is imported, so
# that thresholds.toml, read when the run is configured, can gate it. A run *claims* the
# declarations made before it was configured (``claim``) and *releases* them when it ends
# (``release``): a test process that runs pytest inside itself (pytester) starts each
# inner run from the built-in catalog, and gets back its own declarations afterwards.


@dataclass(frozen=True)
class Declared:
    """A metric declared in user code: what a gate may name of it, its per-row fixture's
    declaration (``None`` for a dataset-level metric, whose fixture takes ``rows``),
    where it was declared (what tells a module imported twice from two metrics of the
    same name), and the version its author gave it (part of a baseline's signature)."""

    info: MetricInfo
    spec: MetricSpec | None
    origin: str
    version: str | None = None

    @property
    def name(self) -> str:
        return self.info.name

    def install(self) -> None:
        METRICS[self.name] = self.info
        if self.spec is not None:
            FIXTURES[self.name] = self.spec
            if self.spec.corpus is not None:
                CORPUS_STATS[self.name] = (self.spec.corpus.breakdown, self.spec.corpus.reduce)


BUILTIN_FIXTURES: frozenset[str] = frozenset(FIXTURES)
BUILTIN_METRICS: frozenset[str] = frozenset(METRICS)
_declared: dict[str, Declared] = {}  # by name, in the catalog now
_claims: dict[str, object] = {}  # name -> the run that claimed it
_hidden: dict[int, list[tuple[Declared, object]]] = {}  # run -> other runs' declarations


def _builtin_place(name: str) -> str:
    """Where a built-in name is declared, for a clash message."""
    spec = FIXTURES.get(name) if name in BUILTIN_FIXTURES else None
    if spec is None:
        spec = next((s for s in SPECS if any(info.name == name for info in s.records)), None)
    if spec is None:
        return "pytest_ragmetrics/metrics/catalog.py (a metric the plugin derives)"
    module = spec.compute.__module__.replace(".", "/")
    return f"{module}.py (the built-in `{spec.fixture}` fixture)"


def declare_custom(declared: Declared) -> None:
    """Add a user's metric to the catalog; ``DeclarationError`` naming both places when its name
    is a built-in metric's or another declaration's. The same declaration imported again
    (same name and origin) replaces itself."""
    name = declared.name
    if name in BUILTIN_FIXTURES or name in BUILTIN_METRICS or name in DATASET_FIXTURES:
        raise DeclarationError(
            f"{declared.origin}: metric {name!r} is already declared by pytest-ragmetrics in "
            f"{_builtin_place(name)}: give yours another name"
        )
    other = _declared.get(name)
    if other is not None and other.origin != declared.origin:
        raise DeclarationError(
            f"{declared.origin}: metric {name!r} is already declared at {other.origin}: "
            "declare it once, or give one of them another name"
        )
    _declared[name] = declared
    declared.install()


def custom_metrics() -> dict[str, Declared]:
    """The user's metrics in the catalog now, by name."""
    return dict(_declared)


def custom_metric(name: str) -> Declared | None:
    """The user's metric ``name`` in the catalog now, if there is one (without copying
    the catalog, as every metric fixture of every row asks)."""
    return _declared.get(name)


def _remove(name: str) -> Declared:
    FIXTURES.pop(name, None)
    METRICS.pop(name, None)
    CORPUS_STATS.pop(name, None)
    _claims.pop(name, None)
    return _declared.pop(name)


def begin_run(run: object) -> None:
    """A run starts importing its conftest files: other runs' claimed declarations leave
    the catalog until it ends (unclaimed ones, from ``-p`` plugins, stay: they are its)."""
    hidden = [(_declared[name], owner) for name, owner in list(_claims.items()) if owner is not run]
    for declared, _ in hidden:
        _remove(declared.name)
    _hidden[id(run)] = hidden


def claim(run: object) -> tuple[str, ...]:
    """The run has read its thresholds: every unclaimed declaration is its own."""
    for name in _declared:
        _claims.setdefault(name, run)
    return tuple(name for name, owner in _claims.items() if owner is run)


def release(run: object) -> None:
    """The run ended: its declarations (and any made too late to be claimed) leave the
    catalog; the declarations ``begin_run`` hid come back."""
    for name in [name for name in _declared if _claims.get(name, run) is run]:
        _remove(name)
    for declared, owner in _hidden.pop(id(run), []):
        _declared[declared.name] = declared
        declared.install()
        _claims[declared.name] = owner


@contextlib.contextmanager
def lent(declarations: Sequence[Declared]) -> Iterator[None]:
    """The catalog holds ``declarations``, and no other metric of the user's, while the
    block runs; afterwards it is as it was. A Ray worker scores a job's rows so: it imports
    no conftest.py, so the job brings the declarations its test uses, and the worker
    process, which Ray reuses for the next job (another project's, whose metric may have
    the same name and other code), keeps none of them."""
    before = [(_declared[name], _claims.get(name)) for name in list(_declared)]
    for declared, _ in before:
        _remove(declared.name)
    try:
        for declared in declarations:
            declare_custom(declared)
        yield
    finally:
        for name in list(_declared):
            _remove(name)
        for declared, owner in before:
            _declared[declared.name] = declared
            declared.install()
            if owner is not None:
                _claims[declared.name] = owner
