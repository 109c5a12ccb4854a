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
    "outliers",
)
EMBEDDING_SPACE = MetricInfo(
    "embedding_space", "geometry of a field's embeddings", dataset=EMBEDDING_SPACE_STATS
)


def field_items(rows: Sequence[Row], field: str, metric: str) -> list[tuple[str, str]]:
    """The texts of ``field`` over ``rows``, each with the id it is known by: one per row
    for ``question`` and ``answer`` (the row's id), every alias for ``gold`` (the row's id
    too), and each distinct context for ``contexts`` (its doc id)."""
    if field not in SPACE_FIELDS:
        raise ValueError(f"{metric}(rows, field=...): use one of {', '.join(SPACE_FIELDS)}")
    items: list[tuple[str, str]] = []
    seen_docs: set[str] = set()
    for row in rows:
        value = row.require(field, metric)
        if field == "contexts":
            for context in value:
                if context["doc_id"] not in seen_docs:
                    seen_docs.add(context["doc_id"])
                    items.append((str(context["doc_id"]), context["text"]))
        elif field == "gold":
            items.extend((row.id, alias) for alias in golds(row, metric))
        else:
            items.append((row.id, value))
    return items


def field_texts(rows: Sequence[Row], field: str, metric: str) -> list[str]:
    """The texts of ``field`` over ``rows`` (``field_items`` without the ids)."""
    return [text for _, text in field_items(rows, field, metric)]


def measure_embedding_space(
    rows: Sequence[Row],
    embed: Embed,
    field: str,
    k: int,
    exact_limit: int,
    seed: int,
    metric: str = EMBEDDING_SPACE.name,
) -> DatasetMeasured:
    """The geometry of ``field``'s embeddings over ``rows`` (see ``embedding_space``); the
    details name each outlier (its id, mean k-NN distance and text), most isolated first."""
    import numpy as np

    from pytest_ragmetrics.metrics.space.geometry import embedding_space
    from pytest_ragmetrics.metrics.space.points import preview

    items = field_items(rows, field, metric)
    vectors = np.asarray(embed([text for _, text in items]), dtype=np.float64)
    space = embedding_space(vectors, k=k, exact_limit=exact_limit, seed=seed)
    found = zip(space.outlier_indices, space.outlier_distances, strict=True)
    outliers = [
        {"id": items[i][0], "nn_distance": distance, "text": preview(items[i][1])}
        for i, distance in sorted(found, key=lambda pair: (-pair[1], pair[0]))
    ]
    details = {
        "field": field,
        "summary": space.describe(),
        "outlier_bound": space.outlier_bound,
        "outliers": outliers,
    }
    return DatasetMeasured(space, space.as_stats(), details)
