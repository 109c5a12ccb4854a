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
    import numpy as np

    if not values:
        return {"count": 0}
    total = math.fsum(values)
    mean = total / len(values)
    p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95])
    stats = {
        "count": len(values),
        "mean": mean,
        "sum": total,
        "p50": float(p50),
        "p95": float(p95),
    }
    if binary:
        stats["rate"] = mean
    return stats
