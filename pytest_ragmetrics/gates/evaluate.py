"""Evaluating an eval's gates against its aggregates and a baseline.

A rule's ``baseline`` is the stored baseline file, or, in an eval whose marker names
``compare_to``, the reference system's aggregate in the same run (``Reference``); a rule's
``stored_baseline`` is always the file. Rules relative to the reference system do not
apply to the reference system itself: comparing it with itself could not fail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.gates.stored import RowChange, regressed_rows
from pytest_ragmetrics.metrics.registry import VS_BASELINE, per_row
from pytest_ragmetrics.results.pairing import BASELINE_METRIC, BaselineState, accepting, listing
from pytest_ragmetrics.results.summary import EvalInfo, EvalSummary

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class GateResult:
    """The outcome of one gate of one eval, with everything a reader needs to judge it.

    ``eval`` is the eval's label: its name, with ``[system]`` for one system of several.
    ``regressed`` are the rows that break the rule on their own against the same row of
    the baseline (stored file or reference system).
    """

    eval: str
    name: str
    rule: str
    status: Status
    message: str
    value: float | None = None
    bound: float | None = None
    baseline: float | None = None
    regressed: tuple[RowChange, ...] = ()
    notes: tuple[str, ...] = ()  # how the baseline's rows were paired with this run's

    @property
    def passed(self) -> bool | None:
        """True or False when the gate was evaluated, None when it was skipped."""
        return None if self.status == "skipped" else self.status == "passed"

    @property
    def nodeid(self) -> str:
        return f"{self.eval}::gate::{self.name}"


@dataclass(frozen=True)
class Reference:
    """The reference system of a comparison: its aggregates, and why they are not
    comparable (a partial run of the reference), if they are not."""

    summary: EvalSummary | None
    problem: str | None = None


@dataclass(frozen=True)
class Comparison:
    """What a baseline rule compares: the value (of the rows both sides share, when they
    differ), the baseline's number, where it came from, and the rows that regressed."""

    value: float
    baseline: float
    source: str
    notes: tuple[str, ...] = ()
    regressed: tuple[RowChange, ...] = ()
    paired: int = 0  # rows compared one by one


def _rows_line(summary: EvalSummary, metric: str) -> str:
    count = int(summary.metrics.get(metric, {}).get("count", 0))
    return (
        f"rows      {count} with a value of {summary.n} run "
        f"({summary.errors} errored; dataset has {summary.info.dataset_rows})"
    )


def _stat(metrics: Mapping[str, Mapping[str, float]], gate: Gate) -> float | None:
    """``metric.stat`` in ``metrics``; a ``count`` or ``sum`` that nothing recorded is 0
    (no rows with a value, nothing summed)."""
    value = metrics.get(gate.metric, {}).get(gate.stat)
    return 0.0 if value is None and gate.stat in ("count", "sum") else value


def aggregate_value(summary: EvalSummary, gate: Gate) -> float | None:
    """The gate's ``metric.stat`` in ``summary`` (see ``_stat``)."""
    return _stat(summary.metrics, gate)


def _against_stored(
    gate: Gate, summary: EvalSummary, value: float, state: BaselineState
) -> tuple[Comparison | None, str | None]:
    """The comparison with the stored baseline file, or why there is none."""
    if state.problem:
        return None, state.problem
    baseline = state.baseline
    if baseline is None:
        return None, state.missing
    pairing, notes = state.pairing, [state.note] if state.note else []
    stored = baseline.value(gate.metric, gate.stat)
    if pairing is not None and not pairing.exact:
        if per_row(gate.metric):
            on_shared = _stat(pairing.current, gate)
            if on_shared is None:
                return None, f"no row this run shares with {state.path} recorded {gate.metric}"
            value, stored = on_shared, _stat(pairing.stored, gate)
            notes.append(f"on the rows both share: {pairing.describe()}")
        else:
            notes.append(
                f"rows differ ({pairing.describe()}), and {gate.metric} is not built from "
                f"rows: compared over all rows of each side ({summary.rows_used} in this run, "
                f"{baseline.n} in the baseline)"
            )
    if stored is None:
        return None, (
            f"the baseline {state.path} has no value for {gate.name}\n"
            + accepting(state.update_command)
        )
    regressed: tuple[RowChange, ...] = ()
    paired = 0
    if pairing is not None and baseline.rows is not None:
        shared = set(pairing.shared)
        rows = [row for row in summary.rows if row.id in shared]
        earlier = {row_id: baseline.rows[row_id].values for row_id in pairing.shared}
        regressed, paired = regressed_rows(gate, rows, earlier), len(rows)
    return Comparison(value, stored, state.path, tuple(notes), regressed, paired), None


def _against_reference(
    gate: Gate, summary: EvalSummary, value: float, reference: Reference | None
) -> tuple[Comparison | None, str | None]:
    """The comparison with the reference system's aggregate in this run, or why there is
    none."""
    if reference is None:
        raise ValueError(f"{summary.info.label}: a comparison gate needs the reference system")
    if reference.summary is None:
        return None, reference.problem or "the reference system did not run"
    other = reference.summary
    baseline = aggregate_value(other, gate)
    if baseline is None:
        return None, f"the reference system {other.info.system!r} recorded no {gate.metric}"
    earlier = {row.id: row.values for row in other.rows}
    rows = [row for row in summary.rows if row.id in earlier]
    source = f"system {summary.info.compare_to!r} in this run"
    regressed = regressed_rows(gate, rows, earlier)
    return Comparison(value, baseline, source, (), regressed, len(rows)), None


def _pairing_gate(summary: EvalSummary, gate: Gate, state: BaselineState) -> GateResult:
    """A gate on ``baseline.<stat>``: how this run's rows pair with the stored ones."""
    label, header = summary.info.label, f"{gate.name} {gate.rule.text}"
    problem = state.problem or (state.missing if state.baseline is None else None)
    if problem is None and state.pairing is None:
        problem = state.note
    if problem is not None or state.pairing is None:
        message = f"{header}: cannot be checked\n{problem}"
        return GateResult(label, gate.name, gate.rule.text, "failed", message)
    value = state.pairing.statistics()[gate.stat]
    return _verdict(summary, gate, value, None)


def _compares_systems(gate: Gate, info: EvalInfo) -> bool:
    """True when the gate compares with the reference system of this eval: its rule's
    ``baseline`` means that system, or it gates ``vs_baseline`` (which only compared
    systems have)."""
    if info.compare_to is None:
        return False
    return gate.metric == VS_BASELINE or (gate.rule.uses_baseline and not gate.rule.stored)


def applies(gate: Gate, info: EvalInfo) -> bool:
    """False for a gate relative to the reference system, on the reference system."""
    return not (_compares_systems(gate, info) and not info.compared)


def evaluate_gate(
    summary: EvalSummary,
    gate: Gate,
    state: BaselineState,
    skip_reason: str | None,
    reference: Reference | None = None,
) -> GateResult:
    """Evaluate one gate; ``skip_reason`` (a partial run) skips it without looking."""
    name, rule, label = gate.name, gate.rule.text, summary.info.label
    by_system = _compares_systems(gate, summary.info)
    if by_system and reference is not None and reference.problem and not skip_reason:
        skip_reason = reference.problem  # unlike numbers are not compared, even when forced
    if skip_reason:
        return GateResult(label, name, rule, "skipped", skip_reason)
    if gate.metric == BASELINE_METRIC:
        return _pairing_gate(summary, gate, state)
    value = aggregate_value(summary, gate)
    if value is None:
        message = (
            f"{name} {rule}: cannot be checked: no row of {label} recorded "
            f"{gate.metric}\nif this eval does not compute {gate.metric}, switch the gate "
            f'off in its table: [gates."{label}"] "{name}" = false'
        )
        return GateResult(label, name, rule, "failed", message)
    if not gate.rule.uses_baseline:
        return _verdict(summary, gate, value, None)
    if by_system and gate.metric != VS_BASELINE:
        comparison, problem = _against_reference(gate, summary, value, reference)
    else:
        comparison, problem = _against_stored(gate, summary, value, state)
    if comparison is None:
        message = f"{name} {rule}: cannot be checked\n{problem}"
        return GateResult(label, name, rule, "failed", message, value)
    return _verdict(summary, gate, comparison.value, comparison)


def _verdict(
    summary: EvalSummary, gate: Gate, value: float, comparison: Comparison | None
) -> GateResult:
    """Apply the rule and explain the outcome."""
    name, rule, label = gate.name, gate.rule.text, summary.info.label
    baseline = comparison.baseline if comparison is not None else None
    bound = gate.rule.bound(baseline)
    described = gate.rule.describe_bound(baseline)
    if not (math.isfinite(value) and math.isfinite(bound)):
        message = (
            f"{name} {rule}: cannot be checked: {gate.metric} {gate.stat} is {value:g} and the "
            f"bound {described}; a comparison with a value that is not finite could never fail"
        )
        return GateResult(label, name, rule, "failed", message, value, None, baseline)
    holds = gate.rule.holds(value, baseline)
    lines = [
        f"{name} {rule} {'holds' if holds else 'FAILS'}: {gate.metric} {gate.stat} is "
        f"{value:g}, {'within' if holds else 'outside'} {gate.rule.op} {described}",
        f"value     {value:g} ({gate.stat} of {gate.metric})",
        f"bound     {described}",
    ]
    regressed: tuple[RowChange, ...] = ()
    if comparison is not None:
        lines.append(f"baseline  {comparison.baseline:g} from {comparison.source}")
        lines += [f"          {note}" for note in comparison.notes]
        regressed = comparison.regressed
        if comparison.paired:
            shown = listing([change.describe() for change in regressed]) if regressed else "none"
            lines.append(
                f"regressed {len(regressed)} of {comparison.paired} paired rows break the rule "
                f"on their own: {shown}"
            )
    lines.append(_rows_line(summary, gate.metric))
    status: Status = "passed" if holds else "failed"
    message = "\n".join(lines)
    notes = comparison.notes if comparison is not None else ()
    return GateResult(label, name, rule, status, message, value, bound, baseline, regressed, notes)


def evaluate_gates(
    summary: EvalSummary,
    gates: Sequence[Gate],
    state: BaselineState,
    skip_reason: str | None,
    reference: Reference | None = None,
) -> list[GateResult]:
    """Evaluate every gate of one eval that applies to it, in thresholds.toml order."""
    return [
        evaluate_gate(summary, gate, state, skip_reason, reference)
        for gate in gates
        if applies(gate, summary.info)
    ]
