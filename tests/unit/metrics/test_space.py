"""Dataset-level embedding-space, UX and source metrics (pytest_ragmetrics.metrics.space).

Expected numbers are worked out by hand in the comments, or by an independent brute-force
numpy computation inside the test (the full cosine matrix), never taken from the module.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pytest_ragmetrics.metrics.space import (
    cache_hit_rate,
    chunk_utilization,
    context_preservation,
    embedding_space,
    multi_turn_consistency,
    nearest_cosines,
    nearest_neighbour_distances,
    topic_coverage,
)
from pytest_ragmetrics.metrics.space import geometry as space

Matrix = npt.NDArray[np.float64]
ROOT = Path(__file__).resolve().parents[3]


def at(*degrees: float, length: float = 1.0) -> Matrix:
    """Rows of 2-d vectors of the given length at the given angles."""
    radians = np.radians(degrees)
    return length * np.stack([np.cos(radians), np.sin(radians)], axis=1)


def brute_cosine_distances(x: Matrix) -> Matrix:
    """Full (N, N) cosine-distance matrix in float64, independent of the module."""
    unit = x / np.sqrt((x * x).sum(axis=1, keepdims=True))
    return np.asarray(1.0 - unit @ unit.T, dtype=np.float64)


def brute_knn(x: Matrix, k: int) -> Matrix:
    distances = brute_cosine_distances(x)
    np.fill_diagonal(distances, np.inf)  # self excluded by index; twins stay at 0
    return np.sort(distances, axis=1)[:, :k]


def brute_pairs(x: Matrix) -> Matrix:
    distances = brute_cosine_distances(x)
    return distances[np.triu_indices(x.shape[0], k=1)]


def clusters(
    rng: np.random.Generator, n: int, dim: int, centres: int, ordered: bool = False
) -> Matrix:
    """n points around ``centres`` random directions, with noise, in random order or, if
    ``ordered``, cluster by cluster (so a sampler that favours some indices is biased)."""
    means = rng.standard_normal((centres, dim)) * 3
    labels = rng.integers(centres, size=n)
    if ordered:
        labels.sort()
    return np.asarray(means[labels] + rng.standard_normal((n, dim)), dtype=np.float64)


# ----------------------------------------------------------------------------- Tier 0


def test_four_axis_vectors_by_hand() -> None:
    # Unit vectors at 0°, 90°, 180°, 270°. Cosine distances 1 - cos:
    #   neighbours at 90° -> 1 - 0 = 1 (four pairs), opposite at 180° -> 1 - (-1) = 2 (two).
    # k = 1: each vector's nearest is 1 away -> avg 1, std 0, density 1 / (1 + 1e-12).
    # Pairwise 1, 1, 1, 1, 2, 2: avg 8/6 = 4/3, min 1, max 2,
    #   population variance ((1/3)² · 4 + (2/3)² · 2) / 6 = (4/9 + 8/9) / 6 = 2/9.
    # Centroid (0, 0), so every spread is |v| = 1: avg 1, max 1, std 0.
    # Covariance ∝ diag(2, 2): one component has 50 % of the variance, two are needed.
    result = embedding_space(at(0, 90, 180, 270), k=1)
    assert result.total_samples == 4
    assert result.k == 1
    assert result.avg_nn_distance == pytest.approx(1.0)
    assert result.std_nn_distance == pytest.approx(0.0, abs=1e-12)
    assert result.density_score == pytest.approx(1.0)
    assert result.avg_pairwise_distance == pytest.approx(4 / 3)
    assert result.min_pairwise_distance == pytest.approx(1.0)
    assert result.max_pairwise_distance == pytest.approx(2.0)
    assert result.std_pairwise_distance == pytest.approx(math.sqrt(2 / 9))
    assert (result.avg_spread, result.max_spread) == pytest.approx((1.0, 1.0))
    assert result.spread_std == pytest.approx(0.0, abs=1e-12)
    assert result.effective_dimensionality == 2
    assert (result.pairwise_method, result.pairwise_pairs) == ("exact", 6)


def test_nn_std_is_over_the_per_vector_means() -> None:
    # Unit vectors at 0°, 60°, 180°: d(0,60) = 1 - 1/2 = 0.5, d(0,180) = 2,
    # d(60,180) = 1 - cos 120° = 1.5.
    # k = 1: nearest 0.5, 0.5, 1.5 -> mean 5/6; deviations -1/3, -1/3, 2/3 ->
    #   variance (1/9 + 1/9 + 4/9) / 3 = 2/9, std sqrt(2)/3.
    # k = 2: per-vector means (0.5+2)/2 = 1.25, (0.5+1.5)/2 = 1, (2+1.5)/2 = 1.75 -> mean 4/3;
    #   deviations -1/12, -1/3, 5/12 -> variance (1 + 16 + 25) / 144 / 3 = 14/144,
    #   std sqrt(14)/12 (the std of all six distances would be sqrt(7/18) instead).
    vectors = at(0, 60, 180, length=3.0)  # length must not matter
    one = embedding_space(vectors, k=1)
    assert one.avg_nn_distance == pytest.approx(5 / 6)
    assert one.std_nn_distance == pytest.approx(math.sqrt(2) / 3)
    two = embedding_space(vectors, k=2)
    assert two.avg_nn_distance == pytest.approx(4 / 3)
    assert two.std_nn_distance == pytest.approx(math.sqrt(14) / 12)
    assert nearest_neighbour_distances(vectors, k=2) == pytest.approx(
        np.array([[0.5, 2.0], [0.5, 1.5], [1.5, 2.0]])
    )


def test_k_larger_than_n_minus_one_is_clipped_and_recorded() -> None:
    vectors = at(0, 60, 180)
    clipped = embedding_space(vectors)  # default k = 5, only 2 other vectors
    assert clipped.k == 2
    assert clipped.avg_nn_distance == pytest.approx(4 / 3)  # the k = 2 value above
    assert nearest_neighbour_distances(vectors, k=50).shape == (3, 2)


def test_duplicates_are_neighbours_and_self_is_excluded_wherever_it_ranks() -> None:
    # Six copies of a = (1, 0) and b = (0, 1): cos(a, b) = 0, distance 1.
    # With k = 2 faiss returns 3 candidates among 6 tied copies, so a copy's own index may
    # come second or be missing altogether; each copy's 2 nearest others are copies (0, 0).
    # b's nearest others are two copies of a: (1, 1).
    vectors = np.array([[1.0, 0.0]] * 6 + [[0.0, 1.0]])
    distances = nearest_neighbour_distances(vectors, k=2)
    assert distances[:6] == pytest.approx(np.zeros((6, 2)), abs=1e-12)
    assert distances[6] == pytest.approx([1.0, 1.0])
    # avg_nn over per-vector means (0 six times, 1 once) = 1/7.
    assert embedding_space(vectors, k=2).avg_nn_distance == pytest.approx(1 / 7)


def test_a_twin_is_a_neighbour_at_distance_zero() -> None:
    # a, a, b with k = 1: each a's nearest other vector is its twin (0), not b (1).
    vectors = np.array([[2.0, 0.0], [2.0, 0.0], [0.0, 5.0]])
    assert nearest_neighbour_distances(vectors, k=1)[:, 0] == pytest.approx(
        [0.0, 0.0, 1.0], abs=1e-12
    )


def test_faiss_knn_equals_brute_force_on_random_data() -> None:
    rng = np.random.default_rng(42)
    x = clusters(rng, 300, 12, 5)
    x[10] = x[3]  # plus a few exact duplicates
    x[200] = x[3] * 7.0  # same direction, other length: cosine twin
    k = 7
    expected = brute_knn(x, k)
    assert nearest_neighbour_distances(x, k=k) == pytest.approx(expected, abs=1e-6)
    per_vector = expected.mean(axis=1)
    result = embedding_space(x, k=k)
    assert result.avg_nn_distance == pytest.approx(per_vector.mean(), abs=1e-6)
    assert result.std_nn_distance == pytest.approx(per_vector.std(), abs=1e-6)
    assert result.density_score == pytest.approx(1 / (per_vector.mean() + 1e-12), rel=1e-5)


def test_spread_is_euclidean_to_the_centroid_of_raw_vectors() -> None:
    # (0,0) is not allowed (cosine), so use (1,1), (3,1), (1,4), (3,4): centroid (2, 2.5);
    # distances sqrt(1 + 2.25) = sqrt(3.25) for all four -> avg = max = sqrt(3.25), std 0.
    # And (1,0), (3,0), (8,0): centroid (4, 0), distances 3, 1, 4 -> avg 8/3, max 4,
    #   variance ((1/3)² + (5/3)² + (4/3)²) / 3 = 42/27, std sqrt(42/27).
    square = embedding_space(np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 4.0], [3.0, 4.0]]))
    assert square.avg_spread == pytest.approx(math.sqrt(3.25))
    assert square.max_spread == pytest.approx(math.sqrt(3.25))
    line = embedding_space(np.array([[1.0, 0.0], [3.0, 0.0], [8.0, 0.0]]))
    assert (line.avg_spread, line.max_spread) == pytest.approx((8 / 3, 4.0))
    assert line.spread_std == pytest.approx(math.sqrt(42 / 27))


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        # (±5, 0), (0, ±1): variances ∝ 50 and 2; 50/52 = 0.96 >= 0.95 -> 1 component.
        ([[5, 0], [-5, 0], [0, 1], [0, -1]], 1),
        # (±4, 0), (0, ±1): 32/34 = 0.941 < 0.95 -> 2 components.
        ([[4, 0], [-4, 0], [0, 1], [0, -1]], 2),
        # x values ±3, ±3, ±1 and y ±1: Σx² = 38, Σy² = 2, share 38/40 = 0.95 exactly -> 1.
        ([[3, 0], [-3, 0], [3, 0], [-3, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], 1),
        # 3-d, axes with Σ² 4·9, 4·9, 4·1 (±3, ±3 and ±1 twice each): 72/76 = 0.947 -> 3.
        ([*[[3, 0, 0], [-3, 0, 0]] * 2, *[[0, 3, 0], [0, -3, 0]] * 2,
          *[[0, 0, 1], [0, 0, -1]] * 2], 3),
        # Collinear through the centroid: all variance on one axis -> 1.
        ([[1, 1], [2, 2], [3, 3]], 1),
    ],
)  # fmt: skip
def test_effective_dimensionality_by_hand(points: list[list[float]], expected: int) -> None:
    assert embedding_space(np.array(points, dtype=float)).effective_dimensionality == expected


def test_identical_vectors_are_documented_degenerate_values_not_nan() -> None:
    # No variance -> effective dimensionality defined as 0; every distance 0 -> density 1/ε.
    result = embedding_space(np.array([[1.0, 2.0]] * 3), epsilon=1e-6)
    assert result.effective_dimensionality == 0
    assert result.avg_nn_distance == pytest.approx(0.0, abs=1e-12)
    assert result.density_score == pytest.approx(1e6, rel=1e-6)
    assert result.max_pairwise_distance == pytest.approx(0.0, abs=1e-12)
    assert result.max_spread == 0.0
    assert all(math.isfinite(value) for value in result.as_stats().values())


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (np.array([[1.0, 0.0]]), "at least 2"),
        (np.array([[1.0, 0.0], [0.0, 0.0]]), "zero"),
        (np.array([[1.0, 0.0], [np.nan, 1.0]]), "NaN"),
        (np.array([[1.0, 0.0], [np.inf, 1.0]]), "infinite"),
        (np.array([1.0, 0.0]), "2-D"),
        (np.zeros((0, 3)), "empty"),
    ],
)
def test_degenerate_vectors_raise(vectors: Matrix, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        embedding_space(vectors)


@pytest.mark.parametrize(
    "kwargs", [{"k": 0}, {"exact_limit": -1}, {"sample_pairs": 0}, {"seed": -1}, {"epsilon": 0.0}]
)
def test_bad_parameters_raise(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        embedding_space(at(0, 90, 180), **kwargs)  # type: ignore[arg-type]


def test_exact_pairwise_matches_brute_force_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    x = clusters(rng, 203, 6, 3)
    monkeypatch.setattr(space, "_BLOCK_ENTRIES", 1000)  # 4 rows per block: many blocks
    result = embedding_space(x, exact_limit=500)
    expected = brute_pairs(x)
    assert (result.pairwise_method, result.pairwise_pairs) == ("exact", 203 * 202 // 2)
    assert result.avg_pairwise_distance == pytest.approx(expected.mean(), abs=1e-12)
    assert result.std_pairwise_distance == pytest.approx(expected.std(), abs=1e-12)
    assert result.min_pairwise_distance == pytest.approx(expected.min(), abs=1e-12)
    assert result.max_pairwise_distance == pytest.approx(expected.max(), abs=1e-12)


def test_exact_up_to_the_limit_and_sampled_beyond() -> None:
    x = clusters(np.random.default_rng(2), 41, 4, 3)
    at_limit = embedding_space(x[:40], exact_limit=40, sample_pairs=100)
    assert (at_limit.pairwise_method, at_limit.pairwise_pairs) == ("exact", 40 * 39 // 2)
    above = embedding_space(x, exact_limit=40, sample_pairs=100)
    assert (above.pairwise_method, above.pairwise_pairs) == ("sampled", 100)
    assert above.as_stats()["pairwise_exact"] == 0.0
    assert "100 sampled pairs, seed 0" in above.describe()
    # Above the limit but with no more pairs (820) than sample_pairs: all pairs, exactly.
    few = embedding_space(x, exact_limit=40, sample_pairs=820)
    assert (few.pairwise_method, few.pairwise_pairs) == ("exact", 820)
    assert few.as_stats()["pairwise_exact"] == 1.0
    assert "all 820 pairs" in few.describe()


def test_sampled_pairwise_statistics_are_close_to_the_exact_ones() -> None:
    # Ordered by cluster: a sampler that is not uniform over pairs sees other distances.
    x = clusters(np.random.default_rng(3), 3000, 8, 4, ordered=True)
    exact = brute_pairs(x)  # 4,498,500 distances
    result = embedding_space(x, seed=7)  # N > 2048: 200,000 sampled pairs
    assert (result.pairwise_method, result.pairwise_pairs) == ("sampled", 200_000)
    m = result.pairwise_pairs
    mean, sigma = exact.mean(), exact.std()
    fourth = ((exact - mean) ** 4).mean()
    # Five standard errors: of the mean sigma/sqrt(m); of the std (delta method)
    # sqrt((mu4 - sigma^4) / m) / (2 sigma).
    assert abs(result.avg_pairwise_distance - mean) < 5 * sigma / math.sqrt(m)
    std_error = math.sqrt((fourth - sigma**4) / m) / (2 * sigma)
    assert abs(result.std_pairwise_distance - sigma) < 5 * std_error
    assert exact.min() - 1e-12 <= result.min_pairwise_distance <= np.quantile(exact, 0.001)
    assert np.quantile(exact, 0.999) <= result.max_pairwise_distance <= exact.max() + 1e-12


def test_sampling_is_deterministic_per_seed() -> None:
    x = clusters(np.random.default_rng(4), 500, 5, 3)
    first = embedding_space(x, exact_limit=10, sample_pairs=2000, seed=5)
    again = embedding_space(x, exact_limit=10, sample_pairs=2000, seed=5)
    other = embedding_space(x, exact_limit=10, sample_pairs=2000, seed=6)
    assert first == again
    assert first.sample_seed == 5
    assert other.avg_pairwise_distance != first.avg_pairwise_distance


def test_an_isolated_vector_is_the_outlier_by_hand() -> None:
    # Unit vectors at 0°, 10°, ..., 50° and one at 180°. k = 1: each of the six close ones
    # has its nearest 10° away, a = 1 - cos 10°; the one at 180° has its nearest at 50°,
    # b = 1 - cos 130°. Mean (6a + b) / 7, population std |b - a| sqrt(6) / 7, so b sits
    # 6 (b - a) / 7 above the mean and the bound only 2 sqrt(6) (b - a) / 7 ≈ 4.9 (b - a) / 7:
    # the vector at 180° (index 6) is the one outlier.
    a, b = 1 - math.cos(math.radians(10)), 1 - math.cos(math.radians(130))
    result = embedding_space(at(0, 10, 20, 30, 40, 50, 180), k=1)
    assert result.outlier_indices == (6,)
    assert result.outlier_distances == pytest.approx((b,))
    assert result.outliers == 1
    mean, std = (6 * a + b) / 7, abs(b - a) * math.sqrt(6) / 7
    assert result.outlier_bound == pytest.approx(mean + 2 * std)
    assert result.as_stats()["outliers"] == 1.0
    assert "1 outlier(s)" in result.describe()


def test_one_odd_vector_in_five_is_not_an_outlier() -> None:
    # With one value apart from n - 1 equal ones, its z-score is sqrt(n - 1): exactly 2 for
    # n = 5, which is not above the bound (the rule is strict, with a 1e-9 slack).
    assert embedding_space(at(0, 10, 20, 30, 180), k=1).outlier_indices == ()


def test_equally_spaced_vectors_have_no_outlier() -> None:
    # Every nearest distance is 1 - cos 90° = 1: std 0, nothing above the mean.
    result = embedding_space(at(0, 90, 180, 270), k=1)
    assert (result.outliers, result.outlier_indices) == (0, ())


def test_nearest_cosines_by_hand() -> None:
    # Queries at 5° and 100° (lengths 2 and 3), base at 0°, 90°, 180°: nearest 0° with
    # cos 5°, and 90° with cos 10°.
    queries = np.vstack([at(5, length=2.0), at(100, length=3.0)])
    found, cosines = nearest_cosines(queries, at(0, 90, 180))
    assert found.tolist() == [0, 1]
    assert cosines == pytest.approx([math.cos(math.radians(5)), math.cos(math.radians(10))])
    with pytest.raises(ValueError, match="dimension"):
        nearest_cosines(queries, np.ones((2, 3)))
    with pytest.raises(ValueError, match="zero"):
        nearest_cosines(queries, np.zeros((1, 2)))


def test_as_stats_holds_every_numeric_field() -> None:
    result = embedding_space(at(0, 90, 180, 270), k=1)
    stats = result.as_stats()
    assert set(stats) == {
        "total_samples", "k", "avg_nn_distance", "std_nn_distance", "density_score",
        "avg_spread", "max_spread", "spread_std", "effective_dimensionality",
        "avg_pairwise_distance", "std_pairwise_distance", "min_pairwise_distance",
        "max_pairwise_distance", "pairwise_exact", "pairwise_pairs", "sample_seed",
        "outliers",
    }  # fmt: skip
    assert all(isinstance(value, float) for value in stats.values())
    assert (stats["total_samples"], stats["pairwise_pairs"], stats["pairwise_exact"]) == (4, 6, 1)
    assert stats["avg_pairwise_distance"] == pytest.approx(4 / 3)
    assert "4 vectors" in result.describe()
    assert "\n" not in result.describe()


def test_importing_the_package_does_not_import_faiss() -> None:
    code = (
        "import sys, pytest_ragmetrics, pytest_ragmetrics.metrics.space\n"
        "assert 'faiss' not in sys.modules, 'faiss imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ----------------------------------------------------------------------------- UX


def test_cache_hits_at_just_above_and_below_tau() -> None:
    # c = (17, 7, 6, 5, 1) has |c| = sqrt(289 + 49 + 36 + 25 + 1) = 20 exactly, so its
    # cosine with e1 is 17/20 = 0.85 = tau: not a hit (strictly greater is required).
    # Nudging the first coordinate by ±1e-4 moves the cosine by about ±1e-4 · 111/20³
    # = ±1.4e-6 (d/da a/sqrt(a² + 111) = 111 / (a² + 111)^1.5): just above and below tau.
    # e2 = (0, 1, 0, 0, 0) is in the cache too, with cosine 7/20 to c: never the best.
    cache = np.array([[1.0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0]])
    questions = np.array(
        [
            [17.0, 7, 6, 5, 1],  # exactly tau -> miss
            [17.0001, 7, 6, 5, 1],  # just above -> hit
            [16.9999, 7, 6, 5, 1],  # just below -> miss
            [0, 3.0, 0, 0, 0],  # cosine 1 with e2 -> hit
        ]
    )
    result = cache_hit_rate(questions, cache)
    assert (result.hits, result.total, result.tau) == (2, 4, 0.85)
    assert result.rate == 0.5
    assert result.best[0] == 0.85
    assert result.best[1] == pytest.approx(0.85 + 1e-4 * 111 / 8000, abs=1e-9)
    assert result.best[2] == pytest.approx(0.85 - 1e-4 * 111 / 8000, abs=1e-9)
    assert result.best[3] == pytest.approx(1.0)
    # Moving tau around the exact 0.85 flips only the first question.
    assert cache_hit_rate(questions[:1], cache, tau=0.85 - 1e-12).hits == 1
    assert cache_hit_rate(questions[:1], cache, tau=0.85 + 1e-12).hits == 0


def test_cache_best_is_the_maximum_over_the_cache() -> None:
    rng = np.random.default_rng(5)
    questions, cache = rng.standard_normal((50, 6)), rng.standard_normal((80, 6))
    unit_q = questions / np.linalg.norm(questions, axis=1, keepdims=True)
    unit_c = cache / np.linalg.norm(cache, axis=1, keepdims=True)
    best = (unit_q @ unit_c.T).max(axis=1)
    result = cache_hit_rate(questions, cache, tau=0.6)
    assert result.best == pytest.approx(best, abs=1e-6)
    assert result.hits == int((best > 0.6).sum())


@pytest.mark.parametrize(
    ("questions", "cache", "message"),
    [
        (np.zeros((0, 2)), np.ones((1, 2)), "question_vectors is empty"),
        (np.ones((1, 2)), np.zeros((0, 2)), "cache_vectors is empty"),
        (np.ones((1, 2)), np.ones((1, 3)), "dimension"),
        (np.zeros((1, 2)), np.ones((1, 2)), "zero"),
    ],
)
def test_cache_hit_rate_rejects_degenerate_input(
    questions: Matrix, cache: Matrix, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cache_hit_rate(questions, cache)
    with pytest.raises(ValueError, match="tau"):
        cache_hit_rate(np.ones((1, 2)), np.ones((1, 2)), tau=math.nan)


def test_context_preservation_by_hand() -> None:
    # Session 1: 0°, 60°, 120° -> cos 1/2, 1/2 -> mean 1/2 (lengths 1, 2, 5 must not matter).
    # Session 2: 0°, 90° -> cos 0 -> mean 0.
    # Session 3: one turn: no pair, counted as single-turn.
    # Session 4: 0°, 0°, 0°, 180° -> cos 1, 1, -1 -> mean 1/3.
    # Value = mean of session means = (1/2 + 0 + 1/3) / 3 = 5/18 (the mean over all six
    # pairs would be 2/6 = 1/3 instead). Pairs 2 + 1 + 3 = 6.
    sessions = [
        np.concatenate([at(0), at(60, length=2.0), at(120, length=5.0)]),
        at(0, 90),
        at(45),
        at(0, 0, 0, 180),
    ]
    result = context_preservation(sessions)
    assert result.value == pytest.approx(5 / 18)
    assert (result.sessions_used, result.sessions_single_turn, result.pairs) == (3, 1, 6)
    assert multi_turn_consistency(sessions) == result


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        ([at(0), at(90)], "no session has two or more turns"),
        ([], "no session has two or more turns"),
        ([at(0, 90), np.zeros((0, 2))], "session 1 is empty"),
        ([at(0, 90), np.array([[1.0, 0.0], [0.0, 0.0]])], "session 1 has 1 zero"),
        ([at(0, 90), np.ones((2, 3))], "different dimensions"),
    ],
)
def test_context_preservation_rejects_degenerate_input(
    sessions: list[Matrix], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        context_preservation(sessions)


# ----------------------------------------------------------------------------- sources


def test_chunk_utilization_with_unknown_ids_and_duplicates() -> None:
    # Corpus c1, c2, c3, c3, c4 -> 4 distinct chunks. Retrieved: c1, c2, c2, x9, a0, c1 ->
    # used {c1, c2} = 2, unused 2, utilization 2/4; x9 and a0 are unknown, not used.
    result = chunk_utilization(
        [["c1", "c2"], ["c2", "x9"], [], ["a0", "c1"]], ["c1", "c2", "c3", "c3", "c4"]
    )
    assert (result.total_chunks, result.used_chunks, result.unused_chunks) == (4, 2, 2)
    assert result.chunk_utilization == 0.5
    assert result.unknown_chunks == ("a0", "x9")


def test_chunk_utilization_edges() -> None:
    nothing = chunk_utilization([], ["c1", "c2"])
    assert (nothing.used_chunks, nothing.chunk_utilization) == (0, 0.0)
    only_unknown = chunk_utilization([["zz"]], ["c1"])
    assert (only_unknown.used_chunks, only_unknown.unknown_chunks) == (0, ("zz",))
    with pytest.raises(ValueError, match="corpus is empty"):
        chunk_utilization([["c1"]], [])
    with pytest.raises(ValueError, match=r"retrieved\[0\]"):
        chunk_utilization(["c1"], ["c1"])  # a list of ids, not a list of lists
    with pytest.raises(ValueError, match="corpus"):
        chunk_utilization([["c1"]], "c1")


# Ten questions around three orthogonal directions of 4-d space (noise along e4 only):
# e2: questions 0, 2, 7 -> topic 0 (smallest index 0)
# e1: questions 1, 4, 5, 8, 9 -> topic 1 (smallest index 1)
# e3: questions 3, 6 -> topic 2 (smallest index 3)
_CENTRE = [1, 0, 1, 2, 0, 0, 2, 1, 0, 0]  # index of the direction of each question
TOPIC_QUESTIONS = np.eye(4)[_CENTRE] * np.array([1, 2, 3, 1, 2, 3, 1, 2, 3, 1])[:, None]
TOPIC_QUESTIONS[:, 3] = 0.01 * (np.arange(10) - 4.5)  # distinct directions, no duplicates
RETRIEVED = [
    ["a", "b"], ["d"], ["b", "c"], ["a", "h"], ["d"],
    ["e", "d"], ["h"], ["a"], [], ["f", "g"],
]  # fmt: skip
URLS = [
    ["u1"], ["u3"], ["u1"], ["u1", "u4"], ["u3"],
    ["u3"], ["u4"], ["u2"], [], ["u3"],
]  # fmt: skip


def test_topic_coverage_on_well_separated_clusters() -> None:
    # Topic 0 (q0, q2, q7): chunks {a, b, c} = 3, urls {u1, u2} = 2.
    # Topic 1 (q1, q4, q5, q8, q9): chunks {d, e, f, g} = 4, urls {u3} = 1.
    # Topic 2 (q3, q6): chunks {a, h} = 2 (a is counted in topic 0 too), urls {u1, u4} = 2.
    # avg_chunks_per_topic = (3 + 4 + 2) / 3 = 3.
    expected = (
        space.Topic(0, 3, 3, 2),
        space.Topic(1, 5, 4, 1),
        space.Topic(2, 2, 2, 2),
    )
    for seed in range(8):  # k-means++ seeding finds these clusters whatever the seed
        result = topic_coverage(TOPIC_QUESTIONS, RETRIEVED, URLS, n_topics=3, seed=seed)
        assert result.assignment == (0, 1, 0, 2, 1, 1, 2, 0, 1, 1)
        assert result.topics == expected
        assert (result.n_topics, result.total_questions, result.seed) == (3, 10, seed)
        assert result.avg_chunks_per_topic == 3.0


def test_small_far_topics_are_found_whatever_the_seed() -> None:
    # 50 questions near e1 (noise 0.01), one at e2 (question 10) and one at e3 (question 30).
    # A uniform random start would often take all 3 centres from the big cluster and
    # split it; k-means++ draws with probability ∝ squared distance, so the lone
    # questions (squared distance ~2 against ~1e-4) are almost surely centres.
    rng = np.random.default_rng(9)
    vectors = np.zeros((52, 4))
    vectors[:, 0] = 1.0
    vectors[:, 3] = 0.01 * rng.standard_normal(52)
    vectors[10], vectors[30] = [0, 1.0, 0, 0], [0, 0, 1.0, 0]
    empty: list[list[str]] = [[]] * 52
    for seed in range(10):
        result = topic_coverage(vectors, empty, empty, n_topics=3, seed=seed)
        # Topic 0 holds question 0 (the big cluster), topic 1 question 10, topic 2 question 30.
        assert [t.question_count for t in result.topics] == [50, 1, 1], seed
        assert (result.assignment[10], result.assignment[30]) == (1, 2)


def test_an_empty_cluster_is_reported_with_zero_counts() -> None:
    # Three copies of a and one b into 3 topics: identical questions share a centroid, so
    # one cluster stays empty: topic 0 = copies (3 questions, chunks {x, y}, url {u}),
    # topic 1 = b (1 question, chunk {z}, no url), topic 2 empty.
    # avg_chunks_per_topic = (2 + 1 + 0) / 3 = 1.
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    result = topic_coverage(vectors, [["x"], ["y"], ["x"], ["z"]], [["u"], [], ["u"], []], 3)
    assert result.assignment == (0, 0, 0, 1)
    assert result.topics == (
        space.Topic(0, 3, 2, 1),
        space.Topic(1, 1, 1, 0),
        space.Topic(2, 0, 0, 0),
    )
    assert result.avg_chunks_per_topic == 1.0


def test_one_topic_and_one_topic_per_question() -> None:
    one = topic_coverage(TOPIC_QUESTIONS, RETRIEVED, URLS, n_topics=1)
    # All ten questions: chunks {a, b, c, d, e, f, g, h} = 8, urls {u1, u2, u3, u4} = 4.
    assert one.topics == (space.Topic(0, 10, 8, 4),)
    every = topic_coverage(TOPIC_QUESTIONS, RETRIEVED, URLS, n_topics=10)
    assert every.assignment == tuple(range(10))
    assert [t.question_count for t in every.topics] == [1] * 10
    assert [t.unique_chunks for t in every.topics] == [len(ids) for ids in RETRIEVED]


@pytest.mark.parametrize(
    ("n_topics", "retrieved", "message"),
    [
        (0, RETRIEVED, "n_topics"),
        (11, RETRIEVED, "exceeds the number of questions"),
        (3, RETRIEVED[:9], "one of each per question"),
    ],
)
def test_topic_coverage_rejects_bad_input(
    n_topics: int, retrieved: list[list[str]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        topic_coverage(TOPIC_QUESTIONS, retrieved, URLS, n_topics=n_topics)


# The same computations in a fresh interpreter, with 1 and with 2 OpenMP threads: faiss
# parallelises k-means and BLAS over threads, so this is where non-determinism would show.
DETERMINISM_SCRIPT = """
import numpy as np
from pytest_ragmetrics.metrics.space import embedding_space, topic_coverage
rng = np.random.default_rng(7)
x = rng.standard_normal((600, 16))
ids = [[f"c{i % 37}"] for i in range(600)]
urls = [[f"u{i % 11}"] for i in range(600)]
print(repr(topic_coverage(x, ids, urls, n_topics=7, seed=3)))
print(repr(embedding_space(x, k=4, exact_limit=100, sample_pairs=5000, seed=11)))
"""


def test_kmeans_and_sampling_are_deterministic_in_and_across_processes() -> None:
    lines: list[str] = []
    script = DETERMINISM_SCRIPT.replace("print(", "lines.append(")
    exec(script, {"lines": lines})
    again: list[str] = []
    exec(script, {"lines": again})
    assert lines == again
    assert "assignment=" in lines[0]
    for threads in ("1", "2"):
        env = {**os.environ, "OMP_NUM_THREADS": threads}
        run = subprocess.run(
            [sys.executable, "-c", DETERMINISM_SCRIPT],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        assert run.stdout.splitlines() == lines, f"differs with OMP_NUM_THREADS={threads}"


# ----------------------------------------------------------------------------- properties

finite = st.floats(-100, 100, allow_nan=False, allow_subnormal=False)


def nonzero_rows(x: Matrix) -> bool:
    return bool((np.abs(x).max(axis=1) >= 1e-6).all())


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(2, 9), st.integers(1, 4)), elements=finite),
    st.integers(1, 10),
)
def test_embedding_space_properties(x: Matrix, k: int) -> None:
    assume(nonzero_rows(x))
    result = embedding_space(x, k=k)
    distances = nearest_neighbour_distances(x, k=k)
    assert ((distances >= 0) & (distances <= 2)).all()
    assert result.k == min(k, x.shape[0] - 1) == distances.shape[1]
    low, high = result.min_pairwise_distance, result.max_pairwise_distance
    assert 0 <= low <= result.avg_pairwise_distance + 1e-12
    assert result.avg_pairwise_distance <= high + 1e-12
    assert high <= 2
    assert 0 <= result.avg_nn_distance <= 2
    assert min(result.std_nn_distance, result.std_pairwise_distance, result.spread_std) >= 0
    assert 0 <= result.effective_dimensionality <= min(x.shape[0] - 1, x.shape[1])
    assert (result.effective_dimensionality == 0) == bool((x == x[0]).all())
    # Nearest-neighbour distances can never undercut the closest pair.
    assert distances.min() == pytest.approx(low, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=finite),
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=finite),
    st.floats(-1, 1),
)
def test_cache_hit_rate_properties(questions: Matrix, cache: Matrix, tau: float) -> None:
    assume(nonzero_rows(questions) and nonzero_rows(cache))
    result = cache_hit_rate(questions, cache, tau=tau)
    assert 0 <= result.rate <= 1
    assert all(-1 <= best <= 1 for best in result.best)
    assert result.hits == sum(best > tau for best in result.best)
    assert result.rate == result.hits / result.total


ids = st.lists(st.sampled_from("abcdefgh"), max_size=4)


@given(st.lists(ids, max_size=6), st.lists(st.sampled_from("abcdef"), min_size=1, max_size=8))
def test_chunk_utilization_properties(retrieved: list[list[str]], corpus: list[str]) -> None:
    result = chunk_utilization(retrieved, corpus)
    assert result.total_chunks == len(set(corpus))
    assert result.chunk_utilization == result.used_chunks / result.total_chunks
    assert 0 <= result.chunk_utilization <= 1
    assert result.used_chunks + result.unused_chunks == result.total_chunks
    assert not set(result.unknown_chunks) & set(corpus)
    assert list(result.unknown_chunks) == sorted(set(result.unknown_chunks))


@settings(max_examples=30, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)), elements=finite),
    st.data(),
)
def test_topic_coverage_properties(x: Matrix, data: st.DataObject) -> None:
    assume(nonzero_rows(x))
    n = x.shape[0]
    n_topics = data.draw(st.integers(1, n))
    retrieved = [[f"c{i % 3}"] for i in range(n)]
    result = topic_coverage(x, retrieved, [[]] * n, n_topics=n_topics)
    assert sum(t.question_count for t in result.topics) == n
    assert [t.topic_id for t in result.topics] == list(range(n_topics))
    assert result.assignment[0] == 0
    counts = [t.question_count for t in result.topics]
    assert counts == sorted(counts, key=lambda c: c == 0)  # empty topics come last
    assert result == topic_coverage(x, retrieved, [[]] * n, n_topics=n_topics)
