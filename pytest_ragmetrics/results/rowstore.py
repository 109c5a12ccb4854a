"""The rows of one eval as the controller gathers them: packed columns, not objects.

The controller keeps every row it gathers to the end of the run, for the aggregates, the
gates and the reports. As ``RowResult`` objects a row cost about 1 KB (its slotted record,
a dict of values and one of breakdowns, a float object per number, its id and digest as
strings, its entry in an index by id), a million rows a gigabyte. Most rows hold nothing
but numbers, shared test names and a shared citation census, so ``RowStore`` keeps those
"plain" rows as columns: the ids packed (``PackedStrings``), every number in one
``array('d')``, and per row its index, its inputs digest as an integer and a code for
its *layout* (``Layout``: which metrics and breakdown parts its numbers are, in the order
they were recorded, and its shared test names and census), about 100 bytes a row. A row
with anything else (an error, evidence, details, shown fields, an output, a session, a
value that is not a float) stays a ``RowResult``, as before.

Merging is exactly ``RowResult.merge``: a row that gets a further payload is made into a
``RowResult`` (``row``), merged, and packed again if it is still plain. Readers get a
``RowResult`` made on access (``StoredRows``), equal to the one the row would have been;
it is theirs, so changing it changes nothing stored. The few readers that go over every
row of a big eval (the aggregates) read the columns instead (``StoredRows.column``,
``StoredRows.breakdowns_of``), in the same order, so every aggregate is bit-identical.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from pytest_ragmetrics.data.packed import PackedStrings
from pytest_ragmetrics.metrics.catalog import ERRORS
from pytest_ragmetrics.results.records import NOTHING, RowResult

if TYPE_CHECKING:
    from pytest_ragmetrics.results.records import RowPayload

# Codes from WHOLE up are rows kept whole: the code minus WHOLE is the row's place in
# ``RowStore.whole`` (a list, not a dict by position: no int object and entry a row).
WHOLE = 0x80000000
_UNSET = 0xFFFFFFFF  # a row being added, neither packed nor kept yet
_EMPTY_SLOT = -1
_DIGEST = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Layout:
    """What a plain row's numbers are and what it shares with rows like it.

    ``names``: its metrics, in the order its values were recorded; ``parts``: each
    breakdown's name and parts, in order; their numbers follow the values in the store.
    ``tests`` and ``failed`` are the shared sets of test names, ``census_key`` the
    citation census as items (``census`` the shared read-only mapping, not compared),
    ``digested`` whether the row has an inputs digest.
    """

    names: tuple[str, ...]
    parts: tuple[tuple[str, tuple[str, ...]], ...]
    tests: frozenset[str]
    failed: frozenset[str]
    census_key: tuple[tuple[str, int], ...] | None
    digested: bool
    census: Mapping[str, int] | None = field(default=None, compare=False)

    @property
    def width(self) -> int:
        """How many numbers a row of this layout holds."""
        return len(self.names) + sum(len(parts) for _, parts in self.parts)

    @property
    def ran(self) -> bool:
        return bool(self.tests)


# What tells one layout from another (``Layout`` without its census mapping): the key a
# store finds a row's layout by, with no ``Layout`` made for each row it packs.
LayoutKey = tuple[
    tuple[str, ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    frozenset[str],
    frozenset[str],
    tuple[tuple[str, int], ...] | None,
    bool,
]


def _plain_layout(row: RowResult, nothing: Mapping[str, object]) -> LayoutKey | None:
    """The layout of ``row``, as its key, if it holds nothing but floats, shared sets and
    a digest; ``None`` when it must stay whole. ``nothing``: the shared empty mapping of a
    row without evidence, details or shown fields (``records.NOTHING``)."""
    if (
        row.errors
        or row.evidence is not nothing
        or row.details is not nothing
        or row.fields is not nothing
        or row.output is not None
        or row.session is not None
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
    )


_FLOAT = frozenset({float})


def _parts_are_floats(breakdowns: Mapping[str, Mapping[str, float]]) -> bool:
    return all({*map(type, parts.values())} <= _FLOAT for parts in breakdowns.values())


class RowStore:
    """The rows of one eval in the order they first arrived, plain ones packed.

    A row's place (its position) never changes; ``find`` looks a row up by id in an
    open-addressing table of positions keyed by the id's hash, so no string or int object
    is kept per row.
    """

    def __init__(self) -> None:
        self._ids = PackedStrings()
        self._hashes = array("q")
        self._table = array("i", [_EMPTY_SLOT]) * 8  # positions: 4 bytes a slot
        self.indexes = array("q")
        self.codes = array("I")  # the row's layout, or WHOLE + its place in ``whole``
        self.starts = array("Q")  # where its numbers start in ``numbers``
        self.numbers = array("d")
        self._digests = array("Q")
        self.layouts: list[Layout] = []
        self._layout_codes: dict[LayoutKey, int] = {}
        self.whole: list[RowResult] = []

    def __len__(self) -> int:
        return len(self.indexes)

    def add(self, payload: RowPayload, shown: bool) -> None:
        """Merge one row payload (``RowResult.merge``), its evidence and shown fields only
        when ``shown``."""
        key = hash(payload.row)
        position, slot = self._find(payload.row, key)
        if position == _EMPTY_SLOT:
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

    def row(self, position: int, finished: bool = False) -> RowResult:
        """The row at ``position`` as a ``RowResult`` of its own (the kept one for a row
        kept whole); ``finished``: with the ``errors`` flag a summary adds (0: a plain
        row has no errors)."""
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
        return RowResult(
            self.id_of(position),
            self.indexes[position],
            values,
            breakdowns,
            tests=layout.tests,
            inputs=format(self._digests[position], "016x") if layout.digested else "",
            citations=layout.census,
            failed=layout.failed,
        )

    def id_of(self, position: int) -> str:
        return self._ids[position]

    def ran(self, position: int) -> bool:
        code = self.codes[position]
        return self.whole[code - WHOLE].ran if code >= WHOLE else self.layouts[code].ran

    def whole_positions(self) -> list[int]:
        """The positions of the rows kept whole."""
        return [position for position, code in enumerate(self.codes) if code >= WHOLE]

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

    def _find(self, row_id: str, key: int) -> tuple[int, int]:
        """The position of the row ``row_id`` (``_EMPTY_SLOT`` if none) and its slot."""
        table, mask = self._table, len(self._table) - 1
        slot = key & mask
        while True:
            position = table[slot]
            if position == _EMPTY_SLOT:
                return position, slot
            if self._hashes[position] == key and self.id_of(position) == row_id:
                return position, slot
            slot = (slot + 1) & mask

    def _append(self, row: RowResult, key: int, slot: int) -> None:
        position = len(self.indexes)
        self._ids.append(row.id)
        self._hashes.append(key)
        self.indexes.append(row.index)
        self.codes.append(_UNSET)
        self.starts.append(0)
        self._digests.append(0)
        self._table[slot] = position
        self._put(position, row)
        if 2 * len(self.indexes) > len(self._table):
            self._grow()

    def _put(self, position: int, row: RowResult) -> None:
        """Keep ``row`` at ``position``: packed if it is plain, else whole."""
        key = _plain_layout(row, NOTHING)
        old = self.codes[position]
        if key is None:  # a new row, or a packed one that an error or evidence made whole
            self.codes[position] = WHOLE + len(self.whole)
            self.whole.append(row)
            return
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

    def _grow(self) -> None:
        """Twice the slots, every row placed again by its kept hash."""
        table = array("i", [_EMPTY_SLOT]) * (2 * len(self._table))
        mask = len(table) - 1
        for position, key in enumerate(self._hashes):
            slot = key & mask
            while table[slot] != _EMPTY_SLOT:
                slot = (slot + 1) & mask
            table[slot] = position
        self._table = table


class StoredRows(Sequence["RowResult"]):
    """The rows of a summary that some test ran, in dataset order, as ``RowResult``
    objects made on access from their ``RowStore`` (``RowStore.row``, finished: with
    their ``errors`` flag)."""

    def __init__(self, store: RowStore, order: array[int]) -> None:
        self._store = store
        self._order = order  # positions in the store

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> RowResult: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[RowResult]: ...

    def __getitem__(self, index: int | slice) -> RowResult | Sequence[RowResult]:
        if isinstance(index, slice):
            return StoredRows(self._store, self._order[index])
        return self._store.row(self._order[index], finished=True)

    def __iter__(self) -> Iterator[RowResult]:
        row = self._store.row
        for position in self._order:
            yield row(position, finished=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoredRows({len(self)} rows)"

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
        for row in self.whole_rows():
            names.update(row.values)
        return names

    def breakdown_names(self) -> set[str]:
        """Every breakdown some row has."""
        store = self._store
        codes = {code for code in map(store.codes.__getitem__, self._order) if code < WHOLE}
        names = {name for code in codes for name, _ in store.layouts[code].parts}
        for row in self.whole_rows():
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
        whole = [row.tests for row in self.whole_rows()]
        return {
            test: sum(count for code, count in by_code.items() if test in store.layouts[code].tests)
            + sum(test in ran for ran in whole)
            for test in tests
        }

    def whole_rows(self) -> Iterator[RowResult]:
        """The rows kept whole, in order: the only ones that can have errors, details,
        evidence, shown fields, outputs or sessions."""
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
        for row in self.whole_rows():
            found[row.status] = found.get(row.status, 0) + 1
        return found

    def all_digested(self) -> bool:
        """Whether every row has an inputs digest: ``all(row.inputs for row in rows)``."""
        return all(layout.digested for layout, _ in self.layout_counts()) and all(
            row.inputs for row in self.whole_rows()
        )

    def censuses(self) -> list[tuple[Mapping[str, int], int]]:
        """Each row's citation census, counted: a plain row's is its layout's, shared by
        every row of it; each row kept whole counts on its own; rows without one are
        left out."""
        found: list[tuple[Mapping[str, int] | None, int]] = [
            (layout.census, count) for layout, count in self.layout_counts()
        ]
        found += [(row.citations, 1) for row in self.whole_rows()]
        return [(census, count) for census, count in found if census is not None]


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
