"""Abstention: does an answer say "I don't know", and does an IDK sentence cite anything.

METRICS.md §0/§1: an answer abstains when all its non-empty sentences are IDK (an empty
answer has none, so it abstains) or when the system reported ``telemetry.action ==
"ABSTAIN"``. ``idk_citation`` is 1 when any IDK sentence carries a citation marker, valid or
not: by contract an IDK sentence cites nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.text.citations import CitationFormat, find_citations
from pytest_ragmetrics.text.idk import IdkMatcher, all_idk, idk_sentences, telemetry_abstains
from pytest_ragmetrics.text.sentences import split_sentences


@dataclass(frozen=True)
class Abstention:
    """Whether an answer abstains, and why."""

    abstains: bool
    reason: str

    @property
    def score(self) -> float:
        return float(self.abstains)


def abstention(
    answer: str,
    telemetry: Mapping[str, Any] | None = None,
    matcher: IdkMatcher | None = None,
    fmt: CitationFormat = "auto",
) -> Abstention:
    """Decide whether ``answer`` abstains (see the module docstring for the rule)."""
    if telemetry_abstains(telemetry):
        return Abstention(True, 'telemetry.action is "ABSTAIN"')
    sentences = split_sentences(answer, fmt)
    if not sentences:
        return Abstention(True, "the answer is empty")
    if all_idk(sentences, matcher or IdkMatcher(), fmt):
        return Abstention(True, f"all {len(sentences)} sentence(s) are IDK")
    return Abstention(False, "the answer has a non-IDK sentence")


@dataclass(frozen=True)
class CitedIdk:
    """An IDK sentence that carries citation markers."""

    sentence: str
    phrase: str
    markers: tuple[str, ...]


@dataclass(frozen=True)
class IdkCitation:
    """The IDK sentences of an answer that cite something (should be none)."""

    cited: tuple[CitedIdk, ...]

    @property
    def score(self) -> float:
        return 1.0 if self.cited else 0.0


def idk_citation(
    answer: str,
    context_ids: Sequence[str] | None = None,
    matcher: IdkMatcher | None = None,
    fmt: CitationFormat = "auto",
) -> IdkCitation:
    """Find IDK sentences of ``answer`` that carry a citation marker."""
    sentences = split_sentences(answer, fmt)
    cited = []
    for sentence, phrase in idk_sentences(sentences, matcher or IdkMatcher(), fmt):
        markers = tuple(
            dict.fromkeys(c.marker for c in find_citations(sentence.text, context_ids, fmt))
        )
        if markers:
            cited.append(CitedIdk(sentence.text, phrase, markers))
    return IdkCitation(tuple(cited))
