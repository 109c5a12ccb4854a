"""The names of the metrics the plugin records, and the statistics a gate may use.

Metric names are public API: thresholds.toml, the JSON report and the terminal table
use them. An aggregate is ``metric.stat`` (``f1.mean``, ``latency_ms.p95``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

STATS = ("mean", "sum", "count", "p50", "p95")
RATE = "rate"  # = mean, offered for 0/1 metrics
Cutoff = Literal["none", "optional", "required"]


@dataclass(frozen=True)
class MetricInfo:
    """A recorded metric: its name, what it means, and which statistics it has.

    ``cutoff``: whether the name takes ``@k`` (``ndcg@10``). ``corpus``: statistics computed
    from summed per-row sufficient statistics, besides the per-row ones (``bleu.corpus``).
    ``dataset``: for a dataset-level metric (one value set per eval, not per row), its only
    statistics.
    """

    name: str
    description: str
    binary: bool = False
    cutoff: Cutoff = "none"
    corpus: tuple[str, ...] = ()
    dataset: tuple[str, ...] | None = None

    @property
    def stats(self) -> tuple[str, ...]:
        if self.dataset is not None:
            return self.dataset
        return (*STATS, *((RATE,) if self.binary else ()), *self.corpus)


def _retrieval(name: str, description: str, cutoff: Cutoff, binary: bool = False) -> MetricInfo:
    return MetricInfo(name, description, binary=binary, cutoff=cutoff)


EMBEDDING_SPACE_STATS = (
    "total_samples",
    "k",
    "avg_nn_distance",
    "std_nn_distance",
    "density_score",
    "avg_spread",
    "max_spread",
    "spread_std",
    "effective_dimensionality",
    "avg_pairwise_distance",
    "std_pairwise_distance",
    "min_pairwise_distance",
    "max_pairwise_distance",
    "pairwise_exact",
    "pairwise_pairs",
)
UX_STATS = (
    "questions",
    "cache_hits",
    "cache_hit_rate",
    "sessions",
    "single_turn_sessions",
    "context_preservation",
    "multi_turn_consistency",
)
SOURCES_STATS = (
    "total_chunks",
    "used_chunks",
    "unused_chunks",
    "unknown_chunks",
    "chunk_utilization",
    "n_topics",
    "total_questions",
    "avg_chunks_per_topic",
)
# A compared system's aggregates relative to the reference system
# (pytest_ragmetrics.results.compare).
VS_BASELINE = "vs_baseline"
VS_BASELINE_STATS = (
    "tokens_mean_ratio",
    "tokens_p50_ratio",
    "overlap_mean_delta",
    "f1_mean_delta",
    "f1_short_mean_delta",
)
# How this run's rows pair with the stored baseline's (pytest_ragmetrics.gates.stored).
BASELINE_PAIRING_STATS = ("coverage", "shared", "added", "removed", "changed")
# The LLM judge's accounting and quality over an eval (pytest_ragmetrics.metrics.judge).
JUDGE_STATS = (
    "verdicts",
    "cached",
    "requests",
    "unparseable",
    "failed",
    "error_rate",
    "avg_latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "tokens",
    "consistency_score",
)
# Judge-quality numbers that may be named alone, as METRICS.md §4 names them.
JUDGE_QUALITY = ("consistency_score", "error_rate", "avg_latency_ms")
CONFUSION_STATS = ("accuracy", "precision", "recall", "f1", "tp", "fp", "fn", "tn")
# The Trust-Score suite's numbers, in the order of the reference's sample output.
TRUST_KEYS = (
    "num_samples",
    "answered_ratio",
    "answered_num",
    "answerable_num",
    "overlapped_num",
    "regular_length",
    "answered_length",
    "refusal_rec",
    "refusal_prec",
    "refusal_f1",
    "answerable_rec",
    "answerable_prec",
    "answerable_f1",
    "macro_avg",
    "macro_f1",
    "regular_str_em",
    "answered_str_em",
    "calib_answered_str_em",
    "calib_answerable_str_em",
    "calib_str_em_f1",
    "parametric_str_em",
    "regular_citation_rec",
    "regular_citation_prec",
    "regular_citation_f1",
    "answered_citation_rec",
    "answered_citation_prec",
    "answered_citation_f1",
    "trust_score",
)

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
        _retrieval("hit_rate", "a relevant doc is in the top k", "required", binary=True),
        _retrieval("mrr", "1 / rank of the first relevant doc (within k)", "optional"),
        _retrieval("recall", "relevant docs in the top k / all relevant docs", "required"),
        _retrieval("precision", "relevant docs in the top k / k", "required"),
        _retrieval("ndcg", "nDCG (within k), linear gain", "optional"),
        _retrieval("ndcg_exp", "nDCG (within k), gain 2^grade - 1", "optional"),
        _retrieval(
            "retrieval_consistency", "share of repeated retrievals equal in the top k", "optional"
        ),
        MetricInfo("rouge1", "ROUGE-1 F-measure, best gold"),
        MetricInfo("rouge2", "ROUGE-2 F-measure, best gold"),
        MetricInfo("rougeL", "ROUGE-L F-measure, best gold"),
        MetricInfo(
            "bleu", "sentence BLEU, 0-100 (corpus: from summed statistics)", corpus=("corpus",)
        ),
        MetricInfo("response_exact_match_rate", "share of repeats equal to the answer verbatim"),
        MetricInfo("response_semantic_consistency", "mean cosine of the repeats to the answer"),
        MetricInfo(
            "judge_pipeline",
            "the show decision equals show_gold (stats: confusion counts and scores)",
            binary=True,
            corpus=CONFUSION_STATS,
        ),
        MetricInfo(
            "embedding_space", "geometry of a field's embeddings", dataset=EMBEDDING_SPACE_STATS
        ),
        MetricInfo("ux", "cache hits and session coherence of the questions", dataset=UX_STATS),
        MetricInfo("sources", "chunk utilization and topic coverage", dataset=SOURCES_STATS),
        MetricInfo("trust", "the Trust-Score suite over the eval's rows", dataset=TRUST_KEYS),
        MetricInfo(
            "wrong_on_answerable",
            "answerable, not abstained, F1 = 0 on the full answer",
            binary=True,
        ),
        MetricInfo("idk_on_answerable", "answerable, yet the answer abstains", binary=True),
        MetricInfo("rounds", "telemetry.rounds: retrieve-generate rounds of the query"),
        MetricInfo("multi_round", "the query took more than one round", binary=True),
        MetricInfo("f1_short", "SQuAD F1 of the finalizer's short answer, best gold"),
        MetricInfo("em_short", "exact match of the finalizer's short answer", binary=True),
        MetricInfo(
            "anchor_coverage", "share of the question's anchors found in the cited contexts"
        ),
        MetricInfo("determinism", "a second run gave the same answer and citations", binary=True),
        MetricInfo(
            VS_BASELINE,
            "a compared system's ratios and differences to the reference system",
            dataset=VS_BASELINE_STATS,
        ),
        MetricInfo(
            "baseline",
            "this run's rows paired by id with the stored baseline's: shared / stored rows",
            dataset=BASELINE_PAIRING_STATS,
        ),
        MetricInfo("faithfulness_judge", "LLM judge: the answer is supported by its contexts, 0-1"),
        MetricInfo("answer_relevance", "LLM judge: the answer addresses the question, 0-1"),
        MetricInfo("answer_correctness", "LLM judge: correctness against the gold answer, 1-5"),
        MetricInfo("e2e_score", "LLM judge: overall usefulness against the gold answer, 0-1"),
        MetricInfo(
            "consistency_score", "LLM judge: two fresh verdicts differ by <= 0.5", binary=True
        ),
        MetricInfo(
            "judge", "the LLM judge's calls, errors, latency and tokens", dataset=JUDGE_STATS
        ),
        MetricInfo("errors", "the row errored (bad data or a metric input missing)", binary=True),
    )
}


class UnknownAggregate(ValueError):
    """An aggregate name that names no known metric or statistic."""


def metric_info(metric: str) -> MetricInfo:
    """The metric a recorded name is an instance of: ``ndcg@10`` is ``ndcg`` at k = 10."""
    info = METRICS.get(metric)
    if info is not None:
        if info.cutoff == "required":
            raise UnknownAggregate(f"{metric} needs a cutoff, e.g. {metric}@10")
        return info
    base, at, k = metric.partition("@")
    info = METRICS.get(base)
    if at and info is not None and info.cutoff != "none":
        if not k.isdigit() or int(k) < 1:
            raise UnknownAggregate(f"{metric}: the cutoff after @ must be an integer >= 1")
        return info
    known = ", ".join(sorted(f"{n}@k" if i.cutoff == "required" else n for n, i in METRICS.items()))
    raise UnknownAggregate(f"unknown metric {metric!r}; known metrics: {known}")


def split_aggregate(name: str) -> tuple[str, str]:
    """``"f1.mean"`` -> ``("f1", "mean")``, checked against the known metrics. A Trust-Score
    number may be named alone, as the suite names it: ``"trust_score"`` is
    ``("trust", "trust_score")``; so may the judge-quality numbers (``"error_rate"`` is
    ``("judge", "error_rate")``)."""
    if name in TRUST_KEYS:
        return "trust", name
    if name in JUDGE_QUALITY:
        return "judge", name
    metric, dot, stat = name.rpartition(".")
    if not dot or not metric:
        raise UnknownAggregate(f"{name!r} is not of the form metric.stat (e.g. 'f1.mean')")
    info = metric_info(metric)
    if stat not in info.stats:
        raise UnknownAggregate(
            f"unknown statistic {stat!r} for {metric}; use one of {', '.join(info.stats)}"
        )
    return metric, stat


def per_row(metric: str) -> bool:
    """True for a metric aggregated from per-row values (one a user's code records
    included); False for a dataset-level one, whose statistics come as they are."""
    try:
        return metric_info(metric).dataset is None
    except UnknownAggregate:
        return True
