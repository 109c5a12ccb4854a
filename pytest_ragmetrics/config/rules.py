"""Gate rules: the right-hand side of a ``thresholds.toml`` entry.

Grammar (white space optional between parts)::

    rule := op bound
    op   := "==" | "<=" | ">=" | "<" | ">"
    bound:= NUMBER                      e.g. "<= 2500"
          | BASE                        e.g. ">= baseline"
          | BASE ("+"|"-") NUMBER       e.g. ">= baseline - 0.01"
          | NUMBER "x" BASE             e.g. "<= 1.2x baseline"
    BASE := "baseline" | "stored_baseline"

``stored_baseline`` is always the eval's stored baseline file. ``baseline`` is the same
file, except in an eval whose marker names ``compare_to``: there it is that reference
system's aggregate in the same run.

``==`` compares with an absolute and relative tolerance of 1e-9, so a mean that is 0.5
up to float rounding equals 0.5; the other operators compare exactly.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_RULE = re.compile(
    rf"""^\s*(?P<op>==|<=|>=|<|>)\s*
    (?:
        (?P<factor>{_NUMBER})\s*[x×]\s*(?P<fbase>stored_baseline|baseline)
      | (?P<base>stored_baseline|baseline)(?:\s*(?P<sign>[+-])\s*(?P<offset>{_NUMBER}))?
      | (?P<constant>[+-]?{_NUMBER})
    )\s*$""",
    re.VERBOSE,
)

_TOLERANCE = 1e-9
BaseName = Literal["baseline", "stored_baseline"]


def _equal(value: float, bound: float) -> bool:
    return math.isclose(value, bound, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "==": _equal,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}


class RuleError(ValueError):
    """A rule string that does not follow the grammar."""


@dataclass(frozen=True)
class Rule:
    """A parsed rule: ``value <op> bound``, the bound fixed or derived from a baseline."""

    text: str
    op: str
    constant: float | None = None
    factor: float = 1.0
    offset: float = 0.0
    base: BaseName = "baseline"  # which baseline the bound derives from

    @property
    def uses_baseline(self) -> bool:
        return self.constant is None

    @property
    def stored(self) -> bool:
        """True when the bound derives from the stored baseline file in every eval."""
        return self.uses_baseline and self.base == "stored_baseline"

    def bound(self, baseline: float | None = None) -> float:
        """The number the value is compared with; needs ``baseline`` for baseline rules."""
        if self.constant is not None:
            return self.constant
        if baseline is None:
            raise ValueError(f"rule {self.text!r} needs a baseline value")
        return self.factor * baseline + self.offset

    def holds(self, value: float, baseline: float | None = None) -> bool:
        """True when ``value`` satisfies the rule."""
        return _OPERATORS[self.op](value, self.bound(baseline))

    def describe_bound(self, baseline: float | None = None) -> str:
        """How the bound was derived, e.g. ``540 (1.2 × baseline 450)``."""
        if self.constant is not None:
            return f"{self.constant:g}"
        bound = self.bound(baseline)
        if self.factor != 1.0:
            return f"{bound:g} ({self.factor:g} × {self.base} {baseline:g})"
        if self.offset:
            return f"{bound:g} ({self.base} {baseline:g} {self.offset:+g})"
        return f"{bound:g} ({self.base})"


def parse_rule(text: str) -> Rule:
    """Parse ``text`` into a ``Rule``; ``RuleError`` says what was expected."""
    match = _RULE.match(text)
    if match is None:
        raise RuleError(
            f"cannot read rule {text!r}: expected an operator (==, <=, >=, <, >) and then "
            "a number, 'baseline', 'baseline + N', 'baseline - N' or 'Nx baseline' "
            "('stored_baseline' in place of 'baseline' for the stored file)"
        )
    op = match.group("op")
    if match.group("constant") is not None:
        return Rule(text.strip(), op, constant=_finite(text, match.group("constant")))
    if match.group("factor") is not None:
        base = _base(match.group("fbase"))
        return Rule(text.strip(), op, factor=_finite(text, match.group("factor")), base=base)
    offset = _finite(text, match.group("offset") or "0")
    offset = -offset if match.group("sign") == "-" else offset
    return Rule(text.strip(), op, offset=offset, base=_base(match.group("base")))


def _finite(text: str, number: str) -> float:
    """``number`` as a float; ``RuleError`` when no float holds it (``1e999`` would be
    infinity, a bound no value could ever cross)."""
    value = float(number)
    if not math.isfinite(value):
        raise RuleError(f"cannot read rule {text!r}: {number} is not a finite number")
    return value


def _base(word: str) -> BaseName:
    return "stored_baseline" if word == "stored_baseline" else "baseline"
