"""The pull-request comment (``--ragmetrics-pr-comment``) and the GitHub annotations of a
run, with GitHub's variables set as a job sets them (in process, pytester).

The files are written here, so every expected line is counted by hand from them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.project import Project

GITHUB_ENV = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "acme/rag",
    "GITHUB_RUN_ID": "4242",
}
RUN_PAGE = "https://github.com/acme/rag/actions/runs/4242"

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, f1):
    f1(row)
    assert not row.get("flag"), "flagged by the test"
"""

# line 10: the f1.mean gate of the eval's own table; the same key in a comment (line 9)
# and in [gates] (line 6, switched off for this eval) must not be taken for it.
THRESHOLDS = """# thresholds of the test
[settings]
tau_sim = 0.65

[gates]
"f1.mean" = ">= 0"

[gates . "test_eval.py"]
# "f1.mean" = ">= 2" was the old gate
  "f1.mean"  =  ">= baseline - 0.01"   # a regression of 0.01 fails
"""

# Every answer exact: f1 1 on each row (the baseline).
BASELINE_ROWS = [
    {"id": "r1", "answer": "Paris", "gold": ["Paris"]},
    {"id": "r2", "answer": "Berlin", "gold": ["Berlin"]},
    {"id": "r3", "answer": "Rome", "gold": ["Rome"]},
]


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# This run: r2 answers wrong (f1 1 → 0), r4 has no gold (f1 cannot be computed: the row
# errors), r5 is flagged (the test fails on it). A blank line (file line 3) moves r3..r5
# down: r1 line 1, r2 line 2, r3 line 4, r4 line 5, r5 line 6.
CURRENT_ROWS = (
    _jsonl(BASELINE_ROWS[:1])
    + _jsonl([{"id": "r2", "answer": "Madrid", "gold": ["Berlin"]}])
    + "\n"
    + _jsonl(
        [
            BASELINE_ROWS[2],
            {"id": "r4", "answer": "Oslo"},
            {"id": "r5", "answer": "Lima", "gold": ["Lima"], "flag": True},
        ]
    )
)


def _github(monkeypatch: pytest.MonkeyPatch, project: Project) -> Path:
    for name, value in GITHUB_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.path))
    summary = project.path.parent / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


def _commands(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("::")]


@pytest.fixture
def failing(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The project after a baseline run, its rows changed as ``CURRENT_ROWS`` says."""
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", THRESHOLDS)
    project.write("data/rows.jsonl", _jsonl(BASELINE_ROWS))
    project.run("--ragmetrics-update-baseline").assert_outcomes(passed=3 + 1)
    project.write("data/rows.jsonl", CURRENT_ROWS)
    _github(monkeypatch, project)
    return project


def test_a_failing_run_annotates_its_lines_and_comments(failing: Project) -> None:
    result = failing.run("--ragmetrics-pr-comment", "comment.md", "--ragmetrics-html", "r.html")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    commands = _commands(result)
    title = "title=pytest-ragmetrics%3A gate test_eval.py%3A%3Agate%3A%3Af1.mean failed"
    assert commands[0].startswith(f"::error file=thresholds.toml,line=10,{title}::")
    assert commands[1].startswith(
        "::error file=data/rows.jsonl,line=5,title=pytest-ragmetrics%3A row r4 of test_eval.py "
        "errored::"
    )
    assert commands[2].startswith(
        "::error file=data/rows.jsonl,line=6,title=pytest-ragmetrics%3A row r5 of test_eval.py "
        "failed::failed in "
    )
    assert len(commands) == 3

    comment = (failing.path / "comment.md").read_text(encoding="utf-8")
    first, *_ = comment.splitlines()
    assert first == "### ❌ pytest-ragmetrics: 1 row(s) failed, 1 error(s), 1 gate(s) failed"
    assert "Rows: 3 passed, 1 failed, 1 errored · Gates: 0 passed, 1 failed, 0 skipped" in comment
    assert f"[HTML report and the run's artifacts]({RUN_PAGE})" in comment
    # The gate with its change: 3 pairs, r2 went 1 → 0, so the paired change is -1/3.
    gate_row = next(line for line in comment.splitlines() if "test\\_eval.py::gate" in line)
    assert gate_row.startswith("| **FAIL** | test\\_eval.py::gate::f1.mean | ")
    assert "| -0.333 \\[95% CI " in gate_row
    assert "3 pairs" in gate_row
    # r2 regressed, its evidence a click away; r4 and r5 listed with theirs
    assert "regressed · test_eval.py · <code>r2</code> · f1.mean 1 → 0" in comment
    assert "- answer: Madrid" in comment
    assert "errored · test_eval.py · <code>r4</code>" in comment
    assert "failed · test_eval.py · <code>r5</code>" in comment
    assert comment.rstrip("\n").endswith("<!-- pytest-ragmetrics -->")


def test_a_passing_run_says_it_passed_and_annotates_nothing(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _github(monkeypatch, project)
    result = project.run(
        "--ragmetrics-pr-comment", "comment.md", "--ragmetrics-pr-comment-link", "https://x.test/r"
    )
    assert result.ret == pytest.ExitCode.OK
    assert _commands(result) == []
    comment = (project.path / "comment.md").read_text(encoding="utf-8")
    assert comment.splitlines()[0] == "### ✅ pytest-ragmetrics: all gates hold"
    assert "[HTML report and the run's artifacts](https://x.test/r)" in comment  # the option wins
    # tokens and latency of the bundled rows: mean 250, p50 250; no baseline to compare
    spent = next(line for line in comment.splitlines() if line.startswith("| test\\_eval.py"))
    assert spent == "| test\\_eval.py | — | 250.0 | 250 |"


def test_outside_github_no_workflow_command_and_no_link(
    failing: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (*GITHUB_ENV, "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name)
    result = failing.run("--ragmetrics-pr-comment", "comment.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert _commands(result) == []
    comment = (failing.path / "comment.md").read_text(encoding="utf-8")
    assert "HTML report and the run's artifacts" not in comment
    # without a report that keeps rows, the evidence is said to be in the HTML report
    assert "- evidence: in the HTML report" in comment


def test_annotations_can_be_turned_off(failing: Project) -> None:
    result = failing.run("--ragmetrics-annotations=off")
    assert _commands(result) == []


def test_a_comment_that_cannot_be_written_fails_the_run(project: Project) -> None:
    (project.path / "comment.md").mkdir()
    result = project.run("--ragmetrics-pr-comment", "comment.md", "--ragmetrics-md", "r.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-pr-comment comment.md: not written: is a directory*"]
    )
    assert (project.path / "r.md").is_file()  # the others are written all the same


BULK_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk")


def test_answers(row, f1):
    assert f1(row) == 1, "wrong"
"""


def test_a_huge_failing_run_stays_under_githubs_limit(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 rows, every other one wrong: the comment says what it left out."""
    rows = "".join(
        f'{{"id": "q{i}", "answer": "{"yes" if i % 2 else "no"}", "gold": ["yes"]}}\n'
        for i in range(100_000)
    )
    project.write("data/rows.jsonl", rows)
    project.write("test_eval.py", BULK_EVAL)
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.9"\n')
    _github(monkeypatch, project)
    result = project.run("--ragmetrics-pr-comment", "comment.md", "-q")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    comment = (project.path / "comment.md").read_text(encoding="utf-8")
    assert len(comment) < 65_536
    assert comment.splitlines()[0] == (
        "### ❌ pytest-ragmetrics: 50000 row(s) failed, 1 gate(s) failed"
    )
    # no report keeps the rows: the comment counts the failed ones it cannot list
    assert "… 50,000 more rows: see the HTML report" in comment
    commands = _commands(result)
    assert len(commands) == 11  # the gate, 9 rows, and the notice of the rest
    assert commands[-1].startswith("::notice title=")
    assert "49,991 row(s) not annotated" in commands[-1]
