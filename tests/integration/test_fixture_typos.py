"""A misspelled metric fixture: one collection error naming the fixture meant, not
pytest's "fixture not found" once for every row."""

from __future__ import annotations

from helpers.project import Project

TYPO_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, faithfulnes, f1):
    f1(row)
"""


def test_a_misspelled_metric_fixture_is_named_once_with_the_fixture_meant(
    project: Project,
) -> None:
    project.write("test_eval.py", TYPO_EVAL)
    result = project.run()
    assert result.ret == 2  # interrupted: an error during collection
    result.assert_outcomes(errors=1)  # four rows, one error
    message = (
        "test_eval.py::test_answers: `faithfulnes` is no fixture: did you mean `faithfulness`?"
    )
    assert [line for line in result.outlines if line.startswith("test_eval.py::")] == [message]
    assert "fixture 'faithfulnes' not found" not in result.stdout.str()


def test_a_name_close_to_several_fixtures_names_them_all(project: Project) -> None:
    project.write("test_eval.py", TYPO_EVAL.replace("faithfulnes, f1", "rouge, f1"))
    result = project.run()
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*test_answers: `rouge` is no fixture: did you mean `rouge1` or `rouge2` or `rougeL`?"]
    )


def test_a_name_close_to_no_fixture_keeps_pytests_own_error(project: Project) -> None:
    project.write("test_eval.py", TYPO_EVAL.replace("faithfulnes", "bananas"))
    result = project.run()
    assert "did you mean" not in result.stdout.str()
    assert result.stdout.str().count("fixture 'bananas' not found") == 4  # once per row


def test_a_parametrized_argument_is_no_typo(project: Project) -> None:
    project.write(
        "test_eval.py",
        TYPO_EVAL.replace(
            "def test_answers", '@pytest.mark.parametrize("recal", [1])\ndef test_answers'
        ).replace("faithfulnes, f1", "recal, f1"),
    )
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.5"\n')
    result = project.run()
    result.assert_outcomes(passed=4 + 1)  # four rows and the gate
