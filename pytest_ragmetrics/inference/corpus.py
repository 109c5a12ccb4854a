"""Statistics that are not means of rows (corpus BLEU, chrF, precision and recall of
confusion counts): resampled through the rows' sufficient statistics, as sacrebleu does.

Each row carries its sufficient statistics (``parts``: a row of a ``(rows, P)`` array); a
resample sums the parts of the rows it drew and ``reduce`` turns the sums into the
statistic. Two procedures, sacrebleu's (``sacrebleu.significance``):

* the paired bootstrap: both sides summed over the same resampled rows (drawn as
  ``default_rng(seed).choice(n, size=(B, n))``); each side's interval is read from the
  order statistics ``sorted[B // 40]`` and its mirror (for 95%), and sacrebleu's
  p-value is the share of resampled absolute differences, centred on their mean, beyond
  the observed one;
* approximate randomization: ``R`` shuffles, each swapping a random half of the rows'
  statistics between the two sides (``default_rng(seed).integers(2, size=(R, n),
  dtype=bool)``), the p-value the share of shuffles whose absolute difference reaches
  the observed one, ``(hits + 1) / (R + 1)``. sacrebleu counts only shuffles strictly
  beyond it, so two systems that agree on every row get ``1 / (R + 1)``, as if the
  agreement were significant; the test as defined (Noreen 1989) counts ties, and so do
  these. On data without ties the two p-values are equal.

sacrebleu sums a resample's statistics in float32; these are summed in float64. For
whole-number statistics below 2^24 both sums are exact, but sacrebleu then divides the
float32 sums in float32, so its bootstrap scores carry float32 rounding (about 1e-7
relative): its p-values are reproduced exactly, its intervals to that rounding
(docs/statistics.md#where-sacrebleu-differs-and-why).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pytest_ragmetrics.inference.resample import BLOCK_CELLS, Units, weights
from pytest_ragmetrics.inference.signflip import TIE

Reduce = Callable[[np.ndarray], float]


def total(parts: np.ndarray) -> np.ndarray:
    """The column sums of ``parts``, exactly rounded (as the run's aggregates are)."""
    return np.array([math.fsum(column) for column in parts.T], dtype=float)


def reduced(reduce: Reduce, sums: np.ndarray) -> np.ndarray:
    """``reduce`` of each row of ``sums`` (one resample's summed statistics a row)."""
    return np.fromiter((reduce(row) for row in sums), dtype=float, count=len(sums))


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class PairedReplicates:
    """Both sides' statistic on each bootstrap resample of the pairs."""

    current: np.ndarray
    reference: np.ndarray


def paired_bootstrap(
    current: np.ndarray,
    reference: np.ndarray,
    reduce: Reduce,
    units: Units,
    resamples: int,
    seed: int,
) -> PairedReplicates:
    """The statistic of both sides on ``resamples`` resamples of the same rows."""
    ours, theirs = [], []
    for block in weights(units, resamples, seed):
        ours.append(reduced(reduce, block @ current))
        theirs.append(reduced(reduce, block @ reference))
    return PairedReplicates(np.concatenate(ours), np.concatenate(theirs))


def single_bootstrap(
    parts: np.ndarray, reduce: Reduce, units: Units, resamples: int, seed: int
) -> np.ndarray:
    """The statistic of one run on ``resamples`` resamples of its rows."""
    return np.concatenate(
        [reduced(reduce, block @ parts) for block in weights(units, resamples, seed)]
    )


def bootstrap_p(replicates: PairedReplicates, observed: float) -> float:
    """sacrebleu's paired-bootstrap p-value (``sacrebleu --paired-bs``), reported beside
    the randomization test's for readers who compare with it: resampled absolute
    differences, centred on their mean (the null of no difference), strictly beyond the
    observed absolute difference; like sacrebleu's, 1 / (B + 1) for identical systems."""
    spread = np.abs(replicates.current - replicates.reference)
    centred = spread - spread.mean()
    hits = int(np.count_nonzero(centred > abs(observed)))
    return (hits + 1) / (len(centred) + 1)


def approximate_randomization(
    current: np.ndarray,
    reference: np.ndarray,
    reduce: Reduce,
    units: Units,
    permutations: int,
    seed: int,
) -> float:
    """The approximate randomization p-value of the two sides' difference; shuffles swap
    whole units (sessions) when rows are clustered."""
    observed = abs(reduce(total(current)) - reduce(total(reference)))
    tie = TIE * max(1.0, observed)  # a shuffle equal to the observed one, but for rounding
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_CELLS // max(units.count, 1))
    hits = 0
    for start in range(0, permutations, block):
        # sacrebleu's draws: row r of side A takes the reference's statistics where True
        flips = rng.integers(2, size=(min(block, permutations - start), units.count), dtype=bool)
        swapped = flips[:, units.of_row].astype(float)
        kept = 1.0 - swapped
        first = reduced(reduce, swapped @ reference + kept @ current)
        second = reduced(reduce, kept @ reference + swapped @ current)
        hits += int(np.count_nonzero(np.abs(first - second) >= observed - tie))
    return (hits + 1) / (permutations + 1)
