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
