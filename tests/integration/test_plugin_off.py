"""``pytest -p no:ragmetrics`` turns the whole plugin off: its one entry point registers
the fixtures' modules itself, so no hook, option, marker or fixture of the plugin is
left, and an eval fails as pytest fails any test whose fixture is missing. Each test
also runs the same project with the plugin, where the same thing is there. In process,
on the standard project of conftest.py (an eval and a thresholds.toml)."""

from __future__ import annotations

import re

import pytest
from helpers.project import Project

OFF = ("-p", "no:ragmetrics")
# Fixtures of each of the plugin's fixture modules, and metric fixtures it generates.
SOME_FIXTURES = ("row", "rows", "f1", "ndcg", "embedding_space", "ragmetrics_system")


def _listed(result: pytest.RunResult) -> set[str]:
    """The fixture names ``pytest --fixtures`` lists (a line ``name -- path:line``)."""
    return set(re.findall(r"^(\w+)(?: \[\w+ scope\])? -- ", result.stdout.str(), re.MULTILINE))


def test_no_fixture_of_the_plugin_is_listed(project: Project) -> None:
    assert set(SOME_FIXTURES) <= _listed(project.run("--fixtures"))
    off = project.run(*OFF, "--fixtures")
    assert off.ret == pytest.ExitCode.OK
    assert _listed(off).isdisjoint(SOME_FIXTURES)
    assert "pytest_ragmetrics" not in off.stdout.str()


def test_no_option_of_the_plugin_exists(project: Project) -> None:
    project.run("--ragmetrics-json", "report.json").assert_outcomes(passed=4 + 4)
    off = project.run(*OFF, "--ragmetrics-json", "report.json")
    assert off.ret == pytest.ExitCode.USAGE_ERROR
    off.stderr.fnmatch_lines(["*unrecognized arguments: --ragmetrics-json*"])


def test_the_marker_is_unknown(project: Project) -> None:
    project.run("--markers").stdout.fnmatch_lines(["@pytest.mark.ragmetrics(dataset, *"])
    off = project.run(*OFF, "--markers")
    assert "ragmetrics" not in off.stdout.str()


def test_an_eval_fails_as_pytest_fails_a_missing_fixture(project: Project) -> None:
    """The eval's one test function is not parametrized over the rows: one error, pytest's
    own, and nothing of the plugin's (no RuntimeError of a fixture left registered, no
    report section, no gate)."""
    off = project.run(*OFF)
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'row' not found*"])
    text = off.stdout.str() + off.stderr.str()
    assert "RuntimeError" not in text
    assert "ragmetrics" not in "".join(line for line in off.outlines if line.startswith("="))
    assert "::gate::" not in text
