"""Numbers in the HTML report, each to its metric's precision.

A number's kind comes from what the metric catalog declares (``metric_info``: whether a
metric is yes/no, whether it is dataset-level) and from the unit its name ends in, which
the catalog's names follow (``latency_ms``, ``judge.avg_latency_ms``; ``tokens``,
``prompt_tokens``, ``judge.tokens``), so no list of metrics is kept here:

* ``score``: a per-row metric's mean, percentile or value (rates, F1, overlap, nDCG, also
  BLEU's 0-100 and a 1-5 judge score), 3 decimals;
* ``count``: a ``count`` statistic, the sum of a yes/no metric, a yes/no row value; an
  integer;
* ``tokens``: 1 decimal for a statistic, and one row's count as the integer it is;
  ``ms``: as in the terminal and Markdown tables (``reports.columns.ms``): whole from
  1 ms up, two decimals below (a cached call's ``0.27`` must not read as ``0``);
* ``ratio`` and ``delta``: a compared system's ``vs_baseline`` statistics (``*_ratio``,
  ``*_delta``), ``1.10×`` and ``+0.250``;
* ``number``: anything else (an unknown metric, a dataset-level statistic): an integer when
  the value is one, else 3 decimals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pytest_ragmetrics.metrics.base import MetricInfo
from pytest_ragmetrics.metrics.catalog import VS_BASELINE
from pytest_ragmetrics.metrics.registry import UnknownAggregate, metric_info, split_aggregate
from pytest_ragmetrics.reports.columns import NOT_COMPUTED, delta, ms, number, ratio

Kind = Literal["score", "count", "tokens", "ms", "ratio", "delta", "number"]


def _info(metric: str) -> MetricInfo | None:
    try:
        return metric_info(metric)
    except UnknownAggregate:
        return None  # recorded by a user's own code


def metric_kind(metric: str, stat: str | None = None) -> Kind:
    """The kind of ``metric.stat`` (module docstring); ``stat`` ``None`` for one row's
    value."""
    if stat == "count":
        return "count"
    info = _info(metric)
    dataset = info is not None and info.dataset is not None
    name = stat if dataset and stat else metric  # a dataset-level statistic names its unit
    if name.endswith("_ms"):
        return "ms"
    if name.endswith("tokens"):
        return "tokens" if stat is not None else "number"  # one row's count: an integer
    if info is None:
        return "number"
    if metric == VS_BASELINE and name.endswith(("_ratio", "_delta")):
        return "ratio" if name.endswith("_ratio") else "delta"
    if dataset:
        return "number"
    if info.binary and stat in (None, "sum"):
        return "count"
    return "number" if stat == "sum" else "score"


def _general(value: float) -> str:
    return f"{value:.0f}" if value.is_integer() else f"{value:.3f}"


FORMATS: dict[Kind, Callable[[float], str]] = {
    "score": lambda value: f"{value:.3f}",
    "count": lambda value: f"{value:.0f}",
    "tokens": lambda value: f"{value:.1f}",
    "ms": ms,
    "ratio": ratio,
    "delta": delta,
    "number": _general,
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
