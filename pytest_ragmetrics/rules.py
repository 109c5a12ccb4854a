"""Gate rules: the right-hand side of a ``thresholds.toml`` entry.

Grammar (white space optional between parts)::

    rule := op bound
    op   := "==" | "<=" | ">=" | "<" | ">"
    bound:= NUMBER                      e.g. "<= 2500"
          | "baseline"                  e.g. ">= baseline"
          | "baseline" ("+"|"-") NUMBER e.g. ">= baseline - 0.01"
          | NUMBER "x" "baseline"       e.g. "<= 1.2x baseline"

``==`` compares with an absolute and relative tolerance of 1e-9, so a mean that is 0.5
up to float rounding equals 0.5; the other operators compare exactly.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_RULE = re.compile(
    rf"""^\s*(?P<op>==|<=|>=|<|>)\s*
    (?:
        (?P<factor>{_NUMBER})\s*[x×]\s*baseline
      | baseline(?:\s*(?P<sign>[+-])\s*(?P<offset>{_NUMBER}))?
      | (?P<constant>[+-]?{_NUMBER})
    )\s*$""",
    re.VERBOSE,
)

_TOLERANCE = 1e-9


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

    @property
    def uses_baseline(self) -> bool:
        return self.constant is None

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
            return f"{bound:g} ({self.factor:g} × baseline {baseline:g})"
        if self.offset:
            return f"{bound:g} (baseline {baseline:g} {self.offset:+g})"
        return f"{bound:g} (baseline)"


def parse_rule(text: str) -> Rule:
    """Parse ``text`` into a ``Rule``; ``RuleError`` says what was expected."""
    match = _RULE.match(text)
    if match is None:
        raise RuleError(
            f"cannot read rule {text!r}: expected an operator (==, <=, >=, <, >) and then "
            "a number, 'baseline', 'baseline + N', 'baseline - N' or 'Nx baseline'"
        )
    op = match.group("op")
    if match.group("constant") is not None:
        return Rule(text.strip(), op, constant=float(match.group("constant")))
    if match.group("factor") is not None:
        return Rule(text.strip(), op, factor=float(match.group("factor")))
    offset = float(match.group("offset") or 0.0)
    return Rule(text.strip(), op, offset=-offset if match.group("sign") == "-" else offset)
