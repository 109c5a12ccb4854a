"""Pictures of an embedding space (pytest_ragmetrics.metrics.space.projection).

PCA is checked on point sets whose principal axes are known by hand, and against
scikit-learn's PCA (which fixes signs the same way); sampling and chunk coverage on small
hand-made sets. The UMAP checks need umap-learn (the dev extra has it): without it they
skip, unless ``CI`` is set, where they fail, as the browser tests do.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_space import Matrix, at

from pytest_ragmetrics.metrics.space.points import (
    ANSWER,
    CHUNK,
    QUESTION,
    Point,
    eval_points,
    preview,
)
from pytest_ragmetrics.metrics.space.projection import (
    UMAP_MIN_POINTS,
    chunk_coverage,
    eval_picture,
    pca_plane,
    sample_indices,
    umap_neighbours,
    umap_plane,
)

ROOT = Path(__file__).resolve().parents[3]


# An ellipse of unit vectors in the xy-plane of 3-d space, centred on 0: at 0°, 180°, ±30°,
# 180° ± 30°. Sum of cos² = 1 + 1 + 4 · 3/4 = 5, of sin² = 4 · 1/4 = 1, of cos·sin = 0:
# the axes are x (5/6 of the variance) and y (1/6), and each point's coordinates are
# (cos, sin) itself; the largest loading of each axis (1 on x, 1 on y) is positive.
ELLIPSE = (0, 180, 30, 150, 210, 330)


def ellipse() -> Matrix:
    flat = at(*ELLIPSE)
    return np.hstack([flat, np.zeros((len(ELLIPSE), 1))])


# -- PCA -----------------------------------------------------------------------------------


def test_pca_of_a_known_ellipse_by_hand() -> None:
    plane = pca_plane(ellipse())
    assert plane.method == "pca"
    assert plane.note is None
    assert plane.coordinates is not None
    np.testing.assert_allclose(plane.coordinates, at(*ELLIPSE), atol=1e-12)
    assert plane.explained_variance == pytest.approx((5 / 6, 1 / 6))


def test_pca_reads_directions_not_lengths() -> None:
    # Scaled rows are the same directions: the rows are made unit length first.
    lengths = np.array([[1.0], [2.0], [0.5], [3.0], [7.0], [0.1]])
    plane = pca_plane(ellipse() * lengths)
    assert plane.coordinates is not None
    np.testing.assert_allclose(plane.coordinates, at(*ELLIPSE), atol=1e-12)


def test_pca_signs_make_the_largest_loading_positive() -> None:
    # The mirrored ellipse (x -> -x) has the same axes up to sign; the sign rule puts the
    # axes' largest loadings positive, so coordinates are the mirrored points' own x.
    mirrored = ellipse() * np.array([-1.0, 1.0, 1.0])
    plane = pca_plane(mirrored)
    assert plane.coordinates is not None
    expected = at(*ELLIPSE) * np.array([-1.0, 1.0])
    np.testing.assert_allclose(plane.coordinates, expected, atol=1e-12)


def test_pca_equals_scikit_learn_on_random_embeddings() -> None:
    decomposition = pytest.importorskip("sklearn.decomposition")
    x = np.random.default_rng(7).standard_normal((60, 24))
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    reference = decomposition.PCA(n_components=2, svd_solver="full").fit(unit)
    plane = pca_plane(x)
    assert plane.coordinates is not None
    np.testing.assert_allclose(plane.coordinates, reference.transform(unit), atol=1e-12)
    assert plane.explained_variance == pytest.approx(tuple(reference.explained_variance_ratio_))


def test_points_on_a_line_get_a_flat_second_axis_and_a_note() -> None:
    # Unit vectors (1, 0, 0), (0, 1, 0) and (1, 0, 0) again: two places, one axis.
    plane = pca_plane([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
    assert plane.coordinates is not None
    assert plane.coordinates[:, 1].tolist() == [0.0, 0.0, 0.0]  # exactly, not noise
    # The axis is ±(1, -1, 0) / sqrt 2, whose two loadings tie in magnitude: the first
    # decides, so it is (1, -1, 0) / sqrt 2. The centred points are (1/3, -1/3, 0) twice
    # and (-2/3, 2/3, 0): coordinates sqrt(2)/3, -2 sqrt(2)/3, sqrt(2)/3.
    third = math.sqrt(2) / 3
    assert plane.coordinates[:, 0] == pytest.approx([third, -2 * third, third])
    assert plane.explained_variance == (1.0, 0.0)
    assert plane.note == "the points lie on a line: the second axis holds no variance"


@pytest.mark.parametrize(
    ("vectors", "note"),
    [
        ([[1.0, 0.0], [0.0, 1.0]], "2 point(s): too few to project; 3 are needed"),
        ([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], "all 3 points have the same direction"),
    ],
)
def test_what_cannot_be_projected_says_so_instead_of_drawing(vectors: Any, note: str) -> None:
    plane = pca_plane(vectors)
    assert plane.coordinates is None
    assert plane.note is not None
    assert plane.note.startswith(note)


@pytest.mark.parametrize(
    ("vectors", "message"),
    [([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], "zero"), ([[1.0, math.nan]] * 3, "NaN")],
)
def test_bad_vectors_raise(vectors: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pca_plane(vectors)


PCA_IN_A_PROCESS = """
import hashlib, numpy as np
from pytest_ragmetrics.metrics.space.projection import pca_plane
x = np.random.default_rng(3).standard_normal((700, 64))
print(hashlib.sha256(pca_plane(x).coordinates.tobytes()).hexdigest())
"""


def test_pca_coordinates_are_byte_identical_across_processes_and_threads() -> None:
    """Another process, with one BLAS thread, against this one with its default threads."""
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PCA_IN_A_PROCESS],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=environment,
    )
    x = np.random.default_rng(3).standard_normal((700, 64))
    here = pca_plane(x).coordinates
    assert here is not None
    assert done.stdout.strip() == hashlib.sha256(here.tobytes()).hexdigest()


# -- sampling ------------------------------------------------------------------------------


def test_everything_is_drawn_up_to_the_limit() -> None:
    kinds = [QUESTION] * 4 + [CHUNK] * 3
    assert sample_indices(kinds, 7).tolist() == list(range(7))
    assert sample_indices(kinds, 100).tolist() == list(range(7))


def test_a_sample_shares_the_limit_equally_between_the_kinds() -> None:
    # 60 questions, 30 answers, 10 chunks, limit 10: 10 // 3 = 3 each, no kind has fewer,
    # and the one left over goes to the first kind, questions: 4, 3, 3.
    kinds = [QUESTION] * 60 + [ANSWER] * 30 + [CHUNK] * 10
    drawn = sample_indices(kinds, 10, seed=5)
    assert drawn.tolist() == sorted(set(drawn.tolist()))
    counts = [sum(kinds[i] == kind for i in drawn) for kind in (QUESTION, ANSWER, CHUNK)]
    assert counts == [4, 3, 3]


def test_a_small_kind_is_drawn_whole_and_leaves_the_rest_to_the_others() -> None:
    # 5 questions, 1000 answers, 20 chunks, limit 30: a share is 10, so all 5 questions;
    # 25 left for two kinds, 12 each, and the odd one to answers (before chunks): 5, 13, 12.
    kinds = [QUESTION] * 5 + [ANSWER] * 1000 + [CHUNK] * 20
    drawn = sample_indices(kinds, 30, seed=1).tolist()
    assert [i for i in drawn if i < 5] == [0, 1, 2, 3, 4]
    counts = [sum(kinds[i] == kind for i in drawn) for kind in (QUESTION, ANSWER, CHUNK)]
    assert counts == [5, 13, 12]


def test_an_uneven_remainder_goes_to_questions_first() -> None:
    # 45 questions and 87 chunks, limit 3: 3 // 2 = 1 each, the one left to questions.
    kinds = [QUESTION] * 45 + [CHUNK] * 87
    drawn = sample_indices(kinds, 3)
    assert [kinds[i] for i in drawn] == [QUESTION, QUESTION, CHUNK]


def test_the_sample_is_the_seed_s() -> None:
    kinds = [QUESTION] * 500 + [CHUNK] * 500
    first = sample_indices(kinds, 50, seed=11).tolist()
    assert sample_indices(kinds, 50, seed=11).tolist() == first
    assert sample_indices(kinds, 50, seed=12).tolist() != first


@pytest.mark.parametrize(("limit", "seed"), [(2, 0), (0, 0), (3, -1), (3, 2**32), (30, -1)])
def test_sampling_rejects_a_bad_limit_or_seed(limit: int, seed: int) -> None:
    with pytest.raises(ValueError, match=r"(limit|seed) must be"):
        sample_indices([QUESTION] * 10, limit, seed)


# -- chunk coverage ------------------------------------------------------------------------


def test_chunk_coverage_by_hand() -> None:
    # Chunks at 0° and 90°; questions at 0°, 90°, 0°, 90°, 0° (cosine 1 to their chunk)
    # and at 240° (nearest chunk 0°, cos 240° = -0.5; cos 150° = -0.87 to the other).
    # Mean (5 - 0.5) / 6 = 0.75; population std 1.5 sqrt(5) / 6; bound 0.75 - 2 std
    # ≈ -0.368: only the question at 240° is below it. The answer at 45° is alone of its
    # kind: its bound is its own cosine, and it is not below it.
    kinds = [CHUNK, CHUNK, *[QUESTION] * 6, ANSWER]
    vectors = np.vstack([at(0, 90), at(0, 90, 0, 90, 0, 240), at(45)])
    coverage = chunk_coverage(kinds, vectors)
    assert coverage.nearest == (-1, -1, 0, 1, 0, 1, 0, 0, 0)
    assert coverage.cosine[:2] == (None, None)
    assert coverage.cosine[2:8] == pytest.approx([1, 1, 1, 1, 1, -0.5])
    assert coverage.bounds[QUESTION] == pytest.approx(0.75 - 2 * 1.5 * math.sqrt(5) / 6)
    assert coverage.bounds[ANSWER] == pytest.approx(math.cos(math.radians(45)))
    assert coverage.far == (False,) * 7 + (True, False)


def test_without_chunks_nothing_is_measured() -> None:
    coverage = chunk_coverage([QUESTION] * 3, at(0, 10, 20))
    assert coverage.bounds == {}
    assert coverage.far == (False, False, False)
    assert coverage.nearest == (-1, -1, -1)


# -- the picture of an eval ----------------------------------------------------------------


def _points(questions: int, chunks: int) -> list[Point]:
    return [Point(QUESTION, f"q{i}", f"question {i}") for i in range(questions)] + [
        Point(CHUNK, f"d{i}", f"chunk {i}") for i in range(chunks)
    ]


class Embedder:
    """Each text's vector from a table, counting the texts asked for."""

    def __init__(self, points: list[Point], vectors: Any) -> None:
        rows = np.asarray(vectors, dtype=np.float32)
        self.table = {point.text: rows[i] for i, point in enumerate(points)}
        self.asked: list[str] = []

    def __call__(self, texts: Any) -> Any:
        self.asked += list(texts)
        return np.stack([self.table[text] for text in texts])


def test_an_eval_picture_is_plain_data_with_every_point_drawn() -> None:
    points = _points(6, 2)
    vectors = np.vstack([at(0, 90, 0, 90, 0, 240), at(0, 90)])
    picture = eval_picture(points, Embedder(points, vectors), limit=100, seed=4, umap=False)
    assert json.loads(json.dumps(picture)) == picture  # what travels from an xdist worker
    assert (picture["seed"], picture["limit"], picture["note"]) == (4, 100, None)
    assert picture["total"] == picture["drawn"] == {QUESTION: 6, ANSWER: 0, CHUNK: 2}
    assert picture["sampled"] is False
    assert [p["id"] for p in picture["points"]] == [p.id for p in points]
    assert set(picture["methods"]) == {"pca"}
    assert all(len(p["pca"]) == 2 for p in picture["points"])
    # As in test_chunk_coverage_by_hand: the question at 240° is far, nearest chunk d0.
    assert [p["far"] for p in picture["points"]] == [False] * 5 + [True] + [False] * 2
    far = picture["points"][5]
    assert (far["nearest_chunk"], far["nearest_cosine"]) == ("d0", pytest.approx(-0.5))
    bound = picture["far"]["bounds"][QUESTION]
    assert bound == pytest.approx(0.75 - 2 * 1.5 * math.sqrt(5) / 6, abs=1e-6)  # float32
    assert picture["points"][0]["text"] == "question 0"


def test_a_sampled_picture_embeds_and_measures_only_the_drawn_points() -> None:
    points = _points(30, 40)
    vectors = np.random.default_rng(0).standard_normal((70, 8))
    embedder = Embedder(points, vectors)
    picture = eval_picture(points, embedder, limit=10, seed=0, umap=False)
    assert picture["sampled"] is True
    assert picture["total"] == {QUESTION: 30, ANSWER: 0, CHUNK: 40}
    assert picture["drawn"] == {QUESTION: 5, ANSWER: 0, CHUNK: 5}
    assert embedder.asked == [p["text"] for p in picture["points"]]  # ten texts, no more
    drawn_chunks = {p["id"] for p in picture["points"] if p["kind"] == CHUNK}
    nearest = {p["nearest_chunk"] for p in picture["points"] if p["kind"] == QUESTION}
    assert nearest <= drawn_chunks


@pytest.mark.parametrize(
    ("points", "vectors", "note"),
    [
        ([], np.zeros((0, 2)), "no question, answer or context text"),
        (_points(2, 1), [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], "cannot project the embeddings"),
    ],
)
def test_a_picture_that_cannot_be_made_says_why(
    points: list[Point], vectors: Any, note: str
) -> None:
    picture = eval_picture(points, Embedder(points, vectors), limit=10, seed=0, umap=False)
    assert picture["note"].startswith(note)
    assert picture["points"] == []
    assert picture["methods"]["pca"]["note"] == picture["note"]


def test_too_few_points_keep_their_coverage_and_say_why_there_is_no_plane() -> None:
    points = _points(1, 1)
    picture = eval_picture(points, Embedder(points, at(0, 10)), limit=10, seed=0, umap=False)
    assert picture["note"] is None
    assert picture["methods"]["pca"]["note"] == "2 point(s): too few to project; 3 are needed"
    assert [p["pca"] for p in picture["points"]] == [None, None]
    assert picture["points"][0]["nearest_chunk"] == "d0"


def test_eval_points_take_questions_answers_and_each_chunk_once() -> None:
    from pytest_ragmetrics.data.dataset import Row

    def row(index: int, **fields: Any) -> Row:
        return Row(f"r{index}", "data.jsonl", index, index - 1, fields)

    again = [{"doc_id": "d1", "text": "T1 again"}, {"doc_id": "d2", "text": "T2"}]
    rows = [
        row(1, question="Q1", answer="A1", contexts=[{"doc_id": "d1", "text": "T1"}]),
        row(2, question="Q2", contexts=again),
        row(3, answer="  ", contexts=[]),  # blank: no point
    ]
    points = eval_points(rows)
    assert [(p.kind, p.id, p.text) for p in points] == [
        (QUESTION, "r1", "Q1"),
        (QUESTION, "r2", "Q2"),
        (ANSWER, "r1", "A1"),
        (CHUNK, "d1", "T1"),
        (CHUNK, "d2", "T2"),
    ]


def test_a_doc_id_s_first_text_decides_its_point_as_in_embedding_space() -> None:
    """embedding_space measures each doc id's first text (``field_items``): a blank first
    text leaves the chunk without a point rather than drawing a later one it never
    measured."""
    from pytest_ragmetrics.data.dataset import Row
    from pytest_ragmetrics.metrics.space.embedding import field_items

    first = [{"doc_id": "d1", "text": " "}, {"doc_id": "d2", "text": "T2"}]
    later = [{"doc_id": "d1", "text": "T1 later"}, {"doc_id": "d2", "text": "T2 later"}]
    rows = [
        Row("r1", "d.jsonl", 1, 0, {"contexts": first}),
        Row("r2", "d.jsonl", 2, 1, {"contexts": later}),
    ]
    assert [(p.id, p.text) for p in eval_points(rows)] == [("d2", "T2")]
    assert ("d2", "T2") in field_items(rows, "contexts", "embedding_space")


def test_an_embedding_failure_is_raised_not_drawn_around() -> None:
    class Broken(RuntimeError):
        pass

    def embed(texts: Any) -> Any:
        raise Broken("the model is gone")

    with pytest.raises(Broken, match="the model is gone"):
        eval_picture(_points(3, 3), embed, limit=10, seed=0, umap=False)


def test_umap_records_the_neighbours_it_runs_with() -> None:
    """``n_neighbors`` is 15, or every other point when there are fewer: the JSON says
    the number UMAP ran with, not the default."""
    assert [umap_neighbours(n) for n in (2, 10, 12, 16, 500)] == [1, 9, 11, 15, 15]
    points = _points(3, 3)  # too few for UMAP: no run, the record all the same
    picture = eval_picture(points, Embedder(points, at(0, 10, 20, 30, 40, 50)), 10, 0, True)
    assert picture["methods"]["umap"]["n_neighbors"] == 5
    assert picture["methods"]["umap"]["note"] == "6 point(s): too few to project; 10 are needed"


def test_umap_failing_to_import_is_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """umap-learn installed but broken (its numba, say): the picture keeps its PCA plane
    and says why there is no UMAP one."""
    monkeypatch.setitem(sys.modules, "umap", None)  # import umap raises ImportError
    plane = umap_plane(at(*range(0, 120, 10)), seed=0)
    assert plane.coordinates is None
    assert plane.note is not None
    assert plane.note.startswith("umap-learn failed: ModuleNotFoundError: import of umap halted")


def test_preview_cuts_long_texts() -> None:
    assert preview("short") == "short"
    long = "word " * 100
    cut = preview(long)
    assert len(cut) <= 200
    assert cut.endswith("…")
    assert long.startswith(cut[:-1])


# -- UMAP ----------------------------------------------------------------------------------


def umap_or_skip() -> None:
    """Skip without umap-learn; fail instead under CI, which installs the dev extra."""
    try:
        import umap  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("umap-learn is not installed, and CI must run the UMAP tests")
        pytest.skip("umap-learn is not installed")


@pytest.mark.slow  # umap-learn's numba compilation, about 10 s a process
def test_umap_is_deterministic_for_a_seed_and_keeps_clusters_apart() -> None:
    """One test, so the process pays umap-learn's compilation once."""
    umap_or_skip()
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((3, 16)) * 4
    clusters = [centre + rng.standard_normal((12, 16)) * 0.3 for centre in centres]
    x = np.vstack(clusters).astype(np.float32)  # as an embedding model gives them
    first, again = umap_plane(x, seed=3), umap_plane(x, seed=3)
    assert first.coordinates is not None
    assert again.coordinates is not None
    assert first.coordinates.tobytes() == again.coordinates.tobytes()
    assert first.note is None
    assert first.explained_variance == ()
    # Each point is nearer the centre of its own cluster's picture than another's.
    places = first.coordinates.reshape(3, 12, 2)
    means = places.mean(axis=1)
    for cluster in range(3):
        distances = np.linalg.norm(places[cluster][:, None, :] - means[None, :, :], axis=2)
        assert (distances.argmin(axis=1) == cluster).all()
    few = umap_plane(x[: UMAP_MIN_POINTS - 1], seed=3)
    assert few.coordinates is None
    assert few.note == f"{UMAP_MIN_POINTS - 1} point(s): too few to project; 10 are needed"
    points = _points(36, 0)
    picture = eval_picture(points, Embedder(points, x), limit=100, seed=3, umap=True)
    assert [p["umap"] for p in picture["points"]] == first.coordinates.tolist()
    assert picture["methods"]["umap"]["seed"] == 3
    assert picture["methods"]["umap"]["version"]
