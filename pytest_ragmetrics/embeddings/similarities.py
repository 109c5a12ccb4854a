"""The similarities of a run's grounding pairs, kept in the embedding cache as one set.

Overlap and faithfulness decide a sentence by one number: the cosine of its vector
(markers stripped) with the vector of the context it cites
(``pytest_ragmetrics.metrics.grounding.pair_similarities``). That number depends on the
two texts and the model alone, so a run keeps the similarity of every pair it scored as
one set in the cache, under a key that names the model's identity, this code's version
and the pairs (``similarity_set``). A later run with the same pairs reads them back and
needs no vector: it reads no matrix and imports no numpy. The values are the float64s
the first run computed, so a warm run reproduces its numbers bit for bit. A pair with no
similarity (a zero vector) is kept as NaN and read back as missing. A set that is
missing or damaged (checksum, length) only sends the run back to the vectors.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_ragmetrics.embeddings.cache import EmbeddingCache

# Bump when the similarity of a pair is computed otherwise: sets kept under another
# version are not read.
SIMILARITY_VERSION = 1

# A sentence (its text without markers) and the text of the context it cites.
Pair = tuple[str, str]


@dataclass(frozen=True)
class SimilaritySet:
    """Pairs scored together, in the set's own order (sorted, so the same pairs listed in
    any order are the same set), and the set's key under one model."""

    key: bytes
    pairs: tuple[Pair, ...]


def similarity_set(model_identity: str, pairs: Iterable[Pair]) -> SimilaritySet:
    """The set of the distinct ``pairs`` under the model ``model_identity``: its key
    hashes the model identity and every text, each after its length, so no text can
    pass for another or for the boundary between two (as one joined by a separator
    could)."""
    order = tuple(sorted(set(pairs)))
    digest = hashlib.sha256()
    digest.update(f"pytest-ragmetrics similarity set {SIMILARITY_VERSION}".encode())
    for text in (model_identity, *(text for pair in order for text in pair)):
        digest.update(f"\0{len(text)}:{text}".encode("utf-8", "surrogatepass"))
    return SimilaritySet(digest.digest(), order)


def read_similarities(cache: EmbeddingCache, scored: SimilaritySet) -> dict[Pair, float] | None:
    """The similarity of each pair of ``scored`` as the cache keeps the set, without the
    pairs that have none; ``None`` when the set is not there whole and intact."""
    blob = cache.get_similarity_set(scored.key)
    if blob is None or len(blob) != 8 * len(scored.pairs):
        return None
    values = struct.unpack(f"<{len(scored.pairs)}d", blob)
    return {
        pair: value
        for pair, value in zip(scored.pairs, values, strict=True)
        if not math.isnan(value)
    }


def store_similarities(
    cache: EmbeddingCache, scored: SimilaritySet, similarities: Mapping[Pair, float]
) -> None:
    """Keep the similarity of each pair of ``scored`` (NaN for a pair ``similarities``
    lacks: it has none) as the set."""
    values = [similarities.get(pair, math.nan) for pair in scored.pairs]
    cache.put_similarity_set(scored.key, struct.pack(f"<{len(values)}d", *values))
