"""The picture of an eval's embedding space, through pytest, in this process: what the
dataset-level tests carry, what the JSON and HTML reports hold, the limit, and the same
coordinates on every run.

The rows are about two things (cats, rockets) and the packaged model embeds them; what
is checked is what the plugin does with the vectors (which points, in which order, joined
with which topics, outliers and statuses, projected as scikit-learn's PCA projects them),
never a number taken from the plugin's own output.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.project import Project, jsonl

REPOSITORY = Path(__file__).resolve().parents[2]
# Patched where the run will import it from: sys.modules (pytester drops the modules a run
# imported when the test ends, and a package attribute may still name an older copy).
PROJECTION = "pytest_ragmetrics.metrics.space.projection"

CATS = [
    ("Do cats sleep a lot?", "Cats sleep up to sixteen hours a day.", "cat-1",
     "Adult cats sleep between twelve and sixteen hours a day."),
    ("What do kittens eat?", "Kittens eat kitten food four times a day.", "cat-2",
     "Kittens need kitten food, four small meals a day."),
    ("Why do cats purr?", "Cats purr when content and sometimes when hurt.", "cat-3",
     "Purring is a sign of contentment, and sometimes of pain."),
    ("How long do cats live?", "Indoor cats live about fifteen years.", "cat-4",
     "Indoor cats often live fifteen years or more."),
]  # fmt: skip
ROCKETS = [
    ("How fast must a rocket go to reach orbit?", "About 7.8 km/s.", "rkt-1",
     "Low Earth orbit needs a speed of about 7.8 kilometres per second."),
    ("What fuel do rockets burn?", "Kerosene or liquid hydrogen with oxygen.", "rkt-2",
     "Rocket engines burn kerosene or liquid hydrogen with liquid oxygen."),
    ("Why do rockets have stages?", "To drop empty tanks on the way up.", "rkt-3",
     "Staging drops empty tanks and engines to save mass."),
    ("Who launched the first satellite?", "The Soviet Union, in 1957.", "rkt-4",
     "Sputnik 1, launched by the Soviet Union in 1957, was the first satellite."),
]  # fmt: skip


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i, (question, answer, doc_id, text) in enumerate([*CATS, *ROCKETS], start=1):
        contexts = [{"doc_id": doc_id, "text": text}]
        if i == 1:  # a second context, shared with no other row: the odd one out
            contexts.append({"doc_id": "tax-1", "text": "VAT returns are due each quarter."})
        rows.append(
            {"id": f"q{i}", "question": question, "answer": answer, "gold": [answer],
             "contexts": contexts}
        )  # fmt: skip
    rows[5]["gold"] = ["something else entirely"]  # q6 fails the row test: F1 0
    return rows


CORPUS = [doc_id for *_, doc_id, _ in [*CATS, *ROCKETS]] + ["tax-1"]
EVAL = f"""
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, f1):
    assert f1(row) > 0


def test_space(rows, embedding_space):
    embedding_space(rows, field="contexts", k=2)


def test_reach(rows, sources):
    sources(rows, corpus={CORPUS!r}, n_topics=2)
"""


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for this module's runs in a process: each text encoded once."""
    return tmp_path_factory.mktemp("projection-cache")


@pytest.fixture
def space(pytester: pytest.Pytester, shared_cache: Path) -> Project:
    project = Project(pytester)
    project.write("data/rows.jsonl", jsonl(_rows()))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", "[gates]\n")
    project.shared_cache = shared_cache  # type: ignore[attr-defined]
    return project


def _run(project: Project, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    cache = f"--ragmetrics-cache-dir={project.shared_cache}"  # type: ignore[attr-defined]
    result, report = project.run_json(cache, *args)
    result.assert_outcomes(passed=7 + 2, failed=1)  # q6's row test fails
    return result, report


def test_the_json_report_holds_the_picture_joined_with_the_run(space: Project) -> None:
    _, report = _run(space)
    (entry,) = report["evals"]
    picture = entry["projection"]
    # 8 questions, 8 answers, 9 chunks (each row's, and tax-1): every one drawn, in order.
    assert picture["total"] == picture["drawn"] == {"question": 8, "answer": 8, "chunk": 9}
    assert picture["sampled"] is False
    assert (picture["seed"], picture["limit"]) == (0, 3000)
    ids = [(p["kind"], p["id"]) for p in picture["points"]]
    rows = [f"q{i}" for i in range(1, 9)]
    chunks = ["cat-1", "tax-1", "cat-2", "cat-3", "cat-4", "rkt-1", "rkt-2", "rkt-3", "rkt-4"]
    assert ids == [
        *(("question", r) for r in rows),
        *(("answer", r) for r in rows),
        *(("chunk", c) for c in chunks),
    ]
    # Topics as the sources metric assigned them; statuses as the row test ended.
    details = entry["dataset_level"]["details"]
    topic_of = {q: t["topic_id"] for t in details["sources"]["topics"] for q in t["question_ids"]}
    for point in picture["points"]:
        expected = topic_of[point["id"]] if point["kind"] != "chunk" else None
        assert point["topic"] == expected
        status = ("failed" if point["id"] == "q6" else "passed") if expected is not None else None
        assert point["status"] == status
    outliers = {o["id"] for o in details["embedding_space"]["outliers"]}
    assert {p["id"] for p in picture["points"] if p["outlier"]} == outliers
    assert all(p["kind"] == "chunk" for p in picture["points"] if p["outlier"])
    assert picture["colours"] == ["kind", "topic", "status"]
    assert "_projection" not in details
    # Each question's nearest chunk is one of the chunks.
    assert {p["nearest_chunk"] for p in picture["points"] if p["kind"] != "chunk"} <= set(chunks)


def test_the_coordinates_are_scikit_learn_s_pca_of_the_texts(space: Project) -> None:
    decomposition = pytest.importorskip("sklearn.decomposition")
    from pytest_ragmetrics.embeddings.model import embedder_for

    _, report = _run(space)
    points = report["evals"][0]["projection"]["points"]
    vectors = embedder_for("all-MiniLM-L6-v2").encode([p["text"] for p in points])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    reference = decomposition.PCA(n_components=2, svd_solver="full").fit_transform(unit)
    # float32 vectors, encoded in other batches than the run's: equal to 1e-5.
    np.testing.assert_allclose([p["pca"] for p in points], reference, atol=1e-5)


def test_two_runs_draw_byte_identical_coordinates(space: Project) -> None:
    _, first = space.run_json("--ragmetrics-no-cache")  # each run encodes afresh
    _, second = space.run_json("--ragmetrics-no-cache")
    one, two = first["evals"][0]["projection"], second["evals"][0]["projection"]
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_the_limit_draws_a_sample_of_each_kind(space: Project) -> None:
    _, report = _run(space, "--ragmetrics-projection-limit=5", "--ragmetrics-html=r.html")
    picture = report["evals"][0]["projection"]
    # 8, 8 and 9 of 25 points, limit 5: 5 // 3 = 1 each, the two left to questions and
    # answers, the first kinds.
    assert picture["drawn"] == {"question": 2, "answer": 2, "chunk": 1}
    assert picture["total"] == {"question": 8, "answer": 8, "chunk": 9}
    assert picture["sampled"] is True
    assert len(picture["points"]) == 5
    (chunk,) = [p["id"] for p in picture["points"] if p["kind"] == "chunk"]
    assert {p["nearest_chunk"] for p in picture["points"] if p["kind"] != "chunk"} == {chunk}
    page = (space.path / "r.html").read_text(encoding="utf-8")
    assert "5 points drawn: 2 questions of 8, 2 answers of 8, 1 chunk of 9; a sample" in page


def test_a_run_without_html_or_json_makes_no_picture(
    space: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    projection = importlib.import_module(PROJECTION)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a picture was made for no report")

    monkeypatch.setattr(projection, "eval_picture", refuse)
    cache = f"--ragmetrics-cache-dir={space.shared_cache}"  # type: ignore[attr-defined]
    space.run(cache, "--ragmetrics-md=r.md").assert_outcomes(passed=9, failed=1)


def test_one_picture_per_eval_and_process_carried_by_each_dataset_test(
    space: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    projection = importlib.import_module(PROJECTION)

    calls: list[int] = []
    original = projection.eval_picture

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(projection, "eval_picture", counted)
    _, report = _run(space)
    assert len(calls) == 1
    assert len(report["evals"][0]["projection"]["points"]) == 25


def test_too_few_points_say_so_in_the_report(pytester: pytest.Pytester, shared_cache: Path) -> None:
    project = Project(pytester)
    row = {"id": "only", "contexts": [{"doc_id": "d1", "text": "A lone chunk of text."},
                                      {"doc_id": "d2", "text": "Another chunk."}]}  # fmt: skip
    project.write("data/rows.jsonl", jsonl([row]))
    project.write(
        "test_eval.py",
        'import pytest\n\npytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n\n\n'
        "def test_space(rows, embedding_space):\n"
        '    embedding_space(rows, field="contexts", k=1)\n',
    )
    project.write("thresholds.toml", "[gates]\n")
    result, report = project.run_json(
        f"--ragmetrics-cache-dir={shared_cache}", "--ragmetrics-html=r.html"
    )
    result.assert_outcomes(passed=1)
    picture = report["evals"][0]["projection"]
    assert picture["methods"]["pca"]["note"] == "2 point(s): too few to project; 3 are needed"
    assert [p["pca"] for p in picture["points"]] == [None, None]
    page = (project.path / "r.html").read_text(encoding="utf-8")
    assert "PCA projection not drawn: 2 point(s): too few to project; 3 are needed." in page
    assert '<svg class="scatter"' not in page


def test_the_bundled_sources_eval_shows_the_projection_and_topic_chart(
    pytester: pytest.Pytester, shared_cache: Path
) -> None:
    """evals/test_sources.py as shipped, with its data, gates and stored baseline."""
    project = Project(pytester)
    (project.path / "evals" / "data").mkdir(parents=True)
    shutil.copy(REPOSITORY / "evals" / "test_sources.py", project.path / "evals")
    for name in ("sessions.jsonl", "faq_cache.txt", "corpus.jsonl"):
        shutil.copy(REPOSITORY / "evals" / "data" / name, project.path / "evals" / "data")
    (project.path / "evals" / "__baselines__").mkdir()
    shutil.copy(
        REPOSITORY / "evals" / "__baselines__" / "test_sources.json",
        project.path / "evals" / "__baselines__",
    )
    gates = (REPOSITORY / "thresholds.toml").read_text(encoding="utf-8")
    table = gates[gates.index('[gates."evals/test_sources.py"]') :].split("\n\n")[0]
    project.write("thresholds.toml", table + "\n")
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", f"--ragmetrics-cache-dir={shared_cache}",
        "--ragmetrics-html=r.html", "--ragmetrics-json=r.json",
    )  # fmt: skip
    result.assert_outcomes(passed=3 + 5)  # three tests, five gates
    (entry,) = json.loads((project.path / "r.json").read_text(encoding="utf-8"))["evals"]
    # 45 rows with a question each and no answer; 87 distinct contexts.
    assert entry["projection"]["total"] == {"question": 45, "answer": 0, "chunk": 87}
    page = (project.path / "r.html").read_text(encoding="utf-8")
    assert 'id="map-0-0-pca"' in page
    assert len(re.findall(r'<(?:circle|rect) [^>]*data-p="', page)) == 45 + 87
    assert 'id="topics-0-0"' in page
    assert "Topic coverage (8 topics)" in page
    assert "Far from every chunk (" in page
    assert "Outliers of embedding_space (" in page


def test_the_umap_option_draws_umap_beside_pca_with_the_seed(
    space: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The option's way to the picture; UMAP itself (and its compilation, ~10 s a process)
    is tested once, in tests/unit/metrics/test_projection.py."""
    projection = importlib.import_module(PROJECTION)
    options = importlib.import_module("pytest_ragmetrics.plugin.options")

    seeds: list[int] = []

    def fake_umap(vectors: Any, seed: int = 0) -> Any:
        seeds.append(seed)
        count = len(vectors)
        return projection.Plane("umap", np.arange(2.0 * count).reshape(count, 2))

    monkeypatch.setattr(options, "umap_installed", lambda: True)
    monkeypatch.setattr(projection, "umap_plane", fake_umap)
    _, report = _run(space, "--ragmetrics-projection-umap", "--ragmetrics-projection-seed=7")
    picture = report["evals"][0]["projection"]
    assert seeds == [7]
    assert set(picture["methods"]) == {"pca", "umap"}
    assert picture["methods"]["umap"]["seed"] == 7
    assert [p["umap"] for p in picture["points"]] == [[2.0 * i, 2.0 * i + 1] for i in range(25)]
    assert all(len(p["pca"]) == 2 for p in picture["points"])


def test_a_metric_of_the_user_s_alone_draws_no_picture(space: Project) -> None:
    """A dataset metric declared in user code may not embed anything: it does not make
    the run embed every text for a picture."""
    space.write(
        "conftest.py",
        "from pytest_ragmetrics import dataset_metric\n\n\n"
        '@dataset_metric(requires=("answer",), stats=("rows",))\n'
        "def answer_count(rows):\n"
        '    """How many answers."""\n'
        '    return {"rows": len(rows)}\n',
    )
    space.write(
        "test_eval.py",
        'import pytest\n\npytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n\n\n'
        "def test_count(rows, answer_count):\n    answer_count(rows)\n",
    )
    result, report = space.run_json()
    result.assert_outcomes(passed=1)
    assert report["evals"][0]["metrics"]["answer_count"]["rows"] == 8
    assert "projection" not in report["evals"][0]


def test_the_outlier_count_is_a_gate(space: Project) -> None:
    space.write("thresholds.toml", '[gates]\n"embedding_space.outliers" = "<= 9"\n')
    cache = f"--ragmetrics-cache-dir={space.shared_cache}"  # type: ignore[attr-defined]
    result, report = space.run_json(cache, "-rA")
    result.assert_outcomes(passed=7 + 2 + 1, failed=1)  # the gate passed; q6 still fails
    result.stdout.fnmatch_lines(["*PASSED*test_eval.py::gate::embedding_space.outliers*"])
    details = report["evals"][0]["dataset_level"]["details"]["embedding_space"]
    assert report["evals"][0]["metrics"]["embedding_space"]["outliers"] == len(details["outliers"])


def _close(one: Any, two: Any, where: str = "projection") -> list[str]:
    """Where ``one`` and ``two`` differ: in structure or any non-float value, or in a
    float by more than 1e-6."""
    if isinstance(one, dict) and isinstance(two, dict):
        if one.keys() != two.keys():
            return [f"{where}: keys {sorted(one)} != {sorted(two)}"]
        return [d for key in one for d in _close(one[key], two[key], f"{where}.{key}")]
    if isinstance(one, list) and isinstance(two, list):
        if len(one) != len(two):
            return [f"{where}: {len(one)} items != {len(two)}"]
        return [
            d
            for i, pair in enumerate(zip(one, two, strict=True))
            for d in _close(*pair, f"{where}[{i}]")
        ]
    if isinstance(one, float) and isinstance(two, float):
        return [] if abs(one - two) <= 1e-6 else [f"{where}: {one} != {two}"]
    return [] if one == two else [f"{where}: {one!r} != {two!r}"]


def test_the_picture_is_the_same_with_xdist(space: Project) -> None:
    """Under -n 2 the eval's dataset-level tests may run on two workers, each drawing the
    picture from the texts it embeds: the controller's picture is the one drawn without
    xdist, every point, id, text, topic, status and flag, with coordinates and cosines
    to 1e-6 (texts the cache lacks are encoded in whatever batch the picture's test
    meets, and float32 embeddings move in their last bits with the batch; merging across
    workers is this test's subject)."""
    _, alone = space.run_json("--ragmetrics-no-cache")
    cache = f"--ragmetrics-cache-dir={space.path / 'xdist-cache'}"
    result = space.pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--ragmetrics-json", "xdist.json", cache
    )
    result.assert_outcomes(passed=7 + 2, failed=1)
    spread = json.loads((space.path / "xdist.json").read_text(encoding="utf-8"))
    one, two = alone["evals"][0]["projection"], spread["evals"][0]["projection"]
    assert _close(one, two) == []
