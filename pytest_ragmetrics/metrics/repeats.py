"""Consistency of a system over repeated runs of one question (docs/metrics.md#tier-2-generation):
``response_exact_match_rate`` and ``response_semantic_consistency`` compare the row's
``repeats`` (further answers to the same question) with its answer; ``determinism``
compares the row with its second run (the marker's ``rerun`` file), answer and citations.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    COSINE,
    UNIT,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Presentation,
)
from pytest_ragmetrics.metrics.grounding import cosine
from pytest_ragmetrics.text.citations import find_citations, strip_citations

DETERMINISM = "determinism"  # needs the marker's `rerun` file; checked at collection


def response_exact_match_rate(answer: str, repeats: Sequence[str]) -> float:
    """Share of ``repeats`` equal to ``answer``, both stripped of outer white space.

    Definition: ``|{r in repeats : r.strip() == answer.strip()}| / |repeats|``; the comparison
    is otherwise verbatim (case, inner white space and punctuation count). An empty ``repeats``
    raises ``ValueError``; a bare string, ``TypeError``.
    """
    if isinstance(repeats, str):
        raise TypeError("repeats must be a sequence of strings, not a single string")
    if not repeats:
        raise ValueError("no repeat given: the exact-match rate needs at least one")
    target = answer.strip()
    return sum(repeat.strip() == target for repeat in repeats) / len(repeats)


def _repeats(row: Row, metric: str) -> list[str]:
    repeats = list(row.require("repeats", metric))
    if not repeats:
        raise RowError(f"{row.where('repeats')}: {metric} needs at least one repeat")
    return repeats


def measure_exact_repeats(row: Row, ctx: MetricContext) -> Measured:
    metric = "response_exact_match_rate"
    repeats = _repeats(row, metric)
    value = response_exact_match_rate(row.require("answer", metric), repeats)
    evidence = Evidence(_exact_repeats_evidence, value, len(repeats))
    return Measured({metric: value}, evidence)


def _exact_repeats_evidence(value: float, repeats: int) -> str:
    return f"{round(value * repeats)} of {repeats} repeats equal the answer"


def semantic_repeat_texts(row: Row, settings: MetricSettings) -> list[str]:
    metric = "response_semantic_consistency"
    answer = strip_citations(row.require("answer", metric), settings.citations)
    repeats = [strip_citations(r, settings.citations) for r in _repeats(row, metric)]
    return [answer, *repeats]


def measure_semantic_repeats(row: Row, ctx: MetricContext) -> Measured:
    metric = "response_semantic_consistency"
    answer, *repeats = semantic_repeat_texts(row, ctx.settings)
    vectors = ctx.embed([answer, *repeats])
    cosines = [cosine(vectors[0], vector) for vector in vectors[1:]]
    value = sum(cosines) / len(cosines)
    return Measured({metric: value}, Evidence(_cosines_evidence, cosines))


def _cosines_evidence(cosines: list[float]) -> str:
    return "cosine of each repeat to the answer: " + ", ".join(f"{c:.3f}" for c in cosines)


def _cited_ids(row: Row, ctx: MetricContext) -> list[str | None]:
    ids = row.context_ids
    return [c.doc_id for c in find_citations(row.answer or "", ids, ctx.settings.citations)]


def measure_determinism(row: Row, ctx: MetricContext) -> Measured:
    """1 when the row's second run (the marker's ``rerun`` file) gave the identical answer
    and cites the same documents in the same order; else 0."""
    again = ctx.rerun
    if again is None:
        raise RowError(f"{row.where()}: determinism needs the row's second run (marker rerun=)")
    first, second = row.require("answer", "determinism"), again.require("answer", "determinism")
    if first != second:
        at = next((i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), None)
        at = min(len(first), len(second)) if at is None else at
        return Measured(
            {"determinism": 0.0},
            Evidence(
                "answers differ from character {}: {!r} vs {!r} ({})",
                at,
                first[at : at + 40],
                second[at : at + 40],
                again.where(),
            ),
        )
    cited, cited_again = _cited_ids(row, ctx), _cited_ids(again, ctx)
    if cited != cited_again:
        return Measured(
            {"determinism": 0.0},
            Evidence(
                "same answer, but its citations resolve to {} here and {} in {} (the "
                "contexts differ)",
                cited,
                cited_again,
                again.where(),
            ),
        )
    return Measured(
        {"determinism": 1.0}, Evidence("identical answer and citations in {}", again.where())
    )


SPECS = (
    MetricSpec(
        "response_exact_match_rate",
        "Share of the row's repeats equal to its answer after stripping outer white space "
        "(otherwise verbatim), 0-1.",
        (
            MetricInfo(
                "response_exact_match_rate",
                "share of repeats equal to the answer verbatim",
                range=UNIT,
            ),
        ),
        ("answer", "repeats"),
        measure_exact_repeats,
    ),
    MetricSpec(
        "response_semantic_consistency",
        "Mean cosine of each repeat's embedding to the answer's (markers stripped), -1-1.",
        (
            MetricInfo(
                "response_semantic_consistency",
                "mean cosine of the repeats to the answer",
                range=COSINE,
            ),
        ),
        ("answer", "repeats"),
        measure_semantic_repeats,
        semantic_repeat_texts,
    ),
    MetricSpec(
        DETERMINISM,
        "1 when the row's second run (the marker's rerun file) gave the identical answer "
        "citing the same documents in the same order, else 0.",
        (
            MetricInfo(
                DETERMINISM,
                "a second run gave the same answer and citations",
                kind="binary",
                range=UNIT,
                presentation=Presentation(bar=8),
            ),
        ),
        ("answer",),
        measure_determinism,
        untested={
            "properties": "it compares the row with its second run (the marker's rerun file "
            "or a second live call), which a generated row does not have"
        },
    ),
)
