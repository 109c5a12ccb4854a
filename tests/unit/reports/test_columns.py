"""How the report tables format milliseconds: whole from 1 ms up, two decimals below, so a
sub-millisecond latency never shows as 0. Expected strings by hand."""

from __future__ import annotations

import pytest

from pytest_ragmetrics.reports.columns import main_columns, ms
from pytest_ragmetrics.reports.model import EvalView


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (559.4, "559"),  # the live example's topk P50
        (559.5, "560"),
        (0.27, "0.27"),  # mmr's, served from the embedding cache
        (1.4, "1"),
        (0.996, "1"),  # rounds to 1.00: shown as the whole millisecond it is
        (0.994, "0.99"),
        (0.005, "0.01"),
        (0.004, "<0.01"),
        (0.0, "0"),
        (-0.0, "0"),
    ],
)
def test_ms(value: float, shown: str) -> None:
    assert ms(value) == shown


def _view(metrics: dict[str, dict[str, float]]) -> EvalView:
    return EvalView.from_dict({"name": "e", "label": "e", "n": 1, "metrics": metrics})


def test_the_p50_column_shows_a_sub_millisecond_latency() -> None:
    (p50,) = [column for column in main_columns() if column.heading == "P50 ms"]
    assert p50.cell(_view({"latency_ms": {"p50": 0.27}})) == "0.27"
    assert p50.cell(_view({"latency_ms": {"p50": 559.4}})) == "559"
    assert len(p50.cell(_view({"latency_ms": {"p50": 0.004}}))) <= len(p50.heading)
