"""A metric of the user's declared with a ``presentation`` is shown as the built-in
metrics are: its column in the terminal's main table and in the Markdown summary, by its
declared priority (in process, pytester).

Counted by hand on the four rows of ``conftest.ROWS``: ``words`` (white-space separated
words of the answer) is 5, 2, 3, 4, mean 3.5, written ``3.5`` in the declared ``amount``
format (one decimal).
"""

from __future__ import annotations

import pytest
from helpers.project import Project, terminal_section

METRICS = '''
from pytest_ragmetrics import Column, Presentation, metric


@metric(
    requires=("answer",),
    range=(0, 50),
    presentation=Presentation(label="Words", columns=(Column("main", 45, format="amount"),)),
)
def words(row):
    """Words in the answer, citation markers included."""
    return len(row.answer.split())
'''

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, words, f1):
    words(row); f1(row)
"""


def test_a_declared_column_is_in_the_terminal_and_markdown_tables(project: Project) -> None:
    project.write("conftest.py", METRICS)
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", "")
    result = project.run("--ragmetrics-md", "r.md")
    result.assert_outcomes(passed=4)
    section = terminal_section(result, "ragmetrics")
    header = next(line for line in section if line.startswith("Eval "))
    row = next(line for line in section if line.startswith("test_eval.py "))
    # the built-in main columns by their declared priority: Tokens 40, P50 ms 50
    headings = ["Eval", "N", "Faithfulness", "Overlap", "F1", "Tokens", "Words", "P50", "ms"]
    assert header.split() == [*headings, "Abstain"]
    assert row.split()[0:2] == ["test_eval.py", "4"]
    assert row.split()[6] == "3.5"  # words: (5 + 2 + 3 + 4) / 4
    assert not any(line.strip().startswith("words ") for line in section)  # not "More"
    markdown = (project.path / "r.md").read_text(encoding="utf-8")
    assert "| Eval | N | Faithfulness | Overlap | F1 | Tokens | Words | P50 ms | Abstain |" in (
        markdown
    )


def test_a_presentation_that_is_not_one_is_refused(project: Project) -> None:
    wrong = METRICS.replace('presentation=Presentation(label="Words", ', "presentation=dict(")
    project.write("conftest.py", wrong)
    project.write("test_eval.py", EVAL)
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*conftest.py:*: words: presentation is dict, not a Presentation: give presentation=*"]
    )
