"""Metrics declared in a project's conftest.py with ``pytest_ragmetrics.metric``: recorded,
gated, compared with a baseline and reported like the built-in metrics; a bad value or
declaration is an error naming the metric. In-process runs, but for the one test whose
subject is merging across xdist workers.

The expected values are counted by hand on the four rows of ``conftest.ROWS``:
``words`` (white-space separated words of the answer, markers included) is 5, 2, 3, 4
("Paris is the capital [CIT:d1]." / "Berlin [1]." / "I don't know." / "Rome is old
[CIT:d4]."): sum 14, mean 3.5, p50 3.5, p95 4 + 0.85 x (5 - 4) = 4.85 (linear
interpolation at rank 0.95 x 3 = 2.85); ``cites`` (the answer holds a "[") is 1, 1, 0, 1:
rate 0.75. The same metrics on the Ray engine: ``test_ray_engine.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.project import ROWS, Project, jsonl, terminal_section

from pytest_ragmetrics.metrics.catalog import in_force
from pytest_ragmetrics.plugin.catalog import CATALOG_KEY, run_catalog

METRICS = '''
from pytest_ragmetrics import metric


@metric(requires=("answer",), range=(0, 50))
def words(row):
    """Words in the answer, citation markers included."""
    count = len(row.answer.split())
    return count, f"{count} word(s)"


@metric(name="cites", requires=("answer",), binary=True)
def answer_cites(row):
    """1 when the answer holds a citation marker, else 0."""
    return float("[" in row.answer)
'''

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, words, cites, f1):
    assert words(row) <= 10
    cites(row); f1(row)
"""

# EVAL, with marker_words (CORPUS_METRIC, below) recorded too
WITH_MARKERS = EVAL.replace("row, words", "row, marker_words, words").replace(
    "f1(row)", "f1(row); marker_words(row)"
)


GATES = """
[gates]
"words.mean" = "<= 3.5"
"words.p95" = "<= 4.9"
"cites.rate" = ">= 0.75"
"""


@pytest.fixture
def custom(project: Project) -> Project:
    """The standard project with two metrics declared in its conftest.py and gated."""
    project.write("conftest.py", METRICS)
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", GATES)
    return project


def _refused(project: Project, conftest: str, message: str) -> None:
    """With ``conftest`` as the project's conftest.py, the run is a usage error saying
    ``message`` (an fnmatch pattern)."""
    project.write("conftest.py", conftest)
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def _eval(report: dict[str, Any]) -> dict[str, Any]:
    (evaluation,) = report["evals"]
    assert isinstance(evaluation, dict)
    return evaluation


def test_a_declared_metric_is_recorded_gated_and_reported(custom: Project) -> None:
    result, report = custom.run_json("--ragmetrics-md", "report.md", "--ragmetrics-html", "r.html")
    result.assert_outcomes(passed=4 + 3)
    evaluation = _eval(report)
    assert evaluation["metrics"]["words"] == {
        "count": 4,
        "sum": 14.0,
        "mean": 3.5,
        "p50": 3.5,
        "p95": pytest.approx(4.85),
    }
    assert evaluation["metrics"]["cites"]["rate"] == 0.75
    first = evaluation["rows"][0]
    assert first["metrics"]["words"] == 5
    assert first["evidence"]["words"] == "5 word(s)"
    assert first["evidence"]["cites"] == "cites gave no evidence"
    gates = {gate["name"]: gate["status"] for gate in evaluation["gates"]}
    assert gates == {"words.mean": "passed", "words.p95": "passed", "cites.rate": "passed"}
    result.stdout.fnmatch_lines(["More metrics*", "*words 3.5*"])
    assert "words 3.5" in (custom.path / "report.md").read_text(encoding="utf-8")
    html = (custom.path / "r.html").read_text(encoding="utf-8")
    assert "<td>words.mean</td>" in html  # the gates table
    assert "5 word(s)" in html  # r1's evidence, in the rows' drill-down


def test_a_gate_on_a_declared_metric_fails_with_its_numbers(custom: Project) -> None:
    custom.write("thresholds.toml", '[gates]\n"words.mean" = "<= 3"\n')
    result = custom.run()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*words.mean <= 3 FAILS: words mean is 3.5, outside <= 3*"])


def test_an_assertion_on_a_declared_metric_shows_its_evidence(custom: Project) -> None:
    custom.write("test_eval.py", EVAL.replace("<= 10", "<= 4"))
    custom.write("thresholds.toml", "")
    result = custom.run()
    result.assert_outcomes(passed=3, failed=1)  # r1 has 5 words
    result.stdout.fnmatch_lines(["*words=5 (row 'r1': 5 word(s))*"])


def test_a_declared_metric_is_compared_with_its_baseline(custom: Project) -> None:
    custom.write("thresholds.toml", '[gates]\n"words.mean" = "<= baseline"\n')
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 1)
    stored = json.loads((custom.path / "__baselines__" / "test_eval.json").read_text())
    assert stored["metrics"]["words"]["mean"] == 3.5
    assert stored["rows"]["r2"]["values"]["words"] == 2
    longer = [dict(row) for row in ROWS]
    longer[1]["answer"] = "Berlin is the capital [1]."  # 5 words instead of 2: mean 17/4
    custom.write("data/rows.jsonl", jsonl(longer))
    result = custom.run()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*words.mean <= baseline FAILS: words mean is 4.25, outside <= 3.5*",
            "*regressed 1 of 4 paired rows break the rule on their own: r2 2 → 5*",
        ]
    )


def test_a_baseline_of_another_version_of_the_metric_is_refused(custom: Project) -> None:
    """The metric's code is the user's: its version, when given, enters the baseline's
    signature, so numbers of a rewritten metric are never compared with the old ones."""
    custom.write("thresholds.toml", '[gates]\n"words.mean" = "<= baseline"\n')
    versioned = METRICS.replace("range=(0, 50))", "range=(0, 50), version=VERSION)")
    custom.write("conftest.py", versioned.replace("VERSION", "1"))
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 1)
    stored = json.loads((custom.path / "__baselines__" / "test_eval.json").read_text())
    assert stored["signature"]["words.version"] == "1"
    custom.run().assert_outcomes(passed=4 + 1)  # the same version: compared, and holds
    custom.write("conftest.py", versioned.replace("VERSION", '"2-words"'))
    result = custom.run()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(['*words.version: stored "1", now "2-words"*'])


BASELINE_GATES = """
[gates]
"words.mean" = "<= baseline"
"cites.rate" = ">= baseline"
"f1.mean" = ">= baseline"
"""


def test_a_version_bump_invalidates_only_that_metrics_gates(custom: Project) -> None:
    """A rewritten metric's numbers are not compared with the old ones, but every other
    metric of the baseline still is: the version is one metric's, not the whole file's."""
    custom.write("thresholds.toml", BASELINE_GATES)
    versioned = METRICS.replace("range=(0, 50))", "range=(0, 50), version=VERSION)")
    custom.write("conftest.py", versioned.replace("VERSION", "1"))
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 3)
    custom.write("conftest.py", versioned.replace("VERSION", "2"))
    result, report = custom.run_json()
    result.assert_outcomes(passed=4 + 2, failed=1)
    gates = {gate["name"]: gate for gate in _eval(report)["gates"]}
    assert gates["cites.rate"]["status"] == "passed"
    assert gates["f1.mean"]["status"] == "passed"
    assert gates["words.mean"]["status"] == "failed"
    result.stdout.fnmatch_lines(
        [
            "*words.mean <= baseline: cannot be checked*",
            "*made with another version of words, so words is not compared*",
            '*words.version: stored "1", now "2"*',
        ]
    )
    baseline = _eval(report)["baseline"]
    assert baseline["status"] == "paired"
    assert baseline["not_compared"] == {"words": ['words.version: stored "1", now "2"']}
    section = terminal_section(result, "ragmetrics")
    start = section.index("Stored baselines (rows paired by id):")
    assert section[start + 1 : start + 5] == [
        "  test_eval.py: gates of words not compared, the baseline holds another version:",
        '    words.version: stored "1", now "2"',
        "  test_eval.py: 4 of 4 stored rows paired",  # states unknown: not "none changed"
        "    no transformations: transformations need abstain, f1, overlap recorded; "
        "missing: abstain, overlap",
    ]


def test_a_newly_versioned_metric_leaves_the_other_gates_compared(custom: Project) -> None:
    """A metric declared (or given a version) after the baseline was stored has no
    version there: only its own gates are refused."""
    custom.write("thresholds.toml", BASELINE_GATES)
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 3)
    versioned = METRICS.replace("range=(0, 50))", "range=(0, 50), version=1)")
    custom.write("conftest.py", versioned)
    result = custom.run()
    result.assert_outcomes(passed=4 + 2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*words.mean <= baseline: cannot be checked*",
            '*words.version: stored default, now "1"*',
        ]
    )
    assert "cites.rate >= baseline: cannot be checked" not in result.stdout.str()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return 1 / 0", "words (conftest.py:*) raised ZeroDivisionError: division by zero"),
        ('return float("nan")', "words (conftest.py:*) returned nan: not finite*"),
        ('return float("inf"), "big"', "words (conftest.py:*) returned inf: not finite*"),
        ("return 51", "words (conftest.py:*) returned 51: outside its range [[]0, 50[]]*"),
        ('return "five"', "words (conftest.py:*) returned 'five': not a real number*"),
        ("return 1, 2", "words (conftest.py:*) returned (1, 2): a tuple must be (value, *"),
        (
            "return 10**400",
            "words (conftest.py:*) returned an integer of about 401 digits: too large for a float*",
        ),
    ],
)
def test_a_bad_value_on_one_row_makes_that_row_error(
    custom: Project, body: str, message: str
) -> None:
    """Only r3 ("I don't know.") takes the bad branch; the other rows are recorded."""
    bad = "    if row.id == 'r3':\n        " + body + "\n    count = len"
    custom.write("conftest.py", METRICS.replace("    count = len", bad, 1))
    custom.write("thresholds.toml", "")
    result, report = custom.run_json()
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines([f"*data/rows.jsonl:3: {message}"])
    evaluation = _eval(report)
    assert evaluation["errors"] == 1
    assert evaluation["metrics"]["words"]["count"] == 3
    assert evaluation["metrics"]["words"]["sum"] == 11  # 5 + 2 + 4, r3's never recorded
    (errored,) = [row for row in evaluation["rows"] if row["errors"]]
    assert errored["id"] == "r3"
    assert "words" not in errored["metrics"]


def test_a_row_without_a_required_field_errors_with_file_line_and_field(
    custom: Project,
) -> None:
    custom.write(
        "conftest.py",
        METRICS.replace('requires=("answer",), range', 'requires=("answer", "verdict"), range'),
    )
    custom.write("thresholds.toml", "")
    result = custom.run()
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        ["*data/rows.jsonl:1: field 'verdict': required by words but missing*"]
    )


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        (
            '@metric(name="f1")\ndef mine(row):\n    """Mine."""\n    return 1.0\n',
            "*conftest.py:*: metric 'f1' is already declared by pytest-ragmetrics in "
            "pytest_ragmetrics/metrics/answer.py (the built-in `f1` fixture)*",
        ),
        (
            '@metric\ndef latency_ms(row):\n    """Mine."""\n    return 1.0\n',
            "*metric 'latency_ms' is already declared by pytest-ragmetrics in "
            "pytest_ragmetrics/metrics/cost.py (the built-in `latency` fixture)*",
        ),
        (
            '@metric\ndef errors(row):\n    """Mine."""\n    return 1.0\n',
            "*metric 'errors' is already declared by pytest-ragmetrics in "
            "pytest_ragmetrics/metrics/catalog.py (a metric the plugin derives)*",
        ),
        (
            '@metric\ndef row(row):\n    """Mine."""\n    return 1.0\n',
            "*metric 'row' would replace pytest-ragmetrics's own `row` fixture "
            "(pytest_ragmetrics/plugin/fixtures.py)*",
        ),
        (
            '@metric(name="words")\ndef again(row):\n    """Again."""\n    return 1.0\n',
            "*conftest.py:17: metric 'words' is already declared at *conftest.py:5: declare "
            "it once, or give one of them another name*",
        ),
    ],
)
def test_a_name_already_taken_is_a_usage_error_naming_both_places(
    custom: Project, declaration: str, message: str
) -> None:
    _refused(custom, METRICS + "\n" + declaration, message)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('name="my-metric"', "*metric name 'my-metric' is not a Python identifier*"),
        ("range=(1, 0)", "*words: range (1, 0) is empty; give low <= high*"),
        ("binary=True, range=(0, 5)", "*a binary metric's range is (0, 1); got (0, 5)*"),
        ('requires="answer"', "*requires is a tuple of row field names, e.g. ('answer',)*"),
        ("version=True", "*words: version is a string or a whole number you change when*"),
        ('version=""', "*words: version is a string or a whole number*; got ''*"),
    ],
)
def test_a_malformed_declaration_says_what_to_change(
    custom: Project, arguments: str, message: str
) -> None:
    declaration = (
        f"from pytest_ragmetrics import metric\n\n@metric({arguments})\ndef words(row):\n"
        '    """Words."""\n    return 1.0\n'
    )
    _refused(custom, declaration, message)


def test_a_metric_without_a_docstring_is_refused(custom: Project) -> None:
    _refused(
        custom,
        "from pytest_ragmetrics import metric\n\n@metric\ndef words(row):\n    return 1\n",
        "*conftest.py:3: words has no docstring: give it one*",
    )


def test_a_metric_declared_after_thresholds_were_read_is_refused(custom: Project) -> None:
    """A conftest.py below the command-line path is imported during collection, after
    thresholds.toml was read: a gate on its metric is an unknown metric, a test using it
    errors saying where to declare it; neither is silently ignored."""
    custom.write("conftest.py", "")
    custom.write("evals/conftest.py", METRICS)
    custom.write("evals/test_eval.py", EVAL)
    custom.write("evals/data/rows.jsonl", jsonl(ROWS))
    (custom.path / "test_eval.py").unlink()
    gated = custom.run()
    assert gated.ret == pytest.ExitCode.USAGE_ERROR
    gated.stderr.fnmatch_lines(
        [
            "*thresholds.toml: [[]gates[]] 'words.mean': unknown metric 'words'; *A metric of "
            "your own is declared with pytest_ragmetrics.metric in the project's root "
            "conftest.py *"
        ]
    )
    custom.write("thresholds.toml", "")
    used = custom.run()
    used.assert_outcomes(errors=1)  # the test function's collection, not each of its rows
    used.stdout.fnmatch_lines(
        [
            "*evals/conftest.py:5: metric 'words' was declared after pytest read "
            "thresholds.toml*declare it in the project's root conftest.py*"
        ]
    )
    custom.write("thresholds.toml", GATES)
    custom.run("evals").assert_outcomes(passed=4 + 3)  # the folder named: read first


def test_one_name_declared_by_two_conftest_files_of_a_run_names_both(custom: Project) -> None:
    """Both conftest.py files are imported before thresholds.toml is read (the folder is
    named on the command line): the run's catalog cannot hold both."""
    custom.write("evals/conftest.py", METRICS)
    custom.write("evals/test_eval.py", EVAL)
    custom.write("evals/data/rows.jsonl", jsonl(ROWS))
    result = custom.run("evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*evals/conftest.py:5: metric 'words' is already declared at *conftest.py:5: "
            "declare it once, or give one of them another name*"
        ]
    )


def test_a_misspelled_custom_metric_in_thresholds_says_which_it_meant(
    custom: Project,
) -> None:
    custom.write("thresholds.toml", '[gates]\n"wrods.mean" = "<= 3.5"\n')
    result = custom.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*thresholds.toml: [[]gates[]] 'wrods.mean': unknown metric 'wrods' "
            "(did you mean words?)*"
        ]
    )


def test_a_metric_declared_in_a_test_module_is_refused_once(custom: Project) -> None:
    """A test module is imported while pytest collects it, long after thresholds.toml
    was read: its test fails to collect once, not once for each of its rows."""
    custom.write("conftest.py", "")
    custom.write("thresholds.toml", "")
    custom.write("test_eval.py", METRICS + EVAL)
    result = custom.run()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*test_eval.py:5: metric 'words' was declared after pytest read thresholds.toml*"]
    )


def test_pytest_fixtures_shows_the_docstring(custom: Project) -> None:
    result = custom.run("--fixtures", "-v")
    result.stdout.fnmatch_lines(
        [
            "*fixtures defined from conftest*",
            "words -- *",
            "    Words in the answer, citation markers included.",
            "    ",
            "    range [[]0, 50[]]; declared at conftest.py:5.",
        ]
    )


def test_runs_in_one_process_never_see_each_others_metrics(
    custom: Project, pytestconfig: pytest.Config
) -> None:
    """Each run has a catalog of its own: a next run that no longer declares the metrics
    cannot gate them, and this run's catalog is in force again after each."""
    custom.run().assert_outcomes(passed=4 + 3)
    assert in_force() is run_catalog(pytestconfig)
    custom.write("conftest.py", "")
    custom.write("test_eval.py", EVAL.replace(", words, cites", "").replace("words(row)", "1"))
    result = custom.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown metric 'words'*"])
    assert in_force() is run_catalog(pytestconfig)


def test_a_run_parsed_but_never_configured_leaves_the_catalog_in_force(
    pytester: pytest.Pytester, pytestconfig: pytest.Config
) -> None:
    """A config pytest parses (importing its conftest files) but never configures, as
    ``pytester.parseconfig`` or a failed start leaves it, builds no catalog: this run's,
    whose root conftest.py declares ``numbers_cited``, stays in force before and after
    pytest cleans the other up."""
    ours = run_catalog(pytestconfig)
    assert "numbers_cited" in ours.declared
    assert in_force() is ours
    config = pytester.parseconfig()
    assert CATALOG_KEY not in config.stash
    config._ensure_unconfigure()  # what pytester's finalizer, or pytest on failure, calls
    assert in_force() is ours


def test_bulk_mode_records_the_same_values(custom: Project) -> None:
    custom.write("conftest.py", METRICS + CORPUS_METRIC)
    custom.write("test_eval.py", WITH_MARKERS)
    _, row_report = custom.run_json("--ragmetrics-mode=row")
    bulk, bulk_report = custom.run_json("--ragmetrics-mode", "bulk", "--ragmetrics-batch-size=3")
    bulk.assert_outcomes(passed=2 + 3)  # batches of rows 1-3 and 4, 3 gates
    assert bulk_report["evals"] == row_report["evals"]
    assert _eval(bulk_report)["metrics"]["words"]["mean"] == 3.5
    assert _eval(bulk_report)["metrics"]["marker_words"]["pooled"] == pytest.approx(3 / 14)


def test_a_declared_metric_merges_alike_in_every_mode(project_in_every_mode: Project) -> None:
    """Per-row values recorded on the workers, the sufficient statistics a corpus
    statistic is reduced from, and a dataset-level metric's statistics reach the
    controller's gates alike."""
    project = project_in_every_mode
    project.write("conftest.py", METRICS + DATASET_METRIC + CORPUS_METRIC)
    project.write("test_eval.py", WITH_MARKERS)
    project.write("test_set.py", DATASET_EVAL)
    per_file = GATES.replace("[gates]", '[gates."test_eval.py"]')
    project.write(
        "thresholds.toml",
        per_file + '[gates."test_set.py"]\n"answer_set.cited_share" = ">= 0.75"\n',
    )
    result, report = project.run_json()
    result.assert_outcomes(passed=4 + 3 + 1 + 1)
    by_name = {evaluation["name"]: evaluation["metrics"] for evaluation in report["evals"]}
    assert by_name["test_eval.py"]["words"]["sum"] == 14
    assert by_name["test_eval.py"]["words"]["mean"] == 3.5
    assert by_name["test_eval.py"]["cites"]["rate"] == 0.75
    assert by_name["test_eval.py"]["marker_words"]["pooled"] == pytest.approx(3 / 14, abs=1e-12)
    assert by_name["test_set.py"]["answer_set"] == {"cited_share": 0.75, "distinct_answers": 4}


# -- corpus statistics: the rows' sufficient statistics, summed, then reduced ------------
#
# marker_words per row is the share of the answer's words that are citation markers (a
# word holding "["): r1 1/5, r2 1/2, r3 0/3, r4 1/4, mean (0.2 + 0.5 + 0 + 0.25) / 4 =
# 0.2375. Its corpus statistic `pooled` is the summed markers over the summed words:
# 3 / 14 = 0.2142857...

CORPUS_METRIC = '''
from pytest_ragmetrics import RowValue, metric


def pooled(sums):
    return sums["markers"] / sums["words"]


@metric(requires=("answer",), range=(0, 1), corpus={"pooled": pooled})
def marker_words(row):
    """Share of the answer's words that are citation markers."""
    words = row.answer.split()
    markers = sum("[" in word for word in words)
    share = markers / len(words)
    return RowValue(share, f"{markers} of {len(words)}", {"markers": markers, "words": len(words)})
'''

CORPUS_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_markers(row, marker_words):
    marker_words(row)
"""


@pytest.fixture
def pooled(project: Project) -> Project:
    """The standard project with a metric that has a corpus statistic, gated on it."""
    project.write("conftest.py", CORPUS_METRIC)
    project.write("test_eval.py", CORPUS_EVAL)
    project.write("thresholds.toml", '[gates]\n"marker_words.pooled" = ">= 0.2"\n')
    return project


def test_a_corpus_statistic_is_reduced_from_the_summed_row_statistics(pooled: Project) -> None:
    result, report = pooled.run_json("--ragmetrics-md", "report.md")
    result.assert_outcomes(passed=4 + 1)
    evaluation = _eval(report)
    recorded = evaluation["metrics"]["marker_words"]
    assert recorded["pooled"] == pytest.approx(3 / 14, abs=1e-12)
    assert recorded["mean"] == pytest.approx(0.2375, abs=1e-12)
    assert evaluation["breakdowns"]["marker_words_stats"]["words"]["sum"] == 14
    result.stdout.fnmatch_lines(["*marker_words 0.2375 (pooled 0.2143)*"])
    markdown = (pooled.path / "report.md").read_text()
    assert (
        "| pass | test\\_eval.py::gate::marker\\_words.pooled | \\>= 0.2 | 0.214286 |" in markdown
    )


def test_a_gate_on_a_corpus_statistic_fails_with_its_number(pooled: Project) -> None:
    pooled.write("thresholds.toml", '[gates]\n"marker_words.pooled" = ">= 0.22"\n')
    result = pooled.run()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        ["*marker_words.pooled >= 0.22 FAILS: marker_words pooled is 0.214286, outside >= 0.22*"]
    )


def test_a_corpus_statistic_is_compared_with_its_baseline(pooled: Project) -> None:
    pooled.write("thresholds.toml", '[gates]\n"marker_words.pooled" = ">= baseline"\n')
    pooled.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 1)
    stored = json.loads((pooled.path / "__baselines__" / "test_eval.json").read_text())
    assert stored["metrics"]["marker_words"]["pooled"] == pytest.approx(3 / 14, abs=1e-12)
    fewer = [dict(row) for row in ROWS]
    fewer[1]["answer"] = "Berlin is the capital [1]."  # 1 marker in 5 words: 3 / 17
    pooled.write("data/rows.jsonl", jsonl(fewer))
    result = pooled.run()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*marker_words.pooled >= baseline FAILS: marker_words pooled is 0.176471, "
            "outside >= 0.214286 (baseline)*"
        ]
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'return sums["markers"] / (sums["words"] - 14)',
            "*marker_words.pooled (conftest.py:*) raised ZeroDivisionError: float division by "
            "zero (at conftest.py:6), given the summed statistics {markers=3, words=14}*",
        ),
        (
            'return sums["marker"]',
            "*marker_words.pooled (conftest.py:*) raised KeyError: 'marker' (at conftest.py:6)*",
        ),
        (
            'return float("nan")',
            "*marker_words.pooled (conftest.py:*) returned nan, not a finite number*",
        ),
    ],
)
def test_a_corpus_function_that_fails_fails_the_run_naming_it(
    pooled: Project, body: str, message: str
) -> None:
    _refused(pooled, CORPUS_METRIC.replace('return sums["markers"] / sums["words"]', body), message)


def test_a_corpus_metric_row_without_its_statistics_errors(pooled: Project) -> None:
    pooled.write(
        "conftest.py",
        CORPUS_METRIC.replace(
            "    words = row.answer",
            "    if row.id == 'r3':\n        return 0.0\n    words = row.answer",
        ),
    )
    pooled.write("thresholds.toml", "")
    result, report = pooled.run_json()
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*data/rows.jsonl:3: marker_words (conftest.py:*) returned None: a metric declared "
            "with corpus= returns RowValue(value, stats={...})*"
        ]
    )
    recorded = _eval(report)["metrics"]["marker_words"]
    assert recorded["pooled"] == pytest.approx(3 / 11, abs=1e-12)  # r3's 3 words left out


DATASET_METRIC = '''
from pytest_ragmetrics import dataset_metric


@dataset_metric(requires=("answer",), stats=("cited_share", "distinct_answers"))
def answer_set(rows):
    """How the answers look as a set: the share citing a source, how many differ."""
    cited = sum("[" in row.answer for row in rows)
    return {"cited_share": cited / len(rows), "distinct_answers": len({r.answer for r in rows})}
'''

DATASET_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_the_set(rows, answer_set):
    stats = answer_set(rows)
    assert stats["distinct_answers"] == 4
"""


def test_a_dataset_level_metric_is_recorded_and_gated(project: Project) -> None:
    """Three of the four answers cite (r3 "I don't know." does not): 0.75; all four
    answers differ."""
    project.write("conftest.py", DATASET_METRIC)
    project.write("test_eval.py", DATASET_EVAL)
    project.write(
        "thresholds.toml",
        '[gates]\n"answer_set.cited_share" = ">= 0.75"\n"answer_set.distinct_answers" = "== 3"\n',
    )
    result, report = project.run_json()
    result.assert_outcomes(passed=1 + 1, failed=1)
    result.stdout.fnmatch_lines(
        ["*answer_set.distinct_answers == 3 FAILS: answer_set distinct_answers is 4*"]
    )
    assert _eval(report)["metrics"]["answer_set"] == {"cited_share": 0.75, "distinct_answers": 4}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (
            '{"cited_share": 1.0}',
            "*answer_set (conftest.py:*) returned statistics [[]'cited_share'[]]; it declared "
            "[[]'cited_share', 'distinct_answers'[]] (missing [[]'distinct_answers'[]], "
            "undeclared [[][]])*",
        ),
        (
            '{"cited_share": float("nan"), "distinct_answers": 4}',
            "*answer_set (conftest.py:*) returned cited_share = nan: not a finite number*",
        ),
        ("[0.75, 4]", "*answer_set (conftest.py:*) returned [[]0.75, 4[]], not a mapping*"),
    ],
)
def test_a_dataset_level_metric_returning_bad_statistics_errors(
    project: Project, returned: str, message: str
) -> None:
    body = DATASET_METRIC.replace("    return {", f"    return {returned}\n    return {{")
    project.write("conftest.py", body)
    project.write("test_eval.py", DATASET_EVAL)
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])
    assert "answer_set" not in _eval(report)["metrics"]


def test_a_dataset_level_metric_needs_its_fields_on_every_row(project: Project) -> None:
    project.write("conftest.py", DATASET_METRIC.replace('("answer",)', '("answer", "verdict")'))
    project.write("test_eval.py", DATASET_EVAL)
    project.write("thresholds.toml", "")
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*data/rows.jsonl:1: field 'verdict': required by answer_set but missing*"]
    )


GROWS_GOLD = '''
from pytest_ragmetrics import metric


@metric(requires=("gold", "answer"))
def grow_gold(row):
    """Adds the answer to the gold answers, which would make every answer exact."""
    if isinstance(row.gold, list):
        row.gold.append(row.answer)
    return 1.0
'''

# grow_gold's failure is caught, so em runs on the row it tried to change; f1, in
# another test, may share the row object (one process) or not (-n 2).
GROWN_EVAL = """
import contextlib

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_grows(row, grow_gold, em):
    with contextlib.suppress(Exception):
        grow_gold(row)
    em(row)


def test_quality(row, f1):
    f1(row)
"""


@pytest.mark.parametrize("mode", ["no-xdist", "n2"])
def test_a_metric_cannot_change_the_row_for_the_other_metrics(
    make_project: Callable[[str], Project], mode: str
) -> None:
    """The gold lists of r1, r3 and r4 refuse the append (r2's gold is a string): those
    rows error naming the metric and the change, and em and f1 keep their hand-counted
    means (module docstring of test_plugin.py's rows: em 0.25, f1 0.5)."""
    project = make_project(mode)
    project.write("conftest.py", GROWS_GOLD)
    project.write("test_eval.py", GROWN_EVAL)
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=8)  # the test caught grow_gold's error; its rows still error
    evaluation = _eval(report)
    assert evaluation["metrics"]["em"]["mean"] == 0.25
    assert evaluation["metrics"]["f1"]["mean"] == 0.5
    assert evaluation["metrics"]["grow_gold"]["count"] == 1  # r2 only
    errors = {row["id"]: row["errors"] for row in evaluation["rows"] if row["errors"]}
    assert list(errors) == ["r1", "r3", "r4"]
    (error,) = errors["r1"]
    assert error.startswith("data/rows.jsonl:1: grow_gold (conftest.py:")
    assert (
        ") raised ReadOnlyRowError: row['gold'].append() would change the row, which a metric "
        "may only read"
    ) in error
