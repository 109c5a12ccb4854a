"""Several systems in one dataset (METRICS.md §3) end to end through pytester: one eval
per system, gates against the reference system in the same run, transformations, the
comparison metrics and determinism over a second run.

Two systems answer the same three questions; every support decision uses sentences whose
cosines with the packaged model are far from tau_sim (see test_grounding_plugin.py):

    id  base                                      cand
    q1  "I don't know." (answerable)              "The Eiffel Tower is in Paris [CIT:e1]."
        abstains, idk_on_answerable 1               supported, F1 1/3 (5 tokens, 1 common)
    q2  "Canberra is the capital of Australia [1]." "Mount Everest is ... on Earth [CIT:n1]."
        supported, F1 1/3 (6 tokens... see below)    unsupported, F1 0: wrong_on_answerable 1
    q3  "I don't know." (unanswerable)            the same

    q2 base: normalised "canberra is capital of australia" (5 tokens, "the" removed), gold
    "canberra": precision 1/5, recall 1, F1 1/3.
    overlap: base 0, 1, 0 -> 1/3; cand 1, 0, 0 -> 1/3.
    transformations of cand: idk_to_supported [q1]; regressions [q2].
    tokens: base 100, 200, 300 (mean 200, p50 200); cand 110, 260, 300 (mean 670/3, p50 260).
    rounds: base 1, 1, 1; cand 1, 2, 1 -> rounds.mean 4/3, multi_round.rate 1/3.
    The rerun file repeats every row, except cand q2, whose answer differs:
    determinism.rate base 1, cand 2/3.
"""

from __future__ import annotations

import copy
import html
import json
from typing import Any

import pytest
from helpers.project import Project, jsonl

EIFFEL = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."
NILE = "The Nile is the longest river in Africa, flowing north into the Mediterranean Sea."
CANBERRA = "Canberra is the capital city of Australia."
IDK = "I don't know."


def _row(system: str, qid: str, answer: str, tokens: int, rounds: int, **extra: Any) -> dict:
    return {
        "id": qid,
        "system": system,
        "answer": answer,
        "tokens": tokens,
        "latency_ms": tokens * 2,
        "telemetry": {"rounds": rounds, "stop_reason": extra.pop("stop", "SINGLE_ROUND")},
        **extra,
    }


Q1 = {"question": "Where is the Eiffel Tower?", "gold": ["Paris"], "answerable": True}
Q2 = {"question": "What is the capital of Australia?", "gold": ["Canberra"], "answerable": True}
Q3 = {"question": "What will the weather be in 2090?", "gold": ["unknown"], "answerable": False}
ROWS = [
    _row("base", "q1", IDK, 100, 1, contexts=[{"doc_id": "n1", "text": NILE}], **Q1),
    _row(
        "base",
        "q2",
        "Canberra is the capital of Australia [1].",
        200,
        1,
        contexts=[{"doc_id": "c1", "text": CANBERRA}],
        **Q2,
    ),
    _row("base", "q3", IDK, 300, 1, contexts=[], **Q3),
    _row(
        "cand",
        "q1",
        "The Eiffel Tower is in Paris [CIT:e1].",
        110,
        1,
        contexts=[{"doc_id": "e1", "text": EIFFEL}],
        stop="STOP_OVERLAP_OK",
        **Q1,
    ),
    _row(
        "cand",
        "q2",
        "Mount Everest is the highest mountain on Earth [CIT:n1].",
        260,
        2,
        contexts=[{"doc_id": "n1", "text": NILE}],
        stop="STOP_NO_NEW_HITS",
        **Q2,
    ),
    _row("cand", "q3", IDK, 300, 1, contexts=[], stop="ABSTAIN", **Q3),
]


def _rerun() -> list[dict[str, Any]]:
    rows = copy.deepcopy(ROWS)
    rows[4]["answer"] = "Mount Everest is the tallest mountain on Earth [CIT:n1]."
    for row in rows:
        row["latency_ms"] += 7  # timings differ between runs; determinism ignores them
    return rows


STUDY = """
import pytest

pytestmark = pytest.mark.ragmetrics(
    dataset="data/runs.jsonl", compare_to="base", rerun="data/rerun.jsonl"
)


def test_grounded(row, overlap):
    overlap(row)


def test_correct(row, f1, abstain, wrong_on_answerable, idk_on_answerable):
    f1(row); abstain(row); wrong_on_answerable(row); idk_on_answerable(row)


def test_cost(row, tokens, rounds):
    tokens(row); rounds(row)


def test_deterministic(row, determinism):
    determinism(row)
"""

GATES = """
[gates]
"tokens.mean" = "<= 1.2x baseline"
"wrong_on_answerable.sum" = "<= baseline"
"idk_on_answerable.sum" = "== 0"
"determinism.rate" = "== 1"

[gates."test_eval.py[base]"]
"idk_on_answerable.sum" = false
"""


def _study(project: Project) -> Project:
    project.write("data/runs.jsonl", jsonl(ROWS))
    project.write("data/rerun.jsonl", jsonl(_rerun()))
    project.write("test_eval.py", STUDY)
    project.write("thresholds.toml", GATES)
    return project


@pytest.fixture
def study(project: Project) -> Project:
    """The two-system study, run in this process."""
    return _study(project)


@pytest.fixture
def study_in_every_mode(project_in_every_mode: Project) -> Project:
    """The two-system study, run in a subprocess per mode: per-system aggregates and the
    comparison are merged from the workers' rows."""
    return _study(project_in_every_mode)


def _entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["label"]: entry for entry in report["evals"]}


def test_each_system_is_an_eval_with_its_own_gates(study: Project) -> None:
    result, report = study.run_json("-v")
    # 4 tests x 6 rows; gates: base has determinism only (the others compare with base or
    # are switched off), cand has all four.
    result.assert_outcomes(passed=24 + 3, failed=2)
    output = result.stdout.str()
    assert "test_eval.py::test_grounded[base/q1]" in output
    assert "test_eval.py::test_grounded[cand/q3]" in output
    result.stdout.fnmatch_lines(
        [
            "*test_eval.py[[]cand[]]::gate::tokens.mean PASSED*",
            "*test_eval.py[[]cand[]]::gate::wrong_on_answerable.sum FAILED*",
        ]
    )
    statuses = {(e["label"], g["name"]): g["status"] for e in report["evals"] for g in e["gates"]}
    assert statuses == {
        ("test_eval.py[base]", "determinism.rate"): "passed",
        ("test_eval.py[cand]", "tokens.mean"): "passed",
        ("test_eval.py[cand]", "wrong_on_answerable.sum"): "failed",
        ("test_eval.py[cand]", "idk_on_answerable.sum"): "passed",
        ("test_eval.py[cand]", "determinism.rate"): "failed",
    }
    cand = _entries(report)["test_eval.py[cand]"]
    gates = {g["name"]: g for g in cand["gates"]}
    assert gates["tokens.mean"]["baseline"] == 200.0
    assert gates["tokens.mean"]["bound"] == pytest.approx(240.0)
    assert gates["wrong_on_answerable.sum"]["status"] == "failed"
    assert (
        "baseline  0 from system 'base' in this run" in gates["wrong_on_answerable.sum"]["message"]
    )
    assert gates["determinism.rate"]["status"] == "failed"
    assert gates["determinism.rate"]["value"] == pytest.approx(2 / 3)


def test_json_has_one_entry_per_system_with_hand_computed_numbers(
    study_in_every_mode: Project,
) -> None:
    study = study_in_every_mode
    _, report = study.run_json()
    entries = _entries(report)
    assert list(entries) == ["test_eval.py[base]", "test_eval.py[cand]"]
    base, cand = entries["test_eval.py[base]"], entries["test_eval.py[cand]"]
    assert (base["system"], base["compare_to"], base["dataset_rows"]) == ("base", None, 3)
    assert (cand["system"], cand["compare_to"], cand["n"]) == ("cand", "base", 3)
    assert "transformations" not in base
    assert cand["transformations"] == {
        "idk_to_supported": ["q1"],
        "regressions": ["q2"],
        "compared": 3,
    }
    b, c = base["metrics"], cand["metrics"]
    assert b["overlap"]["mean"] == pytest.approx(1 / 3)
    assert c["overlap"]["mean"] == pytest.approx(1 / 3)
    assert b["f1"]["mean"] == pytest.approx(1 / 9)  # 0, 1/3, 0
    assert c["f1"]["mean"] == pytest.approx(1 / 9)  # 1/3, 0, 0
    assert (b["idk_on_answerable"]["sum"], c["idk_on_answerable"]["sum"]) == (1.0, 0.0)
    assert (b["wrong_on_answerable"]["sum"], c["wrong_on_answerable"]["sum"]) == (0.0, 1.0)
    assert c["rounds"]["mean"] == pytest.approx(4 / 3)
    assert c["multi_round"]["rate"] == pytest.approx(1 / 3)
    assert (b["determinism"]["rate"], c["determinism"]["rate"]) == (1.0, pytest.approx(2 / 3))
    assert c["vs_baseline"] == pytest.approx(
        {
            "tokens_mean_ratio": (670 / 3) / 200,
            "tokens_p50_ratio": 260 / 200,
            "overlap_mean_delta": 0.0,
            "f1_mean_delta": 0.0,
        }
    )
    assert "vs_baseline" not in b
    assert cand["breakdowns"]["stop_reason"] == {
        "ABSTAIN": {"sum": 1.0, "mean": pytest.approx(1 / 3)},
        "STOP_NO_NEW_HITS": {"sum": 1.0, "mean": pytest.approx(1 / 3)},
        "STOP_OVERLAP_OK": {"sum": 1.0, "mean": pytest.approx(1 / 3)},
    }
    q1 = next(row for row in cand["rows"] if row["id"] == "q1")
    assert (q1["system"], q1["question"], q1["answer"]) == (
        "cand",
        Q1["question"],
        ROWS[3]["answer"],
    )
    assert q1["sentences"][0]["supported"] is True


def test_terminal_shows_systems_transformations_and_stop_reasons(study: Project) -> None:
    result = study.run()
    result.stdout.fnmatch_lines(
        [
            "test_eval.py[[]base[]] * 3 *",
            "test_eval.py[[]cand[]] * 3 *",
            "Stop reasons (rows, share):",
            "  test_eval.py[[]base[]]: SINGLE_ROUND 3 (100%)",
            "Transformations (by row id):",
            "  test_eval.py[[]cand[]] vs base: 3 ids compared",
            "    IDK → supported (1): q1",
            "    supported → unsupported (1): q2",
        ]
    )


def test_a_system_left_out_skips_the_gates_that_compare_with_it(study: Project) -> None:
    result, report = study.run_json("-k", "cand")
    (cand,) = report["evals"]
    gates = {g["name"]: g for g in cand["gates"]}
    assert gates["tokens.mean"]["status"] == "skipped"
    assert "the reference system 'base' did not run" in gates["tokens.mean"]["message"]
    assert gates["idk_on_answerable.sum"]["status"] == "passed"  # needs no baseline
    assert cand["transformations"] is None
    assert cand["transformations_note"] == "the reference system 'base' did not run"
    assert result.ret == 1  # determinism.rate still fails on cand


def test_stored_baseline_is_one_file_per_system(study: Project) -> None:
    study.write("thresholds.toml", '[gates]\n"tokens.mean" = "<= stored_baseline"\n')
    assert study.run("--ragmetrics-update-baseline").ret == 0
    stored = {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in (study.path / "__baselines__").iterdir()
    }
    assert set(stored) == {"test_eval[base].json", "test_eval[cand].json"}
    assert stored["test_eval[base].json"]["signature"]["system"] == "base"
    assert stored["test_eval[cand].json"]["metrics"]["tokens"]["mean"] == pytest.approx(670 / 3)
    # The second run's outputs are compared, like any output, never part of the signature.
    assert "rerun" not in stored["test_eval[cand].json"]["signature"]
    # Each system is gated against its own stored numbers, the reference included.
    path = study.path / "__baselines__" / "test_eval[cand].json"
    document = stored["test_eval[cand].json"]
    # A comparison reads the stored rows (paired with this run's), not the aggregate.
    for row in document["rows"].values():
        row["values"]["tokens"] = 200.0
    path.write_text(json.dumps(document), encoding="utf-8")
    second = study.run("-v")
    second.stdout.fnmatch_lines(
        [
            "*test_eval.py[[]base[]]::gate::tokens.mean PASSED*",
            "*test_eval.py[[]cand[]]::gate::tokens.mean FAILED*",
            "*baseline  200 from __baselines__/test_eval[[]cand[]].json",
        ]
    )


@pytest.mark.parametrize(
    ("dataset", "marker", "message"),
    [
        (
            ROWS,
            'compare_to="main"',
            "compare_to='main' is not a system of data/d.jsonl (its systems are 'base', 'cand')",
        ),
        (
            [{"id": "x", "answer": "A"}],
            'compare_to="base"',
            "compare_to='base' is not a system of data/d.jsonl (no row names a system)",
        ),
        (ROWS, 'compare_to=""', "ragmetrics marker compare_to must be a non-empty string"),
        (ROWS, 'rerun="data/none.jsonl"', "rerun: data/none.jsonl: cannot read the dataset"),
    ],
)
def test_comparison_marker_mistakes_fail_collection(
    project: Project, dataset: list[dict[str, Any]], marker: str, message: str
) -> None:
    project.write("data/d.jsonl", jsonl(dataset))
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        f'@pytest.mark.ragmetrics(dataset="data/d.jsonl", {marker})\n'
        "def test_it(row):\n    pass\n",
    )
    result = project.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*{message}*"])


def test_determinism_rows_without_a_second_run_error_alone(project: Project) -> None:
    project.write("data/runs.jsonl", jsonl(ROWS))
    project.write("data/rerun.jsonl", jsonl(_rerun()[:5]))  # cand q3 has no second run
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        "pytestmark = pytest.mark.ragmetrics(\n"
        '    dataset="data/runs.jsonl", rerun="data/rerun.jsonl"\n'
        ")\n\n"
        "def test_it(row, determinism):\n    determinism(row)\n",
    )
    project.write("thresholds.toml", "")
    result = project.run("-v")
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(
        ["*data/runs.jsonl:6: field 'rerun': data/rerun.jsonl has no row 'q3' of system 'cand'"]
    )
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/runs.jsonl")\n\n'
        "def test_it(row, determinism):\n    determinism(row)\n",
    )
    result = project.run()
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines(["*determinism compares two runs: name the second output file*"])


def test_limit_takes_the_first_rows_of_each_system(study: Project) -> None:
    result, report = study.run_json("--ragmetrics-limit", "2")
    assert [(e["label"], e["n"]) for e in report["evals"]] == [
        ("test_eval.py[base]", 2),
        ("test_eval.py[cand]", 2),
    ]
    statuses = {g["status"] for e in report["evals"] for g in e["gates"]}
    assert statuses == {"skipped"}
    result.stdout.fnmatch_lines(["*2 of 3 rows of data/runs.jsonl (system 'base') ran*"])


def test_dataset_level_tests_run_once_per_system(project: Project) -> None:
    project.write("data/runs.jsonl", jsonl(ROWS))
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/runs.jsonl", compare_to="base")\n\n'
        "def test_space(rows, embedding_space):\n    embedding_space(rows, field='answer', k=1)\n",
    )
    project.write("thresholds.toml", "")
    result, report = project.run_json("-v")
    result.assert_outcomes(passed=2)
    assert "test_space[base/all-rows]" in result.stdout.str()
    assert "test_space[cand/all-rows]" in result.stdout.str()
    counts = {e["label"]: e["metrics"]["embedding_space"]["total_samples"] for e in report["evals"]}
    assert counts == {"test_eval.py[base]": 3.0, "test_eval.py[cand]": 3.0}


def test_vs_baseline_gates_apply_to_compared_systems_only(study: Project) -> None:
    study.write("thresholds.toml", '[gates]\n"vs_baseline.tokens_mean_ratio" = "<= 1.2"\n')
    _, report = study.run_json()
    gates = {e["label"]: [(g["name"], g["status"]) for g in e["gates"]] for e in report["evals"]}
    assert gates == {
        "test_eval.py[base]": [],
        "test_eval.py[cand]": [("vs_baseline.tokens_mean_ratio", "passed")],
    }
    _, alone = study.run_json("-k", "cand")
    (cand,) = alone["evals"]
    assert cand["gates"][0]["status"] == "skipped"
    assert cand["gates"][0]["message"] == "the reference system 'base' did not run"


def test_an_incomplete_reference_is_not_compared(study: Project) -> None:
    _, partial = study.run_json("-k", "not base/q3")
    gates = {g["name"]: g for g in _entries(partial)["test_eval.py[cand]"]["gates"]}
    assert gates["tokens.mean"]["status"] == "skipped"
    assert gates["tokens.mean"]["message"].startswith("the reference system 'base' is partial: ")
    assert gates["idk_on_answerable.sum"]["status"] == "passed"

    rows = copy.deepcopy(ROWS)
    del rows[1]["tokens"]  # base q2 errors in test_cost
    study.write("data/runs.jsonl", jsonl(rows))
    study.write("data/rerun.jsonl", jsonl(rows))
    _, errored = study.run_json()
    tokens = {g["name"]: g for g in _entries(errored)["test_eval.py[cand]"]["gates"]}["tokens.mean"]
    assert tokens["status"] == "skipped"
    assert tokens["message"] == (
        "the reference system 'base' had 1 errored row(s); fix them, or compare anyway with "
        "--ragmetrics-force-gates"
    )
    _, forced = study.run_json("--ragmetrics-force-gates")
    tokens = {g["name"]: g for g in _entries(forced)["test_eval.py[cand]"]["gates"]}["tokens.mean"]
    assert (tokens["status"], tokens["baseline"]) == ("passed", 200.0)  # (100 + 300) / 2


def test_systems_must_answer_the_same_questions(study: Project) -> None:
    rows = [row for row in ROWS if (row["system"], row["id"]) != ("cand", "q3")]
    rows.append({**ROWS[5], "id": "q4"})  # cand answers a question base does not
    rows.append({k: v for k, v in ROWS[0].items() if k != "system"} | {"id": "q9"})
    study.write("data/runs.jsonl", jsonl(rows))
    study.write("data/rerun.jsonl", jsonl(rows))
    result, report = study.run_json()
    output = result.stdout.str()
    assert (
        "data/runs.jsonl:3: field 'id': system(s) 'cand' have no row 'q3'; compared systems "
        "must answer the same questions" in output
    )
    assert "data/runs.jsonl:6: field 'id': the reference system 'base' has no row 'q4'" in output
    # The row without a system is a bad row of each system, counted in each one's errors.
    assert "test_grounded[base/q9]" in output
    assert "test_grounded[cand/q9]" in output
    assert "data/runs.jsonl:7: field 'system': missing" in output
    errors = {e["label"]: e["errors"] for e in report["evals"]}
    assert errors == {"test_eval.py[base]": 2, "test_eval.py[cand]": 2}


def test_the_html_and_markdown_reports_of_a_study(study: Project) -> None:
    result = study.run("--ragmetrics-html", "out/report.html", "--ragmetrics-md", "out/s.md")
    summary = (study.path / "out" / "s.md").read_text(encoding="utf-8").splitlines()
    start = summary.index("### Transformations (by row id)")
    assert summary[start + 2] == (
        "- **test\\_eval.py\\[cand\\]** vs base: IDK → supported (1): q1; "
        "supported → unsupported (1): q2"
    )
    page = (study.path / "out" / "report.html").read_text(encoding="utf-8")
    assert result.ret == 1  # two gates fail; the report is written all the same
    assert page.count("<script") == 1  # the page's own, which sorts and filters rows
    # the distributions, the Pareto plot, the bars and the forest plot of the comparisons
    assert page.count("<svg") == 4
    assert "test_eval.py" in page
    assert "IDK → supported" in page
    assert html.escape(ROWS[4]["answer"]) in page  # cand q2, in its drill-down


def test_a_dataset_of_one_system_is_a_plain_eval(project: Project) -> None:
    rows = [{**row, "system": "prod"} for row in ROWS if row["system"] == "base"]
    project.write("data/runs.jsonl", jsonl(rows))
    project.write(
        "test_eval.py",
        "import pytest\n\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/runs.jsonl")\n\n'
        "def test_it(row, tokens):\n    tokens(row)\n\n"
        "def test_all(rows, embedding_space):\n    embedding_space(rows, field='answer', k=1)\n",
    )
    project.write("thresholds.toml", '[gates]\n"tokens.mean" = "== 200"\n')
    result, report = project.run_json("-v")
    result.assert_outcomes(passed=3 + 1 + 1)
    assert "test_it[q1]" in result.stdout.str()
    (entry,) = report["evals"]
    assert (entry["label"], entry["system"], entry["n"]) == ("test_eval.py", None, 3)
    assert entry["metrics"]["embedding_space"]["total_samples"] == 3.0
