"""The bootstrap: seeded resamples of rows (or of whole sessions), and the estimators
they are applied to.

A resample is a vector of *weights*, how many times each row was drawn, so one
resampling serves a mean, a ratio, a percentile and a corpus statistic alike, and rows
of one session (a *unit*) are drawn together: the session is drawn, all its rows follow.
Resamples come from ``numpy.random.default_rng(seed).integers(0, units, (B, units))`` in
blocks of rows of that matrix, the same draws as sacrebleu's
``default_rng(seed).choice(units, size=(B, units))``, whatever the block size.

Estimators (``Estimator``) turn a block of weights into the estimate of each resample,
give their jackknife (leave one unit out; BCa's acceleration) where it is smooth, and
their standard error in closed form where there is one (the normal interval above
``resample_limit``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pytest_ragmetrics.inference.sampling import LogStudentT, Sampling, StudentT


def window_margin(spread: float) -> int:
    """How far either side of a percentile's position a window of sorted values reaches:
    eight standard deviations (``spread``) of where a resample or a flip puts it, and a
    few positions more, so a count outside it is rarer than one in a million million."""
    return math.ceil(8 * spread) + 8


# Resamples drawn at once: a block of weights is BLOCK x rows floats.
BLOCK_CELLS = 4_000_000


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Units:
    """How rows are resampled: ``of_row[i]`` is the unit (session) of row ``i``, numbered
    from 0 in order of first appearance; ``count`` units in all. Rows without a session
    are units of their own."""

    of_row: np.ndarray
    count: int

    @property
    def clustered(self) -> bool:
        return self.count < len(self.of_row)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Each unit's sum of ``values``."""
        return np.bincount(self.of_row, weights=values, minlength=self.count)

    def sizes(self) -> np.ndarray:
        return np.bincount(self.of_row, minlength=self.count).astype(float)

    @property
    def spread(self) -> float:
        """``sqrt(sum(size ** 2))``: how far, in rows, a resample's count of the rows
        before any position strays (one standard deviation, at most)."""
        return math.sqrt(float(np.sum(self.sizes() ** 2)))

    @classmethod
    def of(cls, labels: Sequence[str | None]) -> Units:
        """Units from each row's session label (``None``: a unit of its own)."""
        if list(labels).count(None) == len(labels):
            return cls.rows(len(labels))
        numbers: dict[str, int] = {}
        of_row = np.empty(len(labels), dtype=np.intp)
        count = 0
        for i, label in enumerate(labels):
            if label is None:
                of_row[i], count = count, count + 1
                continue
            if label not in numbers:
                numbers[label], count = count, count + 1
            of_row[i] = numbers[label]
        return cls(of_row, count)

    @classmethod
    def rows(cls, n: int) -> Units:
        return cls(np.arange(n, dtype=np.intp), n)


@functools.lru_cache(maxsize=1)
def drawn_counts(units: int, resamples: int, seed: int) -> np.ndarray:
    """How many times each of ``units`` units is drawn in each of ``resamples``
    resamples (``(resamples, units)`` whole numbers, read-only). The draws depend on
    nothing else, so the gates of an eval, which share their pairs, share them: kept for
    the last size asked, ``2 * resamples * units`` bytes (20 MB at the default 2,000
    resamples of 5,000 pairs, or 100 of 100,000), until ``inference.release_draws``."""
    rng = np.random.default_rng(seed)
    counts = np.empty((resamples, units), dtype=np.uint16)  # a unit drawn > 65535 times: never
    block = max(1, BLOCK_CELLS // max(units, 1))
    for start in range(0, resamples, block):
        drawn = rng.integers(0, units, size=(min(block, resamples - start), units))
        for row, draws in enumerate(drawn, start):
            counts[row] = np.bincount(draws, minlength=units)
    counts.flags.writeable = False
    return counts


def weights(units: Units, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Bootstrap weights of the rows, ``resamples`` of them, in blocks (each a
    ``(block, rows)`` array of counts); the same draws however the blocks are cut."""
    counts = drawn_counts(units.count, resamples, seed)
    rows = len(units.of_row)
    block = max(1, BLOCK_CELLS // max(units.count, rows, 1))
    for start in range(0, resamples, block):
        part = counts[start : start + block].astype(float)
        yield part if not units.clustered else np.take(part, units.of_row, axis=1)


def robust_se(units: Units, influence: np.ndarray) -> float:
    """The standard error of a mean-like estimate from each row's ``influence`` (its
    centred, scaled contribution), summed within units: the cluster-robust (sandwich)
    estimate, ``sqrt(G / (G - 1) * sum(unit sums ** 2)) / n``; for rows that are their own
    units, the sample standard deviation over ``sqrt(n)``."""
    n, groups = len(influence), units.count
    if groups < 2:
        return 0.0
    total = float(np.sum(units.sums(influence) ** 2))
    return math.sqrt(groups / (groups - 1) * total) / n


class Estimator(Protocol):
    """A statistic of weighted rows."""

    def estimate(self) -> float:
        """The statistic of the rows as they are."""

    def resampled(self, block: np.ndarray) -> np.ndarray:
        """The statistic of each resample of a block of weights."""

    def jackknife(self) -> np.ndarray | None:
        """The statistic with each unit left out, or ``None`` where it is not smooth."""

    def se(self) -> float | None:
        """The closed-form standard error, or ``None`` where there is none."""

    def studentized(self, units: Units) -> Sampling | None:
        """The estimate's t interval (as a sampling distribution), or ``None``."""


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Mean:
    """The mean of ``values`` (a paired difference, or one run's values)."""

    values: np.ndarray
    units: Units

    def estimate(self) -> float:
        return float(math.fsum(self.values) / len(self.values))

    def resampled(self, block: np.ndarray) -> np.ndarray:
        result: np.ndarray = (block @ self.values) / block.sum(axis=1)
        return result

    def jackknife(self) -> np.ndarray | None:
        total, rows = float(self.values.sum()), len(self.values)
        sizes = self.units.sizes()
        if np.any(sizes >= rows):
            return None
        left: np.ndarray = (total - self.units.sums(self.values)) / (rows - sizes)
        return left

    def se(self) -> float:
        return robust_se(self.units, self.values - self.values.mean())

    def studentized(self, units: Units) -> Sampling | None:
        return StudentT(self.estimate(), self.se(), units.count - 1)


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Ratio:
    """The ratio of the means of ``current`` and ``reference`` (``x baseline`` rules)."""

    current: np.ndarray
    reference: np.ndarray
    units: Units

    def estimate(self) -> float:
        return math.fsum(self.current) / math.fsum(self.reference)

    def resampled(self, block: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = (block @ self.current) / (block @ self.reference)
        return result

    def jackknife(self) -> np.ndarray | None:
        left_out = self.units.sums(self.reference)
        remaining = self.reference.sum() - left_out
        if np.any(remaining == 0):
            return None
        kept: np.ndarray = (self.current.sum() - self.units.sums(self.current)) / remaining
        return kept

    def se(self) -> float:
        ratio, scale = self.estimate(), float(self.reference.mean())
        return robust_se(self.units, (self.current - ratio * self.reference) / scale)

    def studentized(self, units: Units) -> Sampling | None:
        """On the log scale, where a ratio of positive means belongs: ``None`` when a
        mean is not positive."""
        ratio = self.estimate()
        if ratio <= 0 or float(self.reference.mean()) <= 0:
            return None
        return LogStudentT(ratio, self.se() / ratio, units.count - 1)


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Ranked:
    """Resamples of sorted values as cumulative counts, laid end to end: the value of
    any rank in any resample is then one search away."""

    ordered: np.ndarray  # the values, sorted ascending
    flat: np.ndarray  # each resample's cumulative counts, plus its row's offset
    offsets: np.ndarray
    totals: np.ndarray  # the rows each resample drew

    @classmethod
    def of(cls, ordered: np.ndarray, counts: np.ndarray) -> Ranked:
        """``counts``: each resample's draws of the values, in their sorted order."""
        # Whole counts, summed as 32-bit integers: exact, and several times faster than
        # floats (a resample draws at most its rows, far below 2**31).
        drawn = np.cumsum(np.ascontiguousarray(counts, dtype=np.int32), axis=1, dtype=np.int32)
        totals = drawn[:, -1].astype(np.int64)
        offsets = np.arange(len(drawn), dtype=np.int64) * (int(totals.max()) + 1)
        flat = (drawn + offsets[:, None]).reshape(-1)
        return cls(ordered, flat, offsets, totals)

    def at(self, ranks: np.ndarray) -> np.ndarray:
        """The value of 0-based rank ``ranks[i]`` in resample ``i``: the first position
        whose cumulative count exceeds it."""
        width = len(self.ordered)
        positions = np.searchsorted(self.flat, ranks + self.offsets, side="right")
        start = np.arange(len(self.offsets)) * width
        found: np.ndarray = self.ordered[np.minimum(positions - start, width - 1)]
        return found

    def quantile(self, q: float) -> np.ndarray:
        """Each resample's ``q`` quantile, numpy's linear method on the values it drew."""
        position = (self.totals - 1) * q
        below = np.floor(position).astype(np.int64)
        low, high = self.at(below), self.at(np.minimum(below + 1, self.totals - 1))
        result: np.ndarray = low + (high - low) * (position - below)
        return result


def weighted_quantile(ordered: np.ndarray, block: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile of each resample: ``ordered`` are the values sorted, ``block``
    the resamples' weights in that order."""
    return Ranked.of(ordered, block).quantile(q)


class _NotSmooth:
    """An estimator that is not a smooth function of the rows' weights (a percentile):
    no jackknife, closed-form standard error or t interval, so its interval comes from
    its resamples alone."""

    def jackknife(self) -> None:
        return None

    def se(self) -> None:
        return None

    def studentized(self, units: Units) -> None:
        return None


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Quantile(_NotSmooth):
    """A percentile (``q`` in [0, 1]) of ``values``; no jackknife (a percentile's
    leave-one-out values are not smooth, so BCa is not used) and no closed-form error.

    ``spread``: the standard deviation, in sorted positions, of where a resample's
    percentile falls (``sqrt(rows)`` for rows resampled alone, ``sqrt(sum(size ** 2))``
    for sessions), so a resample is counted only in a window around the percentile's
    position: the draws before the window are one dot product away, and a resample
    whose percentile falls outside it is counted in full, so the result is exact."""

    values: np.ndarray
    q: float
    spread: float | None = None

    def estimate(self) -> float:
        return float(np.quantile(self.values, self.q))

    @functools.cached_property
    def _order(self) -> np.ndarray:
        return np.argsort(self.values, kind="stable")

    @functools.cached_property
    def _window(self) -> tuple[int, int] | None:
        """The sorted positions ``[start, stop)`` counted one by one, or ``None`` when
        the window would be most of the values."""
        rows = len(self.values)
        spread = self.spread if self.spread is not None else math.sqrt(rows)
        centre, margin = math.floor((rows - 1) * self.q), window_margin(spread)
        start, stop = max(0, centre - margin), min(rows, centre + margin + 2)
        return (start, stop) if stop - start < rows // 2 else None

    def resampled(self, block: np.ndarray) -> np.ndarray:
        order, window = self._order, self._window
        ordered = self.values[order]
        if window is None:
            return weighted_quantile(ordered, np.take(block, order, axis=1), self.q)
        start, stop = window
        before = np.rint(block @ self._before(start)).astype(np.int64)
        counts = np.cumsum(
            np.take(block, order[start:stop], axis=1).astype(np.int32), axis=1, dtype=np.int32
        )
        totals = np.rint(block.sum(axis=1)).astype(np.int64)
        position = (totals - 1) * self.q
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, totals - 1)
        low_need, high_need = below - before, above - before
        low = (counts > low_need[:, None]).argmax(axis=1)
        high = (counts > high_need[:, None]).argmax(axis=1)
        shown = ordered[start:stop]
        result: np.ndarray = shown[low] + (shown[high] - shown[low]) * (position - below)
        missed = ~((low_need >= 0) & (counts[:, -1] > high_need))
        if missed.any():  # the percentile fell outside the window: count those in full
            full = np.take(block[missed], order, axis=1)
            result[missed] = weighted_quantile(ordered, full, self.q)
        return result

    def _before(self, start: int) -> np.ndarray:
        """1 for the rows sorted before ``start``, 0 for the others."""
        mask = np.zeros(len(self.values))
        mask[self._order[:start]] = 1.0
        return mask


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class QuantileChange(_NotSmooth):
    """A percentile of ``current`` against the same percentile of ``reference``, over the
    same resampled pairs: their difference, or with ``ratio`` their ratio."""

    current: np.ndarray
    reference: np.ndarray
    q: float
    ratio: bool = False
    spread: float | None = None  # see ``Quantile``

    def estimate(self) -> float:
        ours = float(np.quantile(self.current, self.q))
        theirs = float(np.quantile(self.reference, self.q))
        return ours / theirs if self.ratio else ours - theirs

    @functools.cached_property
    def _sides(self) -> tuple[Quantile, Quantile]:
        return (
            Quantile(self.current, self.q, self.spread),
            Quantile(self.reference, self.q, self.spread),
        )

    def both(self, units: Units, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Each side's percentile on ``resamples`` resamples of the same pairs: their
        difference and their ratio both come from one drawing."""
        ours, theirs = [], []
        for block in weights(units, resamples, seed):
            ours.append(self._sides[0].resampled(block))
            theirs.append(self._sides[1].resampled(block))
        return np.concatenate(ours), np.concatenate(theirs)

    def resampled(self, block: np.ndarray) -> np.ndarray:
        ours = self._sides[0].resampled(block)
        theirs = self._sides[1].resampled(block)
        if not self.ratio:
            difference: np.ndarray = ours - theirs
            return difference
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio: np.ndarray = ours / theirs
        return ratio


def resampled(estimator: Estimator, units: Units, resamples: int, seed: int) -> np.ndarray:
    """The estimator on ``resamples`` bootstrap resamples of ``units``."""
    parts = [estimator.resampled(block) for block in weights(units, resamples, seed)]
    return np.concatenate(parts)


def mean_and_ratio(
    current: np.ndarray, reference: np.ndarray, units: Units, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """On the same resamples, the mean paired difference and the ratio of the means: one
    drawing for a ratio rule's ratio and the difference it also reports."""
    differences, ratios = [], []
    with np.errstate(divide="ignore", invalid="ignore"):
        for block in weights(units, resamples, seed):
            ours, theirs = block @ current, block @ reference
            differences.append((ours - theirs) / block.sum(axis=1))
            ratios.append(ours / theirs)
    return np.concatenate(differences), np.concatenate(ratios)
