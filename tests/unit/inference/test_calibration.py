"""Calibration of the statistical gate readings, shown by simulation.

Each test simulates many paired comparisons of ``ROWS`` rows whose true change is known,
computes their evidence with ``paired_evidence`` as a gate does (at the rule's
confidence, about its bound on the change's scale), decides the gate with ``holds`` (or,
under Holm, on its adjusted ``gate_p``) and counts how often the verdict is wrong:

* A/A comparisons (no true change): the inferiority rule ``>= baseline @ 95%`` must
  falsely fail 2.5% of the time (one end of a two-sided 95% interval) and the
  superiority rule ``> baseline @ 95% proven`` falsely pass 2.5% of the time, for
  continuous rows (a skewed score plus symmetric noise; an F1-like bounded, skewed score
  with an atom at 1 and mostly tied pairs), 0/1 rows (Newcombe's interval and exact
  McNemar) and rows in sessions with a shared session effect (cluster bootstrap and
  flips). Under no change every pair's difference (every session's differences) is as
  likely negated, the null of the sign-flip test and of McNemar's: the noise is
  symmetric about 0, or both sides are drawn from one distribution given the row.
* Non-inferiority ``>= baseline - 0.05 @ 95% proven`` at a true change of exactly -0.05:
  it must falsely pass 2.5% of the time.
* Holm over ten independent A/A inferiority gates: the family-wise false-fail rate must
  stay at or below 5% (uncorrected it is about 1 - 0.975^10 = 22%).
* Power: at a planted drop equal to the MDE the evidence reports (its mean over A/A
  comparisons), the inferiority rule must fail 80% of the time: the MDE's definition.

Bands. A rate from ``RUNS`` = 2,000 runs has a binomial standard error of 0.35 points at
2.5%, 0.49 at 5% and 0.89 at 80%. The +-1.5-point band around 2.5% is over four standard
errors: a calibrated reading falls outside it with a chance of about 2 in 100,000, while
a reading whose true rate is under 1% or over 4% is caught. 0/1 rows are read with exact
tests of counts, so their rates sit below 2.5% (about 1.5% here): conservative, inside
the band. Holm's bound allows three standard errors above 5%. The power band of +-5
points is five and a half standard errors, with room for what the MDE's arithmetic
leaves out (each run's standard error is estimated, and the sign-flip test must reject
as well). Everything is seeded (the simulations by ``numpy.random.default_rng`` with
fixed seeds, the resampling by ``StatsSettings.seed``): every run gives the same rates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest

from pytest_ragmetrics.config.rules import Rule, parse_rule
from pytest_ragmetrics.gates.evidence import gate_p, holds
from pytest_ragmetrics.inference.evidence import Evidence, paired_evidence
from pytest_ragmetrics.inference.multiplicity import adjusted
from pytest_ragmetrics.inference.resample import Units
from pytest_ragmetrics.inference.settings import StatsSettings

RUNS = 2000  # simulated comparisons per rate
ROWS = 100  # pairs per comparison
NOMINAL = 0.025  # one end of a two-sided 95% interval
BAND = 0.015
GATES = 10  # gates in a Holm family
FAMILY_LEVEL = 0.05
POWER, POWER_BAND = 0.8, 0.05
MDE_RUNS = 200  # A/A runs whose mean reported MDE is planted as the drop
MARGIN = 0.05  # the non-inferiority margin
NOISE = 0.1  # standard deviation of a row's change in the continuous design

INFERIORITY = parse_rule(">= baseline @ 95%")
SUPERIORITY = parse_rule("> baseline @ 95% proven")
NON_INFERIORITY = parse_rule(f">= baseline - {MARGIN} @ 95% proven")

# Every single-gate reading is simulated at the shipped defaults.
DEFAULTS = StatsSettings()
# Holm's family alone is 20,000 comparisons: its bootstrap is halved and its flips cut
# tenfold. That does not move what is calibrated: the Monte-Carlo error of B resamples
# and R flips shifts an interval end or a p-value up or down at random, which moves a
# rate only at second order, and (hits + 1) / (R + 1) is a valid p-value at every R
# (Phipson and Smyth 2010), so a gate's p (``gate_p``, at least its sign-flip p) stays
# valid and Holm keeps its level. B = 1,000 and R = 1,000 still reach the p < 0.005 of
# Holm's first step (0.05 / 10). Checked once on the same 2,000 simulated runs: 1.95%
# family-wise false fails at these settings, 2.15% at the defaults.
FAMILY = StatsSettings(resamples=1000, permutations=1000)


class Sample(NamedTuple):
    """One simulated comparison: this run's values, the reference's, how rows group."""

    current: np.ndarray
    reference: np.ndarray
    units: Units


Design = Callable[[np.random.Generator], Sample]  # an A/A comparison

ROW_UNITS = Units.rows(ROWS)


def continuous(rng: np.random.Generator, change: float = 0.0) -> Sample:
    """A bounded, right-skewed reference score (Beta(2, 5)) and this run's score on the
    same row: the reference's plus ``change`` plus normal noise of mean 0."""
    reference = rng.beta(2.0, 5.0, ROWS)
    current = reference + change + rng.normal(0.0, NOISE, ROWS)
    return Sample(current, reference, ROW_UNITS)


def f1_like(rng: np.random.Generator) -> Sample:
    """An F1-like score in [0, 1]: each row has an ease ``q`` ~ Beta(2, 0.7) (most rows
    easy), and each side independently scores 1 (an exact answer) with probability ``q``,
    else a partial score ~ Beta(1, 3) (mostly low). Both sides come from one distribution
    given the row, so under no change they are exchangeable; the values are skewed, with
    an atom at 1, and most differences are exact ties at 0."""
    ease = rng.beta(2.0, 0.7, ROWS)

    def side() -> np.ndarray:
        exact = rng.random(ROWS) < ease
        return np.where(exact, 1.0, rng.beta(1.0, 3.0, ROWS))

    return Sample(side(), side(), ROW_UNITS)


def binary(rng: np.random.Generator) -> Sample:
    """0/1 pairs, each side Bernoulli(0.5): both 1 or both 0 with probability 0.35 each,
    discordant either way with probability 0.15 each (30% discordant)."""
    kind = rng.choice(4, size=ROWS, p=[0.35, 0.15, 0.15, 0.35])  # 11, 10, 01, 00
    current = (kind <= 1).astype(float)
    reference = np.isin(kind, (0, 2)).astype(float)
    return Sample(current, reference, ROW_UNITS)


def session_sizes(rng: np.random.Generator) -> np.ndarray:
    """Sizes of sessions holding ``ROWS`` rows: 1 to 5 rows each (about 33 sessions)."""
    sizes = rng.integers(1, 6, size=ROWS)
    ends = np.cumsum(sizes)
    count = int(np.searchsorted(ends, ROWS)) + 1
    sizes = sizes[:count].copy()
    sizes[-1] -= int(ends[count - 1]) - ROWS
    return sizes


def sessions(rng: np.random.Generator) -> Sample:
    """Rows in sessions of varying size: a row's change is its session's shared effect
    (normal, sd 0.1) plus its own noise (normal, sd 0.05), so rows of one session are
    strongly correlated (intra-session correlation 0.8). Both terms are symmetric, so a
    whole session's changes are as likely negated: the sessions are exchangeable."""
    sizes = session_sizes(rng)
    of_row = np.repeat(np.arange(len(sizes)), sizes)
    shared = rng.normal(0.0, 0.1, len(sizes))[of_row]
    reference = rng.beta(2.0, 5.0, ROWS)
    current = reference + shared + rng.normal(0.0, 0.05, ROWS)
    labels: list[str | None] = [f"session-{unit}" for unit in of_row]
    return Sample(current, reference, Units.of(labels))


def judged(repeats: int, drop: float = 0.0) -> Design:
    """A judge metric read twice on the same answers (a rerun that asks the judge anew):
    each row's true score ``q`` ~ Beta(2, 2), and each side's value the mean of
    ``repeats`` verdicts, each 1 with probability ``q`` (this run's lowered by ``drop``)
    and 0 otherwise: the judge's noise. With no drop the two sides are exchangeable given
    the row. A row's value is the mean of its repeats, so its within-row noise is inside
    the pair's difference, and resampling pairs carries it into the interval
    (docs/judge.md#repeated-verdicts)."""

    def design(rng: np.random.Generator) -> Sample:
        score = rng.beta(2.0, 2.0, ROWS)
        reference = rng.binomial(repeats, score) / repeats
        current = rng.binomial(repeats, np.clip(score - drop, 0.0, 1.0)) / repeats
        return Sample(current, reference, ROW_UNITS)

    return design


def evidence_for(
    rule: Rule, sample: Sample, settings: StatsSettings, *, is_binary: bool = False
) -> Evidence:
    """The evidence a gate with ``rule`` computes: at its confidence, about its bound."""
    return paired_evidence(
        sample.current,
        sample.reference,
        statistic="mean",
        scale="difference",
        settings=settings,
        units=sample.units,
        binary=is_binary,
        confidence=rule.confidence,
        bound=rule.null,
    )


def rate(hits: int, runs: int) -> float:
    return hits / runs


def assert_near(observed: float, expected: float, band: float, what: str) -> None:
    assert abs(observed - expected) <= band, (
        f"{what}: {observed:.2%} over {RUNS:,} runs, expected {expected:.1%} +- {band:.1%}"
    )


def aa_rates(
    design: Design, seed: int, settings: StatsSettings, *, is_binary: bool = False
) -> tuple[float, float]:
    """Over ``RUNS`` A/A comparisons: how often the inferiority rule fails and how often
    the superiority rule passes (both read one evidence: same confidence, same bound)."""
    assert (INFERIORITY.confidence, INFERIORITY.null) == (
        SUPERIORITY.confidence,
        SUPERIORITY.null,
    )
    rng = np.random.default_rng(seed)
    fails = passes = 0
    for _ in range(RUNS):
        evidence = evidence_for(INFERIORITY, design(rng), settings, is_binary=is_binary)
        fails += not holds(INFERIORITY, evidence)
        passes += holds(SUPERIORITY, evidence)
    return rate(fails, RUNS), rate(passes, RUNS)


@pytest.mark.parametrize(
    ("design", "seed", "is_binary"),
    [
        pytest.param(continuous, 101, False, id="continuous"),
        pytest.param(f1_like, 202, False, id="f1-like"),
        pytest.param(binary, 303, True, id="binary"),
        pytest.param(sessions, 404, False, id="sessions"),
        pytest.param(judged(1), 707, True, id="judge-one-verdict"),
        pytest.param(judged(5), 808, False, id="judge-five-verdicts"),
    ],
)
def test_no_change_false_alarms_at_nominal_level(
    design: Design, seed: int, is_binary: bool
) -> None:
    false_fail, false_pass = aa_rates(design, seed, DEFAULTS, is_binary=is_binary)
    assert_near(false_fail, NOMINAL, BAND, f"{INFERIORITY.text} false FAIL rate")
    assert_near(false_pass, NOMINAL, BAND, f"{SUPERIORITY.text} false PASS rate")


def test_non_inferiority_false_pass_at_margin() -> None:
    rng = np.random.default_rng(505)
    passes = 0
    for _ in range(RUNS):
        sample = continuous(rng, -MARGIN)
        passes += holds(NON_INFERIORITY, evidence_for(NON_INFERIORITY, sample, DEFAULTS))
    assert_near(
        rate(passes, RUNS), NOMINAL, BAND, f"{NON_INFERIORITY.text} false PASS rate at -{MARGIN}"
    )


def family_fails(rng: np.random.Generator) -> tuple[bool, bool]:
    """One run of ``GATES`` independent A/A inferiority gates: whether any gate fails
    under Holm (a default-reading gate fails when its adjusted p < 1 - confidence) and
    whether any fails uncorrected (on its interval, ``holds``)."""
    evidence = [evidence_for(INFERIORITY, continuous(rng), FAMILY) for _ in range(GATES)]
    alpha = 1 - (INFERIORITY.confidence or 0.95)
    corrected = adjusted([gate_p(INFERIORITY, e) for e in evidence], "holm")
    return min(corrected) < alpha, not all(holds(INFERIORITY, e) for e in evidence)


def test_holm_keeps_family_wise_false_fails_at_level() -> None:
    rng = np.random.default_rng(606)
    holm = plain = 0
    for _ in range(RUNS):
        with_holm, without = family_fails(rng)
        holm += with_holm
        plain += without
    holm_rate, plain_rate = rate(holm, RUNS), rate(plain, RUNS)
    assert holm_rate <= FAMILY_LEVEL + BAND, (
        f"Holm over {GATES} A/A gates falsely fails {holm_rate:.2%} of {RUNS:,} runs, "
        f"above {FAMILY_LEVEL:.0%} + {BAND:.1%}"
    )
    # The contrast: uncorrected, ten gates at 2.5% each fail about 22% of runs.
    assert plain_rate > 3 * FAMILY_LEVEL, f"uncorrected family-wise rate {plain_rate:.2%}"


def mean_mde(rng: np.random.Generator) -> float:
    """The mean of the MDE the evidence reports over ``MDE_RUNS`` A/A comparisons."""
    reported = []
    for _ in range(MDE_RUNS):
        mde = evidence_for(INFERIORITY, continuous(rng), DEFAULTS).mde
        assert mde is not None
        reported.append(mde)
    return float(np.mean(reported))


def test_drop_of_the_reported_mde_is_detected_at_the_stated_power() -> None:
    rng = np.random.default_rng(707)
    mde = mean_mde(rng)
    se = NOISE / np.sqrt(ROWS)  # the true standard error of the mean change
    assert 2 * se < mde < 4 * se  # (1.96 + 0.84) standard errors, as estimated
    fails = 0
    for _ in range(RUNS):
        fails += not holds(INFERIORITY, evidence_for(INFERIORITY, continuous(rng, -mde), DEFAULTS))
    assert_near(rate(fails, RUNS), POWER, POWER_BAND, f"detection of a drop of the MDE {mde:.4f}")


def test_a_noisier_judge_widens_the_interval_and_repeats_narrow_it() -> None:
    """A judge's noise does not flip the gate at random: it widens the interval of the
    change (A/A above: the false-fail rate stays nominal with one verdict a row and with
    five); five verdicts a row narrow it, and a real drop of 0.1 is then caught more
    often. Over 400 runs each: the mean interval width falls, and detection rises."""
    runs = 400
    widths, caught = {}, {}
    for repeats, seed in ((1, 909), (5, 910)):
        rng = np.random.default_rng(seed)
        width = fails = 0.0
        for _ in range(runs):
            evidence = evidence_for(INFERIORITY, judged(repeats, drop=0.1)(rng), DEFAULTS)
            width += evidence.high - evidence.low
            fails += not holds(INFERIORITY, evidence)
        widths[repeats], caught[repeats] = width / runs, fails / runs
    # A mean of 5 Bernoulli(q) verdicts has a fifth of one's variance q(1 - q) around q;
    # with Beta(2, 2) rows the pair's difference's variance falls from 2 E[q(1-q)] = 0.4
    # to 0.08 + ... : the width must shrink by well over a third.
    assert widths[5] < 0.65 * widths[1], widths
    assert caught[5] > caught[1] + 0.2, caught
