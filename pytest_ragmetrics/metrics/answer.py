"""Exact match and token F1 against gold answers (SQuAD v1.1 rule).

Normalisation, in this order: lowercase; delete punctuation (ASCII ``string.punctuation``
and every Unicode character of category P — deleted, not replaced by a space, so
"New-York" becomes "newyork"); remove the whole words a/an/the; collapse white space.
Letters of every script are kept. On ASCII text this is the SQuAD v1.1 evaluation
script exactly, its edge cases included.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def normalize_answer(text: str) -> str:
    """Normalise ``text`` for EM/F1 as described in the module docstring."""
    lowered = text.lower()
    without_punctuation = "".join(ch for ch in lowered if not _is_punctuation(ch))
    return " ".join(_ARTICLES.sub(" ", without_punctuation).split())


def _gold_list(golds: str | Iterable[str]) -> list[str]:
    gold_list = [golds] if isinstance(golds, str) else list(golds)
    if not gold_list:
        raise ValueError("no gold answer given: EM and F1 need at least one")
    for gold in gold_list:
        if not isinstance(gold, str):
            raise TypeError(f"gold answers must be strings, got {type(gold).__name__}")
    return gold_list


def exact_match(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 if the normalised prediction equals any normalised gold, else 0.0.

    Two texts that both normalise to nothing match (EM 1), as in SQuAD v1.1.
    Raises ``ValueError`` on an empty gold list.
    """
    normalized = normalize_answer(prediction)
    return float(any(normalized == normalize_answer(g) for g in _gold_list(golds)))


@dataclass(frozen=True)
class F1Match:
    """Token F1 against the best gold, with the counts that produced it."""

    score: float
    gold: str
    precision: float
    recall: float
    common: int
    prediction_tokens: int
    gold_tokens: int


def _f1_against(prediction_tokens: list[str], gold: str) -> F1Match:
    """F1 of normalised prediction tokens against one gold.

    common = size of the multiset intersection; P = common / |prediction|,
    R = common / |gold|, F1 = 2PR / (P + R); no common token gives 0.
    """
    gold_tokens = normalize_answer(gold).split()
    common = sum((Counter(prediction_tokens) & Counter(gold_tokens)).values())
    if common == 0:
        return F1Match(0.0, gold, 0.0, 0.0, 0, len(prediction_tokens), len(gold_tokens))
    precision = common / len(prediction_tokens)
    recall = common / len(gold_tokens)
    score = 2 * precision * recall / (precision + recall)
    return F1Match(score, gold, precision, recall, common, len(prediction_tokens), len(gold_tokens))


def best_f1(prediction: str, golds: str | Iterable[str]) -> F1Match:
    """The gold with the highest token F1 (the first one on ties) and its counts."""
    prediction_tokens = normalize_answer(prediction).split()
    matches = [_f1_against(prediction_tokens, gold) for gold in _gold_list(golds)]
    return max(matches, key=lambda match: match.score)


def token_f1(prediction: str, golds: str | Iterable[str]) -> float:
    """SQuAD token F1: harmonic mean of token precision and recall, max over golds.

    Tokens are the white-space split of the normalised texts; the overlap is the multiset
    intersection. No common token (including both sides empty) gives 0.0.
    Raises ``ValueError`` on an empty gold list.
    """
    return best_f1(prediction, golds).score
