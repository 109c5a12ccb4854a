"""Pure metric functions of pytest-ragmetrics, usable without pytest::

    from pytest_ragmetrics.metrics import evaluate, exact_match, sentence_bleu

Every name of ``__all__`` is imported from its family's module on first use (PEP 562):
the plugin imports this package with every metric module's declarations, and must not
pay for numpy, sacrebleu or the families a run does not use. ``__all__`` is the public
API; the modules below (``metrics.answer``, ``metrics.retrieval``, ...) are internal and
may move.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragmetrics.metrics.abstention import (
        Abstention,
        IdkCitation,
        abstention,
        idk_citation,
    )
    from pytest_ragmetrics.metrics.anchors import AnchorCoverage, anchor_coverage, question_anchors
    from pytest_ragmetrics.metrics.answer import (
        F1Match,
        SquadScores,
        best_f1,
        exact_match,
        has_answer,
        normalize_answer,
        squad_scores,
        token_f1,
    )
    from pytest_ragmetrics.metrics.bleu import (
        BleuSettings,
        BleuSettingsError,
        BleuStats,
        SentenceBleu,
        bleu_signature,
        corpus_bleu_from_stats,
        sentence_bleu,
    )
    from pytest_ragmetrics.metrics.bleu import sum_stats as sum_bleu_stats
    from pytest_ragmetrics.metrics.chrf import (
        ChrfSettings,
        ChrfStats,
        SentenceChrf,
        chrf_signature,
        corpus_chrf_from_stats,
        sentence_chrf,
    )
    from pytest_ragmetrics.metrics.chrf import sum_stats as sum_chrf_stats
    from pytest_ragmetrics.metrics.cost import TokenUsage, token_usage
    from pytest_ragmetrics.metrics.grounding import (
        Faithfulness,
        GoldSimilarity,
        Overlap,
        SentenceVerdict,
        cosine,
        faithfulness,
        overlap,
        similarity_to_gold,
    )
    from pytest_ragmetrics.metrics.repeats import response_exact_match_rate
    from pytest_ragmetrics.metrics.retrieval import Evaluation, evaluate, retrieval_consistency
    from pytest_ragmetrics.metrics.short import ShortAnswer, finalize
    from pytest_ragmetrics.metrics.space.geometry import (
        CacheHits,
        ChunkUtilization,
        EmbeddingSpace,
        SessionCoherence,
        Topic,
        TopicCoverage,
        cache_hit_rate,
        chunk_utilization,
        context_preservation,
        embedding_space,
        multi_turn_consistency,
        topic_coverage,
    )
    from pytest_ragmetrics.metrics.text import (
        RougeDetail,
        RougeScore,
        RougeScores,
        rouge,
        rouge_detail,
    )
    from pytest_ragmetrics.metrics.trust.judges import (
        EmbeddingJudge,
        MissingVerdict,
        NliJudge,
        TableJudge,
    )
    from pytest_ragmetrics.metrics.trust.refusal import is_refusal
    from pytest_ragmetrics.metrics.trust.suite import TrustInputError, TrustWarning, trust_score


def _names(module: str, *names: str) -> dict[str, tuple[str, str]]:
    return {name: (f"{__name__}.{module}", name) for name in names}


# Public name -> (the module defining it, its name there), family by family.
_PUBLIC: dict[str, tuple[str, str]] = {
    # EM, F1 and SQuAD's aggregate (docs/metrics.md#normalisation-for-em-and-f1)
    **_names(
        "answer",
        "normalize_answer",
        "exact_match",
        "token_f1",
        "best_f1",
        "F1Match",
        "has_answer",
        "squad_scores",
        "SquadScores",
    ),
    **_names("abstention", "abstention", "Abstention", "idk_citation", "IdkCitation"),
    **_names("anchors", "anchor_coverage", "AnchorCoverage", "question_anchors"),
    **_names("cost", "token_usage", "TokenUsage"),
    # grounding: any ``embed`` callable, a list of texts in, one vector per text out
    **_names(
        "grounding",
        "overlap",
        "Overlap",
        "SentenceVerdict",
        "faithfulness",
        "Faithfulness",
        "similarity_to_gold",
        "GoldSimilarity",
        "cosine",
    ),
    **_names("short", "finalize", "ShortAnswer"),
    **_names("repeats", "response_exact_match_rate"),
    # retrieval: trec_eval's measures over many queries at once
    **_names("retrieval", "evaluate", "Evaluation", "retrieval_consistency"),
    # ROUGE, BLEU and chrF, equal to rouge-score's and sacrebleu's
    **_names(
        "text",
        "rouge",
        "RougeScores",
        "rouge_detail",
        "RougeDetail",
        "RougeScore",
    ),
    **_names(
        "bleu",
        "sentence_bleu",
        "SentenceBleu",
        "BleuStats",
        "corpus_bleu_from_stats",
        "bleu_signature",
        "BleuSettings",
        "BleuSettingsError",
    ),
    "sum_bleu_stats": (f"{__name__}.bleu", "sum_stats"),
    **_names(
        "chrf",
        "sentence_chrf",
        "SentenceChrf",
        "ChrfStats",
        "corpus_chrf_from_stats",
        "chrf_signature",
        "ChrfSettings",
    ),
    "sum_chrf_stats": (f"{__name__}.chrf", "sum_stats"),
    # the Trust-Score suite (docs/trust.md)
    **_names("trust.suite", "trust_score", "TrustInputError", "TrustWarning"),
    **_names("trust.judges", "TableJudge", "EmbeddingJudge", "NliJudge", "MissingVerdict"),
    **_names("trust.refusal", "is_refusal"),
    # Tier 0: the dataset-level metrics over any (N, D) array of embeddings
    **_names(
        "space.geometry",
        "embedding_space",
        "EmbeddingSpace",
        "cache_hit_rate",
        "CacheHits",
        "context_preservation",
        "multi_turn_consistency",
        "SessionCoherence",
        "chunk_utilization",
        "ChunkUtilization",
        "topic_coverage",
        "TopicCoverage",
        "Topic",
    ),
}

__all__ = [
    "Abstention",
    "AnchorCoverage",
    "BleuSettings",
    "BleuSettingsError",
    "BleuStats",
    "CacheHits",
    "ChrfSettings",
    "ChrfStats",
    "ChunkUtilization",
    "EmbeddingJudge",
    "EmbeddingSpace",
    "Evaluation",
    "F1Match",
    "Faithfulness",
    "GoldSimilarity",
    "IdkCitation",
    "MissingVerdict",
    "NliJudge",
    "Overlap",
    "RougeDetail",
    "RougeScore",
    "RougeScores",
    "SentenceBleu",
    "SentenceChrf",
    "SentenceVerdict",
    "SessionCoherence",
    "ShortAnswer",
    "SquadScores",
    "TableJudge",
    "TokenUsage",
    "Topic",
    "TopicCoverage",
    "TrustInputError",
    "TrustWarning",
    "abstention",
    "anchor_coverage",
    "best_f1",
    "bleu_signature",
    "cache_hit_rate",
    "chrf_signature",
    "chunk_utilization",
    "context_preservation",
    "corpus_bleu_from_stats",
    "corpus_chrf_from_stats",
    "cosine",
    "embedding_space",
    "evaluate",
    "exact_match",
    "faithfulness",
    "finalize",
    "has_answer",
    "idk_citation",
    "is_refusal",
    "multi_turn_consistency",
    "normalize_answer",
    "overlap",
    "question_anchors",
    "response_exact_match_rate",
    "retrieval_consistency",
    "rouge",
    "rouge_detail",
    "sentence_bleu",
    "sentence_chrf",
    "similarity_to_gold",
    "squad_scores",
    "sum_bleu_stats",
    "sum_chrf_stats",
    "token_f1",
    "token_usage",
    "topic_coverage",
    "trust_score",
]  # the keys of _PUBLIC (a test keeps them equal)


def __getattr__(name: str) -> Any:
    """A public name, imported from its family's module on first use."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _PUBLIC[name]
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _PublicNames(ModuleType):
    """This package, whose public function ``abstention`` shares its name with the
    submodule defining it: importing ``metrics.abstention`` binds the submodule here as an
    attribute, which would hide the function from ``from pytest_ragmetrics.metrics import
    abstention``; a public name keeps its object (as when ``__init__`` imported it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PUBLIC and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _PublicNames
