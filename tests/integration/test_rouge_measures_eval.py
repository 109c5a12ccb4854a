"""ROUGE precision and recall through pytest: `measure=` records `<type>_precision` and
`<type>_recall`, their means equal rouge-score's, gates read them, a bad measure fails the
test saying which measures exist."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.project import Project, jsonl
from rouge_score import rouge_scorer  # type: ignore[import-untyped]

ROWS: list[dict[str, Any]] = [
    {"id": "a", "question": "q", "answer": "the cat sat on the mat [1]", "gold": "the cat sat"},
    {"id": "b", "question": "q", "answer": "dogs bark", "gold": ["dogs bark at night", "cats"]},
]
STRIPPED = ["the cat sat on the mat", "dogs bark"]
GOLDS = [["the cat sat"], ["dogs bark at night", "cats"]]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_rouge(row, rougeL, rouge1):
    precision = rougeL(row, measure="precision")
    assert precision.metric == "rougeL_precision"
    rougeL(row, measure="recall")
    rougeL(row)
    rouge1(row, measure="recall")
"""


def _expected(rouge_type: str, field: str) -> float:
    scorer = rouge_scorer.RougeScorer([rouge_type])
    values = [
        getattr(scorer.score_multi(golds, answer)[rouge_type], field)
        for answer, golds in zip(STRIPPED, GOLDS, strict=True)
    ]
    return sum(values) / len(values)


def _project(project: Project, eval_text: str, thresholds: str) -> Project:
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", eval_text)
    project.write("thresholds.toml", thresholds)
    return project


def test_precision_and_recall_are_recorded_and_gated(project: Project) -> None:
    # row a: rougeL precision 3/6, recall 3/3; row b: precision 2/2, recall 2/4 -> both 3/4
    precision = _expected("rougeL", "precision")
    assert precision == pytest.approx(0.75)
    gates = '[gates]\n"rougeL_precision.mean" = ">= 0.75"\n"rougeL_recall.mean" = "> 0.75"\n'
    result, report = _project(project, EVAL, gates).run_json()
    result.assert_outcomes(passed=2 + 1, failed=1)  # recall 0.75 is not > 0.75
    result.stdout.fnmatch_lines(["*FAILED*rougeL_recall.mean*"])
    metrics = report["evals"][0]["metrics"]
    for name, rouge_type, field in [
        ("rougeL_precision", "rougeL", "precision"),
        ("rougeL_recall", "rougeL", "recall"),
        ("rougeL", "rougeL", "fmeasure"),
        ("rouge1_recall", "rouge1", "recall"),
    ]:
        assert metrics[name]["mean"] == pytest.approx(_expected(rouge_type, field), abs=1e-12)
    assert "rouge1" not in metrics  # only what was asked for is recorded


def test_an_unknown_measure_fails_the_test_naming_the_measures(project: Project) -> None:
    bad = EVAL.replace('measure="recall")\n    rougeL(row)', 'measure="f1")\n    rougeL(row)')
    result = _project(project, bad, "").run()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*rougeL(row, measure='f1'): unknown measure; use one of 'fmeasure', 'precision'*"]
    )


def test_a_baseline_stored_before_per_character_rouge_compares_everything_else(
    project: Project,
) -> None:
    """ROUGE's version 2 counts unspaced scripts per character: a baseline stored before it
    (no ``<metric>.version`` in its signature) no longer compares the ROUGE numbers, each
    record of the fixture included, while the other metrics of the file are compared."""
    with_f1 = EVAL.replace(
        "def test_rouge(row, rougeL, rouge1):", "def test_rouge(row, rougeL, rouge1, f1):"
    )
    with_f1 = with_f1.replace(
        '    rouge1(row, measure="recall")', '    rouge1(row, measure="recall")\n    f1(row)'
    )
    gates = (
        '[gates]\n"rougeL_precision.mean" = ">= baseline"\n"rouge1_recall.mean" = ">= baseline"\n'
        '"f1.mean" = ">= baseline"\n'
    )
    _project(project, with_f1, gates).run("--ragmetrics-update-baseline").assert_outcomes(
        passed=2 + 3
    )
    stored_path = project.path / "__baselines__" / "test_eval.json"
    stored = json.loads(stored_path.read_text())
    versions = {key: value for key, value in stored["signature"].items() if ".version" in key}
    assert versions == {
        "rougeL.version": "2",
        "rougeL_precision.version": "2",
        "rougeL_recall.version": "2",
        "rouge1_recall.version": "2",
    }
    for key in versions:  # as a file written before the bump holds it
        del stored["signature"][key]
    stored_path.write_text(json.dumps(stored))
    result, report = project.run_json()
    result.assert_outcomes(passed=2 + 1, failed=2)
    status = {gate["name"]: gate["status"] for gate in report["evals"][0]["gates"]}
    assert status == {
        "rougeL_precision.mean": "failed",
        "rouge1_recall.mean": "failed",
        "f1.mean": "passed",
    }
    result.stdout.fnmatch_lines(['*rouge1_recall.version: stored default, now "2"*'])
