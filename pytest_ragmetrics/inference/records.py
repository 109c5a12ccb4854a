"""What a comparison's evidence is, without computing it: the ``Evidence`` record and
the error of values that cannot give one. Apart from ``evidence`` (which imports numpy)
so that the gates and reports can name them without importing numpy in a run that
compares nothing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal

Scale = Literal["difference", "ratio", "value"]
Change = Literal["difference", "ratio"]
Statistic = Literal["mean", "sum", "p50", "p95"]
QUANTILES: Final = {"p50": 0.5, "p95": 0.95}


class NotComparable(ValueError):
    """The values cannot give an interval; the message says why, for the report."""


@dataclass(frozen=True)
class Side:
    """One side's statistic over the bootstrap resamples, as sacrebleu reports it: their
    mean and the interval of their order statistics."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class Evidence:
    """What the data say about a statistic, or about the change of one between two runs.

    ``scale``: ``difference`` (this run minus the reference), ``ratio`` (this run over the
    reference) or ``value`` (one run's statistic); ``estimate`` and [``low``, ``high``] on
    that scale, at ``confidence``. ``n``: the pairs (or rows) used; ``units``: what was
    resampled, fewer than ``n`` when rows of one session went together. ``p_value``: the
    two-sided p-value of *no change* (``None`` for one run). ``p_below`` and ``p_above``:
    the one-sided p-values that the true value lies below, or above, the bound the
    evidence was asked about. ``mde``: the minimum detectable effect on ``scale``.
    ``delta``: for a ratio, the difference and its interval too. ``sides`` and
    ``bootstrap_p``: for a corpus statistic, each side's bootstrap mean and interval and
    sacrebleu's paired-bootstrap p-value. ``p_bound``: for a mean, sum or ratio of values
    that are not 0/1, the two-sided sign-flip p-value of the bound itself (of the
    differences less the bound, or ``current - bound * reference`` for a ratio): what
    says whether a few changed rows, or a change the same on every row, show anything.
    ``p_floor``: the smallest p-value the comparison's test can give with these units and
    settings, whatever the data (2 / 2^n for an exact test of n units: every one of them
    changed the same way); a level it cannot get below is a level at which nothing can
    be shown, and the evidence then has no MDE.
    """

    scale: Scale
    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n: int
    units: int
    p_value: float | None = None
    p_below: float | None = None
    p_above: float | None = None
    mde: float | None = None
    delta: tuple[float, float, float] | None = None
    sides: tuple[Side, Side] | None = None
    bootstrap_p: float | None = None
    p_bound: float | None = None
    p_floor: float | None = None

    def held_to(self, low: float, high: float) -> Evidence:
        """The evidence with its interval cut to [``low``, ``high``], what the statistic
        can be at all (a mean of values in [0, 1] is in [0, 1]): a t or normal interval
        over few rows can reach past it, and an interval claiming a share above 1 is wrong
        however it was drawn. The method says when the interval was cut."""
        if (low <= self.low and self.high <= high) or not low <= self.estimate <= high:
            return self  # inside already, or the range is not this statistic's: left as drawn
        return replace(
            self,
            low=max(self.low, low),
            high=min(self.high, high),
            method=f"{self.method}; cut to what it can be, [{low:g}, {high:g}]",
        )

    @property
    def clustered(self) -> bool:
        return self.units < self.n
