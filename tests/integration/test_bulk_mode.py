"""Bulk mode end to end, in process: an eval's rows run in batches inside one test item
each, and the reports are those of row mode on the same data.

The rows are conftest.py's four (f1 0.5, 1, 0, 0.5 by hand). Most tests run the same
project in both modes and compare the two ``--ragmetrics-json`` documents' ``evals``:
that is the promise of bulk mode. The figures the messages must show are hand-derived
from the rows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.generated import generated_rows
from helpers.project import ROWS, Project, jsonl
from test_dataset_formats_eval import bad_row_in_every_format
from test_live_eval import SYSTEMS, _project

from pytest_ragmetrics.files import CACHE_DIR_ENV

REPO = Path(__file__).resolve().parents[2]

# The first three rows fail `f1 > 0.6` except r2 (f1 1): r1, r3 and r4 fail.
F1_VERDICT = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=3)


def test_answers(row, f1, tokens):
    tokens(row)
    assert f1(row) > 0.6
"""


def _both(project: Project, *args: str) -> tuple[Any, dict[str, Any], Any, dict[str, Any]]:
    """Run the project in row mode, then in bulk mode: both results and reports."""
    row_result, row_report = project.run_json("--ragmetrics-mode=row", *args)
    bulk_result, bulk_report = project.run_json("--ragmetrics-mode", "bulk", *args)
    return row_result, row_report, bulk_result, bulk_report


def test_rows_run_in_batches_with_the_reports_of_row_mode(project: Project) -> None:
    row_result, row_report, bulk_result, bulk_report = _both(
        project, "--ragmetrics-batch-size=3", "-v"
    )
    row_result.assert_outcomes(passed=4 + 4)  # 4 rows, 4 gates
    bulk_result.assert_outcomes(passed=2 + 4)  # batches of rows 1-3 and 4, 4 gates
    bulk_result.stdout.fnmatch_lines(
        ["*test_eval.py::test_answers[[]rows-1-3[]] PASSED*", "*[[]rows-4-4[]] PASSED*"]
    )
    assert bulk_report["evals"] == row_report["evals"]
    (evaluation,) = bulk_report["evals"]
    assert evaluation["metrics"]["f1"]["mean"] == 0.5
    assert evaluation["metrics"]["tokens"]["mean"] == 250


def test_a_failing_assertion_fails_its_rows_and_the_batch_lists_them(project: Project) -> None:
    project.write("test_eval.py", F1_VERDICT)
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    row_result, row_report = project.run_json()
    bulk_result, bulk_report = project.run_json("--ragmetrics-mode=bulk")
    row_result.assert_outcomes(passed=1 + 1, failed=3)
    bulk_result.assert_outcomes(passed=1, failed=2)  # marker batch_size=3: two batches
    assert bulk_result.ret == 1
    bulk_result.stdout.fnmatch_lines(
        [
            "*rows-1-3: 2 of 3 rows failed, 0 errored (every row's status is in the*",
            "  data/rows.jsonl:1 (row 'r1'): assert f1=0.5 (row 'r1': best gold 'Paris'*> 0.6",
            "  data/rows.jsonl:3 (row 'r3'): assert f1=0 (row 'r3': *> 0.6",
            "*rows-4-4: 1 of 1 rows failed, 0 errored*",
            "  data/rows.jsonl:4 (row 'r4'): assert f1=0.5 (row 'r4': *> 0.6",
        ]
    )
    assert bulk_report["evals"] == row_report["evals"]
    (evaluation,) = bulk_report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["failed", "passed", "failed", "failed"]
    assert evaluation["metrics"]["tokens"]["mean"] == 250  # recorded before each assert


def test_a_failed_batch_lists_the_first_ten_rows_and_counts_the_rest(project: Project) -> None:
    rows = [{"id": f"q{i:02d}", "answer": "no", "gold": "yes"} for i in range(1, 13)]
    project.write("data/rows.jsonl", jsonl(rows))
    project.write("test_eval.py", F1_VERDICT.replace(", batch_size=3", "").replace("tokens", "em"))
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-mode=bulk")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*rows-1-12: 12 of 12 rows failed, 0 errored*",
            "  data/rows.jsonl:10 (row 'q10'): assert f1=0 *",
            "  ... and 2 more failing row(s)",
        ]
    )
    assert "(row 'q11')" not in result.stdout.str()


def test_a_bad_row_errors_alone_and_the_batch_counts_it(project: Project) -> None:
    bad = [*ROWS[:2], {k: v for k, v in ROWS[2].items() if k != "answer"}, ROWS[3]]
    project.write("data/rows.jsonl", jsonl(bad))
    project.write("thresholds.toml", "")
    row_result, row_report, bulk_result, bulk_report = _both(project)
    row_result.assert_outcomes(passed=3, errors=1)
    bulk_result.assert_outcomes(failed=1)
    bulk_result.stdout.fnmatch_lines(
        [
            "*rows-1-4: 0 of 4 rows failed, 1 errored*",
            "  data/rows.jsonl:3: field 'answer': required by * but missing",
        ]
    )
    assert bulk_report["evals"] == row_report["evals"]
    (evaluation,) = bulk_report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["passed", "passed", "error", "passed"]
    assert evaluation["errors"] == 1


def test_a_bad_row_is_skipped_with_row_errors_skip(project: Project) -> None:
    bad = [*ROWS[:2], {k: v for k, v in ROWS[2].items() if k != "answer"}, ROWS[3]]
    project.write("data/rows.jsonl", jsonl(bad))
    project.write("thresholds.toml", '[settings]\nrow_errors = "skip"\n')
    row_result, row_report, bulk_result, bulk_report = _both(project)
    row_result.assert_outcomes(passed=3, skipped=1)
    bulk_result.assert_outcomes(passed=1)
    assert bulk_report["evals"] == row_report["evals"]
    # A skipped bad row still counts as an errored row of the eval, as in row mode.
    statuses = [row["status"] for row in bulk_report["evals"][0]["rows"]]
    assert statuses == ["passed", "passed", "error", "passed"]


RAISING = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, tokens, f1):
    f1(row)
    if row.id == "r2":
        raise KeyError("context")
    tokens(row)
"""


def test_a_raising_metric_and_a_raising_test_are_row_errors(project: Project) -> None:
    rows = [dict(row) for row in ROWS]
    rows[0]["tokens"] = "many"  # the tokens metric cannot read it: r1's error, at its line
    project.write("data/rows.jsonl", jsonl(rows))
    project.write("test_eval.py", RAISING)
    project.write("thresholds.toml", "")
    row_result, row_report, bulk_result, bulk_report = _both(project)
    row_result.assert_outcomes(passed=2, errors=1, failed=1)
    bulk_result.assert_outcomes(failed=1)
    bulk_result.stdout.fnmatch_lines(
        [
            "*rows-1-4: 0 of 4 rows failed, 2 errored*",
            "  data/rows.jsonl:1: *tokens*",
            "  data/rows.jsonl:2: call raised KeyError: 'context'",
        ]
    )
    assert bulk_report["evals"] == row_report["evals"]
    statuses = [row["status"] for row in bulk_report["evals"][0]["rows"]]
    assert statuses == ["error", "error", "passed", "passed"]


SKIPPING = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk", batch_size=2)


def test_answers(row, f1):
    if row.id == "r2":
        pytest.skip("r2 is not ready")
    f1(row)
"""


def test_a_skip_in_the_test_skips_its_row_and_the_batch_goes_on(project: Project) -> None:
    project.write("test_eval.py", SKIPPING)
    project.write("thresholds.toml", "")
    row_result, row_report = project.run_json("--ragmetrics-mode=row")
    bulk_result, bulk_report = project.run_json()  # the marker's mode
    row_result.assert_outcomes(passed=3, skipped=1)
    bulk_result.assert_outcomes(passed=2)
    assert bulk_report["evals"] == row_report["evals"]
    assert [row["id"] for row in bulk_report["evals"][0]["rows"]] == ["r1", "r3", "r4"]


def test_the_limit_counts_rows_and_deselection_takes_whole_batches(project: Project) -> None:
    result, report = project.run_json(
        "--ragmetrics-mode=bulk", "--ragmetrics-batch-size=2", "--ragmetrics-limit=3", "-v"
    )
    result.stdout.fnmatch_lines(["*[[]rows-1-2[]] PASSED*", "*[[]rows-3-3[]] PASSED*"])
    assert [row["id"] for row in report["evals"][0]["rows"]] == ["r1", "r2", "r3"]
    result, report = project.run_json(
        "--ragmetrics-mode=bulk", "--ragmetrics-batch-size=2", "-k", "not rows-3-4"
    )
    result.assert_outcomes(passed=1, skipped=4, deselected=1)  # a partial run skips gates
    assert [row["id"] for row in report["evals"][0]["rows"]] == ["r1", "r2"]


ROW_FIXTURE = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk")


@pytest.fixture
def question(row):
    return row.question


def test_answers(row, question, f1):
    f1(row)
"""


def test_a_fixture_that_takes_row_is_refused_in_bulk_mode(project: Project) -> None:
    project.write("test_eval.py", ROW_FIXTURE)
    project.write("thresholds.toml", "")
    result = project.run()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*test_eval.py::test_answers: in bulk mode fixtures are set up once per batch of "
            "rows, but `question` takes `row` (or a metric fixture); compute it inside the "
            'test from `row`, or run this eval with mode="row"'
        ]
    )
    project.run("--ragmetrics-mode=row").assert_outcomes(passed=4)  # fine per row


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('mode="batch"', "ragmetrics marker mode must be 'row' or 'bulk', got 'batch'"),
        (
            "batch_size=0",
            "ragmetrics marker batch_size must be a positive whole number of rows, got 0",
        ),
        ('batch_size="10"', "*batch_size must be a positive whole number of rows, got '10'"),
    ],
)
def test_a_bad_mode_or_batch_size_in_the_marker_is_a_collection_error(
    project: Project, arguments: str, message: str
) -> None:
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        f'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", {arguments})\n\n\n'
        "def test_answers(row, f1):\n    f1(row)\n",
    )
    result = project.run()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*test_eval.py::test_answers: {message}"])


def test_a_bad_mode_option_is_a_usage_error(project: Project) -> None:
    result = project.run("--ragmetrics-mode=rows")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragmetrics-mode: unknown mode 'rows'; use row or bulk"])


def test_a_live_eval_in_bulk_mode_calls_each_output_once(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "in-process", SYSTEMS)
    save = "--ragmetrics-save-outputs"
    bulk_result, bulk_report = project.run_json("--ragmetrics-mode=bulk", save, "bulk.jsonl")
    bulk_result.assert_outcomes(passed=4 + 2)  # 2 tests x 2 systems, 2 gates on cand
    calls = sorted((project.path / "calls.log").read_text(encoding="utf-8").splitlines())
    assert len(calls) == 6  # one per (system, question): 2 x 3
    row_result, row_report = project.run_json("--ragmetrics-mode=row", save, "row.jsonl")
    row_result.assert_outcomes(passed=12 + 2)  # from the cache
    saved = [_lines(project.path / name) for name in ("bulk.jsonl", "row.jsonl")]
    assert len(saved[0]) == 6
    assert saved[0] == saved[1]  # as values: a cached output keeps its fields in its order
    for bulk, row in zip(bulk_report["evals"], row_report["evals"], strict=True):
        assert [r["live"].pop("cached") for r in bulk["rows"]] == [False] * 3
        assert [r["live"].pop("cached") for r in row["rows"]] == [True] * 3
        assert bulk == row


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _without_called(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's evals without what says whether this run called a live system or the
    judge, or read an earlier run's answer from the cache: ``live.cached``, the judge's
    ``cached`` and ``requests`` counts (per row and per eval) and the "(cached verdict)"
    of a judge's evidence. That is all that may differ between two runs sharing a cache
    (the output or verdict, and its measured latency, are the cached ones)."""
    evals = json.loads(json.dumps(report["evals"]))
    for entry in evals:
        entry["metrics"].get("judge", {}).pop("cached", None)
        entry["metrics"].get("judge", {}).pop("requests", None)
        for row in entry["rows"]:
            if "live" in row:
                del row["live"]["cached"]
            for tally in row.get("judge", {}).values():
                del tally["cached"], tally["requests"]
            for metric, said in row.get("evidence", {}).items():
                if metric in row.get("judge", {}):
                    row["evidence"][metric] = said.replace(" (cached verdict)", "")
    return list(evals)


def test_the_bundled_evals_report_the_same_in_row_and_bulk_mode(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's "done when": every bundled eval, row mode then bulk mode in batches of
    5 (so batches end inside every eval), gives the same evals document, except whether a
    live output or a judge's verdict was asked in this run (the bulk run reads the row
    run's cache)."""
    shutil.copytree(REPO / "evals", pytester.path / "evals")
    shutil.copy(REPO / "thresholds.toml", pytester.path / "thresholds.toml")
    shutil.copy(REPO / "conftest.py", pytester.path / "conftest.py")  # numbers_cited
    pytester.makeini("[pytest]\n")
    monkeypatch.setenv(CACHE_DIR_ENV, str(pytester.path / "cache"))
    # In subprocesses: the evals' module names (test_retrieval, ...) are this suite's too.
    args = ("-p", "no:cacheprovider", "--ragmetrics-json")
    row_result = pytester.runpytest_subprocess(*args, "row.json", "--ragmetrics-mode=row", "evals")
    bulk_result = pytester.runpytest_subprocess(
        *args, "bulk.json", "--ragmetrics-mode=bulk", "--ragmetrics-batch-size=5", "evals"
    )
    assert (row_result.ret, bulk_result.ret) == (0, 0)
    row_items = row_result.parseoutcomes()["passed"]
    bulk_items = bulk_result.parseoutcomes()["passed"]
    assert bulk_items < row_items / 3
    row_report = json.loads((pytester.path / "row.json").read_text(encoding="utf-8"))
    bulk_report = json.loads((pytester.path / "bulk.json").read_text(encoding="utf-8"))
    assert len(row_report["evals"]) >= 10
    assert _without_called(bulk_report) == _without_called(row_report)


def test_the_ray_engine_refuses_row_mode_and_xdist_before_any_row_runs(project: Project) -> None:
    """Neither needs Ray: both are refused before Ray would be imported."""
    result = project.run("--ragmetrics-engine=ray", "--ragmetrics-mode=row")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-mode=row asks for one test item per row, but the Ray engine runs*"]
    )
    result = project.run("--ragmetrics-engine=ray", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the Ray engine spreads the rows over Ray's workers itself*"])


# Rewrites the dataset once collection is over, before any batch reads its rows.
EDIT_AFTER_COLLECTION = """
def pytest_collection_finish(session):
    path = session.config.rootpath / "data" / "rows.jsonl"
    path.write_text(path.read_text() + '{"id": "late", "answer": "x", "gold": "x"}\\n')
"""


def test_a_dataset_changed_after_collection_errors_every_row_of_its_batches(
    project: Project,
) -> None:
    """A batch reads its rows when it runs: rows that are no longer the rows collected
    are never scored. Each batch fails saying why, each of its rows is an error in the
    reports (so the gates see four errored rows, not an eval with none), and the run
    exits 1."""
    project.write("conftest.py", EDIT_AFTER_COLLECTION)
    result, report = project.run_json("--ragmetrics-mode=bulk", "--ragmetrics-batch-size=3")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    changed = "data/rows.jsonl: the dataset changed while the run read it (its size or"
    result.stdout.fnmatch_lines_random(
        [f"*rows-1-3: {changed} modification time differ)*", f"*rows-4-4: {changed}*"]
    )
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    (evaluation,) = report["evals"]
    assert [(row["id"], row["status"]) for row in evaluation["rows"]] == [
        (f"r{i}", "error") for i in range(1, 5)
    ]
    assert evaluation["rows"][0]["errors"] == [
        f"data/rows.jsonl:1: {changed} modification "
        "time differ); leave it unchanged until the run ends, and run again"
    ]
    gates = {"idk_citation.sum", "f1.mean", "tokens.mean", "latency_ms.p50"}  # PASSING_GATES
    assert {gate["name"] for gate in evaluation["gates"]} == gates
    failed = {g["name"]: g["message"] for g in evaluation["gates"] if g["status"] == "failed"}
    assert set(failed) == gates  # no row recorded them: a sum of nothing is no 0 either
    assert all(": cannot be checked: no row of test_eval.py recorded" in m for m in failed.values())


def test_every_format_runs_in_bulk_mode_as_in_row_mode(project: Project) -> None:
    """Rows read a batch at a time from Parquet and gzip'd JSONL: the reports of row mode,
    and a bad row (a null gold in Parquet, a line that is no JSON) keeps its file:line."""
    expected = bad_row_in_every_format(project)
    for name, bad_row in expected.items():
        project.write("test_eval.py", F1_VERDICT.replace("data/rows.jsonl", f"data/{name}"))
        row_result, row_report, bulk_result, bulk_report = _both(
            project, "--ragmetrics-batch-size=3"
        )
        assert bulk_report["evals"] == row_report["evals"], name
        assert bulk_report["evals"][0]["errors"] == 1, name
        assert bulk_result.ret == row_result.ret == pytest.ExitCode.TESTS_FAILED
        bulk_result.stdout.fnmatch_lines([bad_row])


def test_the_ray_engine_refuses_a_private_cache_a_remote_cluster_cannot_read(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    result = project.run("--ragmetrics-engine=ray", "--ragmetrics-no-cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ragmetrics-no-cache with RAY_ADDRESS set: *give --ragmetrics-cache-dir a folder*"]
    )


# Runs pytest with Ray made unimportable, as where it is not installed: `none` hides it
# behind a None entry of sys.modules, `finder` behind an import hook refusing it.
WITHOUT_RAY = """
import sys


class NoRay:
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if sys.argv.pop(1) == "none":
    sys.modules["ray"] = None
else:
    sys.meta_path.insert(0, NoRay())
import pytest

sys.exit(pytest.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("hidden", ["none", "finder"])
@pytest.mark.parametrize("asked", [["--ragmetrics-engine", "ray"], ["--ragmetrics-mode=bulk"]])
def test_the_ray_engine_without_ray_is_a_usage_error_saying_what_to_install(
    project: Project, hidden: str, asked: list[str]
) -> None:
    """By the option or by [settings] engine: the run stops before any row runs."""
    if asked == ["--ragmetrics-mode=bulk"]:
        project.write("thresholds.toml", '[settings]\nengine = "ray"\n')
    project.write("without_ray.py", WITHOUT_RAY)
    done = subprocess.run(
        [sys.executable, "without_ray.py", hidden, "-p", "no:cacheprovider", *asked],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:] + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "the Ray engine needs Ray: pip install 'pytest-ragmetrics[ray]'" in done.stderr


# Eight rows, each ending its test another way: e1 SystemExit, e2 pytest.xfail, e3
# pytest.skip, e4 GeneratorExit, e5 a BaseException of the test's own, e6 unittest's
# SkipTest, e7 passes (f1 1), e8 fails its assert (f1 0). tokens is recorded first: 100 x i.
ENDINGS_ROWS = [
    {"id": f"e{i}", "answer": "Paris" if i != 8 else "Rome", "gold": "Paris", "tokens": 100 * i}
    for i in range(1, 9)
]

ENDINGS = """
import unittest

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=8)


class Stop(BaseException):
    pass


def test_answers(row, f1, tokens):
    tokens(row)
    if row.id == "e1":
        raise SystemExit(3)
    if row.id == "e2":
        pytest.xfail("not yet")
    if row.id == "e3":
        pytest.skip("later")
    if row.id == "e4":
        raise GeneratorExit("closed")
    if row.id == "e5":
        raise Stop("its own")
    if row.id == "e6":
        raise unittest.SkipTest("unittest's skip")
    assert f1(row) > 0.5
"""


def test_every_way_a_row_can_end_ends_it_alone_as_in_row_mode(project: Project) -> None:
    """pytest's rules for a test's end (pytest.xfail and unittest's SkipTest skip it,
    every other exception but KeyboardInterrupt and pytest.exit fails it), applied per
    row: the batch goes on past each, and every row reports as its own item would."""
    project.write("data/rows.jsonl", jsonl(ENDINGS_ROWS))
    project.write("test_eval.py", ENDINGS)
    project.write("thresholds.toml", "")
    row_result, row_report, bulk_result, bulk_report = _both(project)
    row_result.assert_outcomes(passed=1, failed=4, skipped=2, xfailed=1)
    bulk_result.assert_outcomes(failed=1)
    bulk_result.stdout.fnmatch_lines(
        [
            "*rows-1-8: 1 of 8 rows failed, 3 errored*",
            "  data/rows.jsonl:1: call raised SystemExit: 3",
            "  data/rows.jsonl:4: call raised GeneratorExit: closed",
            "  data/rows.jsonl:5: call raised Stop: its own",
            "  data/rows.jsonl:8 (row 'e8'): assert f1=0 *> 0.5",
        ]
    )
    assert bulk_report["evals"] == row_report["evals"]
    (evaluation,) = bulk_report["evals"]
    statuses = [(row["id"], row["status"]) for row in evaluation["rows"]]
    assert statuses == [
        ("e1", "error"),
        ("e4", "error"),
        ("e5", "error"),
        ("e7", "passed"),
        ("e8", "failed"),
    ]
    assert evaluation["errors"] == 3
    assert evaluation["metrics"]["tokens"]["mean"] == (100 + 400 + 500 + 700 + 800) / 5


def test_with_runxfail_a_row_raising_xfail_fails_as_in_row_mode(project: Project) -> None:
    """--runxfail makes ``pytest.xfail()`` do nothing, in either mode; the exception it
    raises, raised by the test itself, then fails its test as ``pytest.fail`` does."""
    project.write("data/rows.jsonl", jsonl(ENDINGS_ROWS))
    raising = ENDINGS.replace('pytest.xfail("not yet")', 'raise pytest.xfail.Exception("not yet")')
    assert raising != ENDINGS
    project.write("test_eval.py", raising)
    project.write("thresholds.toml", "")
    row_result, row_report, bulk_result, bulk_report = _both(project, "--runxfail")
    row_result.assert_outcomes(passed=1, failed=5, skipped=2)
    bulk_result.stdout.fnmatch_lines(["*rows-1-8: 2 of 8 rows failed, 3 errored*"])
    assert bulk_report["evals"] == row_report["evals"]
    (evaluation,) = bulk_report["evals"]
    e2 = next(row for row in evaluation["rows"] if row["id"] == "e2")
    assert e2["status"] == "failed"


EXITING = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=4)


def test_answers(row, f1):
    if row.id == "r2":
        pytest.exit("stop here")
    f1(row)
"""


def test_pytest_exit_in_a_row_stops_the_run_as_in_row_mode(project: Project) -> None:
    project.write("test_eval.py", EXITING)
    project.write("thresholds.toml", "")
    for mode in ("row", "bulk"):
        result = project.run(f"--ragmetrics-mode={mode}")
        assert result.ret == pytest.ExitCode.INTERRUPTED, mode
        result.stdout.fnmatch_lines(["*Exit: stop here*"])


GENERATED_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=700)


def test_answers(row, em, f1, idk_citation, tokens):
    em(row)
    idk_citation(row)
    tokens(row)
    assert f1(row) > 0
"""


def test_generated_rows_score_alike_in_row_and_bulk_mode(project: Project) -> None:
    """helpers.generated's 3,000 rows, the same ones the Ray engine is held to on two
    nodes: row mode and bulk mode give the same values, gates and failing rows, and the
    numbers are those worked out by hand from how the rows were made."""
    project.write("data/rows.jsonl", generated_rows())
    project.write("test_eval.py", GENERATED_EVAL)
    project.write(
        "thresholds.toml",
        '[gates]\n"f1.mean" = ">= 0.3"\n"em.mean" = ">= 0.5 @ 95%"\n"idk_citation.sum" = "== 0"\n',
    )
    row_result, row_report, bulk_result, bulk_report = _both(project)
    assert row_result.ret == bulk_result.ret == 1  # failing rows and gates
    assert bulk_report["evals"] == row_report["evals"]
    (entry,) = bulk_report["evals"]
    # Of rows 0-2999, line 1235 is a bad row; every 7th answers the wrong city and every
    # 11th does not know: 429 + 273 - 39 (every 77th) = 663 rows whose f1 is 0, which the
    # test's assert fails; the 2,336 others name the gold city ("paris is city" against
    # "paris" after SQuAD's normalisation: f1 1/2, em 0 as the answer is more than it).
    statuses = [row["status"] for row in entry["rows"]]
    assert (statuses.count("passed"), statuses.count("failed"), statuses.count("error")) == (
        2336,
        663,
        1,
    )
    metrics = entry["metrics"]
    assert metrics["f1"]["count"] == 2999
    assert metrics["f1"]["mean"] == pytest.approx(0.5 * 2336 / 2999, abs=1e-12)
    assert metrics["em"]["mean"] == 0
    assert metrics["idk_citation"]["sum"] == 273
    assert metrics["errors"]["sum"] == 1
    assert {gate["name"]: gate["status"] for gate in entry["gates"]} == {
        "f1.mean": "passed",
        "em.mean": "failed",
        "idk_citation.sum": "failed",
    }
