"""The ``trust`` fixture through pytest: per-row statistics travel on the reports and the
Trust-Score numbers are computed once, on the controller, in dataset order; so with a
verdict table they equal the reference's sample output in every mode (no xdist, -n 0,
-n 2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.project import IN_PROCESS, Project, jsonl

from test_suite import SEED_ROWS, SEED_SAMPLE, SEED_VERDICTS

TRUST_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/asqa.jsonl")


def test_trust(row, trust):
    trust(row)
"""
VERDICT_RECORDS = "".join(
    json.dumps({"premise": p, "hypothesis": h, "entailed": v}) + "\n"
    for (p, h), v in SEED_VERDICTS.items()
)
TABLE_SETTINGS = '[settings]\ntrust_judge = "table:data/verdicts.jsonl"\n'


def _trust_project(project: Project, gates: str = "") -> Project:
    rows = [{"id": f"t{i:02d}", **row} for i, row in enumerate(SEED_ROWS)]
    project.write("data/asqa.jsonl", jsonl(rows))
    project.write("data/verdicts.jsonl", VERDICT_RECORDS)
    project.write("test_eval.py", TRUST_EVAL)
    project.write("thresholds.toml", TABLE_SETTINGS + "[gates]\n" + gates)
    return project


def test_the_seed_sample_through_the_plugin_in_every_mode(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    gates = '"trust_score" = ">= 72.34"\n"refusal_f1" = ">= 60"\n"trust.answered_num" = "== 5"\n'
    result, report = _trust_project(project, gates).run_json()
    result.assert_outcomes(passed=10 + 3)
    trust = report["evals"][0]["metrics"]["trust"]
    for key, expected in SEED_SAMPLE.items():
        assert trust[key] == expected, key
    assert report["trust_judge"]["approximate"] is False
    result.stdout.fnmatch_lines(["Trust-Score (0-100; judge: verdict table data/verdicts.jsonl):"])
    result.stdout.fnmatch_lines(["test_eval.py*10*5*75.0*83.3*79.2*83.3*54.5*72.3"])


def test_a_failing_trust_gate_names_its_value(make_project: Any) -> None:
    project = _trust_project(make_project(IN_PROCESS), '"refusal_prec" = ">= 61"\n')
    result = project.run()
    result.assert_outcomes(passed=10, failed=1)
    result.stdout.fnmatch_lines(["*refusal_prec >= 61 FAILS: trust refusal_prec is 60*"])


def test_a_row_without_answers_found_errors_naming_the_field(make_project: Any) -> None:
    project = _trust_project(make_project(IN_PROCESS))
    row = {
        "id": "bad",
        "answer": "x",
        "gold": [["x"]],
        "contexts": [{"doc_id": "d", "title": "T", "text": "x"}],
    }
    project.write("data/asqa.jsonl", jsonl([row]))
    result = project.run()
    result.assert_outcomes(errors=1)  # bad data is an error of the row, not a verdict
    result.stdout.fnmatch_lines(["*asqa.jsonl:1*field 'contexts': item 0 needs 'answers_found'*"])


def test_a_missing_verdict_errors_the_row(make_project: Any) -> None:
    project = _trust_project(make_project(IN_PROCESS))
    project.write("data/verdicts.jsonl", "")
    result = project.run()
    result.stdout.fnmatch_lines(["*MissingVerdict*no verdict for hypothesis*"])


def test_no_unanswerable_row_warns_in_the_report(make_project: Any) -> None:
    project = _trust_project(make_project(IN_PROCESS))
    rows = [{"id": f"t{i:02d}", **row} for i, row in enumerate(SEED_ROWS[:5])]  # all answerable
    project.write("data/asqa.jsonl", jsonl(rows))
    result = project.run()
    result.stdout.fnmatch_lines(["*test_eval.py: no row is unanswerable*macro_f1 is at most 50*"])


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            'trust_judge = "nli"',
            'expected "embedding", "table:<verdicts.jsonl>", "nli:<model directory>" or "llm"',
        ),
        ('trust_judge = "llm"', '"llm" needs a [judge] table'),
        ('trust_judge = "nli:nowhere"', "'nowhere' is not a model directory"),
        ('trust_judge = "table:missing.jsonl"', "no verdict file 'missing.jsonl'"),
        ("refusal_threshold = 100", "expected a number in [0, 100)"),
        ("trust_judge_tau = 0", "expected a number in (0, 1]"),
        ('refusal_flag = ""', "expected the refusal sentence"),
        ('refusal_flag = "!!!"', "words that survive normalisation"),
    ],
)
def test_bad_trust_settings_are_usage_errors(
    make_project: Any, settings: str, message: str
) -> None:
    project = _trust_project(make_project(IN_PROCESS))
    project.write("thresholds.toml", f"[settings]\n{settings}\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_the_embedding_judge_is_prepared_and_labelled_approximate(make_project: Any) -> None:
    project = _trust_project(make_project(IN_PROCESS))
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    result.assert_outcomes(passed=10)
    assert report["trust_judge"]["approximate"] is True
    result.stdout.fnmatch_lines(
        ["Trust-Score (0-100; judge: embedding similarity >= 0.65, an approximation of NLI*"]
    )
    # Every premise and hypothesis was embedded before the rows ran, none after.
    result.stdout.fnmatch_lines(["*embeddings (main): * unique text(s), 0 from cache, * encoded*"])


def test_an_nli_model_directory_can_judge(make_project: Any) -> None:
    from test_judges import tiny_nli

    project = _trust_project(make_project(IN_PROCESS))
    tiny_nli(project.path / "nli-model", favoured=1)  # entails everything
    project.write("thresholds.toml", '[settings]\ntrust_judge = "nli:nli-model"\n')
    result, report = project.run_json()
    result.assert_outcomes(passed=10)
    result.stdout.fnmatch_lines(["Trust-Score (0-100; judge: NLI cross-encoder nli-model):"])
    assert report["trust_judge"] == {
        "setting": "nli:nli-model",
        "approximate": False,
        "description": "NLI cross-encoder nli-model",
    }
    # Every cited sentence in range is entailed: A5's single sentence now counts, so the
    # answered rows' recall is (1 + 1/2 + 1 + 1/2 + 1) / 5.
    assert report["evals"][0]["metrics"]["trust"]["answered_citation_rec"] == 80.0
