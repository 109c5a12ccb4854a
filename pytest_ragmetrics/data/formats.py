r"""Reading a dataset into records, format by format: JSONL (plain, gzip or Zstandard), CSV,
Parquet and a SQL query, each record a line or row number, its text, its data and the
problems that kept it from being read.

Every format is read from an iterator that takes the file a chunk at a time
(``data.streams``; Parquet a batch of rows at a time, ``data.parquet``; a query a batch
of rows, ``data.sql``), and a record is made only when asked for, so that a reader after
later rows skips earlier ones cheaply. A compressed JSONL file's line numbers and byte
offsets are those of its decompressed text. CSV is the exception: it is read whole, as
lines, since reading resumes after a malformed record on the line after the one it
started on.

What makes a record unreadable (a problem of its row, never an exception):

* a line (JSONL) or record (CSV) holding a byte that is not UTF-8: only that one;
* not valid JSON, or not a JSON object (JSONL); a malformed CSV record;
* lists and objects nested deeper than ``MAX_DEPTH`` levels (the row itself is one), so
  that nothing later recurses too deep walking a row;
* a number no float holds (NaN and Infinity are refused).

``\r\n``, ``\n`` and ``\r`` end lines, and nothing else does (U+2028 may stand in a
JSON string). CSV is read strictly: a malformed record (a quote left open, text after a
closing quote) is a bad row of the line it starts on, and reading resumes on the next line.
One stray quote cannot be told from a cell with line breaks: when a later quote closes it
at the end of a field, the lines between make one record, which is a bad row only if its
cell count is wrong. Cells of any size are read. A file that cannot be read as a whole
raises ``DatasetError`` (``data.dataset``'s docstring lists when).
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_ragmetrics.data.fields import VALIDATORS, kind_of, shown
from pytest_ragmetrics.data.streams import (
    DatasetError,
    Digest,
    Line,
    Problem,
    decompressed,
    lines,
    raw_chunks,
)
from pytest_ragmetrics.files import loads_finite

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing's own from Python 3.13

    from pytest_ragmetrics.data.sql import SqlDataset

FORMATS = ("jsonl", "csv", "parquet", "jsonl.gz", "jsonl.zst")
# Where a dataset is: a file, or a SQL query (``data.sql``), whose format is "sql".
Location: TypeAlias = "Path | SqlDataset"
MAX_DEPTH = 64  # levels of nested lists and objects in a row, the row itself included
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".jsonl.gz": "jsonl.gz",
    ".ndjson.gz": "jsonl.gz",
    ".jsonl.zst": "jsonl.zst",
    ".ndjson.zst": "jsonl.zst",
}


# Not frozen: two are made for every row of a bulk eval (its scan, its batch's read) and
# thrown away at once; a frozen dataclass's ``__init__`` costs about five times as much.
# Nothing changes a record once made.
@dataclass(slots=True)
class Record:
    line: int
    text: str
    data: dict[str, Any] | None
    problems: tuple[Problem, ...]
    offset: int = 0  # of a JSONL line in the (decompressed) text


_NOT_A_NUMBER = "is not a valid number here (no NaN or Infinity)"


def _too_deep(value: Any, text: str, limit: int) -> bool:
    """Whether ``value``, parsed from the JSON ``text``, nests lists and objects more than
    ``limit`` levels deep (``value`` itself is level 1); walked level by level, without
    recursion, and only when ``text`` opens enough brackets to be that deep."""
    if text.count("[") + text.count("{") <= limit:
        return False
    level = [value] if _nests(value) else []
    for _ in range(limit):
        if not level:
            return False
        level = [child for item in level for child in _children(item) if _nests(child)]
    return bool(level)


def _nests(value: Any) -> bool:
    return isinstance(value, dict | list)


def _children(value: dict[Any, Any] | list[Any]) -> Iterable[Any]:
    return value.values() if isinstance(value, dict) else value


_TOO_DEEP = (
    f"lists and objects nested deeper than {MAX_DEPTH} levels (the row itself is one); "
    "flatten the row"
)


def _jsonl_lines(lines: Iterable[Line]) -> Iterator[Line]:
    """The lines that hold a row: every line that is not blank."""
    return (line for line in lines if line.text.strip())


def _jsonl_record(line: Line) -> Record:
    """One JSONL line parsed; what makes it unreadable is the record's ``<json>`` (or
    ``<utf-8>``) problem."""
    text = line.text.rstrip("\r\n")
    if line.bad_byte is not None:
        return Record(line.number, text, None, (line.not_utf8(),), line.offset)
    try:
        data = loads_finite(text, refusal=_NOT_A_NUMBER)
    except RecursionError:
        data, problem = None, Problem("<json>", _TOO_DEEP)
    except ValueError as error:
        data, problem = None, Problem("<json>", f"not valid JSON: {error}")
    else:
        if not isinstance(data, dict):
            problem = Problem("<json>", f"expected a JSON object per line, got {kind_of(data)}")
        elif _too_deep(data, text, MAX_DEPTH):
            problem = Problem("<json>", _TOO_DEEP)
        else:
            return Record(line.number, text, data, (), line.offset)
    return Record(line.number, text, None, (problem,), line.offset)


_CSV_JSON_FIELDS = frozenset(
    {"contexts", "relevant", "telemetry", "repeats", "retrieved", "retrieved_repeats"}
)
_CSV_TEXT_FIELDS = frozenset({"id", "question", "answer", "system", "model", "session_id"})
_CSV_BOOL = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


def _csv_json(cell: str) -> Any:
    """A cell's JSON value, at most ``MAX_DEPTH - 1`` levels deep (the row is one more)."""
    try:
        value = loads_finite(cell, refusal=_NOT_A_NUMBER)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    if _too_deep(value, cell, MAX_DEPTH - 1):
        raise ValueError(_TOO_DEEP)
    return value


def _csv_value(field: str, cell: str) -> Any:
    """Convert one CSV cell to the field's type; JSON text for lists and objects.

    Text fields and unknown fields stay text, so an answer may start with "[1]".
    """
    if field in _CSV_TEXT_FIELDS or (field not in VALIDATORS and field != "id"):
        return cell
    if field in _CSV_JSON_FIELDS or cell.lstrip()[:1] in ("[", "{"):
        return _csv_json(cell)
    if field in ("answerable", "show", "show_gold"):
        if cell.strip().lower() not in _CSV_BOOL:
            raise ValueError(f"expected true/false, got {shown(cell)}")
        return _CSV_BOOL[cell.strip().lower()]
    if field in ("tokens", "turn"):
        return int(cell)
    if field == "latency_ms":
        number = float(cell)
        if not math.isfinite(number):
            raise ValueError(f"{shown(cell)} is not a finite number")
        return number
    return cell


class _LineCursor:
    """The lines ``csv.reader`` reads, with a position that can move back: after a
    malformed record, reading resumes on the line after the one it started on."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.position = 0

    def __iter__(self) -> _LineCursor:
        return self

    def __next__(self) -> str:
        if self.position >= len(self.lines):
            raise StopIteration
        self.position += 1
        return self.lines[self.position - 1].text


def _csv_records(lines: list[Line], source: str) -> list[Record]:
    """Every record of a CSV file; cells of any size are read (long contexts are
    legitimate), and the process-wide ``csv.field_size_limit`` is restored afterwards."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, sum(len(line.text) for line in lines) + 1))
    try:
        return list(_csv_parse(lines, source))
    finally:
        csv.field_size_limit(limit)


def _csv_header(cursor: _LineCursor, reader: Iterator[list[str]], source: str) -> list[str]:
    """The column names: the first record that is not blank."""
    header: list[str] | None = []
    while header is not None and not any(cell.strip() for cell in header):
        start = cursor.position
        try:
            header = next(reader, None)
        except csv.Error as error:
            line = cursor.lines[start].number
            raise DatasetError(
                f"{source}:{line}: the header row is not valid CSV ({error}); check its quotes"
            ) from None
        for line_read in cursor.lines[start : cursor.position]:
            if line_read.bad_byte is not None:
                problem = line_read.not_utf8().message
                raise DatasetError(f"{source}:{line_read.number}: the header row is {problem}")
    names = [name.strip() for name in header or ()]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DatasetError(
            f"{source}: the header names column(s) {', '.join(map(repr, twice))} more than "
            "once; give every column its own name"
        )
    return names


def _csv_parse(lines: list[Line], source: str) -> Iterator[Record]:
    """Records read strictly: a malformed one (a quote left open, text after a closing
    quote) is a problem of the line it starts on, and reading resumes on the next line."""
    cursor = _LineCursor(lines)
    reader = csv.reader(cursor, strict=True)
    header = _csv_header(cursor, reader, source)
    if not header:
        return
    while True:
        start = cursor.position
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            cursor.position = start + 1
            first = lines[start]
            problem = Problem("<csv>", f"not valid CSV: {error}; check the quotes of this record")
            yield Record(first.number, first.text.rstrip("\r\n"), None, (problem,))
            continue
        spanned = lines[start : cursor.position]
        if not any(cell.strip() for cell in cells):
            continue
        yield _csv_record(header, cells, spanned)


def _csv_record(header: list[str], cells: list[str], spanned: list[Line]) -> Record:
    first = spanned[0]
    raw = ",".join(cells)
    bad = next((line for line in spanned if line.bad_byte is not None), None)
    if bad is not None:
        return Record(first.number, raw, None, (bad.not_utf8(),))
    if len(cells) != len(header):
        message = f"{len(cells)} cells for {len(header)} columns"
        if len(spanned) > 1:
            message += (
                f" in the record of lines {first.number}-{spanned[-1].number}; check its quotes"
            )
        return Record(first.number, raw, None, (Problem("<csv>", message),))
    data: dict[str, Any] = {}
    problems = []
    for name, cell in zip(header, cells, strict=True):
        if cell == "" and name != "answer":
            continue  # an empty cell is an absent field; an empty answer is an answer
        try:
            data[name] = _csv_value(name, cell)
        except ValueError as error:
            problems.append(Problem(name, f"cannot parse {shown(cell)}: {error}"))
    return Record(first.number, raw, data, tuple(problems))


def is_sql(path: Location) -> TypeIs[SqlDataset]:
    """Whether a dataset's location is a SQL query. A ``SqlDataset`` can exist only once
    ``data.sql`` (and with it SQLAlchemy's name checks) was imported by whoever made it, so
    a run without one never imports the SQL layer."""
    sql = sys.modules.get("pytest_ragmetrics.data.sql")
    return sql is not None and isinstance(path, sql.SqlDataset)


def proxy_of(path: Location) -> str | None:
    return path.proxy_relevant if is_sql(path) else None


def display_of(path: Location) -> str:
    return path.display if is_sql(path) else str(path)


def dataset_format(path: Location, declared: str | None = None, display: str | None = None) -> str:
    """The format of ``path``: "sql" for a query, else ``declared`` if given, else from the
    file extension, the last two suffixes first (``.jsonl.gz``), then the last one."""
    if is_sql(path):
        return "sql"
    suffixes = [suffix.lower() for suffix in path.suffixes]
    fmt = (
        declared or _EXTENSIONS.get("".join(suffixes[-2:])) or _EXTENSIONS.get(path.suffix.lower())
    )
    if fmt not in FORMATS:
        raise DatasetError(
            f"{display or path}: cannot tell the dataset format; use a .jsonl or .csv file "
            "(or .parquet, .jsonl.gz, .jsonl.zst) or pass format= one of "
            f"{', '.join(FORMATS)} to the ragmetrics marker"
        )
    return fmt


def _parquet_records(path: Path, source: str, group: int = 0) -> Iterator[Record]:
    """A Parquet file's rows as records, from row group ``group`` on; the record's text,
    which a made-up id hashes, is the row as JSON, keys in column order."""
    from pytest_ragmetrics.data.parquet import parquet_rows  # a Parquet dataset only

    for row in parquet_rows(path, source, MAX_DEPTH, group):
        yield Record(row.number, json.dumps(row.data), row.data, row.problems)


def _sql_records(dataset: SqlDataset, source: str, digest: Digest | None) -> Iterator[Record]:
    """A SQL query's rows as records; a row's number is its position in the ordered
    result, and its text, which a made-up id hashes, is the row as JSON."""
    from pytest_ragmetrics.data.sql import sql_rows  # SQLAlchemy: a SQL dataset only

    for row in sql_rows(dataset, source, MAX_DEPTH, digest):
        yield Record(row.number, row.text, row.data, row.problems)


def _ready(record: Record) -> Callable[[], Record]:
    return lambda: record


@dataclass(frozen=True)
class Resume:
    """A place to start reading a file other than its start: the position of a row, its
    line (its row's number in Parquet), and ``at``, the byte offset of that line (plain
    JSONL) or the row group it starts (Parquet)."""

    position: int
    line: int
    at: int


START = Resume(0, 1, 0)


def read_records(
    path: Location, kind: str, source: str, digest: Digest | None, resume: Resume = START
) -> Generator[Callable[[], Record], None, None]:
    """The records of ``path`` in file order, from ``resume`` on, read a chunk (a batch
    of Parquet rows) at a time, the file's bytes fed to ``digest`` (if any) as they are
    read. Each is handed on as a function that makes it: a JSONL line is parsed only when
    its record is made, so that a reader after later rows skips earlier ones cheaply.
    Only plain JSONL and Parquet resume anywhere but at the start.

    CSV alone is read whole (as lines): after a malformed record, reading resumes on the
    line after the one it started on, which may lie any number of lines back. A SQL
    query is read from its first row, a batch at a time."""
    if is_sql(path):
        yield from map(_ready, _sql_records(path, source, digest))
        return
    if kind == "parquet":
        if digest is not None:
            for _ in raw_chunks(path, source, digest):
                pass  # the digest is of the file's bytes; pyarrow reads the file itself
        yield from map(_ready, _parquet_records(path, source, resume.at))
        return
    chunks = raw_chunks(path, source, digest, resume.at)
    base, _, compression = kind.partition(".")
    text = lines(
        decompressed(chunks, compression, source) if compression else chunks,
        source,
        resume.line,
        resume.at,
    )
    if base == "csv":
        yield from map(_ready, _csv_records(list(text), source))
    else:
        yield from (partial(_jsonl_record, line) for line in _jsonl_lines(text))


def unit_of(kind: str) -> str:
    return "row" if kind in ("parquet", "sql") else "line"
