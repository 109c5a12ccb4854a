"""The rows' spool in a run: the shown parts of the rows a report shows are kept in a
folder of TMPDIR while the rows run, read back for the reports, and the folder is gone
when the run ends, passed, failed or stopped; a TMPDIR that cannot hold it fails the run
saying so; xdist workers keep no spool.

The rows are conftest.py's four; their questions, answers and golds are theirs, as the
JSON report must show them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import ROWS, Project

# Bulk items of one row each: each item's rows are gathered (and spooled) before the next
# item runs, in this process, so from the second item on the controller's spool holds
# records, in a folder of TMPDIR (on POSIX removed at once: its open handles keep the file).
EVAL = """
import os
import pathlib

import pytest

from pytest_ragmetrics.plugin.hooks import SESSION_KEY

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk", batch_size=1)


def test_answers(row, em, f1, request):
    em(row)
    f1(row)
    spool = request.config.stash[SESSION_KEY].spool
    if row.id == "r1":
        assert spool.folder is None
    else:
        assert spool.size > 0
        assert spool.folder.parent == pathlib.Path(os.environ["TMPDIR"])
    {body}
"""


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run-tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def _spools(folder: Path) -> list[Path]:
    return list(folder.glob("ragmetrics-spool-*"))


def test_shown_rows_come_back_from_the_spool_and_it_is_gone_after(
    project: Project, tmpdir_env: Path
) -> None:
    project.write("test_eval.py", EVAL.format(body="pass"))
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=4)
    (evaluation,) = report["evals"]
    rows = evaluation["rows"]
    assert [row["id"] for row in rows] == [row["id"] for row in ROWS]
    assert [row["answer"] for row in rows] == [row["answer"] for row in ROWS]
    assert [row["gold"] for row in rows] == [row["gold"] for row in ROWS]
    assert [sorted(row["evidence"]) for row in rows] == [["em", "f1"]] * 4
    assert [row["metrics"]["f1"] for row in rows] == [0.5, 1.0, 0.0, 0.5]  # by hand
    assert _spools(tmpdir_env) == []


def test_the_spool_is_gone_after_a_failed_run(project: Project, tmpdir_env: Path) -> None:
    project.write("test_eval.py", EVAL.format(body='assert row.id != "r3"'))
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=3, failed=1)
    statuses = [row["status"] for row in report["evals"][0]["rows"]]
    assert statuses == ["passed", "passed", "failed", "passed"]
    assert _spools(tmpdir_env) == []


def test_the_spool_is_gone_after_a_stopped_run(project: Project, tmpdir_env: Path) -> None:
    body = 'if row.id == "r3":\n        pytest.exit("stopped at r3", returncode=2)'
    project.write("test_eval.py", EVAL.format(body=body))
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-json", "report.json")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*stopped at r3*"])
    assert _spools(tmpdir_env) == []


def test_a_tmpdir_that_cannot_hold_the_spool_fails_the_run(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMPDIR under a file is no folder (for root too): the first spooled row stops the
    run, which fails naming the folder and TMPDIR; no report of the rows is written."""
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    unwritable = tmp_path / "a-file" / "tmp"
    monkeypatch.setenv("TMPDIR", str(unwritable))
    project.write("test_eval.py", EVAL.format(body="pass"))
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-json", "report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=1)  # stopped after the first item
    result.stdout.fnmatch_lines(
        [
            "pytest-ragmetrics: the rows' spool (their evidence, shown fields, details and "
            f"outputs) could not be kept in {unwritable} (TMPDIR={unwritable}): *Not a "
            "directory*; point TMPDIR at a writable folder with room for a few KB a row",
            "ERROR ragmetrics::spool - pytest-ragmetrics: the rows' spool*",
        ]
    )
    assert not (project.path / "report.json").exists()


# Reading the spool back fails once the rows ran and the gates were checked (a disk that
# fails under the run): tryfirst, before the plugin writes its reports.
FAILING_READS = """
import pytest

from pytest_ragmetrics.plugin.hooks import SESSION_KEY
from pytest_ragmetrics.results.spool import SpoolError


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    def fail(at, length):
        raise SpoolError("the rows' spool could not be read back: [Errno 5] Input/output error")

    session.config.stash[SESSION_KEY].spool.get = fail
"""


def test_a_spool_that_cannot_be_read_back_fails_the_report_naming_it(
    project: Project, tmpdir_env: Path
) -> None:
    """A report whose rows cannot be read back from the spool is not written, and the run
    fails saying which report and why; the rows' own results stand."""
    project.write("conftest.py", FAILING_READS)
    project.write("test_eval.py", EVAL.format(body="pass"))
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-json", "report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*--ragmetrics-json report.json: not written: the rows' spool could not be "
            "read back: [[]Errno 5[]] Input/output error*"
        ]
    )
    assert not (project.path / "report.json").exists()
    assert _spools(tmpdir_env) == []


XDIST_EVAL = """
import pytest

from pytest_ragmetrics.plugin.hooks import SESSION_KEY

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk", batch_size=2)


def test_answers(row, em, f1, request):
    assert hasattr(request.config, "workerinput")
    assert request.config.stash[SESSION_KEY].spool is None  # a worker keeps none
    em(row)
    f1(row)
"""


def test_under_xdist_only_the_controller_spools(make_project: object, tmpdir_env: Path) -> None:
    project = make_project("n2")  # type: ignore[operator]
    project.write("test_eval.py", XDIST_EVAL)
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=2)
    rows = report["evals"][0]["rows"]
    assert [row["question"] for row in rows] == [row.get("question") for row in ROWS]
    assert [row["answer"] for row in rows] == [row["answer"] for row in ROWS]
    assert [sorted(row["evidence"]) for row in rows] == [["em", "f1"]] * 4
    assert _spools(tmpdir_env) == []
