"""0/1 values: exact McNemar, Wilson's and Newcombe's intervals against references.

Expected values come from scipy (``scipy.stats.binomtest``: its exact two-sided p-value
and its Wilson interval), from Newcombe's method 10 written out in this module from the
published formula on top of scipy's Wilson intervals, and from the worked examples
printed in Newcombe (1998), "Improved confidence intervals for the difference between
binomial proportions based on paired data", Statistics in Medicine 17, 2635-2650.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import binomtest

from pytest_ragmetrics.inference.binary import EXACT_TAIL, Counts, Newcombe, Wilson, mcnemar, wilson
from pytest_ragmetrics.inference.evidence import paired_evidence, single_evidence
from pytest_ragmetrics.inference.resample import Units
from pytest_ragmetrics.inference.settings import StatsSettings

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _scipy_mcnemar(n10: int, n01: int) -> float:
    if n10 + n01 == 0:
        return 1.0
    return float(binomtest(n10, n10 + n01, 0.5).pvalue)


def _scipy_wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


# ---------------------------------------------------------------------------------------
# McNemar: the exact binomial test of n10 against n10 + n01 at p = 1/2.

EXACT_CASES = [
    (0, 0), (0, 1), (1, 0), (1, 1), (3, 3), (0, 5), (5, 0), (7, 2), (2, 7), (1, 12),
    (10, 25), (50, 50), (17, 33), (120, 80), (480, 520), (999, 1001), (0, 60), (4, 100),
    (2450, 2550), (4900, 5100), (9950, 10050), (10000, 10000), (9800, 10200), (9900, 10100),
]  # fmt: skip


@pytest.mark.parametrize(("n10", "n01"), EXACT_CASES)
def test_mcnemar_equals_scipy_binomtest_exact_path(n10: int, n01: int) -> None:
    assert n10 + n01 <= EXACT_TAIL
    expected = _scipy_mcnemar(n10, n01)
    assert mcnemar(n10, n01) == pytest.approx(expected, abs=1e-12, rel=0)
    # whole numbers and one correctly rounded division: tiny p-values to scipy's precision too
    assert mcnemar(n10, n01) == pytest.approx(expected, rel=1e-12, abs=0)


def test_mcnemar_of_ties_and_no_discordant_pairs_is_one() -> None:
    for n in (0, 1, 4, 500, 10000):
        assert mcnemar(n, n) == 1.0
        assert _scipy_mcnemar(n, n) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("n10", "n01"),
    [
        (10000, 10001),
        (10050, 10100),
        (15000, 15300),
        (20000, 20500),
        (20000, 21000),
        (19000, 21000),
    ],
)
def test_mcnemar_equals_scipy_binomtest_log_path(n10: int, n01: int) -> None:
    assert n10 + n01 > EXACT_TAIL
    expected = _scipy_mcnemar(n10, n01)
    assert expected > 0  # not underflowed: the relative comparison means something
    assert mcnemar(n10, n01) == pytest.approx(expected, rel=1e-9, abs=0)


# ---------------------------------------------------------------------------------------
# Wilson's score interval of one proportion.

WILSON_CASES = [
    (k, n)
    for n in (1, 2, 3, 5, 10, 37, 100, 1000)
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n})
]


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize(("k", "n"), WILSON_CASES)
def test_wilson_equals_scipy(k: int, n: int, confidence: float) -> None:
    low, high = wilson(k, n, _z(confidence))
    expected = _scipy_wilson(k, n, confidence)
    assert low == pytest.approx(expected[0], abs=1e-12, rel=0)
    assert high == pytest.approx(expected[1], abs=1e-12, rel=0)
    scaled = Wilson(k, n, scale=float(n)).interval(confidence)
    assert scaled == pytest.approx((n * expected[0], n * expected[1]), abs=1e-12 * n, rel=0)


def test_single_binary_evidence_is_scipy_wilson() -> None:
    values = np.array([1.0] * 13 + [0.0] * 29)
    evidence = single_evidence(
        values, statistic="mean", settings=StatsSettings(), units=Units.rows(42), binary=True
    )
    expected = _scipy_wilson(13, 42, 0.95)
    assert (evidence.low, evidence.high) == pytest.approx(expected, abs=1e-12, rel=0)


# ---------------------------------------------------------------------------------------
# Newcombe's hybrid score interval of a paired difference (method 10).


def _newcombe_reference(
    counts: tuple[int, int, int, int], confidence: float, corrected_phi: bool = True
) -> tuple[float, float]:
    """Newcombe (1998) method 10 from the formula, on scipy's Wilson intervals of the two
    marginal proportions. ``corrected_phi``: the paper's phi, whose numerator
    ``B = n11 n00 - n10 n01`` is ``B - n/2`` when ``B > n/2``, 0 when ``0 <= B <= n/2``
    and ``B`` when ``B < 0``; without it, the plain phi coefficient."""
    n11, n10, n01, n00 = counts
    n = n11 + n10 + n01 + n00
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = _scipy_wilson(n11 + n10, n, confidence)
    l2, u2 = _scipy_wilson(n11 + n01, n, confidence)
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    b: float = n11 * n00 - n10 * n01
    if corrected_phi and b >= 0:
        b = max(b - n / 2, 0)
    phi = b / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    # a^2 - 2 phi a b + b^2 >= (a - b)^2 >= 0 for |phi| <= 1; max() absorbs rounding only
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return low, high


NEWCOMBE_TABLES: list[tuple[int, int, int, int]] = [
    (a, b, c, d) for a, b, c, d in itertools.product((0, 1, 3, 10), repeat=4) if a + b + c + d
] + [(36, 12, 2, 0), (18, 12, 2, 18), (53, 0, 0, 1), (0, 30, 0, 0), (400, 37, 21, 542)]


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_newcombe_equals_method_10(confidence: float) -> None:
    for table in NEWCOMBE_TABLES:
        got = Newcombe(Counts(*table)).interval(confidence)
        expected = _newcombe_reference(table, confidence)
        d = (table[1] - table[2]) / sum(table)
        # Each end is d -+ sqrt(radicand): where the radicand is 0 (e.g. phi = 1 and equal
        # margins) a rounding of 1e-18 in it moves the end by 1e-9, so the radicands are
        # compared, and the ends themselves where the square root is well conditioned.
        for end, got_end, expected_end in zip((0, 1), got, expected, strict=True):
            assert (got_end - d) ** 2 == pytest.approx((expected_end - d) ** 2, abs=1e-15, rel=0)
            if abs(expected_end - d) > 1e-6:
                assert got_end == pytest.approx(expected_end, abs=1e-12, rel=0), (table, end)


# Newcombe (1998): 95% intervals of method 10 for his worked examples (a)-(d), as printed
# (4 decimals); R's propint::ci.two.dep.props reproduces them, and its tests carry them.
PUBLISHED = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((53, 0, 0, 1), (-0.0729, 0.0729)),
    ((0, 30, 0, 0), (0.8395, 1.0)),
]


def test_published_examples_need_the_papers_corrected_phi() -> None:
    # The reference with the paper's phi reproduces every printed interval; the plain phi
    # reproduces (a) and (d) only, where the correction changes nothing.
    for table, printed in PUBLISHED:
        assert _newcombe_reference(table, 0.95) == pytest.approx(printed, abs=5e-5)
    plain = _newcombe_reference((18, 12, 2, 18), 0.95, corrected_phi=False)
    assert plain != pytest.approx((0.0562, 0.3290), abs=5e-5)


@pytest.mark.parametrize(("table", "printed"), PUBLISHED)
def test_newcombe_reproduces_the_published_examples(
    table: tuple[int, int, int, int], printed: tuple[float, float]
) -> None:
    assert Newcombe(Counts(*table)).interval(0.95) == pytest.approx(printed, abs=5e-5)


def test_paired_binary_evidence_is_newcombe_and_mcnemar() -> None:
    # 40 pairs: n11 = 12, n10 = 9, n01 = 3, n00 = 16
    current = np.array([1.0] * 12 + [1.0] * 9 + [0.0] * 3 + [0.0] * 16)
    reference = np.array([1.0] * 12 + [0.0] * 9 + [1.0] * 3 + [0.0] * 16)
    settings = StatsSettings()
    for statistic, factor in (("mean", 1.0), ("sum", 40.0)):
        evidence = paired_evidence(
            current,
            reference,
            statistic=statistic,  # type: ignore[arg-type]
            scale="difference",
            settings=settings,
            units=Units.rows(40),
            binary=True,
        )
        low, high = _newcombe_reference((12, 9, 3, 16), 0.95)
        assert evidence.estimate == pytest.approx(factor * 6 / 40, abs=1e-12)
        assert (evidence.low, evidence.high) == pytest.approx(
            (factor * low, factor * high), abs=1e-12 * factor, rel=0
        )
        assert evidence.p_value == pytest.approx(_scipy_mcnemar(9, 3), abs=1e-12, rel=0)


@pytest.mark.parametrize("n", [2, 4, 5, 6, 12, 40])
def test_mcnemar_floor_is_binomtest_of_every_pair_discordant_one_way(n: int) -> None:
    # The smallest p-value McNemar's test of n pairs can give: all n discordant one way.
    evidence = paired_evidence(
        np.ones(n),
        np.zeros(n),
        statistic="mean",
        scale="difference",
        settings=StatsSettings(),
        units=Units.rows(n),
        binary=True,
    )
    floor = _scipy_mcnemar(n, 0)
    assert evidence.p_floor == pytest.approx(floor, abs=1e-15, rel=0)
    assert evidence.p_value == pytest.approx(floor, abs=1e-15, rel=0)
    # no MDE where the test cannot get below the level (2 / 2^5 = 0.0625 >= 0.05)
    assert (evidence.mde is None) == (floor >= 0.05)
