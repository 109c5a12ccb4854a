"""SQL datasets (data/sql.py) through the loader, on SQLite files: configuration, how
column values become fields, ordering, identity, errors and redaction."""

from __future__ import annotations

import datetime
import hashlib
import json
import sqlite3
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.data import sql
from pytest_ragmetrics.data.dataset import (
    MAX_DEPTH,
    DatasetError,
    DatasetReader,
    Problem,
    load_dataset,
    scan_dataset,
)
from pytest_ragmetrics.data.sql import SqlConfigError, SqlDataset
from pytest_ragmetrics.results.baseline import INPUT_FIELDS


def make_db(path: Path, create: str, rows: list[tuple[Any, ...]]) -> Path:
    db = sqlite3.connect(path)
    with db:
        db.execute(create)
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            db.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    db.close()
    return path


@pytest.fixture
def qa(tmp_path: Path) -> Path:
    return make_db(
        tmp_path / "qa.sqlite",
        "CREATE TABLE t (qid TEXT, question TEXT, gold_json TEXT, contexts TEXT, "
        "answerable INTEGER, latency_ms REAL, note TEXT)",
        [
            ("q2", "Two?", '["b", "B"]', '[{"doc_id": "d", "text": "t"}]', 1, 2.5, "[x]"),
            ("q1", "One?", "a", None, 0, None, None),
        ],
    )


def dataset(path: Path, query: str = "SELECT * FROM t", **kwargs: Any) -> SqlDataset:
    kwargs.setdefault("id_column", "qid")
    return SqlDataset(query, sqlite=path.name, **kwargs).at(path.parent)


def test_rows_are_ordered_by_id_and_columns_become_fields(qa: Path) -> None:
    loaded = load_dataset(dataset(qa, columns={"gold_json": "gold"}))
    assert loaded.display == "sql(qa.sqlite, t)"
    assert [r.row.id for r in loaded.rows] == ["q1", "q2"]
    assert [r.problems for r in loaded.rows] == [(), ()]
    assert dict(loaded.rows[0].row.data) == {
        "id": "q1",
        "question": "One?",
        "gold": "a",  # text not starting with [ is one answer
        "answerable": False,  # SQLite's 0
    }
    assert dict(loaded.rows[1].row.data) == {
        "id": "q2",
        "question": "Two?",
        "gold": ["b", "B"],
        "contexts": [{"doc_id": "d", "text": "t"}],
        "answerable": True,
        "latency_ms": 2.5,
        "note": "[x]",  # a column the plugin does not know stays text
    }
    assert loaded.rows[1].row.where("gold") == "sql(qa.sqlite, t): row 'q2': field 'gold'"


def test_order_by_names_the_order(qa: Path) -> None:
    by_question = load_dataset(dataset(qa, order_by=("question", "qid")))
    assert [r.row.id for r in by_question.rows] == ["q1", "q2"]  # "One?" < "Two?"
    descending = load_dataset(dataset(qa, "SELECT * FROM t ORDER BY qid DESC"))
    assert [r.row.id for r in descending.rows] == ["q1", "q2"]


def test_the_statement_wraps_the_query_and_orders_it() -> None:
    query = SqlDataset("SELECT * FROM t;  ", sqlite="x", order_by=("Asked At", "id"))
    quoted = sql.statement(query, lambda name: f'"{name}"')
    assert (
        quoted == 'SELECT * FROM (\nSELECT * FROM t\n) AS ragmetrics_rows ORDER BY "Asked At", "id"'
    )


def test_identity_is_the_statement_and_each_row_s_inputs(qa: Path) -> None:
    loaded = load_dataset(dataset(qa, columns={"gold_json": "gold"}))
    expected = hashlib.sha256(
        b"SELECT * FROM (\nSELECT * FROM t\n) AS ragmetrics_rows ORDER BY qid\0"
        b'{"answerable":false,"gold":"a","id":"q1","question":"One?"}\n'
        b'{"answerable":true,"gold":["b","B"],"id":"q2","question":"Two?"}\n'
    ).hexdigest()
    assert loaded.sha256 == expected


def test_identity_ignores_outputs_and_follows_inputs(tmp_path: Path) -> None:
    create = "CREATE TABLE t (id TEXT, question TEXT, answer TEXT)"
    first = make_db(tmp_path / "a.sqlite", create, [("1", "Q?", "yes")])
    other_answer = make_db(tmp_path / "b.sqlite", create, [("1", "Q?", "no")])
    other_question = make_db(tmp_path / "c.sqlite", create, [("1", "Q2?", "yes")])
    digests = [
        load_dataset(SqlDataset("SELECT * FROM t", sqlite=p.name, label="t").at(tmp_path)).sha256
        for p in (first, other_answer, other_question)
    ]
    assert digests[0] == digests[1] != digests[2]


def test_the_identity_fields_are_the_baseline_s_inputs_with_id_and_system() -> None:
    assert set(sql.IDENTITY_FIELDS) == {"id", "system", *INPUT_FIELDS}


def test_bad_values_are_problems_of_their_row(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "bad.sqlite",
        "CREATE TABLE t (id TEXT, contexts TEXT, latency_ms, blob BLOB)",
        [("a", "not json", "slow", None), (None, None, None, b"\x00")],
    )
    rows = load_dataset(SqlDataset("SELECT * FROM t", sqlite=path.name).at(tmp_path)).rows
    by_id = {r.row.id.split("-")[0]: r.problems for r in rows}
    assert by_id["a"] == (
        Problem(
            "contexts",
            "column 'contexts': cannot read 'not json' as JSON: Expecting value: line 1 column 1 "
            "(char 0)",
        ),
        Problem("latency_ms", "expected a finite number of milliseconds >= 0, got 'slow'"),
    )
    # A NULL id gets a made-up one, as a JSONL row without an id; SQLite sorts NULL first.
    (null_id,) = [r for r in rows if r.row.id.startswith("L1-")]
    assert null_id.problems == (
        Problem("id", "column 'id' is NULL; every row needs its id"),
        Problem(
            "<sql>",
            "column 'blob': a bytes value, which has no JSON form; cast the column to text or "
            "a number in the query",
        ),
    )


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), Decimal("NaN"), [1.0, float("-inf")]]
)
def test_a_number_json_cannot_hold_is_refused(value: Any) -> None:
    """SQLite stores NaN as NULL; PostgreSQL's float8 and numeric hold NaN and infinity."""
    with pytest.raises(sql._NoJson, match="is not a number a dataset may hold"):
        sql._field("latency_ms", value, MAX_DEPTH)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("12"), 12),
        (Decimal("2.5"), 2.5),
        (datetime.date(2026, 11, 25), "2026-11-25"),
        (datetime.datetime(2026, 11, 25, 3, 4, 5), "2026-11-25T03:04:05"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        ({"a": [Decimal("1.5"), None]}, {"a": [1.5, None]}),
        (("x", "y"), ["x", "y"]),  # a PostgreSQL array
    ],
)
def test_values_without_a_json_type_become_json(value: Any, expected: Any) -> None:
    assert sql._field("note", value, MAX_DEPTH) == expected


def test_nesting_deeper_than_a_row_may_is_refused() -> None:
    deep: Any = "x"
    for _ in range(MAX_DEPTH):
        deep = [deep]
    with pytest.raises(sql._NoJson, match="nested deeper than 64 levels"):
        sql._field("telemetry", deep, MAX_DEPTH)
    with pytest.raises(sql._NoJson, match="nested deeper than 64 levels"):
        sql._field("telemetry", json.dumps(deep), MAX_DEPTH)
    sql._field("telemetry", deep[0], MAX_DEPTH)  # 63 levels in a row: 64


def test_the_reader_gives_the_rows_the_loader_gives(qa: Path) -> None:
    source = dataset(qa, columns={"gold_json": "gold"})
    index = scan_dataset(source)
    assert index.ids == ("q1", "q2")
    assert index.sha256 == load_dataset(source).sha256
    reader = DatasetReader(index)
    assert reader.rows([0, 1]) == list(load_dataset(source).rows)
    assert reader.rows([1]) == [load_dataset(source).rows[1]]  # read again from the start


def test_rows_changed_between_reads_fail_the_batch(qa: Path) -> None:
    index = scan_dataset(dataset(qa))
    with sqlite3.connect(qa) as db:
        db.execute("UPDATE t SET question = 'Changed?' WHERE qid = 'q2'")
    sqlite3.connect(qa).close()
    with pytest.raises(DatasetError, match="row 2 is not the row it was"):
        DatasetReader(index).rows([0, 1])


def test_rows_are_fetched_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlalchemy

    path = make_db(tmp_path / "n.sqlite", "CREATE TABLE t (id TEXT)", [(str(i),) for i in range(7)])
    partitions = sqlalchemy.engine.Result.partitions
    sizes: list[int] = []

    def recorded(self: Any, size: int | None = None) -> Iterator[Any]:
        for partition in partitions(self, size):
            sizes.append(len(partition))
            yield partition

    monkeypatch.setattr(sqlalchemy.engine.Result, "partitions", recorded)
    monkeypatch.setattr(sql, "BATCH_ROWS", 3)
    rows = load_dataset(SqlDataset("SELECT * FROM t", sqlite=path.name).at(tmp_path)).rows
    assert [r.row.id for r in rows] == ["0", "1", "2", "3", "4", "5", "6"]
    assert sizes == [3, 3, 1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give url_env= .* or sqlite="),
        ({"url_env": "X", "sqlite": "a.sqlite"}, "one of the two"),
        ({"url_env": "postgresql://u:pw@h/db"}, "NAME of an environment variable"),
        ({"sqlite": "sqlite:///a.sqlite"}, "not a URL"),
        ({"sqlite": "a", "columns": {"a": "gold", "b": "gold"}}, "two columns to field"),
        ({"sqlite": "a", "columns": {"a": "id"}}, "id_column="),
        ({"sqlite": "a", "order_by": ()}, "order_by must name"),
        ({"sqlite": "a", "label": "x" * 61}, "label must be a short name"),
    ],
)
def test_a_wrong_configuration_says_how_to_fix_it(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SqlConfigError, match=message) as raised:
        SqlDataset("SELECT 1", **kwargs)
    assert "pw" not in str(raised.value)


def test_a_missing_sqlite_file_is_an_error_never_a_new_database(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"sql\(none.sqlite, t\): no SQLite file at "):
        load_dataset(SqlDataset("SELECT * FROM t", sqlite="none.sqlite").at(tmp_path))
    assert not (tmp_path / "none.sqlite").exists()


def test_a_sqlite_file_is_opened_read_only(qa: Path) -> None:
    import sqlalchemy

    engine = sql._sqlite_engine(sqlalchemy, qa)
    with engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("SELECT count(*) FROM t")).scalar() == 2
        with pytest.raises(sqlalchemy.exc.OperationalError, match="readonly database"):
            connection.execute(sqlalchemy.text("DELETE FROM t"))
    engine.dispose()


def test_the_variable_s_url_is_read_and_a_relative_sqlite_path_is_the_eval_s(
    qa: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QA_DB", f"sqlite:///{qa.name}")
    monkeypatch.chdir("/")
    source = SqlDataset("SELECT * FROM t", url_env="QA_DB", id_column="qid").at(qa.parent)
    loaded = load_dataset(source)
    assert loaded.display == "sql($QA_DB, t)"
    assert [r.row.id for r in loaded.rows] == ["q1", "q2"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, r"sql\(\$QA_DB, t\): the environment variable QA_DB is not set"),
        ("  ", "the environment variable QA_DB is not set"),
        ("not a url s3cr3t-pw", r"\$QA_DB does not hold a SQLAlchemy URL"),
        ("nosuchdb://u:s3cr3t-pw@h/d", "the database driver of \\$QA_DB's URL is not installed"),
        (
            "postgresql+psycopg://u:s3cr3t-pw@127.0.0.1:1/d?connect_timeout=5",
            "cannot connect to the database: .*check the URL",
        ),
    ],
)
def test_a_url_that_does_not_work_is_never_shown(
    value: str | None, message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if value is None:
        monkeypatch.delenv("QA_DB", raising=False)
    else:
        monkeypatch.setenv("QA_DB", value)
    with pytest.raises(DatasetError, match=message) as raised:
        load_dataset(SqlDataset("SELECT * FROM t", url_env="QA_DB").at(tmp_path))
    assert "s3cr3t" not in str(raised.value)


def test_the_password_is_redacted_wherever_the_driver_repeats_it() -> None:
    secrets = sql._Secrets("postgresql://u:pw-123@h/d", "pw-123")
    assert (
        secrets.redacted("failed for postgresql://u:pw-123@h/d (pw-123)") == "failed for *** (***)"
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT question FROM t", "the query failed: no such column: qid"),
    ],
)
def test_a_query_whose_columns_do_not_fit_fails_the_dataset(
    qa: Path, query: str, message: str
) -> None:
    with pytest.raises(DatasetError, match=message):
        load_dataset(dataset(qa, query))


def test_a_column_given_twice_fails_the_dataset() -> None:
    """SQLite renames a repeated column of a subquery (``qid:1``); PostgreSQL refuses to
    order by an ambiguous one; a database that gives both is refused here."""
    with pytest.raises(DatasetError, match="gives column\\(s\\) 'qid' more than once"):
        sql._fields(["qid", "qid"], SqlDataset("SELECT 1", sqlite="a", id_column="qid"), "src")


@pytest.mark.parametrize(
    ("query", "repeated", "first"),
    [
        # The join's two answers: SQLite names the second 'answer:1' in the wrapping SELECT.
        (
            "SELECT a.qid, a.question, a.note AS answer, b.question AS answer "
            "FROM t AS a JOIN t AS b ON a.qid = b.qid",
            "'answer'",
            "answer",
        ),
        # a.* and b.*: the id and every other column twice, a column three times.
        (
            "SELECT a.*, b.*, a.note FROM t AS a JOIN t AS b ON a.qid = b.qid",
            "'answerable', 'contexts', 'gold_json', 'latency_ms', 'note', 'qid', 'question'",
            "answerable",
        ),
    ],
)
def test_a_column_name_sqlite_gives_twice_fails_the_dataset(
    qa: Path, query: str, repeated: str, first: str
) -> None:
    """SQLite renames a repeated column of the subquery the plugin wraps the query in
    ('answer:1'), so the first column of the name would be scored and the other read as a
    field no metric knows: the dataset is refused, naming the column and how to alias it."""
    with pytest.raises(DatasetError) as raised:
        load_dataset(dataset(qa, query))
    assert str(raised.value) == (
        f"sql(qa.sqlite, t): the query gives column(s) {repeated} more than once; give each "
        f"column its own name with AS (SELECT a.{first}, b.{first} AS other_{first} ...) and "
        "map it to a field with columns= if it holds one"
    )


def test_a_mapped_column_the_query_lacks_or_a_field_given_twice(qa: Path) -> None:
    with pytest.raises(DatasetError, match="gives no column\\(s\\) 'gold_text'"):
        load_dataset(dataset(qa, columns={"gold_text": "gold"}))
    with pytest.raises(DatasetError, match="two columns give field\\(s\\) 'question'"):
        load_dataset(dataset(qa, columns={"note": "question"}))


def test_a_proxy_label_is_the_one_relevant_doc_and_null_leaves_the_row_unjudged(
    tmp_path: Path,
) -> None:
    path = make_db(
        tmp_path / "ru.sqlite",
        "CREATE TABLE t (id TEXT, url TEXT)",
        [("a", "https://wiki/x"), ("b", None)],
    )
    source = SqlDataset("SELECT * FROM t", sqlite=path.name, proxy_relevant="url")
    rows = [loaded.row for loaded in load_dataset(source.at(tmp_path)).rows]
    assert [dict(row.data) for row in rows] == [
        {"id": "a", "relevant": ["https://wiki/x"]},
        {"id": "b"},
    ]
    assert [(row.proxy, row.unjudged) for row in rows] == [("url", False), ("url", True)]
    plain = load_dataset(SqlDataset("SELECT * FROM t", sqlite=path.name).at(tmp_path)).rows
    assert not any(loaded.row.unjudged for loaded in plain)


def test_a_proxy_column_mapped_twice_is_refused() -> None:
    with pytest.raises(SqlConfigError, match="mapped by columns= too"):
        SqlDataset("SELECT 1", sqlite="a", proxy_relevant="url", columns={"url": "relevant"})
