"""How chrF is computed: sacrebleu's ``CHRF`` options (but the word order) as one frozen,
validated record.

Apart from ``metrics.chrf`` (which computes chrF with them) so that the settings protocol of
``metrics.base`` can name the type without importing a metric family. Building a
``ChrfSettings`` checks every option, so a wrong ``[settings.chrf]`` fails when the run is
configured, not when a row is scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pytest_ragmetrics.metrics.setting import SettingError, changed_fields, whole_number

DEFAULT_CHAR_ORDER: Final = 6
DEFAULT_BETA: Final = 2


def _order_error(key: str, value: object, least: int) -> SettingError:
    return SettingError(
        "chrF",
        key,
        f"expected a whole number >= {least}, got {value!r}; "
        f"the defaults are char_order={DEFAULT_CHAR_ORDER}, beta={DEFAULT_BETA}",
    )


@dataclass(frozen=True)
class ChrfSettings:
    """The chrF settings a run shares (``[settings.chrf]`` in thresholds.toml); the word
    order is not one of them: the ``chrf`` fixture uses 0, ``chrf_pp`` 2.

    ``char_order``: the longest character n-gram (>= 1, default 6); ``beta``: recall's weight
    relative to precision (a whole number >= 1, default 2: chrF2); ``lowercase``: compare
    ``str.lower()`` texts; ``whitespace``: keep white space inside character n-grams;
    ``eps_smoothing``: chrF++.py's mean of per-order F-scores instead of sacrebleu's default
    effective-order average (see ``metrics.chrf``).
    """

    char_order: int = DEFAULT_CHAR_ORDER
    beta: int = DEFAULT_BETA
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def __post_init__(self) -> None:
        if not whole_number(self.char_order, 1):
            raise _order_error("char_order", self.char_order, 1)
        if not whole_number(self.beta, 1):
            raise _order_error("beta", self.beta, 1)
        for name in ("lowercase", "whitespace", "eps_smoothing"):
            if not isinstance(getattr(self, name), bool):
                raise SettingError(
                    "chrF", name, f"expected true or false, got {getattr(self, name)!r}"
                )

    def changed(self) -> dict[str, Any]:
        """The settings that differ from sacrebleu's defaults (empty when none does): what a
        baseline's signature records, so baselines stored before the table existed stay
        comparable."""
        return changed_fields(self, ChrfSettings())
