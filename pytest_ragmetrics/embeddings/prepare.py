"""Prepare, then score: every text the run's embedding metrics need, embedded up front.

Before any row runs, the plugin lists the texts of every selected row test's embedding
metrics, deduplicates them and hands them to ``EmbeddingStore.prepare``, which

1. looks them up in the disk cache, under a lock that makes other processes of the run
   (pytest-xdist workers) wait, so no text is encoded twice;
2. encodes only the misses, longest first, in large batches, storing each batch as it
   completes (an interrupted run keeps what it paid for) and reporting progress;
3. keeps the vectors in memory for the metric fixtures, which then only look up: one
   float32 matrix with a row per text (``PackedVectors``), never an array per text.

A warm run of the same rows reads the whole set back as one packed matrix
(``EmbeddingCache.get_set``) instead of one cache entry per text, and a run that had to
read entries or encode stores its set that way for the next.

The embedder is built lazily and the model loaded on the first miss: a fully cached run
never imports torch or sentence-transformers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ragmetrics.embeddings.model import Embedder, LoadTimes, Vectors

if TYPE_CHECKING:  # SQLite, the file locks and numpy: when the store is first used
    from pytest_ragmetrics.embeddings.cache import EmbeddingCache, PreparedSet

ENCODE_CHUNK = 1024  # texts per encode call: big batches, with progress between them


class EncodingError(Exception):
    """The texts could not be encoded where the run encodes them (the Ray engine's actor
    pool failed, or could not be reached); the run stops and says why."""


# Encodes chunks of texts, yielding each chunk with its vectors as it completes, in any
# order: the embedder in this process by default, an actor pool of the Ray engine
# (``plugin.ray_engine``) otherwise. The chunks are the same either way, so are the vectors.
ChunkEncoder = Callable[[Embedder, list[list[str]]], Iterator[tuple[list[str], Vectors]]]


def encode_here(embedder: Embedder, chunks: list[list[str]]) -> Iterator[tuple[list[str], Vectors]]:
    """Each chunk encoded by ``embedder`` in this process, in order."""
    for chunk in chunks:
        yield chunk, embedder.encode(chunk)


class Progress(Protocol):
    """Where the store reports encoding progress (the terminal, a worker's stderr)."""

    def start(self, total: int, model: str) -> None: ...

    def advance(self, done: int, total: int) -> None: ...

    def finish(self, stats: PrepareStats) -> None: ...


@dataclass
class PrepareStats:
    """What preparing cost in one process: for the report, the benchmark and tests."""

    texts: int = 0
    cached: int = 0
    encoded: int = 0
    lookup_s: float = 0.0
    import_s: float = 0.0
    load_s: float = 0.0
    encode_s: float = 0.0
    # Grounding pairs (a sentence and its cited context) whose similarity was read from
    # the cache's similarity set, with no vector (``embeddings.similarities``).
    similarities: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def used(self) -> bool:
        """Whether the process embedded, or read, anything."""
        return bool(self.texts or self.similarities)

    def describe(self) -> str:
        parts = []
        if self.texts:
            line = f"{self.texts} unique text(s), {self.cached} from cache, {self.encoded} encoded"
            if self.encoded:
                line += (
                    f" in {self.encode_s:.1f} s (+ import {self.import_s:.1f} s, "
                    f"model load {self.load_s:.1f} s)"
                )
            parts.append(line)
        if self.similarities:
            parts.append(
                f"{self.similarities} sentence similarit{'y' if self.similarities == 1 else 'ies'}"
                " from cache, no vector read for them"
            )
        return "; ".join(parts)


class PackedVectors(Mapping[str, Vectors]):
    """Vectors of many texts in one float32 matrix, a row per text, and each text's row.

    Reading the rows of many texts is one indexing of the matrix (``rows``), not a stack
    of separate arrays. The matrix grows by doubling, so adding texts in many small
    groups costs time linear in their number. A text's row is read-only.
    """

    def __init__(self) -> None:
        self._rows: dict[str, int] = {}
        self._matrix: Vectors | None = None  # made by the first add: none, no numpy

    def add(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Hold ``vectors[i]`` as the vector of ``texts[i]`` (a text held already keeps
        its row: one model gives one text one vector)."""
        import numpy as np

        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(
                f"{len(texts)} text(s) need as many rows of vectors; got shape {vectors.shape}"
            )
        new = [index for index, text in enumerate(texts) if text not in self._rows]
        if not new:
            return
        size, dim = len(self._rows), vectors.shape[1]
        matrix = self._matrix if self._matrix is not None else np.zeros((0, dim), np.float32)
        if size and dim != matrix.shape[1]:
            raise ValueError(
                f"vectors of {dim} dimensions cannot join the {matrix.shape[1]} of "
                "the texts held: one store holds one model's vectors"
            )
        if size + len(new) > matrix.shape[0]:
            grown = np.zeros((max(size + len(new), 2 * matrix.shape[0]), dim), np.float32)
            if size:
                grown[:size] = matrix[:size]
            matrix = grown
        matrix[size : size + len(new)] = vectors[new]
        self._matrix = matrix
        for offset, index in enumerate(new):
            self._rows[texts[index]] = size + offset

    def rows(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts``, a row each in their order (a copy)."""
        positions = [self._rows[text] for text in texts]  # a KeyError for a text not held
        if self._matrix is None:  # none held, and no text asked for
            import numpy as np

            return np.zeros((0, 0), np.float32)
        return self._matrix[positions]

    def __getitem__(self, text: str) -> Vectors:
        position = self._rows[text]
        assert self._matrix is not None  # a text is held, so is its row
        row: Vectors = self._matrix[position]
        row.flags.writeable = False
        return row

    def __contains__(self, text: object) -> bool:
        return text in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class EmbeddingStore:
    """Vectors of the run's texts: prepared in bulk, then looked up by the fixtures."""

    def __init__(
        self,
        make_embedder: Callable[[EmbeddingCache], Embedder],
        cache: EmbeddingCache,
        encode_chunks: ChunkEncoder = encode_here,
        keep_vectors: bool = True,
        encode_alone: ChunkEncoder | None = None,
    ):
        self._make_embedder = make_embedder
        self._encode_chunks = encode_chunks
        # Who encodes the texts a row asks for alone (``embed``: a live row's answer, a
        # dataset metric's texts), a few at a time: ``encode_chunks`` unless given.
        self._encode_alone = encode_alone or encode_chunks
        # False where the rows are scored elsewhere (the Ray engine's workers read the
        # cache): the vectors are then only stored, not also held in this process.
        self._keep_vectors = keep_vectors
        self._prepared: set[str] = set()  # texts prepared but not held (keep_vectors off)
        self._embedder: Embedder | None = None
        self.cache = cache
        self.vectors = PackedVectors()
        self.stats = PrepareStats()
        self._load_counted = False

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder(self.cache)
        return self._embedder

    def prepare(self, texts: Iterable[str], progress: Progress | None = None) -> None:
        """Make every text of ``texts`` available, encoding only what no cache holds.

        The texts are one prepared set: read whole from the cache when it holds the set,
        otherwise read entry by entry (the misses encoded) and then stored whole.
        """
        self._prepare(texts, progress, whole=True)

    def _prepare(self, texts: Iterable[str], progress: Progress | None, whole: bool) -> None:
        import numpy as np

        from pytest_ragmetrics.embeddings.cache import prepared_set

        needed = [
            text
            for text in dict.fromkeys(texts)
            if text not in self.vectors and text not in self._prepared
        ]
        if not needed:
            return
        started = time.perf_counter()
        identity = self.embedder.identity
        packed = prepared_set(identity, needed) if whole and self._keep_vectors else None
        # A whole stored set leaves nothing to encode, so no lock to wait for: the set is
        # written in one transaction and checked when read, whoever writes meanwhile.
        if packed is not None and self._add_set(packed, started):
            return
        with self.cache.prepare_lock():
            if packed is not None and self._add_set(packed, started):  # written meanwhile
                return
            found = self.cache.get_many(identity, needed)
            if self._keep_vectors and found:
                self.vectors.add(list(found), np.stack(list(found.values())))
            misses = [text for text in needed if text not in found]
            self._count_lookup(started, len(needed), len(found))
            if misses:
                encode = self._encode_chunks if whole else self._encode_alone
                self._encode(identity, misses, progress, encode)
            if packed is not None:
                self.cache.put_set(packed, self.vectors.rows(packed.texts))
            if not self._keep_vectors:  # read elsewhere: the file must hold them all
                self._prepared.update(needed)
                self.cache.checkpoint()

    def _add_set(self, packed: PreparedSet, started: float) -> bool:
        """Hold the vectors of ``packed`` if the cache holds the set whole and intact."""
        stored = self.cache.get_set(packed)
        if stored is None:
            return False
        self.vectors.add(packed.texts, stored)
        self._count_lookup(started, len(packed.texts), len(packed.texts))
        return True

    def _count_lookup(self, started: float, texts: int, cached: int) -> None:
        self.stats.lookup_s += time.perf_counter() - started
        self.stats.texts += texts
        self.stats.cached += cached

    def _encode(
        self, identity: str, misses: list[str], progress: Progress | None, encode: ChunkEncoder
    ) -> None:
        embedder = self.embedder
        if progress:
            progress.start(len(misses), embedder.name)
        ordered = sorted(misses, key=len, reverse=True)  # similar lengths pad least
        started = time.perf_counter()
        chunks = [
            ordered[begin : begin + ENCODE_CHUNK] for begin in range(0, len(ordered), ENCODE_CHUNK)
        ]
        done = 0
        for chunk, vectors in encode(embedder, chunks):
            if vectors.shape[0] != len(chunk):
                raise RuntimeError(
                    f"{embedder.name} returned {vectors.shape[0]} vectors for {len(chunk)} texts"
                )
            self.cache.put_many(identity, dict(zip(chunk, vectors, strict=True)))
            if self._keep_vectors:
                self.vectors.add(chunk, vectors)
            self.stats.encoded += len(chunk)
            done += len(chunk)
            if progress:
                progress.advance(done, len(ordered))
        elapsed = time.perf_counter() - started
        times = getattr(embedder, "times", LoadTimes())
        if not self._load_counted and times.import_s + times.load_s > 0:
            self._load_counted = True  # the model loads once per process; count it once
            self.stats.import_s += times.import_s
            self.stats.load_s += times.load_s
            elapsed -= times.import_s + times.load_s
        self.stats.encode_s += elapsed
        if progress:
            progress.finish(self.stats)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts`` in order; a text not prepared is looked up or encoded
        (alone, not as a prepared set: these are a row's or a dataset metric's texts)."""
        import numpy as np

        self._prepare(texts, None, whole=False)
        if not texts:
            return np.zeros((0, 0), np.float32)
        if self._keep_vectors:
            return self.vectors.rows(texts)
        stored = self.cache.get_many(self.embedder.identity, texts)  # not held here
        lost = [text for text in texts if text not in stored]
        if lost:
            raise EncodingError(
                f"{len(lost)} prepared text(s) are not in the embedding cache "
                f"{self.cache.directory} any more; was it removed during the run?"
            )
        return np.stack([stored[text] for text in texts])

    def close(self) -> None:
        self.cache.close()
