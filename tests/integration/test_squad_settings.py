"""squad_version = "2.0": em and f1 score no-answer questions as SQuAD v2.0's script and
report its HasAns / NoAns splits as gateable metrics. In-process runs."""

from __future__ import annotations

import json

import pytest
from helpers.project import jsonl

# Hand-computed under v2.0 (HasAns: a gold with tokens; NoAns: gold ""):
#   r1 "Paris" / "Paris"             HasAns  EM 1  F1 1
#   r2 "Paris France" / ["Paris"]    HasAns  EM 0  F1 2/3 (P 1/2, R 1)
#   r3 "" / ""                       NoAns   EM 1  F1 1   (v1.1: F1 0)
#   r4 "Lyon" / ""                   NoAns   EM 0  F1 0
ROWS = [
    {"id": "r1", "answer": "Paris", "gold": "Paris"},
    {"id": "r2", "answer": "Paris France", "gold": ["Paris"]},
    {"id": "r3", "answer": "", "gold": ""},
    {"id": "r4", "answer": "Lyon", "gold": ""},
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_answers(row, em, f1):
    em(row)
    f1(row)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl(ROWS))
    return pytester


def _means(project: pytest.Pytester) -> dict[str, float]:
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    return {name: stats["mean"] for name, stats in entry["metrics"].items()}


def test_v2_reports_the_has_answer_and_no_answer_splits(project: pytest.Pytester) -> None:
    settings = '[settings]\nsquad_version = "2.0"\n'
    gates = '[gates]\n"f1_no_ans.mean" = ">= 0.5"\n"f1_has_ans.mean" = ">= 0.9"\n'
    (project.path / "thresholds.toml").write_text(settings + gates)
    result = project.runpytest("--ragmetrics-json=r.json")
    assert result.ret == 1  # HasAns F1 is 5/6, below 0.9
    result.stdout.fnmatch_lines(["*f1_has_ans.mean >= 0.9 FAILS*"])
    means = _means(project)
    assert means["f1"] == pytest.approx((1 + 2 / 3 + 1 + 0) / 4)
    assert means["f1_has_ans"] == pytest.approx((1 + 2 / 3) / 2)
    assert means["f1_no_ans"] == pytest.approx(1 / 2)
    assert (means["em"], means["em_has_ans"], means["em_no_ans"]) == (0.5, 0.5, 0.5)


def test_v1_keeps_f1_zero_for_two_empty_texts_and_records_no_split(
    project: pytest.Pytester,
) -> None:
    (project.path / "thresholds.toml").write_text("")
    result = project.runpytest("--ragmetrics-json=r.json")
    assert result.ret == 0
    means = _means(project)
    assert means["f1"] == pytest.approx((1 + 2 / 3 + 0 + 0) / 4)
    assert not {"f1_has_ans", "f1_no_ans", "em_has_ans", "em_no_ans"} & set(means)
