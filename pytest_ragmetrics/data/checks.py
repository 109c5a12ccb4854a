r"""From a record to a row: its text made safe, its fields checked, its id.

What makes a row bad, besides what kept its record from being read (``data.formats``) and
a field of the wrong type (``data.fields``):

* a string anywhere in the row, keys included, holding a lone surrogate (a ``\u``
  escape of half a character), which no UTF-8 report can hold; the row keeps it as escape
  text, and an id holding one is replaced;
* an id already taken by an earlier row of its system;
* no ``system`` in a dataset whose other rows name theirs.

A row's id is its ``id`` field; without one it is ``L<line>-<hash>``, the line number and
a short hash of the line's content. Ids are unique per ``system``: a dataset of several
systems (docs/metrics.md#3-comparing-systems) holds one row per (system, id), and once any
row names its system, every row must. A later row with an id already taken becomes
``<id>@L<line>``; made-up ids never take an id that any row gives itself (``~2`` is added
when one would).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.data.fields import is_int, shown, validate_fields
from pytest_ragmetrics.data.formats import Record
from pytest_ragmetrics.data.row import LoadedRow, Row
from pytest_ragmetrics.data.streams import Problem

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


def _fallback_id(record: Record) -> str:
    digest = hashlib.sha1(record.text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"L{record.line}-{digest}"


def _given_id(data: Mapping[str, Any] | None) -> tuple[str | None, list[Problem]]:
    """The row's own id, if it has a usable one, and what is wrong with it."""
    if data is None or "id" not in data:
        return None, []
    value = data["id"]
    if isinstance(value, str) and value.strip():
        return (None if _lone_surrogate(value) else value), []  # the text check names it
    if is_int(value):
        return str(value), []
    return None, [Problem("id", f"expected a non-empty string, got {shown(value)}")]


def _unused(candidate: str, taken: set[str]) -> str:
    """``candidate``, or ``candidate~2``, ``~3``... if a row already has it."""
    unique, n = candidate, 1
    while unique in taken:
        n += 1
        unique = f"{candidate}~{n}"
    return unique


# Not frozen, as ``formats.Record``: one is made for every row read and thrown away once
# the row is made; nothing changes it.
@dataclass(slots=True)
class Checked:
    record: Record
    data: dict[str, Any] | None
    given_id: str | None
    problems: list[Problem]


def check(record: Record) -> Checked:
    given_id, id_problems = _given_id(record.data)
    problems = [*record.problems, *id_problems]
    data = record.data
    if data is not None:
        data, text_problems = _valid_text(data, record.text)
        problems += text_problems
        problems += validate_fields(data)
    return Checked(record, data, given_id, problems)


def system_of(checked: Checked) -> str | None:
    system = (checked.data or {}).get("system")
    return system if isinstance(system, str) else None


@dataclass(slots=True)  # not frozen: one a row of every scan (see ``Checked``)
class Ident:
    """What a row's id depends on: its number, the id it gives itself, its system, and
    the id made up for it (``L<line>-<hash>``) when it gives none."""

    line: int
    given_id: str | None
    system: str | None
    made_up: str | None


def ident(checked: Checked) -> Ident:
    given = checked.given_id
    made_up = _fallback_id(checked.record) if given is None else None
    return Ident(checked.record.line, given, system_of(checked), made_up)


def ident_of(record: Record) -> Ident:
    """``ident(check(record))`` without checking the row's fields, which its id does not
    depend on: what a scan of the dataset keeps of each row. A row whose text holds a
    lone surrogate's escape takes the whole check, since escaping it changes the fields
    the id is read from."""
    data = record.data
    if data is not None and _SURROGATE_ESCAPE.search(record.text):
        return ident(check(record))
    given, _ = _given_id(data)
    system = data.get("system") if data is not None else None
    made_up = _fallback_id(record) if given is None else None
    return Ident(record.line, given, system if isinstance(system, str) else None, made_up)


def assign_ids(idents: list[Ident], unit: str) -> Iterator[tuple[str, tuple[Problem, ...]]]:
    """Each row's id, unique per system, and the problem with its own id if it has one.
    A row's own id is kept unless an earlier row of its system has it; made-up ids
    (``L<line>-<hash>``, ``<id>@L<line>``) never take an id that any row of the dataset
    gives itself, which is why every row's ident is known first. ``unit`` names what a
    row's number counts (a Parquet row's is its row, not a line)."""
    taken = {i.given_id for i in idents if i.given_id is not None}
    of_systems = {i.given_id for i in idents if i.given_id is not None and i.system}
    # By id, or by (system, id) for a row of a system: a tuple per row of a dataset without
    # systems was a third of a million-row scan's peak memory.
    first_line: dict[str | tuple[str, str], int] = {}
    for i in idents:
        key = (i.given_id or "") if i.system is None else (i.system, i.given_id or "")
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


def loaded_row(
    checked: Checked,
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
