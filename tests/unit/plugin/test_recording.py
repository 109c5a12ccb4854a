"""How a test's end is classified (verdict or error), that a report carrying a payload
the controller cannot read stops the run instead of being dropped, and what of a row a
payload carries."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.plugin.recording import (
    CITING,
    Outcome,
    PayloadContext,
    payload_for,
    raised_error,
)
from pytest_ragmetrics.plugin.rows import PASSED
from pytest_ragmetrics.plugin.state import RowParam, RowRecorder
from pytest_ragmetrics.results.summary import EvalInfo


def _fails_assert() -> None:
    raise AssertionError("overlap 0.2 < 0.5")


def _fails_explicitly() -> None:
    pytest.fail("not grounded")


def _raises_bug() -> None:
    raise KeyError("answer")


def _passes() -> None:
    return None


@pytest.mark.parametrize(
    ("when", "body", "failed", "expected"),
    [
        ("call", _fails_assert, True, None),  # the test's verdict on the row
        ("call", _fails_explicitly, True, None),
        ("call", _raises_bug, True, "d.jsonl:2: call raised KeyError: 'answer'"),
        ("setup", _fails_assert, True, "d.jsonl:2: setup raised AssertionError: overlap 0.2 < 0.5"),
        ("call", _passes, False, None),
    ],
)
def test_a_failed_assert_is_a_verdict_anything_else_an_error(
    when: str, body: Callable[[], None], failed: bool, expected: str | None
) -> None:
    call = pytest.CallInfo.from_call(body, when)  # type: ignore[arg-type]
    assert raised_error("d.jsonl:2", Outcome(when, call.excinfo, failed, False)) == expected


def test_an_unreadable_payload_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.ragmetrics = {"kind": "corpus", "test": item.nodeid}
    return report
"""
    )
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        ["*PayloadError: ragmetrics payload of *test_plain*: unknown kind 'corpus'*"]
    )


def test_in_process_a_report_carries_its_payload_as_itself(pytester: pytest.Pytester) -> None:
    """No xdist: the payload rides on the report as the typed ``RowPayload``, with no wire
    form built and read back, and is taken off the report before any other plugin's
    ``pytest_runtest_logreport`` runs."""
    pytester.makeconftest(
        """
import pytest

SEEN = []

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        SEEN.append(type(getattr(report, "ragmetrics", None)).__name__)
    return report

def pytest_runtest_logreport(report):
    if report.when == "call":
        SEEN.append(hasattr(report, "ragmetrics"))

def pytest_unconfigure(config):
    print("SEEN", SEEN)
"""
    )
    pytester.makefile(".jsonl", rows='{"id": "a", "answer": "Paris", "gold": ["Paris"]}\n')
    pytester.makepyfile(
        """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")

def test_row(row, em):
    assert em(row) == 1
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["SEEN ['RowPayload', False]"])


def test_the_metrics_that_read_citations_are_those_that_declare_it() -> None:
    """By docs/metrics.md: overlap (and overlap_answered, which it records with it) and
    faithfulness score cited sentences, idk_citation looks for a marker in an IDK
    sentence, anchor_coverage reads the cited contexts, trust the citations of each
    sentence (recorded as the row's detail, not a value)."""
    assert {
        "overlap",
        "overlap_answered",
        "faithfulness",
        "idk_citation",
        "anchor_coverage",
        "trust",
    } == CITING


def test_a_payload_carries_the_shown_fields_only_when_a_report_shows_rows() -> None:
    """The question, answer, gold and answerable ride on a row's payload (to the HTML
    drill-down) only when a report shows rows, as its evidence does: the controller keeps
    neither otherwise, and every row would carry them for nothing."""
    info = EvalInfo("test_x.py", "test_x.py", "data/q.jsonl", "0" * 64, 1)
    data = {"id": "a", "question": "Which city?", "answer": "Paris", "gold": ["Paris"]}
    param = RowParam(info, Row("a", "data/q.jsonl", 1, 0, data), ())
    recorder = RowRecorder(param.row)
    recorder.evidence["em"] = "answer matches a gold after normalisation"
    shown_fields = {"question": "Which city?", "answer": "Paris", "gold": ["Paris"]}
    for rows_shown, fields, evidence in [
        (True, shown_fields, {"em": "answer matches a gold after normalisation"}),
        (False, {}, {}),
    ]:
        context = PayloadContext("t", ("t",), False, Settings(), False, (), rows_shown)
        payload = payload_for(context, param, recorder, PASSED)
        assert (payload.fields, payload.evidence) == (fields, evidence)
