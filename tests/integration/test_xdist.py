"""What the controller merges from the workers is the same in every mode.

Each test runs once per mode of ``conftest.MODES`` (no xdist, ``-n 0``, ``-n 2``), each run
a subprocess: under ``-n 2`` the rows reach the controller from two workers, and the gates,
the baseline and the reports are computed and written by the controller alone. Every
other integration test runs in process (tests/integration/), and the merge of each kind of
data has its test here or one named "in every mode" beside its topic (tier aggregates,
dataset-level tests, Trust-Score, embeddings cache, systems).

Expected numbers are computed by hand from the rows in conftest.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from helpers.project import ROWS, Project, jsonl

N_ROWS = len(ROWS)


def test_gates_are_test_reports_in_every_mode(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    project.write(
        "thresholds.toml",
        '[gates]\n"tokens.mean" = "<= 200"\n"f1.mean" = ">= 0.5"\n"idk_citation.sum" = "== 0"\n',
    )
    result = project.run("-v", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=N_ROWS + 2, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines_random(
        [
            "*test_eval.py::gate::f1.mean PASSED*",
            "FAILED test_eval.py::gate::tokens.mean - tokens.mean <= 200 FAILS*",
            "Gates: 2 passed, 1 failed, 0 skipped",
        ]
    )
    suite = ET.parse(project.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(N_ROWS + 3), "1")


def test_reports_hold_hand_computed_numbers_in_every_mode(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    result, report = project.run_json(
        "--ragmetrics-md", "out/summary.md", "--ragmetrics-html", "out/report.html"
    )
    result.assert_outcomes(passed=N_ROWS + 4)
    (evaluation,) = report["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (4, 0)
    metrics = evaluation["metrics"]
    # f1 0.5, 1, 0, 0.5; tokens 100..400; latency 100..400 (p95 by linear interpolation:
    # 300 + 0.85 * 100); r3 abstains.
    assert (metrics["f1"]["mean"], metrics["em"]["mean"]) == (0.5, 0.25)
    assert (metrics["tokens"]["mean"], metrics["latency_ms"]["p50"]) == (250, 250)
    assert metrics["latency_ms"]["p95"] == pytest.approx(385)
    assert metrics["abstain"]["rate"] == 0.25
    assert evaluation["breakdowns"]["tokens_by_stage"]["generate"] == {"sum": 140, "mean": 35}
    assert [row["id"] for row in evaluation["rows"]] == ["r1", "r2", "r3", "r4"]
    markdown = (project.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert markdown.count("## pytest-ragmetrics") == 1
    assert "| test\\_eval.py | 4 | — | — | 0.500 | 250.0 | 250 | 0.250 |" in markdown
    page = (project.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "test_eval.py" in page


def test_bad_rows_are_counted_once_in_every_mode(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    bad = [{"id": "no-gold", "answer": "x", "tokens": 1, "latency_ms": 1}]
    project.write("data/rows.jsonl", jsonl(ROWS) + "{not json\n" + jsonl(bad))
    result, report = project.run_json()
    result.assert_outcomes(passed=N_ROWS + 4, errors=2)
    (evaluation,) = report["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (6, 2)
    assert evaluation["metrics"]["f1"]["count"] == 4
    assert evaluation["metrics"]["errors"]["sum"] == 2


def test_a_baseline_is_written_once_and_compared_in_every_mode(
    project_in_every_mode: Project,
) -> None:
    project = project_in_every_mode
    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= 1.2x baseline"\n')
    project.run("--ragmetrics-update-baseline").assert_outcomes(passed=N_ROWS + 1)
    stored = json.loads((project.path / "__baselines__" / "test_eval.json").read_text())
    assert stored["metrics"]["tokens"]["mean"] == 250
    assert sorted(stored["rows"]) == ["r1", "r2", "r3", "r4"]
    assert list((project.path / "__baselines__").iterdir()) == [
        project.path / "__baselines__" / "test_eval.json"
    ]
    # Every row's tokens grow to 400: mean 400 > 1.2 x 250 = 300.
    project.write("data/rows.jsonl", jsonl([{**row, "tokens": 400} for row in ROWS]))
    result = project.run()
    result.assert_outcomes(passed=N_ROWS, failed=1)
    result.stdout.fnmatch_lines(["*bound     300 (1.2 × baseline 250)*"])


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-k", "r1 or r2"], "partial run (-k, -m, --lf, skips, ...): 2 of 4 rows of *"),
        (["--ragmetrics-limit", "3"], "--ragmetrics-limit 3: 3 of 4 rows of data/rows.jsonl ran"),
    ],
)
def test_partial_runs_skip_gates_in_every_mode(
    project_in_every_mode: Project, args: list[str], reason: str
) -> None:
    # Under xdist the controller collects nothing: it counts the rows the workers report.
    result = project_in_every_mode.run("-rs", *args)
    result.assert_outcomes(passed=3 if "--ragmetrics-limit" in args else 2, skipped=4)
    result.stdout.fnmatch_lines([f"SKIPPED * test_eval.py: gate skipped: {reason}*"])


def test_a_stopped_run_skips_gates_in_every_mode(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    rows = [dict(ROWS[0], answer="I don't know [CIT:d1]."), *ROWS[1:]]  # r1 fails its test
    project.write("data/rows.jsonl", jsonl(rows))
    result = project.run("-x", "-rs")
    # a -x stop is exit code 1 in pytest and 2 (interrupted) under xdist
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    result.stdout.fnmatch_lines(["*gate skipped: the run stopped early*"])


def test_bulk_batches_spread_over_two_workers_merge_as_rows(pytester: pytest.Pytester) -> None:
    """Bulk mode under -n 2 only (not every mode): four batches of one row reach the
    controller from two workers, and it merges their rows as in row mode. r3 has no
    answer: an errored row, counted once."""
    project = Project(pytester, "n2")
    rows = [*ROWS[:2], {k: v for k, v in ROWS[2].items() if k != "answer"}, ROWS[3]]
    project.write("data/rows.jsonl", jsonl(rows))
    project.write("thresholds.toml", '[gates]\n"f1.count" = ">= 3"\n')
    result, report = project.run_json("--ragmetrics-mode=bulk", "--ragmetrics-batch-size=1")
    result.assert_outcomes(passed=3 + 1, failed=1)  # three batches and the gate pass
    (evaluation,) = report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["passed", "passed", "error", "passed"]
    assert (evaluation["n"], evaluation["errors"]) == (4, 1)
    assert evaluation["metrics"]["f1"]["mean"] == pytest.approx(2 / 3)  # (0.5 + 1 + 0.5) / 3
    assert evaluation["metrics"]["f1"]["count"] == 3


def test_a_sql_query_s_rows_are_collected_alike_in_every_mode(
    project_in_every_mode: Project,
) -> None:
    """The table holds the rows in reverse: every worker must order them the same way
    (by id) to collect the same items, or xdist refuses the run."""
    from test_sql_eval import SQLITE_ARGS, use_sql, write_sqlite

    project = project_in_every_mode
    write_sqlite(project.path / "data/rows.sqlite", list(reversed(ROWS)))
    use_sql(project, SQLITE_ARGS)
    result, report = project.run_json()
    result.assert_outcomes(passed=N_ROWS + 4)
    (evaluation,) = report["evals"]
    assert [row["id"] for row in evaluation["rows"]] == ["r1", "r2", "r3", "r4"]
    metrics = evaluation["metrics"]
    assert (metrics["f1"]["mean"], metrics["em"]["mean"]) == (0.5, 0.25)
    assert (metrics["tokens"]["mean"], metrics["latency_ms"]["p50"]) == (250, 250)
