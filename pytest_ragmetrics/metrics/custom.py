"""A metric declared in the user's own code: one function of a row, turned into the same
``MetricSpec`` the built-in families declare, so the catalog, the fixtures, the gates,
the baselines and the reports treat it like ``f1``.

The function takes the test's ``Row`` (and, for a metric declared with ``settings=``, the
run's settings of its ``[settings.<name>]`` table as ``settings``) and returns a number,
``(number, evidence)``, or a ``RowValue``: a metric with corpus statistics (``corpus=``)
returns the row's sufficient statistics in one, summed over the rows and reduced by the
declared functions, as BLEU's corpus score is. Its value is checked on every row: a value
that is not a real number, is NaN or infinite, is too large for a float (an integer of 400
digits), or lies outside the declared range (0 or 1 for a binary metric) makes the row error
naming the metric, as does an exception the function raises; a value is never recorded
silently wrong. The function is given the row read-only (``data.readonly``): a change it
tries is such an exception, and never reaches the row's other metrics. A dataset-level
metric (``CustomDatasetMetric``) is a function of all the rows of an eval returning named
statistics; its ``settings=`` and ``presentation=`` are checked by the same code as a
per-row metric's and mean the same. Nothing here imports
pytest: the decorator that turns a declaration into a fixture is
``pytest_ragmetrics.plugin.custom``.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.data.readonly import read_only
from pytest_ragmetrics.files import nearest_thresholds
from pytest_ragmetrics.metrics.base import (
    DEFAULT_PRESENTATION,
    RATE,
    STATS,
    UNIT,
    CorpusReduction,
    DatasetMeasured,
    Evidence,
    Kind,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Presentation,
    Range,
)
from pytest_ragmetrics.metrics.setting import SettingsTable
from pytest_ragmetrics.metrics.values import (
    as_number,
    described,
    too_large,
    unusable,
    value_problem,
)

# row -> value, (value, evidence) or RowValue
MetricFunction = Callable[[Row], Any]
# the rows' summed sufficient statistics -> one corpus statistic
CorpusFunction = Callable[[Mapping[str, float]], float]
# rows -> {statistic: value}; (rows, settings) -> ... when declared with settings=
DatasetFunction = Callable[[Sequence[Row]], Mapping[str, Any]]


class DeclarationError(ValueError):
    """A custom metric's declaration is malformed, or its name is taken."""


class CustomMetricError(RowError):
    """A custom metric failed on a row: it raised, or returned no usable value."""


class CorpusError(ValueError):
    """A custom metric's corpus statistic could not be computed from the summed
    sufficient statistics: its function raised, or returned no finite number."""


@dataclass(frozen=True)
class RowValue:
    """What a metric function may return for a row: its ``value``, the ``evidence`` the
    reports show (a string, or an ``Evidence`` that builds it only when read), and
    ``stats``, the row's sufficient statistics (``{"tp": 2, "fp": 1}``) that a metric
    declared with ``corpus=`` sums over the rows."""

    value: float
    evidence: str | Evidence | None = None
    stats: Mapping[str, float] | None = None


@dataclass(frozen=True)
class CustomMetric:
    """A per-row metric declared in user code.

    ``bounds``: the closed interval every value must lie in (``None``: any finite
    number); a ``binary`` metric's values are 0 or 1 and it gains the ``rate`` statistic.
    ``origin``: where it was declared (``path:line``), which every error names.
    ``corpus``: statistic name -> its function of the rows' summed sufficient statistics
    (each row returns a ``RowValue`` with ``stats``).
    """

    name: str
    function: MetricFunction
    requires: tuple[str, ...]
    bounds: tuple[float, float] | None
    binary: bool
    description: str
    doc: str
    origin: str
    corpus: Mapping[str, CorpusFunction] = field(default_factory=dict)
    # Its [settings.<name>] table: the function is called as function(row, settings).
    settings: SettingsTable[Any] | None = None
    # How the reports show it (its label, table columns, plots), as a built-in's declares.
    presentation: Presentation = DEFAULT_PRESENTATION

    @property
    def kind(self) -> Kind:
        """What its values are: 0/1, with corpus statistics, or any number in range."""
        if self.binary:
            return "binary"
        return "corpus" if self.corpus else "continuous"

    @property
    def range(self) -> Range:
        """The closed interval its values lie in: 0-1 for a binary metric, its bounds, or
        every finite number."""
        if self.binary:
            return UNIT
        return self.bounds if self.bounds is not None else (-math.inf, math.inf)

    @property
    def breakdown(self) -> str:
        """The breakdown the rows' sufficient statistics are recorded (and summed) as."""
        return f"{self.name}_stats"

    @functools.cached_property
    def info(self) -> MetricInfo:
        """What it records, as a built-in metric's ``MetricInfo``: its values are checked
        against it (``metrics.values``) as every metric's are."""
        corpus = tuple(self.corpus)
        return MetricInfo(
            self.name,
            self.description,
            kind=self.kind,
            range=self.range,
            corpus=corpus,
            presentation=self.presentation,
        )

    def spec(self) -> MetricSpec:
        """The catalog declaration: the same shape as a built-in metric's."""
        reduction = CorpusReduction(self.breakdown, self.reduce) if self.corpus else None
        return MetricSpec(
            self.name,
            self.doc,
            (self.info,),
            self.requires,
            self.measure,
            corpus=reduction,
            settings=self.settings,
            origin=self.origin,
        )

    def reduce(self, sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
        """The corpus statistics from the rows' summed sufficient statistics; a function
        that raises or returns no finite number is a ``CorpusError`` naming the statistic
        and the sums it was given (no run setting changes them)."""
        reduced: dict[str, float] = {}
        for stat, function in self.corpus.items():
            try:
                value = function(dict(sums))
            except Exception as error:
                why = f"raised {type(error).__name__}: {error} (at {_raised_at(error)})"
                raise self._corpus_error(stat, sums, why) from error
            number = as_number(value)
            if number is None:
                why = unusable(value, "not a finite number")
                raise self._corpus_error(stat, sums, f"returned {described(value)}, {why}")
            reduced[stat] = number
        return reduced

    def _corpus_error(self, stat: str, sums: Mapping[str, float], why: str) -> CorpusError:
        shown = ", ".join(f"{part}={total:g}" for part, total in sorted(sums.items()))
        return CorpusError(
            f"{self.name}.{stat} ({self.origin}) {why}, given the summed statistics "
            f"{{{shown}}}: return a finite number for every sum the rows can give (a zero "
            "denominator included)"
        )

    def measure(self, row: Row, ctx: MetricContext) -> Measured:
        """Call the function on ``row`` and check what it returned."""
        # a row built by hand (a bulk batch) is checked too; the function is given the row
        # read-only, so what it does to it cannot change the row's other metrics
        view = _read_only(row, ctx)
        function: Callable[..., Any] = self.function
        if self.settings is not None:
            function = functools.partial(function, settings=ctx.settings.table(self.settings))
        returned = _call(self.name, self.origin, self.requires, [row], function, view)
        if isinstance(returned, RowValue):
            value, evidence = self._checked(returned.value, returned.evidence)
            stats = self._stats(returned.stats)
        else:
            value, evidence = self._checked(returned)
            stats = self._stats(None)
        breakdowns = {self.breakdown: stats} if stats is not None else {}
        return Measured({self.name: value}, evidence, breakdowns)

    def _stats(self, stats: Mapping[str, float] | None) -> dict[str, float] | None:
        """The row's sufficient statistics, checked: required (and only allowed) with
        ``corpus=``, each a finite number under a name."""
        if not self.corpus:
            if stats is not None:
                raise self._bad(stats, "stats are summed only for a metric declared with corpus=")
            return None
        if stats is None:
            raise self._bad(
                stats, "a metric declared with corpus= returns RowValue(value, stats={...})"
            )
        if not isinstance(stats, Mapping) or not stats:
            raise self._bad(stats, "stats is a non-empty mapping of name to number")
        checked: dict[str, float] = {}
        for part, total in stats.items():
            if not isinstance(part, str) or not isinstance(total, numbers.Real):
                raise self._bad(stats, f"stats[{part!r}] = {total!r} is not a number by name")
            number = as_number(total)
            if number is None:  # why: too large for a float, or not finite
                huge = too_large(total)
                if huge:
                    raise self._bad(stats, f"stats[{part!r}] is {described(total)}: {huge}")
                raise self._bad(stats, f"stats[{part!r}] is not finite")
            checked[part] = number
        return checked

    def _checked(
        self, returned: object, evidence: str | Evidence | None = None
    ) -> tuple[float, str | Evidence]:
        if evidence is not None and not isinstance(evidence, str | Evidence):
            raise self._bad(evidence, "evidence must be a string or an Evidence")
        value = returned
        evidence = f"{self.name} gave no evidence" if evidence is None else evidence
        if isinstance(returned, tuple):
            if len(returned) != 2 or not isinstance(returned[1], str | Evidence):
                raise self._bad(returned, "a tuple must be (value, evidence string)")
            value, evidence = returned
        why = value_problem(value, self.info)
        if why is not None:
            raise self._bad(value, why)
        return float(value), evidence  # type: ignore[arg-type]  # a real number, checked

    def _bad(self, value: object, why: str) -> CustomMetricError:
        return CustomMetricError(
            f"{self.name} ({self.origin}) returned {described(value)}: {why}; "
            "return a finite number within the declared range, (number, evidence) or a "
            "RowValue"
        )


@dataclass(frozen=True)
class CustomDatasetMetric:
    """A dataset-level metric declared in user code: one set of named statistics over
    all the rows of an eval (like ``embedding_space``), gated as ``name.stat``.

    ``settings`` and ``presentation`` mean what they mean for a per-row ``CustomMetric``:
    its ``[settings.<name>]`` table (the function is then called as
    ``function(rows, settings)``), and how the reports show it.
    """

    name: str
    function: DatasetFunction
    requires: tuple[str, ...]
    stats: tuple[str, ...]
    description: str
    doc: str
    origin: str
    settings: SettingsTable[Any] | None = None
    presentation: Presentation = DEFAULT_PRESENTATION

    def info(self) -> MetricInfo:
        return MetricInfo(
            self.name, self.description, dataset=self.stats, presentation=self.presentation
        )

    def measure(self, rows: Sequence[Row], settings: MetricSettings) -> DatasetMeasured:
        """Call the function on every row at once (with its table of the run's
        ``settings``, when it declares one) and check the statistics it returned: exactly
        the declared ones, each a finite number."""
        # read-only, so what the function does to them cannot reach the row tests' metrics
        views = [read_only(row) for row in rows]
        function: Callable[..., Any] = self.function
        if self.settings is not None:
            function = functools.partial(function, settings=settings.table(self.settings))
        returned = _call(self.name, self.origin, self.requires, rows, function, views)
        stats = self._checked(returned)
        return DatasetMeasured(dict(stats), stats, {})

    def _checked(self, returned: object) -> dict[str, float]:
        if not isinstance(returned, Mapping):
            raise self._bad(f"returned {returned!r}, not a mapping of statistic to number")
        missing = [stat for stat in self.stats if stat not in returned]
        extra = sorted(str(key) for key in returned if key not in self.stats)
        if missing or extra:
            raise self._bad(
                f"returned statistics {sorted(map(str, returned))}; it declared "
                f"{list(self.stats)} (missing {missing}, undeclared {extra})"
            )
        stats: dict[str, float] = {}
        for stat in self.stats:
            value = returned[stat]
            number = as_number(value)
            if number is None:
                why = unusable(value, "not a finite number")
                raise self._bad(f"returned {stat} = {described(value)}: {why}")
            stats[stat] = number
        return stats

    def _bad(self, what: str) -> CustomMetricError:
        return CustomMetricError(f"{self.name} ({self.origin}) {what}")


# Where a row's read-only view is kept for the other metrics of the row (``ctx.memo``).
READ_ONLY_MEMO = "read-only row"


def _read_only(row: Row, ctx: MetricContext) -> Row:
    """``row`` read-only (``data.readonly``), built once for the row's custom metrics."""
    kept = ctx.memo.get(READ_ONLY_MEMO)
    if kept is not None and kept[0] is row:
        return kept[1]  # type: ignore[no-any-return]
    view = read_only(row)
    ctx.memo[READ_ONLY_MEMO] = (row, view)
    return view


def _call(
    name: str,
    origin: str,
    requires: Sequence[str],
    rows: Sequence[Row],
    function: Callable[[Any], Any],
    argument: Any,
) -> Any:
    """``function(argument)`` once every row of ``rows`` has the fields the metric
    requires; an exception it raises (but a row's own error) is the metric's
    ``CustomMetricError``, chained to the cause."""
    for row in rows:
        for needed in requires:
            row.require(needed, name)
    try:
        return function(argument)
    except RowError:
        raise
    except Exception as error:
        raise CustomMetricError(
            f"{name} ({origin}) raised {type(error).__name__}: {error}"
        ) from error


def _raised_at(error: BaseException) -> str:
    """``path:line`` of the innermost frame the exception passed through."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "an unknown line"
    frame = frames[-1]
    return f"{_shown(Path(frame.filename))}:{frame.lineno}"


@functools.lru_cache(maxsize=64)
def _project_folder(folder: Path) -> Path | None:
    """The folder of the thresholds file at or above ``folder``, looked up once per folder
    (a metric's place is shown for each row it errors)."""
    found = nearest_thresholds(folder)
    return found.parent if found is not None else None


def _shown(path: Path) -> str:
    """``path`` relative to its project's root (the folder of the thresholds file above
    it), so the reports name it the same from whatever folder pytest was run; without
    one, relative to the working directory when it lies below it."""
    path = path.resolve()
    for base in (_project_folder(path.parent), Path.cwd().resolve()):
        if base is not None and path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return str(path)


def origin_of(function: Callable[..., Any]) -> str:
    """``path:line`` of the function's definition (its first decorator's line), the path
    as ``_shown`` gives it."""
    code = getattr(function, "__code__", None)
    source = inspect.getsourcefile(function) if code is not None else None
    if source is None or code is None:
        return getattr(function, "__qualname__", repr(function))
    return f"{_shown(Path(source))}:{code.co_firstlineno}"


def declare(
    function: MetricFunction,
    name: str | None,
    requires: Sequence[str],
    bounds: tuple[float, float] | None,
    binary: bool,
    corpus: Mapping[str, CorpusFunction] | None = None,
    settings: type | None = None,
    signed: Sequence[str] | None = None,
    presentation: Presentation | None = None,
) -> CustomMetric:
    """Check a declaration and build its ``CustomMetric``; ``DeclarationError`` names
    where it was declared and what to change."""
    origin = origin_of(function)
    name = function.__name__ if name is None else name
    _check_name(origin, name)
    _check_requires(origin, name, requires)
    checked = _bounds(origin, name, bounds, binary)
    reductions = _corpus(origin, name, corpus, binary)
    table = _settings_table(origin, name, function, settings, signed, "row")
    shown_as = _presentation(origin, name, presentation)
    doc = _doc(origin, name, function)
    description = doc.splitlines()[0]
    shown = f"range [{checked[0]:g}, {checked[1]:g}]" if checked else "any finite number"
    text = f"{doc}\n\n{'0 or 1' if binary else shown}; declared at {origin}."
    if reductions:
        text += f" Corpus statistics: {', '.join(reductions)}."
    text += _settings_note(table)
    return CustomMetric(
        name,
        function,
        tuple(requires),
        checked,
        binary,
        description,
        text,
        origin,
        reductions,
        table,
        shown_as,
    )


def _presentation(origin: str, name: str, presentation: object) -> Presentation:
    """The declared ``Presentation``, or the default one (``None``)."""
    if presentation is None:
        return DEFAULT_PRESENTATION
    if not isinstance(presentation, Presentation):
        raise DeclarationError(
            f"{origin}: {name}: presentation is {type(presentation).__name__}, not a "
            "Presentation: give presentation=pytest_ragmetrics.Presentation(...)"
        )
    return presentation


def _settings_table(
    origin: str,
    name: str,
    function: Callable[..., Any],
    settings: type | None,
    signed: Sequence[str] | None,
    argument: str,
) -> SettingsTable[Any] | None:
    """The metric's ``[settings.<name>]`` table, checked: a frozen dataclass with a default
    for every field, ``signed`` naming its fields, and a function that takes them as
    ``settings`` after its ``argument`` (``row`` for a per-row metric, ``rows`` for a
    dataset-level one); one check for both kinds, so both refuse the same mistakes in
    the same words."""
    if settings is None:
        if signed is not None:
            raise DeclarationError(
                f"{origin}: {name}: signed names fields of its settings, and it has none: "
                "give settings=<a frozen dataclass>, or drop signed"
            )
        return None
    try:
        table: SettingsTable[Any] = SettingsTable(
            name, settings, None if signed is None else tuple(signed)
        )
    except (TypeError, ValueError) as error:
        raise DeclarationError(f"{origin}: {name}: {error}") from None
    try:
        inspect.signature(function).bind(None, settings=None)
    except TypeError:
        raise DeclarationError(
            f"{origin}: {name} is declared with settings=, so it is called as "
            f"{name}({argument}, settings): give the function a second parameter named "
            "settings"
        ) from None
    except ValueError:  # a callable without a signature: it is called and may fail then
        pass
    return table


def _settings_note(table: SettingsTable[Any] | None) -> str:
    """What a declaration's ``pytest --fixtures`` text says of its settings table."""
    if table is None:
        return ""
    return f" Settings: [settings.{table.name}] ({', '.join(table.fields)})."


def declare_dataset(
    function: DatasetFunction,
    name: str | None,
    requires: Sequence[str],
    stats: Sequence[str],
    settings: type | None = None,
    signed: Sequence[str] | None = None,
    presentation: Presentation | None = None,
) -> CustomDatasetMetric:
    """Check a dataset-level declaration and build its ``CustomDatasetMetric``;
    ``settings``, ``signed`` and ``presentation`` are checked as ``declare`` checks a
    per-row metric's."""
    origin = origin_of(function)
    name = function.__name__ if name is None else name
    _check_name(origin, name)
    _check_requires(origin, name, requires)
    if isinstance(stats, str) or not stats or not all(_statistic(stat) for stat in stats):
        raise DeclarationError(
            f"{origin}: {name}: stats is a tuple of the statistics it returns, each a "
            f"Python identifier, e.g. ('share', 'count'); got {stats!r}"
        )
    table = _settings_table(origin, name, function, settings, signed, "rows")
    shown_as = _presentation(origin, name, presentation)
    doc = _doc(origin, name, function)
    text = f"{doc}\n\nStatistics: {', '.join(stats)}; declared at {origin}."
    text += _settings_note(table)
    return CustomDatasetMetric(
        name,
        function,
        tuple(requires),
        tuple(stats),
        doc.splitlines()[0],
        text,
        origin,
        table,
        shown_as,
    )


def check_version(origin: str, name: str, version: object) -> str | None:
    """A declaration's ``version`` as the baseline signature keeps it: a string or a whole
    number, ``None`` when it has none."""
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, str | int) or str(version) == "":
        raise DeclarationError(
            f"{origin}: {name}: version is a string or a whole number you change when the "
            f"metric computes something else, e.g. version=2; got {version!r}"
        )
    return str(version)


def _statistic(stat: object) -> bool:
    return isinstance(stat, str) and stat.isidentifier()


def _check_name(origin: str, name: object) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise DeclarationError(
            f"{origin}: metric name {name!r} is not a Python identifier (letters, digits, "
            "underscores, not starting with one): gates name it as name.stat"
        )


def _check_requires(origin: str, name: str, requires: Sequence[str]) -> None:
    if isinstance(requires, str) or not all(isinstance(field, str) for field in requires):
        raise DeclarationError(
            f"{origin}: {name}: requires is a tuple of row field names, e.g. ('answer',)"
        )


def _corpus(
    origin: str, name: str, corpus: Mapping[str, CorpusFunction] | None, binary: bool
) -> dict[str, CorpusFunction]:
    """The corpus statistics, checked: each an identifier no per-row statistic has, with a
    function of the summed statistics."""
    if corpus is None:
        return {}
    if not isinstance(corpus, Mapping) or not corpus:
        raise DeclarationError(
            f"{origin}: {name}: corpus maps each corpus statistic's name to its function of "
            f"the summed row statistics, e.g. {{'micro_f1': micro_f1}}; got {corpus!r}"
        )
    taken = (*STATS, *((RATE,) if binary else ()))
    for stat, function in corpus.items():
        if not _statistic(stat) or stat in taken:
            raise DeclarationError(
                f"{origin}: {name}: corpus statistic {stat!r} must be a Python identifier "
                f"other than the per-row statistics ({', '.join(taken)})"
            )
        if not callable(function):
            raise DeclarationError(
                f"{origin}: {name}: corpus statistic {stat!r} maps to {function!r}, not a "
                "function of the summed statistics"
            )
    return dict(corpus)


def _doc(origin: str, name: str, function: Callable[..., Any]) -> str:
    doc = inspect.cleandoc(function.__doc__ or "")
    if not doc:
        raise DeclarationError(
            f"{origin}: {name} has no docstring: give it one; its first line is the "
            "description the reports show, the whole is its `pytest --fixtures` text"
        )
    return doc


def _bounds(
    origin: str, name: str, bounds: tuple[float, float] | None, binary: bool
) -> tuple[float, float] | None:
    if bounds is None:
        return (0.0, 1.0) if binary else None
    try:
        low, high = (float(bound) for bound in bounds)
    except (TypeError, ValueError):
        raise DeclarationError(
            f"{origin}: {name}: range is (low, high), two numbers; got {bounds!r}"
        ) from None
    if math.isnan(low) or math.isnan(high) or low > high:
        raise DeclarationError(f"{origin}: {name}: range {bounds!r} is empty; give low <= high")
    if binary and (low, high) != (0.0, 1.0):
        raise DeclarationError(
            f"{origin}: {name}: a binary metric's range is (0, 1); got {bounds!r}"
        )
    return low, high
