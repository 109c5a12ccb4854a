"""The paired sign-flip permutation test: is a paired change more than noise?

If the change did nothing, each pair's two values could have come out either way round,
so swapping them (flipping the sign of the pair's difference) gives an equally likely
data set. The p-value is the share of flipped data sets whose statistic lies at least as
far from zero as the observed one (two-sided). Rows of one session flip together.

Only pairs (or sessions) that changed are flipped, and counted below:

* Up to ``EXACT_UNITS`` of them: every one of the 2^n flips, exactly.
* Up to ``resample_limit``: ``permutations`` random flips, ``p = (hits + 1) / (R + 1)``,
  which never understates the exact p-value's level (Phipson and Smyth 2010). Flips are
  drawn as bytes, eight units a byte, by ``numpy.random.default_rng(seed)``.
* Beyond: for a sum of differences the flips' distribution is normal with variance
  ``sum(d_i ** 2)`` to within its Monte-Carlo error at that size, and p comes from it.

A statistic within ``TIE`` (relative to the sum of the absolute values) of the observed
one counts as a tie, so float rounding in a sum cannot hide the observed flip itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pytest_ragmetrics.inference.normal import cdf
from pytest_ragmetrics.inference.resample import BLOCK_CELLS, Ranked, Units, window_margin

EXACT_UNITS = 16
TIE = 1e-9
_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)  # byte -> its 8 flips


def smallest_p(units: int, permutations: int, *, exact: bool) -> float:
    """The smallest p-value a sign-flip (or exact McNemar, or randomization) test of
    ``units`` units can give: 2 of the 2^units flips when every unit changed the same way,
    and with random flips never below ``1 / (permutations + 1)``."""
    extreme = 2.0 ** (1 - units)
    return extreme if exact else max(extreme, 1 / (permutations + 1))


def quantile_exact(units: Units, rows: int) -> bool:
    """Whether ``flip_quantile`` enumerates every flip (few units, data sets small)."""
    return units.count <= EXACT_UNITS and 2**units.count * rows <= 4 * BLOCK_CELLS


@dataclass(frozen=True)
class FlipTest:
    """A two-sided p-value, how it was obtained (for the report's ``method``), and the
    smallest p-value the test could give on these units whatever the data
    (``smallest_p``; 0 for a normal approximation)."""

    p_value: float
    how: str
    floor: float


def all_flips(units: int) -> np.ndarray:
    """Every assignment of flips to ``units`` units: ``(2**units, units)`` booleans."""
    codes = np.arange(2**units, dtype=np.int64)[:, None]
    flips: np.ndarray = ((codes >> np.arange(units, dtype=np.int64)) & 1).astype(bool)
    return flips


def random_flips(units: int, permutations: int, seed: int) -> Iterator[np.ndarray]:
    """``permutations`` random flip assignments as packed bytes (bit ``j`` of byte ``k``
    flips unit ``8k + j``), in blocks; the same draws however the blocks are cut."""
    rng = np.random.default_rng(seed)
    width = -(-units // 8)
    block = max(1, BLOCK_CELLS // max(width, 1))
    for start in range(0, permutations, block):
        size = min(block, permutations - start)
        yield rng.integers(0, 256, size=(size, width), dtype=np.uint8)


def unpacked(packed: np.ndarray, units: int) -> np.ndarray:
    """Packed flips as a ``(flips, units)`` boolean array."""
    flips: np.ndarray = np.unpackbits(packed, axis=1, bitorder="little")[:, :units].astype(bool)
    return flips


def flipped_total(packed: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``sum(values[u] for flipped u)`` for each packed flip assignment: for each byte of
    units a table of its 256 partial sums, so a flip costs one look-up per eight units."""
    width = packed.shape[1]
    padded = np.zeros(width * 8)
    padded[: len(values)] = values
    table = (padded.reshape(width, 8) @ _BITS.T).ravel()  # unit byte k, value b: k*256 + b
    total: np.ndarray = table[packed.astype(np.intp) + np.arange(width) * 256].sum(axis=1)
    return total


def _flipped_sums(packed: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``sum(s_u * sums[u])`` for each packed flip assignment (``s_u = -1`` if flipped)."""
    result: np.ndarray = sums.sum() - 2 * flipped_total(packed, sums)
    return result


def flip_sum(
    differences: np.ndarray, units: Units, permutations: int, seed: int, limit: int
) -> FlipTest:
    """The sign-flip test of a mean (or sum) of paired ``differences``. Only the units
    whose differences do not sum to 0 are flipped: flipping the others changes nothing,
    so they neither add to the test's work nor to the count of what it rests on (four
    changed rows among 100,000 give p = 2/16, exactly, not a normal approximation)."""
    sums = units.sums(differences)
    sums = sums[sums != 0]
    unit = "session" if units.clustered else "pair"
    what = unit if len(sums) == 1 else f"{unit}s"
    observed = abs(float(sums.sum()))
    tie = TIE * float(np.abs(sums).sum())
    count = len(sums)
    # with every unit changed one way (above ``limit`` of them, a normal p: no floor)
    every = units.count
    floor = 0.0 if every > limit else smallest_p(every, permutations, exact=every <= EXACT_UNITS)
    if count == 0:
        return FlipTest(1.0, "sign-flip test: no pair changed", floor)
    if count <= EXACT_UNITS:
        flipped = sums.sum() - 2 * (all_flips(count) @ sums)
        hits = int(np.count_nonzero(np.abs(flipped) >= observed - tie))
        how = f"sign-flip test, exact (all {2**count:,} flips of the {count} changed {what})"
        return FlipTest(hits / 2**count, how, floor)
    if count <= limit:
        hits = 0
        for packed in random_flips(count, permutations, seed):
            values = np.abs(_flipped_sums(packed, sums))
            hits += int(np.count_nonzero(values >= observed - tie))
        p = (hits + 1) / (permutations + 1)
        how = f"sign-flip test, {permutations:,} random flips of the {count:,} changed {what}"
        return FlipTest(p, how, floor)
    spread = math.sqrt(float(np.sum(sums**2)))
    p = 1.0 if spread == 0 else min(1.0, 2 * cdf(-observed / spread))
    how = f"sign-flip test, normal approximation ({count:,} changed {what} > {limit:,})"
    return FlipTest(p, how, floor)


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class _Swaps:
    """Both sides' values sorted together, so a quantile of either side after any
    swaps is a search: position ``p`` of ``ordered`` is row ``row[p]``'s value of this run
    (``ours[p]``) or of the reference."""

    ordered: np.ndarray
    row: np.ndarray
    ours: np.ndarray

    @classmethod
    def of(cls, current: np.ndarray, reference: np.ndarray) -> _Swaps:
        values = np.concatenate([current, reference])
        order = np.argsort(values, kind="stable")
        rows = np.concatenate([np.arange(len(current)), np.arange(len(reference))])
        sides = np.concatenate([np.ones(len(current), bool), np.zeros(len(reference), bool)])
        return cls(values[order], rows[order], sides[order])

    def change(self, swapped: np.ndarray, q: float) -> np.ndarray:
        """The ``q`` quantile change (this run minus the reference) for each row of
        ``swapped`` (booleans by row: the row's two values trade places)."""
        taken = swapped[:, self.row] != self.ours  # counted for this run
        ours = Ranked.of(self.ordered, taken).quantile(q)
        theirs = Ranked.of(self.ordered, ~taken).quantile(q)
        difference: np.ndarray = ours - theirs
        return difference


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class _Window:
    """A percentile of either side after any flips, read in a window of the sorted
    values: with random flips each pair gives either side one value at random, so the
    count of a side's values below position ``m`` is ``m / 2`` on average and strays by
    at most ``sqrt(rows) / 2`` in standard deviation. The count before the window comes
    from per-unit weights (``flipped_total``); only the window is counted position by
    position. A flip whose order statistics fall outside the window is recomputed in
    full (``_Swaps.change``), so the result is exact."""

    swaps: _Swaps
    units: Units
    start: int
    stop: int
    ours_before: int  # positions before the window holding this run's value, unflipped
    shift: np.ndarray  # per unit: how flipping it changes that count
    unit_at: np.ndarray  # the unit of each window position's row
    ours_at: np.ndarray  # whether each window position holds this run's value

    @classmethod
    def of(cls, swaps: _Swaps, units: Units, q: float) -> _Window | None:
        rows = len(swaps.ordered) // 2
        below = math.floor((rows - 1) * q)
        margin = window_margin(units.spread)
        start, stop = max(0, 2 * below - margin), min(2 * rows, 2 * below + 4 + margin)
        if stop - start > rows:  # not worth it: count everything
            return None
        before = np.arange(2 * rows) < start
        # flipping unit u trades its rows' values: +1 for a reference value before the
        # window (it becomes this run's), -1 for one of this run's
        signs = np.where(swaps.ours, -1.0, 1.0) * before
        shift = np.bincount(units.of_row[swaps.row], weights=signs, minlength=units.count)
        return cls(
            swaps,
            units,
            start,
            stop,
            int(np.count_nonzero(swaps.ours & before)),
            shift,
            units.of_row[swaps.row[start:stop]],
            swaps.ours[start:stop],
        )

    def _side(
        self, before: np.ndarray, counted: np.ndarray, ranks: tuple[int, int], fraction: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """One side's percentile per flip, and whether the window held it: the first
        window position whose count (with ``before``, the count ahead of the window)
        exceeds each rank."""
        counts = np.cumsum(np.ascontiguousarray(counted, dtype=np.int32), axis=1, dtype=np.int32)
        low_need, high_need = ranks[0] - before, ranks[1] - before
        low = (counts > low_need[:, None].astype(np.int32)).argmax(axis=1)
        high = (counts > high_need[:, None].astype(np.int32)).argmax(axis=1)
        held = (low_need >= 0) & (counts[:, -1] > high_need)
        ordered = self.swaps.ordered[self.start : self.stop]
        lower, upper = ordered[low], ordered[high]
        value: np.ndarray = lower + (upper - lower) * fraction
        return value, held

    def change(self, packed: np.ndarray, q: float) -> np.ndarray:
        """The percentile's change (this run minus the reference) for each packed flip
        assignment."""
        rows = len(self.swaps.ordered) // 2
        position = (rows - 1) * q
        below = math.floor(position)
        ranks, fraction = (below, min(below + 1, rows - 1)), position - below
        bytes_at = np.take(packed, self.unit_at // 8, axis=1)  # C order: fast to count
        flipped = ((bytes_at >> (self.unit_at % 8).astype(np.uint8)) & 1).astype(bool)
        ours_here = flipped != self.ours_at
        ours_before = self.ours_before + np.rint(flipped_total(packed, self.shift)).astype(np.int64)
        theirs_before = self.start - ours_before
        ours, held = self._side(ours_before, ours_here, ranks, fraction)
        theirs, held_too = self._side(theirs_before, ~ours_here, ranks, fraction)
        result: np.ndarray = ours - theirs
        missed = ~(held & held_too)
        if missed.any():  # outside the window: count those flips in full
            swapped = unpacked(packed[missed], self.units.count)[:, self.units.of_row]
            result[missed] = self.swaps.change(swapped, q)
        return result


def flip_quantile(
    current: np.ndarray, reference: np.ndarray, q: float, units: Units, permutations: int, seed: int
) -> FlipTest:
    """The sign-flip test of a percentile's change (``q`` in [0, 1]): each flip swaps the
    two values of the flipped units' rows. Exact up to ``EXACT_UNITS`` units while the
    2^n data sets stay small, else random flips."""
    swaps = _Swaps.of(current, reference)
    observed = abs(float(np.quantile(current, q) - np.quantile(reference, q)))
    tie = TIE * float(np.abs(current).sum() + np.abs(reference).sum())
    rows = len(current)
    exact = quantile_exact(units, rows)
    floor = smallest_p(units.count, permutations, exact=exact)
    window = None if exact else _Window.of(swaps, units, q)
    if window is not None:
        hits = 0
        for packed in random_flips(units.count, permutations, seed):
            values = np.abs(window.change(packed, q))
            hits += int(np.count_nonzero(values >= observed - tie))
        p = (hits + 1) / (permutations + 1)
        return FlipTest(p, f"sign-flip test, {permutations:,} random flips", floor)
    if exact:
        blocks: Iterator[np.ndarray] = iter([all_flips(units.count)])
    else:
        blocks = (unpacked(p, units.count) for p in random_flips(units.count, permutations, seed))
    step = max(1, BLOCK_CELLS // (2 * max(rows, 1)))
    hits = total = 0
    for flips in blocks:
        for start in range(0, len(flips), step):
            swapped = flips[start : start + step][:, units.of_row]
            values = np.abs(swaps.change(swapped, q))
            hits += int(np.count_nonzero(values >= observed - tie))
            total += len(values)
    if exact:
        return FlipTest(hits / total, f"sign-flip test, exact (all {total:,} flips)", floor)
    p = (hits + 1) / (permutations + 1)
    return FlipTest(p, f"sign-flip test, {permutations:,} random flips", floor)
