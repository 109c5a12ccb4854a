"""The progress of live calls and judge verdicts while rows run, without pytest running:
the totals read from the selected items, when a progress starts (the first real call),
and its last line when the run stops short. Expected lines by hand."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from helpers.items import FakeItem

from pytest_ragmetrics import LiveSystem
from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Problem, Row
from pytest_ragmetrics.judge.client import VerdictCounts
from pytest_ragmetrics.live.cache import OutputCache
from pytest_ragmetrics.plugin.progress import (
    Display,
    RowsProgress,
    _nothing_else_writes,
    judged_tests,
    live_totals,
)
from pytest_ragmetrics.plugin.state import RowParam, RunState
from pytest_ragmetrics.results.summary import EvalInfo

INFO = EvalInfo("test_live.py", "test_live", "data/q.jsonl", "0" * 64, 2)


def item(nodeid: str, question: str, live: str | None, *fixtures: str, bad: bool = False) -> Any:
    row = Row(question, "data/q.jsonl", 1, 0, {"id": question, "question": question})
    problems = (Problem("gold", "missing"),) if bad else ()
    param = RowParam(INFO, row, problems, live=live)
    return FakeItem(nodeid, ["row", *fixtures], {"row": param})


def test_a_live_systems_total_is_its_distinct_outputs() -> None:
    items = [
        item("t::a[topk-q1]", "q1", "topk", "f1"),
        item("t::b[topk-q1]", "q1", "topk", "tokens"),  # the same output as the line above
        item("t::c[topk-q2]", "q2", "topk", "determinism"),  # two outputs: a second call
        item("t::a[mmr-q1]", "q1", "mmr", "f1"),
        item("t::a[mmr-q3]", "q3", "mmr", "f1", bad=True),  # a bad row calls nothing
        item("t::recorded", "q9", None, "f1"),  # not a live row
        FakeItem("t::plain", []),  # not a row test
    ]
    assert live_totals(items) == {"topk": 3, "mmr": 1}


@pytest.mark.parametrize(("trust_judge", "expected"), [("embedding", 2), ("llm", 3)])
def test_the_judges_total_is_the_tests_that_ask_it(trust_judge: str, expected: int) -> None:
    items = [
        item("t::judged[q1]", "q1", None, "faithfulness_judge", "f1"),
        item("t::consistent[q1]", "q1", None, "consistency_score"),
        item("t::trusted[q1]", "q1", None, "trust"),
        item("t::judged[q2]", "q2", None, "answer_relevance", bad=True),
        item("t::plain[q1]", "q1", None, "f1"),
    ]
    assert len(judged_tests(items, Settings(trust_judge=trust_judge))) == expected


def state(cache: OutputCache | None, counts: VerdictCounts | None = None) -> RunState:
    llm = SimpleNamespace(counts=counts) if counts is not None else None
    return cast(RunState, SimpleNamespace(live_cache=cache, llm=llm))


def test_a_cached_run_is_quiet_and_a_called_one_starts_at_its_first_call(tmp_path: Path) -> None:
    written: list[str] = []
    system = LiveSystem("topk", lambda question: {"answer": question})
    OutputCache(tmp_path, "earlier").output(system, "q1")
    cache = OutputCache(tmp_path, "now")
    progress = RowsProgress(Display(written.append, tty=False), {"topk": 4}, {})
    cache.output(system, "q1")  # from the cache: nothing to report yet
    progress.test_done("t::a[topk-q1]", state(cache))
    assert written == []
    cache.output(system, "q2")  # the first call: the start line, then 2 of 4, a quarter
    progress.test_done("t::a[topk-q2]", state(cache))
    assert written == [
        "ragmetrics: live system topk: 4 output(s) needed; calling it for those not in the "
        "cache\n"
        "ragmetrics: live system topk: 2/4 output(s): 1 called, 1 from cache, 0 error(s)\n"
    ]
    progress.end(state(cache))  # the run stopped at 2 of 4: the last line says so
    assert written[-1].startswith(
        "ragmetrics: live system topk: 2/4 output(s): 1 called, 1 from cache, 0 error(s); "
    )
    assert written[-1].endswith(" s in the system\n")
    progress.end(state(cache))
    assert len(written) == 2  # finished once


def test_the_judges_progress_counts_judged_tests_and_reports_verdicts() -> None:
    written: list[str] = []
    judged = {"t::a[q1]": 1, "t::a[q2]": 1}
    progress = RowsProgress(
        Display(written.append, tty=True, prefix="[gw1] ragmetrics"), {}, judged
    )
    counts = VerdictCounts()
    progress.test_done("t::plain[q1]", state(None, counts))  # asks nothing
    counts.asked, counts.cached = 3, 1
    progress.test_done("t::a[q1]", state(None, counts))
    counts.failed = 1
    progress.test_done("t::a[q2]", state(None, counts))
    assert written[0] == (
        "[gw1] ragmetrics: LLM judge: 2 test(s) ask for verdicts; asking the endpoint for "
        "those not in the cache\n"
        "[gw1] ragmetrics: LLM judge: 1/2 judged test(s): 4 verdict(s), 3 asked, 1 from "
        "cache, 0 failed\n"
    )
    assert written[1] == (
        "[gw1] ragmetrics: LLM judge: 2/2 judged test(s): 5 verdict(s), 3 asked, 1 from "
        "cache, 1 failed; 0.0 s waiting on the endpoint\n"
    )


@pytest.mark.parametrize(
    ("capture", "log_cli_level", "log_cli", "in_place"),
    [
        ("fd", None, False, True),
        ("sys", None, False, True),
        ("no", None, False, False),  # -s: the test's prints reach the terminal
        ("tee-sys", None, False, False),  # shown as well as captured
        ("fd", "INFO", False, False),  # --log-cli-level: live logging
        ("fd", None, True, False),  # log_cli = true
    ],
)
def test_a_line_is_rewritten_in_place_only_where_nothing_else_writes(
    capture: str, log_cli_level: str | None, log_cli: bool, in_place: bool
) -> None:
    options = {"capture": capture, "log_cli_level": log_cli_level}
    config = SimpleNamespace(
        getoption=lambda name, default=None: options.get(name, default),
        getini=lambda name: {"log_cli": log_cli}[name],
    )
    assert _nothing_else_writes(cast(pytest.Config, config)) is in_place
