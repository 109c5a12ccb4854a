"""The standard normal distribution, from the standard library (no numpy): its quantile
and distribution function, and the ``z`` of a two-sided interval."""

from __future__ import annotations

import math
from statistics import NormalDist

_NORMAL = NormalDist()


def quantile(level: float) -> float:
    """The standard normal quantile: ``quantile(0.975)`` is 1.959963..."""
    return _NORMAL.inv_cdf(level)


def cdf(z: float) -> float:
    """The standard normal distribution function (1 at +inf, 0 at -inf)."""
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return _NORMAL.cdf(z)


def two_sided(confidence: float) -> float:
    """``z`` of a two-sided interval: 1.96 at 0.95."""
    return quantile(0.5 + confidence / 2)
