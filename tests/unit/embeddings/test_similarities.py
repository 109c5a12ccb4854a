"""Grounding similarities kept in the embedding cache as one set per scored pairs: read
back as the very floats stored, missing when the set is absent, damaged or not the same
pairs, and a pair with no similarity read back as missing."""

from __future__ import annotations

import math
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ragmetrics.embeddings.cache import DB_NAME, KEPT_SETS, CacheWarning, EmbeddingCache
from pytest_ragmetrics.embeddings.similarities import (
    read_similarities,
    similarity_set,
    store_similarities,
)

PAIRS = [
    ("Paris is the capital.", "Paris is the capital of France."),
    ("Rome is old.", "Rome was founded in 753 BC."),
    ("Oslo is cold.", "Oslo lies at the head of a fjord."),
]
# Floats no decimal literal rounds to exactly, so a lossy round trip would show.
VALUES = {PAIRS[0]: 0.1 + 0.2, PAIRS[1]: math.pi / 4, PAIRS[2]: -1 / 3}


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    cache = EmbeddingCache(tmp_path)
    yield cache
    cache.close()


def test_a_stored_set_is_read_back_bit_for_bit(cache: EmbeddingCache) -> None:
    scored = similarity_set("model-a", PAIRS)
    assert read_similarities(cache, scored) is None  # nothing stored yet
    store_similarities(cache, scored, VALUES)
    assert read_similarities(cache, scored) == VALUES


def test_the_same_pairs_in_any_order_are_the_same_set(cache: EmbeddingCache) -> None:
    store_similarities(cache, similarity_set("model-a", PAIRS), VALUES)
    shuffled = similarity_set("model-a", [PAIRS[2], PAIRS[0], PAIRS[1], PAIRS[0]])
    assert read_similarities(cache, shuffled) == VALUES


def test_other_pairs_or_another_model_are_another_set(cache: EmbeddingCache) -> None:
    store_similarities(cache, similarity_set("model-a", PAIRS), VALUES)
    assert read_similarities(cache, similarity_set("model-b", PAIRS)) is None
    assert read_similarities(cache, similarity_set("model-a", PAIRS[:2])) is None
    # The texts of a pair are not joined by a separator a text could hold.
    joined = [("Paris is the capital.\0Paris", " is the capital of France."), *PAIRS[1:]]
    assert similarity_set("model-a", joined).key != similarity_set("model-a", PAIRS).key


def test_a_pair_without_a_similarity_is_missing(cache: EmbeddingCache) -> None:
    """A pair with a zero vector has no cosine: it is stored as NaN and read as missing,
    so its row is scored by its own fixture, which says why."""
    scored = similarity_set("model-a", PAIRS)
    store_similarities(cache, scored, {PAIRS[0]: VALUES[PAIRS[0]], PAIRS[2]: VALUES[PAIRS[2]]})
    assert read_similarities(cache, scored) == {
        PAIRS[0]: VALUES[PAIRS[0]],
        PAIRS[2]: VALUES[PAIRS[2]],
    }


def test_a_damaged_set_is_not_read(cache: EmbeddingCache, tmp_path: Path) -> None:
    scored = similarity_set("model-a", PAIRS)
    store_similarities(cache, scored, VALUES)
    with sqlite3.connect(tmp_path / DB_NAME) as connection:  # one value's bits flipped
        (blob,) = connection.execute("SELECT value FROM similarity_sets").fetchone()
        flipped = bytes([blob[0] ^ 1]) + blob[1:]
        connection.execute("UPDATE similarity_sets SET value = ?", (flipped,))
    assert read_similarities(cache, scored) is None
    with sqlite3.connect(tmp_path / DB_NAME) as connection:  # intact, but too short
        short = struct.pack("<2d", 0.5, 0.5)
        connection.execute("DELETE FROM similarity_sets")
    cache.put_similarity_set(scored.key, short)
    assert read_similarities(cache, scored) is None


def test_only_the_latest_sets_are_kept(cache: EmbeddingCache, tmp_path: Path) -> None:
    sets = [similarity_set(f"model-{n}", PAIRS) for n in range(KEPT_SETS + 2)]
    for scored in sets:
        store_similarities(cache, scored, VALUES)
    kept = [read_similarities(cache, scored) is not None for scored in sets]
    assert kept == [False, False] + [True] * KEPT_SETS


def test_a_failing_similarity_table_is_a_warning_and_the_vectors_stay(
    cache: EmbeddingCache, tmp_path: Path
) -> None:
    scored = similarity_set("model-a", PAIRS)
    store_similarities(cache, scored, VALUES)
    with sqlite3.connect(tmp_path / DB_NAME) as connection:
        connection.execute("DROP TABLE similarity_sets")
        connection.execute("CREATE TABLE similarity_sets (stale INTEGER)")
    with pytest.warns(CacheWarning, match="grounding similarities failed"):
        assert read_similarities(cache, scored) is None
    with pytest.warns(CacheWarning, match="grounding similarities failed"):
        store_similarities(cache, scored, VALUES)
    assert (tmp_path / DB_NAME).exists()  # not moved aside: only this table is unusable
