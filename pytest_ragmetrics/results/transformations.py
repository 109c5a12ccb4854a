"""Row ids that changed state between a reference and a compared side (a reference
system of the same run, or the stored baseline): see ``pytest_ragmetrics.results.compare``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The lists as the reports title them, with the attribute (and report document key) of each.
KINDS = (("IDK → supported", "idk_to_supported"), ("supported → unsupported", "regressions"))


@dataclass(frozen=True)
class Transformations:
    """Row ids that changed state from the reference system to a compared one."""

    idk_to_supported: tuple[str, ...]
    regressions: tuple[str, ...]
    compared: int  # ids present in both systems with every value the states need

    def kinds(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The lists as the reports title them."""
        return tuple((title, getattr(self, key)) for title, key in KINDS)

    def as_dict(self) -> dict[str, Any]:
        return {
            "idk_to_supported": list(self.idk_to_supported),
            "regressions": list(self.regressions),
            "compared": self.compared,
        }
