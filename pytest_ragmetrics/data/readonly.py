"""A read-only view of a row, for code that must not change it: a metric declared in user
code (``metrics.custom``) is given one, so that what it does to the row cannot change
the numbers of the row's other metrics, nor differ between runs with and without xdist
(where the tests of one row may share its ``Row`` or not).

The view is built once per row: its dicts and lists are copied into ``ReadOnlyDict`` and
``ReadOnlyList``, subclasses of ``dict`` and ``list``, so that the metric reads them as
it would the row's own (``isinstance``, ``json.dumps``, ``==`` and slicing are the
same), and every method that would change one raises ``ReadOnlyRowError`` naming the
field and the method. A copy (``list(row.gold)``, ``dict(row.data)``, ``copy.deepcopy``)
is a plain, mutable one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn, SupportsIndex

from pytest_ragmetrics.data.row import Row


class ReadOnlyRowError(TypeError):
    """A metric tried to change the row it was given."""


def _refused(change: str) -> NoReturn:
    """Refuse ``change`` (``row['gold'].append()``)."""
    raise ReadOnlyRowError(
        f"{change} would change the row, which a metric may only read (every other metric "
        "of the row reads it too); work on a copy: list(...), dict(...) or copy.deepcopy(...)"
    )


class ReadOnlyList(list[Any]):
    """A list of a row's data that refuses every change (``ReadOnlyRowError``)."""

    __slots__ = ("_path",)
    _path: str

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return (list, (list(self),))  # a copy or a pickle is a plain list

    def __setitem__(self, index: Any, value: Any) -> None:
        _refused(f"setting {self._path}[{index!r}]")

    def __delitem__(self, index: Any) -> None:
        _refused(f"deleting {self._path}[{index!r}]")

    def __iadd__(self, other: Iterable[Any]) -> NoReturn:  # type: ignore[misc]
        _refused(f"{self._path} += ...")

    def __imul__(self, other: SupportsIndex) -> NoReturn:
        _refused(f"{self._path} *= ...")

    def append(self, value: Any) -> None:
        _refused(f"{self._path}.append()")

    def extend(self, values: Iterable[Any]) -> None:
        _refused(f"{self._path}.extend()")

    def insert(self, index: SupportsIndex, value: Any) -> None:
        _refused(f"{self._path}.insert()")

    def remove(self, value: Any) -> None:
        _refused(f"{self._path}.remove()")

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        _refused(f"{self._path}.pop()")

    def clear(self) -> None:
        _refused(f"{self._path}.clear()")

    def sort(self, *args: Any, **kwargs: Any) -> None:
        _refused(f"{self._path}.sort()")

    def reverse(self) -> None:
        _refused(f"{self._path}.reverse()")


class ReadOnlyDict(dict[str, Any]):
    """A dict of a row's data that refuses every change (``ReadOnlyRowError``)."""

    __slots__ = ("_path",)
    _path: str

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return (dict, (dict(self),))  # a copy or a pickle is a plain dict

    def __setitem__(self, key: Any, value: Any) -> None:
        _refused(f"setting {self._path}[{key!r}]")

    def __delitem__(self, key: Any) -> None:
        _refused(f"deleting {self._path}[{key!r}]")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused(f"{self._path} |= ...")

    def pop(self, *args: Any) -> NoReturn:
        _refused(f"{self._path}.pop()")

    def popitem(self) -> NoReturn:
        _refused(f"{self._path}.popitem()")

    def clear(self) -> None:
        _refused(f"{self._path}.clear()")

    def update(self, *args: Any, **kwargs: Any) -> None:
        _refused(f"{self._path}.update()")

    def setdefault(self, key: Any, default: Any = None) -> NoReturn:
        _refused(f"{self._path}.setdefault()")


def _frozen(value: Any, path: str) -> Any:
    """``value`` with its dicts and lists copied read-only, the leaves shared."""
    if isinstance(value, dict):
        items = ((key, _frozen(item, f"{path}[{key!r}]")) for key, item in value.items())
        frozen_dict = ReadOnlyDict(items)
        frozen_dict._path = path
        return frozen_dict
    if isinstance(value, list):
        frozen_list = ReadOnlyList(_frozen(item, f"{path}[{i}]") for i, item in enumerate(value))
        frozen_list._path = path
        return frozen_list
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # not a named tuple
        return tuple(_frozen(item, f"{path}[{i}]") for i, item in enumerate(value))
    return value


def read_only(row: Row) -> Row:
    """``row`` with its data read-only (``row.data``, ``row.gold``, ``row["field"]`` and
    everything they hold): built once per row, shared by the metrics that get it."""
    data = ReadOnlyDict((key, _frozen(value, f"row[{key!r}]")) for key, value in row.data.items())
    data._path = "row.data"
    return Row(row.id, row.source, row.line, row.index, data, row.keyed, row.proxy)
