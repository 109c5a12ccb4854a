"""Datasets of evaluated rows: JSONL (plain, gzip or Zstandard), CSV, Parquet and SQL
queries, validated up front, with stable ids.

Loading never raises for bad *rows*: a malformed line or a field of the wrong type becomes
a ``LoadedRow`` with problems, each naming the file, line and field, so that the row
becomes a test that errors while every other row still runs. Only a *file* that cannot be
read as a whole raises ``DatasetError``: missing or unreadable, an unknown format, UTF-16
text, a CSV header row that is malformed, not UTF-8 or names a column twice, compressed
data that is damaged or truncated, a Parquet file pyarrow cannot read (or pyarrow, or
zstandard, not installed).

The work is split by purpose:

* ``data.row``: ``Row`` and ``LoadedRow``, what metrics and fixtures read;
* ``data.fields``: the known fields and their checks (``validate_fields``);
* ``data.formats``: a file (or a query) read into records, format by format;
* ``data.checks``: a record made a row: its text, its fields, its id;
* here: ``load_dataset`` keeps every row (a ``Dataset``); ``scan_dataset`` keeps only
  each row's id, line and system (a ``DatasetIndex``), and a ``DatasetReader`` reads rows
  again a batch at a time, each exactly as ``load_dataset`` gives it, for bulk evals, so
  that no process holds a JSONL or Parquet dataset whole.

Rows keep file order. ``Dataset.sha256`` is of the file's bytes as stored (compressed, for
a compressed file). The names other modules use are importable from here, whichever of
the modules above defines them.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_ragmetrics.data.checks import (
    Ident,
    assign_ids,
    check,
    ident,
    ident_of,
    loaded_row,
    system_of,
)
from pytest_ragmetrics.data.fields import EXACT_INT, VALIDATORS, Validator, validate_fields
from pytest_ragmetrics.data.formats import (
    FORMATS,
    MAX_DEPTH,
    START,
    Location,
    Record,
    Resume,
    dataset_format,
    display_of,
    is_sql,
    proxy_of,
    read_records,
    unit_of,
)
from pytest_ragmetrics.data.packed import PackedStrings
from pytest_ragmetrics.data.row import LoadedRow, Row, RowError

# DatasetError and Problem live with the file reading that raises and reports them, and
# are this module's too: every user of the loader imports them from here.
from pytest_ragmetrics.data.streams import DatasetError, Problem

__all__ = [
    "EXACT_INT",
    "FORMATS",
    "MAX_DEPTH",
    "RESUME_EVERY",
    "VALIDATORS",
    "Dataset",
    "DatasetError",
    "DatasetIndex",
    "DatasetReader",
    "LoadedRow",
    "Location",
    "Problem",
    "Row",
    "RowError",
    "Validator",
    "dataset_format",
    "load_dataset",
    "scan_dataset",
    "validate_fields",
]


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


def load_dataset(path: Location, display: str | None = None, fmt: str | None = None) -> Dataset:
    """Read and validate every row of ``path``; see the module docstring."""
    source = display or display_of(path)
    kind = dataset_format(path, fmt, source)
    digest = hashlib.sha256()
    checked = [check(make()) for make in read_records(path, kind, source, digest)]
    ids = assign_ids([ident(c) for c in checked], unit_of(kind))
    of_systems = any(system_of(c) is not None for c in checked)
    rows = tuple(
        loaded_row(c, position, row_id, problems, source, of_systems, kind == "sql", proxy_of(path))
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
    ``DatasetReader``. 36 bytes a row with ids of 8 characters, its ids packed."""

    path: Location
    display: str
    format: str
    sha256: str
    stamp: tuple[int, int]  # the file's size and modification time when it was scanned
    ids: Sequence[str]  # a PackedStrings: 16 bytes an id of 8 characters
    lines: array[int]
    digests: array[int]  # 64 bits of each row's text's BLAKE2b
    system_codes: array[int]  # an index into ``systems``, -1 for a row that names none
    systems: tuple[str, ...]
    id_problems: Mapping[int, tuple[Problem, ...]]
    resumes: tuple[Resume, ...]  # in increasing position, the start of the file first

    def __len__(self) -> int:
        return len(self.ids)

    def system_at(self, position: int) -> str | None:
        code = self.system_codes[position]
        return None if code < 0 else self.systems[code]

    def row_keys(self) -> Iterator[tuple[str | None, str]]:
        """Each row's (system, id), in file order."""
        return ((self.system_at(p), row_id) for p, row_id in enumerate(self.ids))

    def resume_for(self, position: int) -> Resume:
        """The last place to start reading from before the row at ``position``."""
        found = bisect_right(self.resumes, position, key=lambda resume: resume.position)
        return self.resumes[found - 1]


def _digest(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def _stamp(path: Location, source: str) -> tuple[int, int]:
    if is_sql(path):
        return (0, 0)  # a query's rows are checked against their digests alone
    try:
        stat = path.stat()
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise DatasetError(f"{source}: cannot read the dataset: {reason}") from None
    return stat.st_size, stat.st_mtime_ns


def _resumes(
    path: Location, kind: str, source: str, lines: array[int], offsets: array[int]
) -> tuple[Resume, ...]:
    """Where a reader may start: in plain JSONL at every ``RESUME_EVERY``-th row (whose
    ``lines`` and ``offsets`` are given), in Parquet at each row group; in compressed
    JSONL and CSV only at the start of the file."""
    if kind == "jsonl":
        later = zip(range(1, len(lines)), lines[1:], offsets[1:], strict=True)
        return (START, *(Resume(n * RESUME_EVERY, line, offset) for n, line, offset in later))
    if kind == "parquet" and isinstance(path, Path):
        from pytest_ragmetrics.data.parquet import row_groups

        starts = enumerate(row_groups(path, source))
        return tuple(Resume(start, start + 1, group) for group, start in starts)
    return (START,)


def scan_dataset(
    path: Location, display: str | None = None, fmt: str | None = None
) -> DatasetIndex:
    """Read every row of ``path`` once, as ``load_dataset`` does, keeping only its index:
    the ids are those ``load_dataset`` gives, and a ``DatasetReader`` gives the same rows."""
    source = display or display_of(path)
    kind = dataset_format(path, fmt, source)
    stamp = _stamp(path, source)
    digest = hashlib.sha256()
    idents: list[Ident] = []
    digests = array("Q")
    # Where a reader may start (see _resumes), as arrays: a record or an int object kept
    # every so often among the scan's transient ones would keep their freed memory from
    # the operating system (a million rows kept 175 MB of it).
    place_lines, place_offsets = array("q"), array("q")
    for position, make in enumerate(read_records(path, kind, source, digest)):
        record = make()
        idents.append(ident_of(record))
        digests.append(_digest(record.text))
        if position % RESUME_EVERY == 0:
            place_lines.append(record.line)
            place_offsets.append(record.offset)
    systems = tuple(dict.fromkeys(i.system for i in idents if i.system is not None))
    codes = {system: code for code, system in enumerate(systems)}
    ids = PackedStrings()
    id_problems: dict[int, tuple[Problem, ...]] = {}
    for position, (row_id, problems) in enumerate(assign_ids(idents, unit_of(kind))):
        ids.append(row_id)
        if problems:
            id_problems[position] = problems
    return DatasetIndex(
        path,
        source,
        kind,
        digest.hexdigest(),
        stamp,
        ids,
        array("q", (i.line for i in idents)),
        digests,
        array("i", (-1 if i.system is None else codes[i.system] for i in idents)),
        systems,
        id_problems,
        _resumes(path, kind, source, place_lines, place_offsets),
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
        self._stream: Generator[Callable[[], Record], None, None] | None = None
        self._records: Iterator[tuple[int, Callable[[], Record]]] = iter(())
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
            self._stream = read_records(index.path, index.format, index.display, None, resume)
            self._records, self._next = enumerate(self._stream, resume.position), resume.position
        of_systems = bool(index.systems)
        keyed, proxy = index.format == "sql", proxy_of(index.path)  # the same for every row
        loaded = []
        for position in positions:
            record = self._record_at(position)
            moved = record.line != index.lines[position]
            if moved or _digest(record.text) != index.digests[position]:
                raise DatasetError(self._changed(f"row {position + 1} is not the row it was"))
            problems = index.id_problems.get(position, ())
            checked = check(record)
            row_id = index.ids[position]
            loaded.append(
                loaded_row(
                    checked, position, row_id, problems, index.display, of_systems, keyed, proxy
                )
            )
        return loaded

    def _record_at(self, position: int) -> Record:
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
