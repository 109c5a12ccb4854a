"""A metric's evidence given as an ``Evidence`` is built only when something reads it:
a failed assertion (the ``Score``'s repr) or a report that shows rows (JSON, HTML). A run
without either never builds it; a run with one builds each row's once, in the process
that ran the row, and carries the text. In-process runs, but for the one test whose
subject is the worker's decision under pytest-xdist.

The counting metric writes a line to ``built.log`` each time its evidence is built. The
rows are ``helpers.project.ROWS``: their answers have 5, 2, 3 and 4 words ("Paris is the
capital [CIT:d1]." / "Berlin [1]." / "I don't know." / "Rome is old [CIT:d4].").
"""

from __future__ import annotations

import pytest
from helpers.project import Project

COUNTED = '''
from pathlib import Path

from pytest_ragmetrics import Evidence, metric

BUILT = Path(__file__).parent / "built.log"


def said(count):
    with BUILT.open("a", encoding="utf-8") as log:
        log.write(f"{count}\\n")
    return f"{count} word(s)"


@metric(requires=("answer",), range=(0, 50))
def words(row):
    """Words in the answer, citation markers included."""
    count = len(row.answer.split())
    return count, Evidence(said, count)


@metric(requires=("answer",), range=(0, 50))
def chars(row):
    """Characters of the answer."""
    return len(row.answer), Evidence("{} character(s), first {!r}", len(row.answer), row.answer[:1])
'''

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl"{mode})


def test_answers(row, words, chars, f1):
    assert words(row) <= {most}
    chars(row); f1(row)
"""


def _counted(project: Project, most: int = 10, mode: str = "") -> Project:
    project.write("conftest.py", COUNTED)
    project.write("test_eval.py", EVAL.format(most=most, mode=mode))
    project.write("thresholds.toml", "")
    return project


def _built(project: Project) -> list[str]:
    """The evidence the counting metric built, one line each."""
    log = project.path / "built.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


BULK = ', mode="bulk"'


@pytest.mark.parametrize("mode", ["", BULK], ids=["row", "bulk"])
def test_a_run_that_shows_no_row_builds_no_evidence(project: Project, mode: str) -> None:
    _counted(project, mode=mode)
    project.run("--ragmetrics-md", "report.md").assert_outcomes(passed=4 if not mode else 1)
    assert _built(project) == []


@pytest.mark.parametrize("mode", ["", BULK], ids=["row", "bulk"])
def test_a_json_report_builds_each_rows_evidence_once(project: Project, mode: str) -> None:
    result, report = _counted(project, mode=mode).run_json()
    result.assert_outcomes(passed=4 if not mode else 1)
    assert sorted(_built(project)) == ["2", "3", "4", "5"]
    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    assert rows["r1"]["evidence"]["words"] == "5 word(s)"
    assert rows["r2"]["evidence"]["chars"] == "11 character(s), first 'B'"  # "Berlin [1]."
    assert rows["r3"]["evidence"]["f1"].startswith("best gold 'Ljubljana': 0 common token(s)")


def test_an_html_report_alone_builds_the_evidence_too(project: Project) -> None:
    _counted(project).run("--ragmetrics-html", "report.html").assert_outcomes(passed=4)
    assert sorted(_built(project)) == ["2", "3", "4", "5"]
    assert "5 word(s)" in (project.path / "report.html").read_text(encoding="utf-8")


def test_a_failed_assertion_builds_and_shows_its_rows_evidence(project: Project) -> None:
    """r1 has 5 words, more than 4: its evidence is built for pytest's message, once
    however many times pytest reads the repr; no other row's is."""
    result = _counted(project, most=4).run()
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*words=5 (row 'r1': 5 word(s))*"])
    assert _built(project) == ["5"]


def test_evidence_that_raises_when_built_errors_its_row(project: Project) -> None:
    """A template that does not take its arguments is the metric's bug: the row errors
    naming the metric, in a run that builds the evidence."""
    _counted(project)
    broken = COUNTED.replace('"{} character(s), first {!r}"', '"{} character(s), {} {}"')
    project.write("conftest.py", broken)
    result, report = project.run_json()
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(["*the evidence of chars raised IndexError:*"])
    (entry,) = report["evals"]
    errors = [row["errors"] for row in entry["rows"]]
    assert all("the evidence of chars raised IndexError" in error[0] for error in errors)


def test_xdist_workers_build_the_evidence_a_report_shows(pytester: pytest.Pytester) -> None:
    """Each worker decides from the run's options, as the controller does: the rows a
    worker ran carry their evidence, built there, once."""
    project = _counted(Project(pytester, "n2"))
    result, report = project.run_json()
    result.assert_outcomes(passed=4)
    assert sorted(_built(project)) == ["2", "3", "4", "5"]
    rows = {row["id"]: row["evidence"]["words"] for row in report["evals"][0]["rows"]}
    assert rows == {"r1": "5 word(s)", "r2": "2 word(s)", "r3": "3 word(s)", "r4": "4 word(s)"}
