"""``[settings.prices]``: what a million prompt and completion tokens of a model cost, in
US dollars, read once at configure time (docs/gates.md#settingsprices).

Shape::

    [settings.prices]
    "gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }
    "gpt-4o"      = { prompt = 2.50, completion = 10.00 }
    compact       = { prompt = 0.10, completion = 0.40 }   # a system's name (see below)

A key is a model name, or the name of a system (a row's ``system``) whose rows name no
model: ``cost_usd`` prices a call by the call's ``model``, else the row's ``model``, else
the row's ``system`` when this table has that name (``metrics.cost.call_models``). The
prices are a table of their own, not a ``SettingsTable``: its keys are the user's names,
not a dataclass's fields.

Nothing here imports the rest of the package: ``metrics.base`` (the settings a metric
reads), ``config.thresholds`` (which parses the table) and ``metrics.judge`` (which prices
the judge's tokens) all read it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PRICES_TABLE = "prices"  # [settings.prices]
PER_TOKENS = 1_000_000  # prices are per million tokens
PRICE_KEYS = ("prompt", "completion")
EXAMPLE = '"gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }'


class PriceError(ValueError):
    """A price of ``[settings.prices]`` is wrong: ``key`` names where (``"gpt-4o" prompt``,
    empty for the whole table), ``problem`` says what and how to fix it."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(key, problem)
        self.key, self.problem = key, problem

    def __str__(self) -> str:
        return f"{self.key}: {self.problem}" if self.key else self.problem


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt tokens and per million completion tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """prompt_tokens * prompt / 1e6 + completion_tokens * completion / 1e6, in dollars,
        unrounded."""
        return (
            prompt_tokens * self.prompt / PER_TOKENS
            + completion_tokens * self.completion / PER_TOKENS
        )

    def as_dict(self) -> dict[str, float]:
        return {"prompt": self.prompt, "completion": self.completion}


@dataclass(frozen=True)
class Prices:
    """The run's ``[settings.prices]``: a ``Price`` by model (or system) name; empty when
    thresholds.toml has no such table. A plain mapping, not a read-only view: the settings
    are pickled to the processes that score rows (Ray workers), and a view cannot be."""

    by_name: Mapping[str, Price] = field(default_factory=dict, hash=False)

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def price(self, name: str) -> Price | None:
        """The price of ``name``, ``None`` when the table has none."""
        return self.by_name.get(name)

    def names(self) -> str:
        """The priced names, for a message: ``"gpt-4o", "gpt-4o-mini"``."""
        return ", ".join(f'"{name}"' for name in sorted(self.by_name)) or "none"


NO_PRICES = Prices()


def dollars(value: float) -> str:
    """An amount of US dollars to three significant digits, never in exponent notation:
    ``$0.000270``, ``$0.0123``, ``$1.50``, ``$1,234.57``; exactly 0 is ``$0``."""
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"


def _amount(name: str, key: str, value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise PriceError(
            f'"{name}" {key}',
            f"expected a finite number >= 0 (US dollars per million {key} tokens), got "
            f"{value!r}; write e.g. {EXAMPLE}",
        )
    return float(value)


def _price(name: str, value: Any) -> Price:
    if not isinstance(value, dict):
        raise PriceError(
            f'"{name}"',
            f"expected a table of prompt and completion prices, got {value!r}; "
            f"write e.g. {EXAMPLE}",
        )
    unknown = sorted(set(value) - set(PRICE_KEYS))
    if unknown:
        raise PriceError(
            f'"{name}" {unknown[0]}',
            "unknown key; a price has exactly prompt and completion (US dollars per million "
            f"tokens), e.g. {EXAMPLE}",
        )
    missing = [key for key in PRICE_KEYS if key not in value]
    if missing:
        raise PriceError(
            f'"{name}"',
            f"{missing[0]} is missing; give both prompt and completion (0 is a price), e.g. "
            f"{EXAMPLE}",
        )
    return Price(
        _amount(name, "prompt", value["prompt"]), _amount(name, "completion", value["completion"])
    )


def parse_prices(table: Any) -> Prices:
    """``[settings.prices]`` as ``Prices``; ``PriceError`` for anything else: not a table,
    an empty table (a table that prices nothing is a mistake, not a choice), an empty name,
    a price that is not ``{prompt, completion}`` of finite numbers >= 0."""
    if not isinstance(table, dict):
        raise PriceError("", f"expected a table of model prices, e.g. {EXAMPLE}")
    if not table:
        raise PriceError(
            "",
            f"the table is empty; price each model the rows name, e.g. {EXAMPLE}, or remove "
            "the table",
        )
    prices = {}
    for name, value in table.items():
        if not name.strip():
            raise PriceError(f'"{name}"', "a model's name cannot be empty or blank")
        prices[name] = _price(name, value)
    return Prices(prices)
