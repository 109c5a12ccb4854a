"""Row ids, answers and questions holding control characters or a GitHub Actions workflow
command reach no output raw: not the terminal (the ragmetrics section, gate and row
failures, the short summary), not the Markdown summary, not GitHub's job summary (in
process, pytester)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import ROWS, Project, jsonl

EVIL_ID = "r2\x1b[31m\x07\n::error::owned"

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, f1):
    f1(row)
    assert "owned" not in row["answer"], row["answer"]


def test_errs(row):
    if "owned" in row["answer"]:
        raise ValueError(f"{row['id']}: {row['answer']}")
"""


def _rows(answer: str) -> str:
    rows = [dict(row) for row in ROWS]
    rows[1] |= {
        "id": EVIL_ID,
        "question": "Where?\x1b]0;title\x07\n::warning::asked",
        "answer": answer,
    }
    return jsonl(rows)


def _raw(text: str) -> list[str]:
    """The lines of ``text`` holding an escape or a bell, or starting a workflow command."""
    return [
        line
        for line in text.splitlines()
        if "\x1b" in line or "\x07" in line or line.lstrip().startswith("::")
    ]


def test_hostile_data_is_escaped_in_every_output(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= baseline"\n')
    project.write("data/rows.jsonl", _rows("Berlin [1]."))
    assert project.run("--ragmetrics-update-baseline").ret == 0
    # r2 now answers wrongly: its own tests fail, and the gate names it as regressed
    project.write("data/rows.jsonl", _rows("Bonn \x1b[31m\x07\n::error::owned\n"))
    step_summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    result = project.run("-rA", "--ragmetrics-md", "r.md", "--ragmetrics-html", "r.html")
    result.assert_outcomes(passed=3 + 3, failed=2 + 1)
    output = "\n".join(result.outlines + result.errlines)
    assert _raw(output) == []
    # what the data said is still there, escaped
    result.stdout.fnmatch_lines(
        [
            "*f1.mean >= baseline FAILS*",
            "regressed 1 of 4 paired rows break the rule on their own: r2\\x1b[31m\\x07",
            "\\x3a:error::owned 1 → 0",  # the rest of the id, its line defused
        ]
    )
    assert "\\x3a:error::owned" in output  # the answer's own line, defused
    for summary in (project.path / "r.md", step_summary):
        text = summary.read_text(encoding="utf-8")
        assert _raw(text) == []
        assert "\\x1b" in text  # the id, escaped
    page = (project.path / "r.html").read_text(encoding="utf-8")
    assert "\x1b" not in page  # a browser would show nothing
    assert "\x07" not in page
    assert "r2\\x1b[31m\\x07" in page  # the id as the terminal shows it


def test_a_live_system_error_quoting_hostile_text_is_escaped(pytester: pytest.Pytester) -> None:
    from test_live_eval import SYSTEMS
    from test_live_eval import _project as live_project

    hostile = SYSTEMS.replace(
        'def base(question):\n    log("base", question)\n',
        'def base(question):\n    log("base", question)\n'
        '    if question.startswith("Capital"):\n'
        '        raise ValueError("bad \\x1b[31m\\x07\\n::error::owned")\n',
    )
    project = live_project(pytester, "in-process", hostile)
    project.write("thresholds.toml", "")
    result = project.run()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert _raw("\n".join(result.outlines + result.errlines)) == []
    result.stdout.fnmatch_lines(
        ["*system 'base' raised ValueError: bad \\x1b?31m\\x07", "\\x3a:error::owned*"]
    )
