"""A run against its stored baseline: what was loaded, and the rows paired by id.

A stored baseline is the reference a changed log is compared with, so rows are paired by
id, the way the systems of one dataset are (``pytest_ragmetrics.results.compare``):

* a row of this run and a stored row with the same id and the same inputs (the question
  and its labels: ``baseline.INPUT_FIELDS``) are *shared*;
* an id only this run has is *added*, one only the baseline has is *removed*, and one
  whose inputs changed is *changed*: its question is not the one the baseline answered,
  so it is compared with nothing;
* ``coverage`` is shared rows ÷ stored rows, gated as ``baseline.coverage``.

When every row is shared, gates compare this run's aggregates with the stored ones as
they are. Otherwise a gate on a per-row metric compares both sides' aggregates over the
shared rows only, recomputed from each side's row values (and summed sufficient statistics
for corpus statistics), so an added or removed row never moves a mean by itself; a gate on
a statistic that is not built from rows (a dataset-level metric, the Trust-Score suite,
the judge's accounting) compares the whole of each side, and says so.

The per-row view names the rows that regressed under a gate's own rule, and the
transformations (``idk_to_supported``, ``regressions``) from the stored rows' states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragmetrics.metrics.catalog import BASELINE
from pytest_ragmetrics.results.baseline import PRICE_KEY, Baseline
from pytest_ragmetrics.results.transformations import Transformations

BASELINE_METRIC = BASELINE  # baseline.coverage, .shared, .added, .removed, .changed
SHOWN_IDS = 10  # row ids a message lists before "and N more"


# The unpaired ids as the reports title them, with the attribute (and, suffixed ``_ids``,
# the report document's key) that holds them.
UNPAIRED = (
    ("removed (stored, not in this run)", "removed"),
    ("added (not in the baseline)", "added"),
    ("inputs changed (not compared)", "changed"),
)


def describe_pairing(shared: int, stored_rows: int, removed: int, added: int, changed: int) -> str:
    """``45 of 48 stored rows paired (coverage 0.938): 3 removed, 1 added``; the coverage
    and counts only when some row is unpaired."""
    text = f"{shared} of {stored_rows} stored rows paired"
    if not (removed or added or changed):
        return text
    coverage = shared / stored_rows if stored_rows else 1.0
    counts = [
        f"{n} {word}"
        for word, n in (("removed", removed), ("added", added), ("with changed inputs", changed))
        if n
    ]
    return f"{text} (coverage {coverage:.3f}): {', '.join(counts)}"


@dataclass(frozen=True)
class Pairing:
    """This run's rows paired with a stored baseline's by id; see the module docstring."""

    stored_rows: int
    shared: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    current: Mapping[str, Mapping[str, float]]  # this run's aggregates over the shared rows
    stored: Mapping[str, Mapping[str, float]]  # the baseline's aggregates over them
    transformations: Transformations | None = None
    transformations_note: str | None = None

    @property
    def exact(self) -> bool:
        """True when both sides hold the same rows with the same inputs."""
        return not (self.added or self.removed or self.changed)

    @property
    def coverage(self) -> float:
        """Shared rows ÷ stored rows (1 for a baseline of no rows, nothing to cover)."""
        return len(self.shared) / self.stored_rows if self.stored_rows else 1.0

    def statistics(self) -> dict[str, float]:
        """The gate-able ``baseline.*`` numbers."""
        return {
            "coverage": self.coverage,
            "shared": float(len(self.shared)),
            "added": float(len(self.added)),
            "removed": float(len(self.removed)),
            "changed": float(len(self.changed)),
        }

    def describe(self) -> str:
        """``45 of 48 stored rows paired (coverage 0.938): 3 removed, 1 added``."""
        return describe_pairing(
            len(self.shared),
            self.stored_rows,
            len(self.removed),
            len(self.added),
            len(self.changed),
        )

    def listed(self) -> list[tuple[str, tuple[str, ...]]]:
        """The unpaired ids as the reports title them."""
        return [(title, getattr(self, key)) for title, key in UNPAIRED]

    def as_dict(self) -> dict[str, Any]:
        """The ``baseline`` entry of an eval in the JSON report."""
        document: dict[str, Any] = {
            "coverage": self.coverage,
            "shared": len(self.shared),
            "added": len(self.added),
            "removed": len(self.removed),
            "changed": len(self.changed),
            "stored_rows": self.stored_rows,
            "added_ids": list(self.added),
            "removed_ids": list(self.removed),
            "changed_ids": list(self.changed),
            "transformations": (
                self.transformations.as_dict() if self.transformations is not None else None
            ),
        }
        if self.transformations_note:
            document["transformations_note"] = self.transformations_note
        return document


@dataclass(frozen=True)
class BaselineState:
    """The stored baseline of an eval as far as gates and reports are concerned: the file,
    why it cannot be used (``problem``), and the pairing of its rows with this run's
    (``None`` for a schema 1 file, which has no rows; ``note`` says so)."""

    path: str
    baseline: Baseline | None = None
    problem: str | None = None
    update_command: str = "pytest --ragmetrics-update-baseline"
    pairing: Pairing | None = None
    note: str | None = None
    # metric -> what differs of it alone (its version): its gates are not compared, the
    # file's other metrics are (``results.baseline.check_signature``)
    not_compared: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The ``baseline`` entry of an eval in the JSON report."""
        document: dict[str, Any] = {"path": self.path}
        if self.problem:
            document.update(status="not compared", problem=self.problem)
        elif self.baseline is None:
            document["status"] = "none stored"
        elif self.pairing is None:
            document.update(status="not paired", note=self.note)
        else:
            document.update(status="paired", **self.pairing.as_dict())
        if self.not_compared and not self.problem:
            document["not_compared"] = {
                name: list(lines) for name, lines in self.not_compared.items()
            }
        return document

    def metric_problem(self, metric: str) -> str | None:
        """Why the stored numbers of ``metric`` are not compared while the file's others
        are (another version of it), ``None`` when they are."""
        differences = self.not_compared.get(metric)
        if not differences:
            return None
        # cost_usd's numbers differ by the price of a model both sides priced
        changed = "prices" if all(PRICE_KEY in line for line in differences) else "version"
        return (
            f"the baseline {self.path} was made with "
            f"{'other prices' if changed == 'prices' else 'another version'} of {metric}, so "
            f"{metric} is not compared (its other metrics are); what differs:\n  "
            + "\n  ".join(differences)
            + f"\nrestore the earlier {changed} of {metric}; or, if the new {changed} "
            f"{'are' if changed == 'prices' else 'is'} meant to stay, "
            + accepting(self.update_command)
        )

    @property
    def missing(self) -> str:
        """Why a gate needing the file cannot be checked when none is stored."""
        return f"no baseline is stored at {self.path}\n{accepting(self.update_command)}"


def accepting(command: str) -> str:
    """The advice to store this run's values, saying what that means."""
    return (
        f"store this run's values as the baseline (this accepts them as the reference): {command}"
    )


def problem_listing(problem: str) -> tuple[str, list[str]]:
    """A baseline's ``problem`` as its first line and the lines it lists (indented by two
    spaces: the settings that differ), without the advice that follows them."""
    first, *rest = problem.splitlines()
    return first, [line.strip() for line in rest if line.startswith("  ")]


def problem_headline(problem: str) -> str:
    """A baseline's ``problem`` on one line: ``problem_listing``'s lines joined by ``; ``."""
    first, listed = problem_listing(problem)
    return f"{first} {'; '.join(listed)}" if listed else first


def not_compared_title(metrics: Sequence[str]) -> str:
    """What the reports say of metrics a baseline holds another version of."""
    return f"gates of {', '.join(metrics)} not compared, the baseline holds another version"


def listing(ids: Sequence[str], total: int | None = None) -> str:
    """``a, b, c`` with at most ``SHOWN_IDS`` ids, then ``and N more``; ``total``: how
    many there are, when ``ids`` holds only the first of them."""
    shown = ", ".join(ids[:SHOWN_IDS])
    more = (len(ids) if total is None else total) - SHOWN_IDS
    return f"{shown} and {more} more" if more > 0 else shown
