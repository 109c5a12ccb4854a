"""The shared file helpers: canonical JSON digests, strict JSON, the JSON entry cache and
settings paths.

Every pinned digest is computed here from a canonical text written out by hand, so a
change of separators, key order, escaping or length in any hasher fails: users' caches
and baselines are keyed by these digests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics import LiveSystem
from pytest_ragmetrics.files import (
    CacheEntryError,
    JsonEntryCache,
    canonical_json,
    json_digest,
    loads_finite,
    resolve_setting,
)
from pytest_ragmetrics.live.cache import OutputCache
from pytest_ragmetrics.metrics.trust.judges import judge_for
from pytest_ragmetrics.results.baseline import input_digest


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- canonical JSON and digests ------------------------------------------------------------


def test_canonical_json_sorts_keys_drops_spaces_and_escapes_only_when_asked() -> None:
    value = {"b": [1, 2.5], "a": "Où"}
    assert canonical_json(value, ascii_only=True) == '{"a":"O\\u00f9","b":[1,2.5]}'
    assert canonical_json(value, ascii_only=False) == '{"a":"Où","b":[1,2.5]}'


def test_json_digest_is_the_sha256_of_the_canonical_text_cut_to_length() -> None:
    value = {"b": 1, "a": "é"}
    assert json_digest(value, ascii_only=True) == sha256_hex('{"a":"\\u00e9","b":1}')
    assert (
        json_digest(value, ascii_only=False, hex_digits=16) == (sha256_hex('{"a":"é","b":1}')[:16])
    )


def test_a_live_fingerprint_hashes_name_version_and_config_unescaped() -> None:
    system = LiveSystem("topk", lambda q: {"answer": q}, version="2", config={"k": 5, "m": "é"})
    canonical = '{"config":{"k":5,"m":"é"},"name":"topk","version":"2"}'
    assert system.fingerprint == sha256_hex(canonical)[:16]


def test_a_rows_input_digest_hashes_its_inputs_escaped() -> None:
    row = {"id": "q1", "question": "Où?", "gold": ["Paris"], "answer": "Paris", "tokens": 3}
    canonical = '{"gold":["Paris"],"question":"O\\u00f9?"}'
    assert input_digest(row) == sha256_hex(canonical)[:16]


# --- strict JSON ---------------------------------------------------------------------------


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_without_nan_or_infinity(constant: str) -> None:
    with pytest.raises(ValueError, match=f"^{constant} is not a number here$"):
        loads_finite(f'{{"x": [1, {constant}]}}', refusal="is not a number here")
    with pytest.raises(ValueError, match=f"^{constant} is not JSON$"):
        loads_finite(f"[{constant}]".encode())


def test_strict_json_reads_ordinary_numbers_and_takes_a_pairs_hook() -> None:
    assert loads_finite('{"x": 1e308, "y": -0.5}') == {"x": 1e308, "y": -0.5}
    assert loads_finite('{"b": 1, "a": 2}', object_pairs_hook=list) == [("b", 1), ("a", 2)]


# --- the JSON entry cache ------------------------------------------------------------------


def _render(entry: Any) -> str:
    return json.dumps(entry) + "\n"


def _accept_value(entry: Any) -> int | None:
    return entry.get("value") if isinstance(entry, dict) else None


class Computations:
    def __init__(self, value: int) -> None:
        self.value = value
        self.calls = 0

    def __call__(self) -> tuple[int, Any]:
        self.calls += 1
        return self.value, {"value": self.value}


def test_an_entry_is_computed_once_written_as_rendered_then_read(tmp_path: Path) -> None:
    cache: JsonEntryCache[int] = JsonEntryCache(tmp_path / "c", _render)
    compute = Computations(7)
    assert cache.fetch("ab/key.json", _accept_value, compute) == 7
    assert cache.fetch("ab/key.json", _accept_value, compute) == 7
    assert compute.calls == 1
    assert (tmp_path / "c" / "ab" / "key.json").read_text() == '{"value": 7}\n'
    assert (tmp_path / "c" / "ab" / "key.json.lock").exists()


@pytest.mark.parametrize(
    "damage",
    [b'{"value": 7', b"\xff\xfe not UTF-8", b'{"other": 1}', b"[" * 100_000 + b"]" * 100_000],
    ids=["torn", "not-utf8", "refused", "too-deep"],
)
def test_a_damaged_or_refused_entry_is_a_miss_and_is_replaced(
    tmp_path: Path, damage: bytes
) -> None:
    entry = tmp_path / "key.json"
    entry.write_bytes(damage)
    cache: JsonEntryCache[int] = JsonEntryCache(tmp_path, _render)
    compute = Computations(3)
    assert cache.fetch("key.json", _accept_value, compute) == 3
    assert compute.calls == 1
    assert entry.read_text() == '{"value": 3}\n'


def test_an_entry_that_cannot_be_read_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "key.json").mkdir()  # a directory where the entry belongs
    cache: JsonEntryCache[int] = JsonEntryCache(tmp_path, _render)
    compute = Computations(3)
    with pytest.raises(CacheEntryError, match=r"key\.json: cannot read this cache entry"):
        cache.fetch("key.json", _accept_value, compute)
    assert compute.calls == 0


def test_a_failed_computation_writes_nothing(tmp_path: Path) -> None:
    cache: JsonEntryCache[int] = JsonEntryCache(tmp_path, _render)

    def fail() -> tuple[int, Any]:
        raise RuntimeError("the system is down")

    with pytest.raises(RuntimeError, match="the system is down"):
        cache.fetch("key.json", _accept_value, fail)
    assert not (tmp_path / "key.json").exists()


def test_a_live_output_entry_keeps_its_path_and_bytes(tmp_path: Path) -> None:
    system = LiveSystem("s", lambda q: {"answer": "é", "latency_ms": 5})
    OutputCache(tmp_path, "run-1").output(system, "Où?")
    OutputCache(tmp_path, "run-1").output(system, "Où?", repeat=1)
    folder = tmp_path / "live" / sha256_hex('{"config":{},"name":"s","version":"1"}')[:16]
    question = sha256_hex("Où?")
    entry = (
        '{"config":{},"format":1,"output":{"answer":"é","latency_ms":5},"question":"Où?",'
        '"repeat":%d,"run":"run-1","system":"s","version":"1"}\n'
    )
    assert (folder / f"{question}.json").read_text(encoding="utf-8") == entry % 0
    assert (folder / f"{question}.repeat1.json").read_text(encoding="utf-8") == entry % 1


# --- settings paths ------------------------------------------------------------------------


class UsageError(Exception):
    pass


def test_a_settings_path_in_a_symlink_loop_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(UsageError) as raised:
        resolve_setting(tmp_path / "a" / "model", lambda problem: UsageError(f"x: {problem}"))
    assert str(raised.value) == f"x: cannot resolve {tmp_path / 'a' / 'model'}: symlink loop"


def test_a_settings_path_resolves_through_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert resolve_setting(tmp_path / "link", UsageError) == (tmp_path / "real").resolve()


def test_a_trust_judge_table_in_a_symlink_loop_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(ValueError, match="cannot resolve") as raised:
        judge_for("table:a", tmp_path, lambda texts: None, 0.5)
    assert (
        str(raised.value) == f"trust_judge 'table:a': cannot resolve {tmp_path / 'a'}: symlink loop"
    )
