"""The progress line of bulk rows through pytest, in process (not a terminal: a whole line
per tenth of the rows).

Expected lines by hand from the step rule of ``pytest_ragmetrics.progress.RateProgress``
(a line when ``10 * done // total`` goes up, the total the last line) and the rows' order:
the local engine counts each row as it ends, so with 20 rows every second row is a tenth.
Rates and times are never asserted, only their form.
"""

from __future__ import annotations

import re

import pytest
from helpers.project import Project, jsonl

# Twenty rows, each answered right: 20 rows in batches of 7, 7, 6.
ROWS = [
    {"id": f"q{i:02d}", "answer": "Paris", "gold": ["Paris"], "contexts": [], "tokens": 10}
    for i in range(20)
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=7)


def test_answers(row, f1, tokens):
    tokens(row)
    assert f1(row) == 1


def test_plain():
    pass
"""

STEP = r", \d+(\.\d+)? rows/s, .+ left"  # the rate and the time left, as numbers go
LAST = r" in \d+\.\d s, \d+(\.\d+)? rows/s"


def bulk_lines(output: list[str]) -> list[str]:
    return [line for line in output if re.match(r"(\[gw\d\] )?ragmetrics: bulk rows: ", line)]


def _project(pytester: pytest.Pytester) -> Project:
    project = Project(pytester)
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    return project


def test_off_a_terminal_a_line_per_tenth_of_the_rows_ended_before_each_outcome(
    pytester: pytest.Pytester,
) -> None:
    result = _project(pytester).run("--ragmetrics-mode=bulk", "-v")
    result.assert_outcomes(passed=3 + 1 + 1)  # three batches, test_plain, the gate
    lines = bulk_lines(result.outlines)
    assert lines[0] == "ragmetrics: bulk rows: 20 row(s) in 3 bulk item(s)"
    steps = [f"ragmetrics: bulk rows: {d}/20 \\({5 * d}%\\){STEP}" for d in range(2, 20, 2)]
    assert len(lines) == 1 + len(steps) + 1
    for pattern, line in zip(steps, lines[1:-1], strict=True):
        assert re.fullmatch(pattern, line), line
    assert re.fullmatch(f"ragmetrics: bulk rows: 20/20 \\(100%\\){LAST}", lines[-1])
    # Each item's lines come before pytest reports it: rows 2-6 of the first batch,
    # 8-14 of the second, 16 to the total of the third.
    result.stdout.fnmatch_lines(
        [
            "ragmetrics: bulk rows: 6/20 (30%)*",
            "*test_answers[[]rows-1-7[]] PASSED*",
            "ragmetrics: bulk rows: 8/20 (40%)*",
            "ragmetrics: bulk rows: 14/20 (70%)*",
            "*test_answers[[]rows-8-14[]] PASSED*",
            "ragmetrics: bulk rows: 16/20 (80%)*",
            "ragmetrics: bulk rows: 20/20 (100%) in *",
            "*test_answers[[]rows-15-20[]] PASSED*",
        ]
    )


def test_a_failing_batch_counts_its_rows_and_the_last_line_says_the_total(
    pytester: pytest.Pytester,
) -> None:
    project = _project(pytester)
    project.write("test_eval.py", EVAL.replace("assert f1(row) == 1", "assert f1(row) == 0"))
    result = project.run("--ragmetrics-mode=bulk", "-x")
    result.assert_outcomes(failed=1, skipped=1)  # -x: the first batch fails; the gate skips
    lines = bulk_lines(result.outlines)
    # The first batch's 7 rows ran (failed rows are done rows): tenths at 2, 4 and 6,
    # then the last line, written when the run stopped.
    assert lines[0] == "ragmetrics: bulk rows: 20 row(s) in 3 bulk item(s)"
    assert [re.sub(",.*| in .*", "", line) for line in lines[1:]] == [
        "ragmetrics: bulk rows: 2/20 (10%)",
        "ragmetrics: bulk rows: 4/20 (20%)",
        "ragmetrics: bulk rows: 6/20 (30%)",
        "ragmetrics: bulk rows: 7/20 (35%)",
    ]
    assert re.fullmatch(f"ragmetrics: bulk rows: 7/20 \\(35%\\){LAST}", lines[-1])


def test_a_run_without_bulk_items_writes_no_line_of_bulk_rows(pytester: pytest.Pytester) -> None:
    result = _project(pytester).run("--ragmetrics-mode=row")
    result.assert_outcomes(passed=20 + 1 + 1)
    assert bulk_lines(result.outlines) == []


def test_under_xdist_each_worker_counts_its_own_rows_by_name(pytester: pytest.Pytester) -> None:
    project = _project(pytester)
    project.mode = "n2"
    result = project.run("--ragmetrics-mode=bulk")
    result.assert_outcomes(passed=3 + 1 + 1)
    # The controller runs no row and writes no line; each worker writes on stderr, its
    # rows counted against the run's 20, and their last lines add up to the 20.
    assert bulk_lines(result.outlines) == []
    lines = bulk_lines(result.errlines)
    assert all(re.match(r"\[gw[01]\] ragmetrics: bulk rows: ", line) for line in lines)
    starts = [line for line in lines if line.endswith("20 row(s) in 3 bulk item(s)")]
    ends = [line for line in lines if re.search(LAST, line)]
    assert 1 <= len(starts) == len(ends) <= 2  # a line of each worker that ran a batch
    assert sum(_done(line) for line in ends) == 20


def _done(line: str) -> int:
    """The rows done in a line of bulk rows."""
    found = re.search(r": (\d+)/20 ", line)
    assert found is not None, line
    return int(found[1])
