"""The one check of a recorded per-row value against its declaration (``MetricInfo``):
a finite real number, within the declared ``range``, 0 or 1 for ``kind="binary"``.

Every value a metric fixture records passes it, the built-in metrics' as a user's
``@metric``'s, on every path a row is measured (a row test, a bulk item, a Ray worker:
each calls the metric through ``plugin.fixtures.MetricFixture``). A value that fails it
makes the row an error naming the metric, the value, the range and where the metric is
declared; it is never clipped. A definition whose arithmetic can leave its range by
rounding says so and clamps in the metric itself (``metrics.grounding.cosine``).
"""

from __future__ import annotations

import math
import numbers
import sys

from pytest_ragmetrics.data.dataset import RowError
from pytest_ragmetrics.metrics.base import Measured, MetricInfo, MetricSpec, Range


class MetricValueError(RowError):
    """A metric recorded a value its declaration does not allow (not a finite number,
    outside its range, not 0 or 1 for a binary metric, or under an undeclared name)."""


def value_problem(value: object, info: MetricInfo) -> str | None:
    """Why ``value`` is no value of the metric ``info`` declares; ``None`` when it is."""
    if not isinstance(value, numbers.Real):
        return "not a real number"
    number = as_number(value)
    if number is None:
        return unusable(value, "not finite")
    if info.binary and number not in (0.0, 1.0):
        return "a binary metric returns 0 or 1"
    bounds = info.range
    if bounds is not None and not bounds[0] <= number <= bounds[1]:
        return f"outside its range {shown_range(bounds)}"
    return None


def check_measured(spec: MetricSpec, measured: Measured) -> None:
    """Check every value ``measured`` records against the declaration of ``spec`` that
    names it (``ndcg@10`` is ``ndcg``'s); ``MetricValueError`` on the first that fails.

    Called once per metric call of every row: the common case (a float inside a range)
    costs a dict look-up and two comparisons."""
    limits = spec.limits
    for name, value in measured.values.items():
        found = limits.get(name)
        if found is None:
            found = limits.get(name.partition("@")[0])
            if found is None:
                raise _undeclared(spec, name)
        low, high, binary = found
        if (
            type(value) is float
            and low <= value <= high
            and (value == 0.0 or value == 1.0 or not binary)
            and value - value == 0.0  # finite: inf - inf and NaN are NaN
        ):
            continue
        info = next(info for info in spec.records if info.name == name.partition("@")[0])
        why = value_problem(value, info)
        if why is not None:
            raise _refused(spec, name, value, info, why)


def _refused(
    spec: MetricSpec, name: str, value: object, info: MetricInfo, why: str
) -> MetricValueError:
    declared = "0 or 1" if info.binary else f"the range {shown_range(info.range)}"
    return MetricValueError(
        f"{name} recorded {described(value)}: {why}; its declaration "
        f"({spec.declared_at}) states {declared}, and a value outside it is never recorded: "
        "fix the computation, or the declared range if the definition allows the value"
    )


def _undeclared(spec: MetricSpec, name: str) -> MetricValueError:
    records = ", ".join(info.name for info in spec.records)
    return MetricValueError(
        f"{spec.fixture} recorded {name!r}, which its declaration ({spec.declared_at}) does "
        f"not list (it records {records}): add a MetricInfo for it to the declaration's records"
    )


def shown_range(bounds: Range | None) -> str:
    if bounds is None:
        return "(none)"
    return f"[{bounds[0]:g}, {bounds[1]:g}]"


def as_number(value: object) -> float | None:
    """``value`` as a finite float; ``None`` when it is no real number, NaN, infinite, or
    too large for a float (``unusable`` says which)."""
    if not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def unusable(value: object, otherwise: str) -> str:
    """Why ``as_number`` gave ``value`` no float: too large for one, or ``otherwise`` (no
    real number, NaN or infinite)."""
    return too_large(value) or otherwise


def too_large(value: object) -> str | None:
    """Why ``value`` has no float when it is a real number too large for one (an integer
    of 400 digits, say); ``None`` for anything else."""
    if not isinstance(value, numbers.Real):
        return None
    try:
        float(value)
    except OverflowError:
        return f"too large for a float (the largest is about {sys.float_info.max:.2g})"
    return None


def described(value: object) -> str:
    """``repr(value)`` for an error message, but for a number too large for a float: an
    integer's digits are counted, not printed (Python prints at most 4300 of them)."""
    if too_large(value):
        if isinstance(value, numbers.Integral):
            digits = int(int(value).bit_length() * math.log10(2)) + 1
            return f"an integer of about {digits} digits"
        return f"a {type(value).__name__} beyond {sys.float_info.max:.2g}"
    try:
        return repr(value)
    except ValueError:  # it holds an integer of more than 4300 digits
        return f"a {type(value).__name__} holding a number too large to print"
