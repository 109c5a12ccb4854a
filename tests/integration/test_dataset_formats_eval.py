"""An eval over a Parquet dataset and over gzip'd JSONL (in-process pytester runs).

The rows are conftest's four, with ``tokens`` as plain counts and ``gold`` as alias lists
so that each field is one Parquet column type; the totals are unchanged (r2's calls came
to 200 tokens, r4's prompt and completion to 400), so the hand-computed aggregates of
conftest hold: f1 0.5, em 0.25, abstain 0.25, tokens mean 250, latency p50 250.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.project import EVAL, ROWS, Project, jsonl

CONTEXTS = pa.list_(pa.struct([("doc_id", pa.string()), ("text", pa.string())]))
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("answer", pa.string()),
        ("gold", pa.list_(pa.string())),
        ("contexts", CONTEXTS),
        ("answerable", pa.bool_()),
        ("tokens", pa.int64()),
        ("latency_ms", pa.float64()),
    ]
)


def uniform_rows() -> list[dict[str, Any]]:
    rows = [dict(row) for row in ROWS]
    for row, tokens in zip(rows, (100, 200, 300, 400), strict=True):
        row["tokens"] = tokens
        row["gold"] = [row["gold"]] if isinstance(row["gold"], str) else row["gold"]
    return rows


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)


def bad_row_in_every_format(project: Project) -> dict[str, str]:
    """The uniform rows as Parquet with a null gold in its second row, and as gzipped
    JSONL with its third line no JSON: each file's name, with the error line of its bad
    row (an f1 eval's) as pytest's output shows it."""
    rows = uniform_rows()
    rows[1]["gold"] = None
    write_parquet(project.path / "data/rows.parquet", rows)
    text = jsonl(uniform_rows()).replace('"id": "r3"', '"id": "r3",, ')
    (project.path / "data/rows.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    return {
        "rows.parquet": "*data/rows.parquet:2: field 'gold': required by f1 but missing*",
        "rows.jsonl.gz": "*data/rows.jsonl.gz:3: field '<json>': not valid JSON*",
    }


def use_dataset(project: Project, name: str) -> None:
    project.write("test_eval.py", EVAL.replace("data/rows.jsonl", f"data/{name}"))


def summary(report: dict[str, Any], dataset: Path) -> tuple[Any, ...]:
    """What must not depend on the format, once the report shows which file it read."""
    (evaluation,) = report["evals"]
    assert evaluation["dataset"].endswith(f"data/{dataset.name}")
    assert evaluation["dataset_sha256"] == hashlib.sha256(dataset.read_bytes()).hexdigest()
    gates = {gate["name"]: gate["value"] for gate in evaluation["gates"]}
    return evaluation["n"], evaluation["errors"], evaluation["metrics"], gates


def test_parquet_and_gzip_datasets_aggregate_as_the_same_rows_in_jsonl(
    project: Project,
) -> None:
    rows = uniform_rows()
    project.write("data/rows.jsonl", jsonl(rows))
    result, report = project.run_json()
    assert result.ret == 0
    expected = summary(report, project.path / "data/rows.jsonl")
    metrics = expected[2]
    assert (metrics["f1"]["mean"], metrics["em"]["mean"], metrics["abstain"]["rate"]) == (
        0.5,
        0.25,
        0.25,
    )
    assert expected[3] == {
        "idk_citation.sum": 0,
        "f1.mean": 0.5,
        "tokens.mean": 250,
        "latency_ms.p50": 250,
    }

    write_parquet(project.path / "data/rows.parquet", rows)
    use_dataset(project, "rows.parquet")
    result, report = project.run_json()
    assert result.ret == 0
    assert summary(report, project.path / "data/rows.parquet") == expected

    (project.path / "data/rows.jsonl.gz").write_bytes(gzip.compress(jsonl(rows).encode()))
    use_dataset(project, "rows.jsonl.gz")
    result, report = project.run_json()
    assert result.ret == 0
    assert summary(report, project.path / "data/rows.jsonl.gz") == expected


def test_a_null_a_metric_needs_and_a_nan_are_bad_rows_of_a_parquet_dataset(
    project: Project,
) -> None:
    rows = uniform_rows()
    rows[1]["gold"] = None
    rows[2]["latency_ms"] = float("nan")
    write_parquet(project.path / "data/rows.parquet", rows)
    use_dataset(project, "rows.parquet")
    result = project.run()
    result.assert_outcomes(passed=2 + 4, errors=2)  # two rows, four gates
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "*data/rows.parquet:2: field 'gold': required by em, f1 but missing*",
            "*data/rows.parquet:3: field '<parquet>': column 'latency_ms': nan is not a number*",
        ]
    )
    result.stdout.no_fnmatch_line("*field 'latency_ms': required by*")  # left out, not missing
