"""The ``sources`` dataset metric: which chunks of a corpus the rows retrieve, and, when
asked for, what each k-means topic of the questions retrieves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import DatasetMeasured, Embed, MetricInfo
from pytest_ragmetrics.metrics.retrieval import ranking

if TYPE_CHECKING:  # the geometry, and numpy, are imported when the metric is computed
    from pytest_ragmetrics.metrics.space.geometry import ChunkUtilization, TopicCoverage

SOURCES_STATS = (
    "total_chunks",
    "used_chunks",
    "unused_chunks",
    "unknown_chunks",
    "chunk_utilization",
    "n_topics",
    "total_questions",
    "avg_chunks_per_topic",
)
SOURCES = MetricInfo("sources", "chunk utilization and topic coverage", dataset=SOURCES_STATS)


@dataclass(frozen=True)
class SourcesResult:
    """Chunk utilization of the rows' retrievals, and topic coverage when asked for."""

    utilization: ChunkUtilization
    topics: TopicCoverage | None


def measure_sources(
    rows: Sequence[Row],
    embed: Embed,
    corpus: Sequence[str],
    k: int | None,
    n_topics: int | None,
    seed: int,
    metric: str = SOURCES.name,
) -> DatasetMeasured:
    """Which of the ``corpus`` chunk ids the rows retrieved (``retrieved``, else the
    contexts' order; the first ``k`` when given), and with ``n_topics``, k-means topics of
    the questions with the chunks and URLs (contexts' ``url``) each topic reached."""
    import numpy as np

    from pytest_ragmetrics.metrics.space.geometry import chunk_utilization, topic_coverage

    retrieved = [ranking(row, metric)[:k] for row in rows]
    used = chunk_utilization(retrieved, list(corpus))
    stats: dict[str, float] = {
        "total_chunks": used.total_chunks,
        "used_chunks": used.used_chunks,
        "unused_chunks": used.unused_chunks,
        "unknown_chunks": len(used.unknown_chunks),
        "chunk_utilization": used.chunk_utilization,
    }
    details: dict[str, Any] = {"unknown_chunks": list(used.unknown_chunks)}
    topics = None
    if n_topics is not None:
        questions = [row.require("question", metric) for row in rows]
        urls = [[c["url"] for c in (row.contexts or [])[:k] if "url" in c] for row in rows]
        vectors = np.asarray(embed(questions), dtype=np.float64)
        topics = topic_coverage(vectors, retrieved, urls, n_topics, seed)
        stats.update(
            n_topics=topics.n_topics,
            total_questions=topics.total_questions,
            avg_chunks_per_topic=topics.avg_chunks_per_topic,
        )
        details["topics"] = _topic_details(rows, questions, topics)
    return DatasetMeasured(SourcesResult(used, topics), stats, details)


EXAMPLES = 3
"""Questions of each topic the details quote, in dataset order, to say what it is about."""


def _topic_details(
    rows: Sequence[Row], questions: Sequence[str], topics: TopicCoverage
) -> list[dict[str, Any]]:
    """Each topic's counts, the ids of its questions and the first few of them."""
    from pytest_ragmetrics.metrics.space.points import preview

    members: list[list[int]] = [[] for _ in topics.topics]
    for question, topic in enumerate(topics.assignment):
        members[topic].append(question)
    return [
        {
            **asdict(topic),
            "question_ids": [rows[i].id for i in members[topic.topic_id]],
            "examples": [preview(questions[i]) for i in members[topic.topic_id][:EXAMPLES]],
        }
        for topic in topics.topics
    ]
