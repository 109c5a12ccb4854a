"""Pure metric functions of pytest-ragmetrics, usable without pytest."""

from __future__ import annotations

from pytest_ragmetrics.metrics.abstention import Abstention, IdkCitation, abstention, idk_citation
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
from pytest_ragmetrics.metrics.cost import TokenUsage, token_usage
from pytest_ragmetrics.metrics.grounding import (
    Faithfulness,
    GoldSimilarity,
    Overlap,
    cosine,
    faithfulness,
    overlap,
    similarity_to_gold,
)
from pytest_ragmetrics.metrics.short import ShortAnswer, finalize

__all__ = [
    "Abstention",
    "AnchorCoverage",
    "F1Match",
    "Faithfulness",
    "GoldSimilarity",
    "IdkCitation",
    "Overlap",
    "ShortAnswer",
    "SquadScores",
    "TokenUsage",
    "abstention",
    "anchor_coverage",
    "best_f1",
    "cosine",
    "exact_match",
    "faithfulness",
    "finalize",
    "has_answer",
    "idk_citation",
    "normalize_answer",
    "overlap",
    "question_anchors",
    "similarity_to_gold",
    "squad_scores",
    "token_f1",
    "token_usage",
]
