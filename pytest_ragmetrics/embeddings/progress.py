"""Encoding progress for people watching a run: one line, rewritten in place on a tty.

Off a tty (a CI log) a line is written at the start, at each quarter and at the end, so
the log shows that a long encode is alive without filling up with carriage returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_ragmetrics.embeddings.prepare import PrepareStats

_BAR = 24


@dataclass
class LineProgress:
    """A ``Progress`` (see ``pytest_ragmetrics.embeddings.prepare``) that writes through
    ``write``."""

    write: Callable[[str], None]
    tty: bool
    prefix: str = "ragmetrics"
    _quarter: int = 0

    def start(self, total: int, model: str) -> None:
        self.write(f"{self.prefix}: encoding {total} new text(s) with {model}\n")

    def advance(self, done: int, total: int) -> None:
        if self.tty:
            filled = _BAR * done // total
            bar = "#" * filled + "." * (_BAR - filled)
            self.write(f"\r{self.prefix}: [{bar}] {done}/{total}")
            return
        quarter = 4 * done // total
        if quarter > self._quarter:
            self._quarter = quarter
            self.write(f"{self.prefix}: encoded {done}/{total}\n")

    def finish(self, stats: PrepareStats) -> None:
        end = "\n" if self.tty else ""
        self.write(f"{end}{self.prefix}: {stats.describe()}\n")
