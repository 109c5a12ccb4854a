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


def test_the_checked_in_real_users_database_is_built_from_its_jsonl(tmp_path: Path) -> None:
    script = _build_script()
    table, columns = script.TABLES["real_users"]
    fresh = tmp_path / "real_users.sqlite"
    assert script.build(EVALS / "data/real_users.jsonl", fresh, table, columns) == 10
    connection = sqlite3.connect(f"file:{EVALS / 'data/real_users.sqlite'}?mode=ro", uri=True)
    again = sqlite3.connect(fresh)
    try:
        query = "SELECT * FROM question_answer ORDER BY id"
        assert connection.execute(query).fetchall() == again.execute(query).fetchall()
    finally:
        connection.close()
        again.close()


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_real_users_with_no_proxy_label_are_counted_never_scored(
    pytester: pytest.Pytester, mode: str
) -> None:
    """By hand from real_users.jsonl: ru-05, ru-07 and ru-09 showed no page (NULL); of
    the other seven, the shown page is retrieved first by ru-01, ru-06 and ru-10, second
    by ru-02 and ru-08, third by ru-03, and not at all by ru-04."""
    evals = pytester.path / "evals"
    (evals / "data").mkdir(parents=True)
    name = "real_users.sqlite"
    (evals / "data" / name).write_bytes((EVALS / "data" / name).read_bytes())
    (evals / "test_real_users.py").write_bytes((EVALS / "test_real_users.py").read_bytes())
    pytester.makefile(".toml", thresholds='[gates]\n"unjudged.sum" = "<= 2"\n')
    result = pytester.runpytest(
        "evals", "--import-mode=importlib", "--ragmetrics-json=r.json", f"--ragmetrics-mode={mode}"
    )
    result.stdout.fnmatch_lines(
        ["FAILED evals/test_real_users.py::gate::unjudged.sum - unjudged.sum <= 2 FAILS*"]
    )
    if mode == "row":
        result.assert_outcomes(passed=7, skipped=3, failed=1)
    (evaluation,) = json.loads((pytester.path / "r.json").read_text())["evals"]
    assert (evaluation["n"], evaluation["errors"]) == (10, 0)
    metrics = evaluation["metrics"]
    assert (metrics["unjudged"]["sum"], metrics["unjudged"]["rate"]) == (3, 0.3)
    assert metrics["mrr"]["count"] == 7  # the unjudged rows are not scored 0
    assert metrics["mrr"]["mean"] == pytest.approx((1 + 1 + 1 + 1 / 2 + 1 / 2 + 1 / 3 + 0) / 7)
    assert metrics["hit_rate@1"]["rate"] == pytest.approx(3 / 7)
    assert metrics["hit_rate@3"]["rate"] == pytest.approx(6 / 7)
    unjudged = [row["id"] for row in evaluation["rows"] if row["metrics"].get("unjudged")]
    assert unjudged == ["ru-05", "ru-07", "ru-09"]
