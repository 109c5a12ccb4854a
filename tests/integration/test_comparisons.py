"""Comparisons with evidence through pytest: gates paired over the rows both sides
recorded, rules read on intervals, the multiplicity correction, advice on margins, and
the same numbers in every mode. In-process runs (``pytester.runpytest``) unless the
subject is merging across workers.

Every expected verdict here follows from the data by hand: a change that is the same
on every pair has no spread (its interval is that change), a handful of changed pairs
cannot reach p < 0.05 in a sign-flip test (k changed pairs all one way: p = 2 / 2^k),
and McNemar's exact p-value of ``n10`` against ``n01`` discordant pairs is a binomial
tail computed in the test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from helpers.project import IN_PROCESS, Project, jsonl

ROWS = 40

EVAL = """
import os

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")
UNRECORDED = set(os.environ.get("UNRECORDED_F1", "").split(","))


def test_answers(row, f1, em, tokens):
    # f1 is recorded only where the short-circuit reaches it, as in
    # `assert a == 1 or overlap(row) >= 0.5`
    assert row.id in UNRECORDED or f1(row) >= 0
    em(row)
    tokens(row)
"""


def _row(i: int, *, right: bool = True, extra: bool = False) -> dict[str, Any]:
    """Row ``q<i>``: a right answer (F1 1, EM 1), a right one with an extra word (F1 2/3,
    EM 0) or a wrong one (F1 0, EM 0); ``10 * (10 + i)`` tokens."""
    city = f"City{i}"
    answer = (f"{city} indeed" if extra else city) if right else "Nowhere"
    return {
        "id": f"q{i:02d}",
        "question": f"Which city is number {i}?",
        "answer": answer,
        "gold": [city],
        "tokens": 10 * (10 + i),
    }


def _store(project: Project, rows: list[dict[str, Any]], gates: str) -> None:
    """The eval with ``rows`` and their baseline stored, then ``gates`` in force (the run
    that stores a baseline compares with it too, where a proven rise could not pass)."""
    project.write("test_eval.py", EVAL)
    project.write("rows.jsonl", jsonl(rows))
    project.write("thresholds.toml", "")
    project.run("--ragmetrics-update-baseline").assert_outcomes(passed=len(rows))
    project.write("thresholds.toml", gates)


def _gates(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {gate["name"]: gate for entry in report["evals"] for gate in entry["gates"]}


def _mcnemar(n10: int, n01: int) -> float:
    """Exact two-sided McNemar: twice the binomial(n10 + n01, 1/2) tail of the smaller."""
    trials, small = n10 + n01, min(n10, n01)
    tail = sum(math.comb(trials, i) for i in range(small + 1)) / 2**trials
    return min(1.0, 2 * tail)


def test_a_metric_recorded_on_some_rows_is_compared_on_the_rows_both_recorded(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The baseline recorded f1 on 28 rows of 30 (q00, q01 short-circuit); q02 and q03
    # answered right (F1 1) and the rest with an extra word (F1 2/3). This run answers
    # the same, but q02 and q03 now short-circuit too: over its 26 rows the mean is 2/3,
    # while the stored mean over 28 is (26 * 2/3 + 2) / 28. Compared over the same 26
    # rows, nothing changed.
    rows = [_row(i, extra=i not in (2, 3)) for i in range(30)]
    gates = '[gates]\n"f1.mean" = ">= baseline"\n'
    monkeypatch.setenv("UNRECORDED_F1", "q00,q01")
    _store(project, rows, gates)
    stored = json.loads((project.path / "__baselines__" / "test_eval.json").read_text())
    assert stored["metrics"]["f1"]["mean"] == pytest.approx((26 * 2 / 3 + 2) / 28)
    monkeypatch.setenv("UNRECORDED_F1", "q00,q01,q02,q03")
    result, report = project.run_json()
    result.assert_outcomes(passed=30 + 1)
    gate = _gates(report)["f1.mean"]
    assert (gate["value"], gate["baseline"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert (gate["stats"]["n_pairs"], gate["stats"]["n_shared"]) == (26, 30)
    assert gate["stats"]["verdict"] == "unchanged"
    assert "· 26 of 30 pairs ·" in gate["message"]
    assert (
        "on 26 pairs: the rows both sides recorded f1 on, of 30 they share (2 only in the "
        "reference)"
    ) in gate["message"]


def test_an_inferiority_rule_fails_only_on_shown_harm(project: Project) -> None:
    # Tokens grow by exactly 10% on every row: no spread, the ratio is 1.1 in every
    # resample; shown beyond 1.05 (fails), shown within 1.2 (a proven rule passes).
    rows = [_row(i) for i in range(ROWS)]
    gates = (
        "[gates]\n"
        '"tokens.mean" = "<= 1.05x baseline @ 95%"\n'
        '"tokens.sum" = "<= 1.2x baseline @ 95% proven"\n'
    )
    _store(project, rows, gates)
    project.write("rows.jsonl", jsonl([{**r, "tokens": r["tokens"] * 11 // 10} for r in rows]))
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS + 1, failed=1)
    found = _gates(report)
    mean, total = found["tokens.mean"], found["tokens.sum"]
    assert mean["status"] == "failed"
    assert mean["stats"]["interval"] == [pytest.approx(1.1), pytest.approx(1.1)]
    assert mean["stats"]["reading"] == "inferiority"
    assert mean["stats"]["verdict"] == "regressed"
    assert total["status"] == "passed"
    assert total["stats"]["reading"] == "non-inferiority"
    for key in ("delta", "ci", "confidence", "p_value", "method", "n_pairs", "mde", "verdict"):
        assert key in mean["stats"], key
    assert mean["stats"]["delta"] == pytest.approx(0.1 * 10 * (10 + 19.5))
    # the test of the bound itself: every row's tokens less 1.05x its baseline's are
    # above 0, and of 10,000 random sign flips none reaches the sum (2 flips in 2^40 do)
    assert mean["stats"]["bound"] == pytest.approx(1.05)
    assert mean["stats"]["p_bound"] == pytest.approx(1 / 10_001)
    result.stdout.fnmatch_lines(
        [
            "*tokens.mean <= 1.05x baseline @ 95% FAILS: the change is 1.1x "
            "[[]95% CI 1.1x, 1.1x[]]",
            "*reading   inferiority: fails only when the whole 95% interval of the ratio to the "
            "baseline lies above 1.05x",
        ]
    )


def test_a_few_changed_rows_are_within_noise_for_an_inferiority_rule(project: Project) -> None:
    # Three rows of 40 lose their right answer: a plain `>= baseline` fails on the mean,
    # but three changes all one way have a sign-flip p-value of 2 / 8 = 0.25, so the same
    # rule read on its interval does not call it harm.
    rows = [_row(i) for i in range(ROWS)]
    gates = '[gates]\n"f1.mean" = ">= baseline @ 95%"\n"em.rate" = ">= baseline"\n'
    _store(project, rows, gates)
    changed = [_row(i, right=i >= 3) for i in range(ROWS)]
    project.write("rows.jsonl", jsonl(changed))
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS + 1, failed=1)
    found = _gates(report)
    assert found["f1.mean"]["status"] == "passed"
    assert found["f1.mean"]["stats"]["p_value"] == pytest.approx(2 / 8)
    assert found["f1.mean"]["stats"]["p_bound"] == pytest.approx(2 / 8)  # the bound: no change
    assert found["f1.mean"]["stats"]["verdict"] == "within noise"
    assert found["em.rate"]["status"] == "failed"  # the plain rule compares the numbers
    assert found["em.rate"]["stats"]["p_value"] == pytest.approx(_mcnemar(0, 3), abs=1e-12)
    assert "flips on noise" in found["em.rate"]["stats"]["advice"]
    result.stdout.fnmatch_lines(["Warnings:", "*test_eval.py::gate::em.rate: a margin of 0*"])


def _tripled(rows: int) -> list[dict[str, Any]]:
    return [{**_row(i), "tokens": 3 * _row(i)["tokens"]} for i in range(rows)]


def test_a_rule_its_pairs_can_never_decide_fails_and_says_why(project: Project) -> None:
    # 5 pairs: even with every row's tokens tripled, the exact sign-flip test's p-value
    # is 2 / 2^5 = 0.0625, not below 0.05, so `@ 95%` could never fail: the gate cannot
    # be checked, unchanged or not, and a correction does not make it pass. With 6 rows
    # (p = 2 / 2^6) the same change fails on its evidence.
    gates = (
        '[settings.stats]\ncorrection = "holm"\n[gates]\n"tokens.mean" = "<= 1.2x baseline @ 95%"\n'
    )
    _store(project, [_row(i) for i in range(5)], gates)
    for rows in ([_row(i) for i in range(5)], _tripled(5)):
        project.write("rows.jsonl", jsonl(rows))
        result, report = project.run_json()
        result.assert_outcomes(passed=5, failed=1)
        gate = _gates(report)["tokens.mean"]
        assert gate["message"].startswith(
            "tokens.mean <= 1.2x baseline @ 95%: cannot be checked: 5 paired rows cannot "
            "show a change at 95% (the smallest p-value their test can give, with all of "
            "them changed the same way, is 0.0625, not below 0.05), so the rule could "
            "never fail; 6 or more rows could, or a confidence below 93.75%"
        )
        assert (gate["stats"]["p_floor"], gate["stats"]["mde"]) == (2 / 2**5, None)
        assert gate["stats"]["p_adjusted"] is None  # not in the correction's family
    _store(project, [_row(i) for i in range(6)], gates)
    project.write("rows.jsonl", jsonl(_tripled(6)))
    result, report = project.run_json()
    result.assert_outcomes(passed=6, failed=1)
    gate = _gates(report)["tokens.mean"]
    assert gate["message"].startswith("tokens.mean <= 1.2x baseline @ 95% FAILS")
    assert (gate["stats"]["p_floor"], gate["stats"]["verdict"]) == (2 / 2**6, "regressed")


def test_a_plain_rule_its_pairs_cannot_decide_is_warned_about(project: Project) -> None:
    _store(project, [_row(i) for i in range(5)], '[gates]\n"tokens.mean" = "<= 1.2x baseline"\n')
    project.write("rows.jsonl", jsonl(_tripled(5)))
    result, report = project.run_json()
    result.assert_outcomes(passed=5, failed=1)  # the plain rule compares the numbers
    advice = _gates(report)["tokens.mean"]["stats"]["advice"]
    assert advice.startswith("5 paired rows cannot show a change at 95%")
    assert advice.endswith("the gate compares the numbers and flips on noise; 6 or more rows could")
    result.stdout.fnmatch_lines(["Warnings:", "*::gate::tokens.mean: 5 paired rows cannot show*"])


def test_superiority_passes_only_on_a_shown_improvement(project: Project) -> None:
    # The baseline answered half the questions wrong. All 20 put right: McNemar's p is
    # 2 / 2^20, a shown rise; only 2 put right: p = 0.5, not shown.
    gates = '[gates]\n"em.rate" = "> baseline @ 95% proven"\n'
    _store(project, [_row(i, right=i % 2 == 0) for i in range(ROWS)], gates)
    project.write("rows.jsonl", jsonl([_row(i) for i in range(ROWS)]))
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS + 1)
    stats = _gates(report)["em.rate"]["stats"]
    assert stats["p_value"] == pytest.approx(_mcnemar(20, 0), rel=1e-12)
    assert (stats["reading"], stats["verdict"]) == ("superiority", "improved")
    assert stats["interval"][0] > 0
    project.write("rows.jsonl", jsonl([_row(i, right=i % 2 == 0 or i < 4) for i in range(ROWS)]))
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS, failed=1)
    stats = _gates(report)["em.rate"]["stats"]
    assert stats["p_value"] == pytest.approx(_mcnemar(2, 0), abs=1e-12)
    assert stats["verdict"] == "within noise"


def test_holm_adjusts_the_run_s_statistical_gates_for_their_number(project: Project) -> None:
    # Six right answers of 40 turn wrong, none the other way: McNemar's p = 2 / 2^6 =
    # 0.03125. Each of two gates on it fails at 95% alone; Holm doubles the smaller p of
    # the two (0.0625 > 0.05), so under it both hold.
    rows = [_row(i) for i in range(ROWS)]
    gates = '"em.rate" = ">= baseline @ 95%"\n"em.sum" = ">= baseline @ 95%"\n'
    _store(project, rows, "[gates]\n" + gates)
    project.write("rows.jsonl", jsonl([_row(i, right=i >= 6) for i in range(ROWS)]))
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS, failed=2)
    assert _gates(report)["em.rate"]["stats"]["p_gate"] == pytest.approx(2 / 2**6)
    project.write("thresholds.toml", '[settings.stats]\ncorrection = "holm"\n[gates]\n' + gates)
    result, report = project.run_json()
    result.assert_outcomes(passed=ROWS + 2)
    for gate in _gates(report).values():
        assert gate["stats"]["p_adjusted"] == pytest.approx(2 * 2 / 2**6)
        assert gate["stats"]["correction"] == "holm"
    result.stdout.fnmatch_lines(["*em.rate*passed*regressed; holm-adjusted p 0.062"])


def test_a_correction_with_no_statistical_gate_says_it_adjusted_nothing(
    project: Project,
) -> None:
    rows = [_row(i) for i in range(ROWS)]
    _store(project, rows, '[settings.stats]\ncorrection = "bh"\n[gates]\n"em.rate" = ">= 0.5"\n')
    result = project.run()
    result.assert_outcomes(passed=ROWS + 1)
    result.stdout.fnmatch_lines(['*[[]settings.stats[]] correction = "bh" adjusted nothing*'])


def test_rows_of_one_session_are_resampled_together(project: Project) -> None:
    rows = [{**_row(i), "session_id": f"s{i // 4}"} for i in range(ROWS)]
    gates = '[gates]\n"tokens.mean" = "<= 1.2x baseline"\n'
    _store(project, rows, gates)
    project.write(
        "rows.jsonl", jsonl([{**r, "tokens": r["tokens"] + i % 3} for i, r in enumerate(rows)])
    )
    _, report = project.run_json()
    stats = _gates(report)["tokens.mean"]["stats"]
    assert (stats["units"], stats["n_pairs"], stats["clustered"]) == (10, ROWS, True)
    assert "10 sessions (40 pairs)" in stats["method"]


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("> baseline @ 95%", "on an interval, '>' reads like '>='"),
        (">= baseline @ 150%", "a percentage between 50 and 100"),
        (">= baseline @ 95", "write the confidence after @ as a percentage"),
        ("== baseline @ 95% proven", "an interval cannot prove a value equals a bound"),
    ],
)
def test_a_rule_that_cannot_be_read_on_an_interval_is_a_usage_error(
    project: Project, rule: str, problem: str
) -> None:
    project.write("thresholds.toml", f'[gates]\n"f1.mean" = "{rule}"\n')
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*thresholds.toml: [[]gates[]] 'f1.mean': *{problem}*"])


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("confidence = 95", "[[]settings.stats[]] confidence: expected a number between 0.5 and 1"),
        (
            "resamples = -1",
            "[[]settings.stats[]] resamples: expected a whole number of at least 100",
        ),
        (
            'correction = "bonferroni"',
            "[[]settings.stats[]] correction: expected one of none, holm, bh",
        ),
    ],
)
def test_a_wrong_stats_setting_is_a_usage_error(project: Project, table: str, problem: str) -> None:
    project.write("thresholds.toml", f"[settings.stats]\n{table}\n")
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*thresholds.toml: {problem}*"])


def test_the_statistics_are_the_same_with_xdist_and_in_bulk_mode(
    make_project: Callable[[str], Project],
) -> None:
    # Resampling runs on the controller over the pairs in row-id order: whichever
    # process ran a row, and in whatever order its result arrived, the numbers are equal.
    project = make_project("n2")
    rows = [{**_row(i), "session_id": f"s{i // 3}"} for i in range(ROWS)]
    gates = (
        "[gates]\n"
        '"tokens.mean" = "<= 1.2x baseline @ 95%"\n'
        '"tokens.p95" = "<= baseline + 5"\n'
        '"f1.mean" = ">= baseline - 0.05 @ 95% proven"\n'
        '"em.rate" = ">= 0.5 @ 90%"\n'
    )
    _store(project, rows, gates)
    changed = [
        {**_row(i, right=i % 7 != 0), "tokens": 100 + (i * 37) % 11, "session_id": f"s{i // 3}"}
        for i in range(ROWS)
    ]
    project.write("rows.jsonl", jsonl(changed))
    _, on_two_workers = project.run_json()
    project.mode = IN_PROCESS
    _, in_one = project.run_json()
    _, in_bulk = project.run_json("--ragmetrics-mode", "bulk")
    reports = [on_two_workers, in_one, in_bulk]
    stats = [{name: gate["stats"] for name, gate in _gates(r).items()} for r in reports]
    assert stats[0] == stats[1] == stats[2]
    assert all(value is not None for value in stats[0].values())
    intervals = [report["evals"][0]["intervals"] for report in reports]
    assert intervals[0] == intervals[1] == intervals[2]


def test_a_report_s_gate_evidence_reads_back_as_written(project: Project) -> None:
    # A difference (f1.mean), a ratio with its difference (tokens.mean), a corpus
    # statistic with each side's bootstrap interval (bleu.corpus) and one run's value
    # (em.rate against a number): each gate's stats, read back from the JSON report,
    # is written again key for key, and the report model reads them the same way.
    from pytest_ragmetrics.gates.evidence import GateEvidence
    from pytest_ragmetrics.reports.model import ReportModel

    rows = [_row(i) for i in range(ROWS)]
    project.write(
        "test_eval.py", EVAL.replace("f1, em, tokens", "f1, em, tokens, bleu") + "    bleu(row)\n"
    )
    project.write("rows.jsonl", jsonl(rows))
    project.write("thresholds.toml", "")
    project.run("--ragmetrics-update-baseline").assert_outcomes(passed=ROWS)
    project.write(
        "thresholds.toml",
        "[gates]\n"
        '"f1.mean" = ">= baseline"\n'
        '"tokens.mean" = "<= 1.2x baseline"\n'
        '"bleu.corpus" = ">= baseline - 1"\n'
        '"em.rate" = ">= 0.1 @ 95%"\n',
    )
    changed = [_row(i, extra=i % 3 == 0) for i in range(ROWS)]
    project.write(
        "rows.jsonl", jsonl([{**r, "tokens": r["tokens"] + i % 4} for i, r in enumerate(changed)])
    )
    _, report = project.run_json()
    found = {name: gate["stats"] for name, gate in _gates(report).items()}
    assert set(found) == {"f1.mean", "tokens.mean", "bleu.corpus", "em.rate"}
    assert "sides" in found["bleu.corpus"]
    assert found["tokens.mean"]["scale"] == "ratio"
    assert found["em.rate"]["scale"] == "value"
    for name, written in found.items():
        assert GateEvidence.from_dict(written).as_dict() == written, name
    (entry,) = ReportModel.from_document(report).evals
    assert {gate.name: gate.stats.as_dict() for gate in entry.gates if gate.stats} == found
