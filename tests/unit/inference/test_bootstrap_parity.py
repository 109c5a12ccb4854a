"""Bootstrap intervals against ``scipy.stats.bootstrap``, the t interval against
``scipy.stats.t``, and the normal interval above ``resample_limit`` against the textbook
formula.

A mean's (and a ratio's) interval is the BCa bootstrap widened to the t interval where
that is wider (``sampling.Cautious``): the evidence is compared with the union of scipy's
BCa interval and the t interval computed here, and the library's BCa interval on its own
(``sampling.bca`` on ``resample.resampled``) with scipy's. Two comparisons with scipy:

* the same draws: scipy resamples with ``rng.integers(0, n, (B, n))``, as the library's
  ``resample.weights`` does, so with the same seeded generator both read BCa or
  percentile intervals off the same resamples and must agree to float rounding;
* Monte-Carlo error: the library with several seeds against scipy with many resamples
  and another seed; the difference must stay within 4 standard deviations of our
  endpoint across seeds (the Monte-Carlo error of one run), and the mean over seeds
  within 4 standard errors of that mean (plus scipy's own, smaller, error).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from scipy.stats import bootstrap
from scipy.stats import t as student_t

from pytest_ragmetrics.inference.evidence import Evidence, paired_evidence, single_evidence
from pytest_ragmetrics.inference.resample import Estimator, Mean, Ratio, Units, resampled
from pytest_ragmetrics.inference.sampling import Replicates, bca
from pytest_ragmetrics.inference.settings import StatsSettings

SEEDS = (12345, 1, 2, 3, 4, 5, 6, 7)
RESAMPLES = 2000
SCIPY_RESAMPLES = 40000
SCIPY_SEED = 2718
FEW_FLIPS = 100  # the p-value is not compared here; the least permutations allowed


def _normal_pairs() -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(21)
    reference = generator.normal(0.6, 0.15, 60)
    return reference + generator.normal(0.03, 0.1, 60), reference


def _skewed_pairs() -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(34)
    reference = generator.lognormal(5, 0.9, 80)  # e.g. latencies
    return reference * generator.lognormal(-0.08, 0.35, 80), reference


def _few_changed_pairs(changes: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """An F1-like score of 42 rows of which only the first few moved: the case the t
    interval widens (every resample draws a handful of them)."""
    generator = np.random.default_rng(1)
    reference = np.round(generator.uniform(0, 1, 42), 2)
    reference[: len(changes)] = 1.0
    current = reference.copy()
    current[: len(changes)] += changes
    return current, reference


# Changes of -1 and -0.5 are exact in binary: a resample equal to the estimate in exact
# arithmetic is equal in floats too, so ties with the estimate are the same for scipy.
DATA = {
    "normal": _normal_pairs(),
    "lognormal": _skewed_pairs(),
    "few": _few_changed_pairs([-1, -1, -0.5, -1]),
}
CONTINUOUS = ["lognormal", "normal"]


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    result: np.ndarray = np.mean(x - y, axis=axis)
    return result


def _ratio_of_means(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    result: np.ndarray = np.mean(x, axis=axis) / np.mean(y, axis=axis)
    return result


def _quantile_change(q: float) -> Callable[[np.ndarray, np.ndarray, int], np.ndarray]:
    def change(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        result: np.ndarray = np.quantile(x, q, axis=axis) - np.quantile(y, q, axis=axis)
        return result

    return change


def _quantile(q: float) -> Callable[[np.ndarray, int], np.ndarray]:
    def value(x: np.ndarray, axis: int) -> np.ndarray:
        result: np.ndarray = np.quantile(x, q, axis=axis)
        return result

    return value


def _scipy(
    data: tuple[np.ndarray, ...], statistic: Any, method: str, resamples: int, seed: int
) -> tuple[float, float]:
    result = bootstrap(
        data,
        statistic,
        paired=len(data) > 1,
        vectorized=True,
        method=method,
        n_resamples=resamples,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _t_interval(estimate: float, se: float, df: int, confidence: float) -> tuple[float, float]:
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se
    return estimate - half, estimate + half


def _union(first: tuple[float, float], second: tuple[float, float]) -> tuple[float, float]:
    return min(first[0], second[0]), max(first[1], second[1])


def _mean_t(values: np.ndarray) -> tuple[float, float]:
    """The classical t interval of a mean: mean +- t(n - 1) sd / sqrt(n)."""
    n = len(values)
    se = float(np.std(values, ddof=1)) / math.sqrt(n)
    return _t_interval(float(values.mean()), se, n - 1, 0.95)


def _ratio_t(current: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """The t interval of a ratio of positive means on the log scale: ``log R +- t(n - 1)
    se / R``, with ``se = sd(x - R y, ddof=1) / (sqrt(n) mean(y))`` the delta method's
    standard error of ``R``; back on the ratio scale, ``R exp(-+ t se / R)``."""
    n, ratio = len(current), float(current.mean() / reference.mean())
    se = float(np.std(current - ratio * reference, ddof=1)) / (math.sqrt(n) * reference.mean())
    half = float(student_t.ppf(0.975, n - 1)) * se / ratio
    return ratio * math.exp(-half), ratio * math.exp(half)


def _settings(seed: int = 12345, **changes: Any) -> StatsSettings:
    return StatsSettings(resamples=RESAMPLES, permutations=FEW_FLIPS, seed=seed, **changes)


def _paired(name: str, statistic: str, scale: str, seed: int = 12345) -> Evidence:
    current, reference = DATA[name]
    return paired_evidence(
        current,
        reference,
        statistic=statistic,  # type: ignore[arg-type]
        scale=scale,  # type: ignore[arg-type]
        settings=_settings(seed),
        units=Units.rows(len(current)),
    )


def _single(name: str, statistic: str, seed: int = 12345) -> Evidence:
    current = DATA[name][0]
    return single_evidence(
        current,
        statistic=statistic,  # type: ignore[arg-type]
        settings=_settings(seed),
        units=Units.rows(len(current)),
    )


def _our_bca(estimator: Estimator, units: Units, seed: int) -> Replicates:
    """The library's bootstrap of ``estimator`` on its own, before any widening."""
    values = resampled(estimator, units, RESAMPLES, seed)
    return bca(estimator.estimate(), values, estimator.jackknife())


def _close(got: tuple[float, float], expected: tuple[float, float]) -> None:
    scale = max(1.0, abs(expected[0]), abs(expected[1]))
    assert got == pytest.approx(expected, abs=1e-12 * scale, rel=0)


# ---------------------------------------------------------------------------------------
# The same draws: equal to float rounding.


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("seed", [12345, 99])
def test_mean_difference_bca_equals_scipy_on_the_same_draws(name: str, seed: int) -> None:
    current, reference = DATA[name]
    expected = _scipy(DATA[name], _mean_difference, "BCa", RESAMPLES, seed)
    ours = _our_bca(
        Mean(current - reference, Units.rows(len(current))), Units.rows(len(current)), seed
    )
    assert ours.read_as == "bca"
    _close(ours.interval(0.95), expected)
    evidence = _paired(name, "mean", "difference", seed)
    assert evidence.method.startswith("BCa bootstrap")
    _close((evidence.low, evidence.high), _union(expected, _mean_t(current - reference)))


def test_the_t_interval_widens_the_bca_where_few_rows_changed() -> None:
    # the case the widening is for: BCa's upper end excludes 0, the t interval's does not
    current, reference = DATA["few"]
    bca_interval = _scipy(DATA["few"], _mean_difference, "BCa", RESAMPLES, 12345)
    t_interval = _mean_t(current - reference)
    assert bca_interval[1] < 0 < t_interval[1]
    evidence = _paired("few", "mean", "difference")
    _close((evidence.low, evidence.high), _union(bca_interval, t_interval))
    assert evidence.high == pytest.approx(t_interval[1], abs=1e-12)


@pytest.mark.parametrize("name", CONTINUOUS)
def test_ratio_bca_equals_scipy_on_the_same_draws(name: str) -> None:
    current, reference = DATA[name]
    units = Units.rows(len(current))
    expected = _scipy(DATA[name], _ratio_of_means, "BCa", RESAMPLES, 12345)
    _close(_our_bca(Ratio(current, reference, units), units, 12345).interval(0.95), expected)
    evidence = _paired(name, "mean", "ratio")
    assert evidence.estimate == pytest.approx(current.mean() / reference.mean(), rel=1e-12)
    _close((evidence.low, evidence.high), _union(expected, _ratio_t(current, reference)))
    # the difference a ratio rule also reports comes from the same resamples
    assert evidence.delta is not None
    delta = _scipy(DATA[name], _mean_difference, "BCa", RESAMPLES, 12345)
    _close((evidence.delta[1], evidence.delta[2]), _union(delta, _mean_t(current - reference)))


@pytest.mark.parametrize("name", CONTINUOUS)
@pytest.mark.parametrize(("statistic", "q"), [("p50", 0.5), ("p95", 0.95)])
def test_quantile_change_percentile_equals_scipy_on_the_same_draws(
    name: str, statistic: str, q: float
) -> None:
    evidence = _paired(name, statistic, "difference")
    assert evidence.method.startswith("percentile bootstrap")
    current, reference = DATA[name]
    assert evidence.estimate == pytest.approx(
        float(np.quantile(current, q) - np.quantile(reference, q)), rel=1e-12
    )
    expected = _scipy(DATA[name], _quantile_change(q), "percentile", RESAMPLES, 12345)
    _close((evidence.low, evidence.high), expected)


@pytest.mark.parametrize("name", CONTINUOUS)
def test_single_mean_bca_equals_scipy_on_the_same_draws(name: str) -> None:
    values = DATA[name][0]
    units = Units.rows(len(values))
    expected = _scipy((values,), np.mean, "BCa", RESAMPLES, 12345)
    _close(_our_bca(Mean(values, units), units, 12345).interval(0.95), expected)
    evidence = _single(name, "mean")
    assert evidence.method.startswith("BCa bootstrap")
    _close((evidence.low, evidence.high), _union(expected, _mean_t(values)))


@pytest.mark.parametrize("name", CONTINUOUS)
@pytest.mark.parametrize(("statistic", "q"), [("p50", 0.5), ("p95", 0.95)])
def test_single_quantile_percentile_equals_scipy_on_the_same_draws(
    name: str, statistic: str, q: float
) -> None:
    evidence = _single(name, statistic)
    assert evidence.method.startswith("percentile bootstrap")
    expected = _scipy((DATA[name][0],), _quantile(q), "percentile", RESAMPLES, 12345)
    _close((evidence.low, evidence.high), expected)


def test_sessions_bca_equals_scipy_resampling_sessions() -> None:
    # 90-odd rows in 25 sessions of 1 to 7 rows; scipy resamples the session numbers, and
    # the statistic of a resample is its rows' summed differences over its rows.
    generator = np.random.default_rng(8)
    sizes = generator.integers(1, 8, 25)
    labels: list[str | None] = [f"s{unit}" for unit, size in enumerate(sizes) for _ in range(size)]
    effects = generator.normal(0.05, 0.2, 25)[np.repeat(np.arange(25), sizes)]
    reference = generator.uniform(0, 1, len(labels))
    current = reference + effects + generator.normal(0, 0.1, len(labels))
    units = Units.of(labels)
    d = current - reference
    difference_sums = np.bincount(units.of_row, weights=d)
    row_counts = np.bincount(units.of_row).astype(float)

    def statistic(sessions: np.ndarray, axis: int) -> np.ndarray:
        index = np.asarray(sessions, dtype=np.intp)
        total = difference_sums[index].sum(axis=axis)
        result: np.ndarray = total / row_counts[index].sum(axis=axis)
        return result

    expected = _scipy((np.arange(25.0),), statistic, "BCa", RESAMPLES, 12345)
    _close(_our_bca(Mean(d, units), units, 12345).interval(0.95), expected)
    # the t interval's standard error is cluster-robust (CR1, as Stata's vce(cluster) for
    # a mean): sqrt(G / (G - 1) * sum over sessions of (their summed d - mean)^2) / n,
    # with G - 1 degrees of freedom
    centred = np.bincount(units.of_row, weights=d - d.mean())
    se = math.sqrt(25 / 24 * float(np.sum(centred**2))) / len(d)
    evidence = paired_evidence(
        current, reference, statistic="mean", scale="difference", settings=_settings(), units=units
    )
    assert evidence.units == 25
    assert evidence.method.startswith("BCa bootstrap")
    t_interval = _t_interval(float(d.mean()), se, 24, 0.95)
    _close((evidence.low, evidence.high), _union(expected, t_interval))


def _bca_by_hand(
    estimate: float, values: np.ndarray, jackknife: np.ndarray, confidence: float
) -> tuple[float, float]:
    """Efron's BCa interval (Efron and Tibshirani 1993, 14.3): ``z0`` from the share of
    resamples below the estimate, resamples equal to it (up to float rounding, 1e-12
    relative) counting half; the acceleration from the jackknife; the ends read off the
    resamples by numpy's linear percentile."""
    normal = NormalDist()
    tie = 1e-12 * max(1.0, abs(estimate))
    below = np.count_nonzero(values < estimate - tie)
    ties = np.count_nonzero(np.abs(values - estimate) <= tie)
    z0 = normal.inv_cdf((below + ties / 2) / len(values))
    spread = jackknife.mean() - jackknife
    acceleration = float(np.sum(spread**3)) / (6 * float(np.sum(spread**2)) ** 1.5)
    ends = []
    for level in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + normal.inv_cdf(level)
        ends.append(float(np.percentile(values, 100 * normal.cdf(z0 + z / (1 - acceleration * z)))))
    return ends[0], ends[1]


def test_bca_counts_resamples_equal_to_the_estimate_up_to_rounding_as_ties() -> None:
    current, reference = _few_changed_pairs([-0.5, -0.3, 0.1, -0.6, -0.2])
    d = current - reference
    units = Units.rows(len(d))
    values = resampled(Mean(d, units), units, RESAMPLES, 12345)
    jackknife = np.array([np.delete(d, row).mean() for row in range(len(d))])
    expected = _bca_by_hand(float(d.mean()), values, jackknife, 0.95)
    _close(_our_bca(Mean(d, units), units, 12345).interval(0.95), expected)


@pytest.mark.parametrize("scale", ["difference", "ratio"])
def test_bca_of_few_changed_rows_equals_efron_by_hand_on_scipys_draws(scale: str) -> None:
    # Where few rows changed, resamples tie the estimate; scipy decides such ties by its
    # own rounding (for the ratio here it misses one that the library counts), so the
    # reference is BCa by hand with ties counted up to rounding, on scipy's resamples
    # (the same draws) and a jackknife computed here.
    current, reference = DATA["few"]
    n = len(current)
    units = Units.rows(n)
    statistic = _mean_difference if scale == "difference" else _ratio_of_means
    result = bootstrap(
        DATA["few"],
        statistic,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(12345),
    )
    keep = [np.delete(np.arange(n), row) for row in range(n)]
    jackknife = np.array([float(statistic(current[rows], reference[rows], 0)) for rows in keep])
    estimate = float(statistic(current, reference, 0))
    expected = _bca_by_hand(estimate, result.bootstrap_distribution, jackknife, 0.95)
    estimator: Estimator = (
        Mean(current - reference, units)
        if scale == "difference"
        else Ratio(current, reference, units)
    )
    ours = _our_bca(estimator, units, 12345)
    assert ours.read_as == "bca"
    _close(ours.interval(0.95), expected)
    evidence = _paired("few", "mean", scale)
    t_interval = (
        _mean_t(current - reference) if scale == "difference" else _ratio_t(current, reference)
    )
    _close((evidence.low, evidence.high), _union(expected, t_interval))


# ---------------------------------------------------------------------------------------
# Monte-Carlo error: several seeds of ours against many resamples of scipy's.


def _within_monte_carlo_error(
    ours: Callable[[int], tuple[float, float]], reference: tuple[float, float]
) -> None:
    ends = np.array([ours(seed) for seed in SEEDS])
    spread = ends.std(axis=0, ddof=1)
    # scipy's own endpoint error, from ours at its larger number of resamples
    scipy_error = spread * math.sqrt(RESAMPLES / SCIPY_RESAMPLES)
    tiny = 1e-12 * max(1.0, float(np.abs(ends).max()))
    for side in (0, 1):
        assert spread[side] > 0
        assert np.all(np.abs(ends[:, side] - reference[side]) <= 4 * spread[side] + tiny), side
        error = math.sqrt(spread[side] ** 2 / len(SEEDS) + scipy_error[side] ** 2)
        assert abs(ends[:, side].mean() - reference[side]) <= 4 * error + tiny, side


@pytest.mark.parametrize("name", CONTINUOUS)
def test_mean_difference_bca_within_monte_carlo_error(name: str) -> None:
    current, reference = DATA[name]
    units = Units.rows(len(current))
    estimator = Mean(current - reference, units)
    expected = _scipy(DATA[name], _mean_difference, "BCa", SCIPY_RESAMPLES, SCIPY_SEED)
    _within_monte_carlo_error(
        lambda seed: _our_bca(estimator, units, seed).interval(0.95), expected
    )


@pytest.mark.parametrize("name", CONTINUOUS)
def test_ratio_bca_within_monte_carlo_error(name: str) -> None:
    current, reference = DATA[name]
    units = Units.rows(len(current))
    estimator = Ratio(current, reference, units)
    expected = _scipy(DATA[name], _ratio_of_means, "BCa", SCIPY_RESAMPLES, SCIPY_SEED)
    _within_monte_carlo_error(
        lambda seed: _our_bca(estimator, units, seed).interval(0.95), expected
    )


@pytest.mark.parametrize(("statistic", "q"), [("p50", 0.5), ("p95", 0.95)])
def test_quantile_change_within_monte_carlo_error(statistic: str, q: float) -> None:
    # A percentile change's resamples take few distinct values, so its interval's ends
    # jump between them (often the same end for every seed): instead of the ends, their
    # levels are compared. Each end of ours, read against scipy's 40,000 resamples, must
    # sit at the nominal level (2.5%, 97.5%) within 4 binomial standard errors of a
    # quantile of 2,000 resamples (plus scipy's own).
    data = DATA["lognormal"]
    result = bootstrap(
        data,
        _quantile_change(q),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=SCIPY_RESAMPLES,
        rng=np.random.default_rng(SCIPY_SEED),
    )
    distribution = np.sort(result.bootstrap_distribution)
    tolerance = 1e-9 * float(np.abs(distribution).max())
    for seed in SEEDS:
        evidence = _paired("lognormal", statistic, "difference", seed)
        for end, level in ((evidence.low, 0.025), (evidence.high, 0.975)):
            below = np.searchsorted(distribution, end - tolerance, side="left") / len(distribution)
            at_most = np.searchsorted(distribution, end + tolerance, side="right") / len(
                distribution
            )
            error = math.sqrt(level * (1 - level)) * (
                1 / math.sqrt(RESAMPLES) + 1 / math.sqrt(SCIPY_RESAMPLES)
            )
            assert below - 4 * error <= level <= at_most + 4 * error, (seed, end, level)


@pytest.mark.parametrize("name", CONTINUOUS)
def test_single_mean_bca_within_monte_carlo_error(name: str) -> None:
    values = DATA[name][0]
    units = Units.rows(len(values))
    expected = _scipy((values,), np.mean, "BCa", SCIPY_RESAMPLES, SCIPY_SEED)
    _within_monte_carlo_error(
        lambda seed: _our_bca(Mean(values, units), units, seed).interval(0.95), expected
    )


# ---------------------------------------------------------------------------------------
# Above resample_limit: normal intervals, by hand.


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("name", CONTINUOUS)
def test_normal_interval_of_the_mean_difference(name: str, confidence: float) -> None:
    current, reference = DATA[name]
    n = len(current)
    d = current - reference
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    half = z * float(np.std(d, ddof=1)) / math.sqrt(n)
    evidence = paired_evidence(
        current,
        reference,
        statistic="mean",
        scale="difference",
        settings=_settings(resample_limit=10, confidence=confidence),
        units=Units.rows(n),
    )
    assert evidence.method.startswith("normal interval")
    assert evidence.estimate == pytest.approx(float(d.mean()), abs=1e-12 * abs(d).max())
    _close((evidence.low, evidence.high), (float(d.mean()) - half, float(d.mean()) + half))
    # the sign-flip test's normal limit: the flipped sums have variance sum(d ** 2)
    expected_p = 2 * NormalDist().cdf(-abs(float(d.sum())) / math.sqrt(float(np.sum(d**2))))
    assert evidence.p_value == pytest.approx(expected_p, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", CONTINUOUS)
def test_normal_interval_of_the_ratio_is_the_delta_method(name: str) -> None:
    # R = mean(x) / mean(y); the delta method: se = sd(x - R y, ddof=1) / (sqrt(n) mean(y))
    current, reference = DATA[name]
    n = len(current)
    ratio = float(current.mean() / reference.mean())
    se = float(np.std(current - ratio * reference, ddof=1)) / (math.sqrt(n) * reference.mean())
    z = NormalDist().inv_cdf(0.975)
    evidence = paired_evidence(
        current,
        reference,
        statistic="mean",
        scale="ratio",
        settings=_settings(resample_limit=10),
        units=Units.rows(n),
    )
    assert evidence.method.startswith("normal interval")
    _close((evidence.low, evidence.high), (ratio - z * se, ratio + z * se))


@pytest.mark.parametrize("name", CONTINUOUS)
def test_normal_interval_of_one_mean(name: str) -> None:
    values = DATA[name][0]
    n = len(values)
    half = NormalDist().inv_cdf(0.975) * float(np.std(values, ddof=1)) / math.sqrt(n)
    evidence = single_evidence(
        values, statistic="mean", settings=_settings(resample_limit=10), units=Units.rows(n)
    )
    assert evidence.method.startswith("normal interval")
    mean = float(values.mean())
    _close((evidence.low, evidence.high), (mean - half, mean + half))
