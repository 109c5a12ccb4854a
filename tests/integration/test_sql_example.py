"""The bundled SQLite eval (evals/test_answers_sql.py): its database holds the bundled
JSONL's rows, and it reports what the same test over the JSONL file reports."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).parents[2]
EVALS = REPOSITORY / "evals"
TEST_FUNCTION = "def test_answers_sql("
JSONL_MARKER = 'pytestmark = pytest.mark.ragmetrics(dataset="data/answers.jsonl")\n\n\n'


def _build_script() -> Any:
    spec = importlib.util.spec_from_file_location("build_sqlite", EVALS / "data/build_sqlite.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(database: Path) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT * FROM qa_log ORDER BY qid").fetchall()
    finally:
        connection.close()


def test_the_checked_in_database_is_built_from_the_bundled_jsonl(tmp_path: Path) -> None:
    """Run ``python evals/data/build_sqlite.py`` after changing answers.jsonl."""
    fresh = tmp_path / "answers.sqlite"
    assert _build_script().build(EVALS / "data/answers.jsonl", fresh) == 48
    assert _table(EVALS / "data/answers.sqlite") == _table(fresh)


def _evaluations(report: dict[str, Any]) -> dict[str, Any]:
    return {evaluation["name"]: evaluation for evaluation in report["evals"]}


def _rows(evaluation: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(row["id"], row["metrics"]) for row in evaluation["rows"]]


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_the_sqlite_eval_reports_what_the_same_test_over_jsonl_reports(
    pytester: pytest.Pytester, mode: str
) -> None:
    evals = pytester.path / "evals"
    (evals / "data").mkdir(parents=True)
    for name in ("answers.jsonl", "answers.sqlite"):
        (evals / "data" / name).write_bytes((EVALS / "data" / name).read_bytes())
    sql_eval = (EVALS / "test_answers_sql.py").read_text(encoding="utf-8")
    (evals / "test_answers_sql.py").write_text(sql_eval)
    # The same test over the JSONL file: the module with its marker replaced.
    test = sql_eval[sql_eval.index(TEST_FUNCTION) :]
    (evals / "test_answers_jsonl.py").write_text(
        "import pytest\n\n" + JSONL_MARKER + test.replace(TEST_FUNCTION, "def test_answers(")
    )
    pytester.makefile(".toml", thresholds="[gates]\n")
    result = pytester.runpytest(
        "evals", "--import-mode=importlib", "--ragmetrics-json=r.json", f"--ragmetrics-mode={mode}"
    )
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "r.json").read_text())
    evaluations = _evaluations(report)
    jsonl = evaluations["evals/test_answers_jsonl.py"]
    sql = evaluations["evals/test_answers_sql.py"]
    assert sql["dataset"] == "sql(evals/data/answers.sqlite, qa_log)"
    assert (sql["n"], sql["errors"]) == (jsonl["n"], jsonl["errors"]) == (48, 0)
    assert sql["metrics"] == jsonl["metrics"]
    assert sql["breakdowns"] == jsonl["breakdowns"]
    assert _rows(sql) == _rows(jsonl)
