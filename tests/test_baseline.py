"""Baseline files and gate evaluation against them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_ragmetrics.baseline import (
    BaselineError,
    baseline_path,
    read_baseline,
    render_baseline,
    signature_differences,
)
from pytest_ragmetrics.config import Gate
from pytest_ragmetrics.files import write_atomic
from pytest_ragmetrics.gates import BaselineState, evaluate_gate
from pytest_ragmetrics.rules import parse_rule
from pytest_ragmetrics.summary import EvalInfo, row_payload, summarize


def test_paths_sit_beside_the_eval_module(tmp_path: Path) -> None:
    module = "evals/test_a.py"
    assert baseline_path(tmp_path, module, module) == tmp_path / "evals/__baselines__/test_a.json"
    named = baseline_path(tmp_path, module, "latency only/v2")
    digest = hashlib.sha256(b"latency only/v2").hexdigest()[:8]
    assert named == tmp_path / f"evals/__baselines__/latency_only_v2-{digest}.json"
    assert baseline_path(tmp_path, module, "fast-v2.1") == (
        tmp_path / "evals/__baselines__/fast-v2.1.json"  # already safe: kept as it is
    )


def test_one_file_per_system_and_names_never_collide(tmp_path: Path) -> None:
    module = "evals/test_a.py"
    path = baseline_path(tmp_path, module, module, "config_a")
    assert path == tmp_path / "evals/__baselines__/test_a[config_a].json"
    spaced = baseline_path(tmp_path, module, module, "a b")
    slashed = baseline_path(tmp_path, module, module, "a/b")
    assert spaced.name.startswith("test_a[a_b-")
    assert slashed.name.startswith("test_a[a_b-")
    assert spaced != slashed


def test_round_trip_with_sorted_keys(tmp_path: Path) -> None:
    path = tmp_path / "b" / "x.json"
    text = render_baseline("x", {"z": 1, "a": 2}, 3, {"f1": {"mean": 0.5, "count": 3}})
    write_atomic(path, text)
    assert path.read_text() == text
    assert list(json.loads(text)) == sorted(json.loads(text))
    assert text.index('"a"') < text.index('"z"')
    baseline = read_baseline(path)
    assert baseline is not None
    assert baseline.value("f1", "mean") == 0.5
    assert baseline.value("f1", "p95") is None
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]  # no temporary left


def test_missing_and_broken_files(tmp_path: Path) -> None:
    assert read_baseline(tmp_path / "none.json") is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(BaselineError, match="not a pytest-ragmetrics baseline"):
        read_baseline(broken)
    future = tmp_path / "future.json"
    future.write_text(json.dumps({"schema_version": 99, "signature": {}, "n": 1, "metrics": {}}))
    with pytest.raises(BaselineError, match="schema_version 99"):
        read_baseline(future)


def test_signature_differences_name_each_key() -> None:
    stored = {"dataset_sha256": "aa", "citation_format": "auto", "metrics_version": 1}
    current = {"dataset_sha256": "bb", "citation_format": "auto", "metrics_version": 1}
    assert signature_differences(stored, current) == ['dataset_sha256: stored "aa", now "bb"']
    assert signature_differences(current, current) == []


INFO = EvalInfo("e", "evals/test_e.py", "d.jsonl", "0" * 64, 2)
(SUMMARY,) = summarize(
    [row_payload(INFO, "a", 0, {"f1": 0.4}, {}, None), row_payload(INFO, "b", 1, {}, {}, None)]
)


def gate(name: str, rule: str) -> Gate:
    metric, stat = name.split(".")
    return Gate(name, metric, stat, parse_rule(rule))


def test_a_gate_on_a_metric_no_row_recorded_fails_but_count_and_sum_are_zero() -> None:
    state = BaselineState("b.json")
    mean = evaluate_gate(SUMMARY, gate("tokens.mean", "<= 1"), state, None)
    assert mean.status == "failed"
    assert "no row of e recorded tokens" in mean.message
    assert '[gates."e"] "tokens.mean" = false' in mean.message
    count = evaluate_gate(SUMMARY, gate("tokens.count", ">= 1"), state, None)
    assert (count.status, count.value) == ("failed", 0.0)
    total = evaluate_gate(SUMMARY, gate("tokens.sum", "== 0"), state, None)
    assert (total.status, total.value) == ("passed", 0.0)


def test_baseline_gates_fail_with_the_reason() -> None:
    state = BaselineState("b.json", problem="stored by someone else")
    result = evaluate_gate(SUMMARY, gate("f1.mean", ">= baseline"), state, None)
    assert result.status == "failed"
    assert "stored by someone else" in result.message
    absolute = evaluate_gate(SUMMARY, gate("f1.mean", ">= 0.3"), state, None)
    assert absolute.status == "passed"  # gates without baseline do not need one


def test_counts_in_the_message() -> None:
    result = evaluate_gate(SUMMARY, gate("f1.mean", ">= 0.5"), BaselineState("b.json"), None)
    assert result.status == "failed"
    assert (result.value, result.bound) == (0.4, 0.5)
    assert "rows      1 with a value of 2 run (0 errored; dataset has 2)" in result.message
