"""A metric of the user's with its own settings table: ``metric(settings=<a frozen
dataclass>, signed=...)`` is read from ``[settings.<name>]`` of thresholds.toml like the
built-in tables, its mistakes stop the run naming the key, and its signed fields enter the
baseline's signature as BLEU's do. In-process runs.

Hand counts on the four rows of ``conftest.ROWS`` (words split on white space, markers
included): r1 "Paris is the capital [CIT:d1]." has words of 5, 2, 3, 7 and 9 characters;
r2 "Berlin [1]." 6 and 4; r3 "I don't know." 1, 5 and 5; r4 "Rome is old [CIT:d4]." 4, 2,
3 and 9. Words of at least 5 characters (the default): 3, 1, 2, 1, mean 1.75; of at
least 7: 2, 0, 0, 1, mean 0.75.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator

import pytest
from helpers.project import Project

METRIC = '''
from dataclasses import dataclass

from pytest_ragmetrics import metric


@dataclass(frozen=True)
class LongWordSettings:
    min_length: int = 5  # changes the counts: signed
    label: str = "long"  # only words the evidence: not signed


@metric(
    requires=("answer",),
    range=(0, 50),
    settings=LongWordSettings,
    signed=("min_length",),
)
def long_words(row, settings):
    """Words of the answer of at least min_length characters."""
    count = sum(len(word) >= settings.min_length for word in row.answer.split())
    return count, f"{count} {settings.label} word(s)"
'''

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, long_words):
    long_words(row)
"""

GATES = '[gates]\n"long_words.mean" = "<= baseline"\n'


@pytest.fixture
def custom(project: Project) -> Project:
    project.write("conftest.py", METRIC)
    project.write("test_eval.py", EVAL)
    return project


def test_the_metric_reads_its_table(custom: Project) -> None:
    result, entry = custom.run_eval("")
    result.assert_outcomes(passed=4)
    assert entry["metrics"]["long_words"]["mean"] == 1.75
    assert entry["rows"][0]["evidence"]["long_words"] == "3 long word(s)"
    result, entry = custom.run_eval('[settings.long_words]\nmin_length = 7\nlabel = "big"\n')
    result.assert_outcomes(passed=4)
    assert entry["metrics"]["long_words"]["mean"] == 0.75
    assert entry["rows"][0]["evidence"]["long_words"] == "2 big word(s)"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            "[settings.long_words]\nmin_lenght = 7\n",
            "thresholds.toml: [settings.long_words] min_lenght: unknown setting; known: "
            "min_length, label; did you mean min_length?",
        ),
        (
            "[settings.long_words]\nmin_length = 7.5\n",
            "thresholds.toml: [settings.long_words] min_length: expected a whole number, got 7.5",
        ),
        (
            "[settings]\nlong_words = 7\n",
            "thresholds.toml: [settings] long_words: expected a table: [settings.long_words]",
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
    custom.run("--ragmetrics-update-baseline").assert_outcomes(passed=4 + 1)
    stored = json.loads((custom.path / "__baselines__" / "test_eval.json").read_text())
    assert "long_words" not in stored["signature"]  # at its defaults: not signed

    result, entry = custom.run_eval('[settings.long_words]\nlabel = "big"\n' + GATES)
    assert result.ret == 0
    assert entry["baseline"]["status"] == "paired"

    result, entry = custom.run_eval("[settings.long_words]\nmin_length = 7\n" + GATES)
    assert result.ret == 1
    assert entry["baseline"]["status"] == "not compared"
    result.stdout.fnmatch_lines(
        [
            "the baseline __baselines__/test_eval.json was made with other metric settings, "
            "so it is not compared; the settings that differ:",
            '  long_words: stored default, now {"min_length": 7}',
        ]
    )


def test_a_function_that_takes_no_settings_is_refused(custom: Project) -> None:
    custom.write(
        "conftest.py", METRIC.replace("def long_words(row, settings)", "def long_words(row)")
    )
    result = custom.run()
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        [
            "*long_words is declared with settings=, so it is called as long_words(row, "
            "settings): give the function a second parameter named settings*"
        ]
    )


@pytest.fixture
def local_ray() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the Ray engine needs Ray: pip install -e '.[ray]'")
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray")
def test_the_table_travels_with_the_rows_to_ray(local_ray: None, custom: Project) -> None:
    """The Ray workers import no conftest.py: the metric and its settings travel with the
    rows, and give the local engine's values."""
    custom.write(
        "thresholds.toml", '[settings]\nengine = "ray"\n[settings.long_words]\nmin_length = 7\n'
    )
    result, report = custom.run_json()
    result.assert_outcomes(passed=1)  # the batch
    (entry,) = report["evals"]
    assert [row["metrics"]["long_words"] for row in entry["rows"]] == [2, 0, 0, 1]
