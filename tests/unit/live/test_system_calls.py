"""What the output cache counts per system for the progress lines: each output once
(called, or read from the cache), failed outputs until an attempt gets them, and the time
spent in the system's calls. Expected counts by hand."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics import LiveSystem, LiveSystemError
from pytest_ragmetrics.live.cache import OutputCache


class Flaky:
    """Answers every question, except that ``fail`` raises on its first ``failures`` calls."""

    def __init__(self, fail: str = "", failures: int = 0) -> None:
        self.fail = fail
        self.failures = failures
        self.calls: list[str] = []

    def __call__(self, question: str) -> dict[str, Any]:
        self.calls.append(question)
        if question == self.fail and self.calls.count(question) <= self.failures:
            raise ValueError("no passage")
        return {"answer": question.upper()}


def test_each_output_counts_once_called_or_cached(tmp_path: Path) -> None:
    system = LiveSystem("topk", Flaky())
    cache = OutputCache(tmp_path, "run")
    for question in ("a", "b", "a"):  # "a" again: from this process's memo, not counted
        cache.output(system, question)
    cache.output(system, "a", repeat=1)  # determinism's second output is an output
    calls = cache.calls["topk"]
    assert (calls.called, calls.cached, calls.errors, calls.done) == (3, 0, 0, 3)
    assert calls.seconds > 0

    again = OutputCache(tmp_path, "next run")
    again.output(system, "a")
    again.output(system, "c")
    counts = again.calls["topk"]
    assert (counts.called, counts.cached, counts.done) == (1, 1, 2)


def test_a_failed_output_counts_as_one_error_until_it_is_had(tmp_path: Path) -> None:
    system = LiveSystem("mmr", Flaky(fail="b", failures=2))
    cache = OutputCache(tmp_path, "run")
    cache.output(system, "a")
    for _ in range(2):  # a failed output is not kept: the next test of the row tries again
        with pytest.raises(LiveSystemError, match="no passage"):
            cache.output(system, "b")
    calls = cache.calls["mmr"]
    assert (calls.called, calls.errors, calls.done) == (1, 1, 2)
    cache.output(system, "b")  # the third call answers
    assert (calls.called, calls.errors, calls.done) == (2, 0, 2)


def test_the_latency_is_the_systems_call_not_the_cache_around_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clock that moves only while the system runs: the measured latency is exactly the
    call, 5 ms, whatever the cache's lookups, lock and write around it cost."""
    now = [100.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])

    def answer(question: str) -> dict[str, Any]:
        now[0] += 0.005
        return {"answer": question}

    cache = OutputCache(tmp_path, "run")
    output = cache.output(LiveSystem("topk", answer), "q1")
    assert output.fields["latency_ms"] == 5.0
    assert cache.calls["topk"].seconds == pytest.approx(0.005)
    # A system that gives its own latency keeps it.
    given = LiveSystem("mmr", lambda question: {"answer": question, "latency_ms": 0.27})
    assert cache.output(given, "q1").fields["latency_ms"] == 0.27
