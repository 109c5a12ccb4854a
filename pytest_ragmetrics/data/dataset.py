r"""Datasets of evaluated rows: JSONL (plain, gzip or Zstandard), CSV and Parquet, validated
up front, with stable ids.

Loading never raises for bad *rows*: a malformed line or a field of the wrong type becomes
a ``LoadedRow`` with problems, each naming the file, line and field, so that the row
becomes a test that errors while every other row still runs. Only a *file* that cannot be
read as a whole raises ``DatasetError``: missing or unreadable, an unknown format, UTF-16
text, a CSV header row that is malformed, not UTF-8 or names a column twice, compressed
data that is damaged or truncated, a Parquet file pyarrow cannot read (or pyarrow, or
zstandard, not installed).

Every format yields records (line or row number, text, data, problems) from an iterator
that reads the file a chunk at a time (``data.streams``; Parquet a batch of rows at a time,
``data.parquet``), and every record goes through the same checks below. ``load_dataset``
keeps every row; ``scan_dataset`` keeps only each row's id, line and system (a
``DatasetIndex``), and a ``DatasetReader`` reads rows again a batch at a time, each
exactly as ``load_dataset`` gives it, for bulk evals, so that no process holds a JSONL or
Parquet dataset whole. A compressed
JSONL file's line numbers and byte offsets are those of its decompressed text. CSV is the
exception: it is read whole, as lines, since reading resumes after a malformed record on
the line after the one it started on. ``Dataset.sha256`` is of the file's bytes as stored
(compressed, for a compressed file).

What makes a row bad, besides a field of the wrong type:

* a line (JSONL) or record (CSV) holding a byte that is not UTF-8: only that one;
* lists and objects nested deeper than ``MAX_DEPTH`` levels (the row itself is one), so
  that nothing later recurses too deep walking a row;
* a string anywhere in the row, keys included, holding a lone surrogate (a ``\u``
  escape of half a character), which no UTF-8 report can hold; the row keeps it as escape
  text, and an id holding one is replaced;
* a number no float holds (a finite number must be one), a count or integer field
  beyond ``EXACT_INT`` (aggregates are floats).

``\r\n``, ``\n`` and ``\r`` end lines, and nothing else does (U+2028 may stand in a
JSON string). CSV is read strictly: a malformed record (a quote left open, text after a
closing quote) is a bad row of the line it starts on, and reading resumes on the next line.
One stray quote cannot be told from a cell with line breaks: when a later quote closes it
at the end of a field, the lines between make one record, which is a bad row only if its
cell count is wrong. Cells of any size are read.

Rows keep file order. A row's id is its ``id`` field; without one it is ``L<line>-<hash>``,
the line number and a short hash of the line's content. Ids are unique per ``system``: a
dataset of several systems (docs/metrics.md#3-comparing-systems) holds one row per (system,
id), and once any row names its system, every row must. A later row with an id already taken
becomes ``<id>@L<line>``; made-up ids never take an id that any row gives itself (``~2`` is
added when one would).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

# DatasetError and Problem live with the file reading that raises and reports them, and
# are this module's too: every user of the loader imports them from here.
from pytest_ragmetrics.data.sql import SqlDataset
from pytest_ragmetrics.data.streams import DatasetError as DatasetError
from pytest_ragmetrics.data.streams import Digest, Line, decompressed, lines, raw_chunks
from pytest_ragmetrics.data.streams import Problem as Problem
from pytest_ragmetrics.files import loads_finite

FORMATS = ("jsonl", "csv", "parquet", "jsonl.gz", "jsonl.zst")
# Where a dataset is: a file, or a SQL query (``data.sql``), whose format is "sql".
Location = Path | SqlDataset
MAX_DEPTH = 64  # levels of nested lists and objects in a row, the row itself included
EXACT_INT = 2**53  # the largest count or integer a float (an aggregate) holds exactly
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


class RowError(Exception):
    """A row lacks, or has a malformed, field that a metric needs."""


@dataclass(frozen=True, slots=True)
class Row:
    """One evaluated question, as loaded and validated from the dataset.

    Fields of docs/datasets.md#fields are attributes (``row.answer``, ``row.gold``, ...), ``None``
    when absent; ``row["any_field"]`` reads any field, known or not. Every row test's item
    holds its row to the end of the run, hence the slots.
    """

    id: str
    source: str
    line: int
    index: int
    data: Mapping[str, Any]
    # A row of a SQL query has no line: it is named by its id.
    keyed: bool = False
    # The column of a proxy relevance label (``SqlDataset.proxy_relevant``): a row
    # without ``relevant`` cannot be judged, and is counted as unjudged.
    proxy: str | None = None

    @property
    def unjudged(self) -> bool:
        """Whether the row's proxy relevance label is missing (NULL)."""
        return self.proxy is not None and "relevant" not in self.data

    def __repr__(self) -> str:
        return f"<Row {self.id!r} at {self.where()}>"

    def __getitem__(self, field: str) -> Any:
        return self.data[field]

    def get(self, field: str, default: Any = None) -> Any:
        return self.data.get(field, default)

    def where(self, field: str | None = None) -> str:
        """``file:line`` of this row (``source: row 'id'`` for a row of a SQL query), with
        the field when given, for error messages."""
        place = f"{self.source}: row {self.id!r}" if self.keyed else f"{self.source}:{self.line}"
        return f"{place}: field {field!r}" if field else place

    def require(self, field: str, metric: str) -> Any:
        """The field's value, or ``RowError`` naming file, line and field."""
        if field not in self.data:
            raise RowError(f"{self.where(field)}: required by {metric} but missing")
        return self.data[field]

    @property
    def question(self) -> str | None:
        return self.data.get("question")

    @property
    def answer(self) -> str | None:
        return self.data.get("answer")

    @property
    def gold(self) -> Any:
        return self.data.get("gold")

    @property
    def contexts(self) -> list[dict[str, Any]] | None:
        return self.data.get("contexts")

    @property
    def context_ids(self) -> list[str]:
        return [str(c["doc_id"]) for c in self.data.get("contexts") or ()]

    @property
    def telemetry(self) -> dict[str, Any] | None:
        return self.data.get("telemetry")

    @property
    def system(self) -> str | None:
        """The row's system; ``None`` when it names none or a value that is no string
        (a problem of the row)."""
        system = self.data.get("system")
        return system if isinstance(system, str) else None

    @property
    def answerable(self) -> bool | None:
        return self.data.get("answerable")


@dataclass(frozen=True, slots=True)
class LoadedRow:
    """A row as loaded: the row itself plus whatever is wrong with it."""

    row: Row
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: every row in file order, valid or not, and the file's hash (a
    SQL dataset's: of its statement and rows' inputs, ``data.sql``)."""

    path: Location
    display: str
    sha256: str
    rows: tuple[LoadedRow, ...]

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems the rows name, in order of first appearance; ``()`` when none does."""
        found = (loaded.row.system for loaded in self.rows)
        return tuple(dict.fromkeys(s for s in found if isinstance(s, str)))

    def __len__(self) -> int:
        return len(self.rows)

    def row_keys(self) -> Iterator[tuple[str | None, str]]:
        """Each row's (system, id), in file order."""
        return ((loaded.row.system, loaded.row.id) for loaded in self.rows)


# -- field validation -----------------------------------------------------------------

Validator = Callable[[Any], str | None]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for any float
        return False


def _is_exact_int(value: Any) -> bool:
    return _is_int(value) and -EXACT_INT <= value <= EXACT_INT


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut short when long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"


def _str(value: Any) -> str | None:
    return None if isinstance(value, str) else f"expected a string, got {_kind(value)}"


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {_kind(value)}"


def _str_list(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return f"expected a list of strings, got {_kind(value)}"


def _ranked_lists(value: Any) -> str | None:
    if isinstance(value, list) and all(_str_list(v) is None for v in value):
        return None
    return f"expected a list of ranked doc-id lists, got {_kind(value)}"


def _count(value: Any) -> str | None:
    if _is_exact_int(value) and value >= 0:
        return None
    return f"expected a count >= 0 and at most 2**53 (aggregates are floats), got {_shown(value)}"


def _gold(value: Any) -> str | None:
    if isinstance(value, str) or (_str_list(value) is None and value):
        return None
    if isinstance(value, list) and value and all(_str_list(g) is None and g for g in value):
        return None  # answer groups, each a list of aliases (ASQA, Trust-Score)
    return (
        "expected a string, a non-empty list of strings, or a non-empty list of "
        f"non-empty alias lists, got {_shown(value)}"
    )


def _contexts(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of {{doc_id, text}} objects, got {_kind(value)}"
    for i, ctx in enumerate(value):
        if not isinstance(ctx, dict):
            return f"item {i}: expected an object, got {_kind(ctx)}"
        for key in ("doc_id", "text"):
            if not isinstance(ctx.get(key), str):
                return f"item {i}: {key!r} must be a string, got {_kind(ctx.get(key))}"
        for key in ("title", "domain", "url"):
            if key in ctx and not isinstance(ctx[key], str):
                return f"item {i}: {key!r} must be a string, got {_kind(ctx[key])}"
        if "rank" in ctx and not _is_exact_int(ctx["rank"]):
            return f"item {i}: 'rank' must be an integer within ±2**53, got {_shown(ctx['rank'])}"
        if "score" in ctx and not _is_number(ctx["score"]):
            return f"item {i}: 'score' must be a finite number, got {_not_a_float(ctx['score'])}"
    return None


def _relevant(value: Any) -> str | None:
    if _str_list(value) is None:
        return None
    expected = "expected a list of doc ids or a {doc_id: grade} object"
    if not isinstance(value, dict):
        return f"{expected}, got {_shown(value)}"
    for doc_id, grade in value.items():
        if not _is_number(grade):
            grade_of = f"the grade of {_shown(doc_id)}"
            return f"{expected}: {grade_of} must be a finite number, got {_not_a_float(grade)}"
    return None


def _tokens(value: Any) -> str | None:
    if _is_int(value):
        return _count(value)
    if isinstance(value, dict):
        if set(value) != {"prompt", "completion"}:
            return (
                "an object must have exactly 'prompt' and 'completion', "
                f"got {_shown(sorted(value))}"
            )
        return _count(value["prompt"]) or _count(value["completion"])
    if isinstance(value, list):
        for i, call in enumerate(value):
            if not isinstance(call, dict):
                return f"call {i}: expected an object, got {_kind(call)}"
            for key in ("prompt_tokens", "completion_tokens"):
                if key not in call:
                    return f"call {i}: {key!r} is missing"
                problem = _count(call[key])
                if problem:
                    return f"call {i}: {key!r}: {problem}"
            if "stage" in call and not isinstance(call["stage"], str):
                return f"call {i}: 'stage' must be a string, got {_kind(call['stage'])}"
        return None
    return f"expected an int, {{prompt, completion}} or a list of calls, got {_kind(value)}"


def _not_a_float(value: Any) -> str:
    """Why a number is refused: an integer too large for any float says so."""
    if _is_int(value) and not _is_number(value):
        return f"an integer of {len(str(abs(value)))} digits, too large for a float"
    return _shown(value)


def _latency(value: Any) -> str | None:
    if _is_number(value) and value >= 0:
        return None
    return f"expected a finite number of milliseconds >= 0, got {_not_a_float(value)}"


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else f"expected an object, got {_kind(value)}"


def _int(value: Any) -> str | None:
    if _is_exact_int(value):
        return None
    return f"expected an integer within ±2**53 (aggregates are floats), got {_shown(value)}"


VALIDATORS: dict[str, Validator] = {
    "question": _str,
    "answer": _str,
    "gold": _gold,
    "contexts": _contexts,
    "retrieved": _str_list,
    "relevant": _relevant,
    "answerable": _bool,
    "tokens": _tokens,
    "latency_ms": _latency,
    "system": _str,
    "telemetry": _object,
    "repeats": _str_list,
    "retrieved_repeats": _ranked_lists,
    "session_id": _str,
    "turn": _int,
    "show": _bool,
    "show_gold": _bool,
}


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_fields(data: Mapping[str, Any]) -> list[Problem]:
    """Problems with the known fields of ``data``; unknown fields are kept unchecked."""
    problems = []
    for name, validator in VALIDATORS.items():
        if name in data:
            message = validator(data[name])
            if message:
                problems.append(Problem(name, message))
    return problems


# -- reading files --------------------------------------------------------------------


@dataclass(frozen=True)
class _Record:
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


def _jsonl_record(line: Line) -> _Record:
    """One JSONL line parsed; what makes it unreadable is the record's ``<json>`` (or
    ``<utf-8>``) problem."""
    text = line.text.rstrip("\r\n")
    if line.bad_byte is not None:
        return _Record(line.number, text, None, (line.not_utf8(),), line.offset)
    try:
        data = loads_finite(text, refusal=_NOT_A_NUMBER)
    except RecursionError:
        data, problem = None, Problem("<json>", _TOO_DEEP)
    except ValueError as error:
        data, problem = None, Problem("<json>", f"not valid JSON: {error}")
    else:
        if not isinstance(data, dict):
            problem = Problem("<json>", f"expected a JSON object per line, got {_kind(data)}")
        elif _too_deep(data, text, MAX_DEPTH):
            problem = Problem("<json>", _TOO_DEEP)
        else:
            return _Record(line.number, text, data, (), line.offset)
    return _Record(line.number, text, None, (problem,), line.offset)


_CSV_JSON_FIELDS = frozenset(
    {"contexts", "relevant", "telemetry", "repeats", "retrieved", "retrieved_repeats"}
)
_CSV_TEXT_FIELDS = frozenset({"id", "question", "answer", "system", "session_id"})
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
            raise ValueError(f"expected true/false, got {_shown(cell)}")
        return _CSV_BOOL[cell.strip().lower()]
    if field in ("tokens", "turn"):
        return int(cell)
    if field == "latency_ms":
        number = float(cell)
        if not math.isfinite(number):
            raise ValueError(f"{_shown(cell)} is not a finite number")
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


def _csv_records(lines: list[Line], source: str) -> list[_Record]:
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


def _csv_parse(lines: list[Line], source: str) -> Iterator[_Record]:
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
            yield _Record(first.number, first.text.rstrip("\r\n"), None, (problem,))
            continue
        spanned = lines[start : cursor.position]
        if not any(cell.strip() for cell in cells):
            continue
        yield _csv_record(header, cells, spanned)


def _csv_record(header: list[str], cells: list[str], spanned: list[Line]) -> _Record:
    first = spanned[0]
    raw = ",".join(cells)
    bad = next((line for line in spanned if line.bad_byte is not None), None)
    if bad is not None:
        return _Record(first.number, raw, None, (bad.not_utf8(),))
    if len(cells) != len(header):
        message = f"{len(cells)} cells for {len(header)} columns"
        if len(spanned) > 1:
            message += (
                f" in the record of lines {first.number}-{spanned[-1].number}; check its quotes"
            )
        return _Record(first.number, raw, None, (Problem("<csv>", message),))
    data: dict[str, Any] = {}
    problems = []
    for name, cell in zip(header, cells, strict=True):
        if cell == "" and name != "answer":
            continue  # an empty cell is an absent field; an empty answer is an answer
        try:
            data[name] = _csv_value(name, cell)
        except ValueError as error:
            problems.append(Problem(name, f"cannot parse {_shown(cell)}: {error}"))
    return _Record(first.number, raw, data, tuple(problems))


def _proxy(path: Location) -> str | None:
    return path.proxy_relevant if isinstance(path, SqlDataset) else None


def _display(path: Location) -> str:
    return path.display if isinstance(path, SqlDataset) else str(path)


def dataset_format(path: Location, declared: str | None = None, display: str | None = None) -> str:
    """The format of ``path``: "sql" for a query, else ``declared`` if given, else from the
    file extension, the last two suffixes first (``.jsonl.gz``), then the last one."""
    if isinstance(path, SqlDataset):
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


# -- text that no UTF-8 file can hold ---------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# Decoding UTF-8 never yields a surrogate; JSON yields one only from a \u escape of one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string of ``value`` (a key too), which only a ``\\u``
    escape of half a character can produce; ``value`` is at most MAX_DEPTH deep."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return found.group(0) if found else None
    if isinstance(value, dict):
        items: Iterable[Any] = (x for pair in value.items() for x in pair)
    elif isinstance(value, list):
        items = value
    else:
        return None
    return next((s for s in map(_lone_surrogate, items) if s is not None), None)


def _escape_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate written as its escape text (``\\ud800``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escape_surrogates(k): _escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape_surrogates(v) for v in value]
    return value


def _valid_text(data: dict[str, Any], text: str) -> tuple[dict[str, Any], list[Problem]]:
    """``data``, read from ``text``, safe to print and write, and a problem per field that
    held a lone surrogate (an id, a question, a nested context text...)."""
    if not _SURROGATE_ESCAPE.search(text) or _lone_surrogate(data) is None:
        return data, []
    problems = []
    for key, value in data.items():
        found = _lone_surrogate(key) or _lone_surrogate(value)
        if found is not None:
            problems.append(
                Problem(
                    _escape_surrogates(key),
                    f"not valid Unicode text: a lone surrogate ({_escape_surrogates(found)}), "
                    "half of a character's \\u escape pair; write the character itself or "
                    "both halves",
                )
            )
    return _escape_surrogates(data), problems


# -- ids ----------------------------------------------------------------------------------


def _fallback_id(record: _Record) -> str:
    digest = hashlib.sha1(record.text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"L{record.line}-{digest}"


def _given_id(data: Mapping[str, Any] | None) -> tuple[str | None, list[Problem]]:
    """The row's own id, if it has a usable one, and what is wrong with it."""
    if data is None or "id" not in data:
        return None, []
    value = data["id"]
    if isinstance(value, str) and value.strip():
        return (None if _lone_surrogate(value) else value), []  # the text check names it
    if _is_int(value):
        return str(value), []
    return None, [Problem("id", f"expected a non-empty string, got {_shown(value)}")]


def _unused(candidate: str, taken: set[str]) -> str:
    """``candidate``, or ``candidate~2``, ``~3``... if a row already has it."""
    unique, n = candidate, 1
    while unique in taken:
        n += 1
        unique = f"{candidate}~{n}"
    return unique


@dataclass(frozen=True)
class _Checked:
    record: _Record
    data: dict[str, Any] | None
    given_id: str | None
    problems: list[Problem]


def _check(record: _Record) -> _Checked:
    given_id, id_problems = _given_id(record.data)
    problems = [*record.problems, *id_problems]
    data = record.data
    if data is not None:
        data, text_problems = _valid_text(data, record.text)
        problems += text_problems
        problems += validate_fields(data)
    return _Checked(record, data, given_id, problems)


def _system(checked: _Checked) -> str | None:
    system = (checked.data or {}).get("system")
    return system if isinstance(system, str) else None


@dataclass(frozen=True, slots=True)
class _Ident:
    """What a row's id depends on: its number, the id it gives itself, its system, and
    the id made up for it (``L<line>-<hash>``) when it gives none."""

    line: int
    given_id: str | None
    system: str | None
    made_up: str | None


def _ident(checked: _Checked) -> _Ident:
    given = checked.given_id
    made_up = _fallback_id(checked.record) if given is None else None
    return _Ident(checked.record.line, given, _system(checked), made_up)


def _assign_ids(idents: list[_Ident], unit: str) -> Iterator[tuple[str, tuple[Problem, ...]]]:
    """Each row's id, unique per system, and the problem with its own id if it has one.
    A row's own id is kept unless an earlier row of its system has it; made-up ids
    (``L<line>-<hash>``, ``<id>@L<line>``) never take an id that any row of the dataset
    gives itself, which is why every row's ident is known first. ``unit`` names what a
    row's number counts (a Parquet row's is its row, not a line)."""
    taken = {i.given_id for i in idents if i.given_id is not None}
    of_systems = {i.given_id for i in idents if i.given_id is not None and i.system}
    first_line: dict[tuple[str | None, str], int] = {}
    for i in idents:
        key = (i.system, i.given_id or "")
        problems: tuple[Problem, ...] = ()
        if i.given_id is None:
            row_id = _unused(i.made_up or "", taken)
        elif key in first_line:
            of_system = f" of system {i.system!r}" if i.system is not None else ""
            problems = (
                Problem(
                    "id",
                    f"duplicate id {i.given_id!r}{of_system} (first used at {unit} "
                    f"{first_line[key]})",
                ),
            )
            row_id = _unused(f"{i.given_id}@L{i.line}", taken)  # keeps test ids unique
        elif i.system is None and i.given_id in of_systems:
            # A row that names no system in a dataset of systems is a bad row of every
            # system (``_NO_SYSTEM``): it must not share an id with their rows.
            first_line[key] = i.line
            row_id = _unused(f"{i.given_id}@L{i.line}", taken)
        else:
            first_line[key] = i.line
            row_id = i.given_id
        taken.add(row_id)
        yield row_id, problems


_NO_SYSTEM = Problem("system", "missing: other rows of this dataset name their system")


def _loaded(
    checked: _Checked,
    position: int,
    row_id: str,
    id_problems: tuple[Problem, ...],
    source: str,
    of_systems: bool,
    keyed: bool = False,
    proxy: str | None = None,
) -> LoadedRow:
    """The row at ``position`` with its id and every problem it has. Once one row of the
    dataset names its ``system`` (``of_systems``), a row without one cannot be told apart:
    a problem of that row (a row that could not be read already has one)."""
    problems = (*checked.problems, *id_problems)
    data = checked.data or {}
    if of_systems and "system" not in data and not any(p.field.startswith("<") for p in problems):
        problems = (*problems, _NO_SYSTEM)
    row = Row(row_id, source, checked.record.line, position, data, keyed, proxy)
    return LoadedRow(row, problems)


def _parquet_records(path: Path, source: str, group: int = 0) -> Iterator[_Record]:
    """A Parquet file's rows as records, from row group ``group`` on; the record's text,
    which a made-up id hashes, is the row as JSON, keys in column order."""
    from pytest_ragmetrics.data.parquet import parquet_rows  # a Parquet dataset only

    for row in parquet_rows(path, source, MAX_DEPTH, group):
        yield _Record(row.number, json.dumps(row.data), row.data, row.problems)


def _sql_records(dataset: SqlDataset, source: str, digest: Digest | None) -> Iterator[_Record]:
    """A SQL query's rows as records; a row's number is its position in the ordered
    result, and its text, which a made-up id hashes, is the row as JSON."""
    from pytest_ragmetrics.data.sql import sql_rows  # SQLAlchemy: a SQL dataset only

    for row in sql_rows(dataset, source, MAX_DEPTH, digest):
        yield _Record(row.number, row.text, row.data, row.problems)


def _ready(record: _Record) -> Callable[[], _Record]:
    return lambda: record


@dataclass(frozen=True)
class _Resume:
    """A place to start reading a file other than its start: the position of a row, its
    line (its row's number in Parquet), and ``at``, the byte offset of that line (plain
    JSONL) or the row group it starts (Parquet)."""

    position: int
    line: int
    at: int


_START = _Resume(0, 1, 0)


def _records(
    path: Location, kind: str, source: str, digest: Digest | None, resume: _Resume = _START
) -> Generator[Callable[[], _Record], None, None]:
    """The records of ``path`` in file order, from ``resume`` on, read a chunk (a batch
    of Parquet rows) at a time, the file's bytes fed to ``digest`` (if any) as they are
    read. Each is handed on as a function that makes it: a JSONL line is parsed only when
    its record is made, so that a reader after later rows skips earlier ones cheaply.
    Only plain JSONL and Parquet resume anywhere but at the start.

    CSV alone is read whole (as lines): after a malformed record, reading resumes on the
    line after the one it started on, which may lie any number of lines back. A SQL
    query is read from its first row, a batch at a time."""
    if isinstance(path, SqlDataset):
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


def _unit(kind: str) -> str:
    return "row" if kind in ("parquet", "sql") else "line"


def load_dataset(path: Location, display: str | None = None, fmt: str | None = None) -> Dataset:
    """Read and validate every row of ``path``; see the module docstring."""
    source = display or _display(path)
    kind = dataset_format(path, fmt, source)
    digest = hashlib.sha256()
    checked = [_check(make()) for make in _records(path, kind, source, digest)]
    ids = _assign_ids([_ident(c) for c in checked], _unit(kind))
    of_systems = any(_system(c) is not None for c in checked)
    rows = tuple(
        _loaded(c, position, row_id, problems, source, of_systems, kind == "sql", _proxy(path))
        for position, (c, (row_id, problems)) in enumerate(zip(checked, ids, strict=True))
    )
    return Dataset(path, source, digest.hexdigest(), rows)


# -- datasets read a batch of rows at a time ----------------------------------------------


# Rows between the places a reader of plain JSONL can start (a byte offset each).
RESUME_EVERY = 1024


@dataclass(frozen=True, eq=False)
class DatasetIndex:
    """What a run needs to know of a dataset's rows without holding them: how many, each
    one's id, line, system and a digest of its text, the file's hash, and the places a
    reader can start from; the rows themselves are read again, a batch at a time, by a
    ``DatasetReader``. 86 bytes a row with ids of 8 characters, mostly the ids."""

    path: Location
    display: str
    format: str
    sha256: str
    stamp: tuple[int, int]  # the file's size and modification time when it was scanned
    ids: tuple[str, ...]
    lines: array[int]
    digests: array[int]  # 64 bits of each row's text's BLAKE2b
    system_codes: array[int]  # an index into ``systems``, -1 for a row that names none
    systems: tuple[str, ...]
    id_problems: Mapping[int, tuple[Problem, ...]]
    resumes: tuple[_Resume, ...]  # in increasing position, the start of the file first

    def __len__(self) -> int:
        return len(self.ids)

    def system_at(self, position: int) -> str | None:
        code = self.system_codes[position]
        return None if code < 0 else self.systems[code]

    def row_keys(self) -> Iterator[tuple[str | None, str]]:
        """Each row's (system, id), in file order."""
        return ((self.system_at(p), row_id) for p, row_id in enumerate(self.ids))

    def resume_for(self, position: int) -> _Resume:
        """The last place to start reading from before the row at ``position``."""
        found = bisect_right(self.resumes, position, key=lambda resume: resume.position)
        return self.resumes[found - 1]


def _digest(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def _stamp(path: Location, source: str) -> tuple[int, int]:
    if isinstance(path, SqlDataset):
        return (0, 0)  # a query's rows are checked against their digests alone
    try:
        stat = path.stat()
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise DatasetError(f"{source}: cannot read the dataset: {reason}") from None
    return stat.st_size, stat.st_mtime_ns


def _resumes(path: Location, kind: str, source: str, records: list[_Record]) -> tuple[_Resume, ...]:
    """Where a reader may start: in plain JSONL at every ``RESUME_EVERY``-th row
    (``records`` are those rows), in Parquet at each row group; in compressed JSONL and
    CSV only at the start of the file."""
    if kind == "jsonl":
        later = enumerate(records[1:], start=1)
        return (_START, *(_Resume(n * RESUME_EVERY, r.line, r.offset) for n, r in later))
    if kind == "parquet" and isinstance(path, Path):
        from pytest_ragmetrics.data.parquet import row_groups

        starts = enumerate(row_groups(path, source))
        return tuple(_Resume(start, start + 1, group) for group, start in starts)
    return (_START,)


def scan_dataset(
    path: Location, display: str | None = None, fmt: str | None = None
) -> DatasetIndex:
    """Read every row of ``path`` once, as ``load_dataset`` does, keeping only its index:
    the ids are those ``load_dataset`` gives, and a ``DatasetReader`` gives the same rows."""
    source = display or _display(path)
    kind = dataset_format(path, fmt, source)
    stamp = _stamp(path, source)
    digest = hashlib.sha256()
    idents: list[_Ident] = []
    digests = array("Q")
    places: list[_Record] = []  # the records a reader may start at (see _resumes)
    for position, make in enumerate(_records(path, kind, source, digest)):
        record = make()
        idents.append(_ident(_check(record)))
        digests.append(_digest(record.text))
        if position % RESUME_EVERY == 0:
            places.append(record)
    systems = tuple(dict.fromkeys(i.system for i in idents if i.system is not None))
    codes = {system: code for code, system in enumerate(systems)}
    ids: list[str] = []
    id_problems: dict[int, tuple[Problem, ...]] = {}
    for position, (row_id, problems) in enumerate(_assign_ids(idents, _unit(kind))):
        ids.append(row_id)
        if problems:
            id_problems[position] = problems
    return DatasetIndex(
        path,
        source,
        kind,
        digest.hexdigest(),
        stamp,
        tuple(ids),
        array("q", (i.line for i in idents)),
        digests,
        array("i", (-1 if i.system is None else codes[i.system] for i in idents)),
        systems,
        id_problems,
        _resumes(path, kind, source, places),
    )


class DatasetReader:
    """The rows of a scanned dataset, read again a batch at a time, each exactly as
    ``load_dataset`` gives it (id, line, position, data and problems).

    Reading goes forward through the file: rows asked for in increasing positions (the
    batches of a run, in the order one process runs them) cost one pass. Rows before the
    last one read, or far after it, start reading at the nearest place before them that
    the index knows (``DatasetIndex.resumes``): anywhere in plain JSONL and Parquet, only
    the start of the file in compressed JSONL and CSV, whose batches are best run in
    order. The file must be the file the run scanned: a changed size or modification
    time, or a row that is not on its line or not its text, raises ``DatasetError``."""

    def __init__(self, index: DatasetIndex) -> None:
        self.index = index
        self._stream: Generator[Callable[[], _Record], None, None] | None = None
        self._records: Iterator[tuple[int, Callable[[], _Record]]] = iter(())
        self._next = 0

    def rows(self, positions: Sequence[int]) -> list[LoadedRow]:
        """The rows at ``positions``, which increase."""
        if not positions:
            return []
        try:
            return self._read(positions)
        except DatasetError:
            self.close()  # the next batch starts afresh, and checks the file again
            raise

    def _read(self, positions: Sequence[int]) -> list[LoadedRow]:
        index = self.index
        if _stamp(index.path, index.display) != index.stamp:
            raise DatasetError(self._changed("its size or modification time differ"))
        resume = index.resume_for(positions[0])
        if self._stream is None or positions[0] < self._next or resume.position > self._next:
            self.close()
            self._stream = _records(index.path, index.format, index.display, None, resume)
            self._records, self._next = enumerate(self._stream, resume.position), resume.position
        of_systems = bool(index.systems)
        loaded = []
        for position in positions:
            record = self._record_at(position)
            moved = record.line != index.lines[position]
            if moved or _digest(record.text) != index.digests[position]:
                raise DatasetError(self._changed(f"row {position + 1} is not the row it was"))
            problems = index.id_problems.get(position, ())
            checked = _check(record)
            row_id = index.ids[position]
            keyed, proxy = index.format == "sql", _proxy(index.path)
            loaded.append(
                _loaded(
                    checked, position, row_id, problems, index.display, of_systems, keyed, proxy
                )
            )
        return loaded

    def _record_at(self, position: int) -> _Record:
        if position < self._next:
            raise ValueError(f"rows are read in increasing positions; {position} came late")
        for found, make in self._records:
            self._next = found + 1
            if found == position:
                return make()
        raise DatasetError(self._changed(f"it has fewer than {position + 1} rows"))

    def _changed(self, how: str) -> str:
        return (
            f"{self.index.display}: the dataset changed while the run read it ({how}); "
            "leave it unchanged until the run ends, and run again"
        )

    def close(self) -> None:
        """Close the file of the pass under way, if any."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
