"""A metric declared in the user's own code: one function of a row, turned into the same
``MetricSpec`` the built-in families declare, so the catalog, the fixtures, the gates,
the baselines and the reports treat it like ``f1``.

The function takes the test's ``Row`` and returns a number, or ``(number, evidence)``.
Its value is checked on every row: a value that is not a real number, is NaN or
infinite, or lies outside the declared range (0 or 1 for a binary metric) makes the row
error naming the metric, as does an exception the function raises; a value is never
recorded silently wrong. Nothing here imports pytest: the decorator that turns a
declaration into a fixture is ``pytest_ragmetrics.plugin.custom``.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    DatasetMeasured,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
)

# row -> value, or (value, evidence)
MetricFunction = Callable[[Row], Any]
# rows -> {statistic: value}
DatasetFunction = Callable[[Sequence[Row]], Mapping[str, Any]]


class DeclarationError(ValueError):
    """A custom metric's declaration is malformed, or its name is taken."""


class CustomMetricError(RowError):
    """A custom metric failed on a row: it raised, or returned no usable value."""


@dataclass(frozen=True)
class CustomMetric:
    """A per-row metric declared in user code.

    ``bounds``: the closed interval every value must lie in (``None``: any finite
    number); a ``binary`` metric's values are 0 or 1 and it gains the ``rate`` statistic.
    ``origin``: where it was declared (``path:line``), which every error names.
    """

    name: str
    function: MetricFunction
    requires: tuple[str, ...]
    bounds: tuple[float, float] | None
    binary: bool
    description: str
    doc: str
    origin: str

    def spec(self) -> MetricSpec:
        """The catalog declaration: the same shape as a built-in metric's."""
        return MetricSpec(
            self.name,
            self.doc,
            (MetricInfo(self.name, self.description, binary=self.binary),),
            self.requires,
            self.measure,
        )

    def measure(self, row: Row, ctx: MetricContext) -> Measured:
        """Call the function on ``row`` and check what it returned."""
        for name in self.requires:  # a row built by hand (a bulk batch) is checked too
            row.require(name, self.name)
        try:
            returned = self.function(row)
        except RowError:
            raise
        except Exception as error:
            raise CustomMetricError(
                f"{self.name} ({self.origin}) raised {type(error).__name__}: {error}"
            ) from error
        value, evidence = self._checked(returned)
        return Measured({self.name: value}, evidence)

    def _checked(self, returned: object) -> tuple[float, str]:
        value, evidence = returned, f"{self.name} gave no evidence"
        if isinstance(returned, tuple):
            if len(returned) != 2 or not isinstance(returned[1], str):
                raise self._bad(returned, "a tuple must be (value, evidence string)")
            value, evidence = returned
        if not isinstance(value, numbers.Real):
            raise self._bad(value, "not a real number")
        number = float(value)
        if not math.isfinite(number):
            raise self._bad(value, "not finite")
        if self.binary and number not in (0.0, 1.0):
            raise self._bad(value, "a binary metric returns 0 or 1")
        if self.bounds is not None and not self.bounds[0] <= number <= self.bounds[1]:
            low, high = self.bounds
            raise self._bad(value, f"outside its range [{low:g}, {high:g}]")
        return number, evidence

    def _bad(self, value: object, why: str) -> CustomMetricError:
        return CustomMetricError(
            f"{self.name} ({self.origin}) returned {value!r}: {why}; "
            "return a finite number within the declared range, or (number, evidence)"
        )


@dataclass(frozen=True)
class CustomDatasetMetric:
    """A dataset-level metric declared in user code: one set of named statistics over
    all the rows of an eval (like ``embedding_space``), gated as ``name.stat``."""

    name: str
    function: DatasetFunction
    requires: tuple[str, ...]
    stats: tuple[str, ...]
    description: str
    doc: str
    origin: str

    def info(self) -> MetricInfo:
        return MetricInfo(self.name, self.description, dataset=self.stats)

    def measure(self, rows: Sequence[Row]) -> DatasetMeasured:
        """Call the function on every row at once and check the statistics it returned:
        exactly the declared ones, each a finite number."""
        for row in rows:
            for name in self.requires:
                row.require(name, self.name)
        try:
            returned = self.function(rows)
        except RowError:
            raise
        except Exception as error:
            raise CustomMetricError(
                f"{self.name} ({self.origin}) raised {type(error).__name__}: {error}"
            ) from error
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
            if not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
                raise self._bad(f"returned {stat} = {value!r}: not a finite number")
            stats[stat] = float(value)
        return stats

    def _bad(self, what: str) -> CustomMetricError:
        return CustomMetricError(f"{self.name} ({self.origin}) {what}")


def origin_of(function: Callable[..., Any]) -> str:
    """``path:line`` of the function's definition (its first decorator's line), the path
    relative to the working directory when it lies below it."""
    code = getattr(function, "__code__", None)
    source = inspect.getsourcefile(function) if code is not None else None
    if source is None or code is None:
        return getattr(function, "__qualname__", repr(function))
    path = Path(source).resolve()
    try:
        shown = path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = str(path)
    return f"{shown}:{code.co_firstlineno}"


def declare(
    function: MetricFunction,
    name: str | None,
    requires: Sequence[str],
    bounds: tuple[float, float] | None,
    binary: bool,
) -> CustomMetric:
    """Check a declaration and build its ``CustomMetric``; ``DeclarationError`` names
    where it was declared and what to change."""
    origin = origin_of(function)
    name = function.__name__ if name is None else name
    _check_name(origin, name)
    _check_requires(origin, name, requires)
    checked = _bounds(origin, name, bounds, binary)
    doc = _doc(origin, name, function)
    description = doc.splitlines()[0]
    shown = f"range [{checked[0]:g}, {checked[1]:g}]" if checked else "any finite number"
    text = f"{doc}\n\n{'0 or 1' if binary else shown}; declared at {origin}."
    return CustomMetric(name, function, tuple(requires), checked, binary, description, text, origin)


def declare_dataset(
    function: DatasetFunction, name: str | None, requires: Sequence[str], stats: Sequence[str]
) -> CustomDatasetMetric:
    """Check a dataset-level declaration and build its ``CustomDatasetMetric``."""
    origin = origin_of(function)
    name = function.__name__ if name is None else name
    _check_name(origin, name)
    _check_requires(origin, name, requires)
    if isinstance(stats, str) or not stats or not all(_statistic(stat) for stat in stats):
        raise DeclarationError(
            f"{origin}: {name}: stats is a tuple of the statistics it returns, each a "
            f"Python identifier, e.g. ('share', 'count'); got {stats!r}"
        )
    doc = _doc(origin, name, function)
    text = f"{doc}\n\nStatistics: {', '.join(stats)}; declared at {origin}."
    return CustomDatasetMetric(
        name, function, tuple(requires), tuple(stats), doc.splitlines()[0], text, origin
    )


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
