"""Refusal detection as Trust-Score (``trust_eval``) decides it.

The Trust-Score suite calls an output a *refusal* when the fuzzy partial-match score of the
normalised refusal flag against the normalised output is strictly greater than a threshold::

    refusal(output) := partial_ratio(trust_normalize(flag), trust_normalize(output)) > threshold

with the flag ``"I apologize, but I couldn't find an answer"`` and the threshold ``85`` by
default. The score is an int, so with the default threshold a refusal means a score of 86 or more.

The reference computes the score with ``fuzzywuzzy.fuzz.partial_ratio`` running on top of
python-Levenshtein. Both are GPL, so this module is an independent implementation of the same
definition on top of rapidfuzz (MIT), which supplies the two primitives: the Levenshtein
alignment (``opcodes``) and the Indel similarity. ``rapidfuzz.fuzz.partial_ratio`` itself is a
*different* definition (it searches every window, and returns a float), so it does not give the
reference verdicts: for example ``"in"`` scores 100 there but 50 here and in the reference.

:func:`partial_ratio` is defined as follows (``s1``/``s2`` in argument order):

1. either argument ``None`` → 0;
2. ``s1 == s2`` → 100 (so two empty strings give 100);
3. either argument empty → 0;
4. ``shorter`` is ``s1`` when ``len(s1) <= len(s2)`` (so with equal lengths the first argument
   is "shorter", and the argument order can change the score), else ``s2``;
5. align ``shorter`` against ``longer`` with the Levenshtein opcodes and take their matching
   blocks ``(a, b, size)``, *including* the final zero-size block ``(len(shorter),
   len(longer), 0)``. That last block anchors a window at the end of ``longer``, so a suffix
   always scores 100;
6. for each block, the window is ``longer[start : start + len(shorter)]`` with
   ``start = max(0, b - a)``, and its ratio is the Indel similarity
   ``1 - indel_distance / (len(shorter) + len(window))``, i.e. ``2·LCS / (len1 + len2)``;
7. a ratio above 0.995 returns 100 at once; otherwise the score is ``round(100 * best)`` with
   Python's ``round`` (half to even: 62.5 → 62, 87.5 → 88).

Only the blocks the alignment produces are tried, so a short substring can score below 100 when
the alignment scatters its characters: ``partial_ratio("in", "i apologize but i couldnt find
answer")`` is 50, because the alignment matches the ``i`` at 0 and the ``n`` of "couldnt".
What does always hold: identical strings, a single character contained in the other string,
and a suffix of the other string score 100, and when the lengths differ the argument order does
not matter. Every word-level substring of the normalised default flag scores 100.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

DEFAULT_REFUSAL_FLAG = "I apologize, but I couldn't find an answer"
DEFAULT_REFUSAL_THRESHOLD = 85

# A ratio above this counts as a perfect match. Rounding would give 100 anyway; kept so the
# definition reads like the reference's.
_PERFECT = 0.995

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def trust_normalize(text: str) -> str:
    """Normalise ``text`` the way Trust-Score (and SQuAD/ALCE) ``normalize_answer`` does.

    In order: ``lower()``; delete (not replace by a space) every character of ASCII
    ``string.punctuation``; replace the words ``a``/``an``/``the`` with a space
    (``re.sub(r"\\b(a|an|the)\\b", " ", ·)``); collapse whitespace with ``" ".join(s.split())``.

    This is deliberately *not* :func:`pytest_ragmetrics.metrics.answer.normalize_answer`, which
    is Unicode-aware. The reference deletes ASCII punctuation only, so a curly apostrophe ``’``
    or a Cyrillic/CJK punctuation mark survives and takes part in the fuzzy score; reproducing
    the reference's verdicts needs exactly that. Since the ASCII apostrophe is deleted,
    ``"couldn't"`` becomes ``"couldnt"`` but ``"couldn’t"`` stays ``"couldn’t"``.
    """
    text = text.lower().translate(_ASCII_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def partial_ratio(s1: str | None, s2: str | None) -> int:
    """Score in [0, 100] of the best-aligned window of the longer string against the shorter.

    The definition and its edge cases are in the module docstring: ``None`` → 0, equal → 100,
    one empty → 0, else the best Indel ratio over the windows anchored at the Levenshtein
    matching blocks (the final zero-size block included), rounded half to even.
    """
    if s1 is None or s2 is None:
        return 0
    if s1 == s2:
        return 100
    if not s1 or not s2:
        return 0
    from rapidfuzz.distance import Indel, Levenshtein  # on first use, not with the plugin

    shorter, longer = (s1, s2) if len(s1) <= len(s2) else (s2, s1)
    width = len(shorter)
    best = 0.0
    for block in Levenshtein.opcodes(shorter, longer).as_matching_blocks():
        start = max(0, block.b - block.a)
        ratio = Indel.normalized_similarity(shorter, longer[start : start + width])
        if ratio > _PERFECT:
            return 100
        best = max(best, ratio)
    return round(100 * best)


@dataclass(frozen=True)
class RefusalVerdict:
    """Whether an output is a refusal, with the evidence: ``score > threshold``."""

    refusal: bool
    score: int
    flag: str
    threshold: float


def refusal_verdict(
    output: str,
    flag: str = DEFAULT_REFUSAL_FLAG,
    threshold: float = DEFAULT_REFUSAL_THRESHOLD,
) -> RefusalVerdict:
    """Score ``output`` against ``flag`` (both normalised) and compare strictly with ``threshold``.

    An output that normalises to ``""`` scores 0 (answered) unless the flag also normalises to
    ``""``, in which case the equality rule gives 100 (refusal).
    """
    score = partial_ratio(trust_normalize(flag), trust_normalize(output))
    return RefusalVerdict(score > threshold, score, flag, threshold)


def is_refusal(
    output: str,
    flag: str = DEFAULT_REFUSAL_FLAG,
    threshold: float = DEFAULT_REFUSAL_THRESHOLD,
) -> bool:
    """``partial_ratio(trust_normalize(flag), trust_normalize(output)) > threshold``."""
    return refusal_verdict(output, flag, threshold).refusal
