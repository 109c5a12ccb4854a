"""The ``projection`` of an eval's report entry: the picture of its embedding space that a
dataset-level test carried (``metrics.space.projection.eval_picture``), with what the
rest of the run knows about each point joined in on the controller.

A point is a question, an answer or a chunk. Its ``topic`` comes from the ``sources``
metric's k-means topics (a question's topic, and its row's answer's); ``outlier`` from
the ``embedding_space`` metric's outliers, for the kind of text it measured (``contexts``
are chunks); ``status`` from the row tests that ran the point's row (passed, failed,
error). Each is ``null`` (``false`` for ``outlier``) where the run does not know it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.metrics.space.embedding import EMBEDDING_SPACE
from pytest_ragmetrics.metrics.space.points import ANSWER, FIELD_KINDS, QUESTION
from pytest_ragmetrics.metrics.space.sources import SOURCES
from pytest_ragmetrics.results.summary import RowResult


def _topics(details: Mapping[str, Any]) -> dict[str, int]:
    """Row id -> topic id, from the ``sources`` topics' question ids."""
    topics = (details.get(SOURCES.name) or {}).get("topics") or ()
    return {
        str(row_id): int(topic["topic_id"])
        for topic in topics
        for row_id in topic.get("question_ids") or ()
    }


def _outliers(details: Mapping[str, Any]) -> tuple[str | None, set[str]]:
    """The kind of point ``embedding_space`` measured, and the ids of its outliers."""
    space = details.get(EMBEDDING_SPACE.name) or {}
    kind = FIELD_KINDS.get(str(space.get("field")))
    return kind, {str(outlier["id"]) for outlier in space.get("outliers") or ()}


def projection_entry(
    picture: Mapping[str, Any], details: Mapping[str, Any], rows: Sequence[RowResult]
) -> dict[str, Any]:
    """``picture`` with each point's ``outlier``, ``topic`` and ``status`` joined in, and
    ``colours``: the colourings the run has data for (``kind`` always; ``topic`` when
    some point has one, ``status`` when some point's row ran a row test)."""
    topics = _topics(details)
    outlier_kind, outliers = _outliers(details)
    # the status of the rows drawn only, found in one pass: not every row's by id
    drawn = {
        point["id"] for point in picture.get("points") or () if point["kind"] in (QUESTION, ANSWER)
    }
    statuses = {row.id: row.status for row in rows if row.id in drawn}
    points = []
    for point in picture.get("points") or ():
        of_row = point["kind"] in (QUESTION, ANSWER)
        points.append(
            {
                **point,
                "outlier": point["kind"] == outlier_kind and point["id"] in outliers,
                "topic": topics.get(point["id"]) if of_row else None,
                "status": statuses.get(point["id"]) if of_row else None,
            }
        )
    colours = ["kind"]
    colours += [name for name in ("topic", "status") if any(p[name] is not None for p in points)]
    return {**picture, "colours": colours, "points": points}
