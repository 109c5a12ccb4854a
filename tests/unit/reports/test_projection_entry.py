"""The report document's ``projection``: the picture a dataset-level test carried, with
each point's outlier flag, topic and row status joined in from the rest of the run.

Every expected value is read off the hand-made payloads below.
"""

from __future__ import annotations

from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics.space.points import PICTURE_DETAIL
from pytest_ragmetrics.reports.document import report_document
from pytest_ragmetrics.results.summary import DatasetPayload, EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_s.py", "evals/test_s.py", "evals/data/s.jsonl", "0" * 64, 3)


def _point(kind: str, point_id: str, x: float) -> dict[str, Any]:
    return {
        "kind": kind,
        "id": point_id,
        "text": f"{kind} {point_id}",
        "pca": [x, -x],
        "nearest_chunk": None if kind == "chunk" else "d1",
        "nearest_cosine": None if kind == "chunk" else 0.5,
        "far": point_id == "r3",
    }


PICTURE: dict[str, Any] = {
    "seed": 0,
    "limit": 3000,
    "note": None,
    "total": {"question": 3, "answer": 1, "chunk": 2},
    "drawn": {"question": 3, "answer": 1, "chunk": 2},
    "sampled": False,
    "methods": {"pca": {"explained_variance": [0.6, 0.3], "note": None}},
    "far": {"sigmas": 2.0, "bounds": {"question": 0.4}},
    "points": [
        _point("question", "r1", 0.1),
        _point("question", "r2", 0.2),
        _point("question", "r3", 0.3),
        _point("answer", "r1", 0.4),
        _point("chunk", "d1", 0.5),
        _point("chunk", "r2", 0.6),  # a chunk whose doc id is also a row id
    ],
}
# r1 and r2 in topic 0, r3 in topic 1; the outlier of the contexts is chunk d1 and the
# question r2 is not one (the outliers are of contexts, not questions).
SOURCES = {
    "topics": [
        {"topic_id": 0, "question_count": 2, "unique_chunks": 3, "unique_urls": 0,
         "question_ids": ["r1", "r2"], "examples": ["question r1", "question r2"]},
        {"topic_id": 1, "question_count": 1, "unique_chunks": 1, "unique_urls": 0,
         "question_ids": ["r3"], "examples": ["question r3"]},
    ],
    "unknown_chunks": [],
}  # fmt: skip
SPACE = {"field": "contexts", "outlier_bound": 0.7, "outliers": [{"id": "d1"}, {"id": "r2"}]}


def _entry(*payloads: Any) -> dict[str, Any]:
    (summary,) = summarize(list(payloads), Settings())
    (entry,) = report_document([summary], [], Settings(), "0.1.0")["evals"]
    return entry


def _dataset(test: str, details: dict[str, Any]) -> DatasetPayload:
    return DatasetPayload(INFO, test, (test,), 3, {}, details, None, False)


def test_points_get_their_topic_outlier_flag_and_row_status() -> None:
    entry = _entry(
        _dataset("t.py::test_space", {"embedding_space": SPACE, PICTURE_DETAIL: PICTURE}),
        _dataset("t.py::test_reach", {"sources": SOURCES, PICTURE_DETAIL: PICTURE}),
        RowPayload(INFO, "r1", 0, {"f1": 1.0}, {}, None, test="t.py::test_rows"),
        RowPayload(INFO, "r3", 2, {"f1": 0.0}, {}, None, test="t.py::test_rows", failed=True),
    )
    joined = {(p["kind"], p["id"]): p for p in entry["projection"]["points"]}
    assert {key: p["topic"] for key, p in joined.items()} == {
        ("question", "r1"): 0,
        ("question", "r2"): 0,
        ("question", "r3"): 1,
        ("answer", "r1"): 0,  # the answer of a row in topic 0
        ("chunk", "d1"): None,
        ("chunk", "r2"): None,  # a chunk has no topic, whatever its id
    }
    assert [key for key, p in joined.items() if p["outlier"]] == [("chunk", "d1"), ("chunk", "r2")]
    assert {key: p["status"] for key, p in joined.items()} == {
        ("question", "r1"): "passed",
        ("question", "r2"): None,  # no row test ran r2
        ("question", "r3"): "failed",
        ("answer", "r1"): "passed",
        ("chunk", "d1"): None,
        ("chunk", "r2"): None,
    }
    assert entry["projection"]["colours"] == ["kind", "topic", "status"]
    assert entry["projection"]["points"][0]["pca"] == [0.1, -0.1]  # the rest as carried


def test_the_picture_leaves_the_dataset_level_details() -> None:
    entry = _entry(
        _dataset("t.py::test_space", {"embedding_space": SPACE, PICTURE_DETAIL: PICTURE})
    )
    assert set(entry["dataset_level"]["details"]) == {"embedding_space"}
    assert entry["projection"]["colours"] == ["kind"]  # no topics, no row tests
    assert not any(p["outlier"] for p in entry["projection"]["points"][:4])


def test_an_eval_that_drew_nothing_has_no_projection_key() -> None:
    entry = _entry(_dataset("t.py::test_space", {"embedding_space": SPACE}))
    assert "projection" not in entry
    plain = _entry(RowPayload(INFO, "r1", 0, {"f1": 1.0}, {}, None))
    assert "projection" not in plain


def test_outliers_of_questions_mark_question_points() -> None:
    questions = {"field": "question", "outliers": [{"id": "r2"}]}
    entry = _entry(_dataset("t.py::t", {"embedding_space": questions, PICTURE_DETAIL: PICTURE}))
    marked = [(p["kind"], p["id"]) for p in entry["projection"]["points"] if p["outlier"]]
    assert marked == [("question", "r2")]


def test_a_picture_travels_from_an_xdist_worker_unchanged() -> None:
    payload = _dataset("t.py::test_space", {"embedding_space": SPACE, PICTURE_DETAIL: PICTURE})
    wire = payload.to_dict()
    assert DatasetPayload.from_dict(wire) == payload
