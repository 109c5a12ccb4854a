"""Prepare, then score: every text the run's embedding metrics need, embedded up front.

Before any row runs, the plugin lists the texts of every selected row test's embedding
metrics, deduplicates them and hands them to ``EmbeddingStore.prepare``, which

1. looks them up in the disk cache, under a lock that makes other processes of the run
   (pytest-xdist workers) wait, so no text is encoded twice;
2. encodes only the misses, longest first, in large batches, storing each batch as it
   completes (an interrupted run keeps what it paid for) and reporting progress;
3. keeps the vectors in memory for the metric fixtures, which then only look up.

The embedder is built lazily and the model loaded on the first miss: a fully cached run
never imports torch or sentence-transformers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ragmetrics.embeddings.model import Embedder, LoadTimes, Vectors

if TYPE_CHECKING:  # SQLite, the file locks and numpy: when the store is first used
    from pytest_ragmetrics.embeddings.cache import EmbeddingCache

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        line = f"{self.texts} unique text(s), {self.cached} from cache, {self.encoded} encoded"
        if self.encoded:
            line += (
                f" in {self.encode_s:.1f} s (+ import {self.import_s:.1f} s, "
                f"model load {self.load_s:.1f} s)"
            )
        return line


class EmbeddingStore:
    """Vectors of the run's texts: prepared in bulk, then looked up by the fixtures."""

    def __init__(
        self,
        make_embedder: Callable[[EmbeddingCache], Embedder],
        cache: EmbeddingCache,
        encode_chunks: ChunkEncoder = encode_here,
        keep_vectors: bool = True,
    ):
        self._make_embedder = make_embedder
        self._encode_chunks = encode_chunks
        # False where the rows are scored elsewhere (the Ray engine's workers read the
        # cache): the vectors are then only stored, not also held in this process.
        self._keep_vectors = keep_vectors
        self._prepared: set[str] = set()  # texts prepared but not held (keep_vectors off)
        self._embedder: Embedder | None = None
        self.cache = cache
        self.vectors: dict[str, Vectors] = {}
        self.stats = PrepareStats()
        self._load_counted = False

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder(self.cache)
        return self._embedder

    def prepare(self, texts: Iterable[str], progress: Progress | None = None) -> None:
        """Make every text of ``texts`` available, encoding only what no cache holds."""
        needed = [
            text
            for text in dict.fromkeys(texts)
            if text not in self.vectors and text not in self._prepared
        ]
        if not needed:
            return
        started = time.perf_counter()
        with self.cache.prepare_lock():
            identity = self.embedder.identity
            found = self.cache.get_many(identity, needed)
            if self._keep_vectors:
                self.vectors.update(found)
            misses = [text for text in needed if text not in found]
            self.stats.lookup_s += time.perf_counter() - started
            self.stats.texts += len(needed)
            self.stats.cached += len(found)
            if misses:
                self._encode(identity, misses, progress)
            if not self._keep_vectors:  # read elsewhere: the file must hold them all
                self._prepared.update(needed)
                self.cache.checkpoint()

    def _encode(self, identity: str, misses: list[str], progress: Progress | None) -> None:
        embedder = self.embedder
        if progress:
            progress.start(len(misses), embedder.name)
        ordered = sorted(misses, key=len, reverse=True)  # similar lengths pad least
        started = time.perf_counter()
        chunks = [
            ordered[begin : begin + ENCODE_CHUNK] for begin in range(0, len(ordered), ENCODE_CHUNK)
        ]
        done = 0
        for chunk, vectors in self._encode_chunks(embedder, chunks):
            if vectors.shape[0] != len(chunk):
                raise RuntimeError(
                    f"{embedder.name} returned {vectors.shape[0]} vectors for {len(chunk)} texts"
                )
            encoded = dict(zip(chunk, vectors, strict=True))
            self.cache.put_many(identity, encoded)
            if self._keep_vectors:
                self.vectors.update(encoded)
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
        """The vectors of ``texts`` in order; a text not prepared is looked up or encoded."""
        import numpy as np

        self.prepare(texts)
        if not texts:
            return np.zeros((0, 0), np.float32)
        elsewhere = [text for text in texts if text not in self.vectors]  # not held here
        stored = self.cache.get_many(self.embedder.identity, elsewhere) if elsewhere else {}
        lost = [text for text in elsewhere if text not in stored]
        if lost:
            raise EncodingError(
                f"{len(lost)} prepared text(s) are not in the embedding cache "
                f"{self.cache.directory} any more; was it removed during the run?"
            )
        return np.stack([self.vectors[t] if t in self.vectors else stored[t] for t in texts])

    def close(self) -> None:
        self.cache.close()
