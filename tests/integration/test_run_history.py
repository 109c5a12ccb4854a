"""--ragmetrics-history: each completed run appends one line, the reports show the trend.

Expected numbers are computed by hand from the rows in conftest.py: f1 0.5, 1, 0, 0.5
(mean 0.5); tokens 100, 200, 300, 400 (mean 250); a stored baseline of tokens.mean 250
makes ``<= 1.2x baseline`` a bound of 300.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.project import EVAL, Project
from test_trends import markers, trend_svgs

GATES = """
[gates]
"f1.mean" = ">= 0.5"
"tokens.mean" = "<= 1.2x baseline"
"""
HISTORY = "hist/history.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _gates(line: dict[str, Any]) -> dict[str, tuple[str, float, float, float | None]]:
    (entry,) = line["evals"]
    return {
        gate["name"]: (gate["status"], gate["value"], gate["bound"], gate["baseline"])
        for gate in entry["gates"]
    }


def test_two_runs_append_two_lines_and_the_second_report_draws_both(project: Project) -> None:
    project.write("thresholds.toml", GATES)
    first = project.run("--ragmetrics-history=hist", "--ragmetrics-update-baseline")
    assert first.ret == 0
    first.stdout.fnmatch_lines(["run history: this run appended to hist/history.jsonl (1 run(s)*"])
    second, report = project.run_json(
        "--ragmetrics-history",
        "hist",
        "--ragmetrics-no-cache",  # no bearing on the history
        "--ragmetrics-html=report.html",
        "--ragmetrics-md=summary.md",
    )
    assert second.ret == 0
    second.stdout.fnmatch_lines(["run history: this run appended to hist/history.jsonl (2 run(s)*"])

    lines = _lines(project.path / HISTORY)
    assert len(lines) == 2
    for line in lines:
        assert (line["schema_version"], line["commit"], line["dirty"]) == (1, None, None)
        (entry,) = line["evals"]
        assert (entry["label"], entry["n"], entry["dataset_rows"], entry["errors"]) == (
            "test_eval.py",
            4,
            4,
            0,
        )
        assert (entry["metrics"]["f1"]["mean"], entry["metrics"]["tokens"]["mean"]) == (0.5, 250)
        assert _gates(line) == {
            "f1.mean": ("passed", 0.5, 0.5, None),
            "tokens.mean": ("passed", 250, 300, 250),
        }
    assert lines[0]["time"] <= lines[1]["time"]

    history = report["history"]
    assert (history["path"], history["recorded"], history["appended"]) == (HISTORY, 2, True)
    assert history["runs"] == lines
    page = (project.path / "report.html").read_text(encoding="utf-8")
    svgs = trend_svgs(page)
    assert set(svgs) == {"trend-0-0", "trend-0-1"}  # f1.mean, tokens.mean
    for figure, svg in svgs.items():
        assert len(markers(svg, f"{figure}-values")) == 2  # one point per recorded run
    assert "run history: this run appended to hist/history.jsonl" in (
        (project.path / "summary.md").read_text(encoding="utf-8")
    )


def test_no_history_no_key_and_no_line(project: Project) -> None:
    result, report = project.run_json()
    assert result.ret == 0
    assert "history" not in report
    assert "run history" not in result.stdout.str()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_record_names_the_commit_of_a_checkout(project: Project) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=project.path, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", "test_eval.py", "thresholds.toml", "data/rows.jsonl")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "eval")
    assert project.run("--ragmetrics-history=hist").ret == 0
    (project.path / "test_eval.py").write_text(EVAL + "\n# edited\n")
    assert project.run("--ragmetrics-history=hist").ret == 0
    commit = git("log", "-1", "--format=%H")
    lines = _lines(project.path / HISTORY)
    assert [(line["commit"], line["dirty"]) for line in lines] == [(commit, False), (commit, True)]


def test_the_ini_key_finds_the_same_history_from_a_subfolder(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.pytester.makeini("[pytest]\nragmetrics_history = hist\n")
    (project.path / "sub").mkdir()
    assert project.run().ret == 0
    monkeypatch.chdir(project.path / "sub")
    assert project.run(str(project.path)).ret == 0
    # The option is taken from the invocation directory, like every other path option.
    assert project.run(str(project.path), "--ragmetrics-history", "../hist").ret == 0
    assert len(_lines(project.path / HISTORY)) == 3
    assert not (project.path / "sub" / "hist").exists()


def test_a_run_with_collection_errors_appends_nothing(project: Project) -> None:
    project.write("test_broken.py", "this is not python\n")
    result = project.run("--ragmetrics-history=hist", "--continue-on-collection-errors")
    assert result.ret == 1
    assert len(_lines(project.path / HISTORY)) == 1  # the collection errors were let through
    result = project.run("--ragmetrics-history=hist")
    assert result.ret == 2
    assert len(_lines(project.path / HISTORY)) == 1


def test_a_run_where_no_eval_ran_appends_nothing(project: Project) -> None:
    result = project.run("--ragmetrics-history=hist", "-k", "no_such_test")
    assert result.ret == 5
    assert not (project.path / HISTORY).exists()


def test_a_malformed_history_is_a_usage_error_naming_the_line(project: Project) -> None:
    project.write(HISTORY, '{"schema_version": 1}\n')
    result = project.run("--ragmetrics-history=hist")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"*{project.path / HISTORY}:1: not a run record (time: expected a string)*"]
    )
    assert (project.path / HISTORY).read_text() == '{"schema_version": 1}\n'


def test_a_file_in_place_of_the_directory_is_a_usage_error(project: Project) -> None:
    project.write("hist", "a file")
    result = project.run("--ragmetrics-history=hist")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--ragmetrics-history hist: * is not a directory*"])


def test_under_xdist_one_line_per_run_not_per_worker(make_project: Any) -> None:
    project = make_project("n2")
    result = project.run("--ragmetrics-history", "hist")
    assert result.ret == 0
    (line,) = _lines(project.path / HISTORY)
    assert line["evals"][0]["n"] == 4


def test_a_run_stopped_by_ctrl_c_appends_nothing(make_project: Any) -> None:
    project = make_project("no-xdist")  # a subprocess: Ctrl-C in process would stop this run
    project.write(
        "test_eval.py",
        EVAL
        + '\n\ndef test_stop(row):\n    if row["id"] == "r3":\n        raise KeyboardInterrupt\n',
    )
    result = project.run("--ragmetrics-history=hist")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*KeyboardInterrupt*"])
    result.stdout.fnmatch_lines(
        ["run history: this run NOT appended to hist/history.jsonl: the run did not complete*"]
    )
    assert not (project.path / HISTORY).exists()


def test_a_history_that_cannot_be_appended_to_is_said_so(project: Project) -> None:
    assert project.run("--ragmetrics-history=hist").ret == 0
    lock = project.path / "hist" / "history.jsonl.lock"
    lock.unlink()
    lock.mkdir()  # the lock cannot be taken: nothing is appended, and the run says why
    result = project.run("--ragmetrics-history=hist")
    # every test passed, but the history asked for was not kept: the run fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["run history: this run NOT appended to hist/history.jsonl: *cannot append*(1 run(s)*"]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of writing --ragmetrics-history*",
            "run history: */hist/history.jsonl: cannot append to the run history: *",
        ]
    )
    result.assert_outcomes(passed=8, errors=1)
    assert len(_lines(project.path / HISTORY)) == 1
