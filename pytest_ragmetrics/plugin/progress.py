"""Progress lines while rows run: where they are written, the progress of live systems'
outputs and of the LLM judge's verdicts, and that of bulk items' rows.

Every process that runs tests reports its own work: the controller without xdist, each
xdist worker with it (named ``[gw0] ragmetrics``, on stderr), never the xdist controller,
which calls nothing. The totals are known after collection, from the selected rows (every
process collects them all):

* a live system's total is the outputs the selected rows need: one per question it
  answers, and a second one where ``determinism`` asks for it;
* the judge's total is the selected tests that ask it for verdicts (a metric fixture
  whose declaration asks the judge under the run's settings, ``MetricSpec.asks_judge``:
  the judge metrics, ``trust`` with ``trust_judge = "llm"``): how many verdicts a test
  asks depends on its answer (the Trust-Score suite asks per cited sentence), so the tests
  are what can be counted ahead; the lines give the verdicts as they come.

The counts are read after each test (``pytest_runtest_protocol``), when pytest has
written its outcome. A progress starts with the first output it had to call, or the first
verdict it had to ask, so a run served from the caches stays quiet. Under xdist a worker
counts what it did against the run's total: the workers share the work.

The rows of bulk items (bulk mode, or the Ray engine) have a progress of their own
(``BulkProgress``): their total is the selected bulk items' rows, and it is counted while
an item runs, row by row on the local engine and as each Ray task's rows come back, so
that one item of 5,000 rows does not leave the line still for minutes.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragmetrics.metrics.base import MetricSettings
from pytest_ragmetrics.metrics.catalog import in_force
from pytest_ragmetrics.metrics.repeats import DETERMINISM
from pytest_ragmetrics.plugin.fixtures import own_metrics
from pytest_ragmetrics.plugin.options import workerinput
from pytest_ragmetrics.plugin.state import RunState, batch_param, item_rows
from pytest_ragmetrics.progress import LineProgress, RateProgress

if TYPE_CHECKING:  # the judge's client and the live cache: in a run that uses them
    from pytest_ragmetrics.judge.client import VerdictCounts
    from pytest_ragmetrics.live.cache import SystemCalls


@dataclass(frozen=True)
class Display:
    """Where a process writes its progress: ``write``, whether that is a terminal, the
    name each line starts with, and whether a line may be rewritten in place there while
    a test runs (``in_place``: the controller's terminal, when pytest's capture keeps the
    tests' own output and live logging off it)."""

    write: Callable[[str], None]
    tty: bool
    prefix: str = "ragmetrics"
    in_place: bool = False

    def lines(self, in_place: bool = False) -> LineProgress:
        return LineProgress(self.write, self.tty, self.prefix, in_place)


def display(config: pytest.Config) -> Display:
    """The terminal reporter on the controller; stderr on an xdist worker, each line
    named after the worker. pytest's capture is suspended while writing, so what is
    written while a test runs reaches the terminal.

    A text that starts a line starts on a line of its own: on the controller after
    pytest's dots (``ensure_newline``); on a worker after a newline, since the
    controller's line of dots is open on the same terminal (or in the same CI log, which
    merges stdout and stderr) and a worker cannot know it.
    """
    given = workerinput(config)
    capture = config.pluginmanager.get_plugin("capturemanager")

    def uncaptured() -> contextlib.AbstractContextManager[None]:
        return capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()

    reporter = config.pluginmanager.get_plugin("terminalreporter") if given is None else None
    if reporter is not None:

        def to_reporter(text: str) -> None:
            with uncaptured():
                if not text.startswith(("\r", "\n")):  # those continue a line of ours
                    _end_open_line(reporter)
                reporter.write(text, flush=True)  # a line drawn in place has no newline

        tty = bool(reporter.isatty)
        return Display(to_reporter, tty, in_place=tty and _nothing_else_writes(config))
    name = f"[{given['workerid']}] ragmetrics" if given else "ragmetrics"
    stream = sys.__stderr__ or sys.stderr
    tty = stream.isatty()

    def to_stderr(text: str) -> None:  # a worker's stderr is the terminal's, once uncaptured
        if given and not text.startswith(("\r", "\n")):
            text = "\n" + text
        with uncaptured():
            stream.write(text)
            stream.flush()

    return Display(to_stderr, tty, name)


def _nothing_else_writes(config: pytest.Config) -> bool:
    """Whether the terminal is pytest's alone while a test runs: its capture keeps what
    the test prints (not ``-s``, nor ``--capture=tee-sys``, which also shows it), and
    live logging (``log_cli``) is off."""
    if config.getoption("capture", "fd") in ("no", "tee-sys"):
        return False
    return not (config.getoption("log_cli_level", None) or config.getini("log_cli"))


def _end_open_line(reporter: Any) -> None:
    """End the line pytest left open (its dots): ``ensure_newline`` does when it names a
    file, and makes pytest name it again after our line; with ``-q`` pytest names no file
    and only its writer knows that the line is open."""
    reporter.ensure_newline()
    writer = getattr(reporter, "_tw", None)
    if getattr(writer, "width_of_current_line", 0) > 0:
        reporter.write("\n")


def live_totals(items: Sequence[pytest.Item]) -> dict[str, int]:
    """The outputs the selected rows need, per live system name: distinct (question,
    repeat) pairs; a row that failed validation calls nothing."""
    needed: dict[str, set[tuple[object, int]]] = {}
    for item in items:
        batch = batch_param(item)
        if batch is not None and not batch.live:
            continue  # its rows need no reading: no system answers them
        repeats = DETERMINISM in own_metrics(item)
        for param in item_rows(item):
            if param.live is None or param.problems:
                continue
            question = param.row.data.get("question")
            pairs = needed.setdefault(param.live, set())
            pairs.add((question, 0))
            if repeats:
                pairs.add((question, 1))
    return {system: len(pairs) for system, pairs in needed.items()}


def judging_fixtures(settings: MetricSettings) -> frozenset[str]:
    """The metric fixtures of the run's catalog (the one in force) that ask the LLM judge
    for verdicts under ``settings``."""
    fixtures = in_force().fixtures
    return frozenset(name for name, spec in fixtures.items() if spec.asks_judge(settings))


def judged_tests(items: Sequence[pytest.Item], settings: MetricSettings) -> dict[str, int]:
    """The node ids of the selected tests that ask the LLM judge for verdicts, each with
    how many rows it judges: one for a row test, its valid rows for a bulk item."""
    asking = judging_fixtures(settings)
    judged = {}
    for item in items:
        if asking.isdisjoint(own_metrics(item)):
            continue
        rows = sum(not param.problems for param in item_rows(item))
        if rows:
            judged[item.nodeid] = rows
    return judged


def _live_line(system: str, calls: SystemCalls, total: int) -> str:
    return (
        f"live system {system}: {calls.done}/{total} output(s): {calls.called} called, "
        f"{calls.cached} from cache, {calls.errors} error(s)"
    )


def _judge_line(counts: VerdictCounts, done: int, total: int) -> str:
    return (
        f"LLM judge: {done}/{total} judged test(s): {counts.verdicts} verdict(s), "
        f"{counts.asked} asked, {counts.cached} from cache, {counts.failed} failed"
    )


@dataclass
class Tracked:
    """One progress: started by the first real call, finished once."""

    lines: LineProgress
    total: int
    start_line: str
    started: bool = False
    finished: bool = False

    def update(self, working: bool, done: int, line: str, last_line: str) -> None:
        """``done`` of ``total`` units are done; ``working``: something was called (or
        asked) so far. At the total, the line is the last one."""
        if self.finished or not (self.started or working):
            return
        if not self.started:
            self.started = True
            self.lines.start(self.start_line)
        if done >= self.total:
            self.finish(last_line)
        else:
            self.lines.advance(done, self.total, line)

    def finish(self, last_line: str) -> None:
        if self.started and not self.finished:
            self.finished = True
            self.lines.finish(last_line)


@dataclass
class RowsProgress:
    """The progress of the live systems and of the judge in one process. What one test
    changed is written at once, so the lines of one update stay together."""

    display: Display
    live: dict[str, int]  # system name -> outputs needed
    judged: Mapping[str, int]  # node ids of the tests that ask the judge -> rows judged
    judged_done: int = 0
    systems: dict[str, Tracked] = field(default_factory=dict)
    judge: Tracked | None = None
    pending: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for system, total in sorted(self.live.items()):
            start = (
                f"live system {system}: {total} output(s) needed; calling it for those not "
                "in the cache"
            )
            self.systems[system] = Tracked(self._lines(), total, start)
        if self.judged:
            total = sum(self.judged.values())
            start = (
                f"LLM judge: {total} test(s) ask for verdicts; asking the endpoint "
                "for those not in the cache"
            )
            self.judge = Tracked(self._lines(), total, start)

    def _lines(self) -> LineProgress:
        """Whole lines (never rewritten in place: pytest writes between them), kept in
        ``pending`` until the update is written."""
        return LineProgress(self.pending.append, self.display.tty, self.display.prefix)

    def test_done(self, nodeid: str, state: RunState) -> None:
        """Write what the test's calls and verdicts changed."""
        self.judged_done += self.judged.get(nodeid, 0)
        self._update(state, ending=False)

    def end(self, state: RunState) -> None:
        """The last line of every progress that started, with its totals (the run may
        have stopped before the totals were reached)."""
        self._update(state, ending=True)

    def _update(self, state: RunState, ending: bool) -> None:
        calls = state.live_cache.calls if state.live_cache is not None else {}
        for system, tracked in self.systems.items():
            from pytest_ragmetrics.live.cache import SystemCalls

            counts = calls.get(system, SystemCalls())
            line = _live_line(system, counts, tracked.total)
            last = f"{line}; {counts.seconds:.1f} s in the system"
            tracked.update(counts.called + counts.errors > 0, counts.done, line, last)
            if ending:
                tracked.finish(last)
        if self.judge is not None:
            from pytest_ragmetrics.judge.client import VerdictCounts

            verdicts = state.llm.counts if state.llm is not None else VerdictCounts()
            line = _judge_line(verdicts, self.judged_done, self.judge.total)
            last = f"{line}; {verdicts.endpoint_s:.1f} s waiting on the endpoint"
            self.judge.update(verdicts.asked + verdicts.failed > 0, self.judged_done, line, last)
            if ending:
                self.judge.finish(last)
        if self.pending:
            self.display.write("".join(self.pending))
            self.pending.clear()


def rows_progress(
    items: Sequence[pytest.Item], state: RunState, shown: Display
) -> RowsProgress | None:
    """The progress of the selected rows' live calls and judge verdicts; ``None`` when
    they make neither (nothing to write after each test)."""
    live = live_totals(items)
    judged = judged_tests(items, state.thresholds.settings)
    return RowsProgress(shown, live, judged) if live or judged else None


def _no_count(rows: int) -> None:
    """Rows counted for no progress (a run without bulk items)."""


@dataclass
class BulkProgress:
    """The progress of the rows of the selected bulk items in one process (``lines``),
    told when each item starts and ends (``running``) and, while it runs, as its rows
    finish (``count``)."""

    lines: RateProgress
    items: int  # the selected bulk items

    @property
    def count(self) -> Callable[[int], None]:
        """What an item calls with the number of rows just finished."""
        return self.lines.count

    @contextlib.contextmanager
    def running(self, rows: int) -> Iterator[None]:
        """An item of ``rows`` rows runs: its seconds count toward the rate; when it ends,
        however it ends, its rows are done (the rows it could not run, errors in its
        report, included) and an in-place line is ended before pytest reports the item."""
        lines = self.lines
        if not lines.started:
            lines.start(f"{lines.total} row(s) in {self.items} bulk item(s)")
        first = lines.done
        lines.resume()
        try:
            yield
        finally:
            lines.pause(first + rows)


def bulk_progress(items: Sequence[pytest.Item], shown: Display, share: int) -> BulkProgress | None:
    """The progress of the selected bulk items' rows (``share``: the processes that run
    them, xdist's workers); ``None`` without bulk items."""
    sizes = [batch.size for batch in map(batch_param, items) if batch is not None]
    if not sum(sizes):
        return None
    lines = RateProgress(
        shown.write, shown.in_place, sum(sizes), shown.prefix, "bulk rows", "rows", share
    )
    return BulkProgress(lines, len(sizes))
