"""Corpus statistics against sacrebleu's own paired tests (``sacrebleu.significance``).

A 60-segment corpus with one reference stream, a baseline and a candidate system that
differ on every segment, scored with sacrebleu's BLEU and chrF. sacrebleu's
``PairedTest`` runs its paired bootstrap (``bs``, 1,000 resamples) and its approximate
randomization (``ar``, 10,000 shuffles) with ``SACREBLEU_SEED=12345``; the library's
``corpus_evidence`` gets the same per-segment sufficient statistics
(``metric._extract_corpus_statistics``) and sacrebleu's own reduction
(``metric._compute_score_from_stats``), with the same seed and counts.

* The p-values (AR, and the paired bootstrap's) must be sacrebleu's exactly: the data
  are chosen so that no shuffle ties the observed difference (checked below), where the
  library deliberately counts ties and sacrebleu does not.
* sacrebleu sums resampled statistics in float32 and divides float32 numbers, so its
  bootstrap means and intervals carry float32 rounding: against ``PairedTest`` they are
  compared to that rounding; against a reference rebuilt here from sacrebleu's pieces
  (its draws ``default_rng(12345).choice(n, (1000, n))``, float64 sums,
  ``_compute_score_from_stats``, ``estimate_ci``) to 1e-9.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.significance import PairedTest, Result, _compute_p_value, estimate_ci

from pytest_ragmetrics.inference.evidence import (
    Evidence,
    corpus_evidence,
    single_corpus_evidence,
)
from pytest_ragmetrics.inference.resample import Units
from pytest_ragmetrics.inference.settings import StatsSettings

SEGMENTS = 60
RESAMPLES = 1000  # sacrebleu's default for bs
SHUFFLES = 10000  # sacrebleu's default for ar
SEED = 12345  # sacrebleu's default SACREBLEU_SEED
METRICS: dict[str, Callable[[], Any]] = {"BLEU": BLEU, "chrF": CHRF}
# float32: about 6e-8 relative a rounding, a few of them in a score
FLOAT32 = 1e-6

_WORDS = [
    "the", "a", "cat", "dog", "sat", "on", "mat", "runs", "fast", "slow", "house", "river",
    "tree", "under", "over", "green", "blue", "red", "small", "big", "quickly", "jumped",
    "bird", "sings", "near", "far", "old", "new",
]  # fmt: skip


def _score(metric: Any, sums: np.ndarray) -> float:
    """sacrebleu's score of summed statistics, given as whole numbers (python ints), as
    its corpus score and its approximate randomization sum them."""
    return float(metric._compute_score_from_stats(np.rint(sums).astype(np.int64).tolist()).score)


def _corpus() -> tuple[list[str], list[str], list[str]]:
    """References, baseline and candidate: each system garbles every reference, the
    candidate a little less (40% and 34% of words replaced, and some dropped)."""
    rng = random.Random(2)

    def garbled(words: list[str], rate: float) -> str:
        kept = []
        for word in words:
            draw = rng.random()
            if draw < rate:
                kept.append(rng.choice(_WORDS))
            elif draw >= rate * 1.3:
                kept.append(word)
        return " ".join(kept)

    references, baseline, candidate = [], [], []
    for _ in range(SEGMENTS):
        words = rng.choices(_WORDS, k=rng.randint(5, 14))
        references.append(" ".join(words))
        baseline.append(garbled(words, 0.4))
        candidate.append(garbled(words, 0.34))
    return references, baseline, candidate


REFERENCES, BASELINE, CANDIDATE = _corpus()


@pytest.fixture(scope="module")
def sacrebleu_seed() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SACREBLEU_SEED", str(SEED))
        yield


def _paired_test(test_type: str, systems: list[tuple[str, Sequence[str]]], samples: int) -> Any:
    metrics = {name: factory() for name, factory in METRICS.items()}
    _, scores = PairedTest(systems, metrics, [REFERENCES], test_type=test_type, n_samples=samples)()
    # scores: {"System": [...], "<metric's name>": [baseline Result, candidate Result]}
    named = [key for key in scores if key != "System"]
    return dict(zip(METRICS, (scores[key] for key in named), strict=True))


@pytest.fixture(scope="module")
def bs(sacrebleu_seed: None) -> dict[str, list[Result]]:
    result: dict[str, list[Result]] = _paired_test(
        "bs", [("baseline", BASELINE), ("candidate", CANDIDATE)], RESAMPLES
    )
    return result


@pytest.fixture(scope="module")
def ar(sacrebleu_seed: None) -> dict[str, list[Result]]:
    result: dict[str, list[Result]] = _paired_test(
        "ar", [("baseline", BASELINE), ("candidate", CANDIDATE)], SHUFFLES
    )
    return result


@dataclass(frozen=True)
class Case:
    """One metric: sacrebleu's statistics, our evidence and the float64 reference."""

    metric: Any
    candidate: np.ndarray  # (segments, statistics)
    baseline: np.ndarray
    evidence: Evidence
    reference_candidate: np.ndarray  # bootstrap scores, sacrebleu's draws, float64 sums
    reference_baseline: np.ndarray

    def reduce(self, sums: np.ndarray) -> float:
        return _score(self.metric, sums)


def _reference_scores(metric: Any, stats: np.ndarray) -> np.ndarray:
    """sacrebleu's bootstrap (``_paired_bs_test``) with float64 sums for float32 ones."""
    draws = np.random.default_rng(SEED).choice(SEGMENTS, size=(RESAMPLES, SEGMENTS), replace=True)
    return np.array([metric._compute_score_from_stats(s.sum(0)).score for s in stats[draws]])


@pytest.fixture(scope="module", params=list(METRICS))
def case(request: pytest.FixtureRequest) -> Case:
    metric = METRICS[request.param]()
    candidate = np.array(metric._extract_corpus_statistics(CANDIDATE, [REFERENCES]), dtype=float)
    baseline = np.array(metric._extract_corpus_statistics(BASELINE, [REFERENCES]), dtype=float)

    def reduce(sums: np.ndarray) -> float:
        return _score(metric, sums)

    evidence = corpus_evidence(
        candidate,
        baseline,
        reduce,
        scale="difference",
        settings=StatsSettings(resamples=RESAMPLES, permutations=SHUFFLES, seed=SEED),
        units=Units.rows(SEGMENTS),
    )
    return Case(
        metric,
        candidate,
        baseline,
        evidence,
        _reference_scores(metric, candidate),
        _reference_scores(metric, baseline),
    )


def _name(case: Case) -> str:
    return "BLEU" if isinstance(case.metric, BLEU) else "chrF"


def test_the_corpus_is_worth_testing(case: Case) -> None:
    # the systems differ on every segment, and the difference is neither obvious nor nil
    assert all(b != c for b, c in zip(BASELINE, CANDIDATE, strict=True))
    assert 0.01 < case.evidence.p_value < 0.5  # type: ignore[operator]


def test_scores_are_sacrebleus(case: Case, bs: dict[str, list[Result]]) -> None:
    baseline, candidate = bs[_name(case)]
    corpus = case.metric.corpus_score(CANDIDATE, [REFERENCES]).score
    assert candidate.score == pytest.approx(corpus, abs=1e-12)
    assert case.evidence.estimate == pytest.approx(candidate.score - baseline.score, abs=1e-9)


def test_no_shuffle_ties_the_observed_difference(case: Case) -> None:
    # The precondition of comparing AR p-values: sacrebleu counts shuffles strictly beyond
    # the observed difference, the library those within 1e-9 of it too.
    swap = np.random.default_rng(SEED).integers(2, size=(SHUFFLES, SEGMENTS), dtype=bool)
    first = swap @ case.baseline + ~swap @ case.candidate
    second = ~swap @ case.baseline + swap @ case.candidate
    shuffled = np.abs(
        np.array([case.reduce(a) - case.reduce(b) for a, b in zip(first, second, strict=True)])
    )
    observed = abs(case.evidence.estimate)
    assert np.min(np.abs(shuffled - observed)) > 1e-6 * observed


def test_approximate_randomization_p_value_is_sacrebleus(
    case: Case, ar: dict[str, list[Result]]
) -> None:
    expected = ar[_name(case)][1].p_value
    assert case.evidence.p_value == pytest.approx(expected, abs=1e-9, rel=0)


def test_paired_bootstrap_p_value_is_sacrebleus(case: Case, bs: dict[str, list[Result]]) -> None:
    expected = bs[_name(case)][1].p_value
    assert case.evidence.bootstrap_p == pytest.approx(expected, abs=1e-9, rel=0)
    # and the float64 reference's, through sacrebleu's own p-value function
    spread = np.abs(case.reference_candidate - case.reference_baseline)
    reference = _compute_p_value(spread - spread.mean(), abs(case.evidence.estimate))
    assert case.evidence.bootstrap_p == pytest.approx(reference, abs=1e-9, rel=0)


def test_sides_are_sacrebleus_to_float32_rounding(case: Case, bs: dict[str, list[Result]]) -> None:
    assert case.evidence.sides is not None
    for side, result in zip(case.evidence.sides, reversed(bs[_name(case)]), strict=True):
        assert result.mean is not None
        assert result.ci is not None
        assert side.mean == pytest.approx(float(result.mean), rel=FLOAT32)
        # a half-width of float32 scores: their rounding is relative to the scores
        half = (side.high - side.low) / 2
        assert half == pytest.approx(float(result.ci), abs=FLOAT32 * side.high)


def test_sides_are_the_float64_reference(case: Case) -> None:
    assert case.evidence.sides is not None
    for side, scores in zip(
        case.evidence.sides, (case.reference_candidate, case.reference_baseline), strict=True
    ):
        mean, ci = estimate_ci(scores)
        ordered = np.sort(scores)
        assert side.mean == pytest.approx(float(mean), abs=1e-9)
        assert (side.high - side.low) / 2 == pytest.approx(float(ci), abs=1e-9)
        cut = RESAMPLES // 40
        assert side.low == pytest.approx(float(ordered[cut]), abs=1e-9)
        assert side.high == pytest.approx(float(ordered[RESAMPLES - cut - 1]), abs=1e-9)


def test_difference_interval_is_the_order_statistics_of_the_reference(case: Case) -> None:
    differences = np.sort(case.reference_candidate - case.reference_baseline)
    cut = RESAMPLES // 40
    assert case.evidence.low == pytest.approx(float(differences[cut]), abs=1e-9)
    assert case.evidence.high == pytest.approx(float(differences[RESAMPLES - cut - 1]), abs=1e-9)


def test_ratio_interval_is_the_order_statistics_of_the_reference(case: Case) -> None:
    evidence = corpus_evidence(
        case.candidate,
        case.baseline,
        case.reduce,
        scale="ratio",
        settings=StatsSettings(resamples=RESAMPLES, permutations=100, seed=SEED),
        units=Units.rows(SEGMENTS),
    )
    ratios = np.sort(case.reference_candidate / case.reference_baseline)
    cut = RESAMPLES // 40
    assert evidence.low == pytest.approx(float(ratios[cut]), rel=1e-9)
    assert evidence.high == pytest.approx(float(ratios[RESAMPLES - cut - 1]), rel=1e-9)
    assert evidence.delta is not None
    assert evidence.delta[1:] == pytest.approx((case.evidence.low, case.evidence.high), abs=1e-12)


def test_one_systems_interval_is_the_order_statistics_of_the_reference(case: Case) -> None:
    evidence = single_corpus_evidence(
        case.baseline,
        case.reduce,
        settings=StatsSettings(resamples=RESAMPLES, seed=SEED),
        units=Units.rows(SEGMENTS),
    )
    ordered = np.sort(case.reference_baseline)
    cut = RESAMPLES // 40
    assert evidence.low == pytest.approx(float(ordered[cut]), abs=1e-9)
    assert evidence.high == pytest.approx(float(ordered[RESAMPLES - cut - 1]), abs=1e-9)


def test_identical_systems_differ_from_sacrebleu_on_purpose(sacrebleu_seed: None) -> None:
    # Two systems that agree on every segment: every shuffle ties the observed difference
    # of 0. The library counts ties (Noreen's test): p = 1. sacrebleu counts only shuffles
    # strictly beyond it: p = 1 / (R + 1), as if the agreement were significant. The
    # paired bootstrap's p-value is sacrebleu's in both: 1 / (B + 1).
    shuffles, resamples = 1000, 200
    systems: list[tuple[str, Sequence[str]]] = [("baseline", BASELINE), ("same", list(BASELINE))]
    ar_results = _paired_test("ar", systems, shuffles)
    bs_results = _paired_test("bs", systems, resamples)
    for name, factory in METRICS.items():
        metric = factory()
        stats = np.array(metric._extract_corpus_statistics(BASELINE, [REFERENCES]), dtype=float)

        def reduce(sums: np.ndarray, metric: Any = metric) -> float:
            return _score(metric, sums)

        evidence = corpus_evidence(
            stats,
            stats.copy(),
            reduce,
            scale="difference",
            settings=StatsSettings(resamples=resamples, permutations=shuffles, seed=SEED),
            units=Units.rows(SEGMENTS),
        )
        assert ar_results[name][1].p_value == pytest.approx(1 / (shuffles + 1), abs=1e-12)
        assert evidence.p_value == 1.0
        assert bs_results[name][1].p_value == pytest.approx(1 / (resamples + 1), abs=1e-12)
        assert evidence.bootstrap_p == pytest.approx(1 / (resamples + 1), abs=1e-12)
