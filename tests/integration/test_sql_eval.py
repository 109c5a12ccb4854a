"""An eval over a SQL query (SQLite, in-process pytester runs): the same aggregates as the
same rows in JSONL, errors that name the query and the row, and a URL that no report or
message shows.

The rows are conftest's four, stored one column per field, lists and objects as JSON
text (SQLite has no JSON type) and booleans as 0/1, so conftest's hand-computed
aggregates hold: f1 0.5, em 0.25, abstain 0.25, tokens mean 250, latency p50 250.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers.project import EVAL, ROWS, Project

FIELDS = ("id", "answer", "gold", "contexts", "answerable", "tokens", "latency_ms")
SQL_EVAL = EVAL.replace(
    'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")',
    "from pytest_ragmetrics import SqlDataset\n\n"
    "pytestmark = pytest.mark.ragmetrics(dataset=SqlDataset({args}){marker})",
)


def write_sqlite(path: Path, rows: list[dict[str, Any]], table: str = "qa") -> None:
    """``rows`` as a table of ``FIELDS`` columns (``qid`` holds the id)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(
            f"CREATE TABLE {table} (qid TEXT, answer TEXT, gold TEXT, contexts TEXT, "
            "answerable INTEGER, tokens TEXT, latency_ms REAL)"
        )
        db.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)",
            [tuple(_cell(row.get(name)) for name in FIELDS) for row in rows],
        )
    # sqlite3's context manager commits but does not close
    sqlite3.connect(path).close()


def _cell(value: Any) -> Any:
    if isinstance(value, list | dict):
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value


def use_sql(project: Project, args: str, marker: str = "") -> None:
    project.write("test_eval.py", SQL_EVAL.format(args=args, marker=marker))


SQLITE_ARGS = 'query="SELECT * FROM qa", sqlite="data/rows.sqlite", id_column="qid"'


def aggregates(report: dict[str, Any]) -> tuple[Any, ...]:
    (evaluation,) = report["evals"]
    gates = {gate["name"]: gate["value"] for gate in evaluation["gates"]}
    return evaluation["n"], evaluation["errors"], evaluation["metrics"], gates


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_a_sqlite_query_aggregates_as_the_same_rows_in_jsonl(project: Project, mode: str) -> None:
    result, report = project.run_json(f"--ragmetrics-mode={mode}")
    assert result.ret == 0
    expected = aggregates(report)
    metrics = expected[2]
    assert (metrics["f1"]["mean"], metrics["em"]["mean"], metrics["tokens"]["mean"]) == (
        0.5,
        0.25,
        250,
    )
    write_sqlite(project.path / "data/rows.sqlite", ROWS)
    use_sql(project, SQLITE_ARGS)
    result, report = project.run_json(f"--ragmetrics-mode={mode}")
    assert result.ret == 0, result.stdout.str()
    assert aggregates(report) == expected
    (evaluation,) = report["evals"]
    assert evaluation["dataset"] == "sql(data/rows.sqlite, qa)"
    # The identity: the statement run, then each row's id and inputs (here the gold and
    # whether it is answerable), never its answer, contexts, tokens or latency.
    statement = "SELECT * FROM (\nSELECT * FROM qa\n) AS ragmetrics_rows ORDER BY qid"
    identity = hashlib.sha256(statement.encode() + b"\0")
    for row in ROWS:
        inputs = {key: row[key] for key in ("id", "gold", "answerable") if key in row}
        identity.update(json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    assert evaluation["dataset_sha256"] == identity.hexdigest()


def test_rows_come_in_the_order_of_their_ids_whatever_the_table_s(project: Project) -> None:
    write_sqlite(project.path / "data/rows.sqlite", list(reversed(ROWS)))
    use_sql(project, SQLITE_ARGS)
    result = project.run("--collect-only", "-q")
    ids = [line.split("[")[1].rstrip("]") for line in result.outlines if "::test_answers[" in line]
    assert ids == ["r1", "r2", "r3", "r4"]
    use_sql(project, SQLITE_ARGS + ', order_by=("latency_ms",)')
    result = project.run("--collect-only", "-q")
    ids = [line.split("[")[1].rstrip("]") for line in result.outlines if "::test_answers[" in line]
    assert ids == ["r1", "r2", "r3", "r4"]  # latency 100, 200, 300, 400
    use_sql(project, SQLITE_ARGS.replace("SELECT * FROM qa", "SELECT * FROM qa ORDER BY qid DESC"))
    result = project.run("--collect-only", "-q")
    ids = [line.split("[")[1].rstrip("]") for line in result.outlines if "::test_answers[" in line]
    assert ids == ["r1", "r2", "r3", "r4"]  # the query's own order is not relied on


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_a_bad_row_errors_alone_naming_the_query_the_row_and_the_field(
    project: Project, mode: str
) -> None:
    rows = [dict(row) for row in ROWS]
    del rows[1]["gold"]  # NULL in a field f1 and em need
    rows[2]["latency_ms"] = "slow"  # a text in a REAL column: SQLite keeps it as text
    write_sqlite(project.path / "data/rows.sqlite", rows)
    use_sql(project, SQLITE_ARGS)
    result = project.run(f"--ragmetrics-mode={mode}")
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    assert "sql(data/rows.sqlite, qa): row 'r2': field 'gold': required by em, f1 but missing" in (
        output
    )
    assert (
        "sql(data/rows.sqlite, qa): row 'r3': field 'latency_ms': expected a finite number of "
        "milliseconds >= 0, got 'slow'"
    ) in output


def test_the_url_in_the_variable_is_never_shown(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite URL in the variable, with a made-up password that must appear nowhere."""
    write_sqlite(project.path / "data/rows.sqlite", ROWS)
    monkeypatch.setenv("RAG_DB", "sqlite:///data/rows.sqlite?secret=hunter2-secret")
    use_sql(project, 'query="SELECT * FROM qa", url_env="RAG_DB", id_column="qid"')
    result, report = project.run_json("--ragmetrics-md", "report.md")
    assert result.ret == 0, result.stdout.str()
    (evaluation,) = report["evals"]
    assert evaluation["dataset"] == "sql($RAG_DB, qa)"
    texts = [
        result.stdout.str(),
        *(
            p.read_text()
            for p in project.path.rglob("*")
            if p.is_file() and p.suffix in (".json", ".md")
        ),
    ]
    assert not any("hunter2" in text for text in texts)


def test_an_unreadable_query_fails_its_eval_only(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sqlite(project.path / "data/rows.sqlite", ROWS)
    use_sql(project, SQLITE_ARGS.replace("FROM qa", "FROM no_table"))
    project.write("test_other.py", EVAL.replace("test_answers", "test_other"))
    monkeypatch.delenv("NOT_SET_DB", raising=False)
    project.write(
        "test_third.py",
        SQL_EVAL.format(
            args='query="SELECT 1", url_env="NOT_SET_DB"', marker=', name="third"'
        ).replace("test_answers", "test_third"),
    )
    # As for a dataset file that cannot be read: its eval's collection fails, and with
    # --continue-on-collection-errors every other eval runs.
    result = project.run("--continue-on-collection-errors")
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    assert (
        "sql(data/rows.sqlite, no_table): the query failed: no such table: no_table; fix the query"
    ) in output
    assert "sql($NOT_SET_DB, query): the environment variable NOT_SET_DB is not set" in output
    result.assert_outcomes(passed=8, errors=2)  # 4 rows and 4 gates


def test_format_is_refused_for_a_query(project: Project) -> None:
    write_sqlite(project.path / "data/rows.sqlite", ROWS)
    use_sql(project, SQLITE_ARGS, marker=', format="csv"')
    result = project.run()
    result.stdout.fnmatch_lines(
        ["*test_answers: format= names a file's format; a SqlDataset's rows are a query's*"]
    )
    assert result.ret != 0


URL = "postgresql+psycopg://evals:hunter2-secret@db.internal/rag"


@pytest.mark.parametrize(
    ("origin", "args"),
    [
        ("url_env", ["--tb=long"]),
        ("url_env", ["--tb=long", "--fulltrace", "--showlocals"]),
        ("url_env", ["--continue-on-collection-errors", "-rE"]),
        ("url_env", ["--tb=long", "-n", "2"]),
        ("sqlite", ["--tb=long", "--showlocals"]),
    ],
    ids=["tb-long", "fulltrace", "continue", "n2", "sqlite"],
)
def test_a_url_pasted_into_the_marker_is_refused_without_showing_it(
    project: Project, origin: str, args: list[str]
) -> None:
    """The refusal names the eval file and says what to do, and no traceback shows the
    eval file's source line, which holds the URL and its password (nor, with
    --showlocals, the dataset's fields); the other eval's rows run all the same under
    --continue-on-collection-errors and under -n 2 (where pytest-xdist runs them)."""
    use_sql(project, f'query="SELECT * FROM qa", {origin}="{URL}", id_column="qid"')
    project.write("test_other.py", EVAL.replace("test_answers", "test_other"))
    if "-n" in args:  # in a subprocess, as every -n 2 run here
        result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    else:
        result = project.run(*args)
    output = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in output
    assert "INTERNALERROR" not in output
    refusal = {
        "url_env": "url_env must be the NAME of an environment variable",
        "sqlite": "sqlite must be a SQLite file's path",
    }[origin]
    result.stdout.fnmatch_lines(
        ["*ERROR collecting test_eval.py*", f"test_eval.py: SqlDataset: {refusal}*"]
    )
    if "--continue-on-collection-errors" in args or "-n" in args:
        result.assert_outcomes(passed=8, errors=1)  # the other eval's 4 rows and 4 gates
    else:
        assert result.ret == pytest.ExitCode.INTERRUPTED


@pytest.mark.parametrize("folder", [".", "evals"])
def test_a_url_pasted_into_a_conftest_s_dataset_is_refused_without_showing_it(
    project: Project, folder: str
) -> None:
    """A dataset declared in a conftest.py, the project's (loaded before collection: a
    usage error) or an eval folder's (its collection fails)."""
    conftest = project.write(
        f"{folder}/conftest.py",
        "from pytest_ragmetrics import SqlDataset\n\n"
        f'DATA = SqlDataset("SELECT 1", url_env="{URL}")\n',
    )
    project.write("evals/test_other.py", EVAL.replace("data/", "../data/"))
    result = project.run("--tb=long", "--showlocals")
    output = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in output
    assert "INTERNALERROR" not in output
    refusal = f"{conftest}: SqlDataset: url_env must be the NAME of an environment variable"
    assert refusal in output, output
    if folder == ".":
        assert result.ret == pytest.ExitCode.USAGE_ERROR
    else:
        assert result.ret == pytest.ExitCode.INTERRUPTED


@pytest.mark.parametrize("key", ["dataset", "rerun"])
def test_a_url_given_as_the_marker_s_dataset_path_is_refused_without_showing_it(
    project: Project, key: str
) -> None:
    """dataset= and rerun= are files' paths: a database URL there is refused, not read as
    a path whose messages would name it."""
    marker = (
        f'pytest.mark.ragmetrics(dataset="{URL}")'
        if key == "dataset"
        else f'pytest.mark.ragmetrics(dataset="data/rows.jsonl", rerun="{URL}")'
    )
    project.write(
        "test_eval.py",
        EVAL.replace('pytest.mark.ragmetrics(dataset="data/rows.jsonl")', marker),
    )
    assert URL in (project.path / "test_eval.py").read_text()
    result = project.run("--tb=long", "--showlocals")
    output = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in output
    assert (
        f"ragmetrics marker's {key}= is a file's path, never a URL: a URL carries the password; "
        "read a database with dataset=pytest_ragmetrics.SqlDataset(query, url_env=...) "
        "naming the environment variable that holds its URL"
    ) in output, output
    assert result.ret == pytest.ExitCode.INTERRUPTED
