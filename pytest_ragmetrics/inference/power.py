"""Power: the smallest change a comparison would reliably detect, and the rows it would
take to detect a given margin.

The *minimum detectable effect* (MDE) at ``power`` (80% by default) is
``(z(1 - alpha/2) + z(power)) * se``, where ``se`` is the standard error the comparison's
own interval implies (its width over ``2 * z(1 - alpha/2)``): a true change of the MDE
is caught by that interval four times out of five. The standard error of a paired
comparison shrinks as ``1 / sqrt(n)``, so the rows needed to detect a margin ``m`` are
``n * (MDE / m) ** 2``.
"""

from __future__ import annotations

import math

from pytest_ragmetrics.inference.normal import quantile, two_sided


def implied_se(low: float, high: float, confidence: float) -> float:
    """The standard error an interval of that width implies: ``(high - low) / (2 *
    z(1 - alpha/2))``, exact for a normal interval, a summary of spread for a skewed one."""
    return (high - low) / (2 * two_sided(confidence))


def detectable(se: float, confidence: float, power: float) -> float:
    """The minimum detectable effect of a comparison with standard error ``se``:
    ``(z(1 - alpha/2) + z(power)) * se``, the true change that puts the interval's far end
    beyond no change with probability ``power``."""
    return (two_sided(confidence) + quantile(power)) * se


def rows_to_detect(n: int, mde: float, margin: float) -> int | None:
    """The rows that would bring the MDE of ``n`` rows down to ``margin``; ``None`` for a
    margin of 0, which no number of rows detects."""
    if margin <= 0:
        return None
    needed = n * (mde / margin) ** 2
    return max(n, math.ceil(needed - 1e-9 * needed))  # 48 * (0.07 / 0.01)^2 is 2352
