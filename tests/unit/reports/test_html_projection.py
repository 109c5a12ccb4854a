"""The picture of an eval's embedding space in the HTML report, on a hand-built document:
which points are drawn where, what each says, the lists beside the plot, the topic
coverage, escaping, and what is shown when nothing can be drawn.

``projection_document()`` is also the page the browser tests hover over. Positions are
worked out by hand from the plot's box (520 x 400, 22 left and below for the labels, an
8 inset): the inner area is 482 x 362.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.html.projection import LISTED, point_title, weakest_first

SCRIPT = "<script>alert(1)</script>"
NO_TEXT = "no question, answer or context text"
IMG = "<img src=x onerror=alert(1)>"


def _point(kind: str, point_id: str, xy: list[float], **known: Any) -> dict[str, Any]:
    point: dict[str, Any] = {
        "kind": kind,
        "id": point_id,
        "text": f"the {kind} {point_id}",
        "pca": xy,
        "nearest_chunk": None,
        "nearest_cosine": None,
        "far": False,
        "outlier": False,
        "topic": None,
        "status": None,
    }
    point.update(known)
    return point


# PCA coordinates spanning x 0..2 and y 0..1: the scale is min(482 / 2, 362 / 1) = 241,
# the centre (1, 0.5) goes to (22 + 8 + 241, 8 + 181) = (271, 189), so
#   (0, 0) -> (30, 309.5)   (2, 0) -> (512, 309.5)   (0, 1) -> (30, 68.5)
#   (1, 0.5) -> (271, 189)  (2, 1) -> (512, 68.5)    (1, 0) -> (271, 309.5)
PLACES = {
    "q1": (30.0, 309.5),
    "q2": (512.0, 309.5),
    "q3": (30.0, 68.5),
    "a1": (271.0, 189.0),
    "d1": (512.0, 68.5),
    "d2": (271.0, 309.5),
}
TOPICS = [
    {"topic_id": 0, "question_count": 2, "unique_chunks": 6, "unique_urls": 2,
     "question_ids": ["q1", "q3"], "examples": ["the question q1", "the question q3"]},
    {"topic_id": 1, "question_count": 4, "unique_chunks": 2, "unique_urls": 1,
     "question_ids": ["q2"], "examples": ["the question q2"]},
    {"topic_id": 2, "question_count": 0, "unique_chunks": 0, "unique_urls": 0,
     "question_ids": [], "examples": []},
    {"topic_id": 3, "question_count": 2, "unique_chunks": 1, "unique_urls": 1,
     "question_ids": [], "examples": []},
]  # fmt: skip


def projection() -> dict[str, Any]:
    near = {"nearest_chunk": "d2", "nearest_cosine": 0.8}
    return {
        "seed": 0,
        "limit": 3000,
        "note": None,
        "total": {"question": 3, "answer": 1, "chunk": 2},
        "drawn": {"question": 3, "answer": 1, "chunk": 2},
        "sampled": False,
        "methods": {"pca": {"explained_variance": [0.625, 0.25], "note": None}},
        "far": {"sigmas": 2.0, "bounds": {"question": 0.3, "answer": 0.5}},
        "colours": ["kind", "topic", "status"],
        "points": [
            _point("question", "q1", [0.0, 0.0], topic=0, status="passed", **near),
            _point(
                "question",
                "q2",
                [2.0, 0.0],
                topic=1,
                status="failed",
                far=True,
                nearest_chunk="d1",
                nearest_cosine=0.123,
            ),
            _point("question", "q3", [0.0, 1.0], topic=0, **near),
            _point("answer", "a1", [1.0, 0.5], topic=0, status="passed", **near),
            _point("chunk", "d1", [2.0, 1.0], outlier=True),
            _point("chunk", "d2", [1.0, 0.0]),
        ],
    }


def projection_document() -> dict[str, Any]:
    """A report of one dataset-level eval with a picture, its outliers and its topics."""
    details = {
        "embedding_space": {
            "field": "contexts",
            "outlier_bound": 0.7,
            "outliers": [{"id": "d1", "nn_distance": 0.75, "text": "the chunk d1"}],
            "summary": "…",
        },
        "sources": {"topics": copy.deepcopy(TOPICS), "unknown_chunks": []},
    }
    entry = {
        "name": "evals/test_space.py",
        "label": "evals/test_space.py",
        "system": None,
        "compare_to": None,
        "module": "evals/test_space.py",
        "dataset": "evals/data/space.jsonl",
        "dataset_sha256": "0" * 64,
        "dataset_rows": 3,
        "n": 3,
        "errors": 0,
        "metrics": {"embedding_space": {"outliers": 1.0}},
        "breakdowns": {},
        "signatures": {},
        "dataset_level": {"details": details, "errors": []},
        "gates": [],
        "rows": [],
        "warnings": [],
        "projection": projection(),
    }
    return {"schema_version": 1, "plugin_version": "0.1.0", "settings": {}, "evals": [entry]}


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(projection_document())


def _shapes(page: str) -> dict[str, tuple[str, dict[str, str]]]:
    """data-p -> (element, attributes) of every point drawn."""
    found = {}
    for element, attributes in re.findall(r"<(circle|rect) ([^>]*data-p=[^>]*)>", page):
        pairs = dict(re.findall(r'([\w-]+)="([^"]*)"', attributes))
        found[pairs["data-p"]] = (element, pairs)
    return found


def test_each_point_is_drawn_where_its_coordinates_say(page: str) -> None:
    shapes = _shapes(page)
    ids = ["q1", "q2", "q3", "a1", "d1", "d2"]
    assert sorted(shapes) == [str(p) for p in range(6)]
    for p, point_id in enumerate(ids):
        element, attributes = shapes[str(p)]
        x, y = PLACES[point_id]
        if point_id.startswith("d"):  # a chunk: a 5.2 square centred on its place
            assert element == "rect"
            assert (float(attributes["x"]), float(attributes["y"])) == (x - 2.6, y - 2.6)
        else:
            assert element == "circle"
            assert (float(attributes["cx"]), float(attributes["cy"])) == (x, y)


def test_each_point_carries_its_kind_topic_and_status_as_classes(page: str) -> None:
    classes = {p: attributes["class"] for p, (_, attributes) in _shapes(page).items()}
    assert classes == {
        "0": "pt q t0 sp",
        "1": "pt q t1 sf",
        "2": "pt q t0",
        "3": "pt a t0 sp",
        "4": "pt c",
        "5": "pt c",
    }


def test_chunks_are_drawn_first_and_questions_last(page: str) -> None:
    order = re.findall(r'<(?:circle|rect) [^>]*data-p="(\d)"', page)
    assert order == ["4", "5", "3", "0", "1", "2"]


def test_a_point_s_title_says_what_it_is_and_its_text() -> None:
    point = projection()["points"][1]
    assert point_title(point) == (
        "question q2 · topic 1 · row failed · far from every chunk · nearest chunk d1 "
        "(cosine 0.123)\nthe question q2"
    )
    assert point_title(projection()["points"][4]) == "chunk d1 · outlier\nthe chunk d1"


def test_the_outlier_and_the_far_point_are_ringed(page: str) -> None:
    plot = re.search(r'<svg class="scatter".*?</svg>', page, re.DOTALL)
    assert plot is not None
    rings = re.findall(
        r'<circle class="ring (\w+)" cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"/>', plot.group(0)
    )
    assert rings == [("far", "512.0", "309.5", "9.5"), ("out", "512.0", "68.5", "7")]


def test_the_axes_name_the_principal_components_and_their_variance(page: str) -> None:
    assert "PC1 (62.5 % of variance)" in page
    assert "PC2 (25.0 %)" in page


def test_the_lists_beside_the_plot_name_their_points(page: str) -> None:
    far = re.search(r"<h4>Far from every chunk \(1\)</h4>.*?</table>", page, re.DOTALL)
    assert far is not None
    assert "0.300 for questions, 0.500 for answers" in far.group(0)
    assert re.findall(r'<tr data-p="(\d)">(.*?)</tr>', far.group(0)) == [
        ("1", '<td class="nw">question</td><td class="nw">q2</td><td class="nw">d1</td>'
              '<td class="nw">0.123</td><td>the question q2</td>'),
    ]  # fmt: skip
    outliers = re.search(r"<h4>Outliers of embedding_space \(1\)</h4>.*?</table>", page, re.DOTALL)
    assert outliers is not None
    assert "= 0.700" in outliers.group(0)
    assert '<tr data-p="4"><td class="nw">d1</td><td class="nw">0.750</td>' in outliers.group(0)


def test_long_lists_show_the_least_covered_first_and_count_the_rest() -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    picture["points"] = [
        _point("question", f"q{i}", [i, i % 2], far=True, nearest_chunk="d", nearest_cosine=i / 100)
        for i in range(LISTED + 3, 0, -1)
    ]
    page = render_html(document)
    assert f"Far from every chunk ({LISTED + 3})" in page
    assert "and 3 more in the JSON report." in page
    listed = re.findall(
        r'<tr data-p="(\d+)"><td class="nw">question</td><td class="nw">(q\d+)<', page
    )
    # q1 (cosine 0.01) is the last point drawn and the first listed; q20 the last listed.
    assert listed[0] == (str(LISTED + 2), "q1")
    assert [point_id for _, point_id in listed] == [f"q{i}" for i in range(1, LISTED + 1)]


def test_the_colour_menu_offers_what_the_run_knows(page: str) -> None:
    menu = re.search(r'<label class="colour-by" hidden>.*?</label>', page)
    assert menu is not None
    assert re.findall(r'<option value="(\w+)">', menu.group(0)) == ["kind", "topic", "status"]
    assert '<div class="pmap by-kind">' in page
    assert re.findall(r'<p class="legend (\w+)">', page) == ["kind", "topic", "status"]
    only_kind = projection_document()
    only_kind["evals"][0]["projection"]["colours"] = ["kind"]
    assert 'class="colour-by"' not in render_html(only_kind)


def test_the_summary_counts_each_kind() -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    picture.update(total={"question": 30, "answer": 0, "chunk": 2}, sampled=True, limit=5)
    picture["drawn"] = {"question": 3, "answer": 0, "chunk": 2}
    page = render_html(document)
    assert (
        "5 points drawn: 3 questions of 30, 2 chunks; a sample (seed 0) of at most 5 points "
        "shared equally between the kinds (--ragmetrics-projection-limit); the lists below "
        "are of the drawn points. The rows have no answers."
    ) in page


def test_topics_are_listed_weakest_first_and_drawn_as_bars(page: str) -> None:
    # Distinct chunks per question: topic 0 6/2 = 3, topic 1 2/4 = 0.5, topic 3 1/2 = 0.5,
    # topic 2 has no question. 1 and 3 tie at 0.5: more questions first (1), then 3, 0, 2.
    assert [t["topic_id"] for t in weakest_first(TOPICS)] == [1, 3, 0, 2]
    table = re.search(r'<table class="topics num">.*?</table>', page, re.DOTALL)
    assert table is not None
    lines = re.findall(
        r"<tr><td>(\d)</td><td>(\d)</td><td>(\d)</td><td>([\d.—]+)</td>", table.group(0)
    )
    assert lines == [
        ("1", "4", "2", "0.50"),
        ("3", "2", "1", "0.50"),
        ("0", "2", "6", "3.00"),
        ("2", "0", "0", "—"),
    ]
    assert "the question q1 · the question q3" in table.group(0)
    assert 'id="topics-0-0"' in page
    assert "Topic coverage (4 topics)" in page


def test_document_text_is_escaped_everywhere_in_the_picture() -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    for point in picture["points"]:
        point["text"] = f"{SCRIPT}{IMG}"
        point["id"] = f'"{IMG}'
    picture["points"][1].update(nearest_chunk=SCRIPT)
    document["evals"][0]["dataset_level"]["details"]["sources"]["topics"][0]["examples"] = [IMG]
    page = render_html(document)
    assert SCRIPT not in page
    assert IMG not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert len(re.findall(r"<script>", page)) == 1  # the page's own


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        (
            {"note": NO_TEXT, "points": [],
             "methods": {"pca": {"explained_variance": [], "note": NO_TEXT}}},
            f"PCA projection not drawn: {NO_TEXT}.",
        ),
        (
            {"points": [_point("chunk", "d1", None), _point("chunk", "d2", None)],  # type: ignore[arg-type]
             "methods": {"pca": {"explained_variance": [0.0, 0.0],
                                 "note": "2 point(s): too few to project; 3 are needed"}}},
            "PCA projection not drawn: 2 point(s): too few to project; 3 are needed.",
        ),
    ],
)  # fmt: skip
def test_a_picture_that_cannot_be_drawn_says_why(change: dict[str, Any], shown: str) -> None:
    document = projection_document()
    document["evals"][0]["projection"].update(change)
    page = render_html(document)
    assert shown in page
    assert '<svg class="scatter"' not in page


@pytest.mark.parametrize(
    ("total", "note", "shown"),
    [
        ({"question": 0, "answer": 0, "chunk": 2}, None,
         "No question or answer to measure against the chunks."),
        ({"question": 3, "answer": 0, "chunk": 0}, None,
         "No chunk to measure coverage by: the rows carry no contexts."),
        ({"question": 3, "answer": 0, "chunk": 2}, "cannot project the embeddings: NaN",
         "Coverage by the chunks was not measured: the picture has no points."),
    ],
)  # fmt: skip
def test_the_far_list_says_why_nothing_was_measured(
    total: dict[str, int], note: str | None, shown: str
) -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    picture.update(total=total, note=note, far={"sigmas": 2.0, "bounds": {}})
    page = render_html(document)
    assert shown in page
    others = {
        "No question or answer to measure against the chunks.",
        "No chunk to measure coverage by: the rows carry no contexts.",
        "Coverage by the chunks was not measured: the picture has no points.",
    } - {shown}
    assert not any(other in page for other in others)


def test_a_line_is_drawn_with_its_note() -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    for point in picture["points"]:
        point["pca"] = [point["pca"][0], 0.0]
    picture["methods"]["pca"] = {
        "explained_variance": [1.0, 0.0],
        "note": "the points lie on a line: the second axis holds no variance",
    }
    page = render_html(document)
    # x spans 0..2: scale 241, and every y at the centre line, 189.
    assert {attributes.get("cy") for _, attributes in _shapes(page).values()} == {"189.0", None}
    assert "Note: the points lie on a line: the second axis holds no variance." in page


def test_umap_is_drawn_beside_pca() -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    picture["methods"]["umap"] = {
        "seed": 3, "n_neighbors": 15, "min_dist": 0.1, "metric": "cosine", "version": "0.5.12",
        "note": None,
    }  # fmt: skip
    for point in picture["points"]:
        point["umap"] = [-point["pca"][0], point["pca"][1]]
    page = render_html(document)
    assert 'id="map-0-0-pca"' in page
    assert 'id="map-0-0-umap"' in page
    assert "UMAP (umap-learn 0.5.12, cosine, 15 neighbours, min_dist 0.1, seed 3)" in page
    assert len(_shapes(page)) == 6  # a data-p per point; both figures carry them
    assert len(re.findall(r'data-p="1"><title>', page)) == 2


def test_an_eval_without_a_picture_or_topics_has_no_section() -> None:
    document = projection_document()
    entry = document["evals"][0]
    del entry["projection"]
    del entry["dataset_level"]["details"]["sources"]
    assert "Embedding space" not in render_html(document)


def test_the_page_is_the_same_for_the_same_document(page: str) -> None:
    assert render_html(projection_document()) == page
