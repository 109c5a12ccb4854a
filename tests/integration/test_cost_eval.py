"""cost_usd through pytest: the bundled cost eval equals hand computation and passes its
gates, a cost gate reads a stored baseline, and bad prices or unpriced rows are reported
where they are. In-process runs (``pytester.runpytest``)."""

from __future__ import annotations

import csv
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers.project import jsonl

ROOT = Path(__file__).resolve().parents[2]
# The bundled thresholds.toml's prices, in US dollars per million prompt / completion
# tokens, written out here so the test computes by hand (and checks the file says so).
PRICES = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00)}


def _hand_cost(row: dict[str, str]) -> float:
    """One CSV row's cost: each call's prompt and completion tokens at its model's price
    (the call's own model, else the row's)."""
    tokens = json.loads(row["tokens"])
    if isinstance(tokens, dict):
        calls = [{"prompt_tokens": tokens["prompt"], "completion_tokens": tokens["completion"]}]
    else:
        calls = tokens
    cost = 0.0
    for call in calls:
        prompt_price, completion_price = PRICES[call.get("model", row["model"])]
        cost += call["prompt_tokens"] * prompt_price / 1_000_000
        cost += call["completion_tokens"] * completion_price / 1_000_000
    return cost


def test_the_bundled_cost_eval_equals_hand_computation(pytester: pytest.Pytester) -> None:
    thresholds = tomllib.loads((ROOT / "thresholds.toml").read_text(encoding="utf-8"))
    bundled = thresholds["settings"]["prices"]
    for model, (prompt, completion) in PRICES.items():
        assert bundled[model] == {"prompt": prompt, "completion": completion}
    gates = thresholds["gates"]["evals/test_costs.py"]
    assert gates["cost_usd.mean"] == "<= 1.1x baseline"
    assert "cost_usd.sum" in gates
    # the eval, its data and stored baseline as bundled; the root file's prices and gates
    evals = pytester.path / "evals"
    (evals / "data").mkdir(parents=True)
    shutil.copy(ROOT / "evals" / "test_costs.py", evals)
    shutil.copy(ROOT / "evals" / "data" / "costs.csv", evals / "data")
    shutil.copytree(ROOT / "evals" / "__baselines__", evals / "__baselines__")
    (pytester.path / "thresholds.toml").write_text(
        "[settings.prices]\n"
        + "".join(f'"{m}" = {{ prompt = {p}, completion = {c} }}\n' for m, (p, c) in PRICES.items())
        + '\n[gates."evals/test_costs.py"]\n'
        + "".join(f'"{name}" = "{rule}"\n' for name, rule in gates.items())
    )
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("evals/test_costs.py", "--ragmetrics-json=r.json")
    assert result.ret == 0, result.stdout.str()
    entry = json.loads((pytester.path / "r.json").read_text())["evals"][0]
    with (ROOT / "evals" / "data" / "costs.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    recorded = {row["id"]: row["metrics"]["cost_usd"] for row in entry["rows"]}
    for row in rows:
        assert recorded[row["id"]] == pytest.approx(_hand_cost(row), rel=1e-12)
    # By hand over the 40 rows: gpt-4o-mini 20,832 prompt and 1,216 completion tokens,
    # gpt-4o (the second call of cost-07, -17, -27, -37) 2,492 and 80:
    #   20832 x 0.15 / 1e6 = 0.0031248     1216 x 0.60 / 1e6 = 0.0007296
    #   2492 x 2.50 / 1e6  = 0.00623       80 x 10.00 / 1e6  = 0.0008
    #   sum 0.0108844, mean over 40 rows 0.00027211
    assert entry["metrics"]["cost_usd"]["sum"] == pytest.approx(0.0108844, rel=1e-12)
    assert entry["metrics"]["cost_usd"]["mean"] == pytest.approx(0.00027211, rel=1e-12)
    gated = {gate["name"]: gate["status"] for gate in entry["gates"]}
    assert gated["cost_usd.mean"] == "passed"
    assert gated["cost_usd.sum"] == "passed"


EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_costs(row, tokens, cost_usd):
    tokens(row); cost_usd(row)
"""


def _rows(model: str = "small", count: int = 4) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "question": f"question {i}",
            "tokens": {"prompt": 1000, "completion": 100},
            "model": model,
        }
        for i in range(count)
    ]


def _thresholds(small: str = "{ prompt = 1.0, completion = 2.0 }") -> str:
    return (
        "[settings.prices]\n"
        f"small = {small}\n"
        "large = { prompt = 5.0, completion = 20.0 }\n"
        '[gates]\n"cost_usd.mean" = "<= 1.1x baseline"\n'
    )


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Four rows of 1,000 prompt + 100 completion tokens of model small ($1 / $2 per
    million): 1000 x 1 / 1e6 + 100 x 2 / 1e6 = $0.0012 a row; the baseline stored."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl(_rows()))
    (pytester.path / "thresholds.toml").write_text(_thresholds())
    assert pytester.runpytest("--ragmetrics-update-baseline").ret == 0
    baseline = json.loads((pytester.path / "__baselines__" / "test_eval.json").read_text())
    assert baseline["metrics"]["cost_usd"]["mean"] == pytest.approx(0.0012, rel=1e-12)
    return pytester


def _gate(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest("--ragmetrics-json=r.json")
    entry = json.loads((pytester.path / "r.json").read_text())["evals"][0]
    return result, next(g for g in entry["gates"] if g["name"] == "cost_usd.mean")


def test_a_dearer_model_fails_the_cost_gate_against_the_baseline(
    project: pytest.Pytester,
) -> None:
    # the same tokens on model large: 1000 x 5 / 1e6 + 100 x 20 / 1e6 = $0.007 a row,
    # beyond 1.1 x 0.0012 = 0.00132
    (project.path / "rows.jsonl").write_text(jsonl(_rows("large")))
    result, gate = _gate(project)
    assert result.ret == 1
    assert gate["status"] == "failed"
    assert gate["value"] == pytest.approx(0.007, rel=1e-12)
    assert gate["baseline"] == pytest.approx(0.0012, rel=1e-12)
    result.stdout.fnmatch_lines(["cost_usd.mean <= 1.1x baseline FAILS*"])


def test_the_same_rows_pass_the_cost_gate(project: pytest.Pytester) -> None:
    result, gate = _gate(project)
    assert result.ret == 0
    assert gate["status"] == "passed"


def test_a_new_price_of_a_model_the_baseline_used_leaves_cost_uncompared(
    project: pytest.Pytester,
) -> None:
    (project.path / "thresholds.toml").write_text(_thresholds("{ prompt = 2.0, completion = 2.0 }"))
    result, gate = _gate(project)
    assert gate["status"] != "passed"
    result.stdout.fnmatch_lines(
        [
            "cost_usd.mean <= 1.1x baseline: cannot be checked",
            "the baseline __baselines__/test_eval.json was made with other prices of cost_usd, "
            "so cost_usd is not compared (its other metrics are); what differs:",
            '  cost_usd.price[small]: stored {"completion": 2.0, "prompt": 1.0}, now '
            '{"completion": 2.0, "prompt": 2.0}',
            "restore the earlier prices of cost_usd; or, if the new prices are meant to stay, *",
        ]
    )


def test_a_bad_price_stops_the_run_before_any_row(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl(_rows()))
    (pytester.path / "thresholds.toml").write_text(_thresholds("{ prompt = -1, completion = 2.0 }"))
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        'thresholds.toml: [settings.prices] "small" prompt: expected a finite number >= 0 '
        "(US dollars per million prompt tokens), got -1"
    ) in result.stderr.str()
    assert "passed" not in result.stdout.str()


def test_an_unpriced_model_errors_its_row_at_its_line(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    rows = _rows()
    rows[2]["model"] = "medium"
    (pytester.path / "rows.jsonl").write_text(jsonl(rows))
    (pytester.path / "thresholds.toml").write_text(_thresholds().split("[gates]")[0])
    result = pytester.runpytest()
    assert result.ret == 1
    result.assert_outcomes(passed=3, errors=1)
    assert "rows.jsonl:3: field 'model': model 'medium' has no price in [settings.prices]" in (
        result.stdout.str()
    )
