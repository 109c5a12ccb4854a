"""Adjusted p-values against references: Benjamini-Hochberg against
``scipy.stats.false_discovery_control``, Holm against his step-down procedure written out
here from its definition (Holm 1979)."""

from __future__ import annotations

import random

import pytest
from scipy.stats import false_discovery_control

from pytest_ragmetrics.inference.multiplicity import adjusted

_rng = random.Random(2024)
VECTORS: list[list[float]] = [
    [0.04],
    [1.0],
    [0.01, 0.02, 0.03, 0.04, 0.05],
    [0.05, 0.04, 0.03, 0.02, 0.01],
    [0.01, 0.01, 0.04, 0.04, 1.0, 1.0],
    [0.5, 0.5, 0.5, 0.5],
    [1.0, 1.0, 1.0],
    [0.001, 0.2, 0.03, 0.2, 0.9, 1.0, 0.04, 0.0002, 0.03],
    [0.0, 0.3, 0.0, 0.7],
    [0.6, 0.9, 0.35, 0.26],  # every Holm product above 1: all clipped
    [_rng.random() ** 3 for _ in range(25)],
    [round(_rng.random(), 2) for _ in range(40)],  # many ties
]


def _holm_reference(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values: with ``p_(1) <= ... <= p_(m)`` sorted ascending,
    ``p_adj_(i) = max over j <= i of min(1, (m - j + 1) * p_(j))`` (1-based ``j``), put
    back in the original order. Tied p-values get the same adjusted value whichever of
    them sorts first (the running maximum reaches them together)."""
    m = len(p)
    order = sorted(range(m), key=lambda index: p[index])
    result = [0.0] * m
    for i in range(1, m + 1):
        result[order[i - 1]] = max(min(1.0, (m - j + 1) * p[order[j - 1]]) for j in range(1, i + 1))
    return result


@pytest.mark.parametrize("p", VECTORS)
def test_bh_equals_scipy_false_discovery_control(p: list[float]) -> None:
    expected = [float(value) for value in false_discovery_control(p, method="bh")]
    assert adjusted(p, "bh") == pytest.approx(expected, abs=1e-12, rel=0)


@pytest.mark.parametrize("p", VECTORS)
def test_holm_equals_the_step_down_definition(p: list[float]) -> None:
    assert adjusted(p, "holm") == pytest.approx(_holm_reference(p), abs=1e-12, rel=0)


def test_holm_reference_on_a_hand_worked_vector() -> None:
    # m = 4, sorted 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.5 (x1 = 0.5)
    assert _holm_reference([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])


@pytest.mark.parametrize("p", VECTORS)
def test_none_leaves_p_values_alone(p: list[float]) -> None:
    assert adjusted(p, "none") == p


@pytest.mark.parametrize("method", ["holm", "bh", "none"])
def test_no_p_values(method: str) -> None:
    assert adjusted([], method) == []
