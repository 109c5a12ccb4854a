"""IDK ("I don't know") detection: which sentences abstain, and whether an answer does.

A sentence is IDK when one of the patterns occurs in it as whole words, ignoring case,
curly versus straight apostrophes, runs of white space and citation markers. Patterns are
plain phrases, not regular expressions, so a user's list needs no escaping.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.text.citations import CitationFormat, strip_citations
from pytest_ragmetrics.text.sentences import Sentence

DEFAULT_IDK_PATTERNS: tuple[str, ...] = (
    # English
    "I don't know",
    "I do not know",
    "I dont know",
    "I couldn't find an answer",
    "I could not find an answer",
    "I cannot find an answer",
    "I can't find an answer",
    # Indonesian
    "tidak tahu",
    "tidak dapat menemukan jawaban",
    # Russian
    "не знаю",
    "не могу найти ответ",
)

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u0060": "'"})


def _fold(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).split()).casefold()


@dataclass(frozen=True)
class IdkMatcher:
    """Matches IDK sentences against a fixed list of phrases."""

    patterns: tuple[str, ...] = DEFAULT_IDK_PATTERNS

    def __post_init__(self) -> None:
        if not self.patterns:
            raise ValueError("the IDK pattern list is empty; keep at least one phrase")
        for pattern in self.patterns:
            if not isinstance(pattern, str) or not pattern.strip():
                raise ValueError(f"IDK pattern {pattern!r} is not a non-empty string")

    @property
    def _regex(self) -> re.Pattern[str]:
        return _compile(self.patterns)

    def may_occur_in(self, text: str) -> bool:
        """False only when no sentence of ``text`` can be IDK, decided without splitting it.

        A sentence is IDK when a pattern matches its folded text with the markers stripped,
        and such a match holds every piece of the folded pattern that has neither white
        space nor punctuation a stripped marker's space is dropped before (``PROBE_BREAKS``)
        verbatim. Stripping puts a space where a marker was, and folding maps each
        character on its own, so the piece is in the folded sentence as written, and so in
        the folded ``text`` the sentence is part of. No piece of any pattern in ``text``,
        then no IDK sentence. A pattern of punctuation alone gives no piece: always True.
        """
        probes = _probes(self.patterns)
        if probes is None:
            return True
        # Of the apostrophes folding maps, ASCII text can hold only the backtick.
        unified = text.replace("`", "'") if text.isascii() else text.translate(_APOSTROPHES)
        folded = unified.casefold()
        return any(probe in folded for probe in probes)

    def match(self, sentence: str, fmt: CitationFormat = "auto") -> str | None:
        """The pattern text found in ``sentence`` (folded), or ``None`` if it is not IDK.

        Cached: abstention, idk_citation and the grounding metrics ask about the same
        sentences of a row.
        """
        return _match(self, sentence, fmt)


@functools.lru_cache(maxsize=64)
def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # \b only where the phrase starts or ends with a word character, so that a
    # pattern ending in punctuation still matches.
    def bounded(phrase: str) -> str:
        folded = re.escape(_fold(phrase))
        head = r"\b" if re.match(r"\w", phrase.strip()) else ""
        tail = r"\b" if re.search(r"\w$", phrase.strip()) else ""
        return head + folded.replace(r"\ ", r"\s+") + tail

    return re.compile("|".join(bounded(p) for p in patterns))


# What ``strip_citations`` drops the space before, where it removed a marker: a piece of a
# pattern holding one of these could span a stripped marker.
PROBE_BREAKS = re.compile(r"[\s.,;:!?…]+")


@functools.lru_cache(maxsize=64)
def _probes(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The longest piece of each folded pattern (``IdkMatcher.may_occur_in``); None when a
    pattern has none."""
    probes = []
    for pattern in patterns:
        pieces = [piece for piece in PROBE_BREAKS.split(_fold(pattern)) if piece]
        if not pieces:
            return None
        probes.append(max(pieces, key=len))
    return tuple(dict.fromkeys(probes))  # once each: two phrases may share their longest


@functools.lru_cache(maxsize=16384)
def _match(matcher: IdkMatcher, sentence: str, fmt: CitationFormat) -> str | None:
    if not matcher.may_occur_in(sentence):  # no piece of any phrase: no match, no regex
        return None
    found = matcher._regex.search(_fold(strip_citations(sentence, fmt)))
    return found.group(0) if found else None


def telemetry_abstains(telemetry: Mapping[str, Any] | None) -> bool:
    """True when the system itself reported ``telemetry.action == "ABSTAIN"``."""
    return telemetry is not None and str(telemetry.get("action", "")).upper() == "ABSTAIN"


def all_idk(sentences: Iterable[Sentence], matcher: IdkMatcher, fmt: CitationFormat) -> bool:
    """True when every sentence is IDK (and so for no sentence at all)."""
    return all(matcher.match(s.text, fmt) is not None for s in sentences)


def idk_sentences(
    sentences: Sequence[Sentence], matcher: IdkMatcher, fmt: CitationFormat
) -> list[tuple[Sentence, str]]:
    """The IDK sentences with the phrase each one matched."""
    hits = []
    for sentence in sentences:
        phrase = matcher.match(sentence.text, fmt)
        if phrase is not None:
            hits.append((sentence, phrase))
    return hits
