"""The ``ux`` dataset metric: cache hits of the questions against past questions, and the
coherence of consecutive questions in each session (``session_id`` and ``turn``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import DatasetMeasured, Embed, MetricInfo

DEFAULT_CACHE_TAU = 0.85
UX_STATS = (
    "questions",
    "cache_hits",
    "cache_hit_rate",
    "sessions",
    "single_turn_sessions",
    "context_preservation",
    "multi_turn_consistency",
)
UX = MetricInfo("ux", "cache hits and session coherence of the questions", dataset=UX_STATS)


@dataclass(frozen=True)
class UxResult:
    """The UX statistics of a set of questions (``None`` where the data gave none)."""

    questions: int
    cache_hit_rate: float | None
    cache_hits: int | None
    context_preservation: float | None
    multi_turn_consistency: float | None
    sessions: int
    single_turn_sessions: int


def sessions_of(rows: Sequence[Row], metric: str) -> list[list[Row]]:
    """Rows grouped by ``session_id`` (first-seen order), each ordered by ``turn``."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        if row.get("session_id") is not None:
            grouped.setdefault(row["session_id"], []).append(row)
    sessions = []
    for session_id, turns in grouped.items():
        numbers = [row.require("turn", metric) for row in turns]
        if len(set(numbers)) != len(numbers):
            raise RowError(f"{turns[0].where('turn')}: session {session_id!r} repeats a turn")
        sessions.append(sorted(turns, key=lambda row: row["turn"]))
    return sessions


def measure_ux(
    rows: Sequence[Row],
    embed: Embed,
    cache: Sequence[str] | None,
    tau: float,
    metric: str = UX.name,
) -> DatasetMeasured:
    """Cache hits of the questions against ``cache`` (cosine > tau) and the coherence of
    consecutive questions per session; without a cache, or without a session of two
    turns or more, those statistics are left out."""
    import numpy as np

    from pytest_ragmetrics.metrics.space.geometry import cache_hit_rate, context_preservation

    def vectors(texts: Sequence[str]) -> np.ndarray[Any, Any]:
        return np.asarray(embed(texts), dtype=np.float64)

    questions = [row.require("question", metric) for row in rows]
    stats: dict[str, float] = {"questions": len(questions)}
    details: dict[str, Any] = {}
    hit_rate = hits = preservation = None
    if cache is not None:
        embedded = vectors([*questions, *cache])
        result = cache_hit_rate(embedded[: len(questions)], embedded[len(questions) :], tau)
        hit_rate, hits = result.rate, result.hits
        stats.update(cache_hit_rate=hit_rate, cache_hits=hits)
        details["cache"] = {"size": len(cache), "tau": tau}
    sessions = sessions_of(rows, metric)
    single = sum(1 for turns in sessions if len(turns) < 2)
    stats.update(sessions=len(sessions), single_turn_sessions=single)
    if len(sessions) > single:
        arrays = [vectors([row["question"] for row in turns]) for turns in sessions]
        coherence = context_preservation(arrays)
        preservation = coherence.value
        stats.update(context_preservation=preservation, multi_turn_consistency=preservation)
        details["sessions"] = {"pairs": coherence.pairs}
    details["rows_without_session"] = sum(1 for row in rows if row.get("session_id") is None)
    result_ux = UxResult(
        len(questions), hit_rate, hits, preservation, preservation, len(sessions), single
    )
    return DatasetMeasured(result_ux, stats, details)
