"""Progress lines of live-system calls and judge verdicts while rows run, through pytest.

In process (not a terminal: a line per quarter) and under ``-n 2`` (each worker's lines on
stderr, named after it). Expected lines by hand, from the step rule of
``pytest_ragmetrics.progress`` (a line when ``4 * done // total`` goes up; the total is
the last line) and the tests' order: each test function over its rows in dataset order.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers.project import IN_PROCESS, Project
from test_judge_eval import SECRET, Judge, _judge_table
from test_judge_eval import _project as judge_project
from test_live_eval import _project as live_project

from chat_server import ChatServer, Raw, Received, completion

SECONDS = r"\d+\.\d s"


def progress_lines(output: list[str], about: str) -> list[str]:
    return [line for line in output if re.match(rf"(\[gw\d\] )?ragmetrics: {about}", line)]


def test_live_calls_are_reported_as_they_happen_and_a_cached_run_is_quiet(
    pytester: pytest.Pytester,
) -> None:
    project = live_project(pytester, IN_PROCESS)
    result = project.run()
    result.assert_outcomes(passed=12 + 2)
    # base's 3 outputs are called by test_correct's rows (base and cand alternate):
    # quarters 1 and 2 at 1/3 and 2/3, the total at 3/3; test_cost reads them from this
    # process's memo.
    lines = progress_lines(result.outlines, "live system base")
    assert lines[:3] == [
        "ragmetrics: live system base: 3 output(s) needed; calling it for those not in the cache",
        "ragmetrics: live system base: 1/3 output(s): 1 called, 0 from cache, 0 error(s)",
        "ragmetrics: live system base: 2/3 output(s): 2 called, 0 from cache, 0 error(s)",
    ]
    assert re.fullmatch(
        rf"ragmetrics: live system base: 3/3 output\(s\): 3 called, 0 from cache, "
        rf"0 error\(s\); {SECONDS} in the system",
        lines[3],
    )
    assert len(lines) == 4
    assert len(progress_lines(result.outlines, "live system cand")) == 4
    # Each progress line stands on a line of its own, after pytest's dots.
    (first,) = [i for i, line in enumerate(result.outlines) if line == lines[0]]
    assert re.fullmatch(r"test_live\.py \.+", result.outlines[first - 1])

    again = project.run()
    again.assert_outcomes(passed=12 + 2)
    assert progress_lines(again.outlines, "live system") == []  # every output cached


def test_with_q_a_line_still_starts_on_its_own(pytester: pytest.Pytester) -> None:
    # -q writes the dots without the file's name, so pytest's ensure_newline sees no
    # open line: the progress must still not run on after the dots.
    result = live_project(pytester, IN_PROCESS).run("-q")
    result.assert_outcomes(passed=12 + 2)
    mentions = [line for line in result.outlines if "ragmetrics: live system" in line]
    assert len(mentions) == 8
    assert all(line.startswith("ragmetrics: live system") for line in mentions)


def test_a_failing_system_is_counted_in_its_last_line(pytester: pytest.Pytester) -> None:
    project = live_project(pytester, IN_PROCESS)
    conftest = (project.path / "conftest.py").read_text(encoding="utf-8")
    project.write("conftest.py", conftest.replace('log("base", question)', "1 / 0"))
    result = project.run()
    assert result.parseoutcomes()["errors"] == 6  # base's 3 rows, in both tests
    # Each of base's 3 outputs fails (and again for test_cost: one error per output).
    lines = progress_lines(result.outlines, "live system base")
    (last,) = [line for line in lines if line.endswith(" s in the system")]
    assert last.startswith(
        "ragmetrics: live system base: 3/3 output(s): 0 called, 0 from cache, 3 error(s); "
    )


def test_judge_verdicts_are_reported_per_judged_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    with ChatServer(default=Judge()) as server:
        project = judge_project(pytester, IN_PROCESS, _judge_table(server.url))
        result = project.run()
        again = project.run()
    result.assert_outcomes(passed=9)
    # 6 judged tests: test_judged (6 verdicts a row, all asked) then test_again (1 verdict
    # a row, the one test_judged cached); test_plain asks nothing. Quarters of 6 go up at
    # 2, 3 and 5 done tests; the 6th is the total.
    lines = progress_lines(result.outlines, "LLM judge")
    assert lines[:4] == [
        "ragmetrics: LLM judge: 6 test(s) ask for verdicts; asking the endpoint for those not "
        "in the cache",
        "ragmetrics: LLM judge: 2/6 judged test(s): 12 verdict(s), 12 asked, 0 from cache, "
        "0 failed",
        "ragmetrics: LLM judge: 3/6 judged test(s): 18 verdict(s), 18 asked, 0 from cache, "
        "0 failed",
        "ragmetrics: LLM judge: 5/6 judged test(s): 20 verdict(s), 18 asked, 2 from cache, "
        "0 failed",
    ]
    assert re.fullmatch(
        rf"ragmetrics: LLM judge: 6/6 judged test\(s\): 21 verdict\(s\), 18 asked, 3 from "
        rf"cache, 0 failed; {SECONDS} waiting on the endpoint",
        lines[4],
    )
    assert len(lines) == 5
    # The re-run asks only the consistency pairs anew (they bypass the cache): 2 a row.
    assert progress_lines(again.outlines, "LLM judge")[-1].startswith(
        "ragmetrics: LLM judge: 6/6 judged test(s): 21 verdict(s), 6 asked, 15 from cache"
    )


XDIST_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/questions.jsonl", systems=["base", "cand"])


def test_correct(row, f1):
    f1(row)


def test_relevant(row, answer_relevance):
    answer_relevance(row)
"""


def _relevant(received: Received) -> Raw:
    return Raw(completion(json.dumps({"score": 1.0, "reason": "on topic"})))


def test_under_xdist_each_worker_reports_its_own_work_by_name(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    with ChatServer(default=_relevant) as server:
        project: Project = live_project(pytester, "n2")
        project.write("test_live.py", XDIST_EVAL)
        project.write("thresholds.toml", _judge_table(server.url))
        result = project.run()
        asked = len(server.requests)
    result.assert_outcomes(passed=12)
    # The controller calls nothing and writes no progress; the workers do, on stderr.
    assert progress_lines(result.outlines, "(live system|LLM judge)") == []
    lines = progress_lines(result.errlines, "(live system|LLM judge)")
    assert lines
    assert all(re.match(r"\[gw[01]\] ragmetrics: ", line) for line in lines)
    # Across the workers' last lines, every output is called once (a lock per entry) and
    # every verdict asked once: q1 and q3 have the same answer from both systems, so one
    # verdict each, q2 two: 4 requests.
    for system in ("base", "cand"):
        ends = [line for line in lines if f"system {system}:" in line and "in the system" in line]
        assert sum(_count("called", line) for line in ends) == 3
    ends = [line for line in lines if "waiting on the endpoint" in line]
    assert sum(_count("asked", line) for line in ends) == asked == 4


def _count(what: str, line: str) -> int:
    """The number before ``what`` in a progress line."""
    found = re.search(rf"(\d+) {what}", line)
    assert found is not None, line
    return int(found[1])
