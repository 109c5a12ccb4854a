"""How a gate reads its evidence: the readings of a rule, the decision on an interval,
the gate's own p-value, the verdict on the change, the advice on a margin, and the
multiplicity correction. Evidence records are built by hand here, so every expected
outcome follows from the definitions in docs/statistics.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_ragmetrics.config.rules import parse_rule
from pytest_ragmetrics.config.thresholds import Gate, Settings
from pytest_ragmetrics.gates.evaluate import GateResult, correct
from pytest_ragmetrics.gates.evidence import (
    GateStats,
    advice,
    blind,
    gate_p,
    holds,
    metric_intervals,
    verdict,
)
from pytest_ragmetrics.inference.evidence import Evidence, paired_evidence
from pytest_ragmetrics.inference.resample import Units
from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.metrics.base import reference_count
from pytest_ragmetrics.metrics.bleu import BLEU_STATS, sentence_bleu
from pytest_ragmetrics.results.spool import Spool
from pytest_ragmetrics.results.summary import EvalInfo, Gathered, RowPayload

EVAL = EvalInfo("evals/test_x.py", "evals/test_x.py", "evals/data/x.jsonl", "0" * 64, 30)


def evidence(
    low: float,
    high: float,
    *,
    estimate: float | None = None,
    p_value: float | None = 0.01,
    below: float = 0.5,
    above: float = 0.5,
    mde: float | None = 0.1,
    scale: str = "difference",
    n: int = 48,
) -> Evidence:
    middle = (low + high) / 2 if estimate is None else estimate
    return Evidence(
        scale,  # type: ignore[arg-type]
        middle,
        low,
        high,
        0.95,
        "by hand",
        n,
        n,
        p_value,
        below,
        above,
        mde,
    )


@pytest.mark.parametrize(
    ("rule", "reading"),
    [
        (">= baseline - 0.01", "plain"),
        (">= baseline - 0.01 @ 95%", "inferiority"),
        ("<= 1.2x baseline @ 95%", "inferiority"),
        (">= baseline - 0.01 @ 95% proven", "non-inferiority"),
        (">= baseline @ 95% proven", "non-inferiority"),
        ("> baseline @ 95% proven", "superiority"),
        (">= baseline + 0.02 @ 95% proven", "superiority"),
        ("< 0.8x baseline @ 90% proven", "superiority"),
        ("== baseline @ 95%", "no-difference"),
        (">= 0.4 @ 95%", "refuted"),
        ("<= 0.25 @ 95% proven", "proven"),
    ],
)
def test_each_rule_has_its_reading(rule: str, reading: str) -> None:
    assert parse_rule(rule).reading == reading


@pytest.mark.parametrize(
    ("rule", "low", "high", "passes"),
    [
        # inferiority: fails only when the whole interval lies beyond the bound
        (">= baseline - 0.01 @ 95%", -0.05, -0.02, False),
        (">= baseline - 0.01 @ 95%", -0.05, 0.02, True),
        (">= baseline - 0.01 @ 95%", -0.012, -0.01, True),  # touches the bound
        ("<= 1.2x baseline @ 95%", 1.21, 1.3, False),
        ("<= 1.2x baseline @ 95%", 1.1, 1.3, True),
        # non-inferiority: passes only when the whole interval lies inside
        (">= baseline - 0.05 @ 95% proven", -0.04, 0.02, True),
        (">= baseline - 0.05 @ 95% proven", -0.06, 0.02, False),
        # superiority: the whole interval above no change
        ("> baseline @ 95% proven", 0.001, 0.2, True),
        ("> baseline @ 95% proven", 0.0, 0.2, False),
        # no difference: fails only when the interval leaves the bound out
        ("== baseline @ 95%", 0.01, 0.2, False),
        ("== baseline @ 95%", -0.01, 0.2, True),
        # a fixed bound
        (">= 0.4 @ 95%", 0.35, 0.39, False),
        ("<= 0.25 @ 95% proven", 0.1, 0.24, True),
    ],
)
def test_a_statistical_rule_reads_its_interval(
    rule: str, low: float, high: float, passes: bool
) -> None:
    scale = "ratio" if "x baseline" in rule else "value" if "baseline" not in rule else "difference"
    assert holds(parse_rule(rule), evidence(low, high, scale=scale)) is passes


def test_where_the_bound_is_no_change_the_test_of_no_change_must_agree() -> None:
    # The interval leaves 0 out, but the p-value of no change is 0.12 (e.g. Newcombe's
    # interval against the exact McNemar test on 4 discordant pairs): not shown.
    shown_by_interval_only = evidence(-0.2, -0.01, p_value=0.12)
    assert holds(parse_rule(">= baseline @ 95%"), shown_by_interval_only)
    assert not holds(parse_rule("< baseline @ 95% proven"), shown_by_interval_only)
    assert verdict(parse_rule(">= baseline"), shown_by_interval_only) == "within noise"
    # With a margin the interval alone decides: the whole of it lies below -0.005.
    assert not holds(parse_rule(">= baseline - 0.005 @ 95%"), shown_by_interval_only)


@pytest.mark.parametrize(
    ("rule", "low", "high", "found"),
    [
        (">= baseline", -0.2, -0.01, "regressed"),
        (">= baseline", 0.01, 0.2, "improved"),
        (">= baseline", -0.1, 0.1, "within noise"),
        ("<= 1.2x baseline", 1.05, 1.1, "regressed"),  # a ratio: against 1
        ("<= 1.2x baseline", 0.9, 0.95, "improved"),
        ("== baseline", 0.01, 0.2, "changed"),
    ],
)
def test_the_verdict_is_on_the_change_whatever_the_rule(
    rule: str, low: float, high: float, found: str
) -> None:
    scale = "ratio" if "x baseline" in rule else "difference"
    assert verdict(parse_rule(rule), evidence(low, high, scale=scale)) == found


def test_the_gates_p_value_is_its_own_hypothesis_doubled() -> None:
    found = evidence(-0.05, 0.01, p_value=None, below=0.02, above=0.98)
    # default reading of >=: evidence that the change lies below the bound
    assert gate_p(parse_rule(">= baseline - 0.01 @ 95%"), found) == pytest.approx(0.04)
    # proven: evidence that it lies above
    assert gate_p(parse_rule(">= baseline - 0.01 @ 95% proven"), found) == 1.0
    assert gate_p(parse_rule("<= baseline + 0.01 @ 95%"), found) == 1.0
    # == : the nearer side
    assert gate_p(parse_rule("== baseline + 0.01 @ 95%"), found) == pytest.approx(0.04)
    # at no change, the larger of that and the p-value of no change
    at_zero = evidence(-0.05, 0.01, p_value=0.3, below=0.02)
    assert gate_p(parse_rule(">= baseline @ 95%"), at_zero) == 0.3


def test_a_plain_margin_below_the_mde_is_advised_with_the_rows_to_detect_it() -> None:
    # MDE 0.07 from 48 pairs; the margin 0.01: the standard error shrinks as 1/sqrt(n),
    # so 48 * (0.07 / 0.01)^2 = 2352 rows would detect it.
    told, rows = advice(parse_rule(">= baseline - 0.01"), evidence(-0.05, 0.05, mde=0.07))
    assert rows == math.ceil(48 * 49) == 2352
    assert told is not None
    assert "the margin 0.01 is below what 48 paired rows can detect (0.07)" in told
    assert "about 2,352 rows would detect it" in told
    zero, none = advice(parse_rule(">= baseline"), evidence(-0.05, 0.05, mde=0.07))
    assert none is None
    assert zero is not None
    assert "below what any number of rows can detect" in zero
    assert advice(parse_rule(">= baseline - 0.1"), evidence(-0.05, 0.05, mde=0.07)) == (None, None)
    # a statistical rule of the default reading is not advised: noise cannot fail it
    assert advice(parse_rule(">= baseline @ 95%"), evidence(-0.05, 0.05, mde=0.07)) == (None, None)


def test_a_proven_rule_whose_margin_is_below_the_mde_is_told_it_will_rarely_pass() -> None:
    # An unchanged run passes a non-inferiority rule when the interval's lower end stays
    # above -margin: with probability 80% when the margin equals the MDE (its
    # definition). MDE 0.1 against a margin of 0.02: 48 * (0.1 / 0.02)^2 = 1200 rows.
    told, rows = advice(parse_rule(">= baseline - 0.02 @ 95% proven"), evidence(-0.05, 0.05))
    assert rows == 1200
    assert told is not None
    assert "an unchanged run will rarely pass" in told
    assert "four times out of five" in told
    assert advice(parse_rule(">= baseline - 0.2 @ 95% proven"), evidence(-0.05, 0.05)) == (
        None,
        None,
    )


def test_a_plain_rule_asking_for_an_improvement_is_told_to_ask_for_proof() -> None:
    told, rows = advice(parse_rule(">= baseline + 0.02"), evidence(-0.05, 0.05, mde=0.07))
    assert rows is None
    assert told is not None
    assert "asks for an improvement of 0.02" in told
    assert "'@ 95% proven'" in told


def _result(name: str, p_gate: float, status: str) -> GateResult:
    rule = parse_rule(">= baseline @ 95%")
    metric, stat = name.split(".")
    stats = GateStats(evidence(-0.1, 0.1), rule.reading, p_gate=p_gate)
    head = f"{name} {rule.text} {'holds' if status == 'passed' else 'FAILS'}: the change is ..."
    return GateResult(
        "evals/test_a.py",
        name,
        rule.text,
        status,  # type: ignore[arg-type]
        head,
        stats=stats,
        gate=Gate(name, metric, stat, rule),
    )


def test_holm_decides_the_statistical_gates_on_adjusted_p_values() -> None:
    # Holm over 0.01, 0.02, 0.04: 3 * 0.01 = 0.03, max(0.03, 2 * 0.02) = 0.04,
    # max(0.04, 1 * 0.04) = 0.04; all below 0.05, so all three fail. With 0.03 for the
    # last: max(0.04, 0.03) = 0.04 still. With the first at 0.02: 3 * 0.02 = 0.06 ...
    results = [
        _result("f1.mean", 0.01, "failed"),
        _result("em.mean", 0.02, "failed"),
        _result("tokens.mean", 0.04, "failed"),
    ]
    corrected = correct(results, "holm")
    adjusted = [result.stats.p_adjusted for result in corrected if result.stats]
    assert adjusted == pytest.approx([0.03, 0.04, 0.04])
    assert [result.status for result in corrected] == ["failed"] * 3
    weaker = correct([_result("f1.mean", 0.02, "failed"), *results[1:]], "holm")
    adjusted = [result.stats.p_adjusted for result in weaker if result.stats]
    assert adjusted == pytest.approx([0.06, 0.06, 0.06])
    assert [result.status for result in weaker] == ["passed"] * 3
    assert weaker[0].message.startswith("f1.mean >= baseline @ 95% holds:")
    assert "holm-adjusted p 0.06 over 3 statistical gates" in weaker[0].message
    assert correct(results, "none") == results


def _every_pair_moved(pairs: int, by: float, confidence: float) -> Evidence:
    """The evidence of ``pairs`` pairs that each moved by ``by``, about no change."""
    reference = np.arange(pairs, dtype=float)
    return paired_evidence(
        reference + by,
        reference,
        statistic="mean",
        scale="difference",
        settings=StatsSettings(),
        units=Units.rows(pairs),
        confidence=confidence,
        bound=0.0,
    )


@pytest.mark.parametrize(
    ("confidence", "units", "remedy"),
    [
        (0.95, 5, "6 or more rows could, or a confidence below 93.75%"),
        (0.9, 4, "5 or more rows could, or a confidence below 87.5%"),
        (0.99, 7, "8 or more rows could, or a confidence below 98.4375%"),
    ],
)
def test_a_rule_too_few_pairs_can_decide_is_blind_and_names_the_rows_that_can(
    confidence: float, units: int, remedy: str
) -> None:
    # Every pair up by 1: the exact sign-flip p-value is 2 / 2^units, the floor; the
    # rows named are the fewest whose floor is below 1 - confidence (by hand: 2^-5 <
    # 0.05 <= 2^-4; 2^-4 < 0.1 <= 2^-3; 2^-7 < 0.01 <= 2^-6).
    rule = parse_rule(f">= baseline @ {confidence * 100:g}%")
    evidence = _every_pair_moved(units, 1.0, confidence)
    assert evidence.p_floor == evidence.p_value == 2 / 2**units
    told = blind(rule, evidence)
    assert told is not None
    assert told.endswith(f"so the rule could never fail; {remedy}")
    enough = _every_pair_moved(units + 1, -1.0, confidence)  # one more, all down: shown
    assert blind(rule, enough) is None
    assert not holds(rule, enough)


def test_a_mean_s_interval_stays_within_what_the_metric_can_be() -> None:
    """Eight rows of overlap 1 and one of 0: the t interval (8 degrees of freedom) reaches
    0.889 + 2.306 x 0.111 = 1.145, a share above 1. The report's interval is cut at 1 and
    says so; its lower end stays as drawn (at least as wide as scipy's t interval, which
    the mean's interval is widened to). A metric with no stated range is left as drawn."""
    from scipy import stats

    from pytest_ragmetrics.config.thresholds import Settings
    from pytest_ragmetrics.gates.evidence import statistic_evidence
    from pytest_ragmetrics.results.summary import RowResult

    values = [1.0] * 8 + [0.0]
    t_low, t_high = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    assert t_high > 1.1  # what the uncut interval claims
    for metric, cut in (("overlap", True), ("my_score", False)):
        rows = [RowResult(f"r{i}", i, {metric: value}) for i, value in enumerate(values)]
        found = statistic_evidence(metric, "mean", rows, Settings())
        assert found.estimate == pytest.approx(8 / 9)
        assert found.low <= t_low + 1e-12
        if cut:
            assert found.high == 1.0
            assert "cut to what it can be, [0, 1]" in found.method
        else:
            assert found.high >= t_high - 1e-12
            assert "cut to" not in found.method
    total = statistic_evidence(
        "overlap",
        "sum",
        [RowResult(f"r{i}", i, {"overlap": v}) for i, v in enumerate(values)],
        Settings(),
    )
    assert total.high == 9.0  # a sum of nine values in [0, 1]


def test_an_interval_is_not_cut_to_a_range_its_estimate_lies_outside() -> None:
    """A range that does not hold the estimate is not the statistic's (nDCG with a
    negative gain is below 0): cutting would invert the interval, so it is left as drawn."""
    drawn = evidence(-0.4, -0.05, estimate=-0.2, scale="value")
    assert drawn.held_to(0.0, 1.0) is drawn
    assert drawn.held_to(-1.0, 0.0) is drawn  # inside already
    cut = evidence(0.5, 1.2, estimate=0.9, scale="value").held_to(0.0, 1.0)
    assert (cut.low, cut.high) == (0.5, 1.0)


def test_a_gathered_evals_intervals_are_read_off_its_columns_as_off_its_rows() -> None:
    """The intervals a report shows (``metric_intervals``) of a gathered eval read its
    store's columns in id order, no row made; they equal those of the same rows made whole
    and sorted by id (the reading of a list of rows): means, a rate, a sum, a corpus
    statistic from its rows' breakdowns, and rows of one session resampled together.
    Rows arrive out of id order, some with evidence (spooled), one errored (kept whole)."""
    spool = Spool()
    gathered = Gathered(True, spool)
    try:
        for i in reversed(range(30)):
            answer = ["Paris is big", "Rome", "the city of Paris"][i % 3]
            bleu = sentence_bleu(answer, ["Paris is a big city"])
            stats = {**bleu.stats.as_dict(), **reference_count(1)}
            gathered.add(
                RowPayload(
                    EVAL,
                    f"q{(i * 7) % 30:02d}",
                    i,
                    {
                        "em": float(i % 3 == 0),
                        "f1": i / 30,
                        "tokens": 100.0 + i,
                        "bleu": bleu.score,
                    },
                    {BLEU_STATS: stats},
                    "evals/data/x.jsonl:3: boom" if i == 4 else None,
                    test="t",
                    eval_tests=("t",),
                    evidence={"em": "why"} if i % 5 == 0 else {},
                    session=f"s{i // 4}" if i < 12 else None,
                )
            )
        (summary,) = gathered.summaries(Settings())
        metrics = ("em", "f1", "tokens", "bleu")
        from_columns = metric_intervals(summary.rows, metrics, Settings())
        made = sorted(summary.rows, key=lambda row: row.id)  # a list: read row by row
        from_rows = metric_intervals(made, metrics, Settings())
    finally:
        spool.close()
    assert set(from_columns["bleu"]) == {"mean", "corpus"}
    assert from_columns == from_rows
