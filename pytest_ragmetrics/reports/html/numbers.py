"""Numbers in the HTML report, each to its metric's precision.

A number's kind comes from what the metric declares (``metric_info``: whether it is
yes/no, whether it is dataset-level, and its ``Presentation.format``, or for a
dataset-level statistic ``Presentation.formats``), so no list of metrics is kept here:

* ``score``: a per-row metric's mean, percentile or value (rates, F1, overlap, nDCG, also
  BLEU's 0-100 and a 1-5 judge score), 3 decimals;
* ``count``: a ``count`` statistic, the sum of a yes/no metric, a yes/no row value; an
  integer;
* ``integer`` (a metric declared so, as ``tokens``): 1 decimal for a statistic, and one
  row's count as the integer it is; ``ms`` (``latency_ms``, ``judge.avg_latency_ms``): as
  in the terminal and Markdown tables (``reports.columns.ms``): whole from 1 ms up, two
  decimals below (a cached call's ``0.27`` must not read as ``0``);
* ``ratio`` and ``delta``: a compared system's ``vs_baseline`` statistics, ``1.10×`` and
  ``+0.250``;
* ``usd`` (``cost_usd``, ``judge.cost_usd``): US dollars to three significant digits,
  ``$0.000270``, as in every report (``metrics.prices.dollars``);
* ``number``: anything else (an unknown metric, a dataset-level statistic): an integer when
  the value is one, else 3 decimals.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_ragmetrics.metrics.base import NumberFormat
from pytest_ragmetrics.metrics.prices import dollars
from pytest_ragmetrics.metrics.registry import UnknownAggregate, split_aggregate
from pytest_ragmetrics.reports.columns import NOT_COMPUTED, delta, ms, number, ratio
from pytest_ragmetrics.reports.presentation import info

Kind = NumberFormat


def metric_kind(metric: str, stat: str | None = None) -> Kind:
    """The kind of ``metric.stat`` (module docstring); ``stat`` ``None`` for one row's
    value."""
    if stat == "count":
        return "count"
    found = info(metric)
    if found is None:
        return "number"
    if found.dataset is not None:  # a dataset-level statistic has its own format
        declared = found.presentation.formats.get(stat) if stat else None
    else:
        declared = found.presentation.format
    if declared == "integer" and stat is None:
        return "number"  # one row's count: an integer
    if declared is not None:
        return declared
    if found.dataset is not None:
        return "number"
    if found.binary and stat in (None, "sum"):
        return "count"
    return "number" if stat == "sum" else "score"


def _general(value: float) -> str:
    return f"{value:.0f}" if value.is_integer() else f"{value:.3f}"


FORMATS: dict[Kind, Callable[[float], str]] = {
    "score": lambda value: f"{value:.3f}",
    "amount": lambda value: f"{value:.1f}",
    "hundredths": lambda value: f"{value:.2f}",
    "count": lambda value: f"{value:.0f}",
    "integer": lambda value: f"{value:.1f}",
    "ms": ms,
    "ratio": ratio,
    "delta": delta,
    "number": _general,
    "usd": dollars,
}


def as_kind(value: object, kind: Kind) -> str:
    """``value`` for a cell, to ``kind``'s precision; ``NOT_COMPUTED`` for ``None``,
    anything not a number as text."""
    if value is None:
        return NOT_COMPUTED
    found = number(value)
    return str(value) if found is None else FORMATS[kind](found)


def formatted(value: object, metric: str, stat: str | None = None) -> str:
    """A value of ``metric.stat`` (``stat`` ``None``: one row's value) for a cell."""
    return as_kind(value, metric_kind(metric, stat))


def plain(value: object) -> str:
    """A number that belongs to no metric (a row count): ``number`` kind."""
    return as_kind(value, "number")


def aggregate(value: object, name: str) -> str:
    """A gate's value, bound or baseline: ``name`` is the gate's aggregate (``f1.mean``,
    ``trust_score``); one the registry does not know is formatted as a plain number."""
    try:
        metric, stat = split_aggregate(name)
    except UnknownAggregate:
        return plain(value)
    return formatted(value, metric, stat)
