"""What the metric settings records (``TrecOptions``, ``BleuSettings``, ``ChrfSettings``)
have in common: the error a wrong value raises, naming its key, and which values differ
from the defaults (what a baseline's signature holds).

thresholds.toml reports a ``SettingError`` under its own table and key
(``[settings.bleu] tokenize: ...``); a metric function called directly shows it with the
metric's name.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any


class SettingError(ValueError):
    """A metric setting is wrong: ``key`` names it, ``problem`` says what is wrong and what
    to write instead. ``metric`` names whose setting it is, for the message."""

    def __init__(self, metric: str, key: str, problem: str) -> None:
        super().__init__(metric, key, problem)
        self.metric, self.key, self.problem = metric, key, problem

    def __str__(self) -> str:
        return f"{self.metric} {self.key}: {self.problem}"


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
