"""``[settings.stats]``: how comparisons are resampled and read, one frozen record.

Building a ``StatsSettings`` checks every value, so a wrong table fails when the run is
configured (thresholds.toml names the key), never when the gates are evaluated. None of
these settings changes a metric's value, so none enters a baseline's signature.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

Correction = Literal["none", "holm", "bh"]
CORRECTIONS: Final = ("none", "holm", "bh")
DEFAULT_CONFIDENCE: Final = 0.95
DEFAULT_RESAMPLES: Final = 2000
DEFAULT_PERMUTATIONS: Final = 10000
DEFAULT_SEED: Final = 12345  # sacrebleu's default seed, so its paired tests can be compared
DEFAULT_POWER: Final = 0.8
DEFAULT_RESAMPLE_LIMIT: Final = 5000
LEAST_RESAMPLES: Final = 100  # below this, a 95% interval's ends rest on two or three draws


class StatsSettingError(ValueError):
    """A ``[settings.stats]`` value is wrong: ``key`` names it, ``problem`` says what to
    write instead."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(key, problem)
        self.key, self.problem = key, problem

    def __str__(self) -> str:
        return f"{self.key}: {self.problem}"


def _count(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _share(value: object) -> bool:
    """A number strictly between 0.5 and 1 (a confidence or a power)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and 0.5 < value < 1


@dataclass(frozen=True)
class StatsSettings:
    """How every comparison of a run is computed and read.

    ``confidence``: the level of the intervals that reports show and plain gates are
    advised with (a rule written ``@ 99%`` uses its own); ``resamples``: bootstrap
    resamples; ``permutations``: sign flips of the permutation test and shuffles of the
    approximate randomization test; ``seed``: the seed of both, so a run is reproducible;
    ``correction``: how the p-values of the run's statistical gates are adjusted for their
    number (``holm``, ``bh`` or ``none``); ``power``: the chance of detecting a change
    of the minimum detectable effect; ``resample_limit``: comparisons of more pairs (or
    sessions) use normal intervals, exact to well within the resampling's own
    Monte-Carlo error at that size (docs/statistics.md#large-sets).
    """

    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    correction: Correction = "none"
    power: float = DEFAULT_POWER
    resample_limit: int = DEFAULT_RESAMPLE_LIMIT

    def __post_init__(self) -> None:
        if not _share(self.confidence):
            raise StatsSettingError(
                "confidence",
                f"expected a number between 0.5 and 1, e.g. 0.95 for 95%; got {self.confidence!r}",
            )
        if not _share(self.power):
            raise StatsSettingError(
                "power", f"expected a number between 0.5 and 1, e.g. 0.8; got {self.power!r}"
            )
        for key in ("resamples", "permutations"):
            if not _count(getattr(self, key), LEAST_RESAMPLES):
                raise StatsSettingError(
                    key,
                    f"expected a whole number of at least {LEAST_RESAMPLES}; got "
                    f"{getattr(self, key)!r} (defaults: resamples {DEFAULT_RESAMPLES}, "
                    f"permutations {DEFAULT_PERMUTATIONS})",
                )
        if not _count(self.seed, 0):
            raise StatsSettingError("seed", f"expected a whole number >= 0; got {self.seed!r}")
        if self.correction not in CORRECTIONS:
            raise StatsSettingError(
                "correction", f"expected one of {', '.join(CORRECTIONS)}; got {self.correction!r}"
            )
        if not _count(self.resample_limit, 2):
            raise StatsSettingError(
                "resample_limit",
                f"expected a whole number of pairs >= 2; got {self.resample_limit!r} "
                f"(default {DEFAULT_RESAMPLE_LIMIT})",
            )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))

    def as_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self.names()}
