"""trec_eval's options, as ``evaluate``'s keyword arguments and ``[settings.retrieval]``.

``relevance_level`` (trec_eval -l), ``cutoff`` (-M), ``gains`` (ndcg's gains parameter)
and ``ties`` (how run scores compare: as 32-bit floats like trec_eval 9.x and
pytrec_eval, or as doubles like trec_eval 10; only the comparison of scores changes,
every measure keeps trec_eval 9's rules). They live apart from the measures
(``metrics.retrieval``) because the run's settings carry them to every retrieval
fixture, and the settings are declared below the families.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pytest_ragmetrics.metrics.setting import SettingError, SettingsTable, finite

Ties = Literal["float32", "double"]
TIES: tuple[Ties, ...] = ("float32", "double")


class OptionError(SettingError):
    """A bad trec_eval option: ``key`` names it, ``problem`` says what is wrong and how to
    fix it. Its message is in ``evaluate``'s words; thresholds.toml's
    ``[settings.retrieval]`` reports the same problem under its own key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__("evaluate", key, problem)

    def __str__(self) -> str:
        return f"evaluate({self.key}=...): {self.problem}"


@dataclass(frozen=True)
class TrecOptions:
    """trec_eval's options, checked (see ``evaluate``): ``relevance_level`` (-l),
    ``cutoff`` (-M), ``gains`` (the ndcg gains parameter: grades 0 and above to finite
    gains, negative ones allowed) and ``ties`` (scores compared as float32, as trec_eval
    9.x, or as doubles, as trec_eval 10; the measures keep trec_eval 9's rules either way,
    iprec_at_recall's rounding included). The per-row fixtures read them from
    ``[settings.retrieval]``."""

    relevance_level: float = 1
    cutoff: int | None = None
    gains: Mapping[float, float] | None = None
    ties: Ties = "float32"

    def __post_init__(self) -> None:
        level = self.relevance_level
        if not finite(level) or not level > 0:
            raise OptionError(
                "relevance_level",
                f"{level!r} is not a number above 0; use the lowest grade that counts as "
                "relevant, e.g. 1",
            )
        cut = self.cutoff
        if cut is not None and (isinstance(cut, bool) or not isinstance(cut, int) or cut < 1):
            raise OptionError(
                "cutoff",
                f"{cut!r} is not a whole number >= 1; use e.g. 100, or no cutoff for the "
                "whole ranking",
            )
        if self.ties not in TIES:
            raise OptionError(
                "ties",
                f"{self.ties!r} is unknown; use 'float32' (trec_eval 9, pytrec_eval) or "
                "'double' (trec_eval 10)",
            )
        for grade, gain in (self.gains or {}).items():
            if not finite(grade):
                raise OptionError(
                    "gains", f"the grade {grade!r} is not a finite number; map grades to gains"
                )
            if grade < 0:
                raise OptionError(
                    "gains",
                    f"the grade {grade:g} is negative: a negative grade is unjudged (as in "
                    "trec_eval) and gains nothing; map grades 0 and above to gains",
                )
            if not finite(gain):
                raise OptionError(
                    "gains",
                    f"the gain of grade {grade:g} is {gain!r}, not a finite number; "
                    "map grades to gains, e.g. 1 to 1 and 2 to 3",
                )

    @property
    def grade_zero_gains(self) -> bool:
        """Whether ``gains`` gives the documents graded 0 a gain (trec_eval's gain for
        level 0): ``ndcg`` then ranks them, and counts them in its ideal ranking when the
        gain is positive."""
        gains = self.gains
        return gains is not None and gains.get(0, 0) != 0

    def changed(self) -> dict[str, Any]:
        """The options that differ from trec_eval's defaults, JSON-able (gains as
        ``[[grade, gain], ...]`` sorted by grade): what a baseline's signature holds."""
        changed: dict[str, Any] = {}
        if self.relevance_level != 1:
            changed["relevance_level"] = self.relevance_level
        if self.cutoff is not None:
            changed["cutoff"] = self.cutoff
        if self.gains:
            changed["gains"] = sorted([float(g), float(v)] for g, v in self.gains.items())
        if self.ties != "float32":
            changed["ties"] = self.ties
        return changed


def _from_table(table: dict[str, Any]) -> TrecOptions:
    """``[settings.retrieval]``'s keys as options: TOML's keys are strings, so each grade
    of ``gains = { "1" = 1, "2" = 3 }`` is read as a number here (``TrecOptions`` checks
    the numbers)."""
    gains = table.get("gains")
    if gains is not None:
        if not isinstance(gains, dict):
            raise OptionError(
                "gains", 'expected a table of grade = gain, e.g. { "1" = 1, "2" = 3 }'
            )
        numbered: dict[float, Any] = {}
        for grade, gain in gains.items():
            try:
                numbered[float(grade)] = gain
            except ValueError:
                raise OptionError("gains", f"the grade {grade!r} is not a number") from None
        table = {**table, "gains": numbered}
    return TrecOptions(**table)


# The options every retrieval fixture reads from thresholds.toml; all enter the signature.
RETRIEVAL_SETTINGS = SettingsTable("retrieval", TrecOptions, build=_from_table)
