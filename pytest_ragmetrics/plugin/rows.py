"""One row of a bulk item, run in any process: the pytest process that holds the item
(``plugin.bulk``) or a worker of the Ray engine (``plugin.ray_engine``).

What the row needs besides itself travels as a ``RowJob`` (plain data when the test's
other arguments are); how the row starts and binds its metric fixtures is given by the
caller, since only the pytest process can answer a live row or call the LLM judge.
"""

from __future__ import annotations

import unittest
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.plugin.fixtures import MetricFixture
from pytest_ragmetrics.plugin.recording import Outcome, PayloadContext, payload_for
from pytest_ragmetrics.plugin.state import RowParam, RowRecorder
from pytest_ragmetrics.results.summary import RowPayload

# What a row's test may raise that stops the whole run, as it stops a row test's run:
# anything else it raises (SystemExit and GeneratorExit included) ends that row only.
STOPS_THE_RUN = (KeyboardInterrupt, pytest.exit.Exception)


# How every row that ran to its end without raising ended: one shared outcome, not one
# made per row.
PASSED = Outcome("call", None, failed=False, skipped=False)


@dataclass(frozen=True)
class RowRun:
    """One row a bulk item ran: its payload, and the message its test failed with."""

    param: RowParam
    payload: RowPayload
    message: str | None

    @property
    def errored(self) -> bool:
        return self.payload.error is not None and not self.payload.skipped

    def line(self) -> str:
        """The row in a failed batch's message: its error, or its file:line and verdict."""
        if self.errored and self.payload.error is not None:
            return self.payload.error
        row = self.param.row
        named = row.where() if row.keyed else f"{row.where()} (row {row.id!r})"
        return f"{named}: {self.message or 'failed'}"


@dataclass(frozen=True)
class RowJob:
    """What running each row of a bulk item takes besides the row: the test function,
    its other arguments as pytest set them up for the item, the metric fixtures it takes,
    and what the rows' payloads take from the run. Plain data when the other arguments
    are, so the Ray engine can send it to its workers."""

    test: Callable[..., Any]
    shared: dict[str, Any]
    metrics: tuple[str, ...]
    payload: PayloadContext
    runxfail: bool = False  # --runxfail: pytest.xfail fails its row, as pytest.fail does


# How a row starts (its ``row`` argument), and its metric fixtures ``names``.
StartRow = Callable[[RowParam, RowRecorder], Row]
BindMetric = Callable[[Sequence[str], RowRecorder, RowParam], list[MetricFixture]]


def run_row(job: RowJob, param: RowParam, start: StartRow, bind: BindMetric) -> RowRun:
    """Set the row up as its own item would, call the test on it, and classify the end:
    in the pytest process, or on a Ray worker (``start`` and ``bind`` say how)."""
    recorder = RowRecorder(param.row)
    when = "setup"
    try:
        row = start(param, recorder)
        when = "call"
        arguments = {**job.shared, "row": row}
        arguments.update(zip(job.metrics, bind(job.metrics, recorder, param), strict=True))
        job.test(**arguments)
    except STOPS_THE_RUN:
        raise
    except BaseException as raised:  # the row's end, whatever it is, as in row mode
        outcome = ended(when, raised, job.runxfail)
        message = None if outcome.skipped else str(raised) or type(raised).__name__
    else:
        outcome, message = PASSED, None
    return RowRun(param, payload_for(job.payload, param, recorder, outcome), message)


def ended(when: str, raised: BaseException, runxfail: bool) -> Outcome:
    """How a row's test that raised ``raised`` in phase ``when`` ended, by pytest's rules
    for a test item: a skip, or ``pytest.xfail`` (unless ``--runxfail``), skips it (an
    xfail is reported as skipped); anything else fails it (``plugin.recording`` then
    tells the test's verdict from an error). A skip is ``pytest.skip`` or unittest's
    ``SkipTest``, as pytest's runner has it."""
    # pytest's outcome classes are looked up when a row ends, never kept: Skipped claims
    # the module ``builtins``, so a copy of it pickled along to a Ray worker would be a
    # class of its own that the test's pytest.skip never raises.
    xfailed = not runxfail and isinstance(raised, pytest.xfail.Exception)
    skipped = xfailed or isinstance(raised, (pytest.skip.Exception, unittest.SkipTest))
    return Outcome(when, pytest.ExceptionInfo.from_exception(raised), not skipped, skipped)
