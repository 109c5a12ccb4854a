"""The names of the metrics the plugin records, and the statistics a gate may use.

Metric names are public API: thresholds.toml, the JSON report and the terminal table
use them. An aggregate is ``metric.stat`` (``f1.mean``, ``latency_ms.p95``). The names
themselves are declared by the metric families and collected in
``pytest_ragmetrics.metrics.catalog``; this module checks names against a run's
``Catalog``: the one each lookup is handed, else the catalog in force
(``catalog.in_force``: the run's, while it runs). ``METRICS`` is the built-in metrics'
table.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Literal

from pytest_ragmetrics.metrics.base import MetricInfo, Range
from pytest_ragmetrics.metrics.catalog import METRICS, VS_BASELINE, Catalog, in_force
from pytest_ragmetrics.metrics.judge import JUDGE_QUALITY
from pytest_ragmetrics.metrics.trust import TRUST_KEYS

__all__ = [
    "METRICS",
    "VS_BASELINE",
    "IntervalKind",
    "UnknownAggregate",
    "interval_kind",
    "metric_info",
    "per_row",
    "split_aggregate",
    "value_range",
]


class UnknownAggregate(ValueError):
    """An aggregate name that names no known metric or statistic."""


def metric_info(metric: str, catalog: Catalog | None = None) -> MetricInfo:
    """The metric a recorded name is an instance of: ``ndcg@10`` is ``ndcg`` at k = 10;
    ``catalog``: the run's (default: the catalog in force)."""
    known = (catalog or in_force()).metrics
    info = known.get(metric)
    if info is not None:
        if info.cutoff == "required":
            if info.levels:
                raise UnknownAggregate(f"{metric} needs a level, e.g. {_usage(metric, info)}")
            raise UnknownAggregate(f"{metric} needs a cutoff, e.g. {metric}@10")
        return info
    base, at, k = metric.partition("@")
    info = known.get(base)
    if at and info is not None and info.levels:
        if k not in info.levels:
            levels = ", ".join(info.levels)
            raise UnknownAggregate(f"{metric}: the level after @ is one of {levels}")
        return info
    if at and info is not None and info.cutoff != "none":
        if not k.isdigit() or int(k) < 1:
            raise UnknownAggregate(f"{metric}: the cutoff after @ must be an integer >= 1")
        return info
    listed = ", ".join(sorted(_usage(name, info) for name, info in known.items()))
    raise UnknownAggregate(
        f"unknown metric {metric!r}{_did_you_mean(_close_metric(metric, known))}; known "
        f"metrics: {listed}. A metric of your own is "
        "declared with pytest_ragmetrics.metric in the project's root conftest.py or one of "
        "a folder given on the command line, which pytest imports before it reads "
        "thresholds.toml (docs/custom-metrics.md)"
    )


def value_range(metric: str, catalog: Catalog | None = None) -> Range | None:
    """The closed interval of the recorded metric's per-row values, as its declaration
    states it (``ndcg@10`` reads ``ndcg``'s); ``None`` for a dataset-level metric and for
    a name no declaration of ``catalog`` (default: the catalog in force) holds."""
    known = (catalog or in_force()).metrics
    info = known.get(metric) or known.get(metric.split("@", 1)[0])
    return None if info is None else info.range


def _did_you_mean(close: str | None) -> str:
    return f" (did you mean {close}?)" if close else ""


def _close_metric(metric: str, known: Mapping[str, MetricInfo]) -> str | None:
    """The known metric ``metric`` most likely misspells, with its cutoff or level kept
    (``ndgc@10`` -> ``ndcg@10``), ``None`` when none is close."""
    base, at, k = metric.partition("@")
    close = difflib.get_close_matches(base, sorted(known), n=1)
    if not close:
        return None
    info = known[close[0]]
    if at and (info.levels or info.cutoff != "none"):
        return f"{close[0]}@{k}"
    return _usage(close[0], info)


def _usage(name: str, info: MetricInfo) -> str:
    if info.levels:
        return f"{name}@{info.levels[len(info.levels) // 2]}"
    return f"{name}@k" if info.cutoff == "required" else name


def split_aggregate(name: str, catalog: Catalog | None = None) -> tuple[str, str]:
    """``"f1.mean"`` -> ``("f1", "mean")``, checked against the metrics of ``catalog``
    (default: the catalog in force). A Trust-Score
    number may be named alone, as the suite names it: ``"trust_score"`` is
    ``("trust", "trust_score")``; so may the judge-quality numbers (``"error_rate"`` is
    ``("judge", "error_rate")``)."""
    if name in TRUST_KEYS:
        return "trust", name
    if name in JUDGE_QUALITY:
        return "judge", name
    metric, dot, stat = name.rpartition(".")
    if not dot or not metric:
        alone = difflib.get_close_matches(name, sorted({*TRUST_KEYS, *JUDGE_QUALITY}), n=1)
        raise UnknownAggregate(
            f"{name!r} is not of the form metric.stat (e.g. 'f1.mean')"
            + _did_you_mean(alone[0] if alone else None)
        )
    info = metric_info(metric, catalog)
    if stat in info.misleading:
        raise UnknownAggregate(f"{metric}.{stat} is not a gate: {info.misleading[stat]}")
    if stat not in info.stats:
        close = difflib.get_close_matches(stat, info.stats, n=1)
        raise UnknownAggregate(
            f"unknown statistic {stat!r} for {metric}"
            f"{_did_you_mean(close[0] if close else None)}; use one of {', '.join(info.stats)}"
        )
    return metric, stat


def per_row(metric: str, catalog: Catalog | None = None) -> bool:
    """True for a metric aggregated from per-row values (one a user's code records
    included); False for a dataset-level one, whose statistics come as they are."""
    try:
        return metric_info(metric, catalog).dataset is None
    except UnknownAggregate:
        return True


# How a statistic gets a confidence interval (pytest_ragmetrics.inference): from its
# rows' values, from 0/1 values (McNemar, Newcombe, Wilson), or from its rows' summed
# sufficient statistics (a corpus statistic).
IntervalKind = Literal["values", "binary", "corpus"]
_PER_ROW_STATS = ("mean", "rate", "sum", "p50", "p95")


def interval_kind(
    metric: str, stat: str, catalog: Catalog | None = None
) -> tuple[IntervalKind | None, str]:
    """How ``metric.stat`` gets a confidence interval, or ``None`` and why it has none
    (for the reports and for a rule written ``@ 95%``); ``catalog``: the run's (default:
    the catalog in force)."""
    catalog = catalog or in_force()
    try:
        info = metric_info(metric, catalog)
    except UnknownAggregate:
        info = None  # recorded by a user's own code: plain values
    if metric == VS_BASELINE:
        return None, (
            f"{metric}.{stat} is a number derived from two aggregates; gate the metric "
            "itself against baseline for the interval of its change"
        )
    if info is not None and info.dataset is not None:
        return None, (
            f"{metric}.{stat} is computed from the whole set at once, not from rows, so no "
            "interval can be drawn by resampling rows"
        )
    if info is not None and stat in info.derived:
        return None, (
            f"{metric}.{stat} is computed from the rows' details at once, not from per-row "
            "values, so no interval can be drawn by resampling paired rows"
        )
    if stat == "count":
        return (
            None,
            f"{metric}.count is how many rows recorded a value, not a statistic of the values",
        )
    if info is not None and stat in info.corpus:
        if metric not in catalog.corpus_stats:
            return None, f"{metric}.{stat} has no per-row statistics to resample"
        return "corpus", ""
    if stat in _PER_ROW_STATS:
        binary = info is not None and info.binary and stat in ("mean", "rate", "sum")
        return ("binary" if binary else "values"), ""
    return None, f"{metric}.{stat} is not a statistic of the rows' values"
