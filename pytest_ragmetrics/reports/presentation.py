"""What the reports show of each metric, read from the metrics' own declarations
(``MetricInfo.presentation``, declared next to each metric in its family's module, and
in a user's ``@metric``): table columns, plots, ``vs_baseline`` statistics and the roles
the transformations read. No metric is named here or in any renderer.

Every question is asked of the catalog when a report is rendered (``declared``, the one
place that reads it), so a user's metric declared with a presentation is shown too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pytest_ragmetrics.metrics.base import MetricInfo, NumberFormat, Table
from pytest_ragmetrics.metrics.catalog import VERSUS, VS_BASELINE, in_force
from pytest_ragmetrics.metrics.registry import UnknownAggregate, metric_info


def declared() -> Iterator[MetricInfo]:
    """Every metric of the run's catalog (the one in force), in its declared order."""
    yield from list(in_force().metrics.values())


def info(metric: str) -> MetricInfo | None:
    """The declaration of ``metric`` (``ndcg@10`` is ``ndcg``'s), ``None`` for a metric
    recorded by a user's own code without one."""
    try:
        return metric_info(metric)
    except UnknownAggregate:
        return None


@dataclass(frozen=True)
class Shown:
    """A table column as a renderer reads it: the aggregate ``metric.stat``."""

    heading: str
    metric: str
    stat: str
    format: NumberFormat


def columns(*tables: Table) -> tuple[Shown, ...]:
    """The columns of ``tables`` (one table, or the HTML systems table's ``main`` and
    ``systems``), in the order of their declared priority, then of the catalog."""
    found = [
        (column.priority, index, Shown(heading, found.name, column.stat, column.format))
        for index, found in enumerate(declared())
        for column in found.presentation.columns
        if column.table in tables
        for heading in (column.heading or found.label,)
    ]
    return tuple(shown for *_, shown in sorted(found, key=lambda item: item[:2]))


def tabled(*tables: Table) -> frozenset[str]:
    """The metrics some column of ``tables`` shows."""
    return frozenset(shown.metric for shown in columns(*tables))


def versus_columns() -> tuple[Shown, ...]:
    """A compared system's ``vs_baseline`` columns: ``Tokens mean ×``, ``Δ F1``."""
    found = []
    for stat, metric, versus in VERSUS:
        declaration = info(metric)
        label = declaration.label if declaration is not None else metric
        if versus.how == "ratio":
            heading = f"{label} {versus.stat} ×"
        else:
            heading = f"Δ {label}" + ("" if versus.stat == "mean" else f" {versus.stat}")
        found.append(Shown(heading, VS_BASELINE, stat, versus.how))
    return tuple(found)


def _ordered(place: str) -> tuple[str, ...]:
    ranked = [
        (getattr(found.presentation, place), index, found.name)
        for index, found in enumerate(declared())
        if getattr(found.presentation, place) is not None
    ]
    return tuple(name for *_, name in sorted(ranked))


def distribution_metrics() -> tuple[str, ...]:
    """The per-row metrics whose distributions the HTML report draws, in order."""
    return _ordered("distribution")


def bar_metrics() -> tuple[str, ...]:
    """The 0-1 metrics drawn as bars for an eval of several systems, in order."""
    return _ordered("bar")


def not_row_values() -> frozenset[str]:
    """The metrics the HTML rows table and the plots leave out (the row's status says
    them)."""
    return frozenset(found.name for found in declared() if not found.presentation.row_value)


def unlisted() -> frozenset[str]:
    """The metrics "More metrics" leaves out although no table shows them."""
    return frozenset(found.name for found in declared() if not found.presentation.listed)


def pareto_axes() -> tuple[MetricInfo, MetricInfo] | None:
    """The quality (higher is better) and cost (lower is better) metrics of the Pareto
    view, ``None`` unless exactly one of each is declared."""
    quality = [found for found in declared() if found.presentation.pareto == "quality"]
    cost = [found for found in declared() if found.presentation.pareto == "cost"]
    return (quality[0], cost[0]) if len(quality) == 1 and len(cost) == 1 else None


def suites() -> tuple[MetricInfo, ...]:
    """The dataset-level metrics with a table of their own (``suite`` columns)."""
    return tuple(
        found
        for found in declared()
        if any(column.table == "suite" for column in found.presentation.columns)
    )
