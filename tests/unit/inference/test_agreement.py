"""The judge's agreement with people against the references: Cohen's kappa against
``sklearn.metrics.cohen_kappa_score``, Krippendorff's alpha against ``krippendorff.alpha``,
the PPI mean against ``ppi_py``, the bootstrap interval against ``scipy.stats.bootstrap``;
hand-computed examples with their arithmetic; the degenerate cases; and the coverage of
the PPI and kappa intervals by simulation.

sklearn refuses float labels (0.5 is "continuous" to it), so it is given each value's
position in the domain: its weights are read on positions anyway, so the kappa is the
same.
"""

from __future__ import annotations

import json
import math
import warnings

import krippendorff
import numpy as np
import ppi_py
import pytest
from scipy.stats import bootstrap
from sklearn.metrics import cohen_kappa_score

from pytest_ragmetrics.inference.agreement import (
    Agreement,
    Interval,
    NotDefined,
    Undefined,
    accuracy,
    agreement,
    bootstrap_interval,
    cohen_kappa,
    confusion,
    kappa_of_counts,
    krippendorff_alpha,
    ppi_mean,
)
from pytest_ragmetrics.inference.sampling import Replicates
from pytest_ragmetrics.inference.settings import StatsSettings

DOMAINS = [(0.0, 1.0), (0.0, 0.5, 1.0), (1.0, 2.0, 3.0, 4.0, 5.0), (0.0, 0.25, 0.5, 0.75, 1.0)]


def _labels(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A domain and two raters who agree on about 60% of rows; a random subset of the
    domain is used, so some categories may go unobserved."""
    rng = np.random.default_rng(seed)
    domain = np.array(DOMAINS[seed % len(DOMAINS)])
    used = domain[np.sort(rng.choice(len(domain), rng.integers(2, len(domain) + 1), replace=False))]
    n = int(rng.integers(3, 60))
    judge = rng.choice(used, n)
    human = np.where(rng.random(n) < 0.6, judge, rng.choice(used, n))
    return domain, judge, human


def _sklearn_kappa(
    judge: np.ndarray, human: np.ndarray, domain: np.ndarray, weights: str | None
) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            cohen_kappa_score(
                np.searchsorted(domain, judge),
                np.searchsorted(domain, human),
                labels=np.arange(len(domain)),
                weights=weights,
            )
        )


# --- Cohen's kappa ------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(60))
def test_kappa_equals_sklearn(seed: int, weights: str | None) -> None:
    domain, judge, human = _labels(seed)
    expected = _sklearn_kappa(judge, human, domain, weights)
    if math.isnan(expected):
        with pytest.raises(Undefined):
            cohen_kappa(judge.tolist(), human.tolist(), labels=domain.tolist(), weights=weights)
        return
    ours = cohen_kappa(judge.tolist(), human.tolist(), labels=domain.tolist(), weights=weights)
    assert ours == pytest.approx(expected, abs=1e-12)


def test_kappa_without_labels_reads_the_values_seen() -> None:
    _, judge, human = _labels(7)
    seen = np.unique(np.concatenate([judge, human]))
    assert cohen_kappa(judge.tolist(), human.tolist()) == pytest.approx(
        _sklearn_kappa(judge, human, seen, None), abs=1e-12
    )


def test_kappa_by_hand() -> None:
    # judge 1,1,1,0,0 ; human 1,1,0,0,1 -> O = [[1,1],[1,2]] (rows judge 0/1, cols human 0/1)
    # n = 5, agreement 3/5; judge marginals (2, 3), human (2, 3)
    # chance agreement (2*2 + 3*3)/25 = 13/25; kappa = (15/25 - 13/25) / (1 - 13/25) = 2/12
    judge, human = [1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 1.0]
    assert cohen_kappa(judge, human) == pytest.approx(1 / 6, abs=1e-15)
    assert accuracy(judge, human) == pytest.approx(0.6)


def test_weighted_kappa_by_hand() -> None:
    # judge 1,2,3 ; human 1,3,3 over labels 1,2,3: O has cells (0,0), (1,2), (2,2)
    # row sums (1,1,1), col sums (1,0,2), E = outer / 3
    # quadratic W = (i-j)^2: sum W*O = 1 (cell (1,2)); sum W*E = (1*0*1 + 1*2*4 + 1*0*1
    #   + 1*2*1 + 1*1*1 + 1*0*... ) / 3: E[i,j] = r_i c_j / 3 with c = (1,0,2):
    #   row 0: (0, 0, 2*4)/3 = 8/3; row 1: (1*1, 0, 2*1)/3 = 3/3; row 2: (1*4, 0, 0)/3 = 4/3
    #   total 15/3 = 5 -> kappa = 1 - 1/5 = 0.8
    # linear W = |i-j|: row 0: 2*2/3 = 4/3; row 1: (1 + 2)/3 = 1; row 2: 2/3 -> 3; kappa = 1 - 1/3
    judge, human = [1.0, 2.0, 3.0], [1.0, 3.0, 3.0]
    assert cohen_kappa(judge, human, labels=[1, 2, 3], weights="quadratic") == pytest.approx(0.8)
    assert cohen_kappa(judge, human, labels=[1, 2, 3], weights="linear") == pytest.approx(2 / 3)


def test_kappa_of_one_category_is_undefined_not_nan() -> None:
    with pytest.raises(Undefined, match="same value"):
        cohen_kappa([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], labels=[0, 1])
    with pytest.raises(Undefined, match="no row"):
        cohen_kappa([1.0, None], [None, 0.0])


def test_kappa_refuses_values_outside_the_labels() -> None:
    with pytest.raises(ValueError, match=r"judge values \[2.0\] are not among values"):
        cohen_kappa([0.0, 2.0], [0.0, 1.0], labels=[0, 1])
    with pytest.raises(ValueError, match="increasing"):
        cohen_kappa([0.0, 1.0], [0.0, 1.0], labels=[1, 0])


def test_opposed_one_category_raters_have_kappa_zero() -> None:
    # judge always 0, human always 1: chance and observed disagreement are both total
    assert cohen_kappa([0.0, 0.0], [1.0, 1.0]) == pytest.approx(0.0)
    assert _sklearn_kappa(np.zeros(2), np.ones(2), np.array([0.0, 1.0]), None) == 0.0


# --- Krippendorff's alpha -----------------------------------------------------------


def _with_missing(values: np.ndarray, rng: np.random.Generator) -> list[float | None]:
    return [None if rng.random() < 0.2 else float(v) for v in values]


def _reference_alpha(
    judge: list[float | None], human: list[float | None], level: str, domain: np.ndarray | None
) -> float:
    data = [[np.nan if v is None else v for v in side] for side in (judge, human)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(
                krippendorff.alpha(
                    reliability_data=data, level_of_measurement=level, value_domain=domain
                )
            )
    except ValueError:  # no unit coded twice
        return math.nan


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(50))
def test_alpha_equals_krippendorff(seed: int, level: str) -> None:
    domain, judge_values, human_values = _labels(seed)
    rng = np.random.default_rng(1000 + seed)
    judge, human = _with_missing(judge_values, rng), _with_missing(human_values, rng)
    given = domain if seed % 3 else None  # the domain given, or read from the values
    expected = _reference_alpha(judge, human, level, given)
    values = None if given is None else given.tolist()
    if math.isnan(expected):
        with pytest.raises(Undefined):
            krippendorff_alpha(judge, human, level=level, values=values)
        return
    ours = krippendorff_alpha(judge, human, level=level, values=values)
    assert ours == pytest.approx(expected, abs=1e-9)


def test_interval_alpha_of_continuous_scores_equals_krippendorff() -> None:
    rng = np.random.default_rng(5)
    human = rng.uniform(0, 1, 80)
    judge = np.clip(human + rng.normal(0.05, 0.15, 80), 0, 1)
    expected = krippendorff.alpha(reliability_data=[judge, human], level_of_measurement="interval")
    assert krippendorff_alpha(judge.tolist(), human.tolist(), level="interval") == pytest.approx(
        expected, abs=1e-9
    )


def test_alpha_by_hand() -> None:
    # judge 0,0,1,1 ; human 0,1,1,1: confusion C = [[1,1],[0,2]]
    # coincidences O = C + C^T = [[2,1],[1,4]], n = (3, 5), 2N = 8
    # chance E = (outer(n,n) - diag(n)) / 7: off-diagonal 15/7 each
    # nominal: D_o = 1 + 1 = 2, D_e = 30/7 -> alpha = 1 - 14/30 = 8/15
    # interval on values 0, 1: same distances (1 off the diagonal) -> 8/15
    # ordinal on two categories: d(0,1) = (n_0 + n_1 - (n_0 + n_1)/2)^2 = 4^2 = 16 on both
    #   O and E, so the ratio is again 2/(30/7) -> 8/15
    judge, human = [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]
    for level in ("nominal", "interval", "ordinal"):
        assert krippendorff_alpha(judge, human, level=level) == pytest.approx(8 / 15)


def test_ordinal_alpha_by_hand() -> None:
    # judge 1,2,3 ; human 1,3,3 (values 1..3): C cells (1,1),(2,3),(3,3)
    # O = C + C^T: O11 = 2, O23 = O32 = 1, O33 = 2; n = (2, 1, 3), 2N = 6
    # ordinal d(c,k) = (sum n_c..n_k - (n_c + n_k)/2)^2:
    #   d(1,2) = (3 - 1.5)^2 = 2.25; d(2,3) = (4 - 2)^2 = 4; d(1,3) = (6 - 2.5)^2 = 12.25
    # D_o = 2 * O23 * d(2,3) = 8
    # E off-diagonal = n_c n_k / 5: E12 = 2/5, E13 = 6/5, E23 = 3/5
    # D_e = 2 * (0.4 * 2.25 + 1.2 * 12.25 + 0.6 * 4) = 2 * 18 = 36 -> alpha = 1 - 8/36 = 7/9
    judge, human = [1.0, 2.0, 3.0], [1.0, 3.0, 3.0]
    assert krippendorff_alpha(judge, human, level="ordinal") == pytest.approx(7 / 9)


def test_alpha_degenerate_cases_say_why() -> None:
    with pytest.raises(Undefined, match="same value"):
        krippendorff_alpha([1.0, 1.0, None], [1.0, 1.0, 0.0], level="nominal")
    with pytest.raises(Undefined, match="none is pairable"):
        krippendorff_alpha([1.0, None], [None, 0.0])
    with pytest.raises(ValueError, match="not among values"):
        krippendorff_alpha([1.0, 3.0], [1.0, 1.0], level="ordinal", values=[1, 2])


# --- accuracy and the confusion table ------------------------------------------------


def test_confusion_counts_by_judge_then_human() -> None:
    table = confusion([0.0, 0.5, 1.0, 1.0, None], [0.0, 1.0, 1.0, 0.5, 1.0], [0, 0.5, 1])
    # rows: judge 0, 0.5, 1; columns: human 0, 0.5, 1; the row with no judge value left out
    assert table.counts == ((1, 0, 0), (0, 0, 1), (0, 1, 1))
    assert json.loads(json.dumps(table.as_dict())) == {
        "values": [0.0, 0.5, 1.0],
        "counts": [[1, 0, 0], [0, 0, 1], [0, 1, 1]],
    }


# --- prediction-powered mean ----------------------------------------------------------


def _ppi_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(5, 80)), int(rng.integers(20, 400))
    y = rng.uniform(0, 1, n)
    bias, noise = rng.uniform(-0.2, 0.2), rng.uniform(0.05, 0.4)
    judged = y + rng.normal(bias, noise, n)
    unlabelled = rng.uniform(0, 1, big_n) + rng.normal(bias, noise, big_n)
    return y, judged, unlabelled


@pytest.mark.parametrize("confidence", [0.9, 0.95])
@pytest.mark.parametrize("tuned", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_ppi_mean_equals_ppi_py(seed: int, tuned: bool, confidence: float) -> None:
    y, judged, unlabelled = _ppi_case(seed)
    lam = None if tuned else 1
    estimate = ppi_py.ppi_mean_pointestimate(y, judged, unlabelled, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, judged, unlabelled, alpha=1 - confidence, lam=lam)
    ours = ppi_mean(y, judged, unlabelled, confidence=confidence, tuned=tuned)
    assert ours.estimate == pytest.approx(float(np.squeeze(estimate)), abs=1e-9)
    assert ours.low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert ours.high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
    if not tuned:
        assert ours.lam == 1.0
    assert 0.0 <= ours.lam <= 1.0


def test_ppi_mean_by_hand() -> None:
    # Y = (1, 0), Yhat = (1, 1), Yhat_u = (1, 0, 1, 0), classic PPI (lambda 1):
    # estimate = mean(Yhat_u) + mean(Y - Yhat) = 0.5 + (0 + -1)/2 = 0
    # se^2 = sd(Yhat_u)^2 / 4 + sd(Y - Yhat)^2 / 2 = 0.25/4 + 0.25/2 = 0.1875 (sd over n)
    # 95%: 0 -/+ 1.959964 * 0.4330127 = -/+ 0.848680
    ours = ppi_mean([1, 0], [1, 1], [1, 0, 1, 0], confidence=0.95, tuned=False)
    assert ours.estimate == pytest.approx(0.0, abs=1e-15)
    assert ours.high == pytest.approx(1.959963984540054 * math.sqrt(0.1875), abs=1e-12)
    # tuned: cov_n(Y, Yhat) = 0 (Yhat constant on the labelled rows) -> lambda 0, the
    # mean of Y alone: 0.5, se = sd(Y)/sqrt(2) = 0.5/sqrt(2)
    tuned = ppi_mean([1, 0], [1, 1], [1, 0, 1, 0], confidence=0.95)
    assert tuned.lam == 0.0
    assert tuned.estimate == pytest.approx(0.5)
    assert tuned.high - tuned.estimate == pytest.approx(1.959963984540054 * 0.5 / math.sqrt(2))


def test_ppi_mean_constant_judge_is_lambda_zero_not_nan() -> None:
    # ppi_py divides 0 by 0 here; any lambda gives the same estimate, so 0 is reported
    ours = ppi_mean([1, 0, 1], [0.5, 0.5, 0.5], [0.5, 0.5], confidence=0.95)
    assert ours.lam == 0.0
    assert ours.estimate == pytest.approx(2 / 3)
    assert math.isfinite(ours.low)
    assert math.isfinite(ours.high)


@pytest.mark.parametrize(
    ("human", "labelled", "unlabelled", "problem"),
    [
        ([], [], [0.5, 0.5], "0 labelled"),
        ([1.0], [1.0], [0.5, 0.5], "1 labelled"),
        ([1.0, 0.0], [1.0, 0.0], [], "0 unlabelled"),
        ([1.0, 0.0], [1.0], [0.5, 0.5], "same rows"),
    ],
)
def test_ppi_mean_refuses_what_it_cannot_estimate(
    human: list[float], labelled: list[float], unlabelled: list[float], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        ppi_mean(human, labelled, unlabelled, confidence=0.95)


def test_ppi_interval_covers_the_true_mean_at_its_level() -> None:
    """400 datasets of 200 labelled and 2,000 unlabelled rows, a judge that overrates by
    0.15 with noise 0.2: the share of 90% intervals holding the true mean (0.5) must be
    0.9 within 3 binomial standard deviations (sqrt(0.9 * 0.1 / 400) = 0.015, so +/-
    0.045); the judge's mean alone (0.65) is never inside. Power tuning estimates lambda
    from the same rows, which ppi_py's interval ignores: at 60 labelled rows 2,000 such
    datasets gave 87% coverage (ppi_py's interval the same), at 300 rows 90.6%."""
    rng = np.random.default_rng(2024)
    covered = {True: 0, False: 0}
    for _ in range(400):
        y = rng.uniform(0, 1, 200)
        u = rng.uniform(0, 1, 2000)
        judged = y + 0.15 + rng.normal(0, 0.2, 200)
        unlabelled = u + 0.15 + rng.normal(0, 0.2, 2000)
        for tuned in (True, False):
            found = ppi_mean(y, judged, unlabelled, confidence=0.9, tuned=tuned)
            covered[tuned] += found.low <= 0.5 <= found.high
    for count in covered.values():
        assert abs(count / 400 - 0.9) <= 3 * math.sqrt(0.9 * 0.1 / 400)


# --- the bootstrap interval -------------------------------------------------------------


def _confusion_parts(judge: np.ndarray, human: np.ndarray, size: int) -> np.ndarray:
    parts = np.zeros((len(judge), size * size))
    parts[np.arange(len(judge)), judge * size + human] = 1.0
    return parts


def _kappa_statistic(size: int, weights: str | None):
    def statistic(flat: np.ndarray) -> np.ndarray:
        return kappa_of_counts(flat.reshape(*flat.shape[:-1], size, size), weights)

    return statistic


@pytest.mark.parametrize("weights", [None, "quadratic"])
@pytest.mark.parametrize("seed", [3, 11])
def test_bootstrap_interval_equals_scipy_on_the_same_draws(seed: int, weights: str | None) -> None:
    """``resample.weights`` draws ``default_rng(seed).integers(0, n, (B, n))`` as scipy
    does, so with the same seed both read the same resamples: the percentile interval
    and the BCa interval agree with scipy's to float rounding. scipy's statistic is
    sklearn's kappa on each resample, so the statistic is checked too."""
    rng = np.random.default_rng(seed)
    size, n = 3, 50
    judge = rng.integers(0, size, n)
    human = np.where(rng.random(n) < 0.7, judge, rng.integers(0, size, n))
    settings = StatsSettings(resamples=1000, seed=seed)
    parts = _confusion_parts(judge, human, size)
    ours = bootstrap_interval(parts, _kappa_statistic(size, weights), settings, "undefined")

    def sklearn_kappa(a: np.ndarray, b: np.ndarray) -> float:
        return float(cohen_kappa_score(a, b, labels=np.arange(size), weights=weights))

    for method in ("percentile", "BCa"):
        reference = bootstrap(
            (judge, human),
            sklearn_kappa,
            paired=True,
            vectorized=False,
            n_resamples=1000,
            confidence_level=0.95,
            method=method,
            rng=np.random.default_rng(seed),
        )
        if method == "BCa":
            assert ours.method.startswith("bca")
            low, high = ours.low, ours.high
        else:  # our resamples read as percentile
            values = _resampled_values(parts, _kappa_statistic(size, weights), settings)
            low, high = Replicates(ours.estimate, values).interval(0.95)
        interval = reference.confidence_interval
        assert (low, high) == pytest.approx((interval.low, interval.high), abs=1e-9)


def _resampled_values(parts: np.ndarray, statistic, settings: StatsSettings) -> np.ndarray:
    from pytest_ragmetrics.inference.resample import Units, weights

    return np.concatenate(
        [
            statistic(block @ parts)
            for block in weights(Units.rows(len(parts)), settings.resamples, settings.seed)
        ]
    )


def test_kappa_interval_covers_the_true_kappa_at_its_level() -> None:
    """200 datasets of 80 rows from a population with kappa 0.6 (two binary raters, each
    positive half the time, agreeing on 80% of rows: kappa = (0.8 - 0.5) / 0.5 = 0.6):
    the 90% BCa intervals hold 0.6 in 0.9 of datasets within 3 binomial standard
    deviations (sqrt(0.09 / 200) = 0.021, +/- 0.064), plus 0.02 for the bootstrap's own
    small-sample undercoverage."""
    rng = np.random.default_rng(99)
    settings = StatsSettings(confidence=0.9, resamples=400)
    covered = 0
    statistic = _kappa_statistic(2, None)
    for _ in range(200):
        human = rng.integers(0, 2, 80)
        judge = np.where(rng.random(80) < 0.8, human, 1 - human)
        found = bootstrap_interval(_confusion_parts(judge, human, 2), statistic, settings, "-")
        covered += found.low <= 0.6 <= found.high
    assert abs(covered / 200 - 0.9) <= 3 * math.sqrt(0.09 / 200) + 0.02


# --- one metric's agreement -------------------------------------------------------------


def test_agreement_of_an_ordinal_metric_matches_the_references() -> None:
    rng = np.random.default_rng(8)
    human = rng.integers(1, 6, 120).astype(float)
    judge = np.clip(human + rng.choice([-1, 0, 0, 0, 1], 120), 1, 5)
    judge_values: list[float | None] = judge.tolist()
    human_values: list[float | None] = [
        None if i % 3 == 0 else float(v) for i, v in enumerate(human)
    ]
    found = agreement(judge_values, human_values, scale="ordinal", values=[1, 2, 3, 4, 5])
    keep = np.array([v is not None for v in human_values])
    domain = np.arange(1.0, 6.0)
    assert found.labelled == 80
    assert isinstance(found.kappa, Interval)
    assert isinstance(found.weighted_kappa, Interval)
    assert found.kappa.estimate == pytest.approx(
        _sklearn_kappa(judge[keep], human[keep], domain, None), abs=1e-12
    )
    assert found.weighted_kappa.estimate == pytest.approx(
        _sklearn_kappa(judge[keep], human[keep], domain, "quadratic"), abs=1e-12
    )
    assert isinstance(found.alpha, Interval)
    assert found.alpha.estimate == pytest.approx(
        _reference_alpha(judge_values, human_values, "ordinal", domain), abs=1e-9
    )
    for measured in (found.accuracy, found.kappa, found.weighted_kappa, found.alpha):
        assert measured.low <= measured.estimate <= measured.high
        assert measured.n == 80
        assert measured.confidence == 0.95
    mean = found.corrected_mean
    assert not isinstance(mean, NotDefined)
    assert (mean.labelled, mean.unlabelled) == (80, 40)
    document = found.as_dict()
    assert json.loads(json.dumps(document)) == document


def test_agreement_says_why_a_statistic_is_missing() -> None:
    found = agreement([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], scale="binary", values=[0, 1])
    assert isinstance(found.kappa, NotDefined)
    assert "same value" in found.kappa.reason
    assert isinstance(found.alpha, NotDefined)
    assert found.weighted_kappa is None
    assert isinstance(found.accuracy, Interval)
    assert found.accuracy.estimate == 1.0
    assert isinstance(found.corrected_mean, NotDefined)
    assert "0 unlabelled" in found.corrected_mean.reason
    assert json.dumps(found.as_dict())


def test_agreement_of_continuous_scores_has_alpha_only() -> None:
    rng = np.random.default_rng(4)
    human = rng.uniform(0, 1, 40)
    judge = np.clip(human + rng.normal(0, 0.1, 40), 0, 1)
    found = agreement(judge.tolist(), human.tolist(), scale="interval", values=None)
    assert isinstance(found, Agreement)
    assert found.confusion is None
    assert isinstance(found.kappa, NotDefined)
    assert isinstance(found.alpha, Interval)
    assert found.alpha.estimate == pytest.approx(
        krippendorff.alpha(reliability_data=[judge, human], level_of_measurement="interval"),
        abs=1e-9,
    )
    with pytest.raises(ValueError, match="values: required"):
        agreement([1.0], [1.0], scale="ordinal", values=None)
