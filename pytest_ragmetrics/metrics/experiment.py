"""The per-row metrics of an experiment comparison (METRICS.md §3): ``wrong_on_answerable``,
``idk_on_answerable``, ``rounds`` (with ``multi_round`` and the ``stop_reason``
distribution), ``f1_short``/``em_short`` through the finalizer, ``anchor_coverage`` and
``determinism``. Each ``measure_*`` reads one row and returns a ``Measured``; the fixtures
in ``pytest_ragmetrics.plugin.fixtures`` record them.
"""

from __future__ import annotations

from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics import best_f1, exact_match
from pytest_ragmetrics.metrics.anchors import anchor_coverage
from pytest_ragmetrics.metrics.base import (
    Measured,
    MetricContext,
    claim_text,
    golds,
    row_abstention,
)
from pytest_ragmetrics.metrics.short import finalize
from pytest_ragmetrics.text.citations import find_citations

NO_STOP_REASON = "(none)"


def _answerable(row: Row, metric: str) -> bool:
    value: bool = row.require("answerable", metric)  # validated as a bool at load time
    return value


def measure_wrong_on_answerable(row: Row, ctx: MetricContext) -> Measured:
    """1 when the question is answerable, the answer does not abstain and its F1 (on the
    full answer) is 0; else 0."""
    metric = "wrong_on_answerable"
    if not _answerable(row, metric):
        return Measured({metric: 0.0}, "not answerable: cannot be wrong-on-answerable")
    result = row_abstention(row, metric, ctx.settings)
    if result.abstains:
        return Measured({metric: 0.0}, f"abstains ({result.reason}); counted by idk_on_answerable")
    references = golds(row, metric)
    match = best_f1(claim_text(row, metric, ctx.settings), references)
    if match.score > 0:
        return Measured({metric: 0.0}, f"answered with F1 {match.score:.3g} > 0")
    return Measured(
        {metric: 1.0}, f"answerable, answered, F1 0 against all {len(references)} gold(s)"
    )


def measure_idk_on_answerable(row: Row, ctx: MetricContext) -> Measured:
    """1 when the question is answerable and the answer abstains; else 0."""
    metric = "idk_on_answerable"
    if not _answerable(row, metric):
        return Measured({metric: 0.0}, "not answerable: abstaining is right")
    result = row_abstention(row, metric, ctx.settings)
    if result.abstains:
        return Measured({metric: 1.0}, f"answerable, yet abstains ({result.reason})")
    return Measured({metric: 0.0}, "answerable and answered")


def _telemetry(row: Row, metric: str) -> dict[str, Any]:
    telemetry: dict[str, Any] = row.require("telemetry", metric)
    return telemetry


def measure_rounds(row: Row, ctx: MetricContext) -> Measured:
    """``telemetry.rounds`` (an integer >= 1), ``multi_round`` (rounds > 1), and
    ``telemetry.stop_reason`` as the ``stop_reason`` breakdown when the row has one."""
    telemetry = _telemetry(row, "rounds")
    if "rounds" not in telemetry:
        raise RowError(f"{row.where('telemetry.rounds')}: required by rounds but missing")
    rounds = telemetry["rounds"]
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise RowError(f"{row.where('telemetry.rounds')}: expected an integer >= 1, got {rounds!r}")
    reason = telemetry.get("stop_reason")
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        where = row.where("telemetry.stop_reason")
        raise RowError(f"{where}: expected a non-empty string, got {reason!r}")
    # A row without a reason counts as "(none)", so the shares are over every row.
    breakdowns = {"stop_reason": {reason or NO_STOP_REASON: 1.0}}
    values = {"rounds": float(rounds), "multi_round": 1.0 if rounds > 1 else 0.0}
    stop = f", stopped by {reason}" if reason else ""
    details = {"stop_reason": reason} if reason else {}
    return Measured(values, f"{rounds} round(s){stop}", breakdowns, details)


def _short(row: Row, metric: str, ctx: MetricContext) -> tuple[str, str]:
    question = row.require("question", metric)
    short = finalize(question, row.require("answer", metric), ctx.settings.citations)
    return short.text, short.rule


def measure_f1_short(row: Row, ctx: MetricContext) -> Measured:
    text, rule = _short(row, "f1_short", ctx)
    match = best_f1(text, golds(row, "f1_short"))
    evidence = (
        f"short answer {text!r} (finalizer rule {rule}); best gold {match.gold!r}: "
        f"{match.common} common token(s)"
    )
    details = {"short_answer": {"text": text, "rule": rule}}
    return Measured({"f1_short": match.score}, evidence, details=details)


def measure_em_short(row: Row, ctx: MetricContext) -> Measured:
    text, rule = _short(row, "em_short", ctx)
    value = exact_match(text, golds(row, "em_short"))
    verdict = "matches a gold" if value else "matches no gold"
    details = {"short_answer": {"text": text, "rule": rule}}
    return Measured(
        {"em_short": value}, f"short answer {text!r} (rule {rule}) {verdict}", details=details
    )


def cited_texts(row: Row, metric: str, ctx: MetricContext) -> list[str]:
    """The texts of the contexts the answer cites (each once, in citation order)."""
    answer, contexts = row.require("answer", metric), row.require("contexts", metric)
    ids = [str(c["doc_id"]) for c in contexts]
    texts: dict[int, str] = {}
    for citation in find_citations(answer, ids, ctx.settings.citations):
        if citation.doc_id is None:
            continue
        index = (
            citation.target - 1 if isinstance(citation.target, int) else ids.index(citation.doc_id)
        )
        texts.setdefault(index, str(contexts[index]["text"]))
    return list(texts.values())


def measure_anchor_coverage(row: Row, ctx: MetricContext) -> Measured:
    """The share of the question's anchors found in the contexts the answer cites."""
    result = anchor_coverage(
        row.require("question", "anchor_coverage"), cited_texts(row, "anchor_coverage", ctx)
    )
    details = {
        "anchors": {
            "found": list(result.found),
            "missing": list(result.missing),
        }
    }
    return Measured({"anchor_coverage": result.score}, result.evidence(), details=details)


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
            f"answers differ from character {at}: {first[at : at + 40]!r} vs "
            f"{second[at : at + 40]!r} ({again.where()})",
        )
    cited, cited_again = _cited_ids(row, ctx), _cited_ids(again, ctx)
    if cited != cited_again:
        return Measured(
            {"determinism": 0.0},
            f"same answer, but its citations resolve to {cited} here and {cited_again} in "
            f"{again.where()} (the contexts differ)",
        )
    return Measured({"determinism": 1.0}, f"identical answer and citations in {again.where()}")
