"""The ``row`` fixture and the metric fixtures (``em``, ``f1``, ``abstain``, ...).

A metric fixture is a callable ``fixture(row) -> Score``. Calling it computes the metric
with the pure functions of ``pytest_ragmetrics.metrics``, records the value for the
eval's aggregate, and returns a ``Score``: a float that carries its evidence, so
``assert idk_citation(row) == 0`` fails showing the sentence and the marker. There is one
per built-in declaration of ``pytest_ragmetrics.metrics.catalog``, generated at the end of
this module, and one per metric declared in user code (``plugin.custom``); nothing here
lists the metrics. Which metrics a run knows is its catalog (``plugin.catalog``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragmetrics.data.dataset import Problem, Row, RowError
from pytest_ragmetrics.metrics.base import (
    Evidence,
    MetricContext,
    MetricSpec,
    Preparation,
)
from pytest_ragmetrics.metrics.catalog import (
    DECLARATION_MARK,
    FIXTURES,
    UNJUDGED,
    Catalog,
    Declared,
    declaration_of,
    in_force,
)
from pytest_ragmetrics.metrics.judge import JudgeRowError
from pytest_ragmetrics.metrics.repeats import DETERMINISM
from pytest_ragmetrics.metrics.values import check_measured
from pytest_ragmetrics.plugin.catalog import CATALOG_KEY, run_catalog
from pytest_ragmetrics.plugin.running import running_item
from pytest_ragmetrics.plugin.state import (
    RECORDER_KEY,
    STATE_KEY,
    PreparedRows,
    RowParam,
    RowRecorder,
    batch_param,
    embedding_store,
    item_rows,
    live_cache,
    llm_judge,
    located,
    row_param,
    run_state,
)

if TYPE_CHECKING:  # the judge's client (HTTP, TLS) is imported when a metric first judges
    from pytest_ragmetrics.config.thresholds import Settings
    from pytest_ragmetrics.embeddings.model import Vectors
    from pytest_ragmetrics.judge.client import LlmJudge
    from pytest_ragmetrics.metrics.hooks import PrepareRow, RowKey

__all__ = [
    "DETERMINISM",
    "FIXTURES",
    "METRIC_FIXTURE_MARK",
    "MetricFixture",
    "Score",
    "bound_metrics",
    "check_row",
    "define_metric_fixture",
    "embeds",
    "late_metrics",
    "metric_binder",
    "metric_fixtures",
    "metrics_taken",
    "missing_fields",
    "own_metrics",
    "plugin_metrics",
    "preparations",
    "prepared_rows",
    "refuse_late",
    "session_texts",
    "start_row",
]


class Score(float):
    """A metric value that keeps the evidence behind it.

    It compares and computes like the float it is; its ``repr`` names the metric, the row
    and the evidence, which is what pytest prints when an assertion on it fails. The
    evidence is built when first read (``metrics.base.Evidence``): a passing assertion
    never reads it.
    """

    __slots__ = ("_evidence", "metric", "row_id")  # one per metric call: no __dict__

    metric: str
    row_id: str
    _evidence: str | Evidence

    def __new__(cls, value: float, metric: str, row_id: str, evidence: str | Evidence) -> Score:
        score = float.__new__(cls, value)  # not super(): made on every metric call
        score.metric, score.row_id, score._evidence = metric, row_id, evidence
        return score

    @property
    def evidence(self) -> str:
        """The evidence text, built on first read."""
        evidence = self._evidence
        if type(evidence) is str:
            return evidence
        text = self._evidence = str(evidence)
        return text

    def __repr__(self) -> str:
        return f"{self.metric}={float(self):g} (row {self.row_id!r}: {self.evidence})"

    __str__ = __repr__


class MetricFixture:
    """A metric bound to the running test: call it with the test's ``row``. Built for
    every metric of every row, so it holds no more than the declaration, the row's
    recorder and the context the row's metrics share: a plain class with slots, not a
    frozen dataclass, whose ``__init__`` would cost several times as much per row (its
    fields are set once and never reassigned)."""

    __slots__ = ("context", "recorder", "spec")

    def __init__(self, spec: MetricSpec, recorder: RowRecorder, context: MetricContext) -> None:
        self.spec = spec
        self.recorder = recorder
        self.context = context

    @property
    def name(self) -> str:
        return self.spec.fixture

    def __repr__(self) -> str:
        return f"<metric fixture {self.name} for row {self.recorder.row.id!r}>"

    def __call__(self, row: Row, **options: Any) -> Score:
        recorder = self.recorder
        if row is not recorder.row and not (isinstance(row, Row) and row.id == recorder.row.id):
            raise TypeError(
                f"{self.name}() takes the test's own `row` fixture "
                f"(row {recorder.row.id!r}); for other data use pytest_ragmetrics.metrics"
            )
        spec = self.spec
        recorder.called.add(spec.fixture)
        try:
            if options:
                self._check_options(options)
                measured = spec.compute(row, self.context, **options)
            else:  # the common call: no keyword arguments to unpack
                measured = spec.compute(row, self.context)
            check_measured(spec, measured)  # every value within its declaration
        except RowError as error:
            if isinstance(error, JudgeRowError):  # keep what the failed judge call cost
                recorder.record({}, {}, error.details)
            recorder.fail(located(row, str(error)))
            raise
        primary = measured.primary or spec.primary
        values = measured.values
        recorder.record(values, measured.breakdowns, measured.details)
        evidence = recorder.evidence[primary] = measured.evidence
        score = measured.score
        return Score(values[primary] if score is None else score, primary, row.id, evidence)

    def _check_options(self, options: Mapping[str, Any]) -> None:
        """A ``TypeError`` for keyword arguments the metric does not take."""
        takes = self.spec.options
        unknown = sorted(set(options) - set(takes))
        if unknown:
            said = f"takes {', '.join(takes)}" if takes else "takes no options"
            raise TypeError(f"{self.name}(row, ...) {said}; got {', '.join(unknown)}")


def missing_fields(
    row: Row, fixture_names: Sequence[str], catalog: Catalog | None = None
) -> list[Problem]:
    """Fields the requested metric fixtures need that ``row`` lacks, one problem each;
    ``catalog``: the run's (default: the catalog in force)."""
    data = row.data
    return [
        Problem(field_name, f"required by {users} but missing")
        for field_name, users in (catalog or in_force()).requirements(tuple(fixture_names))
        if field_name not in data
    ]


def metric_fixtures(
    config: pytest.Config, names: Sequence[str], recorder: RowRecorder, param: RowParam | None
) -> list[MetricFixture]:
    """The metric fixtures ``names`` (metrics of the run's catalog) bound to one row's
    recorder: their values in a row test."""
    return metric_binder(config, names)(recorder, param)


def metric_binder(
    config: pytest.Config, names: Sequence[str]
) -> Callable[[RowRecorder, RowParam | None], list[MetricFixture]]:
    """What binds the metric fixtures ``names`` to each row's recorder, with what every
    row of a test shares looked up once: what a bulk item gives its test for each row."""

    def embed(texts: Sequence[str]) -> Vectors:
        return embedding_store(config).embed(texts)  # built on first use only

    def judge() -> LlmJudge:
        return llm_judge(config)

    state = run_state(config)
    prepared = state.prepared
    settings = state.thresholds.settings
    fixtures = run_catalog(config).fixtures

    def bind(recorder: RowRecorder, param: RowParam | None) -> list[MetricFixture]:
        if prepared:
            _take_prepared(prepared, names, recorder)
        return bound_metrics(names, recorder, param, settings, embed, judge, fixtures)

    return bind


def _take_prepared(
    prepared: Mapping[str, PreparedRows], names: Collection[str], recorder: RowRecorder
) -> None:
    """Give the row's metrics ``names`` what the before-rows hooks they declare prepared
    for the row (``metrics.base.Preparation``), in the row's memo under each hook's key;
    the metric reads it only for the row it was prepared on (grounding's overlap of a row
    with another answer, a live row's or an edited one, is scored anew)."""
    row = recorder.row
    for key, made in prepared.items():
        if made.fixtures.isdisjoint(names):
            continue
        found = made.results.get((row.source, row.index))
        if found is not None and key not in recorder.memo:
            recorder.memo[key] = found


def refuse_late(config: pytest.Config, declared: Declared) -> None:
    """Fail the test when ``declared`` is not in the run's catalog: declared in user code
    after this run read thresholds.toml, no process could gate it, and under xdist the
    controller, which never imports such a file, could not report it as the workers
    record it."""
    why = _late(config, declared)
    if why is not None:
        pytest.fail(why, pytrace=False)


def _late(config: pytest.Config, declared: Declared) -> str | None:
    """Why the metric ``declared`` in user code is refused when the run's catalog does not
    hold it (``late_declaration``); None when it does."""
    held = run_catalog(config).declared.get(declared.name)
    if held is not None and held.origin == declared.origin:
        return None
    return late_declaration(declared.name, declared.origin)


def late_metrics(
    config: pytest.Config, resolved: Mapping[str, Sequence[Any]], names: Iterable[str]
) -> list[str]:
    """Why each of ``names`` is refused whose fixture, as pytest resolved it
    (``resolved``, as in ``plugin_metrics``), is a metric declared in user code that the
    run's catalog does not hold (``late_declaration``)."""
    return [
        why
        for name in names
        if (chain := resolved.get(name))
        and (declared := declaration_of(chain[-1].func)) is not None
        and (why := _late(config, declared)) is not None
    ]


def late_declaration(name: str, origin: str) -> str:
    """Why a metric declared after the run read thresholds.toml is refused."""
    return (
        f"{origin}: metric {name!r} was declared after pytest read thresholds.toml (in a "
        "conftest.py below the command-line path, or a test module), so no process could "
        "gate it nor report it alike: declare it in the project's root conftest.py, or in "
        "one in a folder given on the command line (docs/custom-metrics.md)"
    )


def bound_metrics(
    names: Sequence[str],
    recorder: RowRecorder,
    param: RowParam | None,
    settings: Settings,
    embed: Callable[[Sequence[str]], Vectors],
    judge: Callable[[], LlmJudge],
    fixtures: Mapping[str, MetricSpec],
) -> list[MetricFixture]:
    """``metric_fixtures`` given the settings, the vectors, the judge and the catalog's
    metric fixtures (``fixtures``) instead of the run's config: what a process without
    the pytest item (a Ray worker) binds. The row's metrics share one context, built once
    for the row (its memo is the recorder's)."""
    rerun = recorder.rerun or (param.rerun if param is not None else None)
    context = MetricContext(settings, embed, recorder.memo, rerun, judge)
    return [MetricFixture(fixtures[name], recorder, context) for name in names]


@pytest.fixture
def row() -> Row | None:
    """The dataset row this test runs on; a bad row errors here with file:line:field.
    A bulk item's test is given each of its rows in turn (``plugin.bulk``): here, ``None``."""
    # The running item, not `request`: asking for it costs a fixture definition per row
    # (plugin.running). Its parameter is the row parametrization gave it.
    item = running_item()
    if batch_param(item) is not None:
        return None
    param = row_param(item)
    if param is None:
        raise pytest.UsageError(
            f"{item.nodeid} takes `row` but has no dataset: "
            f'mark it with @pytest.mark.ragmetrics(dataset="path/to/rows.jsonl")'
        )
    recorder = RowRecorder(param.row)
    item.stash[RECORDER_KEY] = recorder

    def systems() -> Any:
        # The item's own fixture request (pytest's, no public accessor), as `request` is.
        return item._request.getfixturevalue("ragmetrics_system")  # type: ignore[attr-defined]

    started = start_row(param, recorder, item, systems)
    _bind_requested_metrics(item, recorder, param)
    return started


def _bind_requested_metrics(item: pytest.Item, recorder: RowRecorder, param: RowParam) -> None:
    """Give the row test its metric fixtures' values directly.

    Every metric fixture of a row test is the same function of the row's recorder, so the
    ``row`` fixture binds them all at once and hands them to pytest as the test's
    arguments. pytest then sets up no fixture of its own for them: no fixture request, no
    signature inspection and no set-up hook per metric per row, which was most of what
    the plugin added to a row test's cost. A metric fixture set up before ``row`` (a test
    that names it first) finds its value here once ``row`` has run
    (``define_metric_fixture``)."""
    if not isinstance(item, pytest.Function):
        return
    funcargs = item.funcargs
    names = [name for name in own_metrics(item) if name not in funcargs]
    if names:
        bound = metric_fixtures(item.config, names, recorder, param)
        funcargs.update(zip(names, bound, strict=True))


def own_metrics(item: pytest.Item, names: Iterable[str] | None = None) -> list[str]:
    """The names among ``names`` (all the test's fixtures by default) that ``item`` gets
    from the plugin's metric fixtures (``plugin_metrics``); none for an item that has no
    fixtures."""
    # pytest's own record of the fixtures it resolved for the test (no public accessor).
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    config = getattr(item, "config", None)
    catalog = config.stash.get(CATALOG_KEY, None) if config is not None else None
    if names is not None:
        return plugin_metrics(info.name2fixturedefs, names, catalog)
    # Every item of a test function shares its fixture info, which is settled once
    # collection is over: the answer is kept for the run, by that info.
    state = config.stash.get(STATE_KEY, None) if config is not None else None
    kept = state.own_metrics.get(id(info)) if state is not None else None
    if kept is not None and kept[0] is info:
        return list(kept[1])
    found = plugin_metrics(info.name2fixturedefs, getattr(item, "fixturenames", ()), catalog)
    if state is not None:
        state.own_metrics[id(info)] = (info, tuple(found))
    return found


def metrics_taken(items: Iterable[pytest.Item]) -> frozenset[str]:
    """Every one of the plugin's metric fixtures that some item takes (``own_metrics``),
    asked once per test function: the items of one function share their fixture info."""
    taken: dict[int, list[str]] = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is not None and id(info) not in taken:
            taken[id(info)] = own_metrics(item)
    return frozenset(name for names in taken.values() for name in names)


def embeds(metrics: Iterable[str], catalog: Catalog | None = None) -> bool:
    """Whether any of the metric fixtures ``metrics`` embeds texts (``session_texts``);
    ``catalog``: the run's (default: the catalog in force)."""
    fixtures = (catalog or in_force()).fixtures
    return any(fixtures[name].texts is not None for name in metrics)


def plugin_metrics(
    resolved: Mapping[str, Sequence[Any]], names: Iterable[str], catalog: Catalog | None = None
) -> list[str]:
    """The names among ``names`` whose fixture, as pytest resolved it (``resolved``: each
    name's chain of fixture definitions, the last one used), is a metric fixture the
    plugin generated for a metric of ``catalog`` (the run's; default: the catalog in
    force). A fixture of the project's own by a metric's name (``latency``, or an ``em``
    wrapping the plugin's), or a parametrized argument so named, is what pytest gives the
    test: it is not that metric, needs none of its fields and embeds nothing."""
    fixtures = (catalog or in_force()).fixtures
    return [
        name
        for name in names
        if name in fixtures
        and (chain := resolved.get(name))
        and getattr(chain[-1].func, METRIC_FIXTURE_MARK, False)
    ]


def start_row(
    param: RowParam, recorder: RowRecorder, item: pytest.Item, systems: Callable[[], Any]
) -> Row:
    """The row a test is given: ``param``'s row, checked, and for a live eval answered by
    its system (``systems()`` gives the ``ragmetrics_system`` fixture's value). A bad row
    fails here (is skipped with ``row_errors = "skip"``); a live system's failure is the
    row's error. The ``row`` fixture's work in a row test, and a bulk item's for each row."""
    check_row(param, recorder, run_state(item.config).thresholds.settings.row_errors)
    if param.live is None:
        return param.row
    # The live layer is imported by a live eval's first row: every run imports this module.
    from pytest_ragmetrics.live.system import LiveSystemError

    try:
        return _answer_live(item, systems, param, recorder)
    except LiveSystemError as error:
        recorder.fail(located(param.row, str(error)))
        raise


def check_row(param: RowParam, recorder: RowRecorder, row_errors: str) -> None:
    """A bad row fails here, naming file:line:field (is skipped with ``row_errors =
    "skip"``); a row whose proxy relevance label is NULL is skipped as not judgeable and
    recorded as ``unjudged`` (never scored 0); the start of every row's run, in any
    process."""
    if param.problems:
        message = param.error_message()
        recorder.fail(message)
        if row_errors == "skip":
            pytest.skip(f"bad row: {message}")
        pytest.fail(message, pytrace=False)
    row = param.row
    if row.proxy is not None:
        # Counted in every row of a dataset with a proxy label, so `unjudged` is a share.
        recorder.values[UNJUDGED] = 1.0 if row.unjudged else 0.0
        if row.unjudged:
            pytest.skip(
                f"not judgeable: {row.where('relevant')}: its proxy label "
                f"(column {row.proxy!r}) is NULL"
            )


def _answer_live(
    item: pytest.Item, systems: Callable[[], Any], param: RowParam, recorder: RowRecorder
) -> Row:
    """Call the row's live system (or read its cached output) and give the test the
    question row with the output fields added."""
    from pytest_ragmetrics.live.outputs import live_row, saved_row
    from pytest_ragmetrics.live.system import LiveSystemError, systems_by_name

    assert param.live is not None  # checked by the caller
    by_name = systems_by_name(systems(), item.nodeid)
    system = by_name.get(param.live)
    if system is None:
        named = ", ".join(map(repr, by_name)) or "none"
        raise LiveSystemError(
            f"the marker names system {param.live!r}, but ragmetrics_system returned {named}"
        )
    cache = live_cache(item.config)
    question = param.row.require("question", "the live system")
    output = cache.output(system, question)
    row = live_row(param.row, output)
    metrics = own_metrics(item)
    missing = missing_fields(row, metrics, run_catalog(item.config))
    if missing:
        lacking = "; ".join(f"{p.field} {p.message}" for p in missing)
        raise LiveSystemError(f"system {system.name!r} returned no {lacking}")
    recorder.row = row
    recorder.details["live"] = output.describe()
    recorder.saved = saved_row(param.row, output)
    if DETERMINISM in metrics:  # a second, independent call of the system
        recorder.rerun = live_row(param.row, cache.output(system, question, repeat=1))
    return row


@pytest.fixture(scope="session")
def ragmetrics_system() -> Any:
    """The live systems under test. A project with a live eval overrides this fixture (in
    a conftest.py or the eval file) to return a ``LiveSystem``, several, or a mapping of
    names to them; the marker's ``systems=[...]`` picks the ones an eval runs."""
    from pytest_ragmetrics.live.system import LiveSystemError

    raise LiveSystemError(
        "this eval names live systems (ragmetrics marker systems=...): define a "
        "`ragmetrics_system` fixture that returns them as pytest_ragmetrics.LiveSystem"
    )


@dataclass(frozen=True)
class RunEmbedder:
    """The run's embedding model: ``embed(texts)`` gives L2-normalised float32 rows
    through the persistent embedding cache; ``model`` names it, for a live system's
    fingerprint (its outputs change with the model)."""

    config: pytest.Config = field(repr=False)
    model: str

    def __call__(self, texts: Sequence[str]) -> Vectors:
        return embedding_store(self.config).embed(texts)


@pytest.fixture(scope="session")
def ragmetrics_embed(request: pytest.FixtureRequest) -> RunEmbedder:
    """The run's embedding model, for a live system that retrieves with it."""
    from pytest_ragmetrics.embeddings.model import model_label

    settings = run_state(request.config).thresholds.settings
    return RunEmbedder(request.config, model_label(settings.embedding_model))


# Set on the function of every metric fixture the plugin generates (``own_metrics``).
METRIC_FIXTURE_MARK = "_ragmetrics_metric_fixture"


def define_metric_fixture(
    spec: MetricSpec, module: str | None = None, declared: Declared | None = None
) -> Any:
    """The pytest fixture of one metric: ``spec.fixture(row, **options) -> Score``,
    documented (``pytest --fixtures``) by the metric's own declaration. ``module``: the
    module pytest lists it under; ``declared``: the declaration of a metric declared in
    user code, which the fixture carries (``plugin.catalog``) and is refused without."""
    name = spec.fixture

    # The running item, not `request`: a fixture asking for it (any of a test's metrics)
    # puts `request` in every row test's fixtures, which costs a fixture definition per
    # row (plugin.running).
    def metric(row: Row | None) -> MetricFixture | None:
        node = running_item()
        if batch_param(node) is not None:
            return None  # a bulk item's test gets one per row (plugin.bulk)
        bound = node.funcargs.get(name) if isinstance(node, pytest.Function) else None
        if isinstance(bound, MetricFixture):
            return bound  # bound by `row`, which every metric requires
        if declared is not None:  # bound by `row` unless it is not in the run's catalog
            refuse_late(node.config, declared)
        recorder = node.stash[RECORDER_KEY]  # set by `row`
        return metric_fixtures(node.config, (name,), recorder, row_param(node))[0]

    metric.__name__ = name
    metric.__qualname__ = name
    setattr(metric, METRIC_FIXTURE_MARK, True)
    metric.__doc__ = spec.docstring
    if module is not None:
        metric.__module__ = module
    if declared is None:
        return pytest.fixture(name=name)(metric)
    setattr(metric, DECLARATION_MARK, declared)
    fixture = pytest.fixture(name=name)(metric)
    setattr(fixture, DECLARATION_MARK, declared)  # what the run's catalog is read from
    return fixture


# pytest finds fixtures among a plugin module's attributes and names each by its marker,
# so a metric fixture is bound under a private name: a module global called ``map`` (the
# trec_eval fixture) would shadow the builtin for every function of this module.
for _spec in FIXTURES.values():
    globals()[f"_metric_fixture_{_spec.fixture}"] = define_metric_fixture(_spec)
del _spec


def session_texts(
    items: Sequence[pytest.Item],
    settings: Settings,
    done: Mapping[str, Collection[RowKey]] | None = None,
    catalog: Catalog | None = None,
) -> list[str]:
    """Every text the embedding metrics of ``items`` will embed, in first-use order; for a
    row test's row that a before-rows hook has ``done`` already (by the hook's key: the
    rows it has a result for before any vector, ``metrics.base.Prepared``), none of what
    the metrics declaring that hook need.

    A row that lacks a field its metrics need is left out here: it errors when it runs.
    ``catalog``: the run's (default: the catalog in force).
    """
    texts: dict[str, None] = {}
    done = done or {}
    fixtures = (catalog or in_force()).fixtures
    for item in items:
        specs = [fixtures[name] for name in own_metrics(item)]
        embedding = [
            (spec.texts, done.get(spec.prepare.key, ()) if spec.prepare else ())
            for spec in specs
            if spec.texts is not None
        ]
        single = batch_param(item) is None
        for param in item_rows(item) if embedding else ():
            if param.problems:
                continue
            key = (param.row.source, param.row.index)
            for row_texts, prepared in embedding:
                if single and key in prepared:
                    continue
                try:
                    texts.update(dict.fromkeys(row_texts(param.row, settings)))
                except RowError:
                    continue
    return list(texts)


def preparations(
    names: Iterable[str], catalog: Catalog | None = None
) -> list[tuple[Preparation, frozenset[str]]]:
    """The before-rows hooks the metric fixtures ``names`` declare
    (``MetricSpec.prepare``), each once, with the fixtures among ``names`` declaring it;
    ``catalog``: the run's (default: the catalog in force)."""
    fixtures = (catalog or in_force()).fixtures
    found: dict[str, tuple[Preparation, set[str]]] = {}
    for name in names:
        preparation = fixtures[name].prepare
        if preparation is not None:
            found.setdefault(preparation.key, (preparation, set()))[1].add(name)
    return [(preparation, frozenset(fixtures)) for preparation, fixtures in found.values()]


def prepared_rows(items: Sequence[pytest.Item], fixtures: frozenset[str]) -> list[PrepareRow]:
    """The rows a before-rows hook prepares: each row this process runs a test taking one
    of ``fixtures`` (those declaring the hook) on, once, with which of them its tests take.
    The rows of row tests, without those that have a problem (they fail before any metric)
    or whose answer a live system gives (unknown before the row runs).

    Bulk items are left out, on any engine: bulk mode holds one batch of rows at a time,
    and preparing their rows here would hold every row, and its result, to the end of the
    run; a batch's rows are computed when it runs."""
    from pytest_ragmetrics.metrics.hooks import PrepareRow

    found: dict[RowKey, PrepareRow] = {}
    for item in items:
        taken = fixtures.intersection(own_metrics(item))
        if not taken or batch_param(item) is not None:
            continue
        for param in item_rows(item):
            if param.problems or param.live is not None:
                continue
            key = (param.row.source, param.row.index)
            kept = found.get(key)
            found[key] = PrepareRow(param.row, taken | kept.fixtures if kept else taken)
    return list(found.values())
