"""The headline of every report counts the rows that failed or errored as well as the
gates: a run that exits 1 because rows failed never reads "all gates hold" (in process,
pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.project import Project

# Every gate of PASSING_GATES holds, but the test's own assertion fails on row r2.
ONE_ROW_FAILS = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, em, f1, abstain, idk_citation, tokens, latency):
    idk_citation(row); em(row); f1(row); abstain(row); tokens(row); latency(row)
    assert row["id"] != "r2"
"""


def test_failed_rows_are_in_every_headline(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("test_eval.py", ONE_ROW_FAILS)
    step_summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    result = project.run(
        "--ragmetrics-md", "r.md", "--ragmetrics-html", "r.html", "--ragmetrics-json", "r.json"
    )
    result.assert_outcomes(passed=3 + 4, failed=1)  # 4 gates hold
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["Rows: 3 passed, 1 failed, 0 errored", "Gates: 4 passed, 0 failed, 0 skipped"]
    )
    for markdown in (project.path / "r.md", step_summary):
        text = markdown.read_text(encoding="utf-8")
        assert text.startswith("## pytest-ragmetrics: 1 row(s) failed\n"), text[:80]
        assert "all gates hold" not in text
    page = (project.path / "r.html").read_text(encoding="utf-8")
    headline = page.split("</h1>")[0].split("<h1>")[1]
    assert '<span class="verdict failed">1 row(s) failed</span>' in headline
    assert "<title>pytest-ragmetrics: 1 row(s) failed</title>" in page  # the browser tab
    assert "all gates hold" not in page
    document = json.loads((project.path / "r.json").read_text(encoding="utf-8"))
    assert document["evals"][0]["row_statuses"] == {"passed": 3, "failed": 1, "error": 0}


def test_a_clean_run_still_reads_all_gates_hold(project: Project) -> None:
    result = project.run("--ragmetrics-md", "r.md", "--ragmetrics-html", "r.html")
    result.assert_outcomes(passed=4 + 4)
    result.stdout.fnmatch_lines(["Rows: 4 passed, 0 failed, 0 errored"])
    text = (project.path / "r.md").read_text(encoding="utf-8")
    assert text.startswith("## pytest-ragmetrics: all gates hold\n")
    page = (project.path / "r.html").read_text(encoding="utf-8")
    assert '<span class="verdict passed">all gates hold</span>' in page.split("</h1>")[0]
    assert "<title>pytest-ragmetrics: all gates hold</title>" in page
