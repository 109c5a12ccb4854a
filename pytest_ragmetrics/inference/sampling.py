"""The sampling distribution of an estimate, however it was obtained: an interval at any
confidence, and the one-sided p-values of a bound.

Three shapes, each a small frozen record: ``Replicates`` (a bootstrap's resampled
estimates, read as BCa, percentile or order-statistic intervals), ``Normal`` (an
estimate and its standard error) and, in ``binary``, the closed-form intervals of 0/1
values. ``below(bound)`` is the p-value of the evidence that the true value lies below
``bound`` (small when the whole distribution lies below it), ``above(bound)`` the
mirror; a gate under a multiplicity correction reads them (docs/statistics.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from pytest_ragmetrics.inference.normal import cdf, quantile
from pytest_ragmetrics.inference.student import t_cdf, t_quantile

ReadAs = Literal["bca", "percentile", "order"]
# Resamples that differ by no more than this (relative) are one value: float rounding.
CONSTANT = 1e-12


class Sampling(Protocol):
    """What every sampling distribution offers."""

    @property
    def estimate(self) -> float: ...

    def interval(self, confidence: float) -> tuple[float, float]: ...

    def below(self, bound: float) -> float: ...

    def above(self, bound: float) -> float: ...


def _clip(p: float) -> float:
    return min(1.0, max(0.0, p))


@dataclass(frozen=True)
class Normal:
    """An estimate with a normal sampling distribution of standard error ``se``."""

    estimate: float
    se: float

    def _quantile(self, level: float) -> float:
        return quantile(level)

    def _cdf(self, z: float) -> float:
        return cdf(z)

    def interval(self, confidence: float) -> tuple[float, float]:
        half = self._quantile(0.5 + confidence / 2) * self.se
        return self.estimate - half, self.estimate + half

    def below(self, bound: float) -> float:
        return self._tail(self.estimate - bound)

    def above(self, bound: float) -> float:
        return self._tail(bound - self.estimate)

    def _tail(self, distance: float) -> float:
        """How likely an estimate this far (or farther) on the side of the bound is,
        were the true value at the bound. No spread: certain."""
        if self.se == 0:
            return 0.0 if distance < 0 else 1.0
        return self._cdf(distance / self.se)


@dataclass(frozen=True)
class StudentT(Normal):
    """An estimate whose studentized error follows Student's t with ``df`` degrees of
    freedom: the classical paired t interval of a mean."""

    df: float = math.inf

    def _quantile(self, level: float) -> float:
        return t_quantile(level, self.df)

    def _cdf(self, z: float) -> float:
        return t_cdf(z, self.df)


@dataclass(frozen=True)
class LogStudentT:
    """A positive ratio whose logarithm follows Student's t with standard error
    ``log_se``: the t interval of a ratio of means on the log scale (the delta method),
    which stays above 0 however wide it is."""

    estimate: float
    log_se: float
    df: float

    def interval(self, confidence: float) -> tuple[float, float]:
        half = t_quantile(0.5 + confidence / 2, self.df) * self.log_se
        return self.estimate * math.exp(-half), self.estimate * math.exp(half)

    def below(self, bound: float) -> float:
        if bound <= 0:
            return 1.0  # a positive ratio is never shown below a bound of 0 or less
        return StudentT(math.log(self.estimate), self.log_se, self.df).below(math.log(bound))

    def above(self, bound: float) -> float:
        if bound <= 0:
            return 0.0
        return StudentT(math.log(self.estimate), self.log_se, self.df).above(math.log(bound))


@dataclass(frozen=True)
class Cautious:
    """The more cautious of two readings of one estimate: the interval that covers both
    intervals, and of two one-sided p-values the larger. A mean's BCa interval follows
    the skew of its values, but grows too narrow when only a few rows changed (every
    resample then draws a few of them); the t interval does not shrink that way."""

    first: Sampling
    second: Sampling

    @property
    def estimate(self) -> float:
        return self.first.estimate

    def interval(self, confidence: float) -> tuple[float, float]:
        (low, high), (other_low, other_high) = (
            self.first.interval(confidence),
            self.second.interval(confidence),
        )
        return min(low, other_low), max(high, other_high)

    def below(self, bound: float) -> float:
        return max(self.first.below(bound), self.second.below(bound))

    def above(self, bound: float) -> float:
        return max(self.first.above(bound), self.second.above(bound))


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Replicates:
    """A bootstrap: the observed ``estimate`` and its resampled ``values``, read as

    * ``bca``: bias-corrected and accelerated (Efron 1987), ``bias`` (z0) from the share
      of resamples below the estimate (ties count half, as scipy does) and
      ``acceleration`` from the jackknife;
    * ``percentile``: the resamples' quantiles (numpy's linear interpolation);
    * ``order``: the order statistics sacrebleu reads, ``sorted[floor(B * alpha / 2)]`` and
      its mirror, so its corpus intervals are reproduced exactly.
    """

    estimate: float
    values: np.ndarray
    read_as: ReadAs = "percentile"
    bias: float = 0.0
    acceleration: float = 0.0

    @property
    def constant(self) -> bool:
        """Every resample gave the same value, up to float rounding (every pair changed by
        the same amount): there is no spread to read an interval from."""
        spread = float(self.values.max() - self.values.min())
        return spread <= CONSTANT * max(1.0, float(np.abs(self.values).max()))

    def interval(self, confidence: float) -> tuple[float, float]:
        if self.constant:
            return float(self.values.min()), float(self.values.max())
        alpha = 1 - confidence
        if self.read_as == "order":
            ordered = np.sort(self.values)
            cut = int(len(ordered) * alpha / 2 + 1e-9)
            return float(ordered[cut]), float(ordered[len(ordered) - cut - 1])
        levels = (alpha / 2, 1 - alpha / 2)
        if self.read_as == "bca":
            levels = (self._bca_level(levels[0]), self._bca_level(levels[1]))
        low, high = np.percentile(self.values, [100 * levels[0], 100 * levels[1]])
        return float(low), float(high)

    def _bca_level(self, level: float) -> float:
        """The resamples' quantile level BCa reads for the nominal ``level``."""
        shifted = self.bias + quantile(level)
        return cdf(self.bias + shifted / (1 - self.acceleration * shifted))

    def _share_at_most(self, bound: float) -> float:
        """The resamples' distribution function at ``bound``, ties counting half, kept
        inside (1/(2B), 1 - 1/(2B)) so a bound beyond every resample has a finite z."""
        count = len(self.values)
        below = np.count_nonzero(self.values < bound)
        ties = np.count_nonzero(self.values == bound)
        share = (below + ties / 2) / count
        edge = 1 / (2 * count)
        return min(1 - edge, max(edge, share))

    def below(self, bound: float) -> float:
        if self.constant:
            return 0.0 if self.values.max() < bound else 1.0
        if self.read_as != "bca":
            return _clip(1 - self._share_at_most(bound))
        return _clip(1 - cdf(self._nominal(bound)))

    def above(self, bound: float) -> float:
        if self.constant:
            return 0.0 if self.values.min() > bound else 1.0
        if self.read_as != "bca":
            return _clip(self._share_at_most(bound))
        return _clip(cdf(self._nominal(bound)))

    def _nominal(self, bound: float) -> float:
        """The nominal ``z`` at which BCa's interval ends exactly at ``bound``: its
        resample level inverted (``_bca_level`` backwards)."""
        reached = quantile(self._share_at_most(bound)) - self.bias
        denominator = 1 + self.acceleration * reached
        if denominator <= 0:  # beyond what the acceleration can map: the far end
            return math.inf if reached > 0 else -math.inf
        return reached / denominator - self.bias


def bca(estimate: float, values: np.ndarray, jackknife: np.ndarray | None) -> Replicates:
    """``values`` read as BCa, with the acceleration from the leave-one-out estimates
    ``jackknife`` (one per resampled unit); percentile when BCa is undefined: no
    jackknife, every resample on one side of the estimate, or a single unit."""
    # A resample equal to the estimate but for float rounding (the same rows drawn in
    # another order sum to another last bit) is a tie, not a side.
    tolerance = CONSTANT * max(1.0, abs(estimate))
    below = np.count_nonzero(values < estimate - tolerance)
    ties = np.count_nonzero(np.abs(values - estimate) <= tolerance)
    share = (below + ties / 2) / len(values)
    plain = Replicates(estimate, values, "percentile")
    if jackknife is None or not 0 < share < 1 or len(jackknife) < 2 or plain.constant:
        return plain
    spread = jackknife.mean() - jackknife
    squares = float(np.sum(spread**2))
    acceleration = float(np.sum(spread**3)) / (6 * squares**1.5) if squares > 0 else 0.0
    return Replicates(estimate, values, "bca", quantile(share), acceleration)
