"""The plugin end to end through pytester, in every mode: no xdist, -n 0 and -n 2.

Expected numbers are computed by hand from the rows in conftest.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest
from helpers.project import EVAL, ROWS, Project, jsonl

N_ROWS = len(ROWS)
N_GATES = 4


def test_rows_become_tests_and_passing_gates_are_passed_tests(project: Project) -> None:
    result = project.run("-v")
    result.assert_outcomes(passed=N_ROWS + N_GATES)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*test_eval.py::gate::f1.mean PASSED*",
            "*ragmetrics*",
            "Eval * N * Faithfulness * Overlap * F1 * Tokens * P50 ms * Abstain",
            "test_eval.py * 4 * — * — * 0.500 * 250.0 * 250 * 0.250",
            "Gates: 4 passed, 0 failed, 0 skipped",
        ]
    )


def test_a_breached_gate_is_a_failed_test_with_its_numbers(project: Project) -> None:
    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= 200"\n"f1.mean" = ">= 0.5"\n')
    result = project.run()
    result.assert_outcomes(passed=N_ROWS + 1, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*_ gate tokens.mean of test_eval.py _*",
            "tokens.mean <= 200 FAILS: tokens mean is 250, outside <= 200",
            "value     250 (mean of tokens)",
            "bound     200",
            "rows      4 with a value of 4 run (0 errored; dataset has 4)",
            "FAILED test_eval.py::gate::tokens.mean - tokens.mean <= 200 FAILS*",
        ]
    )


def test_json_report_holds_hand_computed_aggregates(project: Project) -> None:
    result, report = project.run_json()
    assert result.ret == 0
    assert report["schema_version"] == 1
    (evaluation,) = report["evals"]
    assert (evaluation["name"], evaluation["n"], evaluation["errors"]) == ("test_eval.py", 4, 0)
    metrics = evaluation["metrics"]
    assert metrics["f1"]["mean"] == 0.5
    assert metrics["em"]["mean"] == 0.25
    assert metrics["abstain"]["rate"] == 0.25
    assert metrics["idk_citation"]["sum"] == 0
    assert metrics["tokens"]["mean"] == 250
    assert metrics["latency_ms"]["p50"] == 250
    assert metrics["latency_ms"]["p95"] == pytest.approx(385)
    # r2 has stages rewrite 60 and generate 140; the others are unstaged (100 + 300 + 400)
    stages = evaluation["breakdowns"]["tokens_by_stage"]
    assert stages == {
        "(unstaged)": {"sum": 800, "mean": 200},
        "generate": {"sum": 140, "mean": 35},
        "rewrite": {"sum": 60, "mean": 15},
    }
    assert [row["id"] for row in evaluation["rows"]] == ["r1", "r2", "r3", "r4"]
    assert evaluation["rows"][0]["metrics"]["f1"] == 0.5
    gates = {gate["name"]: gate for gate in evaluation["gates"]}
    assert gates["tokens.mean"] == {
        "name": "tokens.mean",
        "rule": "<= 250",
        "status": "passed",
        "passed": True,
        "value": 250,
        "bound": 250,
        "baseline": None,
        "message": gates["tokens.mean"]["message"],
        "regressed": [],
        "stats": None,  # a fixed bound, not read on an interval: no evidence to carry
    }


def test_aggregates_are_identical_with_and_without_xdist(
    make_project: Callable[[str], Project],
) -> None:
    project = make_project("no-xdist")
    _, serial = project.run_json()
    project.mode = "n2"
    _, parallel = project.run_json()
    project.mode = "n0"
    _, zero = project.run_json()
    assert serial["evals"] == parallel["evals"] == zero["evals"]


BASELINE_GATES = """
[gates]
"f1.mean" = ">= baseline - 0.01"
"tokens.mean" = "<= 1.2x baseline"
"""


def test_baseline_update_and_comparison(project: Project) -> None:
    project.write("thresholds.toml", BASELINE_GATES)
    missing = project.run()
    missing.assert_outcomes(passed=N_ROWS, failed=2)
    missing.stdout.fnmatch_lines(
        [
            "no baseline is stored at __baselines__/test_eval.json",
            "store this run's values as the baseline (this accepts them as the reference): "
            "pytest test_eval.py --ragmetrics-update-baseline",
        ]
    )

    updated = project.run("--ragmetrics-update-baseline")
    updated.assert_outcomes(passed=N_ROWS + 2)
    updated.stdout.fnmatch_lines(
        ["baseline of test_eval.py written to __baselines__/test_eval.json"]
    )
    stored_text = (project.path / "__baselines__" / "test_eval.json").read_text()
    stored = json.loads(stored_text)
    assert list(stored) == sorted(stored)
    assert stored["metrics"]["tokens"]["mean"] == 250
    assert stored["dataset"] == "data/rows.jsonl"
    assert "dataset" not in stored["signature"]  # where rows come from is not a setting
    row_lines = [line for line in stored_text.splitlines() if '"inputs"' in line]
    assert [line.split(":")[0].strip() for line in row_lines] == ['"r1"', '"r2"', '"r3"', '"r4"']
    assert stored["rows"]["r4"]["values"]["tokens"] == 400

    project.run().assert_outcomes(passed=N_ROWS + 2)

    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= 0.9x baseline"\n')
    tighter = project.run()
    tighter.assert_outcomes(passed=N_ROWS, failed=1)
    tighter.stdout.fnmatch_lines(
        ["bound     225 (0.9 × baseline 250)", "baseline  250 from __baselines__/test_eval.json"]
    )

    # A changed log is what a baseline is for: it is compared, never refused.
    changed = [dict(row) for row in ROWS]
    changed[0]["answer"] = "Lyon [CIT:d1]."
    project.write("data/rows.jsonl", jsonl(changed))
    project.write("thresholds.toml", BASELINE_GATES)
    compared = project.run()
    compared.assert_outcomes(passed=N_ROWS + 1, failed=1)  # r1's F1 went 0.5 -> 0
    compared.stdout.fnmatch_lines(
        [
            "f1.mean >= baseline - 0.01 FAILS: f1 mean is 0.375, outside >= 0.49 *",
            "regressed 1 of 4 paired rows break the rule on their own: r1 0.5 → 0",
        ]
    )

    # Changed metric settings are refused, naming what changed.
    project.write("thresholds.toml", "[settings]\ntau_sim = 0.7\n" + BASELINE_GATES)
    mismatch = project.run()
    mismatch.assert_outcomes(passed=N_ROWS, failed=2)
    mismatch.stdout.fnmatch_lines(
        [
            "*was made with other metric settings, so it is not compared; "
            "the settings that differ:",
            "  tau_sim: stored 0.65, now 0.7",
            "restore the settings; or, if the new settings are meant to stay, store this run's "
            "values as the baseline (this accepts them as the reference): *",
        ]
    )


def test_bad_rows_error_alone_with_file_line_and_field(project: Project) -> None:
    bad = [
        {"id": "no-gold", "answer": "x", "tokens": 1, "latency_ms": 1},
        {"id": "bad-tokens", "answer": "x", "gold": "x", "tokens": "many", "latency_ms": 1},
    ]
    project.write("data/rows.jsonl", jsonl(ROWS) + "{not json\n" + jsonl(bad))
    result, report = project.run_json()
    result.assert_outcomes(passed=N_ROWS + N_GATES, errors=3)
    assert result.ret == 1
    result.stdout.fnmatch_lines_random(
        [
            "*data/rows.jsonl:5: field '<json>': not valid JSON*",
            "*data/rows.jsonl:6: field 'gold': required by em, f1 but missing*",
            "*data/rows.jsonl:7: field 'tokens': expected an int, {prompt, completion}*",
        ]
    )
    (evaluation,) = report["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (7, 3)
    assert evaluation["metrics"]["f1"] == {
        "count": 4,
        "mean": 0.5,
        "sum": 2.0,
        "p50": 0.5,
        "p95": pytest.approx(0.925),
    }
    assert evaluation["metrics"]["errors"]["sum"] == 3
    errored = {row["id"]: row["errors"] for row in evaluation["rows"] if row["errors"]}
    assert set(errored) >= {"no-gold", "bad-tokens"}


def test_row_errors_can_be_skips_instead(project: Project) -> None:
    project.write("data/rows.jsonl", jsonl(ROWS) + '{"id": "no-gold", "answer": "x"}\n')
    project.write("thresholds.toml", '[settings]\nrow_errors = "skip"\n')
    result, report = project.run_json("-rs")
    result.assert_outcomes(passed=N_ROWS, skipped=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*bad row: data/rows.jsonl:5: field 'gold': required by*"])
    assert report["evals"][0]["errors"] == 1


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            ["-k", "r1 or r2"],
            "partial run (-k, -m, --lf, skips, ...): 2 of 4 rows of data/rows.jsonl ran",
        ),
        (["--ragmetrics-limit", "3"], "--ragmetrics-limit 3: 3 of 4 rows of data/rows.jsonl ran"),
    ],
)
def test_partial_runs_skip_gates_visibly(project: Project, args: list[str], reason: str) -> None:
    result = project.run("-rs", *args)
    passed = 3 if "--ragmetrics-limit" in args else 2
    result.assert_outcomes(passed=passed, skipped=N_GATES)
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"SKIPPED * test_eval.py: gate skipped: {reason}*"])


def test_forced_gates_run_on_partial_runs(project: Project) -> None:
    project.run("--ragmetrics-limit", "2", "--ragmetrics-force-gates").assert_outcomes(
        passed=2 + 3,
        failed=1,  # f1 mean of r1, r2 is 0.75; tokens mean 150; p50 150; but:
    ) if False else None
    result, report = project.run_json("--ragmetrics-limit", "2", "--ragmetrics-force-gates")
    # r1, r2: f1 0.5 and 1 (mean 0.75), tokens 100 and 200 (mean 150), latency p50 150
    result.assert_outcomes(passed=2 + N_GATES)
    gates = {g["name"]: g["value"] for g in report["evals"][0]["gates"]}
    assert gates == {
        "idk_citation.sum": 0,
        "f1.mean": 0.75,
        "tokens.mean": 150,
        "latency_ms.p50": 150,
    }


def test_a_stopped_run_skips_gates(project: Project) -> None:
    rows = [dict(ROWS[0], answer="I don't know [CIT:d1]."), *ROWS[1:]]
    project.write("data/rows.jsonl", jsonl(rows))
    result = project.run("-x", "-rs")
    # a -x stop is exit code 1 in pytest and 2 (interrupted) under xdist
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1
    assert outcomes["skipped"] == N_GATES
    result.stdout.fnmatch_lines(["*gate skipped: the run stopped early*"])


def test_failed_assertions_show_the_evidence(project: Project) -> None:
    rows = [dict(ROWS[0], answer="Paris [CIT:d1]. I don't know the rest [CIT:d1]."), *ROWS[1:]]
    project.write("data/rows.jsonl", jsonl(rows))
    result = project.run()
    result.stdout.fnmatch_lines(
        [
            "E       assert idk_citation=1 (row 'r1': IDK sentence \"I don't know the rest "
            '[CIT:d1]." carries [CIT:d1]) == 0'
        ]
    )


def test_malformed_thresholds_is_a_usage_error_naming_the_key(project: Project) -> None:
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= lots"\n')
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "thresholds.toml: [gates] 'f1.mean': cannot read rule '>= lots'" in result.stderr.str()


def test_markers_at_class_and_function_level_with_per_eval_overrides(project: Project) -> None:
    project.write(
        "test_eval.py",
        """
import pytest

class TestAnswers:
    pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")

    def test_f1(self, row, f1):
        f1(row)

@pytest.mark.ragmetrics(dataset="data/rows.jsonl", name="latency-only")
def test_latency(row, latency):
    latency(row)

def test_plain():
    pass
""",
    )
    project.write(
        "thresholds.toml",
        '[gates]\n"f1.mean" = ">= 0.5"\n\n[gates."latency-only"]\n"f1.mean" = false\n'
        '"latency_ms.p95" = "<= 385"\n',
    )
    result, report = project.run_json("-v")
    result.assert_outcomes(passed=2 * N_ROWS + 1 + 2)
    result.stdout.fnmatch_lines_random(
        ["*test_eval.py::gate::f1.mean PASSED*", "*latency-only::gate::latency_ms.p95 PASSED*"]
    )
    assert [e["name"] for e in report["evals"]] == ["latency-only", "test_eval.py"]


def test_gates_are_in_junit_xml(project: Project) -> None:
    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= 200"\n')
    project.run("--junitxml", "junit.xml")
    suite = ET.parse(project.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(N_ROWS + 1), "1")
    cases = {(case.get("classname"), case.get("name")): case for case in suite.iter("testcase")}
    failure = cases[("test_eval.gate", "tokens.mean")].find("failure")
    assert failure is not None
    assert "tokens.mean <= 200 FAILS" in (failure.get("message") or "") + (failure.text or "")


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('dataset="data/nope.jsonl"', "data/nope.jsonl: cannot read the dataset"),
        ('dataset="data/rows.txt"', "data/rows.txt: cannot tell the dataset format"),
        ('dataset="data/rows.jsonl", weights=3', "unknown ragmetrics marker argument(s) weights"),
        ("", 'ragmetrics marker needs dataset="path/to/rows.jsonl"'),
    ],
)
def test_collection_problems_are_clear(project: Project, marker: str, message: str) -> None:
    project.write("data/rows.txt", "")
    project.write(
        "test_eval.py",
        f"import pytest\n\n@pytest.mark.ragmetrics({marker})\ndef test_it(row):\n    pass\n",
    )
    result = project.run()
    # collection errors interrupt pytest (exit 2); xdist reports them as failures (exit 1)
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    result.stdout.fnmatch_lines([f"*test_eval.py::test_it: {message}*"])
    assert "Traceback" not in result.stdout.str()
    assert "During handling" not in result.stdout.str()


@pytest.mark.parametrize(
    ("marker", "takes"), [("ragmetric", "row"), ("ragmetircs", "row"), ("RagMetrics", "rows")]
)
def test_a_misspelled_marker_says_which_it_meant(project: Project, marker: str, takes: str) -> None:
    """A marker one slip from ``ragmetrics`` is a typo: the test fails to collect naming
    the marker meant, not with "has no dataset" as though none were there."""
    project.write("evals/data/rows.jsonl", jsonl(ROWS))
    project.write(
        "evals/test_typo.py",
        "import pytest\n\n"
        f'pytestmark = pytest.mark.{marker}(dataset="data/rows.jsonl")\n\n'
        f"def test_it({takes}):\n    pass\n",
    )
    result = project.run("evals")
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    result.stdout.fnmatch_lines(
        [
            f"*evals/test_typo.py::test_it takes `{takes}` and is marked `{marker}`, which "
            "is no marker of pytest-ragmetrics: did you mean `ragmetrics`?*"
        ]
    )
    assert "has no dataset" not in result.stdout.str()


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("data/row.jsonl", "data/rows.jsonl"),  # the file's name
        ("dat/rows.jsonl", "data/rows.jsonl"),  # its folder's
        ("data/rows.json", "data/rows.jsonl"),  # its extension
        ("data/nope.jsonl", None),  # nothing close: no guess
    ],
)
def test_a_dataset_path_one_slip_from_a_file_says_which(
    project: Project, given: str, meant: str | None
) -> None:
    project.write(
        "test_eval.py",
        f'import pytest\n\n@pytest.mark.ragmetrics(dataset="{given}")\n'
        "def test_it(row):\n    pass\n",
    )
    result = project.run()
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    if meant is None:
        result.stdout.fnmatch_lines(
            [f"*test_eval.py::test_it: {given}: cannot read the dataset: No such file*"]
        )
        assert "did you mean" not in result.stdout.str()
    else:  # after why it cannot be read (for .json: its format)
        result.stdout.fnmatch_lines(
            [f'*test_eval.py::test_it: {given}: * (did you mean dataset="{meant}"?)']
        )


def test_row_without_a_dataset_is_a_usage_error(project: Project) -> None:
    project.write("test_eval.py", "def test_row(row):\n    pass\n")
    result = project.run()
    result.stdout.fnmatch_lines(["*takes `row` but has no dataset*"])
    assert result.ret != 0


TWO_TESTS = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_quality(row, f1):
    f1(row)


def test_cost(tokens, row):  # a metric fixture may come before `row`
    tokens(row)
"""


def test_deselecting_one_test_of_an_eval_makes_the_run_partial(project: Project) -> None:
    project.write("test_eval.py", TWO_TESTS)
    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= 250"\n"f1.mean" = ">= 0.5"\n')
    result = project.run("-rs", "-k", "test_cost", "--ragmetrics-update-baseline")
    result.assert_outcomes(passed=N_ROWS, skipped=2)
    result.stdout.fnmatch_lines(["*test_eval.py::test_quality ran 0*", "*NOT updated*"])
    assert not (project.path / "__baselines__").exists()
    project.run().assert_outcomes(passed=2 * N_ROWS + 2)


def test_skipped_rows_do_not_count_as_run(project: Project) -> None:
    project.write(
        "test_eval.py",
        EVAL.replace("def test_answers", "@pytest.mark.skip(reason='later')\ndef test_answers"),
    )
    result = project.run("-rs")
    result.assert_outcomes(skipped=N_ROWS + N_GATES)
    result.stdout.fnmatch_lines(["*0 of 4 rows of data/rows.jsonl ran*4 row(s) skipped*"])


def test_a_failing_fixture_or_exception_makes_the_row_an_error(project: Project) -> None:
    project.write(
        "test_eval.py",
        """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


@pytest.fixture
def live_answer(row):
    if row.id == "r2":
        raise ConnectionError("system under test unreachable")
    return row.answer


def test_live(row, live_answer, f1):
    if row.id == "r3":
        raise KeyError("bug")
    f1(row)
""",
    )
    project.write("thresholds.toml", '[gates]\n"errors.sum" = "== 0"\n')
    result, report = project.run_json()
    result.assert_outcomes(passed=2, failed=2, errors=1)
    (evaluation,) = report["evals"]
    errors = {row["id"]: row["errors"] for row in evaluation["rows"] if row["errors"]}
    assert errors == {
        "r2": ["data/rows.jsonl:2: setup raised ConnectionError: system under test unreachable"],
        "r3": ["data/rows.jsonl:3: call raised KeyError: 'bug'"],
    }
    assert evaluation["metrics"]["f1"]["count"] == 2
    result.stdout.fnmatch_lines(["FAILED test_eval.py::gate::errors.sum - errors.sum == 0 FAILS*"])


def test_an_empty_dataset_fails_collection(project: Project) -> None:
    project.write("data/rows.jsonl", "\n")
    result = project.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*test_eval.py::test_answers: data/rows.jsonl has no rows*"])


def test_a_gate_on_a_metric_the_eval_never_records_fails(project: Project) -> None:
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    project.write("test_eval.py", TWO_TESTS.replace("f1(row)", "pass"))
    result = project.run()
    result.assert_outcomes(passed=2 * N_ROWS, failed=1)
    result.stdout.fnmatch_lines(["*no row of test_eval.py recorded f1*"])


def test_a_gate_whose_rows_all_errored_points_at_the_errors(project: Project) -> None:
    """No row recorded f1 because every row errored before reaching it: the message says
    so, before it mentions switching the gate off."""
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    project.write(
        "test_eval.py", TWO_TESTS.replace("    f1(row)", "    undefined_name\n    f1(row)")
    )
    result = project.run()
    result.assert_outcomes(passed=N_ROWS, failed=N_ROWS + 1)
    result.stdout.fnmatch_lines(
        [
            "f1.mean >= 0.5: cannot be checked: no row of test_eval.py recorded f1",
            f"{N_ROWS} of {N_ROWS} row(s) errored (their errors are listed above): fix them, *",
            "if this eval does not compute f1, switch the gate off*",
        ]
    )
    result.stdout.fnmatch_lines([f"Rows: 0 passed, 0 failed, {N_ROWS} errored"])
    # rows that stopped before the call say nothing of whether the test calls f1
    assert "takes the metric fixture `f1`" not in result.stdout.str()


# test_cost takes `tokens` but calls it on no row: nothing of tokens is recorded.
UNCALLED = TWO_TESTS.replace("    tokens(row)", "    pass")


@pytest.mark.parametrize("stat", ["sum", "count"])
def test_a_sum_or_count_gate_on_a_metric_no_row_recorded_cannot_be_checked(
    project: Project, stat: str
) -> None:
    """A sum or count of no value is no 0: the gate could never fail, so it fails."""
    project.write("test_eval.py", UNCALLED)
    project.write("thresholds.toml", f'[gates]\n"tokens.{stat}" = "<= 1000"\n')
    result, report = project.run_json()
    result.assert_outcomes(passed=2 * N_ROWS, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"tokens.{stat} <= 1000: cannot be checked: no row of test_eval.py recorded tokens",
            f"FAILED test_eval.py::gate::tokens.{stat} - tokens.{stat} <= 1000: cannot*",
        ]
    )
    (gate,) = report["evals"][0]["gates"]
    assert (gate["status"], gate["value"]) == ("failed", None)


UNCALLED_WARNING = (
    "test_eval.py::test_cost takes the metric fixture `tokens` but called it on none of the "
    "4 rows it ran: nothing of it was recorded; call tokens(row) in the test, or take the "
    "argument out"
)


@pytest.mark.parametrize("mode", [[], ["--ragmetrics-mode=bulk", "--ragmetrics-batch-size=3"]])
def test_a_metric_fixture_that_no_row_called_is_warned_about(
    project: Project, mode: list[str]
) -> None:
    """In row mode, and in bulk mode, where an item runs a batch of rows: rows count."""
    project.write("test_eval.py", UNCALLED)
    project.write("thresholds.toml", "")
    result, report = project.run_json(*mode)
    result.assert_outcomes(passed=2 * 2 if mode else 2 * N_ROWS)  # 2 batches of 3 rows
    result.stdout.fnmatch_lines(["Warnings:", f"  {UNCALLED_WARNING}"])
    (evaluation,) = report["evals"]
    assert evaluation["warnings"] == [UNCALLED_WARNING]


def test_a_metric_fixture_called_on_some_rows_is_not_warned_about(
    make_project: Callable[[str], Project],
) -> None:
    """Called on r4 only: under -n 2 the worker without r4 never calls it, and only the
    controller, seeing every row, can tell that some row did."""
    project = make_project("n2")
    project.write(
        "test_eval.py",
        TWO_TESTS.replace("    tokens(row)", '    if row.id == "r4":\n        tokens(row)'),
    )
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=2 * N_ROWS)
    result.stdout.no_fnmatch_line("Warnings:")
    (evaluation,) = report["evals"]
    assert evaluation["warnings"] == []
    assert evaluation["metrics"]["tokens"]["count"] == 1


def test_each_row_carries_its_status_from_every_test_that_ran_it(project: Project) -> None:
    project.write(
        "test_eval.py",
        """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_correct(row, f1):
    assert f1(row) > 0  # r3's f1 is 0: this test's verdict on r3 fails


def test_cost(row, tokens):
    if row.id == "r2":
        raise KeyError("bug")  # an error, not a verdict
    tokens(row)
""",
    )
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=6, failed=2)
    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    assert {row_id: row["status"] for row_id, row in rows.items()} == {
        "r1": "passed",
        "r2": "error",
        "r3": "failed",
        "r4": "passed",
    }
    assert rows["r3"]["failed_tests"] == ["test_eval.py::test_correct"]
    assert rows["r2"]["failed_tests"] == []  # its error is not test_cost's verdict
