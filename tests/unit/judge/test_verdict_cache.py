"""The judge's verdict cache keeps its content addresses and entry files byte for byte.

The expected key is the sha256 of a canonical request text written out by hand (sorted
keys, no spaces, non-ASCII escaped), and the expected entry is written out by hand too
(indented by two, sorted keys, non-ASCII kept), so any change that would orphan the
verdicts users have cached fails here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pytest_ragmetrics.judge.cache import VerdictCache, cache_key
from pytest_ragmetrics.judge.verdicts import Call, Reply

KEYED: dict[str, Any] = {
    "model": "m1",
    "messages": [{"role": "user", "content": "Où?"}],
    "temperature": 0,
    "max_tokens": 256,
    "base_url": "http://127.0.0.1:9",
    "repeat": 0,
}
CANONICAL = (
    '{"base_url":"http://127.0.0.1:9","max_tokens":256,'
    '"messages":[{"content":"O\\u00f9?","role":"user"}],"model":"m1","repeat":0,'
    '"temperature":0}'
)
KEY = hashlib.sha256(CANONICAL.encode("ascii")).hexdigest()
ENTRY = """{
  "completion_tokens": 4,
  "content": "{\\"score\\": 1, \\"reason\\": \\"é\\"}",
  "format": 1,
  "latency_ms": 12.5,
  "prompt_tokens": 30,
  "request": {
    "base_url": "http://127.0.0.1:9",
    "max_tokens": 256,
    "messages": [
      {
        "content": "Où?",
        "role": "user"
      }
    ],
    "model": "m1",
    "repeat": 0,
    "temperature": 0
  },
  "run": "run-1"
}
"""
REPLY = Reply('{"score": 1, "reason": "é"}', Call(False, 12.5, 1, 30, 4))


class Asks:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> Reply:
        self.count += 1
        return REPLY


def test_the_cache_key_is_the_sha256_of_the_escaped_canonical_request() -> None:
    assert cache_key(KEYED) == KEY


def test_an_entry_is_written_where_and_as_it_always_was_and_replayed(tmp_path: Path) -> None:
    ask = Asks()
    assert VerdictCache(tmp_path, "run-1").reply(KEYED, ask) == REPLY
    entry = tmp_path / KEY[:2] / f"{KEY}.json"
    assert entry.read_text(encoding="utf-8") == ENTRY
    replayed = VerdictCache(tmp_path, "run-2").reply(KEYED, ask)
    assert ask.count == 1
    assert replayed == Reply(REPLY.content, Call(True, 12.5, 0, 30, 4))


def test_refresh_ignores_entries_of_other_runs_only(tmp_path: Path) -> None:
    ask = Asks()
    VerdictCache(tmp_path, "run-1").reply(KEYED, ask)
    VerdictCache(tmp_path, "run-2", refresh=True).reply(KEYED, ask)
    assert ask.count == 2
    VerdictCache(tmp_path, "run-2", refresh=True).reply(KEYED, ask)
    assert ask.count == 2


def test_an_entry_for_another_request_is_a_miss(tmp_path: Path) -> None:
    ask = Asks()
    entry = tmp_path / KEY[:2] / f"{KEY}.json"
    entry.parent.mkdir()
    entry.write_text(ENTRY.replace('"model": "m1"', '"model": "m2"'), encoding="utf-8")
    VerdictCache(tmp_path, "run-1").reply(KEYED, ask)
    assert ask.count == 1
    assert entry.read_text(encoding="utf-8") == ENTRY
