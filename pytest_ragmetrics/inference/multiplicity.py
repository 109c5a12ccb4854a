"""Adjusting the p-values of several gates for their number.

Each statistical gate is a test; with ten of them at 95%, one in four runs with no real
change would fail some gate. An adjusted p-value is compared with the same ``alpha`` as
an unadjusted one:

* ``holm`` (Holm 1979): keeps the chance of *any* false verdict among the gates at or
  below ``alpha``, whatever their dependence; sorted ascending, the i-th of m p-values
  becomes ``max over j <= i of min(1, (m - j + 1) * p_j)``;
* ``bh`` (Benjamini and Hochberg 1995): keeps the expected *share* of false verdicts among
  the gates that fire at or below ``alpha``; the i-th becomes ``min over j >= i of min(1,
  m * p_j / j)``;
* ``none``: each gate at its own level.
"""

from __future__ import annotations

from collections.abc import Sequence


def adjusted(p_values: Sequence[float], method: str) -> list[float]:
    """``p_values`` adjusted by ``method`` (``holm``, ``bh`` or ``none``), in their order."""
    m = len(p_values)
    if method == "none" or m == 0:
        return list(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    result = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            result[i] = running
        return result
    if method == "bh":
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, min(1.0, m * p_values[i] / (rank + 1)))
            result[i] = running
        return result
    raise ValueError(f"unknown correction {method!r}; expected holm, bh or none")
