"""Cost of a cheaper configuration, logged as CSV: tokens and latency per question."""

import pytest


@pytest.mark.ragmetrics(dataset="data/costs.csv")
def test_costs(row, tokens, latency, f1):
    tokens(row)
    latency(row)
    f1(row)
