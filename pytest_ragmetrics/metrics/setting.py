"""A metric's settings table, declared with the metric: ``SettingsTable`` names the
``[settings.<name>]`` table of thresholds.toml, the frozen dataclass that holds its
defaults and checks its values, and which of its fields enter a baseline's signature.

thresholds.toml reads every declared table the same way (``SettingsTable.parse``): an
unknown key is refused with the known ones (and the one it is close to), a value of the
wrong type or out of range with the dataclass's own ``SettingError`` (or, for a type
the dataclass does not check itself, one made from its field's annotation). The error
names the table and the key (``[settings.bleu] tokenize: ...``); a metric function called
directly shows a ``SettingError`` with the metric's name.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class SettingError(ValueError):
    """A metric setting is wrong: ``key`` names it, ``problem`` says what is wrong and what
    to write instead. ``metric`` names whose setting it is, for the message; ``key`` is
    empty for a problem of the whole table (two settings that do not go together)."""

    def __init__(self, metric: str, key: str, problem: str) -> None:
        super().__init__(metric, key, problem)
        self.metric, self.key, self.problem = metric, key, problem

    def __str__(self) -> str:
        return f"{self.metric} {self.key}: {self.problem}" if self.key else self.problem


def whole_number(value: object, least: int) -> bool:
    """Whether ``value`` is an ``int`` (not a bool) of at least ``least``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def finite(value: object) -> bool:
    """Whether ``value`` is a real number (not a bool), neither NaN nor infinite: an
    infinite one would also make a baseline file's JSON invalid."""
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def changed_fields(settings: Any, default: Any) -> dict[str, Any]:
    """The fields of the dataclass ``settings`` whose values differ from ``default``'s."""
    return {
        field.name: getattr(settings, field.name)
        for field in dataclasses.fields(settings)
        if getattr(settings, field.name) != getattr(default, field.name)
    }


@dataclass(frozen=True)
class SettingsTable(Generic[T]):
    """The settings table a metric (or a family of metrics: ``em`` and ``f1`` share one)
    declares: read from ``[settings.<name>]`` of thresholds.toml into ``type``.

    ``type``: a frozen dataclass whose every field has a default (the settings of a run
    without the table); its ``__post_init__`` may check values and raise
    ``SettingError`` naming the key (any other ``ValueError`` is reported for the whole
    table). Values whose field is annotated ``bool``, ``int``, ``float``, ``str``, a
    ``Literal``, a ``tuple`` of those, or one of these or ``None``, are checked against
    the annotation too (a TOML array is read as a tuple). ``signed``: the fields that
    change the metric's values, which enter a baseline's signature when they differ from
    their defaults (``None``: every field); a stored baseline made with other values is
    not compared. ``build``: how the table's keys become a ``type`` (``type(**table)`` by
    default; the retrieval options read TOML's string keys of ``gains`` as numbers).
    ``hints``: for a key that is not a setting, where it belongs instead. ``flat``: the
    fields are keys of ``[settings]`` itself, where they were before tables existed (so a
    file written then keeps its meaning), and are signed under their own names
    (``squad_version``, not ``squad.squad_version``); for a built-in table only.
    """

    name: str
    type: type[T]
    signed: tuple[str, ...] | None = None
    build: Callable[[dict[str, Any]], T] | None = None
    hints: Mapping[str, str] = field(default_factory=dict)
    flat: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"a settings table's name is a Python identifier, not {self.name!r}")
        kind = self.type
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
            raise TypeError(
                f"[settings.{self.name}]: settings are a frozen dataclass, not {kind!r}; "
                "decorate the class with @dataclass(frozen=True)"
            )
        if not kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise TypeError(
                f"[settings.{self.name}]: {kind.__qualname__} is not frozen: one value is "
                "shared by every row of the run; use @dataclass(frozen=True)"
            )
        missing = [
            f.name
            for f in dataclasses.fields(kind)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise TypeError(
                f"[settings.{self.name}]: {kind.__qualname__} has no default for "
                f"{', '.join(missing)}: every setting has one (a run without the table uses "
                "them)"
            )
        if self.signed is not None:
            if isinstance(self.signed, str):
                raise TypeError(
                    f"[settings.{self.name}]: signed is a tuple of field names, e.g. "
                    f"({self.signed!r},)"
                )
            unknown = [name for name in self.signed if name not in self.fields]
            if unknown:
                raise ValueError(
                    f"[settings.{self.name}]: signed names {', '.join(map(repr, unknown))}, "
                    f"not a field of {kind.__qualname__} ({', '.join(self.fields)})"
                )
            object.__setattr__(self, "signed", tuple(self.signed))

    @property
    def fields(self) -> tuple[str, ...]:
        """The table's keys: the dataclass's fields, in their order."""
        return tuple(f.name for f in dataclasses.fields(self.type))  # type: ignore[arg-type]

    @property
    def where(self) -> str:
        """The table as thresholds.toml's errors name it: ``[settings.<name>]``, or
        ``[settings]`` for a flat table."""
        return "[settings]" if self.flat else f"[settings.{self.name}]"

    @property
    def signed_fields(self) -> tuple[str, ...]:
        """The fields that enter a baseline's signature."""
        return self.fields if self.signed is None else self.signed

    def defaults(self) -> T:
        """The settings of a run without the table."""
        return self.type()

    def parse(self, table: Mapping[str, Any]) -> T:
        """The table's keys as ``type``; ``SettingError`` (with ``metric`` the table's name)
        naming the key that is unknown, of the wrong type or out of range."""
        known = self.fields
        for key in table:
            if key not in known:
                raise SettingError(self.name, key, self._unknown(key))
        hints = _field_hints(self.type)
        values = {key: _from_toml(hints.get(key), value) for key, value in table.items()}
        try:
            settings = self.build(values) if self.build is not None else self.type(**values)
        except SettingError:
            raise
        except (TypeError, ValueError) as error:
            self._check_types(values, hints)  # a wrong type the dataclass tripped over
            raise SettingError(self.name, "", f"{type(error).__name__}: {error}") from error
        self._check_types({key: getattr(settings, key) for key in table}, hints)
        return settings

    def signature(self, settings: T) -> dict[str, Any]:
        """The signed settings that differ from the defaults, JSON-able (empty when none
        does, so a baseline stored before the table existed stays comparable). A type with
        a ``changed()`` method says itself which of its values differ, and how they are
        written (BLEU's smoothing value in effect, the retrieval gains as pairs)."""
        changed = getattr(settings, "changed", None)
        differ = changed() if callable(changed) else changed_fields(settings, self.defaults())
        return {key: _json(value) for key, value in differ.items() if key in self.signed_fields}

    def _unknown(self, key: str) -> str:
        known = ", ".join(self.fields)
        hint = self.hints.get(key)
        if hint is None:
            import difflib  # a mistake's cost, not every run's

            close = difflib.get_close_matches(key, self.fields, n=1)
            hint = f"did you mean {close[0]}?" if close else None
        return f"unknown setting; known: {known}{f'; {hint}' if hint else ''}"

    def _check_types(self, values: Mapping[str, Any], hints: Mapping[str, Any]) -> None:
        for key, value in values.items():
            problem = _type_problem(hints.get(key), value)
            if problem is not None:
                raise SettingError(self.name, key, f"{problem}, got {value!r}")


def _field_hints(kind: type) -> dict[str, Any]:
    """The resolved annotations of the dataclass ``kind``'s fields; none when they cannot
    be resolved (a name only imported for type checking): the dataclass checks itself."""
    try:
        return typing.get_type_hints(kind)
    except Exception:  # NameError and the like: its own checks are all there is
        return {}


def _from_toml(hint: Any, value: Any) -> Any:
    """A TOML array as a tuple when its field is a tuple (a frozen dataclass's values are
    hashable)."""
    if isinstance(value, list) and _is_tuple(hint):
        return tuple(value)
    return value


def _is_tuple(hint: Any) -> bool:
    if typing.get_origin(hint) is tuple:
        return True
    return any(_is_tuple(arg) for arg in _union_args(hint))


def _union_args(hint: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(hint)
    return typing.get_args(hint) if origin in (typing.Union, types.UnionType) else ()


def _type_problem(hint: Any, value: Any) -> str | None:
    """What is wrong with ``value`` for the annotation ``hint`` (``expected a number``),
    or ``None`` when it fits, or the annotation is one not checked here."""
    if hint is bool:
        return None if isinstance(value, bool) else "expected true or false"
    if hint is int:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return None if whole else "expected a whole number"
    if hint is float:
        return None if finite(value) else "expected a finite number"
    if hint is str:
        return None if isinstance(value, str) else "expected a string"
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        options = typing.get_args(hint)
        if value in options and type(value) in {type(option) for option in options}:
            return None
        return f"expected one of {', '.join(map(repr, options))}"
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, tuple):
            return "expected an array"
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        problems = [_type_problem(item, element) for element in value]
        first = next((problem for problem in problems if problem is not None), None)
        return None if first is None else f"expected an array whose every item is: {first}"
    union = _union_args(hint)
    if union:
        if value is None and type(None) in union:
            return None
        problems = [_type_problem(arg, value) for arg in union if arg is not type(None)]
        return None if any(problem is None for problem in problems) else problems[0]
    return None


def _json(value: Any) -> Any:
    """A setting as a baseline's JSON holds it: tuples as lists, mappings with string keys."""
    if isinstance(value, tuple | list):
        return [_json(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _json(item) for key, item in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
