"""Pictures of an embedding space: 2-D projections of a set of texts' embeddings, and the
picture of an eval's questions, answers and chunks the HTML and JSON reports draw
(docs/reports.md#embedding-space).

* :func:`pca_plane` - principal component analysis through numpy, always available;
  deterministic to the bit for the same input and numpy (signs fixed, no randomness).
* :func:`umap_plane` - UMAP through umap-learn (the ``umap`` extra), imported on first use;
  deterministic for a fixed seed (``random_state``, which makes it single-threaded).
* :func:`sample_indices` - which points to draw when there are more than the limit: an
  equal share of the limit per kind, a seeded sample within each kind.
* :func:`chunk_coverage` - each question's and answer's nearest chunk, and which of them
  are far from every chunk.
* :func:`eval_picture` - all of the above for an eval's points, as plain data. It embeds
  and measures the drawn points only, so its cost is bounded by the limit, whatever the
  size of the eval.

A projection treats embeddings by their direction, as the package's cosine distances do:
rows are scaled to unit length first, so straight-line distances in the projected space
stand for cosine distances (|u - v|² = 2 - 2 cos(u, v) for unit vectors).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_ragmetrics.metrics.base import Embed
from pytest_ragmetrics.metrics.space.geometry import (
    FloatArray,
    IntArray,
    _matrix,
    _unit,
    nearest_cosines,
)
from pytest_ragmetrics.metrics.space.points import (
    CHUNK,
    KINDS,
    MAX_SEED,
    MIN_POINTS,
    Point,
    preview,
    umap_version,
)

PCA, UMAP = "pca", "umap"
UMAP_MIN_POINTS = 10
"""The fewest points UMAP is run on: its spectral start needs a few neighbours per point."""
UMAP_NEIGHBOURS = 15
UMAP_MIN_DIST = 0.1
FAR_SIGMAS = 2.0
"""A question (answer) is far from every chunk when its nearest chunk's cosine is this
many standard deviations below the mean over the questions (answers)."""
_SLACK = 1e-9
"""How far past a bound a value must be to count, so rounding never flags a point of a
set of equal values (standard deviation 0)."""
_TIE = 1e-12
"""Loadings of a (unit-length) axis this close in magnitude tie for the largest: the first
of them decides the sign, so rounding in the SVD cannot flip a picture between machines."""
_FLAT = 1e-9
"""A principal axis along which the unit-length points' root-mean-square coordinate is no
more than this holds no variance: its coordinates are set to exactly 0, not to rounding
noise that the picture would blow up to fill the plot."""


@dataclass(frozen=True)
class Plane:
    """Two coordinates per point by one method, or, when the points cannot be drawn by
    it, ``coordinates`` None and ``note`` saying why.

    ``explained_variance`` is, for PCA, each axis's share of the total variance (0-1);
    empty for UMAP, whose axes have no such meaning. A ``note`` with coordinates says
    something the picture does not show on its face (the points lie on a line)."""

    method: str
    coordinates: FloatArray | None
    explained_variance: tuple[float, ...] = ()
    note: str | None = None


def _too_few(method: str, n: int, needed: int) -> Plane:
    return Plane(method, None, note=f"{n} point(s): too few to project; {needed} are needed")


def pca_plane(vectors: npt.ArrayLike) -> Plane:
    """The first two principal components of the unit-length rows of ``vectors``.

    Rows are scaled to unit length and centred on their mean; the axes are the first two
    right singular vectors of that matrix (``numpy.linalg.svd``, float64), and each
    point's coordinates are its centred row's dot products with them. The sign of an axis
    is arbitrary in an SVD, so it is fixed: the axis's loading of largest magnitude (the
    first, on a tie within 1e-12) is made positive, as scikit-learn's PCA does.
    ``explained_variance`` is each axis's share of the total variance (squared singular
    values over their sum).

    An axis with no variance (the root-mean-square coordinate along it at most 1e-9: all
    points on a line) gets coordinates exactly 0 and a note. Fewer than 3 points, or
    points that all have the same direction (no axis with variance), give no coordinates
    and a note saying so. A zero, NaN or
    infinite row raises ``ValueError``.
    """
    unit = _unit(_matrix(vectors, "vectors"), "vectors")
    n = unit.shape[0]
    if n < MIN_POINTS:
        return _too_few(PCA, n, MIN_POINTS)
    centred = unit - unit.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    spread = singular / np.sqrt(n)  # root-mean-square coordinate along each axis
    if spread[0] <= _FLAT:
        return Plane(PCA, None, note=f"all {n} points have the same direction: nothing to spread")
    variance = singular**2
    coordinates = np.zeros((n, 2), dtype=np.float64)
    share = [0.0, 0.0]
    for i in range(min(2, singular.size)):
        if spread[i] <= _FLAT:
            continue  # no variance along it: exactly 0, not rounding noise
        magnitude = np.abs(axes[i])
        largest = int(np.flatnonzero(magnitude >= magnitude.max() - _TIE)[0])
        axis = axes[i] if axes[i][largest] > 0 else -axes[i]
        coordinates[:, i] = centred @ axis
        share[i] = float(variance[i] / variance.sum())
    note = None if share[1] else "the points lie on a line: the second axis holds no variance"
    return Plane(PCA, coordinates, (share[0], share[1]), note)


def umap_plane(vectors: npt.ArrayLike, seed: int = 0) -> Plane:
    """UMAP of the unit-length rows of ``vectors`` into two dimensions (umap-learn).

    Cosine metric, ``n_neighbors = min(15, N - 1)``, ``min_dist = 0.1``, spectral start,
    ``random_state = seed``: umap-learn then runs single-threaded and the same input and
    seed give the same coordinates (float32, as it computes them). Fewer than 10 points,
    or points that are all the same direction, give no coordinates and a note; so does an
    error inside umap-learn (the note names it), since the picture must not fail the eval.
    The warnings raised from umap-learn's own modules (it says that a seed disables
    parallelism) are silenced; others are not. umap-learn failing to import (numba
    broken, say) is such an error too. Raises ``ValueError`` for a bad seed or a zero,
    NaN or infinite row.
    """
    unit = _unit(_matrix(vectors, "vectors"), "vectors")
    seed = _seed(seed)
    n = unit.shape[0]
    if n < UMAP_MIN_POINTS:
        return _too_few(UMAP, n, UMAP_MIN_POINTS)
    if (unit == unit[0]).all():
        return Plane(UMAP, None, note=f"all {n} points have the same direction: nothing to spread")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"umap(\.|$)")
        try:
            import umap

            reducer = umap.UMAP(
                n_components=2,
                n_neighbors=umap_neighbours(n),
                min_dist=UMAP_MIN_DIST,
                metric="cosine",
                random_state=seed,
                n_jobs=1,
            )
            found = reducer.fit_transform(unit)
        except Exception as error:  # an optional picture; the note says what went wrong
            return Plane(UMAP, None, note=f"umap-learn failed: {type(error).__name__}: {error}")
    coordinates = np.asarray(found, dtype=np.float64)
    if coordinates.shape != (n, 2) or not np.isfinite(coordinates).all():
        return Plane(UMAP, None, note="umap-learn returned coordinates that are not finite")
    return Plane(UMAP, coordinates)


def umap_neighbours(n: int) -> int:
    """UMAP's ``n_neighbors`` for ``n`` points: 15, or every other point when fewer."""
    return max(1, min(UMAP_NEIGHBOURS, n - 1))


def _seed(seed: int) -> int:
    number = operator.index(seed)
    if not 0 <= number <= MAX_SEED:
        raise ValueError(f"seed must be an integer in [0, {MAX_SEED}], got {seed!r}")
    return number


def _quotas(counts: Sequence[int], limit: int) -> list[int]:
    """``limit`` shared equally over the groups of ``counts``: a group with fewer than its
    share gives what it leaves to the others, again equally (max-min fair); what does not
    divide evenly goes one each to the earliest groups still open."""
    quotas = [0] * len(counts)
    open_groups = [i for i, count in enumerate(counts) if count > 0]
    remaining = limit
    while open_groups:
        share = remaining // len(open_groups)
        full = [i for i in open_groups if counts[i] <= share]
        if not full:
            extra = remaining - share * len(open_groups)
            for place, i in enumerate(open_groups):
                quotas[i] = share + (1 if place < extra else 0)
            break
        for i in full:
            quotas[i] = counts[i]
            remaining -= counts[i]
        open_groups = [i for i in open_groups if i not in full]
    return quotas


def sample_indices(kinds: Sequence[str], limit: int, seed: int = 0) -> IntArray:
    """Ascending indices of the points to draw: all of them when there are at most
    ``limit``; otherwise an equal share of ``limit`` per kind (a kind with fewer points
    keeps them all and leaves the rest to the others; an uneven remainder goes to the
    earlier kinds of ``KINDS``, questions first), each kind's drawn uniformly without
    replacement by ``numpy.random.default_rng(seed)``, kind by kind. So 45 questions are
    all drawn beside 10,000 chunks. The same kinds, limit and seed give the same indices
    on any machine. A limit below 3 or a seed outside [0, 2**32 - 1] raises ``ValueError``.
    """
    limit = operator.index(limit)
    if limit < MIN_POINTS:
        raise ValueError(f"limit must be an integer >= {MIN_POINTS}, got {limit!r}")
    rng = np.random.default_rng(_seed(seed))
    if len(kinds) <= limit:
        return np.arange(len(kinds), dtype=np.int64)
    groups = [[i for i, kind in enumerate(kinds) if kind == name] for name in KINDS]
    chosen: list[int] = []
    for group, quota in zip(groups, _quotas([len(g) for g in groups], limit), strict=True):
        chosen += [group[i] for i in rng.choice(len(group), quota, replace=False)]
    return np.asarray(sorted(chosen), dtype=np.int64)


@dataclass(frozen=True)
class Coverage:
    """Each question's and answer's nearest chunk (an index into the points, -1 for a
    chunk or when there is none) and its cosine, the bound each kind is far below, and
    which points are far from every chunk."""

    nearest: tuple[int, ...]
    cosine: tuple[float | None, ...]
    bounds: dict[str, float]
    far: tuple[bool, ...]


def chunk_coverage(kinds: Sequence[str], vectors: npt.ArrayLike) -> Coverage:
    """How close each question and answer comes to a chunk.

    For every point that is not a chunk, its nearest chunk by cosine similarity
    (:func:`geometry.nearest_cosines`, over every chunk among the points). Then, per kind
    (questions apart from answers, whose cosines to chunks run higher), the bound is the
    mean of the kind's nearest cosines minus two standard deviations (population), and a
    point is *far from every chunk* when its nearest cosine is below that bound (by more
    than 1e-9). Without chunks, nothing is measured: every point is -1, ``None``, not far.
    """
    x = _matrix(vectors, "vectors")
    n = x.shape[0]
    chunks = np.asarray([i for i, kind in enumerate(kinds) if kind == CHUNK], dtype=np.int64)
    others = np.asarray([i for i, kind in enumerate(kinds) if kind != CHUNK], dtype=np.int64)
    nearest = np.full(n, -1, dtype=np.int64)
    cosine: list[float | None] = [None] * n
    far = [False] * n
    bounds: dict[str, float] = {}
    if chunks.size == 0 or others.size == 0:
        return Coverage(tuple(int(i) for i in nearest), tuple(cosine), bounds, tuple(far))
    found, cosines = nearest_cosines(x[others], x[chunks])
    nearest[others] = chunks[found]
    for place, index in enumerate(others):
        cosine[int(index)] = float(cosines[place])
    for kind in KINDS:
        members = [place for place, index in enumerate(others) if kinds[index] == kind]
        if not members:
            continue
        values = cosines[members]
        bounds[kind] = float(values.mean() - FAR_SIGMAS * values.std())
        for place in members:
            far[int(others[place])] = bool(cosines[place] < bounds[kind] - _SLACK)
    return Coverage(tuple(int(i) for i in nearest), tuple(cosine), bounds, tuple(far))


def _coordinates(plane: Plane, i: int) -> list[float] | None:
    if plane.coordinates is None:
        return None
    return [float(plane.coordinates[i, 0]), float(plane.coordinates[i, 1])]


def _method(plane: Plane, seed: int, n: int) -> dict[str, Any]:
    """What ``plane`` was drawn with, over ``n`` points."""
    if plane.method == PCA:
        return {"explained_variance": list(plane.explained_variance), "note": plane.note}
    return {
        "seed": seed,
        "n_neighbors": umap_neighbours(n),
        "min_dist": UMAP_MIN_DIST,
        "metric": "cosine",
        "version": umap_version(),
        "note": plane.note,
    }


def _count(points: Sequence[Point], indices: Sequence[int]) -> dict[str, int]:
    return {kind: sum(points[i].kind == kind for i in indices) for kind in KINDS}


def _nearest(points: Sequence[Point], coverage: Coverage, i: int) -> dict[str, Any]:
    chunk = coverage.nearest[i]
    return {
        "nearest_chunk": points[chunk].id if chunk >= 0 else None,
        "nearest_cosine": coverage.cosine[i],
    }


def _picture(
    points: Sequence[Point], limit: int, seed: int, umap: bool, note: str | None
) -> dict[str, Any]:
    """A picture's frame: what was asked for and how many points of each kind there are."""
    methods = [PCA, UMAP] if umap else [PCA]
    return {
        "seed": seed,
        "limit": limit,
        "note": note,
        "total": _count(points, range(len(points))),
        "drawn": _count(points, ()),
        "sampled": False,
        "methods": {
            method: _method(Plane(method, None, note=note), seed, len(points)) for method in methods
        },
        "far": {"sigmas": FAR_SIGMAS, "bounds": {}},
        "points": [],
    }


def eval_picture(
    points: Sequence[Point], embed: Embed, limit: int, seed: int, umap: bool
) -> dict[str, Any]:
    """The picture of an eval's points (``points.eval_points``), as the plain data the
    reports hold (docs/reports.md#json).

    The points to draw are chosen first (:func:`sample_indices`, at most ``limit``) and
    only their texts are embedded (``embed``, the run's embedding store); then, among
    them, each question's and answer's nearest chunk and the ones far from every chunk
    (:func:`chunk_coverage`), their PCA coordinates (:func:`pca_plane`) and, with
    ``umap``, their UMAP ones (:func:`umap_plane`, ``seed``). Each text is cut to 200
    characters.

    Never raises for the data: a plane that cannot be drawn has ``null`` coordinates and
    a ``note`` in ``methods``; no points, or vectors that cannot be projected (a zero
    vector, NaN), give no points and the picture's ``note`` says why. An error of ``embed``
    (the model, the cache) is raised, as in any metric that embeds.
    """
    if not points:
        return _picture(points, limit, seed, umap, "no question, answer or context text")
    drawn = [points[int(i)] for i in sample_indices([p.kind for p in points], limit, seed)]
    kinds = [point.kind for point in drawn]
    # An embedding failure is the run's (the model, the cache) and fails as it would in a
    # metric; only vectors that cannot be projected make a picture without points.
    vectors = np.asarray(embed([point.text for point in drawn]))
    try:
        x = _matrix(vectors, "vectors")
        coverage = chunk_coverage(kinds, x)
        planes = [pca_plane(x)]
        if umap:
            planes.append(umap_plane(x, seed))
    except ValueError as error:
        return _picture(points, limit, seed, umap, f"cannot project the embeddings: {error}")
    entries = []
    for i, point in enumerate(drawn):
        entry: dict[str, Any] = {"kind": point.kind, "id": point.id, "text": preview(point.text)}
        entry.update({plane.method: _coordinates(plane, i) for plane in planes})
        entry.update(_nearest(drawn, coverage, i), far=coverage.far[i])
        entries.append(entry)
    picture = _picture(points, limit, seed, umap, None)
    picture.update(
        drawn=_count(drawn, range(len(drawn))),
        sampled=len(drawn) < len(points),
        methods={plane.method: _method(plane, seed, len(drawn)) for plane in planes},
        far={"sigmas": FAR_SIGMAS, "bounds": coverage.bounds},
        points=entries,
    )
    return picture
