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

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.metrics.base import MetricSettings
from pytest_ragmetrics.metrics.catalog import CORPUS_STATS
from pytest_ragmetrics.metrics.registry import interval_kind
from pytest_ragmetrics.results.baseline import StoredRow
from pytest_ragmetrics.results.stats import aggregate
from pytest_ragmetrics.results.summary import RowResult

if TYPE_CHECKING:
    import numpy as np

Values = Mapping[str, float]
Parts = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Side:
    """What one side recorded for one row: its values and sufficient statistics."""

    values: Values
    breakdowns: Parts


def current_side(row: RowResult) -> Side:
    return Side(row.values, row.breakdowns)


def stored_side(row: StoredRow) -> Side:
    return Side(row.values, row.breakdowns)


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


def _parts_of(side: Side, breakdown: str | None) -> Mapping[str, float] | None:
    return side.breakdowns.get(breakdown) if breakdown is not None else None


def pair(
    gate: Gate,
    rows: Iterable[tuple[str, Side, Side, str | None]],
) -> Pairs:
    """The pairs of ``gate``'s metric among ``rows`` (id, this run's side, the
    reference's side, the session), kept where both sides recorded it."""
    kind, _ = interval_kind(gate.metric, gate.stat)
    breakdown = CORPUS_STATS[gate.metric][0] if kind == "corpus" else None
    ids: list[str] = []
    ours: list[float] = []
    theirs: list[float] = []
    sessions: list[str | None] = []
    ours_parts: list[Mapping[str, float]] = []
    theirs_parts: list[Mapping[str, float]] = []
    candidates = only_ours = only_theirs = 0
    for row_id, current, reference, session in sorted(rows, key=lambda row: row[0]):
        candidates += 1
        mine, other = current.values.get(gate.metric), reference.values.get(gate.metric)
        if breakdown is not None:
            mine_parts, other_parts = _parts_of(current, breakdown), _parts_of(reference, breakdown)
            if mine_parts is None or other_parts is None:
                only_ours += mine_parts is not None
                only_theirs += other_parts is not None
                continue
            ours_parts.append(mine_parts)
            theirs_parts.append(other_parts)
        elif mine is None or other is None:
            only_ours += mine is not None
            only_theirs += other is not None
            continue
        ids.append(row_id)
        ours.append(mine if mine is not None else 0.0)
        theirs.append(other if other is not None else 0.0)
        sessions.append(session)
    return Pairs(
        gate.metric,
        tuple(ids),
        tuple(ours),
        tuple(theirs),
        tuple(sessions),
        candidates,
        only_ours,
        only_theirs,
        tuple(ours_parts),
        tuple(theirs_parts),
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
    reduce = CORPUS_STATS[metric][1]

    def statistic(sums: np.ndarray) -> float:
        return float(reduce(dict(zip(names, sums.tolist(), strict=True)), settings)[stat])

    return statistic


def statistic_of(gate: Gate, values: Sequence[float], binary: bool) -> float | None:
    """``gate.stat`` of ``values`` as the run's aggregates compute it."""
    return aggregate(list(values), binary=binary).get(gate.stat)


def paired_statistics(
    gate: Gate, pairs: Pairs, settings: MetricSettings
) -> tuple[float | None, float | None]:
    """The gate's statistic on each side over the pairs: exactly as the run's aggregates
    are computed (``results.stats.aggregate``, or the corpus reduction of summed parts)."""
    kind, _ = interval_kind(gate.metric, gate.stat)
    if kind == "corpus":
        reduce = CORPUS_STATS[gate.metric][1]
        ours = reduce(_summed(pairs.current_parts), settings).get(gate.stat)
        theirs = reduce(_summed(pairs.reference_parts), settings).get(gate.stat)
        return ours, theirs
    binary = kind == "binary"
    return statistic_of(gate, pairs.current, binary), statistic_of(gate, pairs.reference, binary)


def _summed(parts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The parts summed over rows, exactly rounded (as ``results.summary`` sums them)."""
    names = sorted({name for row in parts for name in row})
    return {name: math.fsum(row.get(name, 0.0) for row in parts) for name in names}
