"""Build evals/data/answers.sqlite, the SQLite database evals/test_answers_sql.py reads,
from the bundled evals/data/answers.jsonl: the same rows, as a production system might
log them in a table.

Run from anywhere: ``python evals/data/build_sqlite.py``. The file is checked in, so
``pytest evals/`` needs no build step; run this again after changing answers.jsonl
(tests/integration/test_sql_example.py fails until the two agree).

The table ``qa_log`` has one column per field: the id as ``qid``, the gold answers as
JSON text in ``gold_json`` (the eval maps it back to ``gold``), contexts and token calls
as JSON text (SQLite has no JSON type), ``answerable`` as 0/1 (nor a boolean one).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
COLUMNS = (
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


def build(jsonl: Path, database: Path) -> int:
    """Write ``database`` afresh from ``jsonl``; the number of rows written."""
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line]
    known = {field for _, _, field in COLUMNS}
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
            definitions = ", ".join(f"{name} {kind}" for name, kind, _ in COLUMNS)
            connection.execute(f"CREATE TABLE qa_log ({definitions})")
            marks = ", ".join("?" for _ in COLUMNS)
            connection.executemany(
                f"INSERT INTO qa_log VALUES ({marks})",
                [tuple(cell(row.get(field)) for _, _, field in COLUMNS) for row in rows],
            )
        connection.execute("VACUUM")
    finally:
        connection.close()
    return len(rows)


def main() -> None:
    source, target = HERE / "answers.jsonl", HERE / "answers.sqlite"
    count = build(source, target)
    print(f"{target}: {count} rows from {source.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
