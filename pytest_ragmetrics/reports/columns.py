"""The columns of the report tables: heading, the aggregate shown and its format.

A column reads an eval entry of the report document (``reports.document``), so the
terminal, Markdown and HTML tables show the same numbers the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

NOT_COMPUTED = "—"

Entry = Mapping[str, Any]  # one eval (or one system of an eval) in the report document


def score(value: float) -> str:
    return f"{value:.3f}"


def amount(value: float) -> str:
    return f"{value:.1f}"


def ms(value: float) -> str:
    """Milliseconds: whole from 1 ms up (559.4 -> ``559``); below 1 ms to two decimals
    (0.27 -> ``0.27``), as a call served from memory or a cache takes, so a fast system
    never reads as ``0``; below 0.005 ms, ``<0.01``; exactly 0, ``0``."""
    if value == 0:
        return "0"
    if value >= 0.995 or value < 0:
        return f"{value:.0f}"
    if value >= 0.005:
        return f"{value:.2f}"
    return "<0.01"


def count(value: float) -> str:
    return f"{value:.0f}"


def ratio(value: float) -> str:
    return f"{value:.2f}×"


def delta(value: float) -> str:
    return f"{value:+.3f}"


def number(value: object) -> float | None:
    """``value`` as a float when it is a number (not a bool), else ``None``."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def stat(entry: Entry, metric: str, name: str) -> float | None:
    """An aggregate (``metric.name``) of an entry, ``None`` when it has none."""
    stats = (entry.get("metrics") or {}).get(metric)
    return number(stats.get(name)) if isinstance(stats, Mapping) else None


def interval(entry: Entry, metric: str, name: str = "mean") -> Mapping[str, Any] | None:
    """The entry's confidence interval of ``metric.name`` for this run alone (its
    ``intervals``; a rate is its 0/1 metric's mean), ``None`` when it has none."""
    found = (entry.get("intervals") or {}).get(metric) or {}
    drawn = found.get("mean" if name == "rate" else name)
    return drawn if isinstance(drawn, Mapping) else None


def interval_levels(entries: Iterable[Entry]) -> set[float]:
    """The confidences of the entries' intervals (one, unless a report mixes runs)."""
    return {
        float(drawn["confidence"])
        for entry in entries
        for stats in (entry.get("intervals") or {}).values()
        for drawn in stats.values()
        if isinstance(drawn, Mapping) and number(drawn.get("confidence")) is not None
    }


@dataclass(frozen=True)
class Column:
    """A table column: heading, the aggregate it shows and how to format it."""

    heading: str
    metric: str
    stat: str
    fmt: Callable[[float], str]

    def cell(self, entry: Entry) -> str:
        value = stat(entry, self.metric, self.stat)
        return NOT_COMPUTED if value is None else self.fmt(value)


MAIN_COLUMNS = (
    Column("Faithfulness", "faithfulness", "mean", score),
    Column("Overlap", "overlap", "mean", score),
    Column("F1", "f1", "mean", score),
    Column("Tokens", "tokens", "mean", amount),
    Column("P50 ms", "latency_ms", "p50", ms),
    Column("Abstain", "abstain", "mean", score),
)
APPENDIX_COLUMNS = (
    Column("EM", "em", "mean", score),
    Column("P95 ms", "latency_ms", "p95", ms),
    Column("IDK+Cit", "idk_citation", "sum", count),
    Column("Errors", "errors", "sum", count),
)
TRUST_COLUMNS = (
    Column("Answered", "trust", "answered_num", count),
    Column("Refusal F1", "trust", "refusal_f1", amount),
    Column("Answerable F1", "trust", "answerable_f1", amount),
    Column("Macro F1", "trust", "macro_f1", amount),
    Column("Calib EM F1", "trust", "calib_str_em_f1", amount),
    Column("Citation F1", "trust", "answered_citation_f1", amount),
    Column("Trust", "trust", "trust_score", amount),
)


def _with_f1_short(columns: Iterable[Column]) -> list[Column]:
    """``columns`` with ``F1 short`` beside ``F1``, formatted alike."""
    result = []
    for column in columns:
        result.append(column)
        if column.metric == "f1":
            result.append(replace(column, heading="F1 short", metric="f1_short"))
    return result


# The HTML report's per-system table: the main columns with ``F1 short`` beside ``F1``,
# then the answer-quality counts and the multi-round columns.
SYSTEM_COLUMNS = (
    *_with_f1_short(MAIN_COLUMNS),
    Column("Wrong on answerable (sum)", "wrong_on_answerable", "sum", count),
    Column("IDK on answerable (sum)", "idk_on_answerable", "sum", count),
    Column("Rounds", "rounds", "mean", lambda value: f"{value:.2f}"),
    Column("Rounds > 1", "multi_round", "rate", score),
)
# Beside them, for a system compared with the eval's reference system.
VS_COLUMNS = (
    Column("Tokens mean ×", "vs_baseline", "tokens_mean_ratio", ratio),
    Column("Tokens p50 ×", "vs_baseline", "tokens_p50_ratio", ratio),
    Column("Δ Overlap", "vs_baseline", "overlap_mean_delta", delta),
    Column("Δ F1", "vs_baseline", "f1_mean_delta", delta),
    Column("Δ F1 short", "vs_baseline", "f1_short_mean_delta", delta),
)
