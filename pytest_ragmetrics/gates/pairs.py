"""The pairs a comparison gate is made on: the rows both sides recorded its metric on.

A comparison is paired: the same questions on both sides. Its object is the per-row
change over the rows *both* sides recorded the metric on (for a corpus statistic, its
sufficient statistics), never two aggregates over different rows: a test that records
``overlap`` on some rows only (``assert a == 1 or overlap(row) >= 0.5``) is compared on
the rows where both runs recorded it, and the gate says how many those are.

Pairs are kept in row-id order, so resampling them gives the same numbers however the
rows arrived (with or without pytest-xdist, in bulk mode, on Ray).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.metrics.base import MetricSettings
from pytest_ragmetrics.metrics.catalog import in_force
from pytest_ragmetrics.metrics.registry import interval_kind
from pytest_ragmetrics.results.baseline_rows import BaselineRows, StoredRow
from pytest_ragmetrics.results.rowstore import RowsById
from pytest_ragmetrics.results.stats import aggregate
from pytest_ragmetrics.results.summary import RowResult

if TYPE_CHECKING:
    import numpy as np

    from pytest_ragmetrics.inference.resample import Units

Recorded = RowResult | StoredRow  # a row as this run recorded it, or as a baseline stored it


@dataclass(frozen=True)
class Pairs:
    """The rows both sides recorded a gate's metric on, in id order.

    ``current`` and ``reference`` hold each pair's value (or, for a corpus statistic,
    its sufficient statistics in ``current_parts`` and ``reference_parts``);
    ``sessions`` each pair's session; ``candidates`` the rows both sides have, of which
    ``only_current`` and ``only_reference`` recorded the metric on one side only.
    """

    metric: str
    ids: tuple[str, ...]
    current: tuple[float, ...]
    reference: tuple[float, ...]
    sessions: tuple[str | None, ...]
    candidates: int
    only_current: int
    only_reference: int
    current_parts: tuple[Mapping[str, float], ...] = ()
    reference_parts: tuple[Mapping[str, float], ...] = ()

    @property
    def n(self) -> int:
        return len(self.ids)

    @functools.cached_property
    def units(self) -> Units:
        """How the pairs are resampled: whole sessions, or each pair alone."""
        from pytest_ragmetrics.inference.resample import Units

        return Units.of(self.sessions)

    @functools.cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``current`` and ``reference`` as float arrays, made once for every reader."""
        import numpy as np

        return np.array(self.current, dtype=float), np.array(self.reference, dtype=float)

    @property
    def partial(self) -> bool:
        """Some row both sides have recorded the metric on one side only."""
        return bool(self.only_current or self.only_reference)

    def describe(self) -> str:
        """``26 pairs: the rows both sides recorded f1 on (2 recorded it only in the
        baseline)``, or ``48 pairs`` when every candidate row paired."""
        text = f"{self.n} pair{'s' if self.n != 1 else ''}"
        if not self.partial:
            return text
        parts = [
            f"{count} only {where}"
            for count, where in (
                (self.only_current, "in this run"),
                (self.only_reference, "in the reference"),
            )
            if count
        ]
        return (
            f"{text}: the rows both sides recorded {self.metric} on, of {self.candidates} "
            f"they share ({', '.join(parts)})"
        )


R = TypeVar("R")


def _in_order(rows: Mapping[str, R], ids: list[str]) -> Sequence[R]:
    """The rows of ``ids``, in that order; a gathered eval's stay in its store, each made
    when a metric's pairs are drawn (``RowsById.select``), not a million held at once."""
    if isinstance(rows, RowsById):
        return rows.select(ids)  # type: ignore[return-value]  # R is RowResult here
    return [rows[i] for i in ids]


@dataclass
class Matched:
    """The rows both sides have, in id order, and what each side recorded for them; the
    pairs of each metric are drawn from it once, however many gates read them."""

    ids: list[str]
    ours: Sequence[RowResult]
    theirs: Sequence[Recorded]
    sessions: list[str | None]
    found: dict[tuple[str, str | None], Pairs] = field(default_factory=dict)

    @classmethod
    def of(
        cls, ids: Iterable[str], ours: Mapping[str, RowResult], theirs: Mapping[str, Recorded]
    ) -> Matched:
        """``ids`` (of rows both sides have) in id order, with each side's records."""
        ordered = sorted(ids)
        # A gathered eval's rows stay in its store, made when a metric's pairs are drawn.
        mine = ours.select(ordered) if isinstance(ours, RowsById) else [ours[i] for i in ordered]
        # A stored baseline's rows are packed (``BaselineRows``): made when read too.
        other = (
            theirs.select(ordered)
            if isinstance(theirs, RowsById | BaselineRows)
            else [theirs[i] for i in ordered]
        )
        return cls(ordered, mine, other, [row.session for row in mine])

    def pairs(self, gate: Gate) -> Pairs:
        """The pairs of ``gate``'s metric: the rows both sides recorded it on (for a
        corpus statistic, its sufficient statistics)."""
        kind, _ = interval_kind(gate.metric, gate.stat)
        breakdown = in_force().corpus_stats[gate.metric][0] if kind == "corpus" else None
        key = (gate.metric, breakdown)
        if key not in self.found:
            self.found[key] = self._pairs(gate.metric, breakdown)
        return self.found[key]

    def _pairs(self, metric: str, breakdown: str | None) -> Pairs:
        mine: list[Any]
        other: list[Any]
        if breakdown is not None:
            mine = [row.breakdowns.get(breakdown) for row in self.ours]
            other = [row.breakdowns.get(breakdown) for row in self.theirs]
        else:
            mine = [row.values.get(metric) for row in self.ours]
            other = [row.values.get(metric) for row in self.theirs]
        if None not in mine and None not in other:  # the common case: every row recorded it
            both, only_ours, only_theirs = list(range(len(mine))), 0, 0
        else:
            recorded = [(a is not None, b is not None) for a, b in zip(mine, other, strict=True)]
            both = [i for i, (a, b) in enumerate(recorded) if a and b]
            only_ours = sum(1 for a, b in recorded if a and not b)
            only_theirs = sum(1 for a, b in recorded if b and not a)
        ours_parts: tuple[Any, ...] = ()
        theirs_parts: tuple[Any, ...] = ()
        if breakdown is None and len(both) == len(mine):
            ours, theirs = tuple(mine), tuple(other)
        elif breakdown is None:
            ours, theirs = tuple(mine[i] for i in both), tuple(other[i] for i in both)
        else:  # the per-row values too, where recorded, for the rows that regressed
            ours = tuple(self.ours[i].values.get(metric, math.nan) for i in both)
            theirs = tuple(self.theirs[i].values.get(metric, math.nan) for i in both)
            ours_parts, theirs_parts = tuple(mine[i] for i in both), tuple(other[i] for i in both)
        return Pairs(
            metric,
            tuple(self.ids[i] for i in both),
            ours,
            theirs,
            tuple(self.sessions[i] for i in both),
            len(self.ids),
            only_ours,
            only_theirs,
            ours_parts,
            theirs_parts,
        )


def corpus_parts(parts: Sequence[Mapping[str, float]]) -> tuple[list[str], np.ndarray]:
    """Rows' sufficient statistics as a ``(rows, parts)`` array, with the parts' names."""
    import numpy as np

    names = sorted({name for row in parts for name in row})
    table = np.array([[row.get(name, 0.0) for name in names] for row in parts], dtype=float)
    return names, table.reshape(len(parts), len(names))


def reducer(
    metric: str, stat: str, names: Sequence[str], settings: MetricSettings
) -> Callable[[np.ndarray], float]:
    """``metric.stat``, a corpus statistic, of summed parts (an array in ``names``
    order), reduced as the run's aggregates are."""
    reduce = in_force().corpus_stats[metric][1]

    def statistic(sums: np.ndarray) -> float:
        return float(reduce(dict(zip(names, sums.tolist(), strict=True)), settings)[stat])

    return statistic


def statistic_of(
    gate: Gate, values: Sequence[float], binary: bool, array: np.ndarray | None = None
) -> float | None:
    """``gate.stat`` of ``values`` as the run's aggregates compute it, the statistic
    asked for only: a mean needs no sorting, and a percentile of many values is
    numpy's own (which ``results.stats`` reproduces to the last bit) on ``array``."""
    if not values:
        return None
    if gate.stat in ("mean", "rate", "sum"):
        total = math.fsum(values)
        return total if gate.stat == "sum" else total / len(values)
    if array is not None and gate.stat in ("p50", "p95"):
        import numpy as np

        return float(np.percentile(array, 50 if gate.stat == "p50" else 95))
    return aggregate(list(values), binary=binary).get(gate.stat)


def paired_statistics(
    gate: Gate, pairs: Pairs, settings: MetricSettings
) -> tuple[float | None, float | None]:
    """The gate's statistic on each side over the pairs: exactly as the run's aggregates
    are computed (``results.stats.aggregate``, or the corpus reduction of summed parts)."""
    kind, _ = interval_kind(gate.metric, gate.stat)
    if kind == "corpus":
        reduce = in_force().corpus_stats[gate.metric][1]
        ours = reduce(_summed(pairs.current_parts), settings).get(gate.stat)
        theirs = reduce(_summed(pairs.reference_parts), settings).get(gate.stat)
        return ours, theirs
    binary = kind == "binary"
    if gate.stat in ("p50", "p95"):
        mine, other = pairs.arrays
        return (
            statistic_of(gate, pairs.current, binary, mine),
            statistic_of(gate, pairs.reference, binary, other),
        )
    return statistic_of(gate, pairs.current, binary), statistic_of(gate, pairs.reference, binary)


def _summed(parts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The parts summed over rows, exactly rounded (as ``results.summary`` sums them)."""
    names = sorted({name for row in parts for name in row})
    return {name: math.fsum(row.get(name, 0.0) for row in parts) for name in names}
