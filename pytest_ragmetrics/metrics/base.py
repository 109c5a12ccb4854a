"""What a metric computation on one row takes and gives: the types shared by the metric
fixtures of every tier, and the row readers they have in common."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.abstention import Abstention, abstention
from pytest_ragmetrics.metrics.grounding import Embed
from pytest_ragmetrics.text.citations import strip_citations

if TYPE_CHECKING:
    from pytest_ragmetrics.judge.client import LlmJudge


def _no_judge() -> LlmJudge:
    raise RuntimeError("this computation was given no LLM judge")


@dataclass(frozen=True)
class Measured:
    """What computing a metric on a row produced: its value(s) and the evidence.

    ``primary`` names the value the fixture returns when it is not the fixture's own name
    (``ndcg(row, k=10)`` records and returns ``ndcg@10``).
    """

    values: Mapping[str, float]
    evidence: str
    breakdowns: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)  # JSON-able, per-row report
    primary: str | None = None
    # What the fixture returns when it records no per-row value of its own (``trust``,
    # whose numbers exist only for the whole eval).
    score: float | None = None


@dataclass(frozen=True)
class MetricContext:
    """What a metric computation may use besides the row: the settings and, for the
    embedding metrics, ``embed`` (texts -> vectors, prepared before the rows ran)."""

    settings: Settings
    embed: Embed
    # Results shared by the fixtures of one test (faithfulness reuses overlap's).
    memo: dict[str, Any] = field(default_factory=dict)
    # The same row in the marker's `rerun` file: the second run `determinism` compares.
    rerun: Row | None = None
    # The run's LLM judge ([judge] in thresholds.toml), created on first use.
    judge: Callable[[], LlmJudge] = _no_judge


# (row, context, **options) -> Measured; options are the fixture's keyword arguments.
Compute = Callable[..., Measured]
Texts = Callable[[Row, Settings], list[str]]


def golds(row: Row, metric: str) -> list[str]:
    """Every gold alias of the row; answer groups (lists of aliases) are flattened, so a
    metric that takes the best over golds takes it over every alias of every group."""
    gold = row.require("gold", metric)  # its type was validated when the dataset loaded
    if isinstance(gold, str):
        return [gold]
    return [alias for item in gold for alias in ([item] if isinstance(item, str) else item)]


def row_abstention(row: Row, metric: str, settings: Settings) -> Abstention:
    """Whether the row's answer abstains (its IDK sentences, or ``telemetry.action``)."""
    return abstention(
        row.require("answer", metric), row.telemetry, settings.idk_matcher, settings.citations
    )


def claim_text(row: Row, metric: str, settings: Settings) -> str:
    """The answer without citation markers: what EM, F1, ROUGE and BLEU compare with the
    gold (which has none)."""
    return strip_citations(row.require("answer", metric), settings.citations)
