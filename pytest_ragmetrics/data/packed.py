"""Many short strings kept as one block of bytes, for what a run holds per row.

A row id of 8 ASCII characters is a 57-byte ``str`` object plus an 8-byte pointer; a
million of them, allocated one by one among the other objects of a dataset's scan, also
keep the allocator's pages of those objects from being returned. ``PackedStrings`` keeps
their UTF-8 end to end (lone surrogates, which JSON can hold, kept as they are) and where
each ends: 16 bytes a string of 8 characters, one string made on each access.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload


class PackedStrings(Sequence[str]):
    """A sequence of strings held as UTF-8 bytes; ``append`` adds one at the end."""

    __slots__ = ("_data", "_ends")

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("Q")
        for string in strings:
            self.append(string)

    def append(self, string: str) -> None:
        self._data += string.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> PackedStrings: ...

    def __getitem__(self, index: int | slice) -> str | PackedStrings:
        if isinstance(index, slice):
            return PackedStrings(self[i] for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self._ends)
        end = self._ends[index]  # an IndexError past either end, as a tuple's
        start = self._ends[index - 1] if index else 0
        return self._data[start:end].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        data, start = self._data, 0
        for end in self._ends:
            yield data[start:end].decode("utf-8", "surrogatepass")
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedStrings):
            return self._ends == other._ends and self._data == other._data
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash((bytes(self._data), self._ends.tobytes()))

    def __repr__(self) -> str:
        shown = ", ".join(repr(string) for string in self[:3])
        return f"PackedStrings([{shown}{', ...' if len(self) > 3 else ''}], {len(self)} strings)"


class IdTable:
    """Distinct strings packed end to end (``strings``, a ``PackedStrings``), each found
    by value: an open-addressing table of positions keyed by the string's hash, at most
    half full, 12 to 20 bytes a string (its hash, and one or two 4-byte slots) and no
    ``str`` or ``int`` object kept a string. What the stores of rows by id use (the run's
    gathered rows, a stored baseline's rows)."""

    __slots__ = ("_hashes", "_table", "strings")

    def __init__(self) -> None:
        self.strings = PackedStrings()
        self._hashes = array("q")
        self._table = array("i", [-1]) * 8  # positions; -1: an empty slot

    def __len__(self) -> int:
        return len(self.strings)

    def find(self, string: str, key: int) -> tuple[int, int]:
        """The position of ``string`` (its hash ``key``), -1 if it is not here, and its
        slot: where it is, or the empty one ``append`` would give it."""
        table, hashes = self._table, self._hashes
        mask = len(table) - 1
        slot = key & mask
        while (position := table[slot]) != -1:
            if hashes[position] == key and self.strings[position] == string:
                return position, slot
            slot = (slot + 1) & mask
        return -1, slot

    def position(self, string: str) -> int:
        """The position of ``string``, -1 if it is not here."""
        return self.find(string, hash(string))[0]

    def append(self, string: str, key: int, slot: int) -> int:
        """Add ``string``, not here yet (``find`` gave ``slot``), at the next position."""
        position = len(self.strings)
        self.strings.append(string)
        self._hashes.append(key)
        self._table[slot] = position
        if 2 * len(self.strings) > len(self._table):
            self._grow()
        return position

    def _grow(self) -> None:
        """Twice the slots, every string placed again by its kept hash."""
        table = array("i", [-1]) * (2 * len(self._table))
        mask = len(table) - 1
        for position, key in enumerate(self._hashes):
            slot = key & mask
            while table[slot] != -1:
                slot = (slot + 1) & mask
            table[slot] = position
        self._table = table
