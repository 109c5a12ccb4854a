"""Statistics that are not means of per-row values but functions of summed per-row
sufficient statistics (sacrebleu's corpus BLEU, precision and recall from counts).

A metric fixture records its row's sufficient statistics as a breakdown (summed over the
rows like any breakdown, so the same with and without pytest-xdist); at the end the
controller turns the sums into the metric's corpus statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pytest_ragmetrics.metrics.classification import Confusion

BLEU_STATS = "bleu_stats"
JUDGE_PIPELINE_COUNTS = "judge_pipeline_counts"

Reduce = Callable[[Mapping[str, float]], dict[str, float]]


def _bleu_corpus(sums: Mapping[str, float]) -> dict[str, float]:
    from pytest_ragmetrics.metrics.text import BleuStats, corpus_bleu_from_stats

    return {"corpus": corpus_bleu_from_stats(BleuStats.from_dict(sums))}


def _confusion(sums: Mapping[str, float]) -> dict[str, float]:
    return Confusion.from_counts(sums).stats()


# metric -> (the breakdown holding its sufficient statistics, how to reduce their sums)
CORPUS_STATS: dict[str, tuple[str, Reduce]] = {
    "bleu": (BLEU_STATS, _bleu_corpus),
    "judge_pipeline": (JUDGE_PIPELINE_COUNTS, _confusion),
}
