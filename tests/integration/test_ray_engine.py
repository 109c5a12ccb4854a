"""The Ray engine on a local Ray: the local engine's reports, bad rows, failing rows, and
a worker that dies.

The in-process tests share one local Ray, started here as the machine's tests start it
(``ray.init(num_cpus=2, include_dashboard=False)``) and stopped when they end; the plugin
joins a Ray that is already running and leaves it running. The dying-worker test runs
pytest in a subprocess, whose plugin starts (and stops) a local Ray of its own, under a
timeout: a run that hung would fail it.

Skipped, with the reason, where Ray is not installed; with ``CI`` set (``.ci/run``, which
installs the ``ray`` extra) a missing Ray fails instead.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.project import ROWS, Project, jsonl
from test_bulk_mode import ENDINGS, ENDINGS_ROWS, EXITING, F1_VERDICT
from test_dataset_formats_eval import bad_row_in_every_format
from test_live_eval import QUESTIONS as LIVE_QUESTIONS
from test_live_eval import SYSTEMS as LIVE_SYSTEMS
from test_systems import GATES as STUDY_GATES
from test_systems import ROWS as SYSTEM_ROWS
from test_systems import STUDY
from test_systems import _rerun as rerun_rows

from test_custom_metrics import CORPUS_METRIC, DATASET_EVAL, DATASET_METRIC, WITH_MARKERS
from test_custom_metrics import EVAL as CUSTOM_EVAL
from test_custom_metrics import METRICS as CUSTOM_METRICS

if os.environ.get("CI") and importlib.util.find_spec("ray") is None:
    pytest.fail("CI is set but Ray is not installed: pip install -e '.[dev,ray]'", pytrace=False)
ray = pytest.importorskip("ray", reason="the Ray engine's tests need Ray: pip install -e '.[ray]'")

# Forty rows, every fourth answer wrong, each a cited sentence so that overlap embeds.
CITIES = ["Paris", "Rome", "Berlin", "Madrid"]
MANY = [
    {
        "id": f"q{i:02d}",
        "question": f"Which city is number {i}?",
        "answer": f"{CITIES[(i + (i % 4 == 0)) % 4]} is the city [CIT:d{i}].",
        "gold": [CITIES[i % 4]],
        "contexts": [{"doc_id": f"d{i}", "text": f"{CITIES[i % 4]} is city number {i}."}],
        "tokens": 100 + i,
    }
    for i in range(40)
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=16)


def test_answers(row, em, f1, idk_citation, tokens, overlap):
    assert idk_citation(row) == 0
    em(row); f1(row); tokens(row); overlap(row)
"""

GATES = """
[gates]
"idk_citation.sum" = "== 0"
"f1.mean" = ">= 0.3 @ 95%"  # read on its interval: the same resamples on either engine
"overlap.count" = ">= 1"
"""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray for this module's in-process runs, stopped when they are done."""
    ray.init(address="local", num_cpus=2, include_dashboard=False)  # never another's
    yield
    ray.shutdown()


def _evals(report: dict[str, Any]) -> str:
    return json.dumps(report["evals"], sort_keys=True)


def test_the_ray_engine_gives_the_local_engines_reports(local_ray: None, project: Project) -> None:
    """Cold caches both: the same chunks of texts are encoded (on Ray's actors, or here),
    so even the embedding similarities agree to the last bit."""
    project.write("data/rows.jsonl", jsonl(MANY))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", GATES)
    local, local_report = project.run_json("--ragmetrics-mode=bulk", "--ragmetrics-no-cache")
    project.write("thresholds.toml", '[settings]\nengine = "ray"\n' + GATES)
    on_ray, ray_report = project.run_json("--ragmetrics-no-cache")
    local.assert_outcomes(passed=3 + 3)  # three batches (16, 16, 8 rows), three gates
    on_ray.assert_outcomes(passed=3 + 3)
    assert _evals(ray_report) == _evals(local_report)
    (evaluation,) = ray_report["evals"]
    # the statistics (a gate's interval, each metric's) are there to be compared
    f1_gate = next(gate for gate in evaluation["gates"] if gate["name"] == "f1.mean")
    assert f1_gate["stats"]["reading"] == "refuted"
    assert set(evaluation["intervals"]) >= {"f1", "em", "tokens", "overlap"}
    # by hand: rows 0, 4, ..., 36 answer the next city (f1 0); the 30 others answer
    # "<gold> is the city", normalised "<gold> is city": precision 1/3, recall 1, f1 0.5
    assert evaluation["metrics"]["f1"]["mean"] == 30 * 0.5 / 40
    assert evaluation["metrics"]["tokens"]["mean"] == 100 + 39 / 2


@pytest.mark.parametrize("spelling", [["--ragmetrics-engine=ray"], ["--ragmetrics-engine", "ray"]])
def test_the_option_runs_every_eval_on_ray_in_bulk_mode(
    local_ray: None, project: Project, spelling: list[str]
) -> None:
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    result, report = project.run_json(*spelling, "-v")
    result.assert_outcomes(passed=1 + 1)  # the conftest eval's four rows in one batch
    result.stdout.fnmatch_lines(["*test_answers[[]rows-1-4[]] PASSED*"])
    (evaluation,) = report["evals"]
    assert evaluation["metrics"]["f1"]["mean"] == 0.5  # by hand, conftest.py's ROWS


def test_bad_rows_and_failing_rows_on_ray_are_counted_per_row(
    local_ray: None, project: Project
) -> None:
    rows = [*ROWS[:2], {k: v for k, v in ROWS[2].items() if k != "answer"}, ROWS[3]]
    project.write("data/rows.jsonl", jsonl(rows))
    project.write(
        "test_eval.py",
        EVAL.replace("batch_size=16", "batch_size=4").replace(
            "em(row); f1(row); tokens(row); overlap(row)", "assert f1(row) > 0.6"
        ),
    )
    project.write("thresholds.toml", '[gates]\n"f1.count" = ">= 3"\n')
    result, report = project.run_json("--ragmetrics-engine=ray")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*rows-1-4: 2 of 4 rows failed, 1 errored*",
            "  data/rows.jsonl:1 (row 'r1'): assert f1=0.5 *> 0.6",
            "  data/rows.jsonl:3: field 'answer': required by * but missing",
            "  data/rows.jsonl:4 (row 'r4'): assert f1=0.5 *> 0.6",
        ]
    )
    (evaluation,) = report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["failed", "passed", "error", "failed"]
    assert (evaluation["n"], evaluation["errors"]) == (4, 1)


PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]

DYING = """
import os
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=1000)


def test_answers(row, f1):
    if row.id == "q0513":
        os._exit(3)  # the worker process dies, on every attempt
    f1(row)
"""


def test_a_worker_that_dies_errors_only_its_row(pytester: pytest.Pytester) -> None:
    """Row q0513 kills its worker each time Ray retries it. Of the one item's 1,000 rows,
    the others of its task (up to 256, ``ROWS_PER_TASK``) are run again one a task and
    count; only q0513 errors, naming the loss; the run exits 1, in time."""
    project = Project(pytester)
    rows = [{**MANY[i % 40], "id": f"q{i:04d}"} for i in range(1000)]
    project.write("data/rows.jsonl", jsonl(rows))
    project.write("test_eval.py", DYING)
    project.write("thresholds.toml", '[gates]\n"f1.count" = ">= 999"\n')
    done = subprocess.run(
        [*PYTEST, "--ragmetrics-engine=ray", "--ragmetrics-json=report.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    (evaluation,) = report["evals"]
    statuses = {row["id"]: row["status"] for row in evaluation["rows"]}
    assert len(statuses) == 1000  # no row dropped
    assert [row for row, status in statuses.items() if status == "error"] == ["q0513"]
    (lost,) = [row for row in evaluation["rows"] if row["id"] == "q0513"]
    assert lost["errors"] == [
        "data/rows.jsonl:514: call raised LostRow: the Ray engine lost this row: run alone, "
        "its task failed on every attempt (Ray's error is above)"
    ]
    assert evaluation["errors"] == 1
    assert evaluation["metrics"]["f1"]["count"] == 999
    assert "rows-1-1000: 0 of 1000 rows failed, 1 errored" in done.stdout
    assert "Gates: 1 passed" in done.stdout  # every row that could be scored counts


UNSENDABLE = """
import threading
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


@pytest.fixture
def lock():
    return threading.Lock()


def test_answers(row, f1, lock):
    f1(row)
"""


def test_an_argument_that_cannot_travel_errors_every_row_naming_it(
    local_ray: None, project: Project
) -> None:
    project.write("test_eval.py", UNSENDABLE)
    result, report = project.run_json("--ragmetrics-engine=ray")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*rows-1-4: 0 of 4 rows failed, 4 errored*"])
    result.stdout.fnmatch_lines(["*fixture `lock` cannot be pickled (TypeError: *"])
    (evaluation,) = report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["error"] * 4
    assert evaluation["errors"] == 4


def test_a_judge_eval_on_ray_is_judged_here_as_the_local_engine_judges_it(
    local_ray: None, project: Project
) -> None:
    """The LLM judge is called from the pytest process (its client, cache and accounting
    live there), so a bulk item whose test asks it stays on the local engine: the Ray
    run's report is the local engine's, but for the judge's measured latency. By hand:
    the judge scores an answer naming Berlin 1.0 and any other 0.0; row i answers
    CITIES[(i + (i % 4 == 0)) % 4], Berlin for i % 4 == 2: ten of forty rows, mean 0.25."""
    project.write(
        "test_eval.py",
        EVAL.replace("batch_size=16", "batch_size=8").replace(
            "def test_answers(row, em, f1, idk_citation, tokens, overlap):\n"
            "    assert idk_citation(row) == 0\n"
            "    em(row); f1(row); tokens(row); overlap(row)",
            "def test_answers(row, faithfulness_judge):\n    faithfulness_judge(row)",
        ),
    )
    project.write(
        "berlin_judge.py",
        "import json\n\n\ndef judge(messages):\n"
        "    score = 1.0 if 'Berlin is the city' in messages[-1]['content'] else 0.0\n"
        "    return json.dumps({'score': score, 'reason': 'names Berlin'})\n",
    )
    project.write(
        "thresholds.toml",
        '[judge]\nmodel = "stand-in"\nfunction = "berlin_judge:judge"\n\n'
        '[gates]\n"faithfulness_judge.mean" = ">= 0"\n',
    )
    project.write("data/rows.jsonl", jsonl(MANY))
    local, local_report = project.run_json("--ragmetrics-mode=bulk", "--ragmetrics-no-cache")
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray", "--ragmetrics-no-cache")
    assert local.ret == on_ray.ret == 0
    (evaluation,) = ray_report["evals"]
    assert evaluation["metrics"]["faithfulness_judge"]["mean"] == 0.25
    assert on_ray.stdout.str().count("faithfulness_judge") == local.stdout.str().count(
        "faithfulness_judge"
    )
    for report in (local_report, ray_report):
        (judged,) = report["evals"]
        judge = judged["metrics"]["judge"]
        assert judge["verdicts"] == judge["requests"] == 40
        _drop_latencies(judge)  # measured, so never the same twice
        for row in judged["rows"]:
            _drop_latencies(row["judge"])
    assert _evals(ray_report) == _evals(local_report)


def _drop_latencies(part: Any) -> None:
    """``part`` without the judge's measured latencies (``latency_ms``, ``avg_latency_ms``)."""
    if isinstance(part, dict):
        for key in ("latency_ms", "avg_latency_ms"):
            part.pop(key, None)
        parts = part.values()
    else:
        parts = part if isinstance(part, list) else []
    for inner in parts:
        _drop_latencies(inner)


def test_a_live_evals_rows_are_encoded_here_not_by_a_pool_started_for_each(
    local_ray: None, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live rows are answered and scored in the pytest process; the texts each asks for
    are encoded here too, by the model loaded once, on a cluster without GPUs (a new
    pool of encoder actors for each row's few texts loaded the model again for each).
    The report is the local engine's, and the pool was never asked."""
    from pytest_ragmetrics.plugin import ray_engine

    pools: list[int] = []
    make_pool = ray_engine.chunk_encoder

    def counted(config: pytest.Config) -> Any:
        pool = make_pool(config)

        def encode(embedder: Any, chunks: list[list[str]]) -> Any:
            pools.append(len(chunks))
            return pool(embedder, chunks)

        return encode

    monkeypatch.setattr(ray_engine, "chunk_encoder", counted)
    project.write("conftest.py", LIVE_SYSTEMS)
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        "pytestmark = pytest.mark.ragmetrics(\n"
        '    dataset="data/questions.jsonl", systems=["base", "cand"], compare_to="base"\n'
        ")\n\n\n"
        "def test_similar(row, semantic_similarity):\n    semantic_similarity(row)\n",
    )
    project.write("data/questions.jsonl", jsonl(LIVE_QUESTIONS))
    project.write("thresholds.toml", '[gates]\n"semantic_similarity.mean" = ">= 0"\n')
    local, local_report = project.run_json("--ragmetrics-no-cache")
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray", "--ragmetrics-no-cache")
    assert local.ret == on_ray.ret == 0
    assert [entry["n"] for entry in ray_report["evals"]] == [3, 3]  # both systems scored
    assert _evals(ray_report) == _evals(local_report)
    assert pools == []


# -- metrics declared in the project's conftest.py (pytest_ragmetrics.metric) ------------
#
# By hand on conftest.py's four ROWS (test_custom_metrics.py's docstring): `words` is 5,
# 2, 3, 4 (sum 14, mean 3.5, p50 3.5); `cites` is 1, 1, 0, 1 (rate 0.75); `answer_set`,
# over all four answers, has cited_share 3/4 and 4 distinct answers; `marker_words`'
# corpus statistic `pooled` is 3 markers in 14 words, 3/14.

DECLARED_GATES = """
[gates."test_eval.py"]
"words.mean" = "<= 3.5"
"words.p50" = "== 3.5"
"cites.rate" = ">= 0.75"
"words.sum" = "<= 13"
"marker_words.pooled" = ">= 0.2"

[gates."test_set.py"]
"answer_set.cited_share" = "== 0.75"
"""


def _declared_project(project: Project, metrics: str, gates: str) -> None:
    project.write("conftest.py", metrics)
    project.write("test_eval.py", CUSTOM_EVAL)
    project.write("thresholds.toml", gates)


def _on_both_engines(project: Project, gates: str) -> tuple[Any, ...]:
    """The local engine's run (bulk mode, so its items are the Ray engine's), then Ray's:
    each run's result and JSON report."""
    local, local_report = project.run_json("--ragmetrics-mode=bulk")
    project.write("thresholds.toml", '[settings]\nengine = "ray"\n' + gates)
    on_ray, ray_report = project.run_json()
    return local, local_report, on_ray, ray_report


# `words` counting with a helper of its conftest.py, which the workers cannot import.
HELPED = CUSTOM_METRICS.replace("len(row.answer.split())", "_count(row.answer)") + (
    "\n\ndef _count(text):\n    return len(text.split())\n"
)


def test_a_declared_metric_gives_the_local_engines_values_and_gates_on_ray(
    local_ray: None, project: Project
) -> None:
    """The workers import no conftest.py: the metrics travel with the rows, with what they
    use of their module. A dataset-level metric runs in the pytest process on either
    engine."""
    _declared_project(project, HELPED + DATASET_METRIC + CORPUS_METRIC, DECLARED_GATES)
    project.write("test_eval.py", WITH_MARKERS)
    project.write("test_set.py", DATASET_EVAL)
    local, local_report, on_ray, ray_report = _on_both_engines(project, DECLARED_GATES)
    local.assert_outcomes(passed=1 + 1 + 5, failed=1)  # the batch, test_set, the gates
    on_ray.assert_outcomes(passed=1 + 1 + 5, failed=1)
    assert _evals(ray_report) == _evals(local_report)
    by_name = {evaluation["name"]: evaluation for evaluation in ray_report["evals"]}
    rows = by_name["test_eval.py"]["rows"]
    assert [row["metrics"]["words"] for row in rows] == [5, 2, 3, 4]
    assert [row["metrics"]["cites"] for row in rows] == [1, 1, 0, 1]
    assert rows[0]["evidence"]["words"] == "5 word(s)"
    metrics = by_name["test_eval.py"]["metrics"]
    assert (metrics["words"]["sum"], metrics["words"]["mean"], metrics["words"]["p50"]) == (
        14,
        3.5,
        3.5,
    )
    assert metrics["cites"]["rate"] == 0.75
    assert metrics["marker_words"]["pooled"] == pytest.approx(3 / 14, abs=1e-12)
    assert by_name["test_set.py"]["metrics"]["answer_set"] == {
        "cited_share": 0.75,
        "distinct_answers": 4,
    }
    gates = {gate["name"]: gate["status"] for e in ray_report["evals"] for gate in e["gates"]}
    assert gates == {
        "words.mean": "passed",
        "words.p50": "passed",
        "cites.rate": "passed",
        "words.sum": "failed",  # 14
        "marker_words.pooled": "passed",
        "answer_set.cited_share": "passed",
    }
    on_ray.stdout.fnmatch_lines(["*words.sum <= 13 FAILS: words sum is 14, outside <= 13*"])


def test_a_declared_metric_returning_nan_errors_that_row_on_ray_as_locally(
    local_ray: None, project: Project
) -> None:
    """Only r3 ("I don't know.") returns NaN: that row errors with the local engine's
    message, the others are recorded (5 + 2 + 4). Its `words` has other code than the
    previous test's, under the same name and origin, on the same Ray's workers."""
    nan = "    if row.id == 'r3':\n        return float('nan')\n    count = len"
    _declared_project(project, CUSTOM_METRICS.replace("    count = len", nan, 1), "")
    local, local_report, on_ray, ray_report = _on_both_engines(project, "")
    local.assert_outcomes(failed=1)
    on_ray.assert_outcomes(failed=1)
    assert _evals(ray_report) == _evals(local_report)
    message = (
        "data/rows.jsonl:3: words (conftest.py:5) returned nan: not finite; return a finite "
        "number within the declared range, (number, evidence) or a RowValue"
    )
    on_ray.stdout.fnmatch_lines(["*rows-1-4: 0 of 4 rows failed, 1 errored*", f"  {message}"])
    (evaluation,) = ray_report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["passed", "passed", "error", "passed"]
    assert evaluation["rows"][2]["errors"] == [message]
    assert "words" not in evaluation["rows"][2]["metrics"]
    assert (evaluation["metrics"]["words"]["count"], evaluation["metrics"]["words"]["sum"]) == (
        3,
        11,
    )


def test_a_metric_declared_too_late_is_refused_on_ray_as_locally(
    local_ray: None, project: Project
) -> None:
    """Declared in a conftest.py below the command-line path, after thresholds.toml was
    read: the test function fails to collect, once, with the local engine's message."""
    project.write("evals/conftest.py", CUSTOM_METRICS)
    project.write("evals/test_eval.py", CUSTOM_EVAL)
    project.write("evals/data/rows.jsonl", jsonl(ROWS))
    (project.path / "test_eval.py").unlink()
    project.write("thresholds.toml", "")
    local, local_report, on_ray, ray_report = _on_both_engines(project, "")
    local.assert_outcomes(errors=1)
    on_ray.assert_outcomes(errors=1)
    assert _evals(ray_report) == _evals(local_report)
    on_ray.stdout.fnmatch_lines(
        ["*evals/conftest.py:5: metric 'words' was declared after pytest read thresholds.toml*"]
    )


def test_a_declared_metric_that_cannot_travel_errors_every_row_naming_it(
    local_ray: None, project: Project
) -> None:
    """Its function uses a lock of its module, which pickling the function by value would
    take along: refused before any task runs, naming the metric and its declaration
    (line 9 of the conftest.py written here)."""
    locked = CUSTOM_METRICS.replace(
        "from pytest_ragmetrics import metric\n",
        "import threading\n\nfrom pytest_ragmetrics import metric\n\nLOCK = threading.Lock()\n",
    ).replace("    count = len", "    assert LOCK\n    count = len")
    _declared_project(project, locked, '[settings]\nengine = "ray"\n')
    result, report = project.run_json()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the Ray engine sends metric `words` (conftest.py:9) to its workers, but it "
            "cannot be pickled (TypeError: *lock*): what its function uses from its module "
            "must be picklable*"
        ]
    )
    (evaluation,) = report["evals"]
    assert evaluation["errors"] == 4


@pytest.mark.parametrize(
    ("address", "waits"),
    [("127.0.0.1:1", "1"), ("10.255.255.1:6379", "2"), ("ray://127.0.0.1:1", "1")],
)
def test_a_cluster_that_cannot_be_reached_stops_the_run_naming_its_address(
    pytester: pytest.Pytester, address: str, waits: str
) -> None:
    """Nothing listens on port 1; 10.255.255.1 is a private address no route answers (or,
    behind a proxy that accepts every connection, no Ray). The run stops before any row
    runs with a usage error naming the address, under a subprocess timeout: a run that
    hung would fail this test, never the suite."""
    Project(pytester)
    done = subprocess.run(
        [*PYTEST, "--ragmetrics-engine=ray", f"--ragmetrics-ray-timeout={waits}"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "RAY_ADDRESS": address},
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:] + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    unreached = f"the Ray engine cannot reach RAY_ADDRESS={address} within {waits} s ("
    if "127.0.0.1" in address:  # refused: no doubt about it
        assert unreached in done.stderr
    else:
        assert unreached in done.stderr or f"Ray engine: RAY_ADDRESS={address}: " in done.stderr
    assert "rows-1-4" not in done.stdout


def test_the_ray_timeout_takes_a_whole_number_of_seconds(project: Project) -> None:
    result = project.run("--ragmetrics-engine=ray", "--ragmetrics-ray-timeout=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragmetrics-ray-timeout takes a whole number >= 1, got '0'*"])


@pytest.mark.parametrize("runxfail", [[], ["--runxfail"]])
def test_every_way_a_row_can_end_ends_it_alone_on_ray_as_in_row_mode(
    local_ray: None, project: Project, runxfail: list[str]
) -> None:
    """test_bulk_mode.py's eight endings (SystemExit, pytest.xfail, pytest.skip,
    GeneratorExit, a BaseException of the test's own, SkipTest, a pass, a failed assert):
    on Ray's workers each row ends as its own item does in row mode; with --runxfail,
    ``pytest.xfail()`` does nothing there either."""
    project.write("data/rows.jsonl", jsonl(ENDINGS_ROWS))
    project.write("test_eval.py", ENDINGS)
    project.write("thresholds.toml", "")
    _, row_report = project.run_json("--ragmetrics-mode=row", *runxfail)
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray", *runxfail)
    on_ray.stdout.fnmatch_lines(["*rows-1-8: 1 of 8 rows failed, 3 errored*"])
    assert _evals(ray_report) == _evals(row_report)
    (evaluation,) = ray_report["evals"]
    e2 = [row["status"] for row in evaluation["rows"] if row["id"] == "e2"]
    assert e2 == (["passed"] if runxfail else [])  # xfailed: a skipped row, not listed


def test_pytest_exit_in_a_row_on_ray_stops_the_run_as_in_row_mode(
    local_ray: None, project: Project
) -> None:
    project.write("test_eval.py", EXITING)
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-engine=ray")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*Exit: stop here*"])


# -- the tasks read their own rows --------------------------------------------------------

PLAIN = EVAL.replace(", overlap):", "):").replace("; overlap(row)", "")


def test_the_pytest_process_reads_no_row_of_a_batch_on_ray(
    local_ray: None, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a batch's rows in this process fails here (a patch that Ray's worker
    processes do not have): the run still gives the local engine's report, so the tasks
    read the rows. No embedding metric: listing the texts to embed reads the rows here."""
    from pytest_ragmetrics.plugin.collect import BatchRows

    rows = [*MANY[:20], {k: v for k, v in MANY[20].items() if k != "answer"}, *MANY[21:]]
    project.write("data/rows.jsonl", jsonl(rows) + "not json\n")
    project.write("test_eval.py", PLAIN)
    project.write("thresholds.toml", GATES.replace('"overlap.count" = ">= 1"\n', ""))
    local, local_report = project.run_json("--ragmetrics-mode=bulk")

    def refused(self: BatchRows, *args: object) -> None:
        raise AssertionError("the pytest process read a batch's rows")

    monkeypatch.setattr(BatchRows, "params", refused)
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray")
    assert "the pytest process read" not in str(on_ray.outlines)
    assert on_ray.ret == local.ret == 1
    assert _evals(ray_report) == _evals(local_report)
    (evaluation,) = ray_report["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (41, 2)  # by hand: row 21 and line 41
    assert evaluation["rows"][40]["errors"][0].startswith("data/rows.jsonl:41: ")


MOVES_THE_DATA = """
import os


def pytest_collection_finish(session):
    os.rename("data/rows.jsonl", "data/moved.jsonl")  # after the scan, before any row
"""


def test_a_worker_that_cannot_read_the_dataset_errors_its_rows_naming_path_and_node(
    local_ray: None, project: Project
) -> None:
    """The file is gone once collection has scanned it, as on a node that does not mount
    it: each row errors, naming the file, its path and the node that tried to read it."""
    project.write("data/rows.jsonl", jsonl(MANY[:8]))
    project.write("test_eval.py", PLAIN.replace("batch_size=16", "batch_size=4"))
    project.write("thresholds.toml", "")
    project.write("conftest.py", MOVES_THE_DATA)
    result, report = project.run_json("--ragmetrics-engine=ray")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*rows-1-4: 0 of 4 rows failed, 4 errored*"])
    (evaluation,) = report["evals"]
    assert [row["status"] for row in evaluation["rows"]] == ["error"] * 8
    node = ray.util.get_node_ip_address()
    path = project.path / "data" / "rows.jsonl"
    assert evaluation["rows"][5]["errors"] == [
        f"data/rows.jsonl:6: data/rows.jsonl: cannot read the dataset: No such file or "
        f"directory [read by a Ray worker on node {node} "
        f"({ray.get_runtime_context().get_node_id()[:12]}) at {path}: on a cluster the "
        "dataset must be the same file at the same path on every node, e.g. on a file "
        "system every node mounts]"
    ]


def test_a_file_tasks_could_only_read_from_its_start_is_read_here_and_sent(
    local_ray: None, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gzipped JSONL is read from its start; with ``READ_AHEAD`` made 10 rows, its 41
    rows are too many for each task to read again from the start, so this process reads
    each batch and sends its rows, as before the tasks read their own: the same report."""
    from pytest_ragmetrics.plugin import ray_engine

    rows = [*MANY[:20], {k: v for k, v in MANY[20].items() if k != "answer"}, *MANY[21:]]
    (project.path / "data" / "rows.jsonl.gz").write_bytes(
        gzip.compress((jsonl(rows) + "not json\n").encode("utf-8"))
    )
    project.write("test_eval.py", PLAIN.replace("rows.jsonl", "rows.jsonl.gz"))
    project.write("thresholds.toml", GATES.replace('"overlap.count" = ">= 1"\n', ""))
    local, local_report = project.run_json("--ragmetrics-mode=bulk")

    def refused(*args: object) -> None:
        raise AssertionError("a task was to read the rows")

    monkeypatch.setattr(ray_engine, "READ_AHEAD", 10)
    monkeypatch.setattr(ray_engine, "run_batch", refused)
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray")
    assert "a task was to read" not in str(on_ray.outlines)
    assert on_ray.ret == local.ret == 1
    assert _evals(ray_report) == _evals(local_report)
    (evaluation,) = ray_report["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (41, 2)  # by hand: row 21 and line 41


def test_systems_compared_with_a_second_run_on_ray_as_locally(
    local_ray: None, project: Project
) -> None:
    """test_systems.py's study: two systems, compared with `base`, and `determinism`
    reading a second run. The tasks make each row's parameter from what travels with the
    dataset's index (which rows the reference system has, the rerun's rows), as the
    local engine does. Without its `overlap` test: a vector's last bits depend on the
    threads that encoded it (docs/scale.md), and this process encodes on two, Ray's
    actors on one each."""
    grounded = "def test_grounded(row, overlap):\n    overlap(row)\n"
    assert grounded in STUDY
    project.write("data/runs.jsonl", jsonl(SYSTEM_ROWS))
    project.write("data/rerun.jsonl", jsonl(rerun_rows()))
    project.write("test_eval.py", STUDY.replace(grounded, ""))
    project.write("thresholds.toml", STUDY_GATES)
    local, local_report = project.run_json("--ragmetrics-mode=bulk", "--ragmetrics-no-cache")
    on_ray, ray_report = project.run_json("--ragmetrics-engine=ray", "--ragmetrics-no-cache")
    assert on_ray.ret == local.ret == 1  # cand's gates fail (test_systems.py)
    assert _evals(ray_report) == _evals(local_report)
    labels = [evaluation["label"] for evaluation in ray_report["evals"]]
    assert labels == ["test_eval.py[base]", "test_eval.py[cand]"]


def test_every_format_is_read_by_the_tasks_as_locally(local_ray: None, project: Project) -> None:
    """Parquet and gzipped JSONL, read by the tasks (short files: every row is near a
    place to start): the local engine's reports, a bad row (a null gold in Parquet, a
    line that is no JSON) keeping its file:line, as test_bulk_mode.py has it locally."""
    expected = bad_row_in_every_format(project)
    for name, bad_row in expected.items():
        project.write("test_eval.py", F1_VERDICT.replace("data/rows.jsonl", f"data/{name}"))
        local, local_report = project.run_json("--ragmetrics-mode=bulk")
        on_ray, ray_report = project.run_json("--ragmetrics-engine=ray")
        assert _evals(ray_report) == _evals(local_report), name
        assert ray_report["evals"][0]["errors"] == 1, name
        assert on_ray.ret == local.ret == pytest.ExitCode.TESTS_FAILED
        on_ray.stdout.fnmatch_lines([bad_row])


def test_the_progress_of_bulk_rows_on_ray_reaches_the_local_engines_total(
    local_ray: None, project: Project
) -> None:
    """The local engine's run of the same eval is the reference: the same first line and
    the same total. On Ray the rows are counted as each task's come back: a batch of 16
    (one task) at once, so the tenths crossed are those at 16 and 32 of 40."""
    project.write("data/rows.jsonl", jsonl(MANY))
    project.write("test_eval.py", EVAL.replace(", overlap):", "):").replace("; overlap(row)", ""))
    project.write("thresholds.toml", "")
    local = project.run("--ragmetrics-mode=bulk")
    on_ray = project.run("--ragmetrics-engine=ray")
    local.assert_outcomes(passed=3)
    on_ray.assert_outcomes(passed=3)
    local_lines, ray_lines = (
        [line for line in run.outlines if line.startswith("ragmetrics: bulk rows: ")]
        for run in (local, on_ray)
    )
    assert ray_lines[0] == local_lines[0] == "ragmetrics: bulk rows: 40 row(s) in 3 bulk item(s)"
    assert [line.split(",")[0] for line in ray_lines[1:-1]] == [
        "ragmetrics: bulk rows: 16/40 (40%)",
        "ragmetrics: bulk rows: 32/40 (80%)",
    ]
    assert ray_lines[-1].split(" in ")[0] == local_lines[-1].split(" in ")[0]
    assert ray_lines[-1].startswith("ragmetrics: bulk rows: 40/40 (100%) in ")
