"""[settings.prices] in thresholds.toml: read once, every mistake a usage error that names
the table, the model and the key, and says how to write it instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragmetrics.config.thresholds import ThresholdsError, load_thresholds
from pytest_ragmetrics.metrics.prices import Price


def _load(tmp_path: Path, prices: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "thresholds.toml"
    path.write_text(f"[settings.prices]\n{prices}\n", encoding="utf-8")
    return load_thresholds(path)


def test_prices_by_model(tmp_path: Path) -> None:
    thresholds = _load(
        tmp_path,
        '"gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }\n'
        "compact = { prompt = 0, completion = 1 }",
    )
    prices = thresholds.settings.prices
    assert prices.price("gpt-4o-mini") == Price(0.15, 0.60)
    assert prices.price("compact") == Price(0.0, 1.0)
    assert prices.price("gpt-4o") is None


def test_no_table_no_prices_and_no_change_to_the_signature(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text("[settings]\ntau_sim = 0.65\n", encoding="utf-8")
    plain = load_thresholds(path)
    assert not plain.settings.prices
    priced = _load(tmp_path, '"m" = { prompt = 1, completion = 2 }')
    # only cost_usd reads prices: they are signed per model it priced, not here
    assert priced.settings.signature() == plain.settings.signature()


ADD = 'write e.g. "gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }'


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        (
            "",
            "[settings.prices]: the table is empty; price each model the rows name, e.g. "
            '"gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }, or remove the table',
        ),
        (
            '"m" = { prompt = -0.1, completion = 1 }',
            '[settings.prices] "m" prompt: expected a finite number >= 0 (US dollars per '
            f"million prompt tokens), got -0.1; {ADD}",
        ),
        (
            '"m" = { prompt = 1, completion = inf }',
            '[settings.prices] "m" completion: expected a finite number >= 0 (US dollars per '
            f"million completion tokens), got inf; {ADD}",
        ),
        (
            '"m" = { prompt = nan, completion = 1 }',
            '[settings.prices] "m" prompt: expected a finite number >= 0 (US dollars per '
            f"million prompt tokens), got nan; {ADD}",
        ),
        (
            '"m" = { prompt = "0.15", completion = 1 }',
            '[settings.prices] "m" prompt: expected a finite number >= 0 (US dollars per '
            f"million prompt tokens), got '0.15'; {ADD}",
        ),
        (
            '"m" = { prompt = true, completion = 1 }',
            '[settings.prices] "m" prompt: expected a finite number >= 0 (US dollars per '
            f"million prompt tokens), got True; {ADD}",
        ),
        (
            '"m" = { prompt = 1, completion = 2, cached = 0.5 }',
            '[settings.prices] "m" cached: unknown key; a price has exactly prompt and '
            "completion (US dollars per million tokens), e.g. "
            '"gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }',
        ),
        (
            '"m" = { prompt = 1 }',
            '[settings.prices] "m": completion is missing; give both prompt and completion '
            '(0 is a price), e.g. "gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }',
        ),
        (
            '"m" = 0.15',
            '[settings.prices] "m": expected a table of prompt and completion prices, got '
            f"0.15; {ADD}",
        ),
        (
            '" " = { prompt = 1, completion = 1 }',
            '[settings.prices] " ": a model\'s name cannot be empty or blank',
        ),
    ],
)
def test_a_bad_price_is_a_usage_error(tmp_path: Path, prices: str, message: str) -> None:
    with pytest.raises(ThresholdsError) as raised:
        _load(tmp_path, prices)
    assert str(raised.value) == f"{tmp_path / 'thresholds.toml'}: {message}"


def test_prices_that_are_not_a_table(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text("[settings]\nprices = 0.15\n", encoding="utf-8")
    with pytest.raises(ThresholdsError, match=r"\[settings.prices\]: expected a table"):
        load_thresholds(path)


def test_the_settings_with_prices_travel_to_other_processes(tmp_path: Path) -> None:
    """Ray workers get the run's settings pickled; the prices go with them."""
    import pickle

    settings = _load(tmp_path, '"m" = { prompt = 1, completion = 2 }').settings
    assert pickle.loads(pickle.dumps(settings)).prices.price("m") == Price(1.0, 2.0)


def test_a_cost_gate_without_prices_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text('[gates."evals/test_costs.py"]\n"cost_usd.sum" = "<= 1"\n', encoding="utf-8")
    with pytest.raises(ThresholdsError) as raised:
        load_thresholds(path)
    assert str(raised.value) == (
        f"{path}: [settings.prices]: missing, and the gate 'cost_usd.sum' needs it: cost_usd "
        "prices each LLM call from it; add the table, e.g. [settings.prices] "
        '"gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }'
    )
