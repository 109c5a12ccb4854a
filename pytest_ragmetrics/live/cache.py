"""The disk cache of live systems' outputs: one JSON entry per (fingerprint, question).

A re-run calls a system only for questions it has not answered: an output is cached by
(system fingerprint, question), so changing the system's name, version or configuration
calls it again. A cached output keeps the latency and tokens it was measured with and is
marked as cached. One lock file per entry makes pytest-xdist workers that need the same
output wait for the one that is computing it instead of calling the system twice.

The cache also counts, per system, what it did in this process (``SystemCalls``): the
plugin's progress lines read those counts while the tests run.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import JsonEntryCache, canonical_json
from pytest_ragmetrics.live.system import (
    LiveOutput,
    LiveSystem,
    LiveSystemError,
    LiveSystemUnreachable,
    call_system,
)

CACHE_SUBDIR = "live"
_FORMAT = 1  # bumped when the cache entry layout changes


Key = tuple[str, str, int]  # (system fingerprint, question, repeat)


def _render(entry: Any) -> str:
    return canonical_json(entry, ascii_only=False) + "\n"


@dataclass
class SystemCalls:
    """What one process's cache did for one system, by output: each (fingerprint,
    question, repeat) counts once, however many tests read it.

    ``called``: outputs the system returned to a call of this process. ``cached``: outputs
    read from the cache (written by an earlier run, or by another xdist worker of this
    run). ``failed``: outputs that could not be had (the call raised, or returned
    something that is not an output), until a later attempt gets them. ``seconds``: wall
    time spent calling the system, failed calls and the check of what they returned
    included, the cache's own reading and locking not.
    """

    called: int = 0
    cached: int = 0
    seconds: float = 0.0
    failed: set[Key] = field(default_factory=set)

    @property
    def done(self) -> int:
        """Outputs settled: had from a call or the cache, or failed."""
        return self.called + self.cached + len(self.failed)

    @property
    def errors(self) -> int:
        return len(self.failed)


class OutputCache:
    """Outputs on disk, one JSON file per (fingerprint, question).

    ``directory`` is None for a run without a cache (``--ragmetrics-no-cache`` gives a
    private one instead). ``run_id`` is shared by every process of a run: with
    ``refresh``, entries written by an earlier run are ignored, while entries this run
    wrote are reused, so two tests of one row still call the system once.
    """

    def __init__(self, directory: Path, run_id: str, refresh: bool = False) -> None:
        self.directory = directory / CACHE_SUBDIR
        self.run_id = run_id
        self.refresh = refresh
        self._entries: JsonEntryCache[LiveOutput] = JsonEntryCache(self.directory, _render)
        self._memo: dict[Key, LiveOutput] = {}
        # Fingerprints this process could not reach, with the first error: not called again.
        self._unreachable: dict[str, str] = {}
        self.calls: dict[str, SystemCalls] = {}  # by system name, for the progress lines

    def output(self, system: LiveSystem, question: str, repeat: int = 0) -> LiveOutput:
        """The system's output for ``question``: from this process's memo, the disk cache,
        or a call (under the entry's lock, so concurrent processes call once).
        ``repeat=1`` is a second, independent call (``determinism``), cached under its own
        entry."""
        key = (system.fingerprint, question, repeat)
        if key in self._memo:
            return self._memo[key]
        calls = self.calls.setdefault(system.name, SystemCalls())
        try:
            output = self._entries.fetch(
                _entry_name(system.fingerprint, question, repeat),
                lambda entry: self._cached(entry, system, question),
                lambda: self._called(system, question, repeat),
            )
        except LiveSystemError:
            calls.failed.add(key)
            raise
        calls.failed.discard(key)
        if output.cached:
            calls.cached += 1
        else:
            calls.called += 1
        self._memo[key] = output
        return output

    def _cached(self, entry: Any, system: LiveSystem, question: str) -> LiveOutput | None:
        """The output an entry holds; None for another format, question or run (a miss,
        overwritten by the fresh output)."""
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
            return None
        if entry.get("question") != question or not isinstance(entry.get("output"), dict):
            return None
        if self.refresh and entry.get("run") != self.run_id:
            return None
        return LiveOutput(entry["output"], system.name, system.fingerprint, cached=True)

    def _called(
        self, system: LiveSystem, question: str, repeat: int
    ) -> tuple[LiveOutput, dict[str, Any]]:
        fields = self._call(system, question)
        entry = {
            "format": _FORMAT,
            "system": system.name,
            "version": system.version,
            "config": system.config,
            "question": question,
            "repeat": repeat,
            "run": self.run_id,
            "output": fields,
        }
        return LiveOutput(fields, system.name, system.fingerprint, cached=False), entry

    def _call(self, system: LiveSystem, question: str) -> dict[str, Any]:
        """Call the system, unless it could not be reached earlier in this process; a
        call that finds it unreachable is the last one."""
        cause = self._unreachable.get(system.fingerprint)
        if cause is not None:
            raise LiveSystemUnreachable(
                f"not called: system {system.name!r} could not be reached earlier in this "
                f"run: {cause}",
                cause,
            )
        started = time.perf_counter()
        try:
            return call_system(system, question)
        except LiveSystemUnreachable as error:
            self._unreachable[system.fingerprint] = error.cause
            raise
        finally:
            calls = self.calls.setdefault(system.name, SystemCalls())
            calls.seconds += time.perf_counter() - started


def _entry_name(fingerprint: str, question: str, repeat: int) -> str:
    """``<fingerprint>/<sha256 of the question>[.repeat<n>].json``."""
    digest = hashlib.sha256(question.encode()).hexdigest()
    again = f".repeat{repeat}" if repeat else ""
    return f"{fingerprint}/{digest}{again}.json"
