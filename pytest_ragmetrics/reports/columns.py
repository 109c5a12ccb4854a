"""The columns of the report tables: heading, the aggregate shown and its format, as
each metric declares them (``Presentation.columns``, ``reports.presentation``).

A column reads an eval's view of the report model (``reports.model.EvalView``), so the
terminal, Markdown and HTML tables show the same numbers the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pytest_ragmetrics.metrics.base import MetricInfo, NumberFormat
from pytest_ragmetrics.metrics.prices import dollars
from pytest_ragmetrics.reports.model import EvalView, IntervalView
from pytest_ragmetrics.reports.presentation import Shown, columns, versus_columns

NOT_COMPUTED = "—"

Entry = EvalView  # one eval (or one system of an eval) of the report


def score(value: float) -> str:
    return f"{value:.3f}"


def amount(value: float) -> str:
    return f"{value:.1f}"


def ms(value: float) -> str:
    """Milliseconds: whole from 1 ms up (559.4 -> ``559``); below 1 ms to two decimals
    (0.27 -> ``0.27``), as a call served from memory or a cache takes, so a fast system
    never reads as ``0``; below 0.005 ms, ``<0.01``; exactly 0, ``0``."""
    if value == 0:
        return "0"
    if value >= 0.995 or value < 0:
        return f"{value:.0f}"
    if value >= 0.005:
        return f"{value:.2f}"
    return "<0.01"


def count(value: float) -> str:
    return f"{value:.0f}"


def ratio(value: float) -> str:
    return f"{value:.2f}×"


def delta(value: float) -> str:
    return f"{value:+.3f}"


def number(value: object) -> float | None:
    """``value`` as a float when it is a number (not a bool), else ``None``."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def stat(entry: Entry, metric: str, name: str) -> float | None:
    """An aggregate (``metric.name``) of an entry, ``None`` when it has none."""
    return number(entry.stat(metric, name))


def interval(entry: Entry, metric: str, name: str = "mean") -> IntervalView | None:
    """The entry's confidence interval of ``metric.name`` for this run alone (its
    ``intervals``; a rate is its 0/1 metric's mean), ``None`` when it has none."""
    return entry.interval(metric, name)


def interval_levels(entries: Iterable[Entry]) -> set[float]:
    """The confidences of the entries' intervals (one, unless a report mixes runs)."""
    return {
        float(drawn.confidence)
        for entry in entries
        for stats in (entry.intervals or {}).values()
        for drawn in stats.values()
        if number(drawn.confidence) is not None
    }


def hundredths(value: float) -> str:
    return f"{value:.2f}"


def general(value: float) -> str:
    """An integer when the value is one, else 3 decimals."""
    return f"{value:.0f}" if value.is_integer() else f"{value:.3f}"


# How a declared ``NumberFormat`` writes a statistic.
FORMATS: dict[NumberFormat, Callable[[float], str]] = {
    "score": score,
    "amount": amount,
    "hundredths": hundredths,
    "count": count,
    "integer": amount,
    "ms": ms,
    "ratio": ratio,
    "delta": delta,
    "number": general,
    "usd": dollars,
}


@dataclass(frozen=True)
class Column:
    """A table column: heading, the aggregate it shows and how to format it."""

    heading: str
    metric: str
    stat: str
    fmt: Callable[[float], str]

    def cell(self, entry: Entry) -> str:
        value = stat(entry, self.metric, self.stat)
        return NOT_COMPUTED if value is None else self.fmt(value)


def _columns(shown: Iterable[Shown]) -> tuple[Column, ...]:
    return tuple(Column(s.heading, s.metric, s.stat, FORMATS[s.format]) for s in shown)


def main_columns() -> tuple[Column, ...]:
    """The first table of the terminal and the Markdown summary (``main`` columns)."""
    return _columns(columns("main"))


def appendix_columns() -> tuple[Column, ...]:
    """The terminal's second table (``appendix`` columns)."""
    return _columns(columns("appendix"))


def suite_columns(suite: MetricInfo) -> tuple[Column, ...]:
    """The table of a dataset-level suite (its ``suite`` columns)."""
    return _columns(shown for shown in columns("suite") if shown.metric == suite.name)


def system_columns() -> tuple[Column, ...]:
    """The HTML report's per-system table: the main columns and the ``systems`` ones,
    by priority."""
    return _columns(columns("main", "systems"))


def vs_columns() -> tuple[Column, ...]:
    """Beside them, for a system compared with the eval's reference system: its
    ``vs_baseline`` statistics."""
    return _columns(versus_columns())
