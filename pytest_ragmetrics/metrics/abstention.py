"""Abstention: does an answer say "I don't know", and does an IDK sentence cite anything.

docs/metrics.md#abstain: an answer abstains when all its non-empty sentences are IDK (an empty
answer has none, so it abstains) or when the system reported ``telemetry.action ==
"ABSTAIN"``. ``idk_citation`` is 1 when any IDK sentence carries a citation marker, valid or
not: by contract an IDK sentence cites nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Column,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Presentation,
)
from pytest_ragmetrics.text.citations import CitationFormat, find_citations, may_cite
from pytest_ragmetrics.text.idk import IdkMatcher, all_idk, idk_sentences, telemetry_abstains
from pytest_ragmetrics.text.sentences import split_sentences


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CitedIdk:
    """An IDK sentence that carries citation markers."""

    sentence: str
    phrase: str
    markers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
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
    """Find IDK sentences of ``answer`` that carry a citation marker.

    An answer with no piece of any IDK pattern in it has no IDK sentence
    (``IdkMatcher.may_occur_in``), and one with no marker has no cited sentence: either
    way nothing is found, and the answer is not split into sentences at all.
    """
    matcher = matcher or IdkMatcher()
    if not matcher.may_occur_in(answer) or not may_cite(answer, fmt):
        return IdkCitation(())
    sentences = split_sentences(answer, fmt)
    cited = []
    for sentence, phrase in idk_sentences(sentences, matcher, fmt):
        markers = tuple(
            dict.fromkeys(c.marker for c in find_citations(sentence.text, context_ids, fmt))
        )
        if markers:
            cited.append(CitedIdk(sentence.text, phrase, markers))
    return IdkCitation(tuple(cited))


# -- the metric fixtures ----------------------------------------------------------------


def row_abstention(row: Row, metric: str, settings: MetricSettings) -> Abstention:
    """Whether the row's answer abstains (its IDK sentences, or ``telemetry.action``)."""
    return abstention(
        row.require("answer", metric), row.telemetry, settings.idk_matcher, settings.citations
    )


def measure_abstain(row: Row, ctx: MetricContext) -> Measured:
    result = row_abstention(row, "abstain", ctx.settings)
    return Measured({"abstain": result.score}, result.reason)


def measure_idk_citation(row: Row, ctx: MetricContext) -> Measured:
    result = idk_citation(
        row.require("answer", "idk_citation"),
        row.context_ids,
        ctx.settings.idk_matcher,
        ctx.settings.citations,
    )
    if not result.cited:
        return Measured({"idk_citation": 0.0}, "no IDK sentence carries a citation")
    return Measured({"idk_citation": 1.0}, Evidence(_cited_idk_evidence, result.cited))


def _cited_idk_evidence(cited: Sequence[CitedIdk]) -> str:
    """``idk_citation``'s evidence of a row with cited IDK sentences: each, with its
    markers."""
    return "; ".join(f"IDK sentence {c.sentence!r} carries {', '.join(c.markers)}" for c in cited)


def answerable(row: Row, metric: str) -> bool:
    """The row's ``answerable`` flag (validated as a bool when the dataset loaded)."""
    value: bool = row.require("answerable", metric)
    return value


def measure_idk_on_answerable(row: Row, ctx: MetricContext) -> Measured:
    """1 when the question is answerable and the answer abstains; else 0."""
    metric = "idk_on_answerable"
    if not answerable(row, metric):
        return Measured({metric: 0.0}, "not answerable: abstaining is right")
    result = row_abstention(row, metric, ctx.settings)
    if result.abstains:
        return Measured({metric: 1.0}, f"answerable, yet abstains ({result.reason})")
    return Measured({metric: 0.0}, "answerable and answered")


SPECS = (
    MetricSpec(
        "abstain",
        "1 when the answer abstains: every sentence is IDK (an empty answer too), or "
        "telemetry.action is ABSTAIN; else 0.",
        (
            MetricInfo(
                "abstain",
                "the answer abstains (all sentences IDK)",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    label="Abstain", columns=(Column("main", 60),), bar=6, role="abstains"
                ),
            ),
        ),
        ("answer",),
        measure_abstain,
    ),
    MetricSpec(
        "idk_citation",
        "1 when an IDK sentence carries a citation marker (valid or not), else 0; "
        "by contract an IDK sentence cites nothing, so gate its sum at 0.",
        (
            MetricInfo(
                "idk_citation",
                "an IDK sentence carries a citation",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    columns=(Column("appendix", 30, "sum", "IDK+Cit", "count"),)
                ),
            ),
        ),
        ("answer",),
        measure_idk_citation,
        reads_citations=True,
    ),
    MetricSpec(
        "idk_on_answerable",
        "1 when the question is answerable and the answer abstains, else 0.",
        (
            MetricInfo(
                "idk_on_answerable",
                "answerable, yet the answer abstains",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    columns=(Column("systems", 80, "sum", "IDK on answerable (sum)", "count"),)
                ),
            ),
        ),
        ("answer", "answerable"),
        measure_idk_on_answerable,
    ),
)
