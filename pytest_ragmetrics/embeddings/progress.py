"""Encoding progress for people watching a run, as ``pytest_ragmetrics.progress`` writes it.

Encoding happens before any test runs, so on a terminal the line is rewritten in place
with a bar; off one (a CI log) a line is written at the start, at each quarter and at the
end.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ragmetrics.embeddings.prepare import PrepareStats
from pytest_ragmetrics.progress import LineProgress

__all__ = ["EncodingProgress", "LineProgress"]


@dataclass
class EncodingProgress:
    """The embedding store's ``Progress`` (``pytest_ragmetrics.embeddings.prepare``) in
    the words of encoding, written through ``lines``."""

    lines: LineProgress

    def start(self, total: int, model: str) -> None:
        self.lines.start(f"encoding {total} new text(s) with {model}")

    def advance(self, done: int, total: int) -> None:
        self.lines.advance(done, total, f"encoded {done}/{total}")

    def finish(self, stats: PrepareStats) -> None:
        self.lines.finish(stats.describe())
