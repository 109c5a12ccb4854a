"""Progress of long work, written as lines for people watching a run: encoding texts,
calling a live system, asking the LLM judge for verdicts, running bulk evals' rows.

One class serves the first three; the caller words the lines, ``LineProgress`` decides
when and how they are written:

* a line when the work starts and one when it ends, with its totals;
* in between, on a terminal where nothing else is writing (``in_place``, the encoding
  before any test runs), one line rewritten in place with a bar;
* otherwise whole lines, one per step: each tenth of the work on a terminal, each quarter
  off one (a CI log), so a log shows that long work is alive without filling up.

Whole lines are the only safe form while tests run: pytest writes its own progress (the
dots, or a test's name and outcome) on the same terminal, and a line rewritten with a
carriage return would overwrite it; xdist workers write to the same terminal as the
controller. pytest's own live logging (``log_cli``) writes whole lines between its
progress for the same reason. The rows of bulk items, many and quick, have a class of
their own, ``RateProgress``, which words its lines itself (done of the total, the rate,
the time left). They are the exception: while a bulk item runs pytest writes nothing, so
on the controller's terminal its line may be rewritten in place, provided it is ended
(``pause``) before pytest reports the item; elsewhere a whole line each tenth of the rows,
on a terminal or off one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pytest_ragmetrics.printable import printable_line

BAR = 24  # characters of the in-place bar
TTY_STEPS = 10  # whole lines on a terminal: one per tenth of the work
LOG_STEPS = 4  # off a terminal: one per quarter
RATE_STEPS = 10  # ``RateProgress`` in whole lines: one per tenth, on a terminal or off
REDRAW_S = 0.2  # ``RateProgress`` in place: a redraw about every this many seconds


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


def duration(seconds: float) -> str:
    """A duration for people: ``45 s``, ``3 min 05 s``, ``2 h 07 min`` (rounded to the
    second; negative counts as 0)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def per_second(rate: float) -> str:
    """A rate with the digits that matter: ``12345``, ``42``, ``3.5``, ``0.01``."""
    return f"{rate:.0f}" if rate >= 10 else f"{rate:.2g}"


@dataclass
class RateProgress:
    """Many small units of work (a bulk eval's rows) counted as they finish, written as
    ``done/total (percent)``, the rate (``unit``/s) and the time left, each line starting
    with ``{prefix}: {name}: ``.

    ``count`` is called once per unit or per few hundred and must stay cheap: it adds and
    compares, and only when the next line is due reads the clock and writes. The rate is
    the units done over the seconds spent working on them (between ``resume`` and
    ``pause``: the time other tests take in between is not theirs). ``share`` processes
    doing the same work each count their own units against the common ``total`` (xdist
    workers): the time left assumes they go equally fast.

    In place (a terminal where nothing else writes while the units run), one line is
    rewritten with a carriage return about every ``REDRAW_S`` seconds; ``pause`` ends it,
    with the counts of that moment, before someone else writes; the next one starts on a
    line of its own. Otherwise a whole line each tenth of ``total``. At ``total`` the line
    is the last one (``finish``), with the time spent; ``finish`` also ends work stopped
    short.
    """

    write: Callable[[str], None]
    in_place: bool
    total: int
    prefix: str = "ragmetrics"
    name: str = "rows"
    unit: str = "rows"
    share: int = 1
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    started: bool = False
    finished: bool = False
    _seconds: float = 0.0  # spent working before the current ``resume``
    _since: float | None = None  # when the current stretch of work began
    _step: int = 0
    _next: float = field(default=math.inf)  # ``done`` at which ``count`` looks again
    _open: bool = False  # an in-place line is written and not yet ended
    _drawn: int = 0  # characters of the in-place line as last drawn

    def start(self, line: str) -> None:
        """The first line, saying what is to be done."""
        self.started = True
        self._write_line(line)

    def resume(self) -> None:
        """Work begins (again): its seconds count from now."""
        if self.finished:
            return
        self._since = self.clock()
        self._next = self.done + 1  # the first unit shows the line

    def count(self, units: int = 1) -> None:
        """``units`` more are done."""
        self.done += units
        if self.done >= self._next:
            self._show()

    def pause(self, done: int | None = None) -> None:
        """Work stops for now (someone else is about to write): the in-place line is
        drawn once more and ended. ``done``, when given, corrects the count (units that
        ended without being counted, such as rows that were never run)."""
        if done is not None:
            self.done = done
        if self.finished:
            return
        if self.done >= self.total:
            self.finish()
            return
        self._show()
        self._seconds = self.seconds
        self._since = None
        self._next = math.inf
        if self._open:
            self._open = False
            self.write("\n")

    def finish(self) -> None:
        """The last line: the units done (all of them, or those done when the work
        stopped), the time spent and the rate."""
        if self.finished or not self.started:
            return
        seconds = self.seconds
        self.finished = True
        self._since, self._next, self._seconds = None, math.inf, seconds
        rate = f", {per_second(self.done / seconds)} {self.unit}/s" if seconds > 0 else ""
        line = f"{self._done_text()} in {seconds:.1f} s{rate}"
        if self._open:
            self._open = False
            self.write(f"\r{self._padded(line)}\n")
        else:
            self._write_line(line)

    @property
    def seconds(self) -> float:
        """The seconds spent working so far."""
        running = self.clock() - self._since if self._since is not None else 0.0
        return self._seconds + running

    def line(self) -> str:
        """What is done, the rate and the time left (those two once time has passed)."""
        seconds = self.seconds
        if seconds <= 0 or self.done <= 0:
            return self._done_text()
        rate = self.done / seconds
        text = f"{self._done_text()}, {per_second(rate)} {self.unit}/s"
        left = self.total - self.done * self.share
        if left > 0:
            text += f", {duration(left / (rate * self.share))} left"
        return text

    def _done_text(self) -> str:
        percent = 100 * min(self.done, self.total) // self.total if self.total else 100
        return f"{self.done}/{self.total} ({percent}%)"

    def _padded(self, line: str) -> str:
        """The in-place text of ``line``, padded over what the last draw left."""
        text = f"{self.prefix}: {self.name}: {printable_line(line)}"
        padded = text.ljust(self._drawn)
        self._drawn = len(text)
        return padded

    def _write_line(self, line: str) -> None:
        self.write(f"{self.prefix}: {self.name}: {printable_line(line)}\n")

    def _show(self) -> None:
        """The line, if one is due; then when ``count`` looks next."""
        if self.done >= self.total:
            self.finish()
            return
        if self.in_place:
            lead = "\r" if self._open else ""  # a new in-place line starts on its own
            if not self._open:
                self._drawn = 0
            self.write(f"{lead}{self._padded(self.line())}")
            self._open = True
            seconds = self.seconds
            stride = self.done * REDRAW_S / seconds if seconds > 0 else 1
            self._next = self.done + max(1, int(stride))
            return
        step = RATE_STEPS * self.done // self.total
        if step > self._step:
            self._step = step
            self._write_line(self.line())
        # the first ``done`` of the next tenth: ceil((step + 1) * total / RATE_STEPS)
        self._next = -(-(step + 1) * self.total // RATE_STEPS)
