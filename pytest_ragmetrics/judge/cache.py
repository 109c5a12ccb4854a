"""The judge's verdict cache: replies kept by the content address of their request.

A reply is keyed by everything that decides it (endpoint, model, messages, temperature,
max_tokens, repeat), so a re-run sends nothing and reports the same scores, latencies
and token counts. An entry holds the raw reply text, not the parsed verdict (see
``Reply``), with the request it answers, which is compared on reading: a digest collision
or a hand-edited entry is a miss, never another question's verdict.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import JsonEntryCache, json_digest
from pytest_ragmetrics.judge.verdicts import Call, Reply, is_token_count, token_count

CACHE_FORMAT = 1  # bumped when the layout of a cache entry changes; old entries are misses


def cache_key(request: Mapping[str, Any]) -> str:
    """The content address of a reply: the sha256 (64 hex digits) of the request's
    canonical JSON, non-ASCII characters escaped."""
    return json_digest(request, ascii_only=True)


def _render(entry: Any) -> str:
    return json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class VerdictCache:
    """Replies on disk under ``directory``, at ``<key[:2]>/<key>.json``.

    ``run_id`` is shared by every process of a run; with ``refresh``, entries of earlier
    runs are ignored (and replaced), while those this run wrote are reused.
    """

    def __init__(self, directory: Path, run_id: str, refresh: bool = False) -> None:
        self._entries: JsonEntryCache[Reply] = JsonEntryCache(directory, _render)
        self._run_id = run_id
        self._refresh = refresh

    def reply(self, keyed: Mapping[str, Any], ask: Callable[[], Reply]) -> Reply:
        """The cached reply to ``keyed``, or ``ask()``'s, stored; under the entry's lock,
        so concurrent processes that need the same verdict ask once."""
        key = cache_key(keyed)
        return self._entries.fetch(
            f"{key[:2]}/{key}.json",
            lambda entry: self._cached(entry, keyed),
            lambda: self._asked(keyed, ask),
        )

    def _cached(self, entry: Any, keyed: Mapping[str, Any]) -> Reply | None:
        """The reply an entry holds; None when it is of another format or request, has a
        field of the wrong type, or was written by another run under ``refresh``."""
        if not (isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT):
            return None
        content, latency = entry.get("content"), entry.get("latency_ms")
        tokens = (entry.get("prompt_tokens"), entry.get("completion_tokens"))
        if entry.get("request") != keyed or not isinstance(content, str):
            return None
        if self._refresh and entry.get("run") != self._run_id:
            return None
        if isinstance(latency, bool) or not isinstance(latency, int | float):
            return None
        if not (math.isfinite(latency) and latency >= 0 and all(map(is_token_count, tokens))):
            return None
        call = Call(True, float(latency), 0, token_count(tokens[0]), token_count(tokens[1]))
        return Reply(content, call)

    def _asked(self, keyed: Mapping[str, Any], ask: Callable[[], Reply]) -> tuple[Reply, Any]:
        reply = ask()
        entry = {
            "format": CACHE_FORMAT,
            "run": self._run_id,
            "request": keyed,
            "content": reply.content,
            "latency_ms": reply.call.latency_ms,
            "prompt_tokens": reply.call.prompt_tokens,
            "completion_tokens": reply.call.completion_tokens,
        }
        return reply, entry
