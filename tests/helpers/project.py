"""A pytester project with an eval, its data and thresholds (``Project``), the rows whose
metrics the tests compute by hand (``ROWS``), and reading a run's terminal sections."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

# Four rows whose metrics are computed by hand in test_plugin.py:
#   f1: 0.5, 1, 0, 0.5 -> mean 0.5      em: 0, 1, 0, 0 -> mean 0.25
#   tokens: 100, 200, 300, 400 -> mean 250; latency_ms 100..400 -> p50 250, p95 385
#   abstain: 0, 0, 1, 0 -> mean 0.25    idk_citation: all 0
ROWS: list[dict[str, Any]] = [
    {
        "id": "r1",
        "answer": "Paris is the capital [CIT:d1].",
        "gold": ["Paris"],
        "contexts": [{"doc_id": "d1", "text": "Paris is the capital of France."}],
        "tokens": 100,
        "latency_ms": 100,
    },
    {
        "id": "r2",
        "answer": "Berlin [1].",
        "gold": "Berlin",
        "contexts": [{"doc_id": "d2", "text": "Berlin is the capital of Germany."}],
        "tokens": [
            {"stage": "rewrite", "prompt_tokens": 50, "completion_tokens": 10},
            {"stage": "generate", "prompt_tokens": 120, "completion_tokens": 20},
        ],
        "latency_ms": 200,
    },
    {
        "id": "r3",
        "answer": "I don't know.",
        "gold": ["Ljubljana"],
        "contexts": [],
        "answerable": False,
        "tokens": 300,
        "latency_ms": 300,
    },
    {
        "id": "r4",
        "answer": "Rome is old [CIT:d4].",
        "gold": ["Rome"],
        "contexts": [{"doc_id": "d4", "text": "Rome is the capital of Italy."}],
        "tokens": {"prompt": 300, "completion": 100},
        "latency_ms": 400,
    },
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, em, f1, abstain, idk_citation, tokens, latency):
    assert idk_citation(row) == 0
    em(row); f1(row); abstain(row); tokens(row); latency(row)
"""

PASSING_GATES = """
[gates]
"idk_citation.sum" = "== 0"
"f1.mean" = ">= 0.5"
"tokens.mean" = "<= 250"
"latency_ms.p50" = "<= 250"
"""

# The three ways a run can go, each in its own process: merging across workers is the
# subject of the tests that use them (tests/integration/test_xdist.py and a few named
# "in every mode"); every other integration test runs in process (IN_PROCESS).
MODES = {"no-xdist": ["-p", "no:xdist"], "n0": ["-n", "0"], "n2": ["-n", "2"]}
IN_PROCESS = "in-process"


def terminal_section(result: pytest.RunResult, title: str) -> list[str]:
    """The lines of the terminal's ``=== title ===`` section, without its title (nor the
    ``- generated xml file -`` line that may follow it)."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(f"=+ {title} =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("==", "- ")))
    return lines[start + 1 : end]


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


class Project:
    """A pytester project with an eval, its data and thresholds, run in one mode: in this
    process (``IN_PROCESS``, pytester's ``runpytest``) or in a subprocess of ``MODES``."""

    def __init__(self, pytester: pytest.Pytester, mode: str = IN_PROCESS) -> None:
        if mode != IN_PROCESS and mode not in MODES:
            raise ValueError(f"Project: unknown mode {mode!r}; use {IN_PROCESS!r} or {list(MODES)}")
        self.pytester = pytester
        self.mode = mode
        pytester.makeini("[pytest]\n")
        self.write("data/rows.jsonl", jsonl(ROWS))
        self.write("test_eval.py", EVAL)
        self.write("thresholds.toml", PASSING_GATES)

    @property
    def path(self) -> Path:
        return self.pytester.path

    def write(self, name: str, text: str) -> Path:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, *args: str) -> pytest.RunResult:
        if self.mode == IN_PROCESS:
            return self.pytester.runpytest("-p", "no:cacheprovider", *args)
        return self.pytester.runpytest_subprocess(
            *MODES[self.mode], "-p", "no:cacheprovider", *args
        )

    def run_json(self, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        result = self.run("--ragmetrics-json", "report.json", *args)
        return result, json.loads((self.path / "report.json").read_text(encoding="utf-8"))

    def run_eval(self, thresholds: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        """Run with ``thresholds`` as thresholds.toml: the result and the JSON report's
        entry of the project's one eval."""
        self.write("thresholds.toml", thresholds)
        result, report = self.run_json(*args)
        (entry,) = report["evals"]
        return result, entry
