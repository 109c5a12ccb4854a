"""0/1 values: exact McNemar, Newcombe's interval for a paired difference of
proportions, Wilson's interval for one proportion.

Each pair of 0/1 values is one of four kinds: both 1 (``n11``), only this run's 1
(``n10``), only the reference's 1 (``n01``), both 0 (``n00``). Only the *discordant* pairs
(``n10``, ``n01``) say anything about a change: if the change did nothing, each is
equally likely to go either way, so ``n10`` is binomial with p = 1/2 given ``n10 + n01``,
and the exact two-sided test of that is McNemar's (the same p-value as
``scipy.stats.binomtest(n10, n10 + n01, 0.5)``).

The interval of the difference ``(n10 - n01) / n`` is Newcombe's hybrid score interval
(1998, method 10): Wilson score intervals of the two proportions, combined with the
correlation of the pairs (its phi coefficient, continuity-corrected as the paper does).
Unlike the textbook ``estimate +- 1.96 SE`` it keeps close to
its stated coverage on small sets and near 0 or 1, and never leaves [-1, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pytest_ragmetrics.inference.normal import cdf, two_sided

# Beyond this many discordant pairs the binomial tail is summed in logarithms.
EXACT_TAIL = 20000
_FAR = 40.0  # a z no interval reaches: the end of the bisection's range


def binomial_tail(successes: int, trials: int) -> float:
    """``P(X <= successes)`` for ``X`` binomial with ``trials`` trials and p = 1/2: exact
    (whole numbers, one correctly rounded division) up to ``EXACT_TAIL`` trials, then by
    logarithms of the terms."""
    if successes >= trials:
        return 1.0
    if trials <= EXACT_TAIL:
        total, term = 0, 1
        for i in range(successes + 1):
            total += term
            term = term * (trials - i) // (i + 1)
        return total / (1 << trials)
    j = np.arange(successes, dtype=float)
    logs = np.concatenate(([0.0], np.cumsum(np.log(trials - j) - np.log1p(j))))
    top = float(logs.max())
    return float(math.exp(top - trials * math.log(2)) * np.exp(logs - top).sum())


def mcnemar(n10: int, n01: int) -> float:
    """The exact two-sided McNemar p-value of ``n10`` against ``n01`` discordant pairs."""
    discordant = n10 + n01
    if discordant == 0 or n10 == n01:
        return 1.0
    return min(1.0, 2 * binomial_tail(min(n10, n01), discordant))


def wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's score interval of ``successes / n`` at the two-sided ``z``; with no
    trials, the whole of [0, 1] (nothing is known of the share, and an interval of no
    width would claim it is)."""
    if n == 0:
        return 0.0, 1.0
    share = successes / n
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly, not by rounding
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


class _ClosedForm:
    """A sampling distribution whose interval has a closed form at every ``z``
    (``_ends``): the interval at a confidence, and the one-sided p-value of a bound as the
    level at which one end of the interval reaches it (found by bisection)."""

    @property
    def estimate(self) -> float:
        raise NotImplementedError

    def _ends(self, z: float) -> tuple[float, float]:
        raise NotImplementedError

    def interval(self, confidence: float) -> tuple[float, float]:
        return self._ends(two_sided(confidence))

    def _z_where(self, side: int, bound: float) -> float:
        """The ``z`` at which the interval's end on ``side`` (0 low, 1 high) reaches
        ``bound``; ``_FAR`` when no interval reaches it."""
        if (self._ends(_FAR)[side] - bound) * (1 if side else -1) < 0:
            return _FAR
        low, high = 0.0, _FAR
        for _ in range(80):
            middle = (low + high) / 2
            if (self._ends(middle)[side] < bound) == (side == 1):
                low = middle
            else:
                high = middle
        return (low + high) / 2

    def below(self, bound: float) -> float:
        if bound <= self.estimate:
            return 1 - self.above(bound) if bound < self.estimate else 0.5
        return 1 - cdf(self._z_where(1, bound))

    def above(self, bound: float) -> float:
        if bound >= self.estimate:
            return 1 - self.below(bound) if bound > self.estimate else 0.5
        return 1 - cdf(self._z_where(0, bound))


@dataclass(frozen=True)
class Counts:
    """The four kinds of pairs (see the module docstring)."""

    n11: int
    n10: int
    n01: int
    n00: int

    @property
    def n(self) -> int:
        return self.n11 + self.n10 + self.n01 + self.n00

    @classmethod
    def of(cls, current: np.ndarray, reference: np.ndarray) -> Counts:
        ours, theirs = current != 0, reference != 0
        return cls(
            int(np.count_nonzero(ours & theirs)),
            int(np.count_nonzero(ours & ~theirs)),
            int(np.count_nonzero(~ours & theirs)),
            int(np.count_nonzero(~ours & ~theirs)),
        )


@dataclass(frozen=True)
class Newcombe(_ClosedForm):
    """Newcombe's hybrid score interval of a paired difference of proportions, as a
    sampling distribution (``scale`` multiplies it: ``n`` for a difference of sums)."""

    counts: Counts
    scale: float = 1.0

    @property
    def estimate(self) -> float:
        c = self.counts
        return self.scale * (c.n10 - c.n01) / c.n

    def _correlation(self) -> float:
        """The numerator of the pairs' phi coefficient, ``n11 n00 - n10 n01``, with
        Newcombe's correction: reduced by ``n / 2`` when above it, 0 between 0 and ``n /
        2``, kept when negative (Newcombe 1998, method 10; Altman et al., *Statistics
        with Confidence*, 2000)."""
        c = self.counts
        product = c.n11 * c.n00 - c.n10 * c.n01
        if product > c.n / 2:
            return product - c.n / 2
        return float(product) if product < 0 else 0.0

    def _ends(self, z: float) -> tuple[float, float]:
        c = self.counts
        first, second = c.n11 + c.n10, c.n11 + c.n01
        p1, p2 = first / c.n, second / c.n
        l1, u1 = wilson(first, c.n, z)
        l2, u2 = wilson(second, c.n, z)
        product = (c.n11 + c.n10) * (c.n01 + c.n00) * (c.n11 + c.n01) * (c.n10 + c.n00)
        phi = self._correlation() / math.sqrt(product) if product else 0.0
        delta = p1 - p2
        low = delta - math.sqrt(
            max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
        )
        high = delta + math.sqrt(
            max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
        )
        return self.scale * low, self.scale * high


@dataclass(frozen=True)
class Wilson(_ClosedForm):
    """Wilson's interval of one proportion, as a sampling distribution (``scale``
    multiplies it: ``n`` for a sum)."""

    successes: int
    n: int
    scale: float = 1.0

    @property
    def estimate(self) -> float:
        return self.scale * self.successes / self.n

    def _ends(self, z: float) -> tuple[float, float]:
        low, high = wilson(self.successes, self.n, z)
        return self.scale * low, self.scale * high
