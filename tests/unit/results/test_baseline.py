"""Baseline files, pairing a run's rows with a stored baseline, and gates against it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from pytest_ragmetrics.config.rules import parse_rule
from pytest_ragmetrics.config.thresholds import Gate, Settings
from pytest_ragmetrics.files import write_atomic
from pytest_ragmetrics.gates.evaluate import evaluate_gate
from pytest_ragmetrics.gates.stored import pair_rows, regressed_rows
from pytest_ragmetrics.results.baseline import (
    BaselineError,
    SignatureCheck,
    StoredRow,
    baseline_path,
    check_signature,
    input_digest,
    metric_of,
    read_baseline,
    render_baseline,
    signature_differences,
)
from pytest_ragmetrics.results.pairing import BaselineState, Pairing
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    RowPayload,
    RowResult,
    summarize,
)


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


ROWS = {
    "q2": StoredRow("d2", {"f1": 0.25, "tokens": 200.0}, {}, "other"),
    "q1": StoredRow("d1", {"f1": 1.0}, {"bleu_stats": {"len": 3.0}}, "supported"),
}


def _render(rows: Mapping[str, StoredRow] = ROWS) -> str:
    metrics = {"f1": {"mean": 0.625, "count": 2}}
    return render_baseline("x", {"z": 1, "a": 2}, len(rows), metrics, rows, "d.jsonl")


def test_round_trip_with_sorted_keys_and_one_row_a_line(tmp_path: Path) -> None:
    path = tmp_path / "b" / "x.json"
    text = _render()
    write_atomic(path, text)
    assert path.read_text() == text
    document = json.loads(text)
    assert list(document) == sorted(document)
    assert text.index('"a"') < text.index('"z"')
    row_lines = [line for line in text.splitlines() if line.startswith('    "q')]
    assert [line.split(":")[0].strip() for line in row_lines] == ['"q1"', '"q2"']
    baseline = read_baseline(path)
    assert baseline is not None
    assert baseline.value("f1", "mean") == 0.625
    assert baseline.value("f1", "p95") is None
    assert baseline.rows == ROWS
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]  # no temporary left


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not JSON"),
        (
            b'{"schema_version": 2, "signature": {}, "n": 1, "metrics": {"f1": {"mean": NaN}}}',
            "NaN",
        ),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"schema_version": 99, "signature": {}, "n": 1, "metrics": {}}', "schema_version 99"),
        (b'{"schema_version": 2, "signature": {}, "metrics": {}, "rows": {}}', "n: expected"),
        (
            b'{"schema_version": 2, "signature": {}, "n": 1, "rows": {},'
            b' "metrics": {"f1": {"mean": "0.5"}}}',
            'metrics.f1.mean: expected a number, got "0.5"',
        ),
        (
            b'{"schema_version": 2, "signature": {}, "n": 1, "metrics": {},'
            b' "rows": {"q1": {"inputs": "d", "values": {"f1": true}}}}',
            "rows['q1'].values.f1: expected a number",
        ),
        (
            b'{"schema_version": 2, "signature": {}, "n": 1, "metrics": {},'
            b' "rows": {"q1": {"values": {}}}}',
            "rows['q1'].inputs",
        ),
        (
            b'{"schema_version": 2, "signature": {}, "n": 1, "rows": {},'
            b' "metrics": {"f1": {"mean": 1' + b"0" * 400 + b"}}}",
            "metrics.f1.mean: expected a finite number",
        ),
    ],
)
def test_a_broken_file_is_an_error_naming_the_key(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError, match="not a pytest-ragmetrics baseline") as error:
        read_baseline(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_duplicate_row_ids_are_refused_naming_them(tmp_path: Path) -> None:
    """JSON keeps the last of two equal keys: a hand-merged file with a row twice would
    compare against whichever came last. The file is refused, naming each id."""
    path = tmp_path / "merged.json"
    row = '{"inputs": "d", "values": {"f1": %s}}'
    path.write_text(
        '{"schema_version": 2, "signature": {}, "n": 3, "metrics": {}, "rows": {'
        f'"q1": {row % 0.5}, "q2": {row % 1}, "q1": {row % 0}, "q3": {row % 1}, '
        f'"q3": {row % 1}, "q3": {row % 0}}}}}'
    )
    with pytest.raises(BaselineError) as error:
        read_baseline(path)
    message = str(error.value)
    assert message.startswith(f"{path}: not a pytest-ragmetrics baseline: ")
    assert "rows: row ids stored more than once: 'q1' (2 times), 'q3' (3 times)" in message
    assert "'q2'" not in message


def test_a_key_stored_twice_elsewhere_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text(
        '{"schema_version": 2, "signature": {}, "n": 1, "rows": {},'
        ' "metrics": {"f1": {"mean": 0.5, "mean": 0.9}}}'
    )
    with pytest.raises(BaselineError, match=r"metrics\.f1: keys stored more than once: 'mean'"):
        read_baseline(path)
    path.write_text(
        '{"schema_version": 2, "n": 1, "rows": {}, "metrics": {},'
        ' "signature": {"retrieval": {"relevance_level": 1, "relevance_level": 2}}}'
    )
    with pytest.raises(BaselineError, match=r"signature\.retrieval: keys stored more than once"):
        read_baseline(path)


def test_no_file_is_no_baseline(tmp_path: Path) -> None:
    assert read_baseline(tmp_path / "none.json") is None


def test_a_schema_1_file_loads_without_rows_and_its_output_hashes_are_not_settings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.json"
    signature = {"dataset": "d.jsonl", "dataset_sha256": "aa", "tau_sim": 0.65}
    path.write_text(
        json.dumps({"schema_version": 1, "signature": signature, "n": 2, "metrics": {}})
    )
    baseline = read_baseline(path)
    assert baseline is not None
    assert (baseline.schema_version, baseline.rows) == (1, None)
    assert baseline.settings_signature() == {"tau_sim": 0.65}


def test_signature_differences_name_each_key() -> None:
    stored = {"tau_sim": 0.65, "citation_format": "auto", "metrics_version": 1}
    current = {"tau_sim": 0.7, "citation_format": "auto", "metrics_version": 1}
    assert signature_differences(stored, current) == ["tau_sim: stored 0.65, now 0.7"]
    assert signature_differences(current, current) == []
    # A key only one side has is a setting left at its default on the other.
    changed = {**current, "rouge_use_stemmer": True}
    assert signature_differences(current, changed) == [
        "rouge_use_stemmer: stored default, now true"
    ]
    assert signature_differences(changed, current) == [
        "rouge_use_stemmer: stored true, now default"
    ]


def test_a_metric_version_is_that_metrics_alone() -> None:
    """A version key belongs to its metric: only that metric's numbers are incomparable,
    while a shared setting makes the whole file so."""
    stored = {"tau_sim": 0.65, "words.version": "1", "cites.version": "1"}
    bumped = {"tau_sim": 0.65, "words.version": "2", "cites.version": "1", "new.version": "1"}
    check = check_signature(stored, bumped)
    assert check.settings == ()
    assert check.metrics == {
        "words": ('words.version: stored "1", now "2"',),
        "new": ('new.version: stored default, now "1"',),
    }
    both = check_signature(stored, {**bumped, "tau_sim": 0.7})
    assert both.settings == ("tau_sim: stored 0.65, now 0.7",)
    assert set(both.metrics) == {"words", "new"}
    assert check_signature(stored, stored) == SignatureCheck()
    # Only ``<metric>.version`` is a metric's; a dotted key of another kind is not.
    assert metric_of("words.version") == "words"
    assert metric_of("tau_sim") is None
    assert metric_of("words.other") is None


def test_a_models_price_is_compared_only_where_both_sides_priced_that_model() -> None:
    """cost_usd's prices are signed per model it priced: a model only one side used says
    nothing of the other's numbers (moving from one model to another is what the cost gate
    is there to read); the same model at another price makes cost_usd alone unlike."""
    mini = {"prompt": 0.15, "completion": 0.6}
    stored = {"tau_sim": 0.65, "cost_usd.price[gpt-4o-mini]": mini}
    moved = {"tau_sim": 0.65, "cost_usd.price[gpt-4.1]": {"prompt": 2.0, "completion": 8.0}}
    assert check_signature(stored, moved) == SignatureCheck()
    assert check_signature(stored, {**moved, **stored}) == SignatureCheck()
    repriced = {"tau_sim": 0.65, "cost_usd.price[gpt-4o-mini]": {**mini, "prompt": 0.3}}
    check = check_signature(stored, repriced)
    assert check.settings == ()
    assert check.metrics == {
        "cost_usd": (
            'cost_usd.price[gpt-4o-mini]: stored {"completion": 0.6, "prompt": 0.15}, now '
            '{"completion": 0.6, "prompt": 0.3}',
        )
    }
    assert metric_of("cost_usd.price[gpt-4.1]") == "cost_usd"  # a dot in the model's name
    assert metric_of("cost_usd.price") is None


def test_a_rows_input_digest_ignores_what_the_system_answered() -> None:
    asked = {"id": "q1", "question": "Capital?", "gold": ["Paris"], "answerable": True}
    answered = {**asked, "answer": "Paris [1].", "tokens": 120, "latency_ms": 800.0}
    again = {**asked, "answer": "Lyon.", "tokens": 180, "telemetry": {"rounds": 2}}
    assert input_digest(asked) == input_digest(answered) == input_digest(again)
    reordered = dict(reversed(list(answered.items())))
    assert input_digest(reordered) == input_digest(asked)
    assert input_digest({**asked, "question": "Capital of France?"}) != input_digest(asked)
    assert input_digest({**asked, "gold": ["Paris", "Paname"]}) != input_digest(asked)
    assert input_digest({**asked, "relevant": ["d1"]}) != input_digest(asked)


# -- pairing and gates against a stored baseline -----------------------------------------

INFO = EvalInfo("e", "evals/test_e.py", "d.jsonl", "0" * 64, 4)


def _summary(rows: Mapping[str, tuple[str, Mapping[str, float]]]) -> EvalSummary:
    """An eval over rows id -> (inputs digest, values), in the given order."""
    payloads = [
        RowPayload(INFO, row_id, index, values, {}, None, inputs=inputs)
        for index, (row_id, (inputs, values)) in enumerate(rows.items())
    ]
    (summary,) = summarize(payloads, Settings())
    return summary


def _stored(summary: EvalSummary) -> dict[str, StoredRow]:
    return {row.id: StoredRow(row.inputs, dict(row.values), {}) for row in summary.rows}


BEFORE = {
    "a": ("da", {"tokens": 100.0, "f1": 1.0}),
    "b": ("db", {"tokens": 200.0, "f1": 0.5}),
    "c": ("dc", {"tokens": 300.0, "f1": 0.0}),
    "d": ("dd", {"tokens": 400.0, "f1": 1.0}),
}


def _pair(
    tmp_path: Path, after: Mapping[str, tuple[str, Mapping[str, float]]]
) -> tuple[BaselineState, EvalSummary]:
    """The state of a baseline stored from ``BEFORE`` against a run of ``after``."""
    before = _summary(BEFORE)
    path = tmp_path / "b.json"
    path.write_text(render_baseline("e", {}, before.n, before.metrics, _stored(before), "d.jsonl"))
    baseline = read_baseline(path)
    assert baseline is not None
    current = _summary(after)
    pairing = pair_rows(current, baseline, Settings())
    return BaselineState("b.json", baseline, pairing=pairing), current


def gate(name: str, rule: str) -> Gate:
    metric, stat = name.rsplit(".", 1)
    return Gate(name, metric, stat, parse_rule(rule))


def test_the_same_rows_pair_exactly_and_compare_the_stored_aggregates(tmp_path: Path) -> None:
    state, current = _pair(tmp_path, BEFORE)
    pairing = state.pairing
    assert isinstance(pairing, Pairing)
    assert (pairing.exact, pairing.coverage, pairing.shared) == (True, 1.0, ("a", "b", "c", "d"))
    result = evaluate_gate(
        current, gate("tokens.mean", "<= 1.2x baseline"), state, None, settings=Settings()
    )
    assert (result.status, result.value, result.baseline) == ("passed", 250.0, 250.0)
    assert "regressed 0 of 4 paired rows" in result.message


def test_a_changed_log_is_compared_and_names_the_rows_that_regressed(tmp_path: Path) -> None:
    # Every row's tokens rise by half: the mean goes 250 -> 375, above 1.2 x 250 = 300.
    after = {k: (d, {**v, "tokens": v["tokens"] * 1.5}) for k, (d, v) in BEFORE.items()}
    after["b"] = ("db", {"tokens": 210.0, "f1": 0.5})  # +5%: within the rule on its own
    state, current = _pair(tmp_path, after)
    result = evaluate_gate(
        current, gate("tokens.mean", "<= 1.2x baseline"), state, None, settings=Settings()
    )
    # tokens 150 + 210 + 450 + 600 = 1410 over 4 rows = 352.5
    assert (result.status, result.value, result.baseline, result.bound) == (
        "failed",
        352.5,
        250.0,
        300.0,
    )
    assert [change.id for change in result.regressed] == ["a", "c", "d"]
    assert "regressed 3 of 4 paired rows break the rule on their own: a 100 → 150" in (
        result.message
    )


def test_removed_added_and_changed_rows_are_left_out_of_the_comparison(tmp_path: Path) -> None:
    after = {
        "a": ("da", {"tokens": 100.0, "f1": 0.0}),  # shared, F1 dropped
        "b": ("db", {"tokens": 200.0, "f1": 0.5}),  # shared, unchanged
        "c": ("dX", {"tokens": 900.0, "f1": 1.0}),  # same id, another question
        "e": ("de", {"tokens": 50.0, "f1": 1.0}),  # new
    }  # "d" was removed
    state, current = _pair(tmp_path, after)
    pairing = state.pairing
    assert pairing is not None
    assert (pairing.shared, pairing.added, pairing.removed, pairing.changed) == (
        ("a", "b"),
        ("e",),
        ("d",),
        ("c",),
    )
    assert pairing.coverage == 0.5  # 2 of 4 stored rows
    result = evaluate_gate(
        current, gate("f1.mean", ">= baseline"), state, None, settings=Settings()
    )
    # on a and b only: before (1 + 0.5) / 2 = 0.75, now (0 + 0.5) / 2 = 0.25
    assert (result.status, result.value, result.baseline) == ("failed", 0.25, 0.75)
    assert "2 of 4 stored rows paired (coverage 0.500): 1 removed, 1 added, 1 with changed" in (
        result.message
    )
    assert [change.describe() for change in result.regressed] == ["a 1 → 0"]
    # an absolute gate still looks at the whole run: (0 + 0.5 + 1 + 1) / 4
    whole = evaluate_gate(current, gate("f1.mean", ">= 0.6"), state, None, settings=Settings())
    assert (whole.status, whole.value) == ("passed", 0.625)


def test_coverage_is_a_gate(tmp_path: Path) -> None:
    after = {k: BEFORE[k] for k in ("a", "b", "c")}
    state, current = _pair(tmp_path, after)
    coverage = gate("baseline.coverage", ">= 0.95")
    result = evaluate_gate(current, coverage, state, None, settings=Settings())
    assert (result.status, result.value) == ("failed", 0.75)
    removed = evaluate_gate(
        current, gate("baseline.removed", "== 1"), state, None, settings=Settings()
    )
    assert removed.status == "passed"
    missing = evaluate_gate(current, coverage, BaselineState("b.json"), None, settings=Settings())
    assert missing.status == "failed"
    assert "no baseline is stored at b.json" in missing.message


def test_the_rule_applied_to_one_row_drops_a_totals_offset() -> None:
    rows = [RowResult("a", 0, {"x": 3.0}), RowResult("b", 1, {"x": 1.0})]
    earlier = {"a": {"x": 1.0}, "b": {"x": 1.0}}
    # "sum <= baseline + 5" allows the total to grow by 5; a single row grew by 2 and
    # another stayed: the row that grew is the one that moved the total.
    grown = regressed_rows(gate("x.sum", "<= baseline + 5"), rows, earlier)
    assert [c.id for c in grown] == ["a"]
    within = regressed_rows(gate("x.mean", "<= baseline + 5"), rows, earlier)
    assert within == ()
    assert regressed_rows(gate("x.count", ">= baseline"), rows, earlier) == ()


def test_a_gate_whose_baseline_cannot_be_used_fails_and_never_suggests_accepting_silently(
    tmp_path: Path,
) -> None:
    current = _summary(BEFORE)
    missing = evaluate_gate(
        current, gate("f1.mean", ">= baseline"), BaselineState("b.json"), None, settings=Settings()
    )
    assert missing.status == "failed"
    assert "this accepts them as the reference" in missing.message
    refused = BaselineState("b.json", problem="made with other metric settings")
    result = evaluate_gate(
        current, gate("f1.mean", ">= baseline"), refused, None, settings=Settings()
    )
    assert result.status == "failed"
    assert "made with other metric settings" in result.message
    absolute = evaluate_gate(current, gate("f1.mean", ">= 0.3"), refused, None, settings=Settings())
    assert absolute.status == "passed"  # gates without baseline do not need one


def test_a_bound_no_float_holds_fails_instead_of_passing_forever(tmp_path: Path) -> None:
    state, current = _pair(tmp_path, BEFORE)
    huge = gate("tokens.mean", "<= 1e307x baseline")  # 1e307 x 250 overflows to inf
    result = evaluate_gate(current, huge, state, None, settings=Settings())
    assert result.status == "failed"
    assert "not finite could never fail" in result.message


SUMMARY = _summary({"a": ("da", {"f1": 0.4}), "b": ("db", {})})


@pytest.mark.parametrize(
    ("name", "rule"),
    # tokens.sum == 0 and tokens.count <= 3 would hold of a 0; no row has a value to sum.
    [("tokens.mean", "<= 1"), ("tokens.count", "<= 3"), ("tokens.sum", "== 0")],
)
def test_a_gate_on_a_metric_no_row_recorded_cannot_be_checked(name: str, rule: str) -> None:
    state = BaselineState("b.json")
    result = evaluate_gate(SUMMARY, gate(name, rule), state, None, settings=Settings())
    assert (result.status, result.value) == ("failed", None)
    assert f"{name} {rule}: cannot be checked: no row of e recorded tokens" in result.message
    assert f'[gates."e"] "{name}" = false' in result.message


def test_counts_in_the_message() -> None:
    result = evaluate_gate(
        SUMMARY, gate("f1.mean", ">= 0.5"), BaselineState("b.json"), None, settings=Settings()
    )
    assert result.status == "failed"
    assert (result.value, result.bound) == (0.4, 0.5)
    assert "rows      1 with a value of 2 run (0 errored; dataset has 4)" in result.message


def test_a_metric_no_shared_row_recorded_cannot_be_compared(tmp_path: Path) -> None:
    after = {"a": ("da", {"tokens": 100.0}), "e": ("de", {"tokens": 50.0, "f1": 1.0})}
    state, current = _pair(tmp_path, after)
    result = evaluate_gate(
        current, gate("f1.mean", ">= baseline"), state, None, settings=Settings()
    )
    assert result.status == "failed"
    assert "no row this run shares with b.json recorded f1" in result.message
