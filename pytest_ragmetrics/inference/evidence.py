"""The entry points: the evidence of a paired comparison, or of one run's statistic.

``paired_evidence`` compares this run's per-row values with the reference's on the same
rows (a stored baseline, or the reference system); ``corpus_evidence`` does the same for
a statistic reduced from summed sufficient statistics; ``single_evidence`` and
``single_corpus_evidence`` give one run's statistic its interval. The method follows the
values (docs/statistics.md has the reasons):

============================  =====================================  ===================
what is compared              interval                               p-value (no change)
============================  =====================================  ===================
mean / sum of 0/1 values      Newcombe's score interval              exact McNemar
mean / sum, ratio of means    BCa bootstrap, widened to the t        sign-flip test
                              interval where that is wider
p50 / p95                     percentile bootstrap                   sign-flip test
corpus statistic              bootstrap, sacrebleu's order stats     approx. randomization
============================  =====================================  ===================

Rows of one session are resampled and flipped together; 0/1 values in sessions then
take the bootstrap and sign-flip path (McNemar assumes independent pairs). Above
``resample_limit`` units, intervals are normal: the standard error in closed form for
means, sums and ratios (cluster-robust), from ``SE_RESAMPLES`` resamples otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from pytest_ragmetrics.inference.binary import Counts, Newcombe, Wilson, mcnemar
from pytest_ragmetrics.inference.corpus import (
    PairedReplicates,
    Reduce,
    approximate_randomization,
    bootstrap_p,
    paired_bootstrap,
    single_bootstrap,
    total,
)
from pytest_ragmetrics.inference.normal import cdf
from pytest_ragmetrics.inference.power import detectable, implied_se
from pytest_ragmetrics.inference.records import (
    QUANTILES,
    Change,
    Evidence,
    NotComparable,
    Scale,
    Side,
    Statistic,
)
from pytest_ragmetrics.inference.resample import (
    Estimator,
    Mean,
    Quantile,
    QuantileChange,
    Ratio,
    Units,
    mean_and_ratio,
    resampled,
)
from pytest_ragmetrics.inference.sampling import (
    Cautious,
    Normal,
    Replicates,
    Sampling,
    bca,
)
from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.inference.signflip import FlipTest, flip_quantile, flip_sum, smallest_p

# Resamples that estimate a standard error above resample_limit (no closed form): a
# standard error, unlike an interval's ends, is well estimated from 50 to 200 resamples
# (Efron and Tibshirani 1993, section 6.4); 100 leave it within about 7%.
SE_RESAMPLES: Final = 100
LEAST_UNITS: Final = 2


@dataclass(frozen=True)
class _Scaled:
    """A sampling distribution multiplied by a positive ``factor`` (a sum is ``n`` means)."""

    inner: Sampling
    factor: float

    @property
    def estimate(self) -> float:
        return self.factor * self.inner.estimate

    def interval(self, confidence: float) -> tuple[float, float]:
        low, high = self.inner.interval(confidence)
        return self.factor * low, self.factor * high

    def below(self, bound: float) -> float:
        return self.inner.below(bound / self.factor)

    def above(self, bound: float) -> float:
        return self.inner.above(bound / self.factor)


@dataclass(frozen=True)
class _Ask:
    """What a caller asks: the settings, the confidence of the interval, the bound whose
    p-values are wanted (on the evidence's scale), and how rows are resampled."""

    settings: StatsSettings
    confidence: float
    bound: float | None
    units: Units

    @property
    def large(self) -> bool:
        return self.units.count > self.settings.resample_limit

    def label(self, n: int, paired: bool) -> str:
        rows = f"{n:,} {'pairs' if paired else 'rows'}"
        return f"{self.units.count:,} sessions ({rows})" if self.units.clustered else rows

    def normal(self, label: str, how: str) -> str:
        limit = self.settings.resample_limit
        return f"normal interval ({label}, over resample_limit {limit:,}; standard error {how})"

    def evidence(
        self,
        scale: Scale,
        sampling: Sampling,
        method: str,
        n: int,
        test: FlipTest | None,
        delta: Sampling | None = None,
        sides: tuple[Side, Side] | None = None,
        bootstrap_p: float | None = None,
        p_bound: float | None = None,
    ) -> Evidence:
        """The evidence record of ``sampling``; a comparison (its ``test`` of no change
        given) gets its minimum detectable effect, unless its interval has no width (no
        spread to size a change by) or its test cannot get below the level (nothing is
        detectable: ``Evidence.p_floor``)."""
        low, high = sampling.interval(self.confidence)
        mde = None
        p_value, p_floor = (test.p_value, test.floor) if test is not None else (None, None)
        blind = p_floor is not None and p_floor >= 1 - self.confidence
        if test is not None and high > low and not blind:
            se = implied_se(low, high, self.confidence)
            mde = detectable(se, self.confidence, self.settings.power)
        bound = self.bound
        return Evidence(
            scale,
            sampling.estimate,
            low,
            high,
            self.confidence,
            method,
            n,
            self.units.count,
            p_value,
            sampling.below(bound) if bound is not None else None,
            sampling.above(bound) if bound is not None else None,
            mde,
            (delta.estimate, *delta.interval(self.confidence)) if delta is not None else None,
            sides,
            bootstrap_p,
            p_bound,
            p_floor,
        )


def _finite(values: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(values)):
        raise NotComparable(
            f"{what} is 0 in some resamples, so the ratio has no interval; compare the "
            "difference instead (baseline + d rather than Nx baseline)"
        )


def _check(arrays: tuple[np.ndarray, ...], ask: _Ask, what: str) -> None:
    if ask.units.count < LEAST_UNITS:
        raise NotComparable(
            f"{len(arrays[0])} {what} in {ask.units.count} unit(s): an interval needs at "
            f"least {LEAST_UNITS}"
        )
    for array in arrays:
        if not np.all(np.isfinite(array)):
            raise NotComparable("a value is not finite, so no interval can be drawn")


def _sampling(
    estimator: Estimator, ask: _Ask, label: str, replicates: np.ndarray | None = None
) -> tuple[Sampling, str]:
    """The estimator's sampling distribution and how it was obtained: a bootstrap (BCa
    where the estimator has a smooth jackknife, else percentile) up to
    ``resample_limit`` units (``replicates`` when already drawn), a normal interval
    beyond."""
    settings, estimate = ask.settings, estimator.estimate()
    if ask.large:
        se = estimator.se()
        if se is not None:
            robust = "cluster-robust, " if ask.units.clustered else ""
            return Normal(estimate, se), ask.normal(label, f"{robust}closed form")
        values = replicates
        if values is None:
            values = resampled(estimator, ask.units, SE_RESAMPLES, settings.seed)
        _finite(values, "the reference's statistic")
        return Normal(estimate, float(np.std(values, ddof=1))), ask.normal(
            label, f"{SE_RESAMPLES} resamples"
        )
    if replicates is None:
        replicates = resampled(estimator, ask.units, settings.resamples, settings.seed)
    _finite(replicates, "the reference's statistic")
    bootstrap = bca(estimate, replicates, estimator.jackknife())
    kind = "BCa" if bootstrap.read_as == "bca" else "percentile"
    method = f"{kind} bootstrap ({settings.resamples:,} resamples of {label})"
    t = estimator.studentized(ask.units)
    if t is None or bootstrap.constant:
        return bootstrap, method
    return Cautious(bootstrap, t), f"{method} widened to the t interval where wider"


def _normal_p(sampling: Sampling) -> FlipTest:
    """The two-sided p-value of no change from a normal sampling distribution."""
    if not isinstance(sampling, Normal):
        raise TypeError(f"a normal p-value needs a normal sampling distribution, not {sampling}")
    if sampling.se == 0:
        return FlipTest(1.0 if sampling.estimate == 0 else 0.0, "normal approximation", 0.0)
    p = min(1.0, 2 * cdf(-abs(sampling.estimate) / sampling.se))
    return FlipTest(p, "normal approximation", 0.0)


def _mean_change(
    current: np.ndarray,
    reference: np.ndarray,
    statistic: Statistic,
    scale: Change,
    ask: _Ask,
    binary: bool,
) -> Evidence:
    """A mean's (or sum's) change; see ``paired_evidence``."""
    n, settings, units = len(current), ask.settings, ask.units
    label, factor = ask.label(n, paired=True), float(n) if statistic == "sum" else 1.0
    difference = current - reference
    if scale == "ratio" and not math.fsum(reference) > 0:
        raise NotComparable(
            f"the reference's {statistic} is {math.fsum(reference):g}: a ratio to it means "
            "nothing; compare the difference instead (baseline + d rather than Nx baseline)"
        )
    replicates: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if scale == "ratio" and not ask.large:
        replicates = mean_and_ratio(current, reference, units, settings.resamples, settings.seed)
    if binary and not units.clustered:
        counts = Counts.of(current, reference)
        change: Sampling = Newcombe(counts, factor)
        method = f"Newcombe's score interval ({label})"
        test = FlipTest(
            mcnemar(counts.n10, counts.n01),
            f"exact McNemar test ({counts.n10} against {counts.n01} discordant pairs)",
            smallest_p(n, settings.permutations, exact=True),  # every pair discordant one way
        )
    else:
        change, method = _sampling(Mean(difference, units), ask, label, replicates[0])
        change = _Scaled(change, factor) if factor != 1 else change
        test = flip_sum(
            difference, units, settings.permutations, settings.seed, settings.resample_limit
        )
    p_bound = (
        None
        if binary and not units.clustered
        else _bound_test(current, reference, scale, factor, test, ask)
    )
    if scale == "difference":
        how = f"{method}; {test.how}"
        return ask.evidence(scale, change, how, n, test, p_bound=p_bound)
    ratio, method = _sampling(Ratio(current, reference, units), ask, label, replicates[1])
    how = f"{method}; {test.how}"
    return ask.evidence(scale, ratio, how, n, test, delta=change, p_bound=p_bound)


def _bound_test(
    current: np.ndarray,
    reference: np.ndarray,
    scale: Change,
    factor: float,
    test: FlipTest,
    ask: _Ask,
) -> float | None:
    """The sign-flip p-value of the bound asked about: of the per-row differences less
    the bound (a sum's bound shared out over the rows), or of ``current - bound *
    reference`` for a ratio, whose mean is 0 exactly when the ratio of means is the
    bound (divided through by a bound above 1, which leaves the p-value as it is and
    keeps a huge factor from overflowing). At no change it is the test of no change
    itself."""
    bound = ask.bound
    if bound is None:
        return None
    if bound == (1.0 if scale == "ratio" else 0.0):
        return test.p_value
    if scale == "ratio":
        shifted = current / bound - reference if bound > 1 else current - bound * reference
    else:
        shifted = current - reference - bound / factor
    settings = ask.settings
    found = flip_sum(
        shifted, ask.units, settings.permutations, settings.seed, settings.resample_limit
    )
    return found.p_value


def paired_evidence(
    current: np.ndarray,
    reference: np.ndarray,
    *,
    statistic: Statistic,
    scale: Change,
    settings: StatsSettings,
    units: Units,
    binary: bool = False,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """The change of ``statistic`` from ``reference`` to ``current`` (aligned: row ``i``
    of both is one pair), on ``scale``, with the p-values of ``bound`` on that scale.
    ``binary``: the values are 0/1 (a mean or sum of them is then read with McNemar and
    Newcombe, unless rows come in sessions)."""
    ask = _Ask(settings, confidence or settings.confidence, bound, units)
    _check((current, reference), ask, "pairs")
    n, label = len(current), ask.label(len(current), paired=True)
    if statistic in ("mean", "sum"):
        return _mean_change(current, reference, statistic, scale, ask, binary)
    q = QUANTILES[statistic]
    change = QuantileChange(current, reference, q, spread=units.spread)
    count = SE_RESAMPLES if ask.large else settings.resamples
    ours, theirs = change.both(units, count, settings.seed)  # one drawing for both scales
    shift, method = _sampling(change, ask, label, ours - theirs)
    if ask.large:
        test = _normal_p(shift)
    else:
        test = flip_quantile(current, reference, q, units, settings.permutations, settings.seed)
    if scale == "difference":
        return ask.evidence(scale, shift, f"{method}; {test.how}", n, test)
    if not float(np.quantile(reference, q)) > 0:
        raise NotComparable(
            f"the reference's {statistic} is {float(np.quantile(reference, q)):g}: a ratio "
            "to it means nothing; compare the difference instead (baseline + d rather than "
            "Nx baseline)"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = ours / theirs
    ratio, method = _sampling(replace(change, ratio=True), ask, label, ratios)
    return ask.evidence(scale, ratio, f"{method}; {test.how}", n, test, delta=shift)


def single_evidence(
    values: np.ndarray,
    *,
    statistic: Statistic,
    settings: StatsSettings,
    units: Units,
    binary: bool = False,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """``statistic`` of one run's ``values`` with its interval, and the p-values of
    ``bound``; ``binary``: the values are 0/1 (Wilson's interval, unless in sessions)."""
    ask = _Ask(settings, confidence or settings.confidence, bound, units)
    _check((values,), ask, "rows")
    n, label = len(values), ask.label(len(values), paired=False)
    sampling: Sampling
    if statistic in ("mean", "sum"):
        factor = float(n) if statistic == "sum" else 1.0
        if binary and not units.clustered:
            sampling = Wilson(int(np.count_nonzero(values)), n, factor)
            method = f"Wilson's score interval ({label})"
        else:
            sampling, method = _sampling(Mean(values, units), ask, label)
            sampling = _Scaled(sampling, factor) if factor != 1 else sampling
    else:
        sampling, method = _sampling(
            Quantile(values, QUANTILES[statistic], units.spread), ask, label
        )
    return ask.evidence("value", sampling, method, n, None)


def _order_side(values: np.ndarray, confidence: float) -> Side:
    mean = float(values.mean())
    low, high = Replicates(mean, values, "order").interval(confidence)
    return Side(mean, low, high)


def corpus_evidence(
    current: np.ndarray,
    reference: np.ndarray,
    reduce: Reduce,
    *,
    scale: Change,
    settings: StatsSettings,
    units: Units,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """The change of a corpus statistic: ``current`` and ``reference`` are the pairs'
    sufficient statistics (``(pairs, parts)``), ``reduce`` turns summed parts into it."""
    ask = _Ask(settings, confidence or settings.confidence, bound, units)
    _check((current, reference), ask, "pairs")
    n, label = len(current), ask.label(len(current), paired=True)
    ours, theirs = reduce(total(current)), reduce(total(reference))
    if ask.large:
        return _corpus_normal(current, reference, reduce, ours, theirs, scale, ask)
    drawn = paired_bootstrap(current, reference, reduce, units, settings.resamples, settings.seed)
    p_value = approximate_randomization(
        current, reference, reduce, units, settings.permutations, settings.seed
    )
    method = (
        f"paired bootstrap ({settings.resamples:,} resamples of {label}), order statistics; "
        f"approximate randomization ({settings.permutations:,} shuffles)"
    )
    # a shuffle swaps units as a flip does: random, so never below 1 / (R + 1)
    test = FlipTest(p_value, method, smallest_p(units.count, settings.permutations, exact=False))
    shift = Replicates(ours - theirs, drawn.current - drawn.reference, "order")
    sides = (
        _order_side(drawn.current, ask.confidence),
        _order_side(drawn.reference, ask.confidence),
    )
    bootstrapped = bootstrap_p(drawn, ours - theirs)
    if scale == "difference":
        return ask.evidence(scale, shift, method, n, test, sides=sides, bootstrap_p=bootstrapped)
    ratios = drawn.current / drawn.reference
    _finite(ratios, "the reference's statistic")
    ratio = Replicates(ours / theirs, ratios, "order")
    return ask.evidence(
        scale, ratio, method, n, test, delta=shift, sides=sides, bootstrap_p=bootstrapped
    )


def _corpus_normal(
    current: np.ndarray,
    reference: np.ndarray,
    reduce: Reduce,
    ours: float,
    theirs: float,
    scale: Change,
    ask: _Ask,
) -> Evidence:
    """A corpus comparison above ``resample_limit``: normal intervals, standard errors
    from ``SE_RESAMPLES`` resamples, and the p-value of the difference's."""
    n = len(current)
    drawn: PairedReplicates = paired_bootstrap(
        current, reference, reduce, ask.units, SE_RESAMPLES, ask.settings.seed
    )
    method = ask.normal(ask.label(n, paired=True), f"{SE_RESAMPLES} resamples")
    shift = Normal(ours - theirs, float(np.std(drawn.current - drawn.reference, ddof=1)))
    test = _normal_p(shift)
    method = f"{method}; {test.how}"
    if scale == "difference":
        return ask.evidence(scale, shift, method, n, test)
    ratios = drawn.current / drawn.reference
    _finite(ratios, "the reference's statistic")
    ratio = Normal(ours / theirs, float(np.std(ratios, ddof=1)))
    return ask.evidence(scale, ratio, method, n, test, delta=shift)


def single_corpus_evidence(
    parts: np.ndarray,
    reduce: Reduce,
    *,
    settings: StatsSettings,
    units: Units,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """One run's corpus statistic with its interval (``parts``: its rows' statistics)."""
    ask = _Ask(settings, confidence or settings.confidence, bound, units)
    _check((parts,), ask, "rows")
    n, label = len(parts), ask.label(len(parts), paired=False)
    estimate = reduce(total(parts))
    sampling: Sampling
    if ask.large:
        values = single_bootstrap(parts, reduce, units, SE_RESAMPLES, settings.seed)
        sampling = Normal(estimate, float(np.std(values, ddof=1)))
        method = ask.normal(label, f"{SE_RESAMPLES} resamples")
    else:
        values = single_bootstrap(parts, reduce, units, settings.resamples, settings.seed)
        sampling = Replicates(estimate, values, "order")
        method = f"bootstrap ({settings.resamples:,} resamples of {label}), order statistics"
    return ask.evidence("value", sampling, method, n, None)
