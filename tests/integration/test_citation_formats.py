"""Answers that cite in a format the plugin does not read: a warning in every report,
and citation_pattern to read them. In-process runs (``pytester.runpytest``)."""

from __future__ import annotations

import json

import pytest
from helpers.project import jsonl

# Help-desk answers that cite their sources as [wifi-1]; r2 says it does not know and
# still cites one, which idk_citation exists to catch.
ROWS = [
    {
        "id": "r1",
        "answer": "Restart the router [wifi-1].",
        "contexts": [{"doc_id": "wifi-1", "text": "Restart the router."}],
    },
    {
        "id": "r2",
        "answer": "I don't know [wifi-2].",
        "contexts": [{"doc_id": "wifi-2", "text": "Check the cable."}],
    },
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_answers(row, idk_citation):
    idk_citation(row)
"""

GATES = '[gates]\n"idk_citation.sum" = "== 0"\n'


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl(ROWS))
    return pytester


def test_answers_citing_in_an_unread_format_are_warned_about(project: pytest.Pytester) -> None:
    (project.path / "thresholds.toml").write_text(GATES)
    result = project.runpytest(
        "--ragmetrics-json=r.json", "--ragmetrics-md=r.md", "--ragmetrics-html=r.html"
    )
    assert result.ret == 0  # the gate cannot see the IDK sentence's citation
    result.stdout.fnmatch_lines(
        [
            "Warnings:",
            "  no answer of test_eval.py holds a citation marker the plugin reads ([[]CIT:<doc_id>]"
            " and [[]n], citation_format = 'auto'), though 2 of its rows carry contexts: *"
            "describe it with citation_pattern in [[]settings]",
        ]
    )
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    (warning,) = entry["warnings"]
    assert warning.startswith("no answer of test_eval.py holds a citation marker")
    assert "> **Warning**: no answer of test\\_eval.py holds" in (project.path / "r.md").read_text()
    assert "Warning: no answer of test_eval.py holds" in (project.path / "r.html").read_text()


def test_citation_pattern_reads_them(project: pytest.Pytester) -> None:
    settings = "[settings]\ncitation_pattern = '\\[([\\w-]+)\\]'\n"
    (project.path / "thresholds.toml").write_text(settings + GATES)
    result = project.runpytest("--ragmetrics-json=r.json")
    assert result.ret == 1  # now r2's citation is seen, and the gate catches it
    result.stdout.fnmatch_lines(["*idk_citation.sum == 0 FAILS: idk_citation sum is 1*"])
    result.stdout.no_fnmatch_line("Warnings:")
    (entry,) = json.loads((project.path / "r.json").read_text())["evals"]
    assert entry["warnings"] == []
    assert [row["metrics"]["idk_citation"] for row in entry["rows"]] == [0.0, 1.0]


def test_rows_without_contexts_are_not_warned_about(project: pytest.Pytester) -> None:
    rows = [{"id": "r1", "answer": "Paris."}]
    (project.path / "rows.jsonl").write_text(jsonl(rows))
    (project.path / "thresholds.toml").write_text(GATES)
    result = project.runpytest()
    assert result.ret == 0
    result.stdout.no_fnmatch_line("Warnings:")
