"""One bad input never crashes the run or loses good rows (in-process pytester runs).

Each case is a dataset of good rows around the bad input. The run must end with exit
status 1 (a bad row errors) or 0 (the input is valid after all), never 3 (an internal
error), with every good row run and present in the JSON report.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/{name}")


def test_eval(row, overlap):
    overlap(row)
"""


# hypothesis's plugin imports hypothesis afresh in every in-process run: a second each
INNER_PLUGINS_OFF = ("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def good(row_id: str) -> str:
    """A row that overlap scores without embedding anything (a claim with no citation)."""
    return json.dumps({"id": row_id, "answer": "Paris is big.", "contexts": []}) + "\n"


@dataclass(frozen=True)
class Case:
    name: str
    content: bytes
    passed: tuple[str, ...]
    errored: tuple[str, ...] = ()
    message: str = ""


def jsonl_case(
    name: str, middle: str, errored: tuple[str, ...], message: str, passed: tuple[str, ...] = ()
) -> Case:
    text = good("g1") + middle + good("g2")
    return Case(name + ".jsonl", text.encode(), ("g1", "g2", *passed), errored, message)


CASES = [
    Case(
        "citation.jsonl",
        (
            good("g1")
            + json.dumps({"id": "huge", "answer": f"Paris [{'1' * 4301}].", "contexts": []})
            + "\n"
        ).encode(),
        ("g1", "huge"),  # a citation naming no context is data: the row scores 0
    ),
    jsonl_case(
        "surrogate",
        # a cited claim, whose texts the prepare step would look up in the embedding cache
        '{"id": "s", "answer": "Paris\\ud800 [1].", "contexts": [{"doc_id": "d", '
        '"text": "Paris"}]}\n',
        ("s",),
        "field 'answer': not valid Unicode text: a lone surrogate (\\ud800)",
    ),
    jsonl_case(
        "surrogate-id",
        '{"id": "\\udc80", "answer": "x", "contexts": []}\n',
        ("L2-",),
        "field 'id': not valid Unicode text",
    ),
    jsonl_case(
        "huge-number",
        '{"id": "n", "answer": "x", "contexts": [], "latency_ms": ' + "9" * 400 + "}\n",
        ("n",),
        "field 'latency_ms': expected a finite number",
    ),
    jsonl_case(
        "deep",
        '{"id": "d", "x": ' + "[" * 10_000 + "]" * 10_000 + "}\n",
        ("L2-",),
        "field '<json>': lists and objects nested deeper than 64 levels",
    ),
    jsonl_case(
        "system-list",
        '{"id": "s", "answer": "x", "contexts": [], "system": []}\n',
        ("s",),
        "field 'system': expected a string",
    ),
    Case(
        "not-utf8.jsonl",
        good("g1").encode() + b'{"id": "b\xff"}\n' + good("g2").encode(),
        ("g1", "g2"),
        ("L2-",),
        "field '<utf-8>': not UTF-8 text: byte 0xff at line 2",
    ),
    Case(
        "cr.jsonl",
        (good("g1") + good("g2")).replace("\n", "\r").encode(),
        ("g1", "g2"),
    ),
    Case(
        "big-cell.csv",
        f'id,answer,contexts\ng1,"{"long " * 30_000}",[]\ng2,x,[]\n'.encode(),
        ("g1", "g2"),
    ),
    Case(
        "unclosed-quote.csv",
        b'id,answer,contexts\ng1,x,[]\nbad,"unclosed,[]\ng2,x,[]\ng3,x,[]\n',
        ("g1", "g2", "g3"),
        ("L3-",),
        "field '<csv>': not valid CSV: unexpected end of data",
    ),
    jsonl_case(
        "renamed-ids",
        good("x") + good("x") + good("x@L3"),
        ("x@L3~2",),  # not "x@L3", which a good row has: the two must not merge
        "field 'id': duplicate id 'x' (first used at line 2)",
        passed=("x", "x@L3"),
    ),
]


def run_case(pytester: pytest.Pytester, case: Case) -> tuple[pytest.RunResult, dict[str, Any]]:
    pytester.makeini("[pytest]\n")
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / case.name).write_bytes(case.content)
    pytester.makepyfile(test_eval=EVAL.format(name=case.name))
    result = pytester.runpytest(*INNER_PLUGINS_OFF, "--ragmetrics-json", "report.json")
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return result, report


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_bad_input_errors_its_row_alone(pytester: pytest.Pytester, case: Case) -> None:
    result, report = run_case(pytester, case)
    assert result.ret == (1 if case.errored else 0)
    (evaluation,) = report["evals"]
    rows = {row["id"]: row for row in evaluation["rows"]}
    assert len(rows) == len(evaluation["rows"])  # no two rows share an id
    assert {row_id for row_id, row in rows.items() if not row["errors"]} == set(case.passed)
    errored = sorted(row_id for row_id, row in rows.items() if row["errors"])
    for prefix, row_id in zip(case.errored, errored, strict=True):
        assert row_id.startswith(prefix)
    result.assert_outcomes(passed=len(rows) - len(errored), errors=len(errored))
    if case.message:
        result.stdout.fnmatch_lines([f"*{case.name}:*{case.message}*"])


def test_a_symlink_loop_is_as_unreadable_as_a_missing_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "data").mkdir()
    os.symlink("loop.jsonl", pytester.path / "data" / "loop.jsonl")
    pytester.makepyfile(test_eval=EVAL.format(name="loop.jsonl"))
    result = pytester.runpytest(*INNER_PLUGINS_OFF)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error, as when missing
    result.stdout.fnmatch_lines(
        ["*test_eval.py::test_eval: data/loop.jsonl: cannot read the dataset: *symbolic links*"]
    )
    result.stdout.no_fnmatch_line("*RuntimeError*")


def test_a_row_naming_no_system_does_not_merge_with_a_system_row(
    pytester: pytest.Pytester,
) -> None:
    rows = [{"id": "q1", "system": s, "answer": "x", "contexts": []} for s in ("a", "b")]
    text = "".join(json.dumps(row) + "\n" for row in rows) + good("q1")
    result, report = run_case(pytester, Case("systems.jsonl", text.encode(), ()))
    assert result.ret == 1
    result.assert_outcomes(passed=2, errors=2)
    assert [
        (evaluation["system"], [(row["id"], bool(row["errors"])) for row in evaluation["rows"]])
        for evaluation in report["evals"]
    ] == [("a", [("q1", False), ("q1@L3", True)]), ("b", [("q1", False), ("q1@L3", True)])]
