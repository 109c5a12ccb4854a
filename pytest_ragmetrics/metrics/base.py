"""What a metric is: the declaration every family module makes once per metric fixture
(``MetricSpec``), what a computation on one row takes and gives (``MetricContext``,
``Measured``), and the row readers the families have in common.

Nothing here imports a family module, ``config`` or pytest: the families import this
module, ``metrics.catalog`` collects their declarations, and the plugin and the registry
are generated from the catalog.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.prices import Prices
from pytest_ragmetrics.metrics.setting import SettingsTable
from pytest_ragmetrics.metrics.trec_options import TrecOptions
from pytest_ragmetrics.text.citations import CitationFormat, strip_citations
from pytest_ragmetrics.text.idk import IdkMatcher

if TYPE_CHECKING:
    from pytest_ragmetrics.embeddings.model import Vectors
    from pytest_ragmetrics.embeddings.prepare import EmbeddingStore
    from pytest_ragmetrics.inference.settings import StatsSettings
    from pytest_ragmetrics.judge.client import LlmJudge
    from pytest_ragmetrics.judge.config import JudgeConfig
    from pytest_ragmetrics.metrics.hooks import Aggregated, Prepared, PrepareRow

STATS = ("mean", "sum", "count", "p50", "p95")
RATE = "rate"  # = mean, offered for 0/1 metrics
Cutoff = Literal["none", "optional", "required"]
# What a metric's values are, which the statistics of the comparison gates read:
# ``continuous`` (any number in its range), ``binary`` (0 or 1; a rate, read with McNemar
# and Wilson), ``corpus`` (a per-row value besides corpus statistics reduced from the rows'
# summed sufficient statistics, as BLEU's).
Kind = Literal["continuous", "binary", "corpus"]
# The closed interval every per-row value lies in; an infinite bound is a count or a
# quantity with no ceiling (or floor), whose value must still be finite.
Range = tuple[float, float]
UNIT: Range = (0.0, 1.0)  # a share, a rate, a 0/1 decision, an F-measure
PERCENT: Range = (0.0, 100.0)  # the suites that keep their native 0-100 scale
COSINE: Range = (-1.0, 1.0)  # of L2-normalised embeddings
COUNT: Range = (0.0, math.inf)  # tokens, documents, milliseconds
Embed: TypeAlias = "Callable[[Sequence[str]], Vectors]"
_Table = TypeVar("_Table")


# How the reports write a number: ``score`` 0.000, ``amount`` 0.0, ``hundredths`` 0.00,
# ``count`` an integer, ``integer`` (a count per row, as tokens) 0.0 for a statistic and
# one row's value as the integer it is, ``ms`` milliseconds (whole from 1 ms up, two
# decimals below), ``ratio`` 1.10×, ``delta`` +0.250, ``number`` an integer when the value
# is one, else 0.000, ``usd`` US dollars to three significant digits ($0.000270, $1.50).
NumberFormat = Literal[
    "score", "amount", "hundredths", "count", "integer", "ms", "ratio", "delta", "number", "usd"
]
# The report tables a statistic may be a column of: ``main`` (the first table of the
# terminal and the Markdown summary, and of the HTML report's systems table), ``systems``
# (only the HTML systems table, after the main columns of lower priority), ``appendix``
# (the terminal's second table), ``suite`` (the table of a dataset-level suite, with its
# own title: the Trust-Score table), ``comment`` (what a query spends, before -> after, in
# the pull-request comment).
Table = Literal["main", "systems", "appendix", "suite", "comment"]
# What the transformations of a compared system (``results.compare``) read of a metric:
# ``abstains`` (1 when the row abstains), ``correct`` (above 0 when the answer is right),
# ``supported`` (records the row's ``sentences`` detail, each ``supported`` or not).
Role = Literal["abstains", "correct", "supported"]


@dataclass(frozen=True)
class Column:
    """A statistic of the metric shown as a column of a report table: ``priority`` orders
    the columns of a table (lower first), ``heading`` defaults to the metric's label."""

    table: Table
    priority: int
    stat: str = "mean"
    heading: str | None = None
    format: NumberFormat = "score"


@dataclass(frozen=True)
class Versus:
    """A compared system's ``vs_baseline`` statistic of the metric: its ``stat`` as a
    ``ratio`` to the reference system's, or as a ``delta`` (the difference); named
    ``<metric>_<stat>_<how>`` (``tokens_mean_ratio``); ``priority`` orders them."""

    stat: str
    how: Literal["ratio", "delta"]
    priority: int


@dataclass(frozen=True)
class Presentation:
    """How the reports show a metric; a metric that says nothing gets the defaults: its
    name as its label, no table column, no plot, listed under "More metrics".

    ``label``: its name in headings (``F1 short``). ``format``: how one row's value and
    its per-row statistics are written (``None``: by its kind, a 0/1 metric's sum as a
    count, the rest as scores; a dataset-level metric's statistics as numbers).
    ``formats``: a dataset-level metric's statistics that have a format of their own
    (``avg_latency_ms``: ``ms``). ``columns``: its statistics shown as table columns.
    ``distribution``: its place among the per-row distributions the HTML report draws
    (and among the first columns of its rows table); ``None``, not drawn unless an eval
    records none of those. ``bar``: its place among the 0-1 bars of an eval of several
    systems. ``versus``: its ``vs_baseline`` statistics. ``pareto``: its axis of the
    Pareto view of several systems (``quality``, higher is better; ``cost``, lower is).
    ``role``: what the transformations read of it (``Role``). ``row_value``: shown among a
    row's values in the HTML rows table and drawable (``errors`` is the row's status).
    ``listed``: listed under "More metrics" when no table shows it. ``count``: for a
    dataset-level suite, the statistic counting the rows it is over (the terminal's ``N``).
    """

    label: str | None = None
    format: NumberFormat | None = None
    formats: Mapping[str, NumberFormat] = field(default_factory=dict)
    columns: tuple[Column, ...] = ()
    distribution: int | None = None
    bar: int | None = None
    versus: tuple[Versus, ...] = ()
    pareto: Literal["quality", "cost"] | None = None
    role: Role | None = None
    row_value: bool = True
    listed: bool = True
    count: str | None = None


DEFAULT_PRESENTATION = Presentation()
# The properties ``pytest_ragmetrics.testing.check_metric`` checks on generated rows.
PROPERTIES = ("no error", "finite", "in range", "deterministic", "citation-format invariant")
# What a declaration may leave out of the tests generated for it (``MetricSpec.untested``):
# the whole property check, or one property of it.
UNTESTED = ("properties", *PROPERTIES)


@dataclass(frozen=True)
class MetricInfo:
    """A recorded metric: its name, what it means, and which statistics it has.

    ``kind``: what its values are (``Kind``). ``range``: the closed interval every per-row
    value lies in, checked on every row (``None`` only for a dataset-level metric, whose
    statistics are not per-row values).
    ``cutoff``: whether the name takes ``@k`` (``ndcg@10``). ``corpus``: statistics computed
    from summed per-row sufficient statistics, besides the per-row ones (``bleu.corpus``).
    ``dataset``: for a dataset-level metric (one value set per eval, not per row), its only
    statistics. ``levels``: the only suffixes ``@`` may take, for a name whose suffix is
    not a cutoff k (``iprec_at_recall@0.5``). ``misleading``: statistics a gate may not
    use, each with what to use instead (``gm_map.mean`` is map's mean, not trec_eval's
    gm_map). ``presentation``: how the reports show it (``Presentation``). ``derived``:
    statistics its ``aggregate`` hook gives besides the per-row ones (a judge metric's
    ``flip_rate`` and ``agreement``): gateable as plain numbers, with no paired interval.
    ``vouching``: the statistics that say whether the metric's values can be trusted at all
    (a judge metric's agreement with people): when a gate on one fails, every other gate
    on the metric in that eval fails as "cannot be trusted", naming it.
    Hooks, for a metric whose eval-level numbers are not aggregates of per-row values:
    ``aggregate``, how the rows' details under the metric's name become its statistics
    (the Trust-Score suite over the eval's rows, the judge's accounting); ``merge``, how
    two tests' details of one row under its name merge (replaced, without one);
    ``signature``, what a baseline's signature holds under its name when an eval recorded
    it (the judge's model and prompts: numbers of another judge are not compared).
    """

    name: str
    description: str
    kind: Kind = "continuous"
    range: Range | None = None
    cutoff: Cutoff = "none"
    corpus: tuple[str, ...] = ()
    dataset: tuple[str, ...] | None = None
    levels: tuple[str, ...] = ()
    misleading: Mapping[str, str] = field(default_factory=dict)
    presentation: Presentation = DEFAULT_PRESENTATION
    derived: tuple[str, ...] = ()
    vouching: tuple[str, ...] = ()
    aggregate: Aggregate | None = None
    merge: MergeDetail | None = None
    signature: RunSignature | None = None

    @property
    def label(self) -> str:
        """Its name in report headings: the declared label, else the name."""
        return self.presentation.label or self.name

    @property
    def binary(self) -> bool:
        """The values are 0 or 1 (the metric has a ``rate``)."""
        return self.kind == "binary"

    @property
    def stats(self) -> tuple[str, ...]:
        if self.dataset is not None:
            return self.dataset
        every = (*STATS, *((RATE,) if self.binary else ()), *self.corpus, *self.derived)
        return tuple(stat for stat in every if stat not in self.misleading)


class MetricSettings(Protocol):
    """The run settings a metric computation reads (``config.thresholds.Settings`` has
    them all; a test may pass any object that does). A metric's own settings table
    (``MetricSpec.settings``) is read with ``table``: ``settings.table(BLEU_SETTINGS)``."""

    def table(self, table: SettingsTable[_Table]) -> _Table:
        """The run's ``[settings.<name>]`` of a declared table (its defaults without one)."""
        ...

    @property
    def tau_sim(self) -> float: ...
    @property
    def idk_matcher(self) -> IdkMatcher: ...
    @property
    def citations(self) -> CitationFormat: ...
    @property
    def rouge_use_stemmer(self) -> bool: ...
    @property
    def squad_version(self) -> Literal["1.1", "2.0"]: ...
    @property
    def squad_ascii_punctuation(self) -> bool: ...
    # The retrieval fixtures' table as an attribute too, until metrics.retrieval reads
    # it with ``table(RETRIEVAL_SETTINGS)``.
    @property
    def retrieval(self) -> TrecOptions: ...
    @property
    def trust_judge(self) -> str: ...
    @property
    def trust_judge_tau(self) -> float: ...
    @property
    def refusal_flag(self) -> str: ...
    @property
    def refusal_threshold(self) -> float: ...
    @property
    def base_dir(self) -> Path | None: ...
    @property
    def stats(self) -> StatsSettings: ...
    @property
    def prices(self) -> Prices: ...


def _no_judge() -> LlmJudge:
    raise RuntimeError("this computation was given no LLM judge")


# The breakdowns and details of a ``Measured`` that has none: one shared, read-only
# mapping, since most rows of most metrics have none and a ``Measured`` is made per call.
_NONE: Mapping[str, Any] = MappingProxyType({})


def _none() -> Mapping[str, Any]:
    return _NONE


class Evidence:
    """A metric's evidence text, built only when something reads it.

    ``Evidence(template, *args)`` is the text ``template.format(*args)``;
    ``Evidence(build, *args)``, with ``build`` a function, is ``build(*args)``. Either is
    built by ``str(evidence)``, once: the first read keeps the text. A metric fixture is
    called on every row, and most runs read no row's evidence (only the JSON and HTML
    reports show it, and a failed assertion prints it), so formatting numbers and
    quoting golds on every call is work thrown away: an ``Evidence`` keeps only its
    arguments until then. A metric returns it wherever it would return the text, the
    built-in metrics as a user's ``@metric`` (docs/custom-metrics.md).

    It equals (and hashes as) the text it builds, so a test comparing a metric's
    evidence with a string reads the same whichever the metric returned. Pickled, it is
    its builder and arguments (a module-level function, a template); the plugin builds
    the text before a row's payload leaves the process that ran the row, so nothing lazy
    travels to the controller (pytest-xdist, Ray).
    """

    __slots__ = ("_args", "_build", "_text")

    def __init__(self, build: str | Callable[..., str], *args: Any) -> None:
        self._build = build
        self._args = args
        self._text: str | None = None

    def __str__(self) -> str:
        text = self._text
        if text is None:
            build = self._build
            text = build.format(*self._args) if isinstance(build, str) else build(*self._args)
            if not isinstance(text, str):
                raise TypeError(
                    f"Evidence({build!r}, ...) built {type(text).__name__} {text!r}, not a "
                    "string: its function must return the evidence text"
                )
            self._text = text
        return text

    def __repr__(self) -> str:
        return f"Evidence({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Evidence | str):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Evidence, (self._build, *self._args))


@dataclass(frozen=True, slots=True, init=False)
class Measured:
    """What computing a metric on a row produced: its value(s) and the evidence.

    ``evidence``: the text a failed assertion and the reports show, or an ``Evidence``
    that builds it only when one of them reads it. ``primary`` names the value the
    fixture returns when it is not the fixture's own name (``ndcg(row, k=10)`` records
    and returns ``ndcg@10``).
    """

    values: Mapping[str, float]
    evidence: str | Evidence
    breakdowns: Mapping[str, Mapping[str, float]] = field(default_factory=_none)
    details: Mapping[str, Any] = field(default_factory=_none)  # JSON-able, per-row report
    primary: str | None = None
    # What the fixture returns when it records no per-row value of its own (``trust``,
    # whose numbers exist only for the whole eval).
    score: float | None = None

    # Written out, with the shared empty mapping as a plain default: one is made per
    # metric call, and the generated frozen ``__init__`` (a default factory called per
    # empty field, a global look-up per field) cost about twice as much.
    def __init__(
        self,
        values: Mapping[str, float],
        evidence: str | Evidence,
        breakdowns: Mapping[str, Mapping[str, float]] = _NONE,
        details: Mapping[str, Any] = _NONE,
        primary: str | None = None,
        score: float | None = None,
    ) -> None:
        _set_values(self, values)
        _set_evidence(self, evidence)
        _set_breakdowns(self, breakdowns)
        _set_details(self, details)
        _set_primary(self, primary)
        _set_score(self, score)


# Each of ``Measured``'s slots set directly, as its frozen ``__setattr__`` does not allow:
# a slot's own setter costs about half of ``object.__setattr__`` by name, four times a row.
_set_values, _set_evidence, _set_breakdowns, _set_details, _set_primary, _set_score = (
    Measured.__dict__[name].__set__
    for name in ("values", "evidence", "breakdowns", "details", "primary", "score")
)


@dataclass(frozen=True, slots=True)
class MetricContext:
    """What a metric computation may use besides the row: the settings and, for the
    embedding metrics, ``embed`` (texts -> vectors, prepared before the rows ran)."""

    settings: MetricSettings
    embed: Embed
    # Results shared by the fixtures of one test (faithfulness reuses overlap's).
    memo: dict[str, Any] = field(default_factory=dict)
    # The same row in the marker's `rerun` file: the second run `determinism` compares.
    rerun: Row | None = None
    # The run's LLM judge ([judge] in thresholds.toml), created on first use.
    judge: Callable[[], LlmJudge] = _no_judge


@dataclass(frozen=True)
class DatasetMeasured:
    """What a dataset-level metric produced over a set of rows: the result its fixture
    returns, the statistics recorded for the eval's gates, and JSON-able details."""

    result: Any
    stats: Mapping[str, float]
    details: Mapping[str, Any]


# -- a declaration's hooks: work before the rows run, and the eval-level numbers ---------


class RunThresholds(Protocol):
    """What a run-signature hook reads of the run's thresholds (``config.thresholds
    .Thresholds`` has it): the settings and the ``[judge]`` table, if any."""

    @property
    def settings(self) -> MetricSettings: ...
    @property
    def judge(self) -> JudgeConfig | None: ...


# (the rows, each once, the run's settings, the run's embedding store: its embedder, its
# cache, its statistics) -> what was prepared.
PrepareRows: TypeAlias = (
    "Callable[[Sequence[PrepareRow], MetricSettings, EmbeddingStore], Prepared]"
)


@dataclass(frozen=True)
class Preparation:
    """Work a metric declares to be done for many rows at once before they run, so that
    its fixture only reads the row's result (grounding: every row's overlap scored from one
    embedding batch, or from the similarities a cache kept).

    The run calls ``prepare`` once, in every process that runs row tests, with every row
    of a row test taking a fixture that declares it (bulk items and live rows are left
    out: their rows are not known, or not held, before they run), and puts each row's
    result in the row's ``MetricContext.memo[key]`` before the row's metrics are bound.
    Several declarations may share one ``Preparation`` (``overlap`` and ``faithfulness``):
    it runs once for the rows of all of them.
    """

    key: str
    prepare: PrepareRows


# The fixed bounds of an eval's gates on a metric's per-row statistics (``mean``, ``p50``,
# ...), each as the test a value passes: ``f1.mean >= 0.8`` is ``lambda v: v >= 0.8``.
Bounds: TypeAlias = "Mapping[str, Sequence[Callable[[float], bool]]]"


class AggregateContext(Protocol):
    """What an aggregation hook reads of its eval besides the rows' details and the
    per-row aggregates (``results.summary.EvalContext`` has it)."""

    @property
    def prices(self) -> Prices:
        """The run's ``[settings.prices]`` (the judge's tokens are priced with them)."""
        ...

    @property
    def bounds(self) -> Bounds:
        """The fixed bounds of the eval's gates, by metric."""
        ...

    @property
    def stats(self) -> StatsSettings:
        """How the run reads comparisons (``[settings.stats]``): confidence, seed, ..."""
        ...


# (each row's detail under the metric's name, in dataset order, the rows without one left
# out; the eval's statistics of per-row values; the eval's context) -> the metric's
# statistics (None: none).
Aggregate: TypeAlias = (
    "Callable[[Sequence[Any], Mapping[str, Mapping[str, float]], AggregateContext], "
    "Aggregated | None]"
)
# (the detail a row holds under the metric's name, another test's) -> the two merged, the
# same whichever came first.
MergeDetail = Callable[[Any, Any], Any]
# (the run's thresholds) -> what a baseline's signature holds under the metric's name for
# an eval that recorded it (None: nothing).
RunSignature = Callable[[RunThresholds], Any]
# Whether a metric fixture asks the LLM judge for verdicts, under the run's settings.
AsksJudge = Callable[[MetricSettings], bool]


def always(settings: MetricSettings) -> bool:
    """``MetricSpec.asks_judge`` of a metric that asks the judge under any settings."""
    return True


def never(settings: MetricSettings) -> bool:
    """``MetricSpec.asks_judge`` of a metric that never asks the judge."""
    return False


# (row, context, **options) -> Measured; options are the fixture's keyword arguments.
Compute = Callable[..., Measured]
Texts = Callable[[Row, MetricSettings], list[str]]
# (summed per-row sufficient statistics, the run's settings) -> the metric's corpus
# statistics; the settings say how (BLEU's smoothing and order), most reductions ignore them.
Reduce = Callable[[Mapping[str, float], MetricSettings], dict[str, float]]


# (the run's settings, the summed sufficient statistics of the metric's corpus breakdown)
# -> a signature string per number it describes, keyed ``metric`` or ``metric.stat``.
Signatures = Callable[[MetricSettings, Mapping[str, float]], dict[str, str]]
# The parts of a corpus breakdown that count the rows by their number of references.
NREFS_PART = "nrefs_"


def reference_count(references: int) -> dict[str, float]:
    """A row's number of references as parts of its sufficient statistics (``nrefs_2: 1``):
    summed over the rows, they count the rows with each number of references."""
    return {f"{NREFS_PART}{references}": 1.0}


def nrefs(sums: Mapping[str, float]) -> str:
    """The ``nrefs`` of a signature from summed statistics, by sacrebleu's convention: the
    number of references when every row has the same, ``var`` when they differ (and ``0``
    when no row counted its references)."""
    counts = sorted(
        int(part[len(NREFS_PART) :])
        for part, rows in sums.items()
        if part.startswith(NREFS_PART) and rows > 0
    )
    if len(counts) > 1:
        return "var"
    return str(counts[0]) if counts else "0"


@dataclass(frozen=True)
class CorpusReduction:
    """How a metric's corpus statistics come from the rows (sacrebleu's corpus BLEU,
    precision and recall from confusion counts): each row records its sufficient statistics
    as the breakdown ``breakdown`` (summed over the rows like any breakdown, so the same
    with and without pytest-xdist), and ``reduce`` turns the sums, with the run's settings,
    into the statistics named in the metric's ``MetricInfo.corpus``."""

    breakdown: str
    reduce: Reduce


@dataclass(frozen=True)
class MetricSpec:
    """One metric fixture, declared once in its family module next to its math.

    ``fixture``: the fixture's name (``latency``); ``records``: every metric it records
    (the first is the one it returns unless the computation names another, e.g.
    ``ndcg@10``); ``requires``: the row fields it reads (a row lacking one errors before
    the test runs); ``compute``: ``(row, ctx, **options) -> Measured``; ``texts``: the
    texts an embedding metric will embed, listed before the rows run so the whole session
    is embedded in one batch; ``options``: the keyword arguments the fixture takes;
    ``corpus``: the reduction of its corpus statistics; ``signatures``: the signature
    strings (sacrebleu's) of the numbers it records, from the run's settings and its summed
    corpus statistics, shown beside them in every report so numbers computed differently are
    never compared; ``settings``: its settings table (``[settings.<name>]``, the dataclass
    holding its defaults and checks, the fields that enter a baseline's signature), which
    several fixtures may share (``chrf`` and ``chrf_pp``); ``doc``: what ``pytest
    --fixtures`` shows (definition, range, what it needs); ``version``: bumped when what
    the fixture computes changes under the same settings, so a stored baseline's numbers
    of its records are not compared (its other metrics are), as a user's
    ``metric(version=...)``; ``None`` is the first definition.
    ``untested``: the generated tests the declaration cannot take, each with why
    (``{"properties": "needs an LLM judge server"}``; the keys are ``UNTESTED``: the
    whole property check of ``pytest_ragmetrics.testing.check_metric``, or one of its
    ``PROPERTIES``). ``origin``: where the metric is declared, which an error about
    its values names (``path:line`` for a user's metric; a built-in's is its module).

    Hooks and properties the run reads instead of naming the metric: ``prepare``, work
    done for many rows at once before they run, whose per-row result the computation reads
    from its context (``Preparation``: grounding's pre-scoring of overlaps);
    ``asks_judge``, whether the fixture asks the LLM judge for verdicts under the run's
    settings (the judge's progress line counts the tests that do); ``reads_citations``,
    whether it reads the answer's citation markers (a run where no answer holds one the
    plugin recognises is warned about).
    """

    fixture: str
    doc: str
    records: tuple[MetricInfo, ...]
    requires: tuple[str, ...]
    compute: Compute
    texts: Texts | None = None
    options: tuple[str, ...] = ()
    corpus: CorpusReduction | None = None
    signatures: Signatures | None = None
    version: int | None = None
    settings: SettingsTable[Any] | None = None
    untested: Mapping[str, str] = field(default_factory=dict)
    origin: str | None = None
    prepare: Preparation | None = None
    asks_judge: AsksJudge = never
    reads_citations: bool = False

    def __post_init__(self) -> None:
        unbounded = [info.name for info in self.records if info.range is None]
        if unbounded:
            raise ValueError(
                f"metric fixture {self.fixture!r}: {', '.join(unbounded)} declare no range; "
                "every value a fixture records states the closed interval it lies in"
            )
        self._check_untested()

    def _check_untested(self) -> None:
        """Each opt-out names a generated test (``UNTESTED``) and says why, in words."""
        if not isinstance(self.untested, Mapping):
            raise ValueError(
                f"metric fixture {self.fixture!r}: untested maps a generated test to why the "
                f'metric cannot take it, e.g. {{"properties": "needs an LLM judge server"}}; '
                f"got {self.untested!r}"
            )
        for test, reason in self.untested.items():
            if test not in UNTESTED:
                raise ValueError(
                    f"metric fixture {self.fixture!r}: untested names {test!r}, which is no "
                    f"generated test; they are {', '.join(UNTESTED)}"
                )
            if not isinstance(reason, str) or not reason.strip():
                raise ValueError(
                    f"metric fixture {self.fixture!r}: untested[{test!r}] gives no reason; "
                    "say why the metric cannot take that test"
                )

    @property
    def declared_at(self) -> str:
        """Where the metric is declared: its ``origin``, or the module of its computation
        (a built-in's family module, ``pytest_ragmetrics/metrics/answer.py``)."""
        if self.origin is not None:
            return self.origin
        module = getattr(self.compute, "__module__", None) or "an unknown module"
        return f"{module.replace('.', '/')}.py"

    @functools.cached_property
    def limits(self) -> Mapping[str, tuple[float, float, bool]]:
        """Each recorded metric's range and whether it is binary, by name: what every
        recorded value is checked against (``metrics.values.check_measured``), read once."""
        return {
            info.name: (*(info.range or (-math.inf, math.inf)), info.binary)
            for info in self.records
        }

    @functools.cached_property
    def primary(self) -> str:
        """The recorded metric the fixture returns by default (read on every call of the
        fixture: kept)."""
        return self.records[0].name

    @property
    def docstring(self) -> str:
        """The fixture's ``pytest --fixtures`` text: its definition, how to call it, and the
        row fields it needs."""
        options = "".join(f", {name}=..." for name in self.options)
        return (
            f"{self.doc}\n\nCall ``{self.fixture}(row{options})``: records and returns a Score; "
            f"needs {', '.join(self.requires)}."
        )


def reference_list(references: Sequence[str]) -> list[str]:
    """``references`` of a text metric (ROUGE, BLEU, chrF) as a list: a bare string is a
    ``TypeError`` (it would be read as one reference per character), none a
    ``ValueError``."""
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not a single string")
    listed = list(references)
    if not listed:
        raise ValueError("no reference given: at least one is needed")
    return listed


def golds(row: Row, metric: str) -> list[str]:
    """Every gold alias of the row; answer groups (lists of aliases) are flattened, so a
    metric that takes the best over golds takes it over every alias of every group."""
    gold = row.require("gold", metric)  # its type was validated when the dataset loaded
    if isinstance(gold, str):
        return [gold]
    return [alias for item in gold for alias in ([item] if isinstance(item, str) else item)]


def claim_text(row: Row, metric: str, settings: MetricSettings) -> str:
    """The answer without citation markers: what EM, F1, ROUGE and BLEU compare with the
    gold (which has none)."""
    return strip_citations(row.require("answer", metric), settings.citations)
