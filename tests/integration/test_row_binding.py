"""A row test's metric fixtures are bound once per row, by ``row``, whatever order the test
names them in, and record as before; a project's own fixture by a metric's name stays
the project's.

Expected numbers are computed by hand from the rows in conftest.py: SQuAD EM and F1 of
the answers without their citation markers against the gold ("Paris is the capital" vs
"Paris": EM 0, F1 2·(1/3)·1/(1/3+1) = 0.5; "Berlin" vs "Berlin": 1, 1; "I don't know" vs
"Ljubljana": 0, 0; "Rome is old" vs "Rome": 0, 0.5).
"""

from __future__ import annotations

import json

import pytest
from helpers.project import ROWS, Project

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
def test_metrics_named_in_any_order_are_bound_to_their_row(
    project: Project, signature: str
) -> None:
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


OWN_FIXTURES = """
import pytest

@pytest.fixture
def latency():
    return "the project's own"

@pytest.fixture
def em(em):  # wraps the plugin's
    def scored(row):
        return ("wrapped", em(row))
    return scored
"""

OVERRIDING = """
import pytest
pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl"{mode})

def test_answers(row, latency, em, f1):
    assert latency == "the project's own"
    wrapped, score = em(row)
    assert wrapped == "wrapped"
    f1(row)
"""


def test_a_projects_fixture_by_a_metrics_name_stays_its_own(project: Project) -> None:
    """``latency`` and ``em`` defined in the project's conftest.py: the test gets those,
    the wrapped ``em`` still records through the plugin's, and ``f1``, which the test
    takes from the plugin, records as ever."""
    project.write("thresholds.toml", "")
    project.write("conftest.py", OWN_FIXTURES)
    project.write("test_eval.py", OVERRIDING.format(mode=""))
    result = project.run("--ragmetrics-json", "r.json")
    result.assert_outcomes(passed=len(ROWS))
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    metrics = {row["id"]: row["metrics"] for row in entry["rows"]}
    assert {row: values["em"] for row, values in metrics.items()} == EM
    assert {row: values["f1"] for row, values in metrics.items()} == F1
    assert not any("latency_ms" in values for values in metrics.values())


def test_in_bulk_mode_a_projects_fixture_wrapping_a_metric_is_refused(project: Project) -> None:
    """A bulk item sets its fixtures up once per batch: the project's ``em``, which wraps
    the plugin's per-row one, would see no row. A collection error names it."""
    project.write("thresholds.toml", "")
    project.write("conftest.py", OWN_FIXTURES)
    project.write("test_eval.py", OVERRIDING.format(mode=', mode="bulk", batch_size=2'))
    result = project.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*in bulk mode fixtures are set up once per batch*`em`*"])


NAMED_LIKE_METRICS = """
import pytest

@pytest.fixture
def faithfulness():  # an embedding metric's name: the project's fixture embeds nothing
    return "the project's own"

@pytest.fixture
def determinism():  # needs no second run
    return "the project's own"
"""

TAKING_NAMESAKES = """
import pytest
pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")

@pytest.mark.parametrize("precision", [0.5])
def test_answers(row, precision, faithfulness, determinism, em):
    assert precision == 0.5
    assert faithfulness == determinism == "the project's own"
    em(row)
"""


def test_a_namesake_asks_nothing_of_the_rows_or_the_model(project: Project) -> None:
    """A parametrized ``precision`` and the project's ``faithfulness`` and
    ``determinism`` are not those metrics: the rows need no ``relevant`` or second run,
    and nothing is embedded, so a model directory that cannot load is never loaded. The
    plugin's ``em``, taken beside them, records as ever."""
    project.write("model/config.json", "{}")  # a model directory in name only
    project.write("thresholds.toml", '[settings]\nembedding_model = "model"\n')
    project.write("conftest.py", NAMED_LIKE_METRICS)
    project.write("test_eval.py", TAKING_NAMESAKES)
    result = project.run("--ragmetrics-json", "r.json")
    result.assert_outcomes(passed=len(ROWS))
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    metrics = {row["id"]: row["metrics"] for row in entry["rows"]}
    assert metrics == {row: {"em": value, "errors": 0.0} for row, value in EM.items()}
