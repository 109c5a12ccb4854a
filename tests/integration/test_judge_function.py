"""An in-process judge end to end: ``[judge] function`` names a module in the project's
folder, found on sys.path as pytest sets it, and answers every judged row.

Expected values by hand: the function scores q1 1.0 and q2 0.5 (mean 0.75) and appends a
line to calls.txt per call, so two runs with a cache call it twice, not four times.
"""

from __future__ import annotations

import pytest
from helpers.project import Project, jsonl, terminal_section

ROWS = [
    {
        "id": qid,
        "question": f"Question {qid}?",
        "answer": f"The answer to {qid} [CIT:d1].",
        "contexts": [{"doc_id": "d1", "title": "Doc", "text": "Some passage."}],
    }
    for qid in ("q1", "q2")
]
EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/judged.jsonl")


def test_judged(row, faithfulness_judge):
    faithfulness_judge(row)
"""
JUDGE = """
import json
from pathlib import Path


def judge(messages):
    prompt = messages[-1]["content"]
    with (Path(__file__).parent / "calls.txt").open("a") as calls:
        calls.write("call\\n")
    score = 1.0 if "Question q1?" in prompt else 0.5
    return json.dumps({"score": score, "reason": "by question"})


def broken(messages):
    raise ValueError("the judge has no model loaded")
"""


def _project(pytester: pytest.Pytester, module: str, function: str) -> Project:
    project = Project(pytester)
    project.write("data/judged.jsonl", jsonl(ROWS))
    project.write("test_eval.py", EVAL)
    project.write(f"{module}.py", JUDGE)
    project.write(
        "thresholds.toml",
        f'[judge]\nmodel = "stand-in"\nfunction = "{function}"\n\n'
        '[gates]\n"faithfulness_judge.mean" = "== 0.75"\n',
    )
    return project


def test_a_function_judges_the_rows_and_a_rerun_calls_nothing(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "stand_in_judge_a", "stand_in_judge_a:judge")
    for _ in range(2):
        result, report = project.run_json("--ragmetrics-cache-dir", ".cache")
        result.assert_outcomes(passed=3)  # two rows and the gate
        (entry,) = report["evals"]
        assert entry["metrics"]["faithfulness_judge"]["mean"] == 0.75
    calls = (project.path / "calls.txt").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 2


def test_an_exception_of_the_function_errors_its_row_with_the_message(
    pytester: pytest.Pytester,
) -> None:
    project = _project(pytester, "stand_in_judge_b", "stand_in_judge_b:broken")
    result = project.run()
    result.assert_outcomes(errors=2, failed=1)  # the gate cannot be checked
    messages = terminal_section(result, "ERRORS")[1::2]
    reason = (
        "faithfulness_judge: LLM judge stand-in (function stand_in_judge_b:broken): the "
        "faithfulness_judge call raised ValueError: the judge has no model loaded"
    )
    assert sorted(messages) == [f"data/judged.jsonl:{n}: {reason}" for n in (1, 2)]


def test_a_module_not_on_sys_path_errors_every_row_naming_the_key(
    pytester: pytest.Pytester,
) -> None:
    project = _project(pytester, "stand_in_judge_c", "no_such_stand_in:judge")
    result = project.run()
    result.assert_outcomes(errors=2, failed=1)
    messages = terminal_section(result, "ERRORS")[1::2]
    assert len(messages) == 2
    assert all(
        "faithfulness_judge: [judge] function: no module 'no_such_stand_in' on sys.path "
        "(looked for 'no_such_stand_in:judge'" in message
        for message in messages
    )
