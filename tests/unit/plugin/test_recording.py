"""How a test's end is classified (verdict or error), and that a report carrying a payload
the controller cannot read stops the run instead of being dropped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_ragmetrics.plugin.recording import Outcome, raised_error


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
