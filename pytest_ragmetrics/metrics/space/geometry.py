"""Dataset-level metrics of a set of texts, given as an (N, D) array of their embeddings.

Three groups (docs/metrics.md#tier-0-embedding-space-ux-and-sources):

* :func:`embedding_space` - nearest-neighbour distances, density, spread around the
  centroid, effective dimensionality and pairwise distances of one set of vectors;
* :func:`cache_hit_rate` and :func:`context_preservation` (alias
  :func:`multi_turn_consistency`) - how often a question is answered by a cache of past
  questions, and how consistent consecutive questions of a session are;
* :func:`chunk_utilization` and :func:`topic_coverage` - which chunks of the corpus are
  ever retrieved, and what each k-means topic of the questions retrieves.

Conventions shared by every function here:

* **Cosine distance** is ``1 - cos(u, v)``, computed in float64 and clipped to [0, 2]
  (rounding can put identical vectors at -2e-16). Cosine of a zero vector is undefined, so
  a zero row is a ``ValueError``, as is a NaN or infinite value or an array that is not 2-D.
* **faiss** does the searches (``IndexFlatIP`` on L2-normalised float32 copies, which
  is exact inner-product search); the cosine of each neighbour it finds is then recomputed
  in float64 from the inputs. faiss only chooses *which* neighbour: between two candidates
  closer than float32 resolution (about 1e-7) it may pick the marginally farther one.
* faiss is imported inside the functions that need it, so importing this module (or the
  package) never imports faiss.
* Standard deviations are population standard deviations (ddof=0): they describe the
  set of values at hand, not an estimate for a larger population.
"""

from __future__ import annotations

import contextlib
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

VARIANCE_SHARE = 0.95
"""Share of the total variance the effective dimensionality must reach."""
VARIANCE_TOLERANCE = 1e-9
"""Slack on that share, so a split of exactly 95 % is not lost to rounding in the SVD."""
DEFAULT_TAU = 0.85
OUTLIER_SIGMAS = 2.0
"""A vector is an outlier when its mean k-NN distance is this many standard deviations
above the mean (``avg_nn_distance + 2 * std_nn_distance``)."""
_OUTLIER_SLACK = 1e-9
"""How far above the bound an outlier must be, so rounding never makes one of a set of
equally spaced vectors (std 0) an outlier."""
_BLOCK_ENTRIES = 1 << 21
"""Distances (or vector entries) per block of a blockwise computation (16 MiB of float64)."""
_SAMPLE_CHUNK = 1 << 16
"""Pairs drawn per call to the generator; part of what a seed means, so keep it fixed."""
_FAISS_MAX_SEED = 2**31 - 1
FAISS_THREADS = 1
"""OpenMP threads faiss may use inside these functions (see :func:`_faiss_threads`)."""


# ----------------------------------------------------------------------------- validation


def _matrix(vectors: npt.ArrayLike, name: str) -> FloatArray:
    """``vectors`` as a float64 (N, D) array with N, D >= 1 and only finite values."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (N, D) array, got shape {x.shape}")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty (no vectors)")
    if x.shape[1] == 0:
        raise ValueError(f"{name} has vectors of dimension 0")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return x


def _norms(x: FloatArray, name: str) -> FloatArray:
    """Euclidean row norms; a zero (or overflowing) row makes cosine undefined."""
    norms = np.asarray(np.linalg.norm(x, axis=1), dtype=np.float64)
    bad = np.flatnonzero((norms == 0) | ~np.isfinite(norms))
    if bad.size:
        raise ValueError(
            f"{name} has {bad.size} zero (or overflowing) vector(s), first at row {bad[0]}; "
            "cosine is undefined for them"
        )
    return norms


def _unit(x: FloatArray, name: str) -> FloatArray:
    """Rows scaled to unit length, in float64."""
    return x / _norms(x, name)[:, None]


def _count(value: int, name: str, minimum: int) -> int:
    number = operator.index(value)
    if number < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return number


def _id_lists(lists: Sequence[Sequence[str]], name: str) -> list[Sequence[str]]:
    """Per-question id lists; a bare string would be read as a list of characters."""
    if isinstance(lists, str):
        raise ValueError(f"{name} must be a sequence of id lists, got a string")
    for i, ids in enumerate(lists):
        if isinstance(ids, str):
            raise ValueError(f"{name}[{i}] must be a sequence of ids, got the string {ids!r}")
    return list(lists)


# ----------------------------------------------------------------------------- faiss


@contextlib.contextmanager
def _faiss_threads() -> Iterator[None]:
    """Run faiss with ``FAISS_THREADS`` OpenMP threads, restoring the caller's count after.

    Not needed for determinism (k-means centroids, assignments and searches were bitwise
    identical with 1, 2, 4 and 8 threads, in one process and across processes), but on a
    busy machine (pytest-xdist workers, shared CI runners) OpenMP contention made k-means
    on 10-2000 points 40-700 times slower with 2 threads than with one. The count is an
    OpenMP per-thread setting, so other Python threads are unaffected.
    """
    import faiss

    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(FAISS_THREADS)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


def _faiss_nearest(base: FloatArray, queries: FloatArray, k: int) -> IntArray:
    """Row indices of the ``k`` largest inner products of each query with ``base``.

    Both are unit rows; faiss searches float32 copies with ``IndexFlatIP`` (exact).
    """
    import faiss

    index = faiss.IndexFlatIP(base.shape[1])
    with _faiss_threads():
        index.add(np.ascontiguousarray(base, dtype=np.float32))
        _, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    found = np.asarray(ids, dtype=np.int64)
    if (found < 0).any():  # only if faiss returned fewer than k results; never for flat
        raise RuntimeError("faiss returned fewer neighbours than requested")
    return found


def _row_cosines(left: FloatArray, right: FloatArray, i: IntArray, j: IntArray) -> FloatArray:
    """``left[i[m]] . right[j[m]]`` for every m, for unit rows, blockwise, clipped to [-1, 1]."""
    out = np.empty(i.shape[0], dtype=np.float64)
    step = max(1, _BLOCK_ENTRIES // left.shape[1])
    for start in range(0, i.shape[0], step):
        a, b = left[i[start : start + step]], right[j[start : start + step]]
        out[start : start + step] = np.einsum("ij,ij->i", a, b)
    return np.clip(out, -1.0, 1.0)


# ----------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class _Moments:
    """Count, mean, sum of squared deviations, min and max of a stream of values."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    low: float = np.inf
    high: float = -np.inf

    def add(self, values: FloatArray) -> _Moments:
        """Merge a block of values (Chan et al.'s pairwise update, stable in float64)."""
        if values.size == 0:
            return self
        n, mean = values.size, float(values.mean())
        m2 = float(((values - mean) ** 2).sum())
        total = self.count + n
        delta = mean - self.mean
        return _Moments(
            total,
            self.mean + delta * n / total,
            self.m2 + m2 + delta * delta * self.count * n / total,
            min(self.low, float(values.min())),
            max(self.high, float(values.max())),
        )

    @property
    def std(self) -> float:
        """Population standard deviation (ddof=0)."""
        return float(np.sqrt(max(self.m2, 0.0) / self.count))


def _exact_pairwise(unit: FloatArray) -> _Moments:
    """Cosine distances of all pairs i < j, a block of rows against the rows after it."""
    n = unit.shape[0]
    step = max(1, _BLOCK_ENTRIES // n)
    moments = _Moments()
    for start in range(0, n, step):
        stop = min(n, start + step)
        sims = unit[start:stop] @ unit[start:].T
        upper = np.arange(start, n)[None, :] > np.arange(start, stop)[:, None]
        moments = moments.add(np.clip(1.0 - sims[upper], 0.0, 2.0))
    return moments


def _sample_pairs(n: int, count: int, seed: int) -> Iterator[tuple[IntArray, IntArray]]:
    """``count`` pairs i < j, each drawn uniformly from the n(n-1)/2 pairs, with replacement,
    in chunks of ``_SAMPLE_CHUNK``.

    i is uniform on [0, n) and j uniform on the other n - 1 indices, so each ordered pair
    of distinct indices has probability 1/(n(n-1)) and each unordered pair 2/(n(n-1)).
    """
    rng = np.random.default_rng(seed)
    for start in range(0, count, _SAMPLE_CHUNK):
        size = min(_SAMPLE_CHUNK, count - start)
        i = rng.integers(0, n, size=size, dtype=np.int64)
        j = rng.integers(0, n - 1, size=size, dtype=np.int64)
        j += j >= i
        yield np.minimum(i, j), np.maximum(i, j)


def _sampled_pairwise(unit: FloatArray, count: int, seed: int) -> _Moments:
    """Cosine distances of ``count`` uniformly sampled pairs, chunk by chunk."""
    moments = _Moments()
    for i, j in _sample_pairs(unit.shape[0], count, seed):
        moments = moments.add(np.clip(1.0 - _row_cosines(unit, unit, i, j), 0.0, 2.0))
    return moments


def _effective_dimensionality(x: FloatArray) -> int:
    """Fewest principal components holding >= 95 % of the variance; 0 if there is none."""
    if (x == x[0]).all():  # tested first: rounding in the mean would fake some variance
        return 0
    centred = x - x.mean(axis=0)
    centred /= np.abs(centred).max()  # rows differ, so > 0; the scaling keeps s² from underflow
    singular = np.linalg.svd(centred, compute_uv=False)
    variance = singular**2  # eigenvalues of the covariance matrix, times (N - 1) / scale²
    share = np.cumsum(variance) / variance.sum()
    return int(np.searchsorted(share, VARIANCE_SHARE - VARIANCE_TOLERANCE) + 1)


# ----------------------------------------------------------------------------- Tier 0


@dataclass(frozen=True)
class EmbeddingSpace:
    """The shape of a set of N embeddings; see :func:`embedding_space` for definitions."""

    total_samples: int
    k: int
    avg_nn_distance: float
    std_nn_distance: float
    density_score: float
    avg_spread: float
    max_spread: float
    spread_std: float
    effective_dimensionality: int
    avg_pairwise_distance: float
    std_pairwise_distance: float
    min_pairwise_distance: float
    max_pairwise_distance: float
    pairwise_method: Literal["exact", "sampled"]
    pairwise_pairs: int
    sample_seed: int
    # Indices of the outlier vectors, ascending, and each one's mean k-NN distance.
    outlier_indices: tuple[int, ...] = ()
    outlier_distances: tuple[float, ...] = ()

    @property
    def outliers(self) -> int:
        """How many vectors are outliers (see :func:`embedding_space`)."""
        return len(self.outlier_indices)

    @property
    def outlier_bound(self) -> float:
        """The mean k-NN distance an outlier exceeds: avg + 2 std."""
        return self.avg_nn_distance + OUTLIER_SIGMAS * self.std_nn_distance

    def as_stats(self) -> dict[str, float]:
        """Every numeric field as a float, plus ``pairwise_exact`` (1.0 exact, 0.0 sampled)
        and ``outliers`` (their count)."""
        return {
            "total_samples": float(self.total_samples),
            "k": float(self.k),
            "avg_nn_distance": self.avg_nn_distance,
            "std_nn_distance": self.std_nn_distance,
            "density_score": self.density_score,
            "avg_spread": self.avg_spread,
            "max_spread": self.max_spread,
            "spread_std": self.spread_std,
            "effective_dimensionality": float(self.effective_dimensionality),
            "avg_pairwise_distance": self.avg_pairwise_distance,
            "std_pairwise_distance": self.std_pairwise_distance,
            "min_pairwise_distance": self.min_pairwise_distance,
            "max_pairwise_distance": self.max_pairwise_distance,
            "pairwise_exact": 1.0 if self.pairwise_method == "exact" else 0.0,
            "pairwise_pairs": float(self.pairwise_pairs),
            "sample_seed": float(self.sample_seed),
            "outliers": float(self.outliers),
        }

    def describe(self) -> str:
        """One line for a report."""
        pairs = (
            f"all {self.pairwise_pairs} pairs"
            if self.pairwise_method == "exact"
            else f"{self.pairwise_pairs} sampled pairs, seed {self.sample_seed}"
        )
        return (
            f"{self.total_samples} vectors: {self.k}-NN cosine distance "
            f"{self.avg_nn_distance:.4f} ± {self.std_nn_distance:.4f} "
            f"(density {self.density_score:.4g}); spread {self.avg_spread:.4f} "
            f"± {self.spread_std:.4f} (max {self.max_spread:.4f}); "
            f"effective dimensionality {self.effective_dimensionality}; pairwise cosine "
            f"distance {self.avg_pairwise_distance:.4f} ± {self.std_pairwise_distance:.4f} "
            f"in [{self.min_pairwise_distance:.4f}, {self.max_pairwise_distance:.4f}] "
            f"over {pairs}; {self.outliers} outlier(s) with k-NN distance above "
            f"{self.outlier_bound:.4f}"
        )


def _knn(unit: FloatArray, k: int) -> FloatArray:
    """Sorted cosine distances of each unit row to its k nearest other rows.

    faiss returns k + 1 candidates per row. The row itself is removed by index, wherever
    it sits: with duplicates a twin can come first, and with more than k + 1 copies the
    row may be missing altogether, in which case the last candidate goes instead (every
    candidate then ties with the row itself, so the distances are the same either way).
    """
    n = unit.shape[0]
    ids = _faiss_nearest(unit, unit, k + 1)
    rows = np.arange(n)
    is_self = ids == rows[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(is_self)
    keep[rows, drop] = False
    neighbours = ids[keep].reshape(n, k)
    cosines = _row_cosines(unit, unit, np.repeat(rows, k), neighbours.ravel())
    return np.sort(np.clip(1.0 - cosines, 0.0, 2.0).reshape(n, k), axis=1)


def nearest_neighbour_distances(vectors: npt.ArrayLike, k: int = 5) -> FloatArray:
    """Cosine distances of each vector to its ``min(k, N - 1)`` nearest other vectors.

    Returns an (N, min(k, N - 1)) float64 array, each row ascending. "Other" is by index:
    a duplicate of a vector is a neighbour at distance 0, the vector itself is not.
    Search by faiss ``IndexFlatIP`` on L2-normalised float32 copies; distances recomputed
    in float64 and clipped to [0, 2]. N < 2, k < 1, a zero vector, a NaN or an infinite
    value raise ``ValueError``.
    """
    x = _matrix(vectors, "vectors")
    if x.shape[0] < 2:
        raise ValueError(f"nearest neighbours need at least 2 vectors, got {x.shape[0]}")
    k = min(_count(k, "k", 1), x.shape[0] - 1)
    return _knn(_unit(x, "vectors"), k)


def embedding_space(
    vectors: npt.ArrayLike,
    k: int = 5,
    exact_limit: int = 2048,
    sample_pairs: int = 200_000,
    seed: int = 0,
    epsilon: float = 1e-12,
) -> EmbeddingSpace:
    """Tier-0 description of a set of N embeddings (rows of ``vectors``).

    * ``avg_nn_distance`` / ``std_nn_distance``: each vector's mean cosine distance to its
      k nearest other vectors (self excluded by index, so duplicates count as neighbours
      at distance 0), then the mean and population std of those N per-vector means.
      ``k`` is clipped to N - 1 and the k used is recorded. Search as in
      :func:`nearest_neighbour_distances`.
    * ``density_score``: ``1 / (avg_nn_distance + epsilon)``; when every vector has a
      duplicate the average is 0 and the density is ``1 / epsilon`` (finite, very large).
    * ``avg_spread`` / ``max_spread`` / ``spread_std``: Euclidean distance of each *raw*
      (not normalised) vector to the centroid (mean) of the raw vectors; mean, max and
      population std.
    * ``effective_dimensionality``: the fewest principal components whose variance is at
      least 95 % of the total (eigenvalues of the covariance matrix, from the SVD of the
      centred raw matrix in float64; the share is compared with a 1e-9 slack). When every
      vector is the same there is no variance and it is defined as 0.
    * ``outliers``: the vectors whose mean k-NN distance (the per-vector value above) is
      more than ``avg_nn_distance + 2 * std_nn_distance`` (by more than 1e-9, so a set of
      equally spaced vectors has none): the isolated texts that make ``std_nn_distance``
      large. ``outlier_indices`` lists them, ascending, ``outlier_distances`` their values.
    * ``avg/std/min/max_pairwise_distance``: cosine distance over pairs i < j, in float64,
      population std. *Exact* (all N(N-1)/2 pairs) when N <= ``exact_limit`` or when there
      are no more pairs than ``sample_pairs``; otherwise *sampled*: ``sample_pairs`` pairs
      drawn uniformly with replacement with ``numpy.random.default_rng(seed)``, so the
      same seed gives the same result. Both run in blocks of about 2M distances, so memory
      does not grow with the number of pairs. ``pairwise_method`` and ``pairwise_pairs``
      say which and how many; ``sample_seed`` records ``seed`` (no effect when exact).

    Raises ``ValueError`` for fewer than 2 vectors, a zero vector (cosine undefined), NaN
    or infinite values, k < 1, exact_limit < 0, sample_pairs < 1, seed < 0 or epsilon <= 0.
    """
    x = _matrix(vectors, "vectors")
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"embedding space needs at least 2 vectors, got {n}")
    k = min(_count(k, "k", 1), n - 1)
    exact_limit = _count(exact_limit, "exact_limit", 0)
    sample_pairs = _count(sample_pairs, "sample_pairs", 1)
    seed = _count(seed, "seed", 0)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    unit = _unit(x, "vectors")
    per_vector = _knn(unit, k).mean(axis=1)
    spread = np.linalg.norm(x - x.mean(axis=0), axis=1)
    all_pairs = n * (n - 1) // 2
    exact = n <= exact_limit or all_pairs <= sample_pairs
    pairs = _exact_pairwise(unit) if exact else _sampled_pairwise(unit, sample_pairs, seed)
    avg_nn, std_nn = float(per_vector.mean()), float(per_vector.std())
    bound = avg_nn + OUTLIER_SIGMAS * std_nn
    outliers = np.flatnonzero(per_vector > bound + _OUTLIER_SLACK)
    return EmbeddingSpace(
        total_samples=n,
        k=k,
        avg_nn_distance=avg_nn,
        std_nn_distance=std_nn,
        density_score=1.0 / (avg_nn + epsilon),
        avg_spread=float(spread.mean()),
        max_spread=float(spread.max()),
        spread_std=float(spread.std()),
        effective_dimensionality=_effective_dimensionality(x),
        avg_pairwise_distance=pairs.mean,
        std_pairwise_distance=pairs.std,
        min_pairwise_distance=pairs.low,
        max_pairwise_distance=pairs.high,
        pairwise_method="exact" if exact else "sampled",
        pairwise_pairs=pairs.count,
        sample_seed=seed,
        outlier_indices=tuple(int(i) for i in outliers),
        outlier_distances=tuple(float(per_vector[i]) for i in outliers),
    )


# ----------------------------------------------------------------------------- UX


@dataclass(frozen=True)
class CacheHits:
    """``hits`` of ``total`` questions have a cached question with cosine > ``tau``.

    ``best[i]`` is question i's highest cosine to the cache (float64).
    """

    rate: float
    hits: int
    total: int
    tau: float
    best: tuple[float, ...]


def cache_hit_rate(
    question_vectors: npt.ArrayLike, cache_vectors: npt.ArrayLike, tau: float = DEFAULT_TAU
) -> CacheHits:
    """Share of questions whose best cosine similarity to a cache of past questions is > tau.

    A question is a hit iff ``max_j cos(q, c_j) > tau``, strictly: a cosine equal to tau
    is a miss. The best cached question is found by faiss (``IndexFlatIP`` top-1 on
    L2-normalised float32 copies) and its cosine recomputed in float64 from the inputs as
    ``q . c / (|q| |c|)``. No sampling. Empty question or cache arrays, differing
    dimensions, zero vectors, NaN or infinite values (or tau) raise ``ValueError``.
    """
    if not math.isfinite(tau):
        raise ValueError(f"tau must be a finite number, got {tau!r}")
    _, best = _nearest(question_vectors, cache_vectors, "question_vectors", "cache_vectors")
    hits = int((best > tau).sum())
    total = best.shape[0]
    return CacheHits(hits / total, hits, total, tau, tuple(float(b) for b in best))


def _nearest(
    query_vectors: npt.ArrayLike, base_vectors: npt.ArrayLike, query_name: str, base_name: str
) -> tuple[IntArray, FloatArray]:
    queries = _matrix(query_vectors, query_name)
    base = _matrix(base_vectors, base_name)
    if queries.shape[1] != base.shape[1]:
        raise ValueError(
            f"{query_name} have dimension {queries.shape[1]}, {base_name} {base.shape[1]}"
        )
    q_norms, b_norms = _norms(queries, query_name), _norms(base, base_name)
    best_ids = _faiss_nearest(base / b_norms[:, None], queries / q_norms[:, None], 1)[:, 0]
    dots = np.einsum("ij,ij->i", queries, base[best_ids])
    return best_ids, np.clip(dots / (q_norms * b_norms[best_ids]), -1.0, 1.0)


def nearest_cosines(
    query_vectors: npt.ArrayLike, base_vectors: npt.ArrayLike
) -> tuple[IntArray, FloatArray]:
    """For each query vector, the row of ``base_vectors`` most similar to it and their
    cosine similarity: two arrays of length N (queries).

    The nearest row is found by faiss (``IndexFlatIP`` top-1 on L2-normalised float32
    copies) and its cosine recomputed in float64 as ``q . b / (|q| |b|)``, as
    :func:`cache_hit_rate` does. Empty arrays, differing dimensions, zero vectors, NaN or
    infinite values raise ``ValueError``.
    """
    return _nearest(query_vectors, base_vectors, "query_vectors", "base_vectors")


@dataclass(frozen=True)
class SessionCoherence:
    """Mean over ``sessions_used`` sessions of the mean cosine of consecutive turns.

    ``sessions_single_turn`` sessions had one turn and no consecutive pair, so they could
    not contribute; ``pairs`` is the number of consecutive pairs over all used sessions.
    """

    value: float
    sessions_used: int
    sessions_single_turn: int
    pairs: int


def _consecutive_cosines(session: npt.ArrayLike, index: int) -> FloatArray:
    x = _matrix(session, f"session {index}")
    norms = _norms(x, f"session {index}")
    cosines = np.einsum("ij,ij->i", x[:-1], x[1:]) / (norms[:-1] * norms[1:])
    return np.asarray(np.clip(cosines, -1.0, 1.0), dtype=np.float64)


def context_preservation(sessions: Sequence[npt.ArrayLike]) -> SessionCoherence:
    """Mean cosine similarity of consecutive questions, per session, then over sessions.

    Each element of ``sessions`` is one session's question vectors, a (T, D) array in
    turn order. A session with T >= 2 contributes the mean of ``cos(v_t, v_{t+1})`` over
    its T - 1 consecutive pairs (float64, in [-1, 1]); the result is the unweighted mean
    of those session means, so a long session weighs as much as a short one. Sessions with
    T = 1 have no pair: they are counted in ``sessions_single_turn``, not averaged. No
    sampling. Raises ``ValueError`` when there are no sessions, no session has two turns,
    a session is empty (T = 0) or not 2-D, dimensions differ between sessions, or a vector
    is zero, NaN or infinite.
    """
    means: list[float] = []
    single = pairs = 0
    dims: set[int] = set()
    for index, session in enumerate(sessions):
        cosines = _consecutive_cosines(session, index)
        dims.add(int(np.shape(session)[1]))
        if cosines.size == 0:
            single += 1
        else:
            means.append(float(cosines.mean()))
            pairs += cosines.size
    if len(dims) > 1:
        raise ValueError(f"sessions have vectors of different dimensions: {sorted(dims)}")
    if not means:
        raise ValueError(
            f"no session has two or more turns ({single} single-turn session(s)), "
            "so there is no consecutive pair to compare"
        )
    return SessionCoherence(float(np.mean(means)), len(means), single, pairs)


def multi_turn_consistency(sessions: Sequence[npt.ArrayLike]) -> SessionCoherence:
    """Same definition as :func:`context_preservation`, reported under its own name."""
    return context_preservation(sessions)


# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class ChunkUtilization:
    """``used_chunks`` of the ``total_chunks`` distinct corpus ids were ever retrieved.

    ``unknown_chunks`` are the distinct retrieved ids absent from the corpus, sorted; they
    are neither used nor unused.
    """

    total_chunks: int
    used_chunks: int
    unused_chunks: int
    chunk_utilization: float
    unknown_chunks: tuple[str, ...]


def chunk_utilization(
    retrieved: Sequence[Sequence[str]], corpus: Sequence[str]
) -> ChunkUtilization:
    """|corpus chunks retrieved at least once| / |corpus chunks|.

    ``retrieved`` holds one list of chunk ids per question; ``corpus`` the ids of all
    chunks, where a repeated id is one chunk. A retrieved id that is not in the corpus is
    reported in ``unknown_chunks`` (sorted, distinct) and not counted as used. No distance,
    normalisation or sampling. No questions gives utilization 0.0; an empty corpus raises
    ``ValueError``, as does a bare string where a list of ids is expected.
    """
    if isinstance(corpus, str):
        raise ValueError("corpus must be a sequence of chunk ids, got a string")
    chunks = set(corpus)
    if not chunks:
        raise ValueError("corpus is empty: chunk utilization is undefined without chunks")
    seen = {chunk for ids in _id_lists(retrieved, "retrieved") for chunk in ids}
    used = len(seen & chunks)
    return ChunkUtilization(
        total_chunks=len(chunks),
        used_chunks=used,
        unused_chunks=len(chunks) - used,
        chunk_utilization=used / len(chunks),
        unknown_chunks=tuple(sorted(seen - chunks)),
    )


@dataclass(frozen=True)
class Topic:
    """One k-means cluster of questions and the distinct chunks and URLs they retrieved."""

    topic_id: int
    question_count: int
    unique_chunks: int
    unique_urls: int


@dataclass(frozen=True)
class TopicCoverage:
    """Questions clustered into ``n_topics`` topics; see :func:`topic_coverage`.

    ``assignment[i]`` is the ``topic_id`` of question i.
    """

    n_topics: int
    total_questions: int
    avg_chunks_per_topic: float
    topics: tuple[Topic, ...]
    seed: int
    assignment: tuple[int, ...]


def _kmeans_plus_plus(points: FloatArray, k: int, seed: int) -> FloatArray:
    """k-means++ seeding in float64 with ``default_rng(seed)``.

    Each next centre is a point drawn with probability proportional to its squared
    distance to the nearest centre so far; when every point sits on a centre the draw is
    uniform (the duplicate centres then end up as empty clusters).
    """
    rng = np.random.default_rng(seed)
    centres = [int(rng.integers(points.shape[0]))]
    nearest = ((points - points[centres[0]]) ** 2).sum(axis=1)
    while len(centres) < k:
        total = float(nearest.sum())
        if total > 0:
            chosen = int(rng.choice(points.shape[0], p=nearest / total))
        else:
            chosen = int(rng.integers(points.shape[0]))
        centres.append(chosen)
        nearest = np.minimum(nearest, ((points - points[chosen]) ** 2).sum(axis=1))
    return points[centres]


def _faiss_kmeans(points: FloatArray, k: int, seed: int) -> FloatArray:
    """Lloyd iterations by ``faiss.Kmeans`` from a k-means++ start; float64 centroids."""
    import faiss

    start = np.ascontiguousarray(_kmeans_plus_plus(points, k, seed), dtype=np.float32)
    kmeans = faiss.Kmeans(points.shape[1], k, niter=25, seed=seed, min_points_per_centroid=1)
    with _faiss_threads():
        kmeans.train(np.ascontiguousarray(points, dtype=np.float32), init_centroids=start)
    if kmeans.centroids is None:  # train always sets them; this narrows the type
        raise RuntimeError("faiss.Kmeans.train returned no centroids")
    return np.asarray(kmeans.centroids, dtype=np.float64)


def _assign(points: FloatArray, centroids: FloatArray) -> IntArray:
    """Nearest centroid by squared Euclidean distance in float64, ties to the lower index."""
    distances = (
        (points**2).sum(axis=1)[:, None]
        - 2.0 * points @ centroids.T
        + (centroids**2).sum(axis=1)[None, :]
    )
    return np.asarray(distances.argmin(axis=1), dtype=np.int64)


def _topic_order(labels: IntArray, k: int) -> dict[int, int]:
    """Cluster label -> topic id: by smallest question index, then empty clusters by label."""
    first = {int(label): int(np.flatnonzero(labels == label)[0]) for label in np.unique(labels)}
    ordered = sorted(first, key=first.__getitem__)
    ordered += [label for label in range(k) if label not in first]
    return {label: topic for topic, label in enumerate(ordered)}


def _distinct(lists: Iterable[Sequence[str]]) -> int:
    return len({item for items in lists for item in items})


def topic_coverage(
    question_vectors: npt.ArrayLike,
    retrieved: Sequence[Sequence[str]],
    urls: Sequence[Sequence[str]],
    n_topics: int,
    seed: int = 0,
) -> TopicCoverage:
    """k-means topics of the questions, with the distinct chunks and URLs each retrieved.

    Questions are L2-normalised (so squared Euclidean distance is 2 - 2 cos, and the
    clusters follow cosine similarity like every other metric here) and clustered into
    ``n_topics`` clusters: k-means++ seeding with ``numpy.random.default_rng(seed)``, then
    25 Lloyd iterations of ``faiss.Kmeans(seed=seed)`` from those centres (faiss trains
    on a seeded subsample when there are more than 256 questions per topic), then every
    question is assigned to its nearest final centroid in float64 (ties to the lower
    centroid). Deterministic: the same input and seed give the same assignment in any
    process. faiss runs with one OpenMP thread inside the call (see ``FAISS_THREADS``),
    though results were bitwise identical with 1, 2, 4 and 8 threads anyway; the test
    suite checks in-process and cross-process runs with different thread settings.

    Topics are numbered by their smallest question index (the topic of question 0 is 0);
    a cluster no question is assigned to (possible with duplicate questions) is kept with
    zero counts and numbered after the others. Per topic: questions, distinct retrieved
    chunk ids and distinct URLs of its questions. ``avg_chunks_per_topic`` is the mean of
    ``unique_chunks`` over all ``n_topics`` topics, empty ones included.

    ``retrieved[i]`` and ``urls[i]`` belong to question i. Raises ``ValueError`` when
    n_topics < 1 or > N, the lists' lengths differ from N, seed is outside [0, 2**31 - 1],
    or a vector is zero, NaN or infinite (so there must be at least one question).
    """
    points = _unit(_matrix(question_vectors, "question_vectors"), "question_vectors")
    n = points.shape[0]
    chunk_lists, url_lists = _id_lists(retrieved, "retrieved"), _id_lists(urls, "urls")
    if len(chunk_lists) != n or len(url_lists) != n:
        raise ValueError(
            f"{n} questions but {len(chunk_lists)} retrieved lists and {len(url_lists)} "
            "url lists; there must be one of each per question"
        )
    k = _count(n_topics, "n_topics", 1)
    if k > n:
        raise ValueError(f"n_topics ({k}) exceeds the number of questions ({n})")
    seed = _count(seed, "seed", 0)
    if seed > _FAISS_MAX_SEED:
        raise ValueError(f"seed must be in [0, {_FAISS_MAX_SEED}], got {seed!r}")
    labels = _assign(points, _faiss_kmeans(points, k, seed))
    order = _topic_order(labels, k)
    assignment = tuple(order[int(label)] for label in labels)
    members: list[list[int]] = [[] for _ in range(k)]
    for question, topic in enumerate(assignment):
        members[topic].append(question)
    topics = [
        Topic(
            topic_id,
            len(questions),
            _distinct(chunk_lists[i] for i in questions),
            _distinct(url_lists[i] for i in questions),
        )
        for topic_id, questions in enumerate(members)
    ]
    return TopicCoverage(
        n_topics=k,
        total_questions=n,
        avg_chunks_per_topic=float(np.mean([t.unique_chunks for t in topics])),
        topics=tuple(topics),
        seed=seed,
        assignment=assignment,
    )
