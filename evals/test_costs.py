"""Cost of a cheaper configuration, logged as CSV: tokens, their price in US dollars at
thresholds.toml's [settings.prices] (each call at its model's), and latency per question."""

import pytest


@pytest.mark.ragmetrics(dataset="data/costs.csv")
def test_costs(row, tokens, cost_usd, latency, f1):
    tokens(row)
    cost_usd(row)
    latency(row)
    f1(row)
