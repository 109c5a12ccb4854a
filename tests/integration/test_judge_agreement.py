"""A judge metric's agreement with people end to end (docs/judge.md#agreement-with-people):
rows carry a person's label (``human``) on a subset, the judge is a scripted server, and
the eval's statistics must equal the references computed on the same verdicts and labels:
scikit-learn's ``cohen_kappa_score`` (plain and quadratic), the ``krippendorff`` package's
ordinal alpha, and ``ppi_py``'s PPI++ mean over the unlabelled rows' verdicts.

A failing agreement gate fails every other gate on the metric as "cannot be trusted".
"""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from helpers.project import IN_PROCESS, Project, jsonl
from ppi_py import ppi_mean_pointestimate
from sklearn.metrics import cohen_kappa_score

from chat_server import ChatServer, Raw, Received, completion

VERDICTS = (0.0, 0.5, 1.0)
ROWS = 30
# The judge's verdict on row i, and people's label on the first 14 rows: they agree on
# most, the judge is kinder on a few (people 0 or 0.5 where the judge says 1).
JUDGE = [VERDICTS[(i * 7) % 3] for i in range(ROWS)]
HUMAN = {i: (JUDGE[i] if i % 4 else max(0.0, JUDGE[i] - 0.5)) for i in range(14)}
DATA = [
    {
        "id": f"q{i}",
        "question": f"Question {i}?",
        "answer": f"Answer {i} [CIT:d1].",
        "contexts": [{"doc_id": "d1", "text": "A passage."}],
        **({"human": {"faithfulness_judge": HUMAN[i]}} if i in HUMAN else {}),
    }
    for i in range(ROWS)
]
EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_faithful(row, faithfulness_judge):
    faithfulness_judge(row)
"""


def _judge(received: Received) -> Raw:
    prompt = received.body["messages"][-1]["content"]
    i = next(i for i in range(ROWS) if f"Question {i}?" in prompt)
    return Raw(completion(json.dumps({"score": JUDGE[i], "reason": "scripted"}), None))


def _project(pytester: pytest.Pytester, url: str, gates: str = "") -> Project:
    project = Project(pytester, IN_PROCESS)
    (project.path / "test_eval.py").unlink()
    project.write("rows.jsonl", jsonl(DATA))
    project.write("test_faithful.py", EVAL)
    project.write(
        "thresholds.toml", f'[judge]\nbase_url = "{url}"\nmodel = "m"\ntimeout = 5\n' + gates
    )
    return project


def test_agreement_with_people_equals_the_references(pytester: pytest.Pytester) -> None:
    with ChatServer(default=_judge) as server:
        result, document = _project(pytester, server.url).run_json()
    result.assert_outcomes(passed=ROWS)
    stats = document["evals"][0]["metrics"]["faithfulness_judge"]
    labelled = sorted(HUMAN)
    judge = [JUDGE[i] for i in labelled]
    people = [HUMAN[i] for i in labelled]
    assert stats["labelled"] == len(labelled)
    labels = list(VERDICTS)
    # scikit-learn takes categories, not floats: each verdict's place on the scale, in order
    # (its weights are read on those places too).
    ranks = [0, 1, 2]
    judge_ranks, people_ranks = [labels.index(v) for v in judge], [labels.index(v) for v in people]
    assert stats["kappa"] == pytest.approx(
        cohen_kappa_score(judge_ranks, people_ranks, labels=ranks), abs=1e-12
    )
    assert stats["weighted_kappa"] == pytest.approx(
        cohen_kappa_score(judge_ranks, people_ranks, labels=ranks, weights="quadratic"),
        abs=1e-12,
    )
    assert stats["agreement"] == pytest.approx(
        krippendorff.alpha(
            reliability_data=[judge, people],
            level_of_measurement="ordinal",
            value_domain=labels,
        ),
        abs=1e-9,
    )
    assert stats["accuracy"] == sum(j == h for j, h in zip(judge, people, strict=True)) / len(
        labelled
    )
    unlabelled = [JUDGE[i] for i in range(ROWS) if i not in HUMAN]
    expected = ppi_mean_pointestimate(np.array(people), np.array(judge), np.array(unlabelled))
    assert stats["ppi_mean"] == pytest.approx(float(np.ravel(expected)[0]), abs=1e-9)
    # The reports list the rows where the judge and people differ.
    differ = [f"q{i}" for i in labelled if JUDGE[i] != HUMAN[i]]
    assert differ  # the data were made to disagree on some
    record = document["evals"][0]["dataset_level"]["details"]["judge_agreement"]
    assert [row["row"] for row in record["faithfulness_judge"]["disagreements"]] == differ
    result.stdout.fnmatch_lines(
        [
            "*test_faithful.py: faithfulness_judge: agreement with people",
            f"*{len(labelled)} labelled row(s)",
            "*alpha (ordinal) * [[]*] at 95%",
            f"*{len(differ)} labelled row(s) where the judge and people differ",
        ]
    )


def test_a_failed_agreement_gate_fails_the_metrics_other_gates(
    pytester: pytest.Pytester,
) -> None:
    gates = (
        '[gates]\n"faithfulness_judge.agreement" = ">= 0.99"\n'
        '"faithfulness_judge.mean" = ">= 0.0"\n'
    )
    with ChatServer(default=_judge) as server:
        result, document = _project(pytester, server.url, gates).run_json()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    statuses = {gate["name"]: gate["status"] for gate in document["evals"][0]["gates"]}
    assert statuses == {
        "faithfulness_judge.agreement": "failed",
        "faithfulness_judge.mean": "failed",  # >= 0 holds, but the judge is not trusted
    }
    result.stdout.fnmatch_lines(
        [
            "*faithfulness_judge.mean: cannot be trusted: the gate "
            "faithfulness_judge.agreement failed*"
        ]
    )


def test_a_label_off_the_scale_errors_its_row(pytester: pytest.Pytester) -> None:
    bad = [{**DATA[0], "human": {"faithfulness_judge": 0.7}}, *DATA[1:3]]
    with ChatServer(default=_judge) as server:
        project = _project(pytester, server.url)
        project.write("rows.jsonl", jsonl(bad))
        result = project.run()
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*rows.jsonl:1: field 'human': the label of faithfulness_judge is 0.7*"]
    )


def test_an_agreement_gate_without_labelled_rows_fails_saying_why(
    pytester: pytest.Pytester,
) -> None:
    gates = '[gates]\n"faithfulness_judge.agreement" = ">= 0.6"\n'
    unlabelled = [{k: v for k, v in row.items() if k != "human"} for row in DATA]
    with ChatServer(default=_judge) as server:
        project = _project(pytester, server.url, gates)
        project.write("rows.jsonl", jsonl(unlabelled))
        result, document = project.run_json()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (gate,) = document["evals"][0]["gates"]
    assert gate["status"] == "failed"
    assert gate["message"] == (
        "faithfulness_judge.agreement >= 0.6: cannot be checked: the rows of test_faithful.py "
        "recorded faithfulness_judge, but gave it no agreement: faithfulness_judge's own "
        "aggregation computes agreement from what the rows carry besides their values, and "
        "they carry none for it here (the metric's docs say what it needs)"
    )
