"""Aggregate statistics over per-row values.

* ``mean`` and ``sum`` use ``math.fsum`` (exactly rounded, so independent of the order in
  which rows arrive: the same with and without pytest-xdist);
* ``count`` is the number of rows that produced a value;
* ``p50`` and ``p95`` interpolate linearly between closest ranks (numpy's default method);
* ``rate`` (0/1 metrics) equals ``mean``.

No values give ``{"count": 0}`` and nothing else: there is no mean of nothing, and no NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def aggregate(values: Sequence[float], binary: bool = False) -> dict[str, float]:
    """The statistics of ``values``; see the module docstring."""
    if not values:
        return {"count": 0}
    total = math.fsum(values)
    mean = total / len(values)
    p50, p95 = _percentiles(values, (50, 95), finite=math.isfinite(total))
    stats = {
        "count": len(values),
        "mean": mean,
        "sum": total,
        "p50": p50,
        "p95": p95,
    }
    if binary:
        stats["rate"] = mean
    return stats


def _percentiles(values: Sequence[float], percents: Sequence[int], finite: bool) -> list[float]:
    """The ``percents`` of ``values`` as ``numpy.percentile`` computes them with its default
    ``linear`` method, operation for operation, so the floats are the same to the last
    bit: with ``q = percent / 100``, the position ``(n - 1) * q`` lies between the order
    statistics below and above it; the result is interpolated from the one below when
    the position's fraction is under one half, from the one above otherwise; at or past
    the last position it is the largest value.

    In plain Python: aggregates are all that a run of deterministic metrics needs numpy
    for, and importing it cost as much time and memory as thousands of rows. numpy itself
    computes them for values that are not all finite (``finite``: their exact sum is
    not), which it orders its own way, and wherever a percentile is a zero drawn from
    values holding a negative zero: -0.0 and 0.0 are equal, and the order numpy's
    partition leaves them in decides the sign."""
    if finite:
        results = _linear_percentiles(sorted(float(value) for value in values), percents)
        if 0 not in results or not any(math.copysign(1.0, v) < 0 for v in values if v == 0):
            return results
    import numpy as np

    found = np.percentile(np.asarray(values, dtype=float), list(percents))
    return [float(value) for value in found]


def _linear_percentiles(ordered: Sequence[float], percents: Sequence[int]) -> list[float]:
    """``_percentiles`` of the sorted ``ordered``, numpy's operations in plain Python."""
    last = len(ordered) - 1
    results = []
    for percent in percents:
        position = last * (percent / 100)
        below = -1 if position >= last else math.floor(position)  # -1: the largest value
        above = -1 if below == -1 else below + 1
        fraction = position - below
        low, high = ordered[below], ordered[above]
        step = high - low
        results.append(high - step * (1 - fraction) if fraction >= 0.5 else low + step * fraction)
    return results
