"""Parquet datasets: rows read a record batch at a time through pyarrow, as JSON-like data.

Each row becomes the same plain data a JSONL line holds, so that one set of field checks
(``validate_fields``) serves every format:

* a row is numbered by its 1-based position in the file (``d.parquet:12`` is the 12th
  row), as a JSONL row by its line;
* null is an absent field, at the top level and as a struct's field (a context without a
  ``title``), so a null in a field a metric needs is that field missing; a null *item* of
  a list stays ``None`` and the list's check names it;
* structs are objects, lists (``list``, ``large_list``, fixed-size) are lists, maps with
  string keys (``relevant`` as ``map<string, double>``) are objects, dictionary-encoded
  columns are their values;
* a float that is NaN or infinite anywhere in a field cannot be read (JSON has no such
  numbers, and a mean over one would be silently poisoned): the field is left out of the
  row and the row is bad, with a ``<parquet>`` problem naming the column, as a JSONL
  line with a NaN is bad with a ``<json>`` one (which also keeps the metric fixtures from
  reporting the left-out field as missing);
* a column whose type has no JSON value (timestamps, dates, decimals, binary, maps with
  other keys) or that nests deeper than the row may (``MAX_DEPTH``) is, likewise, a
  ``<parquet>`` problem in every row where it is not null: cast it (to string, double...)
  when writing the file. Such a column's values are never converted, only checked for
  nulls, so a date Python cannot hold (after year 9999) is its row's problem as well.

The file is never read as one table: ``iter_batches`` hands on ``BATCH_ROWS`` rows at a
time, converted with ``to_pylist`` per batch. pyarrow is an optional extra, imported only
here and only when a Parquet dataset is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ragmetrics.data.streams import DatasetError, Problem

BATCH_ROWS = 4096  # rows converted to Python at a time
_NOT_FINITE = (
    "{value} is not a number a dataset may hold (JSON has no NaN or Infinity); "
    "write null for a missing value"
)

_TOO_DEEP = "nested deeper than {levels} levels (the row itself is one); flatten it"


@dataclass(frozen=True)
class ParquetRow:
    """One row as read: its 1-based number, its fields, and what was left out of them."""

    number: int
    data: dict[str, Any]
    problems: tuple[Problem, ...]


Convert = Callable[[Any], Any]


class _NotFinite(ValueError):
    """A NaN or infinite float somewhere in a value."""


def _pyarrow(source: str) -> Any:
    try:
        import pyarrow.parquet
    except ImportError:
        raise DatasetError(
            f"{source}: reading Parquet needs pyarrow; pip install 'pytest-ragmetrics[parquet]'"
        ) from None
    return pyarrow


def _finite(value: Any) -> Any:
    if value is not None and not math.isfinite(value):
        raise _NotFinite(repr(value))
    return value


@dataclass(frozen=True)
class _Types:
    """What a column's converter depends on: pyarrow itself and the deepest nesting."""

    pa: Any
    max_depth: int


def _converter(t: _Types, arrow_type: Any, depth: int) -> Convert | str | None:
    """How to turn one Python value of ``arrow_type`` (``to_pylist``) into JSON-like data:
    ``None`` when it already is, a function, or why the type has no JSON value.

    ``depth`` is the number of lists and objects around the value, the row included."""
    types = t.pa.types
    if types.is_dictionary(arrow_type):
        return _converter(t, arrow_type.value_type, depth)
    if types.is_floating(arrow_type):
        return _finite
    if types.is_null(arrow_type) or types.is_boolean(arrow_type) or types.is_integer(arrow_type):
        return None
    if _is_any(types, arrow_type, "is_string", "is_large_string", "is_string_view"):
        return None
    if not (types.is_nested(arrow_type)):
        return f"a Parquet {arrow_type} column, which has no JSON value; cast it to a string"
    if depth >= t.max_depth:
        return _TOO_DEEP.format(levels=t.max_depth)
    if types.is_struct(arrow_type):
        return _struct(t, arrow_type, depth + 1)
    if types.is_map(arrow_type):
        return _map(t, arrow_type, depth + 1)
    lists = ("is_list", "is_large_list", "is_fixed_size_list", "is_list_view", "is_large_list_view")
    if _is_any(types, arrow_type, *lists):
        return _list(t, arrow_type.value_type, depth + 1)
    return f"a Parquet {arrow_type} column, which has no JSON value; cast it to a list or struct"


def _is_any(types: Any, arrow_type: Any, *tests: str) -> bool:
    """Whether ``arrow_type`` passes one of the ``pyarrow.types`` tests named; a test that
    this pyarrow lacks (``is_string_view`` came in 16) cannot pass: no such column exists."""
    return any(getattr(types, test, lambda _: False)(arrow_type) for test in tests)


def _list(t: _Types, item_type: Any, depth: int) -> Convert | str | None:
    item = _converter(t, item_type, depth)
    if item is None or isinstance(item, str):
        return item
    convert = item
    return lambda value: None if value is None else [convert(v) for v in value]


def _struct(t: _Types, arrow_type: Any, depth: int) -> Convert | str | None:
    fields: list[tuple[str, Convert | None]] = []
    for i in range(arrow_type.num_fields):
        field = arrow_type.field(i)
        convert = _converter(t, field.type, depth)
        if isinstance(convert, str):
            deep = convert == _TOO_DEEP.format(levels=t.max_depth)
            return convert if deep else f"its field {field.name!r} is {convert}"
        fields.append((field.name, convert))

    def struct(value: Any) -> Any:
        if value is None:
            return None
        found = {}
        for name, convert in fields:
            item = value[name]
            if item is not None:  # a null field of a struct is an absent key
                found[name] = convert(item) if convert else item
        return found

    return struct


def _map(t: _Types, arrow_type: Any, depth: int) -> Convert | str | None:
    key_type = arrow_type.key_type
    if not (t.pa.types.is_string(key_type) or t.pa.types.is_large_string(key_type)):
        return f"a Parquet map with {key_type} keys; JSON object keys are strings"
    item = _converter(t, arrow_type.item_type, depth)
    if isinstance(item, str):
        deep = item == _TOO_DEEP.format(levels=t.max_depth)
        return item if deep else f"its values are {item}"
    convert = item

    def as_object(value: Any) -> Any:
        if value is None:
            return None
        return {key: convert(v) if convert else v for key, v in value}

    return as_object


def parquet_rows(path: Path, source: str, max_depth: int, group: int = 0) -> Iterator[ParquetRow]:
    """Every row of the Parquet file ``path``, in file order, ``BATCH_ROWS`` at a time,
    from the first row of its row group ``group`` on; a row nests lists and objects at
    most ``max_depth`` levels deep, itself included."""
    pa = _pyarrow(source)
    types = _Types(pa, max_depth)
    try:
        parquet = pa.parquet.ParquetFile(path)
        schema = parquet.schema_arrow
        _names_once(schema.names, source)
        columns = [(f.name, _converter(types, f.type, 1)) for f in schema]
        groups = range(group, parquet.metadata.num_row_groups)
        number = sum(parquet.metadata.row_group(g).num_rows for g in range(group))
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=groups):
            values = _batch_values(batch, columns)
            for index in range(batch.num_rows):
                number += 1
                yield _row(number, [column[index] for column in values], columns)
    except (OSError, ValueError, pa.ArrowException) as error:
        raise _unreadable_file(source, error) from None


def _unreadable_file(source: str, error: Exception) -> DatasetError:
    return DatasetError(
        f"{source}: cannot read the Parquet file: {error}; check that it is a whole, "
        "uncorrupted Parquet file"
    )


def row_groups(path: Path, source: str) -> list[int]:
    """The 0-based position of the first row of each row group of the Parquet file."""
    pa = _pyarrow(source)
    try:
        metadata = pa.parquet.ParquetFile(path).metadata
    except (OSError, ValueError, pa.ArrowException) as error:
        raise _unreadable_file(source, error) from None
    starts, start = [], 0
    for group in range(metadata.num_row_groups):
        starts.append(start)
        start += metadata.row_group(group).num_rows
    return starts


def _names_once(names: list[str], source: str) -> None:
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DatasetError(
            f"{source}: the Parquet file has column(s) {', '.join(map(repr, twice))} more than "
            "once; give every column its own name"
        )


def _unreadable(column: str, why: str) -> Problem:
    """A value that cannot be read into the row: like a JSONL line that is not valid
    JSON, a problem of the row as read (``<parquet>``), naming the column, so that no
    check reports the left-out field as missing as well."""
    return Problem("<parquet>", f"column {column!r}: {why}")


def _batch_values(batch: Any, columns: list[tuple[str, Convert | str | None]]) -> list[list[Any]]:
    """Each column's values in the record batch, as Python values; of a column with no
    JSON value only whether each is null (``True`` where it is not).

    Such a column's values are never converted: pyarrow turns a date past year 9999 or
    before year 1 (which Parquet holds and Python's ``datetime`` does not) into an
    ``OverflowError`` of the whole batch, and the row's problem is the column's type
    whatever its value."""
    return [
        batch.column(index).is_valid().to_pylist()
        if isinstance(convert, str)
        else batch.column(index).to_pylist()
        for index, (_, convert) in enumerate(columns)
    ]


def _row(
    number: int, values: list[Any], columns: list[tuple[str, Convert | str | None]]
) -> ParquetRow:
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    for (name, convert), value in zip(columns, values, strict=True):
        if isinstance(convert, str):  # ``value`` says whether the column is not null
            if value:
                problems.append(_unreadable(name, convert))
            continue
        if value is None:
            continue  # null: an absent field
        try:
            data[name] = convert(value) if convert else value
        except _NotFinite as error:
            problems.append(_unreadable(name, _NOT_FINITE.format(value=error)))
    return ParquetRow(number, data, tuple(problems))
