"""The ``embedding_space`` dataset metric: Tier 0 geometry of one field's embeddings over
the rows (``geometry.embedding_space``), and the statistics a gate may name."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import DatasetMeasured, Embed, MetricInfo, golds

SPACE_FIELDS = ("contexts", "question", "answer", "gold")
EMBEDDING_SPACE_STATS = (
    "total_samples",
    "k",
    "avg_nn_distance",
    "std_nn_distance",
    "density_score",
    "avg_spread",
    "max_spread",
    "spread_std",
    "effective_dimensionality",
    "avg_pairwise_distance",
    "std_pairwise_distance",
    "min_pairwise_distance",
    "max_pairwise_distance",
    "pairwise_exact",
    "pairwise_pairs",
)
EMBEDDING_SPACE = MetricInfo(
    "embedding_space", "geometry of a field's embeddings", dataset=EMBEDDING_SPACE_STATS
)


def field_texts(rows: Sequence[Row], field: str, metric: str) -> list[str]:
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


def measure_embedding_space(
    rows: Sequence[Row],
    embed: Embed,
    field: str,
    k: int,
    exact_limit: int,
    seed: int,
    metric: str = EMBEDDING_SPACE.name,
) -> DatasetMeasured:
    """The geometry of ``field``'s embeddings over ``rows`` (see ``embedding_space``)."""
    import numpy as np

    from pytest_ragmetrics.metrics.space.geometry import embedding_space

    texts = field_texts(rows, field, metric)
    vectors = np.asarray(embed(texts), dtype=np.float64)
    space = embedding_space(vectors, k=k, exact_limit=exact_limit, seed=seed)
    return DatasetMeasured(space, space.as_stats(), {"field": field, "summary": space.describe()})
