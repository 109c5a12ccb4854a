"""How far an LLM judge agrees with people, and the judge's mean corrected by their labels.

Rows of an eval may carry a human label beside the judge's verdict. From the rows that
have both (the *labelled* rows) this module computes accuracy, Cohen's kappa (plain and
weighted), Krippendorff's alpha and the confusion table, each with a seeded bootstrap
interval; from the labelled rows and the rows the judge scored alone it computes the
prediction-powered (PPI++) mean of what people would have said. Pure numpy; the
definitions are those of the references the tests hold them to:

* ``cohen_kappa``: ``sklearn.metrics.cohen_kappa_score`` (Cohen 1960; weighted, 1968);
* ``krippendorff_alpha``: ``krippendorff.alpha`` for two coders (Krippendorff 2011);
* ``ppi_mean``: ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci``
  (Angelopoulos et al. 2023, power-tuned PPI++).

Where a reference answers NaN (one category only: chance agreement is total, so there
is no disagreement to be spared), these raise ``Undefined`` with the reason, and
``agreement`` records the reason in place of the statistic. docs/statistics.md
(#agreement-with-people) writes out the arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np

from pytest_ragmetrics.inference.normal import two_sided
from pytest_ragmetrics.inference.resample import Units, weights
from pytest_ragmetrics.inference.sampling import bca
from pytest_ragmetrics.inference.settings import StatsSettings

Scale = Literal["binary", "ordinal", "interval"]
Level = Literal["nominal", "ordinal", "interval"]
Weights = Literal["linear", "quadratic"] | None
LEVEL_OF_SCALE: Final[dict[str, Level]] = {
    "binary": "nominal",
    "ordinal": "ordinal",
    "interval": "interval",
}
# Cells of the one-hot table resampled at once, as ``resample.BLOCK_CELLS`` for weights.
_COUNT_CELLS = 4_000_000


class Undefined(ValueError):
    """The statistic has no value for these labels (the reference would give NaN): the
    message says why, for the report."""


# --- inputs ------------------------------------------------------------------------


def _domain(values: Sequence[float]) -> np.ndarray:
    """``values`` as an increasing array: the order is the categories' order, which the
    weights of a weighted kappa and the ranks of an ordinal alpha are read on."""
    domain = np.asarray(values, dtype=float)
    if domain.ndim != 1 or len(domain) == 0 or not np.all(np.isfinite(domain)):
        raise ValueError(f"values: expected finite numbers, e.g. (0, 0.5, 1); got {values!r}")
    if np.any(np.diff(domain) <= 0):
        raise ValueError(f"values: expected them increasing, without repeats; got {values!r}")
    return domain


def _paired(
    judge: Sequence[float | None], human: Sequence[float | None]
) -> tuple[np.ndarray, np.ndarray]:
    """The rows with both values, as two float arrays; a row missing either is not
    pairable and is left out."""
    if len(judge) != len(human):
        raise ValueError(f"judge and human values differ in length: {len(judge)} != {len(human)}")
    both = [(j, h) for j, h in zip(judge, human, strict=True) if j is not None and h is not None]
    pairs = np.asarray(both, dtype=float).reshape(-1, 2)
    if not np.all(np.isfinite(pairs)):
        raise ValueError("judge and human values: expected finite numbers or None")
    return pairs[:, 0], pairs[:, 1]


def _indices(observed: np.ndarray, domain: np.ndarray, side: str) -> np.ndarray:
    """Each value's position in ``domain``; a value outside it is an error (sklearn's
    ``labels`` would drop the row silently, krippendorff raises)."""
    position = np.searchsorted(domain, observed)
    inside = position < len(domain)
    found = inside & (domain[np.minimum(position, len(domain) - 1)] == observed)
    if not np.all(found):
        strays = sorted({float(v) for v in observed[~found]})
        raise ValueError(
            f"{side} values {strays} are not among values {domain.tolist()}: "
            "add them to the values, or correct the labels"
        )
    return position


def _counts(judge: np.ndarray, human: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """The confusion counts: ``counts[i, j]`` rows the judge gave ``domain[i]`` and
    people ``domain[j]``."""
    size = len(domain)
    cells = _indices(judge, domain, "judge") * size + _indices(human, domain, "human")
    table: np.ndarray = np.bincount(cells, minlength=size * size).reshape(size, size)
    return table.astype(float)


def _observed_domain(
    judge: np.ndarray, human: np.ndarray, values: Sequence[float] | None
) -> np.ndarray:
    if values is not None:
        return _domain(values)
    return np.unique(np.concatenate([judge, human]))


# --- statistics of confusion counts (vectorised over leading axes) -------------------


def _kappa_weights(size: int, weights: Weights) -> np.ndarray:
    """Disagreement weights on the categories' positions, as sklearn's: 1 off the
    diagonal, ``|i - j|`` (linear) or ``(i - j) ** 2`` (quadratic)."""
    position = np.arange(size, dtype=float)
    gap = position[:, None] - position[None, :]
    if weights is None:
        return 1.0 - np.eye(size)
    if weights == "linear":
        return np.abs(gap)
    if weights == "quadratic":
        return gap**2
    raise ValueError(f"weights: expected None, 'linear' or 'quadratic'; got {weights!r}")


def kappa_of_counts(counts: np.ndarray, weights: Weights = None) -> np.ndarray:
    """Cohen's kappa of confusion counts (``(..., K, K)``): ``1 - sum(W * O) / sum(W *
    E)``, ``E = outer(row sums, column sums) / n``; NaN where ``sum(W * E)`` is 0."""
    disagreement = _kappa_weights(counts.shape[-1], weights)
    rows, columns = counts.sum(axis=-1), counts.sum(axis=-2)
    total = counts.sum(axis=(-2, -1))
    expected = rows[..., :, None] * columns[..., None, :]
    observed_cost = np.sum(disagreement * counts, axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_cost = np.sum(disagreement * expected, axis=(-2, -1)) / total
        kappa: np.ndarray = 1.0 - observed_cost / np.where(
            expected_cost == 0, np.nan, expected_cost
        )
    return kappa


def _alpha_distances(level: Level, domain: np.ndarray, pooled: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distances between categories: nominal 1 off the diagonal;
    interval ``(v - w) ** 2``; ordinal, from the pooled counts ``n`` (``(..., K)``),
    ``(sum(n[i..j]) - (n[i] + n[j]) / 2) ** 2`` for categories ``i <= j``."""
    size = len(domain)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "interval":
        squared: np.ndarray = (domain[:, None] - domain[None, :]) ** 2
        return squared
    if level != "ordinal":
        raise ValueError(f"level: expected nominal, ordinal or interval; got {level!r}")
    cumulative = np.cumsum(pooled, axis=-1)
    position = np.arange(size)
    low = np.minimum(position[:, None], position[None, :])
    high = np.maximum(position[:, None], position[None, :])
    between = cumulative[..., high] - cumulative[..., low] + pooled[..., low]
    distance: np.ndarray = (between - (pooled[..., low] + pooled[..., high]) / 2) ** 2
    return distance


def alpha_of_counts(counts: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """Krippendorff's alpha of two coders' confusion counts (``(..., K, K)``): the
    coincidences are ``O = C + C^T`` (each unit's pair both ways round), ``n = O``'s
    row sums, ``E = (outer(n, n) - diag(n)) / (2N - 1)``, alpha ``1 - sum(O * D) /
    sum(E * D)``; NaN where ``sum(E * D)`` is 0 (one value among all pairable ones)."""
    coincidences = counts + np.swapaxes(counts, -1, -2)
    pooled = coincidences.sum(axis=-1)
    values = pooled.sum(axis=-1)
    chance = pooled[..., :, None] * pooled[..., None, :]
    chance = chance - pooled[..., :, None] * np.eye(len(domain))
    distance = _alpha_distances(level, domain, pooled)
    observed_cost = np.sum(coincidences * distance, axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_cost = np.sum(chance * distance, axis=(-2, -1)) / (values - 1)
        alpha: np.ndarray = 1.0 - observed_cost / np.where(
            expected_cost == 0, np.nan, expected_cost
        )
    return alpha


def _interval_alpha_of_sums(sums: np.ndarray) -> np.ndarray:
    """Interval alpha from summed per-unit statistics (``(..., 4)``: units, squared
    differences, judge + human, judge^2 + human^2, all centred): ``sum(O * D)`` is twice
    the squared differences, ``sum(E * D)`` is ``2 * 2N * SS / (2N - 1)`` with ``SS`` the
    pooled values' sum of squares about their mean, so alpha is
    ``1 - (2N - 1) * sum((j - h) ** 2) / (2N * SS)``: no table of distinct values, which
    continuous scores would make as large as the rows."""
    units, squared_gaps, total, squares = (sums[..., k] for k in range(4))
    pooled = 2 * units
    spread = squares - total**2 / pooled
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (pooled - 1) * squared_gaps / (pooled * np.where(spread <= 0, np.nan, spread))
    alpha: np.ndarray = 1.0 - ratio
    return alpha


def _interval_parts(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Each unit's statistics for ``_interval_alpha_of_sums``, centred on the pooled
    mean so the sum of squares loses no digits."""
    centre = float(np.mean(np.concatenate([judge, human])))
    j, h = judge - centre, human - centre
    return np.column_stack([np.ones_like(j), (j - h) ** 2, j + h, j**2 + h**2])


# --- the public statistics --------------------------------------------------------


def _defined(value: float, reason: str) -> float:
    if math.isnan(value):
        raise Undefined(reason)
    return value


ONE_CATEGORY: Final = (
    "every label, the judge's and people's, is the same value: agreement by chance is "
    "complete, so there is no disagreement for {name} to measure (sklearn and "
    "krippendorff answer NaN)"
)


def cohen_kappa(
    a: Sequence[float | None],
    b: Sequence[float | None],
    *,
    labels: Sequence[float] | None = None,
    weights: Weights = None,
) -> float:
    """Cohen's kappa of two raters over the rows both rated, as
    ``sklearn.metrics.cohen_kappa_score(a, b, labels=labels, weights=weights)``.

    The confusion matrix ``O`` is over ``labels`` (increasing; default: the values seen),
    ``E = outer(row sums, column sums) / n`` what chance would give, ``W`` the
    disagreement weights on the labels' positions (1 off the diagonal; ``|i - j|``;
    ``(i - j) ** 2``); kappa is ``1 - sum(W * O) / sum(W * E)``. A value outside
    ``labels`` is an error (sklearn drops the row). Raises ``Undefined`` where sklearn
    answers NaN: every label one value, so ``sum(W * E)`` is 0; and with no row rated
    by both.
    """
    judge, human = _paired(a, b)
    if len(judge) == 0:
        raise Undefined("no row has both labels")
    counts = _counts(judge, human, _observed_domain(judge, human, labels))
    kappa = float(kappa_of_counts(counts, weights))
    return _defined(kappa, ONE_CATEGORY.format(name="kappa"))


def krippendorff_alpha(
    judge: Sequence[float | None],
    human: Sequence[float | None],
    *,
    level: Level = "nominal",
    values: Sequence[float] | None = None,
) -> float:
    """Krippendorff's alpha of two coders, as ``krippendorff.alpha(reliability_data=
    [judge, human], level_of_measurement=level, value_domain=values)`` (missing: None).

    Only units both coded are pairable. Their coincidences are the confusion counts
    added to their transpose, ``n`` the pooled counts of each value, chance
    coincidences ``(outer(n, n) - diag(n)) / (2N - 1)``; alpha is ``1 - D_o / D_e``
    with the distances of ``level`` (ordinal: ranks through the pooled counts, see
    ``_alpha_distances``; interval: squared differences of the values themselves).
    Raises ``Undefined`` with no unit coded twice (krippendorff raises too) and with
    every pairable value the same (krippendorff answers NaN); a value outside
    ``values`` is an error, as in krippendorff.
    """
    ours, theirs = _paired(judge, human)
    if len(ours) == 0:
        raise Undefined("no unit has both the judge's and a person's value: none is pairable")
    domain = _observed_domain(ours, theirs, values)
    reason = ONE_CATEGORY.format(name="alpha")
    if level == "interval":
        if values is not None:  # checked as for the other levels
            _indices(ours, domain, "judge")
            _indices(theirs, domain, "human")
        sums = _interval_parts(ours, theirs).sum(axis=0)
        return _defined(float(_interval_alpha_of_sums(sums)), reason)
    counts = _counts(ours, theirs, domain)
    return _defined(float(alpha_of_counts(counts, domain, level)), reason)


def accuracy(judge: Sequence[float | None], human: Sequence[float | None]) -> float:
    """The share of rows both labelled on which the judge's value equals people's."""
    ours, theirs = _paired(judge, human)
    if len(ours) == 0:
        raise Undefined("no row has both labels")
    return float(np.count_nonzero(ours == theirs)) / len(ours)


@dataclass(frozen=True)
class Confusion:
    """Counts of the rows both labelled by (judge's value, people's value): ``counts[i][j]``
    rows the judge gave ``values[i]`` and people ``values[j]``."""

    values: tuple[float, ...]
    counts: tuple[tuple[int, ...], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"values": list(self.values), "counts": [list(row) for row in self.counts]}


def confusion(
    judge: Sequence[float | None], human: Sequence[float | None], values: Sequence[float]
) -> Confusion:
    """The confusion table over ``values`` (increasing), rows with either value missing
    left out; a value outside ``values`` is an error."""
    domain = _domain(values)
    counts = _counts(*_paired(judge, human), domain)
    return Confusion(
        tuple(float(v) for v in domain),
        tuple(tuple(int(c) for c in row) for row in counts),
    )


# --- prediction-powered mean ------------------------------------------------------


@dataclass(frozen=True)
class CorrectedMean:
    """The mean people would give every row, estimated from the judge's values on all
    rows and people's on the labelled ones (PPI++): ``estimate`` in [``low``,
    ``high``] at ``confidence``; ``lam`` the weight the judge's values got (0: people's
    mean alone; 1: classic PPI); ``labelled`` and ``unlabelled`` the rows of each kind."""

    estimate: float
    low: float
    high: float
    confidence: float
    lam: float
    labelled: int
    unlabelled: int
    method: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "lam": self.lam,
            "labelled": self.labelled,
            "unlabelled": self.unlabelled,
            "method": self.method,
        }


def _ppi_arrays(
    human: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, labelled = np.asarray(human, dtype=float), np.asarray(judge_labelled, dtype=float)
    unlabelled = np.asarray(judge_unlabelled, dtype=float)
    if y.shape != labelled.shape or y.ndim != 1:
        raise ValueError(
            f"ppi_mean: human and judge_labelled must be two lists of the same rows; got "
            f"{y.shape} and {labelled.shape}"
        )
    if unlabelled.ndim != 1:
        raise ValueError("ppi_mean: judge_unlabelled must be a list of numbers")
    for name, size in (("labelled", len(y)), ("unlabelled", len(unlabelled))):
        if size < 2:
            raise ValueError(
                f"ppi_mean: {size} {name} row(s); at least 2 are needed, since the "
                "standard deviation of one value is 0, not unknown"
            )
    if not all(np.all(np.isfinite(part)) for part in (y, labelled, unlabelled)):
        raise ValueError("ppi_mean: expected finite numbers")
    return y, labelled, unlabelled


def power_tuning(y: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray) -> float:
    """PPI++'s lambda for a mean (``ppi_py._calc_lam_glm``): ``cov(Y, Yhat) / ((1 + n /
    N) * var(Yhat pooled))`` with the covariance over the n labelled rows (divided by
    n) and the variance of the judge's values on all rows (divided by n + N - 1),
    clipped to [0, 1]. A judge that gave one value everywhere carries no information:
    lambda 0 (ppi_py divides 0 by 0 there; any lambda gives the same estimate and
    interval)."""
    n, big_n = len(y), len(unlabelled)
    covariance = float(np.mean((y - y.mean()) * (labelled - labelled.mean())))
    variance = float(np.var(np.concatenate([labelled, unlabelled]), ddof=1))
    if variance == 0:
        return 0.0
    return min(1.0, max(0.0, covariance / ((1 + n / big_n) * variance)))


def ppi_mean(
    human: Sequence[float],
    judge_labelled: Sequence[float],
    judge_unlabelled: Sequence[float],
    *,
    confidence: float,
    tuned: bool = True,
) -> CorrectedMean:
    """The prediction-powered mean, as ``ppi_py.ppi_mean_pointestimate`` and
    ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=1 - confidence)``.

    ``estimate = lam * mean(judge_unlabelled) + mean(human - lam * judge_labelled)``: the
    judge's mean on the rows people did not label, corrected by its average error on the
    rows they did. Standard error ``sqrt(sd(lam * Yhat_u) ** 2 / N + sd(Y - lam * Yhat)
    ** 2 / n)`` (standard deviations divided by the count, as ppi_py), interval
    ``estimate -/+ z * se``. ``tuned``: lambda from ``power_tuning``; else 1 (classic
    PPI). Fewer than 2 rows on either side is an error.
    """
    y, labelled, unlabelled = _ppi_arrays(human, judge_labelled, judge_unlabelled)
    lam = power_tuning(y, labelled, unlabelled) if tuned else 1.0
    estimate = float(np.mean(lam * unlabelled) + np.mean(y - lam * labelled))
    imputed = float(np.std(lam * unlabelled)) ** 2 / len(unlabelled)
    rectifier = float(np.std(y - lam * labelled)) ** 2 / len(y)
    half = two_sided(confidence) * math.sqrt(imputed + rectifier)
    method = "PPI++ (power-tuned) normal interval" if tuned else "PPI normal interval (lambda 1)"
    return CorrectedMean(
        estimate, estimate - half, estimate + half, confidence, lam, len(y), len(unlabelled), method
    )


# --- intervals by the bootstrap ---------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A statistic of the labelled rows and its bootstrap interval: ``estimate`` in
    [``low``, ``high``] at ``confidence``, over ``n`` rows; ``method`` says how it was
    read (BCa, or percentile where BCa is undefined) and how many resamples had no
    value (one category drawn) and were left out."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "method": self.method,
            "n": self.n,
        }


@dataclass(frozen=True)
class NotDefined:
    """A statistic that has no value for these rows, and why."""

    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason}


Statistic = Callable[[np.ndarray], np.ndarray]  # summed per-row parts -> statistic


def bootstrap_interval(
    parts: np.ndarray, statistic: Statistic, settings: StatsSettings, undefined: str
) -> Interval:
    """The statistic of the rows' summed ``parts`` (``(rows, P)``) and its interval from
    ``settings.resamples`` seeded resamples of the rows (``resample.weights``: the draws
    of ``default_rng(seed).integers(0, rows, (B, rows))``, those of
    ``scipy.stats.bootstrap``), read as BCa with the jackknife's acceleration (percentile
    where BCa is undefined). Raises ``Undefined`` (saying ``undefined``) when the
    statistic has no value on the rows themselves."""
    rows = len(parts)
    estimate = float(statistic(parts.sum(axis=0)))
    if math.isnan(estimate):
        raise Undefined(undefined)
    resampled = np.concatenate(
        [
            statistic(block @ parts)
            for block in weights(Units.rows(rows), settings.resamples, settings.seed)
        ]
    )
    kept = resampled[~np.isnan(resampled)]
    jackknife = statistic(parts.sum(axis=0) - parts) if rows > 1 else None
    if jackknife is not None and np.any(np.isnan(jackknife)):
        jackknife = None
    if len(kept) == 0:
        raise Undefined(f"no value on any of {len(resampled)} resamples")
    replicates = bca(estimate, kept, jackknife)
    low, high = replicates.interval(settings.confidence)
    method = f"{replicates.read_as} bootstrap, {len(kept)} resamples"
    if len(kept) < len(resampled):
        method += f" ({len(resampled) - len(kept)} of {len(resampled)} with one category left out)"
    return Interval(estimate, low, high, settings.confidence, method, rows)


# --- one metric's agreement ---------------------------------------------------------


Measured = Interval | NotDefined


@dataclass(frozen=True)
class Agreement:
    """How far one judge metric agrees with people.

    ``labelled``: rows with both values (the rows every statistic here is over);
    ``accuracy``, ``kappa`` (unweighted), ``weighted_kappa`` (quadratic, for ordinal and
    interval scales with categories; ``None`` for a binary scale), ``alpha``
    (Krippendorff's, at the scale's level) each with its bootstrap interval or why it
    has none; ``confusion`` over ``values`` (``None`` for continuous values);
    ``corrected_mean``: people's mean over every row the judge scored, by PPI++."""

    scale: Scale
    labelled: int
    accuracy: Measured
    kappa: Measured
    weighted_kappa: Measured | None
    alpha: Measured
    confusion: Confusion | None
    corrected_mean: CorrectedMean | NotDefined

    def as_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "labelled": self.labelled,
            "accuracy": self.accuracy.as_dict(),
            "kappa": self.kappa.as_dict(),
            "weighted_kappa": None
            if self.weighted_kappa is None
            else self.weighted_kappa.as_dict(),
            "alpha": self.alpha.as_dict(),
            "confusion": None if self.confusion is None else self.confusion.as_dict(),
            "corrected_mean": self.corrected_mean.as_dict(),
        }


def _measured(
    parts: np.ndarray, statistic: Statistic, settings: StatsSettings, undefined: str
) -> Measured:
    if len(parts) == 0:
        return NotDefined("no row has both the judge's value and a person's")
    try:
        return bootstrap_interval(parts, statistic, settings, undefined)
    except Undefined as error:
        return NotDefined(str(error))


def _one_hot(judge: np.ndarray, human: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Each row's confusion cell as a row of zeros with a 1: summed, the confusion
    counts (flattened)."""
    size = len(domain)
    cells = _indices(judge, domain, "judge") * size + _indices(human, domain, "human")
    table = np.zeros((len(cells), size * size))
    table[np.arange(len(cells)), cells] = 1.0
    return table


def _corrected_mean(
    judge: Sequence[float | None], human: Sequence[float | None], confidence: float
) -> CorrectedMean | NotDefined:
    labelled = [
        (h, j) for j, h in zip(judge, human, strict=True) if j is not None and h is not None
    ]
    unlabelled = [j for j, h in zip(judge, human, strict=True) if j is not None and h is None]
    if len(labelled) < 2 or len(unlabelled) < 2:
        return NotDefined(
            f"{len(labelled)} labelled and {len(unlabelled)} unlabelled row(s) the judge "
            "scored: the corrected mean needs 2 of each"
        )
    people, judged = zip(*labelled, strict=True)
    return ppi_mean(people, judged, unlabelled, confidence=confidence)


def agreement(
    judge_values: Sequence[float | None],
    human_values: Sequence[float | None],
    *,
    scale: Scale,
    values: Sequence[float] | None,
    settings: StatsSettings | None = None,
) -> Agreement:
    """The agreement of one judge metric with people, over the rows of an eval (None
    where a row has no judge value or no human label). ``scale``: ``binary`` (nominal
    categories), ``ordinal`` (ordered categories, e.g. 1..5) or ``interval`` (numbers
    whose differences mean something, e.g. scores in [0, 1]); ``values``: the possible
    values, increasing (required for binary and ordinal; for interval, without them
    only alpha is computed, since continuous scores have no categories to count).
    ``settings``: the run's confidence, resamples and seed. The bootstrap always
    resamples here (never the normal shortcut above ``resample_limit``): its cost is
    resamples x labelled rows x categories squared, small for the rows people label."""
    settings = settings or StatsSettings()
    if scale not in LEVEL_OF_SCALE:
        raise ValueError(f"scale: expected binary, ordinal or interval; got {scale!r}")
    if values is None and scale != "interval":
        raise ValueError(f"values: required for a {scale} scale, e.g. (0, 0.5, 1)")
    judge, human = _paired(judge_values, human_values)
    level = LEVEL_OF_SCALE[scale]
    if values is None:
        parts = _interval_parts(judge, human) if len(judge) else np.zeros((0, 4))
        continuous = NotDefined("continuous values: no categories to count (give values)")
        alpha = _measured(
            parts, _interval_alpha_of_sums, settings, ONE_CATEGORY.format(name="alpha")
        )
        return Agreement(
            scale,
            len(judge),
            continuous,
            continuous,
            continuous,
            alpha,
            None,
            _corrected_mean(judge_values, human_values, settings.confidence),
        )
    domain = _domain(values)
    cells = _one_hot(judge, human, domain)
    size = len(domain)

    def table(flat: np.ndarray) -> np.ndarray:
        return flat.reshape(*flat.shape[:-1], size, size)

    diagonal = np.arange(size) * (size + 1)
    weighted: Measured | None = None
    if scale != "binary":
        weighted = _measured(
            cells,
            lambda flat: kappa_of_counts(table(flat), "quadratic"),
            settings,
            ONE_CATEGORY.format(name="weighted kappa"),
        )

    def categorical_alpha(flat: np.ndarray) -> np.ndarray:
        return alpha_of_counts(table(flat), domain, level)

    alpha_of: Statistic = categorical_alpha
    alpha_parts = cells
    if level == "interval":
        alpha_parts, alpha_of = _interval_parts(judge, human), _interval_alpha_of_sums
    return Agreement(
        scale=scale,
        labelled=len(judge),
        accuracy=_measured(
            cells,
            lambda flat: flat[..., diagonal].sum(axis=-1) / flat.sum(axis=-1),
            settings,
            "no labelled rows",
        ),
        kappa=_measured(
            cells,
            lambda flat: kappa_of_counts(table(flat)),
            settings,
            ONE_CATEGORY.format(name="kappa"),
        ),
        weighted_kappa=weighted,
        alpha=_measured(alpha_parts, alpha_of, settings, ONE_CATEGORY.format(name="alpha")),
        confusion=confusion(judge.tolist(), human.tolist(), values),
        corrected_mean=_corrected_mean(judge_values, human_values, settings.confidence),
    )
