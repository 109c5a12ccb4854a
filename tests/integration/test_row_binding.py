"""A row test's metric fixtures are bound once per row, by ``row``, whatever order the test
names them in, and record as before.

Expected numbers are computed by hand from the rows in conftest.py: SQuAD EM and F1 of
the answers without their citation markers against the gold ("Paris is the capital" vs
"Paris": EM 0, F1 2·(1/3)·1/(1/3+1) = 0.5; "Berlin" vs "Berlin": 1, 1; "I don't know" vs
"Ljubljana": 0, 0; "Rome is old" vs "Rome": 0, 0.5).
"""

from __future__ import annotations

import json

import pytest

from conftest import ROWS, Project

EM = {"r1": 0.0, "r2": 1.0, "r3": 0.0, "r4": 0.0}
F1 = {"r1": 0.5, "r2": 1.0, "r3": 0.0, "r4": 0.5}


def recorded(project: Project, signature: str, body: str) -> dict[str, dict[str, float]]:
    """Each row's recorded metrics, from the JSON report of a run, which must pass, of an
    eval over the conftest rows whose test takes ``signature`` and runs ``body``."""
    project.write("thresholds.toml", "")
    project.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        f"def test_answers({signature}):\n{body}",
    )
    result = project.run("--ragmetrics-json", "r.json")
    result.assert_outcomes(passed=len(ROWS))
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    return {row["id"]: row["metrics"] for row in entry["rows"]}


@pytest.mark.parametrize(
    "signature",
    ["row, em, f1, request", "em, row, f1, request", "f1, em, request, row"],
    ids=["row-first", "metric-first", "row-last"],
)
def test_metrics_named_in_any_order_record_each_row_once(project: Project, signature: str) -> None:
    metrics = recorded(
        project,
        signature,
        "    assert em.context is f1.context  # bound together, for this row\n"
        '    assert request.getfixturevalue("em") is em\n'
        "    em(row)\n"
        "    f1(row)\n",
    )
    assert {row: values["em"] for row, values in metrics.items()} == EM
    assert {row: values["f1"] for row, values in metrics.items()} == F1


def test_a_metric_asked_for_by_name_only_is_bound_to_the_row(project: Project) -> None:
    """``request.getfixturevalue`` of a metric the test does not name still gets the
    row's own fixture, recording into the row."""
    metrics = recorded(project, "row, request", '    request.getfixturevalue("f1")(row)\n')
    assert {row: values["f1"] for row, values in metrics.items()} == F1
