"""The names of the metrics the plugin records, and the statistics a gate may use.

Metric names are public API: thresholds.toml, the JSON report and the terminal table
use them. An aggregate is ``metric.stat`` (``f1.mean``, ``latency_ms.p95``).
"""

from __future__ import annotations

from dataclasses import dataclass

STATS = ("mean", "sum", "count", "p50", "p95")
RATE = "rate"  # = mean, offered for 0/1 metrics


@dataclass(frozen=True)
class MetricInfo:
    """A recorded metric: its name, what it means, and whether it is 0/1 per row."""

    name: str
    description: str
    binary: bool = False

    @property
    def stats(self) -> tuple[str, ...]:
        return (*STATS, RATE) if self.binary else STATS


METRICS: dict[str, MetricInfo] = {
    info.name: info
    for info in (
        MetricInfo("em", "exact match with any gold after SQuAD normalisation", binary=True),
        MetricInfo("f1", "SQuAD token F1, max over golds"),
        MetricInfo("abstain", "the answer abstains (all sentences IDK)", binary=True),
        MetricInfo("idk_citation", "an IDK sentence carries a citation", binary=True),
        MetricInfo("tokens", "prompt + completion tokens over every call of the query"),
        MetricInfo("prompt_tokens", "prompt tokens over every call of the query"),
        MetricInfo("completion_tokens", "completion tokens over every call of the query"),
        MetricInfo("latency_ms", "end-to-end latency of the query, milliseconds"),
        MetricInfo("overlap", "share of claim sentences supported by their one cited context"),
        MetricInfo("overlap_answered", "overlap over the rows that do not abstain"),
        MetricInfo("faithfulness", "fallback: 0.6 + 0.4 x overlap, or the abstention rule"),
        MetricInfo("semantic_similarity", "cosine of answer and gold embeddings, best gold"),
        MetricInfo("dot_similarity", "dot product of answer and gold embeddings, best gold"),
        MetricInfo("euclidean_distance", "distance of answer and gold embeddings, nearest gold"),
        MetricInfo("errors", "the row errored (bad data or a metric input missing)", binary=True),
    )
}


class UnknownAggregate(ValueError):
    """An aggregate name that names no known metric or statistic."""


def split_aggregate(name: str) -> tuple[str, str]:
    """``"f1.mean"`` -> ``("f1", "mean")``, checked against the known metrics."""
    metric, dot, stat = name.rpartition(".")
    if not dot or not metric:
        raise UnknownAggregate(f"{name!r} is not of the form metric.stat (e.g. 'f1.mean')")
    info = METRICS.get(metric)
    if info is None:
        known = ", ".join(sorted(METRICS))
        raise UnknownAggregate(f"unknown metric {metric!r}; known metrics: {known}")
    if stat not in info.stats:
        raise UnknownAggregate(
            f"unknown statistic {stat!r} for {metric}; use one of {', '.join(info.stats)}"
        )
    return metric, stat
