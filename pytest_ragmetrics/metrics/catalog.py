"""Every metric the plugin knows, collected from the family modules' declarations.

A family module declares each of its metric fixtures once, as a ``MetricSpec`` in its
``SPECS``, next to the math; the names a run derives without a fixture (dataset-level
statistics, the judge's accounting, the comparison with a baseline) are ``MetricInfo``
declarations. Everything else is generated from here: the metric fixtures
(``pytest_ragmetrics.plugin.fixtures``), the names a gate may use
(``pytest_ragmetrics.metrics.registry``), the corpus statistics (``CORPUS_STATS``) and
the signatures of the numbers (``SIGNATURES``). Adding a metric is adding a
``MetricSpec`` to its family's ``SPECS``.

The module-level tables (``FIXTURES``, ``METRICS``, ``CORPUS_STATS``) hold the built-in
metrics only, and never change. The metrics of a run are a ``Catalog``: the built-in
ones plus the metrics the user's code declared (``pytest_ragmetrics.metric``) in the
modules that run loaded before it read thresholds.toml. The plugin builds one per run
and keeps it in the run's config (``pytest_ragmetrics.plugin.catalog``); a Ray job
carries its declarations (``Catalog.snapshot``) to the workers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

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
from pytest_ragmetrics.metrics.setting import SettingsTable
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


def _fixtures() -> Mapping[str, MetricSpec]:
    fixtures: dict[str, MetricSpec] = {}
    for spec in SPECS:
        if spec.fixture in fixtures:
            raise ValueError(f"metric fixture {spec.fixture!r} is declared twice")
        fixtures[spec.fixture] = spec
    return MappingProxyType(fixtures)


def _metrics() -> Mapping[str, MetricInfo]:
    metrics: dict[str, MetricInfo] = {}
    for info in (*(info for spec in SPECS for info in spec.records), *DERIVED):
        if info.name in metrics:
            raise ValueError(f"metric {info.name!r} is declared twice")
        metrics[info.name] = info
    return MappingProxyType(metrics)


# The built-in metrics (read-only): a run's own are its ``Catalog``'s.
FIXTURES: Mapping[str, MetricSpec] = _fixtures()
METRICS: Mapping[str, MetricInfo] = _metrics()
# metric -> (the breakdown holding its sufficient statistics, how to reduce their sums)
CORPUS_STATS: Mapping[str, tuple[str, Reduce]] = MappingProxyType(
    {
        spec.primary: (spec.corpus.breakdown, spec.corpus.reduce)
        for spec in SPECS
        if spec.corpus is not None
    }
)
# metric -> (the breakdown its signatures read, or None, how to sign its numbers)
SIGNATURES: Mapping[str, tuple[str | None, Signatures]] = MappingProxyType(
    {
        spec.primary: (spec.corpus.breakdown if spec.corpus else None, spec.signatures)
        for spec in SPECS
        if spec.signatures is not None
    }
)
# The dataset-level metric fixtures (they take `rows`), named like the metric they record.
DATASET_FIXTURES = (EMBEDDING_SPACE.name, UX.name, SOURCES.name)
# The names of FIXTURES and METRICS, from when those tables also held the user's metrics:
# read the tables instead (tests/unit/metrics/test_properties.py and test_ranges.py still
# import BUILTIN_FIXTURES).
BUILTIN_FIXTURES: frozenset[str] = frozenset(FIXTURES)
BUILTIN_METRICS: frozenset[str] = frozenset(METRICS)


# -- metrics declared in user code (pytest_ragmetrics.metric) ---------------------------


@dataclass(frozen=True)
class Declared:
    """A metric declared in user code: what a gate may name of it, its per-row fixture's
    declaration (``None`` for a dataset-level metric, whose fixture takes ``rows``),
    where it was declared (what tells a module imported twice from two metrics of the
    same name), the version its author gave it (part of a baseline's signature), and a
    dataset-level metric's settings table (a per-row metric's is its ``spec``'s)."""

    info: MetricInfo
    spec: MetricSpec | None
    origin: str
    version: str | None = None
    dataset_settings: SettingsTable[Any] | None = None

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def settings(self) -> SettingsTable[Any] | None:
        """Its ``[settings.<name>]`` table, of either kind of metric (``None``: none)."""
        return self.spec.settings if self.spec is not None else self.dataset_settings


# The attribute under which the fixture ``pytest_ragmetrics.metric`` returns (its function
# and its fixture definition) carries the metric's ``Declared``.
DECLARATION_MARK = "_ragmetrics_declared"


def declaration_of(value: object) -> Declared | None:
    """The declaration a module attribute or a fixture function carries, if any. Read
    from the object's own ``__dict__``, past any ``__getattr__`` or ``__getattribute__``
    of its class: scanning a module's attributes runs none of their code."""
    try:
        own = object.__getattribute__(value, "__dict__")
    except AttributeError:  # an object without a __dict__ carries nothing
        return None
    found = own.get(DECLARATION_MARK) if isinstance(own, dict) else None
    return found if isinstance(found, Declared) else None


def declarations_in(namespace: Mapping[str, object]) -> list[Declared]:
    """The declarations among the values of ``namespace`` (a module's), in its order."""
    return [found for value in list(namespace.values()) if (found := declaration_of(value))]


def _builtin_place(name: str) -> str:
    """Where a built-in name is declared, for a clash message."""
    spec = FIXTURES.get(name)
    if spec is None:
        spec = next((s for s in SPECS if any(info.name == name for info in s.records)), None)
    if spec is None:
        return "pytest_ragmetrics/metrics/catalog.py (a metric the plugin derives)"
    module = spec.compute.__module__.replace(".", "/")
    return f"{module}.py (the built-in `{spec.fixture}` fixture)"


def _builtin_tables() -> Mapping[str, str]:
    """The built-in settings tables by name, each with the module of its first metric."""
    tables: dict[str, str] = {}
    for spec in SPECS:
        if spec.settings is not None:
            tables.setdefault(spec.settings.name, spec.declared_at)
    return MappingProxyType(tables)


# A table of the user's under one of these names would never be read: the run reads the
# built-in table of that name (``config.thresholds.declared_tables`` keeps the first).
BUILTIN_TABLES: Mapping[str, str] = _builtin_tables()


def refuse_builtin_name(declared: Declared) -> None:
    """``DeclarationError`` when ``declared`` takes the name of a built-in metric, or
    declares a settings table under the name of a built-in one."""
    name = declared.name
    if name in FIXTURES or name in METRICS or name in DATASET_FIXTURES:
        raise DeclarationError(
            f"{declared.origin}: metric {name!r} is already declared by pytest-ragmetrics in "
            f"{_builtin_place(name)}: give yours another name"
        )
    table = declared.settings
    if table is not None and table.name in BUILTIN_TABLES:
        raise DeclarationError(
            f"{declared.origin}: metric {name!r} declares settings, and the settings table "
            f"{table.name!r} is pytest-ragmetrics's own ({BUILTIN_TABLES[table.name]}), so "
            "yours would never be read: give the metric another name"
        )


def refuse_clash(declared: Declared, other: Declared | None) -> None:
    """``DeclarationError`` naming both places when ``other`` is another declaration of
    ``declared``'s name; the same declaration met again (same name and origin: its module
    imported twice, or found in two modules) is no clash."""
    if other is not None and other.origin != declared.origin:
        raise DeclarationError(
            f"{declared.origin}: metric {declared.name!r} is already declared at "
            f"{other.origin}: declare it once, or give one of them another name"
        )


class Catalog:
    """The metrics one run knows: the built-in ones and ``declarations``, the metrics the
    user's code declared in the modules the run loaded before it read thresholds.toml.
    Read-only once built; ``DeclarationError`` naming both places when a declaration
    takes a built-in name or another declaration's."""

    __slots__ = ("_requirements", "corpus_stats", "declared", "fixtures", "metrics")

    def __init__(self, declarations: Iterable[Declared] = ()) -> None:
        # What each test's metric fixtures need of a row, worked out once (``requirements``).
        self._requirements: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
        declared: dict[str, Declared] = {}
        for declaration in declarations:
            refuse_builtin_name(declaration)
            refuse_clash(declaration, declared.get(declaration.name))
            declared[declaration.name] = declaration
        specs = {name: d.spec for name, d in declared.items() if d.spec is not None}
        self.declared: Mapping[str, Declared] = MappingProxyType(declared)
        self.fixtures: Mapping[str, MetricSpec] = MappingProxyType({**FIXTURES, **specs})
        self.metrics: Mapping[str, MetricInfo] = MappingProxyType(
            {**METRICS, **{name: d.info for name, d in declared.items()}}
        )
        self.corpus_stats: Mapping[str, tuple[str, Reduce]] = MappingProxyType(
            {
                **CORPUS_STATS,
                **{
                    name: (spec.corpus.breakdown, spec.corpus.reduce)
                    for name, spec in specs.items()
                    if spec.corpus is not None
                },
            }
        )

    def requirements(self, fixture_names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """The row fields the metric fixtures ``fixture_names`` need, each with the names
        of those that need it (``"em, f1"``), in the order they are first needed: the same
        for every row of a test, so worked out once per catalog and test."""
        found = self._requirements.get(fixture_names)
        if found is None:
            needed: dict[str, list[str]] = {}
            for name in fixture_names:
                spec = self.fixtures.get(name)
                for field_name in spec.requires if spec else ():
                    needed.setdefault(field_name, []).append(name)
            found = tuple((field_name, ", ".join(users)) for field_name, users in needed.items())
            self._requirements[fixture_names] = found
        return found

    def __repr__(self) -> str:
        return f"<Catalog: built-in metrics and {sorted(self.declared) or 'no others'}>"

    def snapshot(self) -> tuple[Declared, ...]:
        """The user's declarations, from which ``Catalog(snapshot)`` builds this catalog
        again (in a Ray worker, say)."""
        return tuple(self.declared.values())

    def close_fixtures(self, name: str) -> tuple[str, ...]:
        """The metric fixtures ``name`` is one edit away from: a letter missing, added or
        replaced, or two neighbouring letters swapped (optimal string alignment distance
        1). Empty for a known fixture's own name and for a name no fixture is close to."""
        from rapidfuzz.distance import OSA

        return tuple(
            known
            for known in (*self.fixtures, *DATASET_FIXTURES)
            if known != name and OSA.distance(name, known) == 1
        )


BUILTINS = Catalog()  # the catalog of a run that declares no metric of its own

# The catalog lookups that are not handed one read: the run's, from its configuration to
# its end (``pytest_ragmetrics.plugin.catalog``), a Ray job's on a worker, else BUILTINS.
_IN_FORCE: ContextVar[Catalog] = ContextVar("ragmetrics_catalog", default=BUILTINS)


def in_force() -> Catalog:
    """The catalog in force: what a lookup not handed a catalog reads."""
    return _IN_FORCE.get()


@contextmanager
def catalog_in_force(catalog: Catalog) -> Iterator[None]:
    """``catalog`` is in force for the block; the one before it is again afterwards."""
    token = _IN_FORCE.set(catalog)
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def close_fixtures(name: str, catalog: Catalog | None = None) -> tuple[str, ...]:
    """``Catalog.close_fixtures`` of ``catalog`` (default: the catalog in force)."""
    return (catalog or in_force()).close_fixtures(name)
