"""``SettingsTable``: a metric's ``[settings.<name>]`` table, read and signed the same way
for every metric (the built-in tables and a user's)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

import pytest_ragmetrics
from pytest_ragmetrics.metrics.catalog import BUILTIN_METRICS, SPECS
from pytest_ragmetrics.metrics.setting import SettingError, SettingsTable


@dataclass(frozen=True)
class Window:
    """A made-up metric's settings: every annotation the generic check reads."""

    width: int = 3
    weight: float = 0.5
    strict: bool = False
    unit: str = "word"
    mode: Literal["max", "mean"] = "max"
    stop_words: tuple[str, ...] = ()
    cap: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.width, int) and self.width < 1:
            raise SettingError("window", "width", f"expected a whole number >= 1, got {self.width}")


TABLE = SettingsTable("window", Window, signed=("width", "mode", "stop_words"))


def test_an_empty_table_is_the_defaults() -> None:
    assert TABLE.parse({}) == Window() == TABLE.defaults()


def test_keys_become_the_dataclass_and_an_array_a_tuple() -> None:
    parsed = TABLE.parse({"width": 5, "weight": 1, "stop_words": ["a", "the"], "cap": 9})
    assert parsed == Window(width=5, weight=1, stop_words=("a", "the"), cap=9)
    assert isinstance(parsed.stop_words, tuple)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("width", 2.5, "width: expected a whole number, got 2.5"),
        ("width", True, "width: expected a whole number, got True"),
        ("weight", "heavy", "weight: expected a finite number, got 'heavy'"),
        ("weight", float("inf"), "weight: expected a finite number, got inf"),
        ("strict", 1, "strict: expected true or false, got 1"),
        ("unit", 3, "unit: expected a string, got 3"),
        ("mode", "median", "mode: expected one of 'max', 'mean', got 'median'"),
        ("stop_words", ["a", 1], "stop_words: expected an array whose every item is: expected"),
        ("cap", "none", "cap: expected a whole number, got 'none'"),
    ],
)
def test_a_value_of_the_wrong_type_names_its_key(key: str, value: Any, problem: str) -> None:
    with pytest.raises(SettingError) as raised:
        TABLE.parse({key: value})
    assert (raised.value.metric, raised.value.key) == ("window", key)
    assert problem in str(raised.value)


def test_the_dataclass_checks_its_own_ranges() -> None:
    with pytest.raises(SettingError, match="window width: expected a whole number >= 1, got 0"):
        TABLE.parse({"width": 0})


def test_an_unknown_key_lists_the_known_ones_and_the_close_one() -> None:
    with pytest.raises(SettingError) as raised:
        TABLE.parse({"widht": 4})
    assert raised.value.key == "widht"
    assert raised.value.problem == (
        "unknown setting; known: width, weight, strict, unit, mode, stop_words, cap; "
        "did you mean width?"
    )
    with pytest.raises(SettingError, match=r"known: width, .*, cap$"):
        TABLE.parse({"zzz": 4})


def test_a_hint_says_where_a_key_belongs() -> None:
    hinted = SettingsTable("window", Window, hints={"k": "k is the fixture's argument"})
    with pytest.raises(SettingError, match=r"cap; k is the fixture's argument$"):
        hinted.parse({"k": 4})


@dataclass(frozen=True)
class Pair:
    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")


def test_a_problem_of_the_whole_table_has_no_key() -> None:
    with pytest.raises(SettingError) as raised:
        SettingsTable("pair", Pair).parse({"low": 2})
    assert raised.value.key == ""
    assert str(raised.value) == "ValueError: low 2 is above high 1.0"


def test_only_signed_fields_that_changed_enter_the_signature() -> None:
    assert TABLE.signature(Window()) == {}
    # weight and strict change no value of the metric: not signed
    assert TABLE.signature(Window(weight=0.9, strict=True)) == {}
    changed = Window(width=4, mode="mean", stop_words=("a",), weight=0.9)
    assert TABLE.signature(changed) == {"width": 4, "mode": "mean", "stop_words": ["a"]}
    every = SettingsTable("window", Window)  # signed=None: every field
    assert every.signature(Window(weight=0.9)) == {"weight": 0.9}


@dataclass
class Mutable:
    width: int = 3


@dataclass(frozen=True)
class NoDefault:
    width: int


@pytest.mark.parametrize(
    ("kind", "signed", "problem"),
    [
        (dict, None, "settings are a frozen dataclass, not <class 'dict'>"),
        (Mutable, None, "Mutable is not frozen"),
        (NoDefault, None, "NoDefault has no default for width"),
        (Window, ("height",), "signed names 'height', not a field of Window"),
        (Window, "width", "signed is a tuple of field names, e.g. ('width',)"),
    ],
)
def test_a_malformed_declaration_says_what_to_change(kind: type, signed: Any, problem: str) -> None:
    with pytest.raises(
        (TypeError, ValueError), match=problem.replace("(", r"\(").replace(")", r"\)")
    ):
        SettingsTable("window", kind, signed=signed)


def test_the_built_in_tables_are_declared_by_their_metrics() -> None:
    tables = {spec.fixture: spec.settings.name for spec in SPECS if spec.settings is not None}
    assert tables["bleu"] == "bleu"
    assert tables["chrf"] == tables["chrf_pp"] == "chrf"
    assert tables["ndcg"] == tables["map"] == "retrieval"
    # em and f1 (rouge1, ...) read theirs from [settings] itself, as they always did
    assert tables["em"] == tables["f1"] == "squad"
    assert tables["rouge1"] == tables["rougeLsum"] == "rouge"
    flat = {
        spec.settings.name for spec in SPECS if spec.settings is not None and spec.settings.flat
    }
    assert flat == {"squad", "rouge"}


# Metric names config/ may write, each with why it is not the metric there.
EXCEPTED = {"baseline": "the rules' word for the stored value (>= baseline - 0.01)"}


def test_config_names_no_metric_as_a_string_literal() -> None:
    """The settings tables are declared with their metrics: config/ reads them from the
    catalog and names none of them itself."""
    names = set(BUILTIN_METRICS) | {spec.fixture for spec in SPECS}
    folder = Path(pytest_ragmetrics.__file__).parent / "config"
    found = [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for path in sorted(folder.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in names
        and node.value not in EXCEPTED
    ]
    assert found == []


@dataclass(frozen=True)
class WithFactory:
    words: tuple[str, ...] = field(default_factory=tuple)


def test_a_default_factory_counts_as_a_default() -> None:
    assert SettingsTable("w", WithFactory).parse({"words": ["x"]}) == WithFactory(("x",))
