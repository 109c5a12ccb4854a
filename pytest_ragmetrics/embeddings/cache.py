"""The persistent, content-addressed embedding cache.

One SQLite file, ``embeddings.sqlite3``, in the cache directory (default
``.ragmetrics_cache/`` at the rootdir). An entry's key is ``sha256(model identity, text)``;
its value is the float32 vector with its length and a checksum. Properties users rely on:

* **Safe with several writers.** SQLite serialises writes across processes (pytest-xdist
  workers); ``prepare_lock`` additionally lets one process encode while the others wait,
  so a text is never encoded twice in a run.
* **Never trusts a bad entry.** A vector whose length or checksum does not match is a
  miss and is recomputed. A file that is not a readable database is moved aside (with a
  warning) and a fresh one is started; the run goes on.
* **A directory it can keep, or a clear stop.** The directory (which also holds the live
  systems' outputs and the judge's verdicts) is created and checked for writing on first
  use; one that is a file, or cannot be created or written, is a ``CacheDirError`` naming
  it and the way out, never a half-made cache.
* **Keyed by content.** A different model (or different weights under the same path) or
  different text is a different key; nothing is ever invalidated by hand.

Besides one entry per text, the cache keeps the vectors of the last few *prepared sets*
(every text a run prepared at once) as one packed matrix each, keyed by the set's texts:
a warm run of the same rows reads its thousands of vectors as one row, not one B-tree
lookup per text (``prepared_set``, ``get_set``, ``put_set``). A set is a copy of entries
the cache holds anyway, checked like them; a set that is missing or damaged only sends
the run back to the entries.

It also keeps each analysed answer's sentence spans (``analyses``, written and read by
``pytest_ragmetrics.embeddings.analyses``), keyed by the analysing code's version and the
answer, checked like the vectors: a warm run reads them instead of running Punkt again;
and the last few sets of grounding similarities (``similarity_sets``, written and read by
``pytest_ragmetrics.embeddings.similarities``): a warm run of the same rows reads the
cosine of every sentence and the context it cites, and no vector at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_ragmetrics.embeddings.model import Vectors, file_sha256
from pytest_ragmetrics.files import CACHE_DIR_ENV

DB_NAME = "embeddings.sqlite3"
SCHEMA_VERSION = 1
_CHUNK = 500  # keys per SELECT, well under SQLite's bound-parameter limit
_BUSY_TIMEOUT_MS = 600_000
# Prepared sets kept (the most recently written): enough for a few selections of one
# project's rows, few enough that the copies stay a small multiple of the entries.
KEPT_SETS = 4
# A larger set is not kept whole (its entries are): SQLite refuses a value over 1 GB, and
# the copies should stay a modest share of the disk (about 170,000 vectors of 384 floats).
MAX_SET_BYTES = 256 << 20

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY, dim INTEGER NOT NULL, checksum BLOB NOT NULL, vector BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_digests (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS prepared_sets (
    key BLOB PRIMARY KEY, count INTEGER NOT NULL, dim INTEGER NOT NULL,
    checksum BLOB NOT NULL, vectors BLOB NOT NULL, written_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS analyses (
    key BLOB PRIMARY KEY, checksum BLOB NOT NULL, value BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS similarity_sets (
    key BLOB PRIMARY KEY, checksum BLOB NOT NULL, value BLOB NOT NULL,
    written_ns INTEGER NOT NULL
);
"""


class CacheWarning(UserWarning):
    """The embedding cache was unreadable and has been started afresh, or its optional
    sentence analyses could not be read or stored."""


class CacheDirError(Exception):
    """The cache directory cannot hold the cache: it is a file, or cannot be created or
    written. The message names it and how to fix it; the run stops (a cache that silently
    went unkept would send every later run's texts, live calls and judge verdicts to be
    computed again)."""


_WAY_OUT = (
    f"give the cache a writable directory (--ragmetrics-cache-dir DIR or {CACHE_DIR_ENV}), "
    "or run without one (--ragmetrics-no-cache)"
)


def ready_cache_dir(directory: Path) -> None:
    """Create ``directory`` if need be, mark it as a cache and check that this process can
    create a file in it; ``CacheDirError`` saying what is wrong otherwise."""
    where = f"ragmetrics cache directory {directory}"
    if directory.exists() and not directory.is_dir():
        raise CacheDirError(f"{where}: is a file, not a directory; remove it, or {_WAY_OUT}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CacheDirError(f"{where}: cannot create it ({_reason(error)}); {_WAY_OUT}") from error
    try:
        _mark_cache_dir(directory)
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=directory)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise CacheDirError(
            f"{where}: cannot write in it ({_reason(error)}); make it writable by the user "
            f"running the tests, or {_WAY_OUT}"
        ) from error


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def entry_key(model_identity: str, text: str) -> bytes:
    """The content address of one text's vector under one model."""
    return hashlib.sha256(f"{model_identity}\0{text}".encode()).digest()


def _checksum(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=8).digest()


def _intact(blob: object, checksum: object) -> bool:
    return isinstance(blob, bytes) and _checksum(blob) == checksum


@dataclass(frozen=True)
class PreparedSet:
    """Texts prepared together, as the cache stores their vectors in one matrix.

    ``texts`` are in the set's own order, by entry key, so the same texts listed in any
    order are the same set, stored once; ``key`` names the set under one model: the
    sha256 of its entry keys in that order.
    """

    key: bytes
    texts: tuple[str, ...]


def prepared_set(model_identity: str, texts: Iterable[str]) -> PreparedSet:
    """The prepared set of the distinct ``texts`` under one model."""
    keyed = {entry_key(model_identity, text): text for text in texts}
    order = sorted(keyed)
    key = hashlib.sha256(b"pytest-ragmetrics prepared set v1\0" + b"".join(order)).digest()
    return PreparedSet(key, tuple(keyed[entry] for entry in order))


def _mark_cache_dir(directory: Path) -> None:
    """Keep the cache out of version control and backups, as pytest does for its own."""
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Created by pytest-ragmetrics automatically.\n*\n", encoding="utf-8")
    tag = directory / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by pytest-ragmetrics.\n",
            encoding="utf-8",
        )


class EmbeddingCache:
    """Vectors by (model identity, text), in ``directory/embeddings.sqlite3``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        self._connection: sqlite3.Connection | None = None
        self._directory_ready = False

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self._ready_directory()
            self._connection = self._open()
        return self._connection

    def _ready_directory(self) -> None:
        """The directory created and checked once (``ready_cache_dir``), before the
        database or a lock is put in it."""
        if not self._directory_ready:
            ready_cache_dir(self.directory)
            self._directory_ready = True

    def _open(self) -> sqlite3.Connection:
        for attempt in range(2):
            connection = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000)
            try:
                connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                connection.execute("PRAGMA journal_mode = WAL")
                # A commit need not wait for the disk: in WAL mode the file stays whole
                # either way, and a power cut loses at most the last vectors, which a
                # later run encodes again.
                connection.execute("PRAGMA synchronous = NORMAL")
                version = connection.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, SCHEMA_VERSION):
                    raise sqlite3.DatabaseError(f"unknown cache schema version {version}")
                with connection:
                    connection.executescript(_SCHEMA)
                    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                return connection
            except sqlite3.DatabaseError as error:
                connection.close()
                if attempt:
                    raise
                self._quarantine(error)
        raise AssertionError("unreachable")

    def _quarantine(self, error: Exception) -> None:
        """Move an unreadable database aside so the run can start a fresh one."""
        aside = self.path.with_name(f"{DB_NAME}.corrupt-{time.time_ns()}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            with contextlib.suppress(FileNotFoundError):
                os.replace(source, Path(f"{aside}{suffix}"))
        warnings.warn(
            CacheWarning(
                f"embedding cache {self.path} was unreadable ({error}); "
                f"moved it to {aside.name} and started a new one"
            ),
            stacklevel=2,
        )

    def _recovering(self, operation: str, error: sqlite3.DatabaseError) -> sqlite3.Connection:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._quarantine(sqlite3.DatabaseError(f"{operation}: {error}"))
        return self._connect()

    def get_many(self, model_identity: str, texts: Iterable[str]) -> dict[str, Vectors]:
        """The cached vectors of ``texts`` that are present and intact."""
        keyed = {entry_key(model_identity, text): text for text in texts}
        try:
            return EmbeddingCache._select(self._connect(), keyed)
        except sqlite3.DatabaseError as error:
            self._recovering("read", error)
            return {}

    @staticmethod
    def _select(connection: sqlite3.Connection, keyed: Mapping[bytes, str]) -> dict[str, Vectors]:
        import numpy as np

        found: dict[str, Vectors] = {}
        keys = list(keyed)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = connection.execute(
                f"SELECT key, dim, checksum, vector FROM vectors WHERE key IN ({marks})", chunk
            )
            for key, dim, checksum, blob in rows:
                if len(blob) != 4 * dim or _checksum(blob) != checksum:
                    continue  # truncated or corrupted: a miss, recomputed and overwritten
                found[keyed[key]] = np.frombuffer(blob, dtype=np.float32)
        return found

    def get_set(self, prepared: PreparedSet) -> Vectors | None:
        """The vectors of ``prepared``'s texts, a row each in its order, when the set is
        stored and intact; ``None`` otherwise (the caller reads the entries instead)."""
        import numpy as np

        try:
            row = (
                self._connect()
                .execute(
                    "SELECT count, dim, checksum, vectors FROM prepared_sets WHERE key = ?",
                    (prepared.key,),
                )
                .fetchone()
            )
        except sqlite3.DatabaseError as error:
            self._recovering("read", error)
            return None
        if row is None:
            return None
        count, dim, checksum, blob = row
        intact = len(blob) == 4 * count * dim and _checksum(blob) == checksum
        if not intact or count != len(prepared.texts):
            return None  # damaged: the entries are read, and the set written again
        return np.frombuffer(blob, dtype=np.float32).reshape(count, dim)

    def put_set(self, prepared: PreparedSet, vectors: Vectors) -> None:
        """Store ``vectors`` (a row per text of ``prepared``, in its order) as the set,
        keeping only the ``KEPT_SETS`` most recently written sets; a set of more than
        ``MAX_SET_BYTES`` is not stored (its texts are read entry by entry)."""
        import numpy as np

        if vectors.ndim != 2 or vectors.shape[0] != len(prepared.texts):
            raise ValueError(
                f"a prepared set of {len(prepared.texts)} texts needs as many rows of "
                f"vectors; got an array of shape {vectors.shape}"
            )
        if 4 * vectors.size > MAX_SET_BYTES:
            return
        blob = np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
        row = (prepared.key, vectors.shape[0], vectors.shape[1], _checksum(blob), blob)

        def write(connection: sqlite3.Connection) -> None:
            with connection:
                connection.execute(
                    "INSERT OR REPLACE INTO prepared_sets VALUES (?, ?, ?, ?, ?, ?)",
                    (*row, time.time_ns()),
                )
                connection.execute(
                    "DELETE FROM prepared_sets WHERE key NOT IN (SELECT key FROM "
                    "prepared_sets ORDER BY written_ns DESC LIMIT ?)",
                    (KEPT_SETS,),
                )

        try:
            write(self._connect())
        except sqlite3.DatabaseError as error:
            write(self._recovering("write", error))

    def get_analyses(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The stored analyses under ``keys`` that are present and intact (a damaged one
        is a miss, analysed again and overwritten). Analyses are optional: a failure
        reading them is a warning and no analysis, never the vectors moved aside."""
        found: dict[bytes, bytes] = {}
        wanted = list(dict.fromkeys(keys))
        connection = self._connect()
        try:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT key, checksum, value FROM analyses WHERE key IN ({marks})", chunk
                )
                found.update((key, blob) for key, checksum, blob in rows if _intact(blob, checksum))
        except sqlite3.DatabaseError as error:
            self._analyses_failed("reading", error)
            return {}
        return found

    def put_analyses(self, analyses: Mapping[bytes, bytes]) -> None:
        """Store analyses by key (replacing any under the same key) in one transaction;
        a failure is a warning (the answers are analysed again by the next run)."""
        rows = [(key, _checksum(blob), blob) for key, blob in analyses.items()]
        connection = self._connect()
        try:
            with connection:
                connection.executemany("INSERT OR REPLACE INTO analyses VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError as error:
            self._analyses_failed("storing", error)

    def _analyses_failed(self, doing: str, error: sqlite3.DatabaseError) -> None:
        self._optional_failed(
            f"{doing} the answers' sentence analyses",
            error,
            "the answers are analysed now, the vectors are kept",
        )

    def _optional_failed(self, what: str, error: sqlite3.DatabaseError, instead: str) -> None:
        """Warn that reading or storing an optional table failed, and what is done
        instead; the vectors are never moved aside for it."""
        warnings.warn(
            CacheWarning(f"embedding cache {self.path}: {what} failed ({error}); {instead}"),
            stacklevel=4,
        )

    def get_similarity_set(self, key: bytes) -> bytes | None:
        """The similarity set stored under ``key`` when it is there and intact; ``None``
        otherwise. Like the analyses, optional: a failure reading it is a warning and no
        set (the similarities are computed from the vectors), never the vectors moved
        aside."""
        connection = self._connect()
        try:
            row = connection.execute(
                "SELECT checksum, value FROM similarity_sets WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError as error:
            self._similarities_failed("reading", error)
            return None
        if row is None or not _intact(row[1], row[0]):
            return None
        blob: bytes = row[1]
        return blob

    def put_similarity_set(self, key: bytes, blob: bytes) -> None:
        """Store a similarity set under ``key``, keeping the ``KEPT_SETS`` most recently
        written; a failure is a warning (the next run computes them again)."""
        connection = self._connect()
        try:
            with connection:
                connection.execute(
                    "INSERT OR REPLACE INTO similarity_sets VALUES (?, ?, ?, ?)",
                    (key, _checksum(blob), blob, time.time_ns()),
                )
                connection.execute(
                    "DELETE FROM similarity_sets WHERE key NOT IN (SELECT key FROM "
                    "similarity_sets ORDER BY written_ns DESC LIMIT ?)",
                    (KEPT_SETS,),
                )
        except sqlite3.DatabaseError as error:
            self._similarities_failed("storing", error)

    def _similarities_failed(self, doing: str, error: sqlite3.DatabaseError) -> None:
        self._optional_failed(
            f"{doing} the grounding similarities",
            error,
            "they are computed from the vectors, which are kept",
        )

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file, so that readers that share
        neither this machine's memory nor its locks (``read_vectors``) see every vector."""
        if self._connection is not None:
            self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def put_many(self, model_identity: str, vectors: Mapping[str, Vectors]) -> None:
        """Store vectors (replacing any entry under the same key) in one transaction."""
        import numpy as np

        rows = []
        for text, vector in vectors.items():
            blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
            rows.append((entry_key(model_identity, text), len(blob) // 4, _checksum(blob), blob))
        statement = "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)"
        try:
            connection = self._connect()
            with connection:
                connection.executemany(statement, rows)
        except sqlite3.DatabaseError as error:
            connection = self._recovering("write", error)
            with connection:
                connection.executemany(statement, rows)

    def file_digest(self, path: Path, stat: os.stat_result) -> str:
        """The sha256 of a file, memoised by path, size and modification time."""
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        try:
            connection = self._connect()
            row = connection.execute(
                "SELECT sha256 FROM file_digests WHERE path = ? AND size = ? AND mtime_ns = ?",
                key,
            ).fetchone()
        except sqlite3.DatabaseError as error:
            connection, row = self._recovering("read", error), None
        if row is not None:
            return str(row[0])
        digest = file_sha256(path)
        with connection:
            connection.execute(
                "INSERT OR REPLACE INTO file_digests VALUES (?, ?, ?, ?)", (*key, digest)
            )
        return digest

    @contextlib.contextmanager
    def prepare_lock(self) -> Iterator[None]:
        """Held while one process looks up and encodes, so others wait and then hit."""
        from filelock import FileLock

        self._ready_directory()
        with FileLock(self.directory / "prepare.lock"):
            yield

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class CacheReadError(Exception):
    """The cache could not be read where it was opened read-only (``read_vectors``)."""


def read_vectors(directory: Path, model_identity: str, texts: Iterable[str]) -> dict[str, Vectors]:
    """The cached vectors of ``texts``, read without writing anything: no folder or schema
    is created, no journal mode set, and a database that cannot be read is reported
    (``CacheReadError``), never moved aside. For processes that only read a cache another
    process has written and checkpointed, such as the Ray engine's workers on a shared file
    system. A vector read while the file changes fails its checksum: a miss, never a wrong
    vector."""
    path = directory / DB_NAME
    if not path.is_file():
        raise CacheReadError(f"{path}: no embedding cache there")
    try:
        # immutable: no lock, no -shm or -wal file, which a reader on another node of a
        # network file system could not share; the writer checkpoints first (checkpoint)
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as error:
        raise CacheReadError(f"{path}: {error}") from None
    try:
        connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        keyed = {entry_key(model_identity, text): text for text in texts}
        return EmbeddingCache._select(connection, keyed)
    except sqlite3.Error as error:
        raise CacheReadError(f"{path}: {error}") from None
    finally:
        connection.close()
