"""Dataset-level metrics: one set of statistics over all the rows of an eval.

``geometry`` holds the math on embedding arrays (embedding space, cache hits, session
coherence, chunk utilization, topic coverage); ``embedding``, ``ux`` and ``sources``
compute the ``embedding_space``, ``ux`` and ``sources`` metrics over dataset rows and
declare their statistics. The fixtures that record them are in
``pytest_ragmetrics.plugin.dataset_fixtures``. Importing this package imports neither
faiss nor numpy: the geometry's names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragmetrics.metrics.space.geometry import (
        DEFAULT_TAU,
        FAISS_THREADS,
        OUTLIER_SIGMAS,
        VARIANCE_SHARE,
        VARIANCE_TOLERANCE,
        CacheHits,
        ChunkUtilization,
        EmbeddingSpace,
        SessionCoherence,
        Topic,
        TopicCoverage,
        cache_hit_rate,
        chunk_utilization,
        context_preservation,
        embedding_space,
        multi_turn_consistency,
        nearest_cosines,
        nearest_neighbour_distances,
        topic_coverage,
    )

__all__ = [
    "DEFAULT_TAU",
    "FAISS_THREADS",
    "OUTLIER_SIGMAS",
    "VARIANCE_SHARE",
    "VARIANCE_TOLERANCE",
    "CacheHits",
    "ChunkUtilization",
    "EmbeddingSpace",
    "SessionCoherence",
    "Topic",
    "TopicCoverage",
    "cache_hit_rate",
    "chunk_utilization",
    "context_preservation",
    "embedding_space",
    "multi_turn_consistency",
    "nearest_cosines",
    "nearest_neighbour_distances",
    "topic_coverage",
]


def __getattr__(name: str) -> Any:
    """The geometry's names, imported on first use: the dataset metrics' declarations
    (``embedding``, ``ux``, ``sources``), which the catalog reads with the plugin, need
    neither the geometry nor numpy."""
    if name in __all__:
        from pytest_ragmetrics.metrics.space import geometry

        return getattr(geometry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
