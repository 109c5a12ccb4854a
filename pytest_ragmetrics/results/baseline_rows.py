"""A stored baseline's rows as the run holds them: packed columns, each row made on read.

A baseline file holds every row's digest of its inputs, its values and sufficient
statistics (``StoredRow``). Read into dicts, a row cost about 2 KB (its id, its digest,
a dict of values and one per breakdown, a float object per number): a million stored
rows, two gigabytes held to the end of the run beside the rows of the run itself.
``BaselineRows`` keeps them as the run's own row store keeps plain rows
(``results.rowstore``): the ids packed end to end (``PackedStrings``), every number in
one ``array('d')``, and per row where its numbers start, its digest as an integer and a
code for its *shape* (which values and breakdown parts, in the file's order, and its
state), some 40 bytes a row besides its numbers.

It is a ``Mapping[str, StoredRow]``: every reader sees the ``StoredRow`` it would have
seen, equal to the one the file's entry was, made when read and not kept. A row is found
by its id in an open-addressing table of positions keyed by the id's hash
(``data.packed.IdTable``, as the run's row store finds its rows; a binary search over the
packed ids decoded some twenty of them a look-up, seconds at a million rows). Its ids
iterate in order: the file stores them sorted (``render_baseline``), and a file whose ids
are not (a hand-edited one) is put in order once, when read. ``select`` gives the rows of
many ids as a sequence made on read, what a paired comparison walks.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from pytest_ragmetrics.data.packed import IdTable
from pytest_ragmetrics.results.rowstore import MadeOnRead

# A digest that fits the packed column: what ``input_digest`` writes.
_DIGEST = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class StoredRow:
    """One row of a stored baseline: its inputs' digest, values and sufficient statistics."""

    inputs: str
    values: Mapping[str, float]
    breakdowns: Mapping[str, Mapping[str, float]]
    state: str | None = None  # "idk", "supported" or "other" (pytest_ragmetrics.results.compare)

    def as_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"inputs": self.inputs, "values": dict(self.values)}
        if self.breakdowns:
            entry["breakdowns"] = {name: dict(parts) for name, parts in self.breakdowns.items()}
        if self.state is not None:
            entry["state"] = self.state
        return entry


# What tells one stored row's shape from another's: its values' names, each breakdown's
# name and parts, its state.
_Shape = tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...], str | None]


class RepeatedIds(ValueError):
    """Row ids a baseline file holds more than once, each with how many times."""

    def __init__(self, repeated: Mapping[str, int]) -> None:
        self.repeated = dict(repeated)
        super().__init__(", ".join(f"{key!r} ({count} times)" for key, count in repeated.items()))


class BaselineRows(Mapping[str, StoredRow]):
    """A stored baseline's rows by id, packed; ``add`` each row in the file's order, then
    ``finish`` once before reading (it puts the ids in order and refuses repeated ones)."""

    def __init__(self) -> None:
        self._ids = IdTable()  # the ids, by position and found by value
        self._repeated: dict[str, int] = {}  # an id met again, and how many times in all
        self._starts = array("Q")
        self._codes = array("I")
        self._numbers = array("d")
        self._digests = array("Q")
        self._other_digests: dict[int, str] = {}  # a digest that is not 16 hex digits
        self._shapes: list[_Shape] = []
        self._shape_codes: dict[_Shape, int] = {}
        self._last: str | None = None
        self._in_order = True  # every id so far greater than the one before it
        self._order: array[int] | None = None  # the positions by id, when not in order

    def add(self, row_id: str, row: StoredRow) -> None:
        """Keep ``row`` (a row of the file, checked) as the row ``row_id``."""
        key = hash(row_id)
        found, slot = self._ids.find(row_id, key)
        if found != -1:  # refused by ``finish``: which of them is the reference is unknown
            self._repeated[row_id] = self._repeated.get(row_id, 1) + 1
            return
        position = len(self._codes)
        breakdowns = row.breakdowns
        shape: _Shape = (
            tuple(row.values),
            tuple((name, tuple(parts)) for name, parts in breakdowns.items()),
            row.state,
        )
        code = self._shape_codes.get(shape)
        if code is None:
            code = self._shape_codes[shape] = len(self._shapes)
            self._shapes.append(shape)
        self._ids.append(row_id, key, slot)
        self._codes.append(code)
        self._starts.append(len(self._numbers))
        self._numbers.extend(row.values.values())
        for parts in breakdowns.values():
            self._numbers.extend(parts.values())
        if _DIGEST.fullmatch(row.inputs):
            self._digests.append(int(row.inputs, 16))
        else:
            self._digests.append(0)
            self._other_digests[position] = row.inputs
        if self._last is not None and row_id <= self._last:
            self._in_order = False
        self._last = row_id

    def finish(self) -> None:
        """Put the ids in order if the file did not; ``RepeatedIds`` if an id is there
        more than once (which of its rows is the reference cannot be told)."""
        self._last = None
        if self._repeated:
            raise RepeatedIds(dict(sorted(self._repeated.items())))
        if not self._in_order:
            ids = self._ids.strings
            self._order = array("q", sorted(range(len(ids)), key=ids.__getitem__))

    def __len__(self) -> int:
        return len(self._codes)

    def __iter__(self) -> Iterator[str]:
        """The ids in order (``sorted``'s), as the file writes them."""
        ids = self._ids.strings
        return iter(ids) if self._order is None else map(ids.__getitem__, self._order)

    def __contains__(self, row_id: object) -> bool:
        return isinstance(row_id, str) and self._position(row_id) is not None

    def __getitem__(self, row_id: str) -> StoredRow:
        position = self._position(row_id) if isinstance(row_id, str) else None
        if position is None:
            raise KeyError(row_id)
        return self._row(position)

    def in_order(self) -> Iterator[tuple[str, StoredRow]]:
        """Each id and its row, in id order, each row made when read: one walk over the
        columns, no look-up."""
        ids = self._ids.strings
        positions = self._order if self._order is not None else range(len(ids))
        return ((ids[position], self._row(position)) for position in positions)

    def select(self, ids: Iterable[str]) -> Sequence[StoredRow]:
        """The rows of ``ids`` (each one this baseline holds), in that order, each made
        when read: what a paired comparison walks, not a list of them all at once."""
        positions = array("q")
        for row_id in ids:
            position = self._position(row_id)
            if position is None:
                raise KeyError(row_id)
            positions.append(position)
        return _Selected(self, positions)

    def _position(self, row_id: str) -> int | None:
        position = self._ids.position(row_id)
        return None if position == -1 else position

    def _row(self, position: int) -> StoredRow:
        names, parts, state = self._shapes[self._codes[position]]
        numbers = self._numbers
        at = self._starts[position]
        end = at + len(names)
        values = dict(zip(names, numbers[at:end], strict=True))
        breakdowns = {}
        for name, keys in parts:
            at, end = end, end + len(keys)
            breakdowns[name] = dict(zip(keys, numbers[at:end], strict=True))
        inputs = self._other_digests.get(position)
        if inputs is None:
            inputs = format(self._digests[position], "016x")
        return StoredRow(inputs, values, breakdowns, state)


class _Selected(MadeOnRead[StoredRow]):
    """Stored rows at given positions, each made when read (``BaselineRows.select``)."""

    def __init__(self, rows: BaselineRows, positions: array[int]) -> None:
        self._rows = rows
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> StoredRow: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[StoredRow]: ...

    def __getitem__(self, index: int | slice) -> StoredRow | Sequence[StoredRow]:
        if isinstance(index, slice):
            return _Selected(self._rows, self._positions[index])
        return self._rows._row(self._positions[index])

    def __iter__(self) -> Iterator[StoredRow]:
        return map(self._rows._row, self._positions)
