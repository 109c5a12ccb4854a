"""A dataset-level metric of the user's with its own settings table and presentation:
``dataset_metric(settings=..., signed=..., presentation=...)`` is read from
``[settings.<name>]`` of thresholds.toml as ``metric(settings=...)`` is
(test_custom_settings.py), its signed fields enter the baseline's signature, and the
reports show it as its presentation says (test_report_custom_columns.py). In-process runs.

Hand counts on the four answers of ``conftest.ROWS``: r1 "Paris is the capital [CIT:d1].",
r2 "Berlin [1].", r3 "I don't know.", r4 "Rome is old [CIT:d4].". Holding "[" (the
default marker): r1, r2 and r4, share 3/4 = 0.75; holding "CIT": r1 and r4, 2/4 = 0.5.
"""

from __future__ import annotations

import pytest
from helpers.project import Project, terminal_section

METRIC = '''
from dataclasses import dataclass

from pytest_ragmetrics import Column, Presentation, dataset_metric


@dataclass(frozen=True)
class CitedSettings:
    marker: str = "["  # changes the share: signed
    note: str = "cited"  # names nothing that is recorded: not signed


@dataset_metric(
    requires=("answer",),
    stats=("cited_share", "answers"),
    settings=CitedSettings,
    signed=("marker",),
    presentation=Presentation(
        label="Cited", columns=(Column("main", 45, stat="cited_share", format="hundredths"),)
    ),
)
def answer_set(rows, settings):
    """The share of the answers holding the citation marker."""
    cited = sum(settings.marker in row.answer for row in rows)
    return {"cited_share": cited / len(rows), "answers": len(rows)}
'''

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_the_set(rows, answer_set):
    answer_set(rows)
"""

GATES = '[gates]\n"answer_set.cited_share" = ">= baseline"\n'


@pytest.fixture
def custom(project: Project) -> Project:
    project.write("conftest.py", METRIC)
    project.write("test_eval.py", EVAL)
    return project


def test_the_metric_reads_its_table(custom: Project) -> None:
    result, entry = custom.run_eval("")
    result.assert_outcomes(passed=1)
    assert entry["metrics"]["answer_set"] == {"cited_share": 0.75, "answers": 4}
    result, entry = custom.run_eval('[settings.answer_set]\nmarker = "CIT"\n')
    result.assert_outcomes(passed=1)
    assert entry["metrics"]["answer_set"] == {"cited_share": 0.5, "answers": 4}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            '[settings.answer_set]\nmarkr = "CIT"\n',
            "thresholds.toml: [settings.answer_set] markr: unknown setting; known: "
            "marker, note; did you mean marker?",
        ),
        (
            "[settings.answer_set]\nmarker = 7\n",
            "thresholds.toml: [settings.answer_set] marker: expected a string, got 7",
        ),
        (
            "[settings]\nanswer_set = 7\n",
            "thresholds.toml: [settings] answer_set: expected a table: [settings.answer_set]",
        ),
    ],
)
def test_a_mistake_in_the_table_stops_the_run_naming_the_key(
    custom: Project, settings: str, message: str
) -> None:
    custom.write("thresholds.toml", settings)
    result = custom.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_signed_setting_refuses_the_baseline_and_an_unsigned_one_does_not(
    custom: Project,
) -> None:
    custom.write("thresholds.toml", GATES)
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=1 + 1)

    result, entry = custom.run_eval('[settings.answer_set]\nnote = "quoted"\n' + GATES)
    assert result.ret == 0
    assert entry["baseline"]["status"] == "paired"

    result, entry = custom.run_eval('[settings.answer_set]\nmarker = "CIT"\n' + GATES)
    assert result.ret == 1
    assert entry["baseline"]["status"] == "not compared"
    result.stdout.fnmatch_lines(
        [
            "the baseline __baselines__/test_eval.json was made with other metric settings, "
            "so it is not compared; the settings that differ:",
            '  answer_set: stored default, now {"marker": "CIT"}',
        ]
    )


def test_a_function_that_takes_no_settings_is_refused(custom: Project) -> None:
    custom.write(
        "conftest.py", METRIC.replace("def answer_set(rows, settings)", "def answer_set(rows)")
    )
    result = custom.run()
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        [
            "*answer_set is declared with settings=, so it is called as answer_set(rows, "
            "settings): give the function a second parameter named settings*"
        ]
    )


def test_the_declared_column_is_in_the_terminal_and_markdown_tables(custom: Project) -> None:
    """Labelled ``Cited``, written with two decimals (``hundredths``), after the built-in
    columns of lower priority; no longer listed under "More metrics"."""
    custom.write("thresholds.toml", "")
    result = custom.run("--ragmetrics-md", "r.md")
    result.assert_outcomes(passed=1)
    section = terminal_section(result, "ragmetrics")
    header = next(line for line in section if line.startswith("Eval "))
    row = next(line for line in section if line.startswith("test_eval.py "))
    cells = dict(zip(header.split(), row.split(), strict=False))
    assert "Cited" in cells
    assert cells["Cited"] == "0.75"
    assert not any(line.strip().startswith("answer_set") for line in section)
    markdown = (custom.path / "r.md").read_text(encoding="utf-8")
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    headings = [cell.strip() for cell in table[0].strip("|").split("|")]
    values = [cell.strip() for cell in table[2].strip("|").split("|")]
    assert values[headings.index("Cited")] == "0.75"
