"""The paired sign-flip test against brute force: every sign vector enumerated with
``itertools.product``, in exact integer arithmetic where the data allow it, so a tie is
a tie and not a rounding; the Monte-Carlo test against that enumeration within its
binomial error; and, roughly, against ``scipy.stats.ttest_rel`` on a large sample.

The p-value is the share of sign vectors ``s`` with ``|sum(s * d)| >= |sum(d)|``
(two-sided; the observed vector itself counts), with whole sessions flipping together
when rows are clustered.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy.stats import ttest_rel

from pytest_ragmetrics.inference.evidence import paired_evidence
from pytest_ragmetrics.inference.resample import Units
from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.inference.signflip import flip_quantile, flip_sum

PERMUTATIONS, SEED, LIMIT = 10000, 12345, 5000


def _signs(units: int) -> np.ndarray:
    """All ``2**units`` sign vectors, from ``itertools.product``."""
    return np.array(list(itertools.product((1, -1), repeat=units)), dtype=np.int64)


def _exact_p(unit_sums: list[int]) -> float:
    """The brute-force p-value of whole-number unit sums: exact integer arithmetic."""
    sums = np.array(unit_sums, dtype=np.int64)
    observed = abs(int(sums.sum()))
    flipped = np.abs(_signs(len(sums)) @ sums)
    return int(np.count_nonzero(flipped >= observed)) / (1 << len(sums))


def _hundredths(rng: random.Random, n: int, shift: int, spread: int) -> list[int]:
    """``n`` paired differences in hundredths (whole numbers, so ties are exact)."""
    return [rng.randint(-spread, spread) + shift for _ in range(n)]


INTEGER_SETS: list[list[int]] = [
    [1, 1, 2, -1, 3, 0, 2, 1],  # ties and a zero difference
    [5, 5, 5, 5, -5, -5],  # many flips tie the observed sum
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11, -12, 13, 14, -15, 16],  # 16 units: the last exact
    [0, 0, 0, 0],  # no change at all: every flip ties, p = 1
    [3, -3, 2, -2],  # observed sum 0: p = 1
    [7],
    [2, 9],
]


@pytest.mark.parametrize("differences", INTEGER_SETS)
def test_flip_sum_equals_enumeration_on_integers(differences: list[int]) -> None:
    values = np.array(differences, dtype=float)
    test = flip_sum(values, Units.rows(len(values)), PERMUTATIONS, SEED, LIMIT)
    assert test.p_value == pytest.approx(_exact_p(differences), abs=1e-12, rel=0)
    assert "exact" in test.how or (not any(differences) and "no pair changed" in test.how)


def test_only_changed_pairs_are_flipped() -> None:
    # Four rows changed, all downwards, among 100,000: flipping the unchanged rows changes
    # nothing, so the test is exact over the four, p = 2 / 16 (a normal approximation over
    # all rows would say 0.046).
    differences = np.zeros(100_000)
    differences[[5, 50, 500, 5000]] = -1.0
    test = flip_sum(differences, Units.rows(len(differences)), PERMUTATIONS, SEED, LIMIT)
    assert test.p_value == pytest.approx(_exact_p([-1, -1, -1, -1]), abs=1e-12, rel=0)
    assert test.p_value == pytest.approx(2 / 16, abs=1e-12, rel=0)
    assert "exact" in test.how


@pytest.mark.parametrize("units", range(1, 7))
def test_the_floor_is_the_smallest_p_value_of_any_data(units: int) -> None:
    # Every data set of differences in {-1, 0, 1, 2} on `units` pairs, enumerated: the
    # smallest brute-force p-value over all of them is the floor the test reports, the
    # floor is 2 / 2^units, and a data set reaches it (every pair changed one way).
    smallest = min(
        _exact_p(list(data)) for data in itertools.product((-1, 0, 1, 2), repeat=units) if any(data)
    )
    test = flip_sum(np.ones(units), Units.rows(units), PERMUTATIONS, SEED, LIMIT)
    assert test.floor == smallest == 2 / 2**units
    assert test.p_value == test.floor


@pytest.mark.parametrize("permutations", [100, PERMUTATIONS])
def test_the_floor_of_random_flips_is_one_over_their_count_plus_one(permutations: int) -> None:
    # 20 pairs changed one way are flipped at random: (hits + 1) / (R + 1), and only 2
    # of the 2^20 flips reach the observed sum, so p is 1 / (R + 1), the floor.
    test = flip_sum(np.ones(20), Units.rows(20), permutations, SEED, LIMIT)
    assert test.p_value == test.floor == 1 / (permutations + 1)
    assert flip_sum(np.ones(20), Units.rows(20), permutations, SEED, 10).floor == 0  # normal


@pytest.mark.parametrize("seed", range(6))
def test_flip_sum_equals_enumeration_on_decimals(seed: int) -> None:
    # Differences in hundredths: the brute force sums whole numbers of hundredths, the
    # library sums the floats k / 100, where sums that tie (0.1 + 0.2 against 0.3) differ
    # by a rounding; the library counts those as ties, and so must it to agree.
    rng = random.Random(seed)
    n = rng.randint(9, 16)
    hundredths = _hundredths(rng, n, shift=rng.randint(0, 15), spread=40)
    values = np.array(hundredths, dtype=float) / 100
    test = flip_sum(values, Units.rows(n), PERMUTATIONS, SEED, LIMIT)
    assert test.p_value == pytest.approx(_exact_p(hundredths), abs=1e-12, rel=0)


def test_flip_sum_float_ties_count() -> None:
    # 0.1 + 0.2 - 0.3 + 0.3: flipping the 0.3s' signs gives the same sum in decimals, but
    # not in binary floats (0.1 + 0.2 != 0.3); the enumeration in tenths says which tie.
    tenths = [1, 2, -3, 3, 1, 1]
    values = np.array(tenths, dtype=float) / 10
    test = flip_sum(values, Units.rows(len(tenths)), PERMUTATIONS, SEED, LIMIT)
    assert test.p_value == pytest.approx(_exact_p(tenths), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(4))
def test_flip_sum_of_sessions_equals_enumeration_over_sessions(seed: int) -> None:
    # 24 to 40 rows in 8 to 14 sessions (and a few rows of their own): each session's rows
    # flip together, so the brute force enumerates one sign per session.
    rng = random.Random(100 + seed)
    sessions = rng.randint(8, 13)
    labels: list[str | None] = [f"s{rng.randrange(sessions)}" for _ in range(rng.randint(24, 40))]
    labels += [None] * (rng.randint(0, 2))
    hundredths = _hundredths(rng, len(labels), shift=rng.randint(0, 8), spread=30)
    units = Units.of(labels)
    assert units.count <= 16
    unit_sums: dict[str, int] = {}
    for index, (label, value) in enumerate(zip(labels, hundredths, strict=True)):
        key = label if label is not None else f"row{index}"
        unit_sums[key] = unit_sums.get(key, 0) + value
    values = np.array(hundredths, dtype=float) / 100
    test = flip_sum(values, units, PERMUTATIONS, SEED, LIMIT)
    assert test.p_value == pytest.approx(_exact_p(list(unit_sums.values())), abs=1e-12, rel=0)


def test_paired_evidence_uses_the_exact_sign_flip_p_value() -> None:
    rng = random.Random(7)
    current = [rng.randint(0, 100) for _ in range(12)]
    reference = [value - rng.randint(-20, 35) for value in current]
    evidence = paired_evidence(
        np.array(current, dtype=float),
        np.array(reference, dtype=float),
        statistic="mean",
        scale="difference",
        settings=StatsSettings(),
        units=Units.rows(12),
    )
    expected = _exact_p([a - b for a, b in zip(current, reference, strict=True)])
    assert evidence.p_value == pytest.approx(expected, abs=1e-12, rel=0)


# ---------------------------------------------------------------------------------------
# Percentile changes: a flip swaps the two values of a pair.


def _quantile_p(
    current: list[float], reference: list[float], q: float, groups: list[list[int]]
) -> float:
    """Brute force: for each sign vector over ``groups`` (lists of rows), from
    ``itertools.product``, swap the two values of the flipped rows, then
    ``|quantile(ours) - quantile(theirs)|`` by ``np.quantile`` (every data set at once).
    Statistics within 1e-9 (relative) of the observed one tie with it: interpolation may
    round two equal differences apart."""
    observed = abs(float(np.quantile(current, q) - np.quantile(reference, q)))
    signs = np.array(list(itertools.product((False, True), repeat=len(groups))))
    swapped = np.zeros((len(signs), len(current)), dtype=bool)
    for unit, rows in enumerate(groups):
        swapped[:, rows] = signs[:, [unit]]
    ours = np.where(swapped, reference, current)
    theirs = np.where(swapped, current, reference)
    statistics = np.abs(np.quantile(ours, q, axis=1) - np.quantile(theirs, q, axis=1))
    tie = 1e-9 * max(1.0, observed)
    return int(np.count_nonzero(statistics >= observed - tie)) / len(signs)


def _scores(seed: int) -> tuple[list[float], list[float]]:
    """10 to 12 pairs of whole-number scores, the current mostly higher."""
    rng = random.Random(seed)
    n = rng.choice([10, 11, 12])
    reference = [float(rng.randint(10, 99)) for _ in range(n)]
    return [value + rng.randint(-5, 25) for value in reference], reference


QUANTILE_CASES = [
    ([3.0, 8, 1, 7, 7, 12, 5, 9, 4, 10], [2.0, 6, 1, 8, 5, 9, 5, 4, 4, 6], 0.5),
    ([3.0, 8, 1, 7, 7, 12, 5, 9, 4, 10], [2.0, 6, 1, 8, 5, 9, 5, 4, 4, 6], 0.95),
    *[(*_scores(seed), q) for seed in (1, 3, 4, 5) for q in (0.5, 0.95)],
    ([4.0] * 11, [4.0] * 11, 0.5),  # nothing changed: p = 1
]


@pytest.mark.parametrize(("current", "reference", "q"), QUANTILE_CASES)
def test_flip_quantile_equals_enumeration(
    current: list[float], reference: list[float], q: float
) -> None:
    n = len(current)
    expected = _quantile_p(current, reference, q, [[row] for row in range(n)])
    test = flip_quantile(
        np.array(current), np.array(reference), q, Units.rows(n), PERMUTATIONS, SEED
    )
    assert test.p_value == pytest.approx(expected, abs=1e-12, rel=0)
    assert "exact" in test.how


@pytest.mark.parametrize("q", [0.5, 0.95])
def test_flip_quantile_of_continuous_values_equals_enumeration(q: float) -> None:
    generator = np.random.default_rng(5)
    reference = generator.lognormal(0, 1, 12)
    current = reference * generator.lognormal(0.2, 0.4, 12)
    expected = _quantile_p(list(current), list(reference), q, [[row] for row in range(12)])
    test = flip_quantile(current, reference, q, Units.rows(12), PERMUTATIONS, SEED)
    assert test.p_value == pytest.approx(expected, abs=1e-12, rel=0)


def test_flip_quantile_of_sessions_equals_enumeration_over_sessions() -> None:
    labels: list[str | None] = ["a", "b", "a", "c", "d", "b", "e", None, "c", "f", "a", "g"]
    current = [5.0, 9, 3, 14, 7, 8, 11, 2, 6, 13, 4, 10]
    reference = [4.0, 7, 4, 10, 7, 9, 6, 3, 5, 12, 2, 9]
    units = Units.of(labels)
    groups = [
        [row for row in range(12) if units.of_row[row] == unit] for unit in range(units.count)
    ]
    assert units.count == 8
    for q in (0.5, 0.95):
        expected = _quantile_p(current, reference, q, groups)
        test = flip_quantile(np.array(current), np.array(reference), q, units, PERMUTATIONS, SEED)
        assert test.p_value == pytest.approx(expected, abs=1e-12, rel=0)


# ---------------------------------------------------------------------------------------
# Above 16 units: random flips, against the exact p-value within Monte-Carlo error.


def _exact_p_many(unit_sums: list[int]) -> float:
    """The exact p-value of up to ~22 whole-number unit sums: all sign vectors by bits."""
    sums = np.array(unit_sums, dtype=np.int64)
    codes = np.arange(2 ** len(sums), dtype=np.int64)
    flipped = np.zeros(len(codes), dtype=np.int64)
    for position, value in enumerate(sums):
        flipped += np.where((codes >> position) & 1, -value, value)
    return int(np.count_nonzero(np.abs(flipped) >= abs(int(sums.sum())))) / len(codes)


@pytest.mark.parametrize(("seed", "shift"), [(1, 4), (2, 7), (3, 0), (4, 12)])
def test_random_flips_agree_with_the_exact_p_value_of_20_pairs(seed: int, shift: int) -> None:
    rng = random.Random(seed)
    hundredths = _hundredths(rng, 20, shift=shift, spread=40)
    exact = _exact_p_many(hundredths)
    test = flip_sum(np.array(hundredths) / 100, Units.rows(20), PERMUTATIONS, SEED, LIMIT)
    assert "random" in test.how
    # (hits + 1) / (R + 1): binomial error of the hits' share, plus the +1's bias
    error = math.sqrt(exact * (1 - exact) / PERMUTATIONS)
    assert abs(test.p_value - exact) <= 4 * error + 1 / (PERMUTATIONS + 1)


def test_random_flips_roughly_agree_with_the_paired_t_test() -> None:
    generator = np.random.default_rng(11)
    reference = generator.normal(0, 1, 400)
    current = reference + generator.normal(0.12, 1, 400)
    test = flip_sum(current - reference, Units.rows(400), PERMUTATIONS, SEED, LIMIT)
    expected = float(ttest_rel(current, reference).pvalue)
    assert 0.005 < expected < 0.2  # a p-value worth comparing
    assert test.p_value == pytest.approx(expected, rel=0.25)
