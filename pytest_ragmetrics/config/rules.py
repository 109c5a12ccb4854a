"""Gate rules: the right-hand side of a ``thresholds.toml`` entry.

Grammar (white space optional between parts)::

    rule := op bound [ "@" PERCENT "%" [ "proven" ] ]
    op   := "==" | "<=" | ">=" | "<" | ">"
    bound:= NUMBER                      e.g. "<= 2500"
          | BASE                        e.g. ">= baseline"
          | BASE ("+"|"-") NUMBER       e.g. ">= baseline - 0.01"
          | NUMBER "x" BASE             e.g. "<= 1.2x baseline"
    BASE := "baseline" | "stored_baseline"

``stored_baseline`` is always the eval's stored baseline file. ``baseline`` is the same
file, except in an eval whose marker names ``compare_to``: there it is that reference
system's aggregate in the same run.

A *plain* rule compares two numbers. ``==`` compares with an absolute and relative
tolerance of 1e-9, so a mean that is 0.5 up to float rounding equals 0.5; the other
operators compare exactly.

A *statistical* rule (``@ 95%``) is read on the confidence interval of the statistic (a
fixed bound) or of its change (a baseline), docs/statistics.md:

* ``>= baseline - 0.01 @ 95%`` fails only when the whole interval of the change lies
  below -0.01: harm is shown (*inferiority*); ``<=`` mirrors it, ``==`` fails only when
  the interval leaves out the bound. ``>`` and ``<`` are refused here: an interval reads
  them like ``>=`` and ``<=``, and a strict operator looks like it asks for proof.
* ``>= baseline - 0.01 @ 95% proven`` passes only when the whole interval lies above
  -0.01: the change is shown to stay within the margin (*non-inferiority*);
  ``> baseline @ 95% proven`` passes only on a shown rise (*superiority*).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pytest_ragmetrics.inference.records import Scale

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_RULE = re.compile(
    rf"""^\s*(?P<op>==|<=|>=|<|>)\s*
    (?:
        (?P<factor>{_NUMBER})\s*[x×]\s*(?P<fbase>stored_baseline|baseline)
      | (?P<base>stored_baseline|baseline)(?:\s*(?P<sign>[+-])\s*(?P<offset>{_NUMBER}))?
      | (?P<constant>[+-]?{_NUMBER})
    )
    (?:\s*@\s*(?P<confidence>[^%\s]+)\s*%(?P<proven>\s*proven)?)?
    \s*$""",
    re.VERBOSE,
)

TOLERANCE = 1e-9  # of ==, relative and absolute
BaseName = Literal["baseline", "stored_baseline"]


def _equal(value: float, bound: float) -> bool:
    return math.isclose(value, bound, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "==": _equal,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}


class RuleError(ValueError):
    """A rule string that does not follow the grammar."""


# The readings of a rule, as reports name them (docs/statistics.md#which-reading-to-choose).
Reading = Literal[
    "plain", "inferiority", "non-inferiority", "superiority", "no-difference", "refuted", "proven"
]


@dataclass(frozen=True)
class Rule:
    """A parsed rule: ``value <op> bound``, the bound fixed or derived from a baseline;
    read on the confidence interval at ``confidence`` (0.95 for ``@ 95%``) when given,
    with ``proven`` asking the interval to lie inside the bound rather than not wholly
    outside it."""

    text: str
    op: str
    constant: float | None = None
    factor: float = 1.0
    offset: float = 0.0
    base: BaseName = "baseline"  # which baseline the bound derives from
    relative: bool = False  # written "Nx baseline": compared as a ratio
    confidence: float | None = None
    proven: bool = False

    @property
    def statistical(self) -> bool:
        return self.confidence is not None

    @property
    def scale(self) -> Scale:
        """What the rule compares: one run's value with a number, or the change from the
        baseline as a difference or a ratio."""
        if self.constant is not None:
            return "value"
        return "ratio" if self.relative else "difference"

    @property
    def null(self) -> float:
        """The rule's bound on its scale: the number, the offset from the baseline, or
        the factor of it."""
        if self.constant is not None:
            return self.constant
        return self.factor if self.relative else self.offset

    @property
    def harm(self) -> Literal["lower", "higher"] | None:
        """Which way a value breaks the rule: lower for ``>=``, higher for ``<=``, both
        ways (``None``) for ``==``."""
        if self.op in (">=", ">"):
            return "lower"
        return "higher" if self.op in ("<=", "<") else None

    @property
    def margin(self) -> float:
        """How far the bound lets a baseline rule's value move the harmful way before it
        breaks (``>= baseline - 0.01``: 0.01; ``<= 1.2x baseline``: 0.2; negative when the
        rule asks for an improvement); for ``==``, the distance either way."""
        unchanged = 1.0 if self.relative else 0.0
        if self.harm == "lower":
            return unchanged - self.null
        if self.harm == "higher":
            return self.null - unchanged
        return abs(self.null - unchanged)

    @property
    def reading(self) -> Reading:
        """How the rule is read (docs/statistics.md#which-reading-to-choose)."""
        if not self.statistical:
            return "plain"
        if self.constant is not None:
            return "proven" if self.proven else "refuted"
        if self.harm is None:
            return "no-difference"
        if not self.proven:
            return "inferiority"
        strict = self.op in ("<", ">")
        return (
            "superiority" if self.margin < 0 or (self.margin == 0 and strict) else "non-inferiority"
        )

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
    hint = _reading_hint(text) if match is None else None
    if hint is not None:
        raise RuleError(f"cannot read rule {text!r}: {hint}")
    if match is None:
        raise RuleError(
            f"cannot read rule {text!r}: expected an operator (==, <=, >=, <, >) and then "
            "a number, 'baseline', 'baseline + N', 'baseline - N' or 'Nx baseline' "
            "('stored_baseline' in place of 'baseline' for the stored file), optionally "
            "read on a confidence interval: '@ 95%' or '@ 95% proven'"
        )
    op = match.group("op")
    reading = _reading(text, op, match.group("confidence"), bool(match.group("proven")))
    if match.group("constant") is not None:
        return Rule(text.strip(), op, constant=_finite(text, match.group("constant")), **reading)
    if match.group("factor") is not None:
        factor, base = _finite(text, match.group("factor")), _base(match.group("fbase"))
        return Rule(text.strip(), op, factor=factor, base=base, relative=True, **reading)
    offset = _finite(text, match.group("offset") or "0")
    offset = -offset if match.group("sign") == "-" else offset
    return Rule(text.strip(), op, offset=offset, base=_base(match.group("base")), **reading)


def _reading_hint(text: str) -> str | None:
    """What is wrong with the ``@`` part of a rule that does not read, when that is
    where it goes wrong."""
    if text.count("@") > 1:
        return "a rule is read at one confidence: write '@' once, e.g. '>= baseline @ 95%'"
    if "proven" in text.lower() and "@" not in text:
        return "'proven' follows a confidence: '>= baseline - 0.02 @ 95% proven'"
    if "@" in text and "%" not in text:
        return "write the confidence after @ as a percentage, such as '@ 95%' (or '@ 95% proven')"
    after = text.split("%", 1)[1].strip() if "@" in text else ""
    if after and after != "proven":
        return f"after the confidence only 'proven' may follow (lowercase), not {after!r}"
    return None


def _reading(text: str, op: str, confidence: str | None, proven: bool) -> dict[str, Any]:
    """The statistical reading of ``@ <confidence>% [proven]``, checked."""
    if confidence is None:
        return {}
    try:
        percent = float(confidence)
    except ValueError:
        percent = math.nan
    if not 50 < percent < 100:
        hint = f" ({confidence} as a share is {percent * 100:g}%)" if 0.5 < percent < 1 else ""
        raise RuleError(
            f"cannot read rule {text!r}: the confidence after @ is a percentage between 50 "
            f"and 100, such as 95%; got {confidence}%{hint}"
        )
    if op == "==" and proven:
        raise RuleError(
            f"cannot read rule {text!r}: an interval cannot prove a value equals a bound; "
            "to show it stays within d of it, write two rules, '>= baseline - d @ 95% "
            "proven' and '<= baseline + d @ 95% proven'"
        )
    if op in ("<", ">") and not proven:
        weak = "<=" if op == "<" else ">="
        raise RuleError(
            f"cannot read rule {text!r}: on an interval, '{op}' reads like '{weak}' (the "
            f"rule fails only when the whole interval breaks it); write '{weak}' for that, "
            f"or add 'proven' ('{op} ... @ {confidence}% proven') to pass only when the whole "
            "interval is shown to keep it"
        )
    return {"confidence": percent / 100, "proven": proven}


def _finite(text: str, number: str) -> float:
    """``number`` as a float; ``RuleError`` when no float holds it (``1e999`` would be
    infinity, a bound no value could ever cross)."""
    value = float(number)
    if not math.isfinite(value):
        raise RuleError(f"cannot read rule {text!r}: {number} is not a finite number")
    return value


def _base(word: str) -> BaseName:
    return "stored_baseline" if word == "stored_baseline" else "baseline"
