"""Binary decisions against ground truth: the judge pipeline's show / no-show (Tier Judge
Pipeline), scored from confusion counts.

Positive is "show". Over a set of rows with counts TP, FP, FN, TN:

* accuracy  = (TP + TN) / (TP + FP + FN + TN)
* precision = TP / (TP + FP)   — of the answers shown, the share that should be
* recall    = TP / (TP + FN)   — of the answers that should be shown, the share that was
* f1        = 2 · precision · recall / (precision + recall)

A denominator of zero (nothing shown, nothing that should be, no rows) gives 0 for that
score, as scikit-learn's ``zero_division=0`` does; the counts are reported beside the
scores, so a 0 that means "undefined" can be told from a real 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    UNIT,
    CorpusReduction,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
)

JUDGE_PIPELINE_COUNTS = "judge_pipeline_counts"
CONFUSION_STATS = ("accuracy", "precision", "recall", "f1", "tp", "fp", "fn", "tn")


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True)
class Confusion:
    """Confusion counts of a binary decision; ``+`` adds two sets of counts."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def of(cls, predicted: bool, actual: bool) -> Confusion:
        """The counts of one decision: exactly one cell is 1."""
        if predicted:
            return cls(tp=1) if actual else cls(fp=1)
        return cls(fn=1) if actual else cls(tn=1)

    @classmethod
    def from_counts(cls, counts: Mapping[str, float]) -> Confusion:
        """From summed counts (floats that hold whole numbers); a missing cell is 0."""
        return cls(*(round(counts.get(cell, 0.0)) for cell in ("tp", "fp", "fn", "tn")))

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(
            self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn
        )

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def accuracy(self) -> float:
        return _ratio(self.tp + self.tn, self.total)

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        precision, recall = self.precision, self.recall
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    def counts(self) -> dict[str, float]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}

    def stats(self) -> dict[str, float]:
        """The scores and the counts, as the ``judge_pipeline`` statistics."""
        scores = {
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }
        return {**scores, **self.counts()}


# -- the metric fixture ------------------------------------------------------------------

_CELL_NAMES = {
    "tp": "true positive",
    "fp": "false positive",
    "fn": "false negative",
    "tn": "true negative",
}


def measure_judge_pipeline(row: Row, ctx: MetricContext) -> Measured:
    metric = "judge_pipeline"
    show, should = row.require("show", metric), row.require("show_gold", metric)
    cell = Confusion.of(show, should)
    name = next(n for n, count in cell.counts().items() if count)
    evidence = (
        f"{'shown' if show else 'not shown'}, {'should' if should else 'should not'} be "
        f"({_CELL_NAMES[name]})"
    )
    return Measured(
        {metric: float(show == should)}, evidence, {JUDGE_PIPELINE_COUNTS: cell.counts()}
    )


def confusion_stats(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``judge_pipeline.<stat>``: the confusion scores and counts from the summed cells (no
    setting changes them)."""
    return Confusion.from_counts(sums).stats()


SPECS = (
    MetricSpec(
        "judge_pipeline",
        "1 when the row's show decision equals show_gold, else 0; the eval's "
        "judge_pipeline.accuracy/precision/recall/f1 come from the summed confusion counts "
        "(positive = show; 0 on a zero denominator).",
        (
            MetricInfo(
                "judge_pipeline",
                "the show decision equals show_gold (stats: confusion counts and scores)",
                kind="binary",
                corpus=CONFUSION_STATS,
                range=UNIT,
            ),
        ),
        ("show", "show_gold"),
        measure_judge_pipeline,
        corpus=CorpusReduction(JUDGE_PIPELINE_COUNTS, confusion_stats),
    ),
)
