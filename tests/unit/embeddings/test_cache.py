"""The embedding cache and the prepare step, with a fake embedder (no model needed)."""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from helpers.files import make_read_only

from pytest_ragmetrics.embeddings import cache as cache_module
from pytest_ragmetrics.embeddings.cache import (
    DB_NAME,
    KEPT_SETS,
    CacheDirError,
    CacheReadError,
    CacheWarning,
    EmbeddingCache,
    entry_key,
    prepared_set,
    read_vectors,
)
from pytest_ragmetrics.embeddings.model import Vectors, model_fingerprint
from pytest_ragmetrics.embeddings.prepare import (
    ENCODE_CHUNK,
    EmbeddingStore,
    PackedVectors,
    PrepareStats,
)


def vector(text: str) -> Vectors:
    """A deterministic vector per text, from its hash."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    return np.random.default_rng(seed).standard_normal(8).astype(np.float32)


class FakeEmbedder:
    """Records every text it encodes; optionally appends them to a log file."""

    name = "fake"
    identity = "fake-model-v1"

    def __init__(self, log: Path | None = None, delay: float = 0.0) -> None:
        self.encoded: list[list[str]] = []
        self.log = log
        self.delay = delay

    def encode(self, texts: Sequence[str]) -> Vectors:
        time.sleep(self.delay)  # a slow model, so that concurrent processes overlap
        self.encoded.append(list(texts))
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.writelines(f"{text}\n" for text in texts)
        return np.stack([vector(text) for text in texts])


def store_for(directory: Path, embedder: FakeEmbedder) -> EmbeddingStore:
    return EmbeddingStore(lambda cache: embedder, EmbeddingCache(directory))


def test_vectors_round_trip_bit_for_bit(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put_many("m", {"a": vector("a"), "b": vector("b")})
    found = cache.get_many("m", ["a", "b", "c"])
    assert sorted(found) == ["a", "b"]
    assert found["a"].tobytes() == vector("a").tobytes()
    assert cache.get_many("other model", ["a"]) == {}
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == "*"


def _tamper(directory: Path, sql: str, *args: object) -> None:
    with sqlite3.connect(directory / DB_NAME) as connection:
        connection.execute(sql, args)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE vectors SET vector = substr(vector, 1, 12) WHERE key = ?",  # truncated
        "UPDATE vectors SET vector = zeroblob(32) WHERE key = ?",  # right length, wrong bytes
        "UPDATE vectors SET dim = 9 WHERE key = ?",  # length no longer matches
    ],
)
def test_a_damaged_entry_is_a_miss_and_is_recomputed(tmp_path: Path, sql: str) -> None:
    embedder = FakeEmbedder()
    store_for(tmp_path, embedder).prepare(["a", "b"])
    _tamper(tmp_path, sql, entry_key(embedder.identity, "a"))
    again = FakeEmbedder()
    store = store_for(tmp_path, again)
    store.prepare(["a"])  # not the set stored whole: read entry by entry
    assert again.encoded == [["a"]]
    assert store.vectors["a"].tobytes() == vector("a").tobytes()
    assert EmbeddingCache(tmp_path).get_many(embedder.identity, ["a"])["a"].shape == (8,)


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"this is not a database" * 100),
        lambda path: path.write_bytes(path.read_bytes()[:600]),  # truncated mid-page
    ],
    ids=["garbage", "truncated"],
)
def test_an_unreadable_database_is_moved_aside_with_a_warning(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    first = EmbeddingCache(tmp_path)
    first.put_many("m", {f"t{i}": vector(f"t{i}") for i in range(200)})
    first.close()
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
    damage(tmp_path / DB_NAME)
    embedder = FakeEmbedder()
    store = store_for(tmp_path, embedder)
    with pytest.warns(CacheWarning, match="unreadable"):
        store.prepare(["t1", "new"])
    assert sorted(text for call in embedder.encoded for text in call) == ["new", "t1"]
    assert list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))
    assert sorted(EmbeddingCache(tmp_path).get_many(embedder.identity, ["t1", "new"])) == [
        "new",
        "t1",
    ]


def test_prepare_encodes_only_unique_misses_longest_first(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    store = store_for(tmp_path, embedder)
    store.prepare(["bb", "a", "bb", "ccc"])
    assert embedder.encoded == [["ccc", "bb", "a"]]
    assert store.stats.texts == 3
    assert store.stats.encoded == 3
    assert store.stats.cached == 0
    store.prepare(["a", "dddd"])  # "a" is in memory already
    assert embedder.encoded[-1] == ["dddd"]
    assert store.embed(["a", "ccc"]).tolist() == [vector("a").tolist(), vector("ccc").tolist()]

    warm = FakeEmbedder()
    warm_store = store_for(tmp_path, warm)
    warm_store.prepare(["a", "bb", "ccc", "dddd"])
    assert warm.encoded == []
    assert (warm_store.stats.cached, warm_store.stats.encoded) == (4, 0)


def test_prepare_encodes_in_chunks_and_reports_progress(tmp_path: Path) -> None:
    events: list[tuple[str, object]] = []

    class Recorder:
        def start(self, total: int, model: str) -> None:
            events.append(("start", (total, model)))

        def advance(self, done: int, total: int) -> None:
            events.append(("advance", (done, total)))

        def finish(self, stats: PrepareStats) -> None:
            events.append(("finish", stats.encoded))

    embedder = FakeEmbedder()
    total = ENCODE_CHUNK + 5
    store_for(tmp_path, embedder).prepare([f"text {i}" for i in range(total)], Recorder())
    assert [len(call) for call in embedder.encoded] == [ENCODE_CHUNK, 5]
    assert events == [
        ("start", (total, "fake")),
        ("advance", (ENCODE_CHUNK, total)),
        ("advance", (total, total)),
        ("finish", total),
    ]


def _prepare_in_process(directory: str, log: str, texts: list[str]) -> None:
    store_for(Path(directory), FakeEmbedder(Path(log), delay=2.0)).prepare(texts)


def test_concurrent_processes_never_encode_a_text_twice(tmp_path: Path) -> None:
    texts = [f"shared text {i}" for i in range(300)]
    log = tmp_path / "encoded.log"
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_prepare_in_process, args=(str(tmp_path / "c"), str(log), texts))
        for _ in range(3)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
    assert [process.exitcode for process in processes] == [0, 0, 0]
    encoded = log.read_text(encoding="utf-8").splitlines()
    assert sorted(encoded) == sorted(texts)  # each text once, by whichever process won
    found = EmbeddingCache(tmp_path / "c").get_many(FakeEmbedder.identity, texts)
    assert len(found) == len(texts)


def test_file_digests_are_memoised_by_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"abc")
    cache = EmbeddingCache(tmp_path / "cache")
    expected = hashlib.sha256(b"abc").hexdigest()
    assert cache.file_digest(weights, weights.stat()) == expected

    def no_reading(path: Path) -> str:
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(cache_module, "file_sha256", no_reading)
    assert cache.file_digest(weights, weights.stat()) == expected


def test_model_fingerprint_follows_file_content(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights v1")
    (tmp_path / "README.md").write_text("a model card")
    before = model_fingerprint(tmp_path)
    (tmp_path / "README.md").write_text("an edited model card")
    assert model_fingerprint(tmp_path) == before  # the card does not change vectors
    (tmp_path / "model.safetensors").write_bytes(b"weights v2")
    assert model_fingerprint(tmp_path) != before


def test_a_store_that_keeps_no_vectors_stores_them_and_still_embeds(tmp_path: Path) -> None:
    """The Ray engine's store: vectors go to the cache only (its workers read them
    there), nothing encodes twice, and an embed in this process reads the cache."""
    embedder = FakeEmbedder()
    store = EmbeddingStore(lambda cache: embedder, EmbeddingCache(tmp_path), keep_vectors=False)
    store.prepare(["bb", "a"])
    store.prepare(["a", "bb"])  # prepared already: neither looked up nor encoded again
    assert store.vectors == {}
    assert embedder.encoded == [["bb", "a"]]
    assert (store.stats.texts, store.stats.encoded) == (2, 2)
    assert store.embed(["a", "bb"]).tolist() == [vector("a").tolist(), vector("bb").tolist()]
    # read while the store is still open: prepare checkpointed what it wrote
    assert read_vectors(tmp_path, "fake-model-v1", ["a"])["a"].tolist() == vector("a").tolist()


def test_reading_read_only_writes_nothing_and_moves_nothing_aside(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put_many("m", {"a": vector("a"), "b": vector("b")})
    cache.close()
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir())
    found = read_vectors(tmp_path, "m", ["a", "b", "c"])
    assert sorted(found) == ["a", "b"]  # "c" is a miss
    assert found["b"].tolist() == vector("b").tolist()
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir()) == before
    with pytest.raises(CacheReadError, match="no embedding cache there"):
        read_vectors(tmp_path / "elsewhere", "m", ["a"])
    assert not (tmp_path / "elsewhere").exists()
    (tmp_path / DB_NAME).write_bytes(b"not a database at all, but long enough" * 100)
    with pytest.raises(CacheReadError, match=DB_NAME):
        read_vectors(tmp_path, "m", ["a"])
    assert (tmp_path / DB_NAME).exists()  # never moved aside


def _sets(directory: Path) -> int:
    with sqlite3.connect(directory / DB_NAME) as connection:
        count: int = connection.execute("SELECT count(*) FROM prepared_sets").fetchone()[0]
    return count


def _no_entries(cache: EmbeddingCache, identity: str, texts: object) -> dict[str, Vectors]:
    raise AssertionError("the entries were read, not the prepared set")


def test_a_warm_run_reads_its_prepared_set_whole_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"text {i}" for i in range(50)]
    store_for(tmp_path, FakeEmbedder()).prepare(texts)
    assert _sets(tmp_path) == 1
    monkeypatch.setattr(EmbeddingCache, "get_many", _no_entries)
    warm = FakeEmbedder()
    store = store_for(tmp_path, warm)
    store.prepare(reversed(texts))
    assert warm.encoded == []
    assert (store.stats.texts, store.stats.cached, store.stats.encoded) == (50, 50, 0)
    assert store.embed(texts).tobytes() == np.stack([vector(t) for t in texts]).tobytes()


def test_a_stored_set_is_read_without_waiting_for_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is left to encode, so nothing to wait for; a set not stored takes the lock."""
    texts = ["a", "b", "c"]
    store_for(tmp_path, FakeEmbedder()).prepare(texts)

    def no_lock(cache: EmbeddingCache) -> object:
        raise AssertionError("the lock was taken")

    monkeypatch.setattr(EmbeddingCache, "prepare_lock", no_lock)
    warm = store_for(tmp_path, FakeEmbedder())
    warm.prepare(texts)
    assert warm.stats.cached == 3
    with pytest.raises(AssertionError, match="the lock was taken"):
        store_for(tmp_path, FakeEmbedder()).prepare(["a", "b"])


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE prepared_sets SET vectors = substr(vectors, 1, 12)",  # truncated
        "UPDATE prepared_sets SET vectors = zeroblob(length(vectors))",  # wrong bytes
        "UPDATE prepared_sets SET count = 2, dim = 12",  # same length, other shape
    ],
)
def test_a_damaged_prepared_set_sends_the_run_to_the_entries(tmp_path: Path, sql: str) -> None:
    texts = ["a", "b", "c"]
    store_for(tmp_path, FakeEmbedder()).prepare(texts)
    _tamper(tmp_path, sql)
    again = FakeEmbedder()
    store = store_for(tmp_path, again)
    store.prepare(texts)
    assert again.encoded == []  # the entries were intact
    assert store.stats.cached == 3
    assert store.embed(texts).tobytes() == np.stack([vector(t) for t in texts]).tobytes()
    stored = EmbeddingCache(tmp_path).get_set(prepared_set(again.identity, texts))
    assert stored is not None  # written again, intact
    assert sorted(map(bytes, stored)) == sorted(vector(t).tobytes() for t in texts)


def test_only_the_latest_prepared_sets_are_kept(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    for run in range(KEPT_SETS + 2):
        store_for(tmp_path, embedder).prepare([f"run {run}", "shared"])
    assert _sets(tmp_path) == KEPT_SETS
    cache = EmbeddingCache(tmp_path)
    assert cache.get_set(prepared_set(embedder.identity, ["run 0", "shared"])) is None
    latest = prepared_set(embedder.identity, [f"run {KEPT_SETS + 1}", "shared"])
    assert cache.get_set(latest) is not None


def test_a_prepared_set_too_large_is_not_kept_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "MAX_SET_BYTES", 2 * 8 * 4)  # two vectors of 8 floats
    store_for(tmp_path, FakeEmbedder()).prepare(["a", "b", "c"])
    store_for(tmp_path, FakeEmbedder()).prepare(["a", "b"])
    cache = EmbeddingCache(tmp_path)
    assert cache.get_set(prepared_set(FakeEmbedder.identity, ["a", "b", "c"])) is None
    assert cache.get_set(prepared_set(FakeEmbedder.identity, ["a", "b"])) is not None


def test_texts_embedded_outside_prepare_are_no_prepared_set(tmp_path: Path) -> None:
    store = store_for(tmp_path, FakeEmbedder())
    store.prepare(["a"])
    store.embed(["b", "c"])  # a row's own texts: cached one by one, not as a set
    assert _sets(tmp_path) == 1


def test_packed_vectors_give_each_text_its_row() -> None:
    packed = PackedVectors()
    for start in range(0, 40, 3):  # many small groups: the matrix grows
        names = [f"t{i}" for i in range(start, min(start + 3, 40))]
        packed.add(names, np.stack([vector(name) for name in names]))
    packed.add(["t5"], vector("other")[None, :])  # held already: keeps its row
    order = ["t39", "t0", "t5", "t0"]
    assert packed.rows(order).tobytes() == np.stack([vector(t) for t in order]).tobytes()
    assert len(packed) == 40
    assert "t7" in packed
    assert "t40" not in packed
    assert packed["t3"].tobytes() == vector("t3").tobytes()
    with pytest.raises(ValueError, match="4 dimensions cannot join the 8"):
        packed.add(["new"], np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match="2 text"):
        packed.add(["x", "y"], np.zeros((1, 8), np.float32))


@pytest.mark.parametrize("operation", ["read", "write"])
def test_a_failure_with_the_analyses_is_a_warning_and_keeps_the_vectors(
    tmp_path: Path, operation: str
) -> None:
    cache = EmbeddingCache(tmp_path)
    vector = np.array([1.0, 2.0], dtype=np.float32)
    cache.put_many("model", {"kept": vector})
    with sqlite3.connect(tmp_path / DB_NAME) as other:  # the analyses table is lost
        other.execute("DROP TABLE analyses")
    if operation == "read":
        with pytest.warns(CacheWarning, match="reading the answers' sentence analyses failed"):
            found = cache.get_analyses([b"key"])
        assert found == {}
    else:
        with pytest.warns(CacheWarning, match="storing the answers' sentence analyses failed"):
            cache.put_analyses({b"key": b"spans"})
    assert not list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))  # nothing moved aside
    np.testing.assert_array_equal(cache.get_many("model", ["kept"])["kept"], vector)
    cache.close()


# --- a cache directory that cannot be kept ---------------------------------------------


def test_a_cache_directory_that_is_a_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "cache"
    target.write_text("mine", encoding="utf-8")
    store = store_for(target, FakeEmbedder())
    with pytest.raises(CacheDirError) as raised:
        store.prepare(["a text"])
    assert str(raised.value) == (
        f"ragmetrics cache directory {target}: is a file, not a directory; remove it, or "
        "give the cache a writable directory (--ragmetrics-cache-dir DIR or "
        "RAGMETRICS_CACHE_DIR), or run without one (--ragmetrics-no-cache)"
    )
    assert target.read_text(encoding="utf-8") == "mine"


def test_a_cache_directory_under_a_file_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine", encoding="utf-8")
    target = tmp_path / "file" / "cache"
    with pytest.raises(CacheDirError, match=r"cannot create it \(Not a directory\); give "):
        EmbeddingCache(target).get_many("m", ["a text"])
    assert (tmp_path / "file").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("warm", [False, True], ids=["empty", "warm"])
def test_a_read_only_cache_directory_is_refused_and_nothing_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool
) -> None:
    target = tmp_path / "cache"
    target.mkdir()
    if warm:
        written = EmbeddingCache(target)
        written.put_many("fake-model-v1", {"a text": vector("a text")})
        written.checkpoint()
        written.close()
    before = sorted(path.name for path in target.iterdir())
    make_read_only(target, monkeypatch)
    embedder = FakeEmbedder()
    with pytest.raises(CacheDirError) as raised:
        store_for(target, embedder).prepare(["a text"])
    message = str(raised.value)
    assert message.startswith(f"ragmetrics cache directory {target}: cannot write in it (")
    assert "make it writable by the user running the tests, or give the cache" in message
    assert embedder.encoded == []
    assert sorted(path.name for path in target.iterdir()) == before


def test_the_prepare_lock_checks_the_directory_too(tmp_path: Path) -> None:
    target = tmp_path / "cache"
    target.write_text("mine", encoding="utf-8")
    lock = EmbeddingCache(target).prepare_lock()
    with pytest.raises(CacheDirError, match="is a file, not a directory"), lock:
        pass
