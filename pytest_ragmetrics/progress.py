"""Progress of long work, written as lines for people watching a run: encoding texts,
calling a live system, asking the LLM judge for verdicts.

One class serves all three; the caller words the lines, ``LineProgress`` decides when and
how they are written:

* a line when the work starts and one when it ends, with its totals;
* in between, on a terminal where nothing else is writing (``in_place``, the encoding
  before any test runs), one line rewritten in place with a bar;
* otherwise whole lines, one per step: each tenth of the work on a terminal, each quarter
  off one (a CI log), so a log shows that long work is alive without filling up.

Whole lines are the only safe form while tests run: pytest writes its own progress (the
dots, or a test's name and outcome) on the same terminal, and a line rewritten with a
carriage return would overwrite it; xdist workers write to the same terminal as the
controller. pytest's own live logging (``log_cli``) writes whole lines between its
progress for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_ragmetrics.printable import printable_line

BAR = 24  # characters of the in-place bar
TTY_STEPS = 10  # whole lines on a terminal: one per tenth of the work
LOG_STEPS = 4  # off a terminal: one per quarter


@dataclass
class LineProgress:
    """Progress lines written through ``write``, each starting with ``prefix``
    (``ragmetrics``, or ``[gw0] ragmetrics`` on an xdist worker).

    ``tty`` says whether ``write`` reaches a terminal; ``in_place`` allows rewriting one
    line there, for work during which nothing else writes.
    """

    write: Callable[[str], None]
    tty: bool
    prefix: str = "ragmetrics"
    in_place: bool = False
    _step: int = 0
    _open: bool = False  # an in-place line is written and not yet ended

    @property
    def steps(self) -> int:
        """How many whole lines the work between start and finish is divided into."""
        return TTY_STEPS if self.tty else LOG_STEPS

    def start(self, line: str) -> None:
        self.write(f"{self.prefix}: {printable_line(line)}\n")

    def advance(self, done: int, total: int, line: str) -> None:
        """``done`` of ``total`` units are done; ``line`` says so in words.

        In place, the bar and ``line`` are rewritten on every call. As whole lines,
        ``line`` is written when ``done`` enters a step it had not reached (several steps
        crossed at once give one line). ``done`` beyond ``total`` counts as ``total``; a
        ``total`` of 0 writes nothing."""
        if total <= 0:
            return
        done = max(0, min(done, total))
        if self.tty and self.in_place:
            filled = BAR * done // total
            bar = f"[{'#' * filled}{'.' * (BAR - filled)}]"
            self.write(f"\r{self.prefix}: {bar} {printable_line(line)}")
            self._open = True
            return
        step = self.steps * done // total
        if step > self._step:
            self._step = step
            self.write(f"{self.prefix}: {printable_line(line)}\n")

    def finish(self, line: str) -> None:
        """The last line, with the totals; it ends an in-place line first."""
        end = "\n" if self._open else ""
        self._open = False
        self.write(f"{end}{self.prefix}: {printable_line(line)}\n")
