"""The rows of one eval as the controller gathers them: packed columns, not objects.

The controller keeps every row it gathers to the end of the run, for the aggregates, the
gates and the reports. As ``RowResult`` objects a row cost about 1 KB (its slotted record,
a dict of values and one of breakdowns, a float object per number, its id and digest as
strings, its entry in an index by id), a million rows a gigabyte. Most rows hold nothing
but numbers, shared test names and a shared citation census, so ``RowStore`` keeps those
"plain" rows as columns: the ids packed (``PackedStrings``), every number in one
``array('d')``, and per row its index, its inputs digest as an integer and a code for
its *layout* (``Layout``: which metrics and breakdown parts its numbers are, in the order
they were recorded, and its shared test names and census), about 100 bytes a row; a
row's session, if it has one, is a code into the store's list of sessions (4 bytes a
row, each session's name kept once). A row with anything else (an error, evidence,
details, shown fields, an output, a value that is not a float) stays a ``RowResult``, as
before, unless the store has a spool.

**Spooled rows.** With a spool (``results.spool``: the controller's stores have one), a
row whose only parts beyond a plain row's are its *shown parts* (evidence, details, shown
fields, an output: ``SHOWN_PARTS``) is packed like a plain row, and those parts go to the
spool as one record; the store keeps where it is (an offset and a length, 16 bytes), and
its layout says which of them the row has. The session is not a shown part: the paired
gates resample a run's rows by session, a reader of numbers that must not read the
spool. A row with errors (or a value that is not a float, or an inputs digest that is
not one) stays whole in memory as before: the errors are counted by every report and
gate, and such rows are few. ``row`` reads a spooled row's record back, so every reader
sees the ``RowResult`` it would have seen; the column readers of ``StoredRows`` and its
``plain`` view (the rows without their shown parts, for the readers of numbers,
statuses, censuses and sessions) never read the spool.

Merging is exactly ``RowResult.merge``: a row that gets a further payload is made into a
``RowResult`` (``row``, its spooled parts read back), merged, and packed again if it is
still plain or spoolable (its shown parts put again: the old record stays in the spool,
unread). Readers get a
``RowResult`` made on access (``StoredRows``), equal to the one the row would have been;
it is theirs, so changing it changes nothing stored. The few readers that go over every
row of a big eval (the aggregates) read the columns instead (``StoredRows.column``,
``StoredRows.breakdowns_of``), in the same order, so every aggregate is bit-identical.
"""

from __future__ import annotations

import itertools
import pickle
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pytest_ragmetrics.data.packed import IdTable
from pytest_ragmetrics.metrics.catalog import ERRORS
from pytest_ragmetrics.results.records import NOTHING, RowResult
from pytest_ragmetrics.results.spool import SpoolError

if TYPE_CHECKING:
    from pytest_ragmetrics.results.records import RowPayload
    from pytest_ragmetrics.results.spool import Spool

# Codes from WHOLE up are rows kept whole: the code minus WHOLE is the row's place in
# ``RowStore.whole`` (a list, not a dict by position: no int object and entry a row).
WHOLE = 0x80000000
_UNSET = 0xFFFFFFFF  # a row being added, neither packed nor kept yet
_DIGEST = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Layout:
    """What a plain row's numbers are and what it shares with rows like it.

    ``names``: its metrics, in the order its values were recorded; ``parts``: each
    breakdown's name and parts, in order; their numbers follow the values in the store.
    ``tests`` and ``failed`` are the shared sets of test names, ``census_key`` the
    citation census as items (``census`` the shared read-only mapping, not compared),
    ``digested`` whether the row has an inputs digest, ``spooled`` which shown parts it
    has in the store's spool (a bit of ``SHOWN_PARTS`` each; 0: none, not spooled), so a
    reader of one part reads only the rows that have it.
    """

    names: tuple[str, ...]
    parts: tuple[tuple[str, tuple[str, ...]], ...]
    tests: frozenset[str]
    failed: frozenset[str]
    census_key: tuple[tuple[str, int], ...] | None
    digested: bool
    spooled: int = 0
    census: Mapping[str, int] | None = field(default=None, compare=False)

    @property
    def width(self) -> int:
        """How many numbers a row of this layout holds."""
        return len(self.names) + sum(len(parts) for _, parts in self.parts)

    @property
    def ran(self) -> bool:
        return bool(self.tests)


# What a spooled row keeps in the spool, in its record's order; bit i of a layout's
# ``spooled`` says the row has part i.
SHOWN_PARTS = ("evidence", "details", "fields", "output")


def _part_bit(part: str) -> int:
    if part not in SHOWN_PARTS:
        raise ValueError(f"{part!r} is not a shown part of a row: one of {SHOWN_PARTS}")
    return 1 << SHOWN_PARTS.index(part)


def _shown_mask(row: RowResult, nothing: Mapping[str, object]) -> int:
    """Which of evidence, details, shown fields and an output ``row`` has
    (``SHOWN_PARTS``' bits). ``nothing``: the shared empty mapping of a row without the
    first three (``records.NOTHING``)."""
    return (
        (row.evidence is not nothing)
        | (row.details is not nothing) << 1
        | (row.fields is not nothing) << 2
        | (row.output is not None) << 3
    )


# What tells one layout from another (``Layout`` without its census mapping): the key a
# store finds a row's layout by, with no ``Layout`` made for each row it packs.
LayoutKey = tuple[
    tuple[str, ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    frozenset[str],
    frozenset[str],
    tuple[tuple[str, int], ...] | None,
    bool,
    int,
]


def _plain_layout(
    row: RowResult, nothing: Mapping[str, object], spooling: bool
) -> LayoutKey | None:
    """The layout of ``row``, as its key, if it holds nothing but floats, shared sets and
    a digest (and, when ``spooling``, shown parts: then spooled); ``None`` when it must
    stay whole. ``nothing``: the shared empty mapping of a row without evidence, details
    or shown fields (``records.NOTHING``)."""
    shown = _shown_mask(row, nothing)
    if (
        row.errors
        or (shown and not spooling)
        or (row.inputs and not _DIGEST.fullmatch(row.inputs))
        # The types of its numbers as a set, built in C: no generator a row.
        or not {*map(type, row.values.values())} <= _FLOAT
        or (row.breakdowns and not _parts_are_floats(row.breakdowns))
    ):
        return None
    census = row.citations
    breakdowns = row.breakdowns
    return (
        tuple(row.values),
        tuple((name, tuple(parts)) for name, parts in breakdowns.items()) if breakdowns else (),
        row.tests,
        row.failed,
        tuple(census.items()) if census is not None else None,
        bool(row.inputs),
        shown,
    )


def _shown_parts(row: RowResult, nothing: Mapping[str, object]) -> tuple[Any, ...]:
    """The record of ``row``'s shown parts the spool keeps (``None`` for an empty
    mapping, which ``_with_shown_parts`` gives back as the shared one)."""
    return (
        row.evidence if row.evidence is not nothing else None,
        row.details if row.details is not nothing else None,
        row.fields if row.fields is not nothing else None,
        row.output,
    )


def _with_shown_parts(row: RowResult, record: tuple[Any, ...]) -> RowResult:
    evidence, details, fields, row.output = record
    row.evidence = evidence if evidence is not None else NOTHING
    row.details = details if details is not None else NOTHING
    row.fields = fields if fields is not None else NOTHING
    return row


_FLOAT = frozenset({float})


def _parts_are_floats(breakdowns: Mapping[str, Mapping[str, float]]) -> bool:
    return all({*map(type, parts.values())} <= _FLOAT for parts in breakdowns.values())


class RowStore:
    """The rows of one eval in the order they first arrived, plain ones packed.

    A row's place (its position) never changes; ``find`` looks a row up by id in an
    open-addressing table of positions keyed by the id's hash, so no string or int object
    is kept per row. ``spool``: where rows' shown parts go (``None``: such rows are kept
    whole, as a store of the merging outside a run does).
    """

    def __init__(self, spool: Spool | None = None) -> None:
        self.spool = spool
        self._ids = IdTable()  # the rows' ids, by position and found by value
        self.indexes = array("q")
        self.codes = array("I")  # the row's layout, or WHOLE + its place in ``whole``
        self.starts = array("Q")  # where its numbers start in ``numbers``
        self.numbers = array("d")
        self._digests = array("Q")
        self.layouts: list[Layout] = []
        self._layout_codes: dict[LayoutKey, int] = {}
        self.whole: list[RowResult] = []
        # Where each spooled row's record is in the spool, by position; as long as the
        # last spooled row's position reaches (0 for the rows that are not spooled).
        self._spool_at = array("Q")
        self._spool_length = array("Q")
        # Each row's session as a code into ``_sessions`` (0: none), as long as the last
        # row with a session's position reaches.
        self._session_codes = array("I")
        self._sessions: list[str | None] = [None]
        self._session_index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.indexes)

    def add(self, payload: RowPayload, shown: bool) -> None:
        """Merge one row payload (``RowResult.merge``), its evidence and shown fields only
        when ``shown``."""
        key = hash(payload.row)
        position, slot = self._ids.find(payload.row, key)
        if position == -1:
            row = RowResult(payload.row, payload.index)
            row.merge(payload, shown)
            self._append(row, key, slot)
            return
        kept = self._kept(position)
        if kept is not None:
            kept.merge(payload, shown)
            return
        row = self.row(position)
        row.merge(payload, shown)
        self._put(position, row)

    def row(self, position: int, finished: bool = False, shown: bool = True) -> RowResult:
        """The row at ``position`` as a ``RowResult`` of its own (the kept one for a row
        kept whole); ``finished``: with the ``errors`` flag a summary adds (0: a plain
        row has no errors); ``shown``: with a spooled row's shown parts (read from the
        spool), else without them."""
        kept = self._kept(position)
        if kept is not None:
            return kept
        layout = self.layouts[self.codes[position]]
        at = self.starts[position]
        numbers = self.numbers
        end = at + len(layout.names)
        values = dict(zip(layout.names, numbers[at:end], strict=True))
        breakdowns = {}
        for name, parts in layout.parts:
            at, end = end, end + len(parts)
            breakdowns[name] = dict(zip(parts, numbers[at:end], strict=True))
        if finished:
            values[ERRORS] = 0.0
        row = RowResult(
            self.id_of(position),
            self.indexes[position],
            values,
            breakdowns,
            tests=layout.tests,
            inputs=format(self._digests[position], "016x") if layout.digested else "",
            citations=layout.census,
            failed=layout.failed,
        )
        if position < len(self._session_codes):
            row.session = self._sessions[self._session_codes[position]]
        if shown and layout.spooled:
            assert self.spool is not None, "a spooled row's store has a spool"
            record = self.spool.get(self._spool_at[position], self._spool_length[position])
            return _with_shown_parts(row, record)
        return row

    def id_of(self, position: int) -> str:
        return self._ids.strings[position]

    def session_of(self, position: int) -> str | None:
        """The session of the row at ``position`` (``None``: the row is on its own)."""
        kept = self._kept(position)
        if kept is not None:
            return kept.session
        codes = self._session_codes
        return self._sessions[codes[position]] if position < len(codes) else None

    def ran(self, position: int) -> bool:
        code = self.codes[position]
        return self.whole[code - WHOLE].ran if code >= WHOLE else self.layouts[code].ran

    def whole_positions(self) -> list[int]:
        """The positions of the rows kept whole."""
        return [position for position, code in enumerate(self.codes) if code >= WHOLE]

    def spooled(self, position: int) -> bool:
        """Whether the row at ``position`` has its shown parts in the spool."""
        code = self.codes[position]
        return code < WHOLE and bool(self.layouts[code].spooled)

    def _kept(self, position: int) -> RowResult | None:
        code = self.codes[position]
        return self.whole[code - WHOLE] if code >= WHOLE else None

    def summary_rows(self) -> StoredRows:
        """The rows some test ran, in dataset order (rows of one index in the order they
        arrived), as a summary holds them; a row kept whole gets its errors sorted (their
        arrival order differs between xdist runs) and its ``errors`` flag, as a plain
        row's view does (``row``, finished)."""
        indexes = self.indexes
        ran = array("q", (position for position in range(len(self)) if self.ran(position)))
        if any(indexes[a] > indexes[b] for a, b in itertools.pairwise(ran)):
            ran = array("q", sorted(ran, key=indexes.__getitem__))
        for row in self.whole:
            if row.ran:
                if len(row.errors) > 1:
                    row.errors = tuple(sorted(row.errors))
                row.values[ERRORS] = 1.0 if row.errors else 0.0
        return StoredRows(self, ran)

    def _append(self, row: RowResult, key: int, slot: int) -> None:
        position = self._ids.append(row.id, key, slot)
        self.indexes.append(row.index)
        self.codes.append(_UNSET)
        self.starts.append(0)
        self._digests.append(0)
        self._put(position, row)

    def _put(self, position: int, row: RowResult) -> None:
        """Keep ``row`` at ``position``: packed if it is plain, else whole."""
        key = _plain_layout(row, NOTHING, self.spool is not None)
        old = self.codes[position]
        if key is None:  # a new row, or a packed one that an error or evidence made whole
            self.codes[position] = WHOLE + len(self.whole)
            self.whole.append(row)
            return
        if key[-1]:  # spooled; first: a spool that fails leaves the row as it was
            self._spool(position, row)
        code = self._layout_codes.get(key)
        if code is None:
            code = self._layout_codes[key] = len(self.layouts)
            self.layouts.append(Layout(*key, census=row.citations))
        layout = self.layouts[code]
        if old >= WHOLE or self.layouts[old].width != layout.width:
            self.starts[position] = len(self.numbers)  # a first or wider row: at the end
            self.numbers.extend(row.values.values())
            for parts in row.breakdowns.values():
                self.numbers.extend(parts.values())
        else:
            at = self.starts[position]
            numbers = [*row.values.values()]
            for parts in row.breakdowns.values():
                numbers += parts.values()
            self.numbers[at : at + len(numbers)] = array("d", numbers)
        self.codes[position] = code
        self._digests[position] = int(row.inputs, 16) if row.inputs else 0
        if row.session is not None or position < len(self._session_codes):
            self._keep_session(position, row.session)

    def _keep_session(self, position: int, session: str | None) -> None:
        code = 0
        if session is not None:
            code = self._session_index.setdefault(session, len(self._sessions))
            if code == len(self._sessions):
                self._sessions.append(session)
        missing = position + 1 - len(self._session_codes)
        if missing > 0:
            self._session_codes.extend(itertools.repeat(0, missing))
        self._session_codes[position] = code

    def _spool(self, position: int, row: RowResult) -> None:
        """Put ``row``'s shown parts in the spool and keep where they are."""
        assert self.spool is not None, "only a store with a spool spools rows"
        try:
            at, length = self.spool.put(_shown_parts(row, NOTHING))
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            raise SpoolError(
                f"pytest-ragmetrics: row {row.id!r}: its evidence, fields, details or output "
                f"cannot be kept in the rows' spool ({type(error).__name__}: {error}); record "
                "plain data there (dicts, lists, strings, numbers), as pytest-xdist needs too"
            ) from error
        missing = position + 1 - len(self._spool_at)
        if missing > 0:
            self._spool_at.extend(itertools.repeat(0, missing))
            self._spool_length.extend(itertools.repeat(0, missing))
        self._spool_at[position] = at
        self._spool_length[position] = length


T = TypeVar("T")


class MadeOnRead(Sequence[T]):
    """A sequence whose items are made when read, not kept (``StoredRows``, and the report
    model's ``RowViews``): equal to any sequence of equal items, as the tuple or list it
    stands for would be, and so not hashable."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} rows)"


class StoredRows(MadeOnRead["RowResult"]):
    """The rows of a summary that some test ran, in dataset order, as ``RowResult``
    objects made on access from their ``RowStore`` (``RowStore.row``, finished: with
    their ``errors`` flag)."""

    def __init__(self, store: RowStore, order: array[int], shown: bool = True) -> None:
        self._store = store
        self._order = order  # positions in the store
        self._shown = shown  # with the spooled rows' shown parts

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> RowResult: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[RowResult]: ...

    def __getitem__(self, index: int | slice) -> RowResult | Sequence[RowResult]:
        if isinstance(index, slice):
            return StoredRows(self._store, self._order[index], self._shown)
        return self._store.row(self._order[index], True, self._shown)

    def __iter__(self) -> Iterator[RowResult]:
        row, shown = self._store.row, self._shown
        for position in self._order:
            yield row(position, True, shown)

    def plain(self) -> StoredRows:
        """The same rows without their spooled shown parts (evidence, details, fields,
        output: ``SHOWN_PARTS``), the spool not read: for readers of their numbers,
        statuses, censuses and sessions. Rows kept whole come as they are."""
        return StoredRows(self._store, self._order, shown=False)

    def by_id(self) -> StoredRows:
        """The same rows ordered by id (rows of one id in their order here): what
        ``sorted(rows, key=lambda row: row.id)`` gives, with no row made. Rows already in
        id order (a dataset numbered in order) are not sorted: a sort's keys would be every
        id as a string at once."""
        store = self._store
        if all(a <= b for a, b in itertools.pairwise(map(store.id_of, self._order))):
            return self
        return StoredRows(store, array("q", sorted(self._order, key=store.id_of)), self._shown)

    def sessions(self, metric: str | None = None, breakdown: str | None = None) -> list[str | None]:
        """The session of each row that has the value ``metric``, or the breakdown
        ``breakdown``, in order: what ``[row.session for row in rows if metric in
        row.values]`` gives (``breakdown in row.breakdowns`` for a breakdown), no row made
        and the spool not read."""
        store = self._store
        if metric is not None:
            has = [metric == ERRORS or metric in layout.names for layout in store.layouts]
        else:
            has = [_place(layout, breakdown or "") is not None for layout in store.layouts]
        found = []
        for position in self._order:
            code = store.codes[position]
            if code >= WHOLE:
                row = store.whole[code - WHOLE]
                if (metric in row.values) if metric is not None else (breakdown in row.breakdowns):
                    found.append(row.session)
            elif has[code]:
                found.append(store.session_of(position))
        return found

    def column(self, metric: str) -> list[float]:
        """The values of ``metric`` of the rows that have it, in order: what
        ``[row.values[metric] for row in rows if metric in row.values]`` gives."""
        store, numbers = self._store, self._store.numbers
        offsets = [_offset(layout.names, metric) for layout in store.layouts]
        found = []
        for position in self._order:
            code = store.codes[position]
            if code >= WHOLE:
                values = store.whole[code - WHOLE].values
                if metric in values:
                    found.append(values[metric])
            elif metric == ERRORS:
                found.append(0.0)
            elif (offset := offsets[code]) >= 0:
                found.append(numbers[store.starts[position] + offset])
        return found

    def metric_names(self) -> set[str]:
        """Every metric some row has a value of (``errors`` among them)."""
        store = self._store
        codes = {code for code in map(store.codes.__getitem__, self._order) if code < WHOLE}
        names = {ERRORS} if codes else set()
        for code in codes:
            names.update(store.layouts[code].names)
        for row in self._kept_rows():
            names.update(row.values)
        return names

    def breakdown_names(self) -> set[str]:
        """Every breakdown some row has."""
        store = self._store
        codes = {code for code in map(store.codes.__getitem__, self._order) if code < WHOLE}
        names = {name for code in codes for name, _ in store.layouts[code].parts}
        for row in self._kept_rows():
            names.update(row.breakdowns)
        return names

    def breakdowns_of(self, name: str) -> Iterator[Mapping[str, float]]:
        """The breakdown ``name`` of each row that has it, in order, one at a time: what
        ``(row.breakdowns[name] for row in rows if name in row.breakdowns)`` gives."""
        store, numbers = self._store, self._store.numbers
        places = [_place(layout, name) for layout in store.layouts]
        for position in self._order:
            code = store.codes[position]
            if code >= WHOLE:
                breakdowns = store.whole[code - WHOLE].breakdowns
                if name in breakdowns:
                    yield breakdowns[name]
            elif (place := places[code]) is not None:
                offset, parts = place
                at = store.starts[position] + offset
                yield dict(zip(parts, numbers[at : at + len(parts)], strict=True))

    def coverage(self, tests: Sequence[str]) -> dict[str, int]:
        """How many of the rows each of ``tests`` ran."""
        store = self._store
        by_code: dict[int, int] = {}
        for position in self._order:
            code = store.codes[position]
            if code < WHOLE:
                by_code[code] = by_code.get(code, 0) + 1
        whole = [row.tests for row in self._kept_rows()]
        return {
            test: sum(count for code, count in by_code.items() if test in store.layouts[code].tests)
            + sum(test in ran for ran in whole)
            for test in tests
        }

    def whole_rows(self, having: str | None = None) -> Iterator[RowResult]:
        """The rows kept whole and the spooled ones (read back from the spool), in order:
        the only ones that can have errors, details, evidence, shown fields, outputs or
        sessions. ``having``: one of ``SHOWN_PARTS``, to leave out the spooled rows
        without it (their records not read); the rows kept whole all come."""
        store = self._store
        layouts = store.layouts
        wanted = _part_bit(having) if having is not None else -1
        for position in self._order:
            code = store.codes[position]
            if code >= WHOLE:
                yield store.whole[code - WHOLE]
            elif layouts[code].spooled & wanted:
                yield store.row(position, finished=True)

    def errored(self) -> int:
        """How many rows have errors: only rows kept whole in memory can, so the spool
        is not read."""
        return sum(1 for row in self._kept_rows() if row.errors)

    def _kept_rows(self) -> Iterator[RowResult]:
        """The rows kept whole in memory, in order (not the spooled ones: what they have
        beyond their numbers is never a value, breakdown, test or error)."""
        store = self._store
        for position in self._order:
            code = store.codes[position]
            if code >= WHOLE:
                yield store.whole[code - WHOLE]

    # The readers that count or test every row read the layouts, each counted once, and
    # the rows kept whole: no ``RowResult`` is made for a plain row.

    def layout_counts(self) -> list[tuple[Layout, int]]:
        """Each layout the plain rows have, with how many of the rows have it."""
        store = self._store
        codes = store.codes
        counts: dict[int, int] = {}
        for position in self._order:
            code = codes[position]
            if code < WHOLE:
                counts[code] = counts.get(code, 0) + 1
        return [(store.layouts[code], count) for code, count in counts.items()]

    def statuses(self) -> dict[str, int]:
        """How many rows have each status (``RowResult.status``), for the statuses some
        row has: a plain row has no errors, so it is ``failed`` when a test's verdict on
        it failed (its layout's ``failed``), else ``passed``."""
        found: dict[str, int] = {}
        for layout, count in self.layout_counts():
            status = "failed" if layout.failed else "passed"
            found[status] = found.get(status, 0) + count
        for row in self._kept_rows():
            found[row.status] = found.get(row.status, 0) + 1
        return found

    def all_digested(self) -> bool:
        """Whether every row has an inputs digest: ``all(row.inputs for row in rows)``."""
        return all(layout.digested for layout, _ in self.layout_counts()) and all(
            row.inputs for row in self._kept_rows()
        )

    def censuses(self) -> list[tuple[Mapping[str, int], int]]:
        """Each row's citation census, counted: a plain row's is its layout's, shared by
        every row of it; each row kept whole counts on its own; rows without one are
        left out."""
        found: list[tuple[Mapping[str, int] | None, int]] = [
            (layout.census, count) for layout, count in self.layout_counts()
        ]
        found += [(row.citations, 1) for row in self._kept_rows()]
        return [(census, count) for census, count in found if census is not None]


class RowsById(Mapping[str, "RowResult"]):
    """The rows of a ``StoredRows`` by id, each made when read and not kept: what ``{row.id:
    row for row in rows}`` gives to the gates that pair a run's rows with a stored
    baseline's or a reference system's, without a million rows made at once. An id is
    looked up in the store's own table of ids; which rows belong is a byte a store
    position. ``select`` gives the rows of some ids, in their order, as a ``StoredRows``."""

    def __init__(self, rows: StoredRows) -> None:
        self._rows = rows
        store = rows._store
        self._in = bytearray(len(store))
        for position in rows._order:
            self._in[position] = 1

    def _position(self, row_id: object) -> int | None:
        if not isinstance(row_id, str):
            return None
        store = self._rows._store
        position = store._ids.position(row_id)
        return position if position != -1 and self._in[position] else None

    def __getitem__(self, row_id: str) -> RowResult:
        position = self._position(row_id)
        if position is None:
            raise KeyError(row_id)
        return self._rows._store.row(position, True, self._rows._shown)

    def __contains__(self, row_id: object) -> bool:
        return self._position(row_id) is not None

    def __iter__(self) -> Iterator[str]:
        return map(self._rows._store.id_of, self._rows._order)

    def __len__(self) -> int:
        return len(self._rows)

    def select(self, ids: Iterable[str]) -> StoredRows:
        """The rows of ``ids`` (each one of these rows), in that order."""
        positions = array("q")
        for row_id in ids:
            position = self._position(row_id)
            if position is None:
                raise KeyError(row_id)
            positions.append(position)
        return StoredRows(self._rows._store, positions, self._rows._shown)


def _offset(names: tuple[str, ...], metric: str) -> int:
    return names.index(metric) if metric in names else -1


def _place(layout: Layout, name: str) -> tuple[int, tuple[str, ...]] | None:
    """Where the breakdown ``name`` of a row of ``layout`` starts among its numbers, and
    its parts; ``None`` when such rows do not have it."""
    offset = len(layout.names)
    for breakdown, parts in layout.parts:
        if breakdown == name:
            return offset, parts
        offset += len(parts)
    return None
