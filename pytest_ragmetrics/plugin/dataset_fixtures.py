"""Dataset-level evals: the ``rows`` fixture and the metrics that describe a set of rows.

A test that takes ``rows`` (instead of ``row``) runs once over every row of its dataset.
The fixtures here compute one set of statistics over those rows and record it for the
eval, where thresholds.toml gates it like any aggregate (``embedding_space.avg_nn_distance``,
``ux.cache_hit_rate``, ``sources.chunk_utilization``)::

    def test_space(rows, embedding_space):
        space = embedding_space(rows, field="contexts", k=5)
        assert space.effective_dimensionality >= 10

Each fixture returns the frozen result of ``pytest_ragmetrics.metrics.space``; a row that
lacks a field the metric needs makes the test error with file, line and field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pytest

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import golds
from pytest_ragmetrics.metrics.measures import ranking
from pytest_ragmetrics.metrics.space import (
    ChunkUtilization,
    EmbeddingSpace,
    TopicCoverage,
    cache_hit_rate,
    chunk_utilization,
    context_preservation,
    embedding_space,
    topic_coverage,
)
from pytest_ragmetrics.plugin.state import (
    DATASET_RECORDER_KEY,
    DatasetRecorder,
    RowsParam,
    embedding_store,
    run_state,
)

SPACE_FIELDS = ("contexts", "question", "answer", "gold")
DEFAULT_CACHE_TAU = 0.85


@pytest.fixture
def rows(request: pytest.FixtureRequest) -> list[Row]:
    """Every row of the test's dataset, for dataset-level metrics; bad rows fail the test
    (or, with ``row_errors = "skip"``, are left out and counted)."""
    param = getattr(request, "param", None)
    if not isinstance(param, RowsParam):
        raise pytest.UsageError(
            f"{request.node.nodeid} takes `rows` but has no dataset: "
            f'mark it with @pytest.mark.ragmetrics(dataset="path/to/rows.jsonl")'
        )
    good = [loaded.row for loaded in param.loaded if not loaded.problems]
    recorder = DatasetRecorder(good)
    request.node.stash[DATASET_RECORDER_KEY] = recorder
    bad = param.bad_rows()
    if bad:
        if run_state(request.config).thresholds.settings.row_errors != "skip":
            message = f"{len(bad)} problem(s) in the dataset:\n" + "\n".join(bad)
            recorder.fail(message)
            pytest.fail(message, pytrace=False)
        recorder.details["bad_rows_left_out"] = bad
    return good


def _embed(request: pytest.FixtureRequest, texts: Sequence[str]) -> np.ndarray[Any, Any]:
    return np.asarray(embedding_store(request.config).embed(texts), dtype=np.float64)


def _field_texts(rows: Sequence[Row], field: str, metric: str) -> list[str]:
    """The texts of ``field`` over ``rows``: one per row for ``question`` and ``answer``,
    every alias for ``gold``, and each distinct context (by doc id) for ``contexts``."""
    if field not in SPACE_FIELDS:
        raise ValueError(f"{metric}(rows, field=...): use one of {', '.join(SPACE_FIELDS)}")
    texts: list[str] = []
    seen_docs: set[str] = set()
    for row in rows:
        value = row.require(field, metric)
        if field == "contexts":
            for context in value:
                if context["doc_id"] not in seen_docs:
                    seen_docs.add(context["doc_id"])
                    texts.append(context["text"])
        elif field == "gold":
            texts.extend(golds(row, metric))
        else:
            texts.append(value)
    return texts


@dataclass(frozen=True)
class DatasetMetric:
    """A dataset-level metric bound to the running test: call it with the test's ``rows``."""

    name: str
    recorder: DatasetRecorder
    request: pytest.FixtureRequest

    def check(self, rows: Sequence[Row]) -> None:
        if rows is not self.recorder.rows:
            raise TypeError(
                f"{self.name}() takes the test's own `rows` fixture; "
                "for other data use pytest_ragmetrics.metrics.space"
            )

    def record(self, stats: dict[str, float], details: Any) -> None:
        self.recorder.record(self.name, stats, details)

    def run(self, rows: Sequence[Row], compute: Callable[[], Any]) -> Any:
        self.check(rows)
        try:
            return compute()
        except (RowError, ValueError) as error:
            self.recorder.fail(f"{self.name}: {error}")
            raise


class EmbeddingSpaceMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        field: str = "contexts",
        k: int = 5,
        exact_limit: int = 2048,
        seed: int = 0,
    ) -> EmbeddingSpace:
        """Tier 0 geometry of ``field``'s embeddings over ``rows``; see ``embedding_space``."""

        def compute() -> EmbeddingSpace:
            texts = _field_texts(rows, field, self.name)
            space = embedding_space(
                _embed(self.request, texts), k=k, exact_limit=exact_limit, seed=seed
            )
            self.record(space.as_stats(), {"field": field, "summary": space.describe()})
            return space

        result: EmbeddingSpace = self.run(rows, compute)
        return result


@dataclass(frozen=True)
class UxResult:
    """The UX statistics of a set of questions (``None`` where the data gave none)."""

    questions: int
    cache_hit_rate: float | None
    cache_hits: int | None
    context_preservation: float | None
    multi_turn_consistency: float | None
    sessions: int
    single_turn_sessions: int


def _sessions(rows: Sequence[Row], metric: str) -> list[list[Row]]:
    """Rows grouped by ``session_id`` (first-seen order), each ordered by ``turn``."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        if row.get("session_id") is not None:
            grouped.setdefault(row["session_id"], []).append(row)
    sessions = []
    for session_id, turns in grouped.items():
        numbers = [row.require("turn", metric) for row in turns]
        if len(set(numbers)) != len(numbers):
            raise RowError(f"{turns[0].where('turn')}: session {session_id!r} repeats a turn")
        sessions.append(sorted(turns, key=lambda row: row["turn"]))
    return sessions


class UxMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        cache: Sequence[str] | None = None,
        tau: float = DEFAULT_CACHE_TAU,
    ) -> UxResult:
        """Cache hits of the questions against ``cache`` (past questions; cosine > tau),
        and the coherence of consecutive questions in each session (``session_id`` and
        ``turn``). Without a cache, or without sessions, those statistics are left out."""
        if isinstance(cache, str):
            raise TypeError("ux(rows, cache=...): cache is a list of past questions, not a string")

        def compute() -> UxResult:
            questions = [row.require("question", self.name) for row in rows]
            stats: dict[str, float] = {"questions": len(questions)}
            details: dict[str, Any] = {}
            hit_rate = hits = preservation = None
            if cache is not None:
                vectors = _embed(self.request, [*questions, *cache])
                result = cache_hit_rate(vectors[: len(questions)], vectors[len(questions) :], tau)
                hit_rate, hits = result.rate, result.hits
                stats.update(cache_hit_rate=hit_rate, cache_hits=hits)
                details["cache"] = {"size": len(cache), "tau": tau}
            sessions = _sessions(rows, self.name)
            single = sum(1 for turns in sessions if len(turns) < 2)
            stats.update(sessions=len(sessions), single_turn_sessions=single)
            if len(sessions) > single:
                arrays = [
                    _embed(self.request, [row["question"] for row in turns]) for turns in sessions
                ]
                coherence = context_preservation(arrays)
                preservation = coherence.value
                stats.update(context_preservation=preservation, multi_turn_consistency=preservation)
                details["sessions"] = {"pairs": coherence.pairs}
            outside = sum(1 for row in rows if row.get("session_id") is None)
            details["rows_without_session"] = outside
            self.record(stats, details)
            return UxResult(
                len(questions), hit_rate, hits, preservation, preservation, len(sessions), single
            )

        result: UxResult = self.run(rows, compute)
        return result


@dataclass(frozen=True)
class SourcesResult:
    """Chunk utilization of the rows' retrievals, and topic coverage when asked for."""

    utilization: ChunkUtilization
    topics: TopicCoverage | None


class SourcesMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        corpus: Sequence[str],
        k: int | None = None,
        n_topics: int | None = None,
        seed: int = 0,
    ) -> SourcesResult:
        """Which of the ``corpus`` chunk ids the rows retrieved (``retrieved``, else the
        contexts' order; the first ``k`` when given), and with ``n_topics``, k-means topics
        of the questions with the chunks and URLs (contexts' ``url``) each topic reached."""

        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise TypeError(f"sources(rows, k=...): k must be an integer >= 1, got {k!r}")

        def compute() -> SourcesResult:
            retrieved = [ranking(row, self.name)[:k] for row in rows]
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
                questions = [row.require("question", self.name) for row in rows]
                urls = [[c["url"] for c in (row.contexts or [])[:k] if "url" in c] for row in rows]
                topics = topic_coverage(
                    _embed(self.request, questions), retrieved, urls, n_topics, seed
                )
                stats.update(
                    n_topics=topics.n_topics,
                    total_questions=topics.total_questions,
                    avg_chunks_per_topic=topics.avg_chunks_per_topic,
                )
                details["topics"] = [asdict(topic) for topic in topics.topics]
            self.record(stats, details)
            return SourcesResult(used, topics)

        result: SourcesResult = self.run(rows, compute)
        return result


def _recorder(request: pytest.FixtureRequest) -> DatasetRecorder:
    recorder: DatasetRecorder = request.node.stash[DATASET_RECORDER_KEY]  # set by `rows`
    return recorder


@pytest.fixture(name="embedding_space")
def embedding_space_fixture(
    request: pytest.FixtureRequest, rows: list[Row]
) -> EmbeddingSpaceMetric:
    """Callable: ``embedding_space(rows, field="contexts", k=5)`` records Tier 0 geometry."""
    return EmbeddingSpaceMetric("embedding_space", _recorder(request), request)


@pytest.fixture
def ux(request: pytest.FixtureRequest, rows: list[Row]) -> UxMetric:
    """Callable: ``ux(rows, cache=[...], tau=0.85)`` records cache hits and coherence."""
    return UxMetric("ux", _recorder(request), request)


@pytest.fixture
def sources(request: pytest.FixtureRequest, rows: list[Row]) -> SourcesMetric:
    """Callable: ``sources(rows, corpus=[...], n_topics=8)`` records chunk utilization."""
    return SourcesMetric("sources", _recorder(request), request)
