"""Build the SQLite databases the SQL example evals read, from bundled JSONL files:
evals/data/answers.sqlite (evals/test_answers_sql.py) from answers.jsonl, the same rows
as a production system might log them in a table, and evals/data/real_users.sqlite
(evals/test_real_users.py) from real_users.jsonl, logged user questions with the URL of
the page shown to the user (NULL where none was) and the pages retrieved.

Run from anywhere: ``python evals/data/build_sqlite.py``. The file is checked in, so
``pytest evals/`` needs no build step; run this again after changing either JSONL file
(tests/integration/test_sql_example.py fails until they agree).

The table ``qa_log`` has one column per field: the id as ``qid``, the gold answers as
JSON text in ``gold_json`` (the eval maps it back to ``gold``), contexts and token calls
as JSON text (SQLite has no JSON type), ``answerable`` as 0/1 (nor a boolean one). The
table ``question_answer`` holds ``id``, ``question``, ``confluence_url`` and the
retrieved pages' URLs as JSON text in ``retrieved_urls``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ANSWERS = (
    ("qid", "TEXT PRIMARY KEY", "id"),
    ("question", "TEXT NOT NULL", "question"),
    ("answer", "TEXT", "answer"),
    ("gold_json", "TEXT", "gold"),
    ("contexts", "TEXT", "contexts"),
    ("answerable", "INTEGER", "answerable"),
    ("tokens", "TEXT", "tokens"),
    ("latency_ms", "REAL", "latency_ms"),
    ("system", "TEXT", "system"),
)


def cell(value: Any) -> Any:
    """A field's value as SQLite stores it: lists and objects as JSON text, booleans as
    0/1, NULL for an absent field."""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return int(value)
    return value


REAL_USERS = (
    ("id", "TEXT PRIMARY KEY", "id"),
    ("question", "TEXT NOT NULL", "question"),
    ("confluence_url", "TEXT", "confluence_url"),
    ("retrieved_urls", "TEXT", "retrieved"),
)
TABLES = {"answers": ("qa_log", ANSWERS), "real_users": ("question_answer", REAL_USERS)}
Column = tuple[str, str, str]


def build(
    jsonl: Path, database: Path, table: str = "qa_log", columns: tuple[Column, ...] = ANSWERS
) -> int:
    """Write ``database`` afresh from ``jsonl``, as ``table`` of ``columns`` (name, type,
    field); the number of rows written."""
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line]
    known = {field for _, _, field in columns}
    for row in rows:
        unknown = sorted(set(row) - known)
        if unknown:
            raise SystemExit(
                f"{jsonl}: row {row.get('id')!r} has field(s) {unknown} no column holds"
            )
    database.unlink(missing_ok=True)
    connection = sqlite3.connect(database)
    try:
        with connection:
            definitions = ", ".join(f"{name} {kind}" for name, kind, _ in columns)
            connection.execute(f"CREATE TABLE {table} ({definitions})")
            marks = ", ".join("?" for _ in columns)
            connection.executemany(
                f"INSERT INTO {table} VALUES ({marks})",
                [tuple(cell(row.get(field)) for _, _, field in columns) for row in rows],
            )
        connection.execute("VACUUM")
    finally:
        connection.close()
    return len(rows)


def main() -> None:
    for name, (table, columns) in TABLES.items():
        source, target = HERE / f"{name}.jsonl", HERE / f"{name}.sqlite"
        count = build(source, target, table, columns)
        print(f"{target}: {count} rows from {source.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
