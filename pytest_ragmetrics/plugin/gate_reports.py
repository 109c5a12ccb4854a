"""Gates as test results, on the controller.

Each gate is reported as a test of its own (``<eval>::gate::<metric.stat>``): it goes
through ``pytest_runtest_logreport`` as setup, call and teardown reports, so pytest counts,
lists and exits on it exactly as on any test, and JUnit XML records it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pytest

from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.printable import printable_text
from pytest_ragmetrics.results.summary import EvalInfo

When = Literal["setup", "call", "teardown"]
Outcome = Literal["passed", "failed", "skipped"]


def gate_location(result: GateResult, info: EvalInfo) -> tuple[str, None, str]:
    """The report location of a gate: its module as pytest names it. Its domain, the
    FAILURES heading, names the gate and the eval; it must not end the nodeid, or pytest's
    verbose line would print "f1::mean"."""
    return (info.test_path or info.module, None, f"gate {result.name} of {result.eval}")


def gate_nodeid(result: GateResult, info: EvalInfo) -> str:
    """The gate's test id for pytest: like ``result.nodeid``, with the module path as
    pytest's own node ids have it (relative to pytest's rootdir), so pytest shows it
    relative to the invocation directory like every other test."""
    if info.name != info.module or not info.test_path:
        return result.nodeid
    system = f"[{info.system}]" if info.system is not None else ""
    return f"{info.test_path}{system}::gate::{result.name}"


def _reports(result: GateResult, info: EvalInfo) -> list[pytest.TestReport]:
    location = gate_location(result, info)
    nodeid = gate_nodeid(result, info)
    now = time.time()

    def report(when: When, outcome: Outcome, longrepr: Any = None) -> pytest.TestReport:
        return pytest.TestReport(
            nodeid, location, {}, outcome, longrepr, when, (), 0.0, now, now, []
        )

    if result.status == "skipped":
        why = (location[0], None, printable_text(f"gate skipped: {result.message}"))
        return [report("setup", "skipped", why), report("teardown", "passed")]
    # the message quotes row ids and values from the data
    longrepr = None if result.status == "passed" else printable_text(result.message)
    return [
        report("setup", "passed"),
        report("call", result.status, longrepr),
        report("teardown", "passed"),
    ]


def send_gate_reports(
    session: pytest.Session, results: Sequence[GateResult], infos: Mapping[str, EvalInfo]
) -> None:
    """Report each gate as a test result through pytest's own hooks; ``infos`` are the
    evals by label."""
    hook = session.config.hook
    for result in results:
        info = infos[result.eval]
        nodeid, location = gate_nodeid(result, info), gate_location(result, info)
        hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        for report in _reports(result, info):
            hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
