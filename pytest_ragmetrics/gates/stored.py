"""Pairing a run's rows with its stored baseline's by id (see
``pytest_ragmetrics.results.pairing`` for the rules), and the rows that regressed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pytest_ragmetrics.config.rules import TOLERANCE, Rule
from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.gates.pairs import Pairs
from pytest_ragmetrics.metrics.base import MetricSettings
from pytest_ragmetrics.results.baseline import Baseline
from pytest_ragmetrics.results.baseline_rows import StoredRow
from pytest_ragmetrics.results.compare import (
    TRANSFORMATION_METRICS,
    missing_metrics,
    row_state,
    transitions,
)
from pytest_ragmetrics.results.pairing import Pairing
from pytest_ragmetrics.results.summary import (
    EvalSummary,
    RowResult,
    aggregate_rows,
    plain_rows,
    rows_by_id,
)
from pytest_ragmetrics.results.transformations import Transformations


def _as_result(row_id: str, row: StoredRow) -> RowResult:
    return RowResult(
        row_id,
        0,
        dict(row.values),
        {name: dict(parts) for name, parts in row.breakdowns.items()},
    )


def _stored_transformations(
    summary: EvalSummary, baseline_rows: Mapping[str, StoredRow], shared: Sequence[str]
) -> tuple[Transformations | None, str | None]:
    missing = missing_metrics(summary.metrics)
    if missing:
        return None, (
            f"transformations need {', '.join(TRANSFORMATION_METRICS)} recorded; "
            f"missing: {', '.join(missing)}"
        )
    before = {row_id: baseline_rows[row_id].state for row_id in shared}
    if not any(before.values()):
        return (
            None,
            "the stored rows have no states (the baseline recorded no abstain, f1, overlap)",
        )
    current = rows_by_id(summary.rows)  # with details: a row's state reads its sentences
    return transitions(before, [(row_id, row_state(current[row_id])) for row_id in shared]), None


def pair_rows(summary: EvalSummary, baseline: Baseline, settings: MetricSettings) -> Pairing | None:
    """Pair ``summary``'s rows with ``baseline``'s; ``None`` when the file has no rows.
    ``settings`` are the run's (and so the baseline's: its signature matched)."""
    if baseline.rows is None:
        return None
    stored = baseline.rows
    current = rows_by_id(plain_rows(summary.rows))
    same: list[str] = []
    changed_ids: list[str] = []
    for i in sorted(set(current) & set(stored)):  # each row made once (a store's on read)
        (same if current[i].inputs == stored[i].inputs else changed_ids).append(i)
    shared, changed = tuple(same), tuple(changed_ids)
    added = tuple(sorted(set(current) - set(stored)))
    removed = tuple(sorted(set(stored) - set(current)))
    pairing = Pairing(
        len(stored), shared, added, removed, changed, summary.metrics, baseline.metrics
    )
    if not pairing.exact:
        kept = set(shared)
        on_shared = [row for row in plain_rows(summary.rows) if row.id in kept]
        ours, _ = aggregate_rows(on_shared, settings)
        theirs, _ = aggregate_rows([_as_result(i, stored[i]) for i in shared], settings)
        pairing = replace(pairing, current=ours, stored=theirs)
    found, note = _stored_transformations(summary, stored, shared)
    return replace(pairing, transformations=found, transformations_note=note)


_NON_STRICT = {">": ">=", "<": "<="}


@dataclass(frozen=True)
class RowChange:
    """A row whose value breaks the gate's rule against its own earlier value."""

    id: str
    before: float
    after: float

    def describe(self) -> str:
        return f"{self.id} {self.before:g} → {self.after:g}"


def per_row_rule(gate: Gate) -> Rule | None:
    """The gate's rule applied to one row against its own earlier value (see
    ``regressed_rows``), ``None`` for ``count``, which has no per-row reading."""
    if gate.stat == "count":
        return None
    rule = replace(gate.rule, op=_NON_STRICT.get(gate.rule.op, gate.rule.op))
    return replace(rule, offset=0.0) if gate.stat == "sum" else rule


def regressed_rows(
    gate: Gate,
    rows: Sequence[RowResult],
    earlier: Mapping[str, Mapping[str, float]],
) -> tuple[RowChange, ...]:
    """The rows whose ``gate.metric`` value breaks the gate's rule when the rule is applied
    to the row alone, against the same row's value in ``earlier`` (row id → values): for
    ``tokens.mean <= 1.2x baseline``, the rows that grew by more than 20%. An offset is a
    share of a total for ``sum``, not of one row, so a total's rule is applied without it;
    ``count`` has no per-row reading. A row regresses when it moves the harmful way past
    the bound, so a strict rule is applied as its non-strict form: a row that stays where
    it was has not regressed under ``> baseline``."""
    rule = per_row_rule(gate)
    if rule is None:
        return ()
    changes = []
    for row in rows:
        after = row.values.get(gate.metric)
        before = earlier.get(row.id, {}).get(gate.metric)
        if after is not None and before is not None and not rule.holds(after, before):
            changes.append(RowChange(row.id, before, after))
    return tuple(changes)


def regressed_pairs(gate: Gate, pairs: Pairs) -> tuple[RowChange, ...]:
    """``regressed_rows`` over a comparison's pairs (the rows both sides recorded the
    metric on), read off their values: a row without a value on a side (a corpus
    statistic's row that recorded its statistics but not the metric) is left out."""
    rule = per_row_rule(gate)
    if rule is None:
        return ()
    import numpy as np  # a comparison with pairs computes its evidence with it too

    after, before = pairs.arrays
    # a factor that overflows a row's bound to infinity reads as Rule.holds reads it
    with np.errstate(invalid="ignore", over="ignore"):
        bound = rule.factor * before + rule.offset
        kept = {
            ">=": after >= bound,
            "<=": after <= bound,
            # math.isclose's rule, as Rule.holds applies it to one row
            "==": np.abs(after - bound)
            <= np.maximum(TOLERANCE * np.maximum(np.abs(after), np.abs(bound)), TOLERANCE),
        }[rule.op]
    broken = ~kept & ~np.isnan(after) & ~np.isnan(before)
    return tuple(
        RowChange(pairs.ids[i], pairs.reference[i], pairs.current[i])
        for i in np.flatnonzero(broken).tolist()
    )
