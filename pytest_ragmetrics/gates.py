"""Evaluating an eval's gates against its aggregates and a baseline.

A rule's ``baseline`` is the stored baseline file, or, in an eval whose marker names
``compare_to``, the reference system's aggregate in the same run (``Reference``); a rule's
``stored_baseline`` is always the file. Rules relative to the reference system do not
apply to the reference system itself: comparing it with itself could not fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragmetrics.baseline import Baseline
from pytest_ragmetrics.config import Gate
from pytest_ragmetrics.summary import EvalInfo, EvalSummary

VS_BASELINE = "vs_baseline"  # a compared system's aggregates relative to the reference

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class GateResult:
    """The outcome of one gate of one eval, with everything a reader needs to judge it.

    ``eval`` is the eval's label: its name, with ``[system]`` for one system of several.
    """

    eval: str
    name: str
    rule: str
    status: Status
    message: str
    value: float | None = None
    bound: float | None = None
    baseline: float | None = None

    @property
    def passed(self) -> bool | None:
        """True or False when the gate was evaluated, None when it was skipped."""
        return None if self.status == "skipped" else self.status == "passed"

    @property
    def nodeid(self) -> str:
        return f"{self.eval}::gate::{self.name}"


@dataclass(frozen=True)
class BaselineState:
    """The stored baseline of an eval as far as the gates are concerned."""

    path: str
    baseline: Baseline | None = None
    problem: str | None = None
    update_command: str = "pytest --ragmetrics-update-baseline"


@dataclass(frozen=True)
class Reference:
    """The reference system of a comparison: its aggregates, and why they are not
    comparable (a partial run of the reference), if they are not."""

    summary: EvalSummary | None
    problem: str | None = None


def _rows_line(summary: EvalSummary, metric: str) -> str:
    count = int(summary.metrics.get(metric, {}).get("count", 0))
    return (
        f"rows      {count} with a value of {summary.n} run "
        f"({summary.errors} errored; dataset has {summary.info.dataset_rows})"
    )


def _stored_value(gate: Gate, state: BaselineState) -> tuple[float | None, str | None]:
    """The stored baseline number a gate needs, or why there is none."""
    if state.problem:
        return None, state.problem
    if state.baseline is None:
        return None, (
            f"no baseline is stored at {state.path}\ncreate it with: {state.update_command}"
        )
    value = state.baseline.value(gate.metric, gate.stat)
    if value is None:
        return None, (
            f"the baseline {state.path} has no value for {gate.name}\n"
            f"update it with: {state.update_command}"
        )
    return value, None


def aggregate_value(summary: EvalSummary, gate: Gate) -> float | None:
    """The gate's ``metric.stat`` in ``summary``; a ``count`` or ``sum`` that nothing
    recorded is 0 (no rows with a value, nothing summed)."""
    value = summary.metrics.get(gate.metric, {}).get(gate.stat)
    return 0.0 if value is None and gate.stat in ("count", "sum") else value


def _reference_value(gate: Gate, reference: Reference) -> tuple[float | None, str | None]:
    """The reference system's number in this run, or why there is none."""
    if reference.summary is None:
        return None, reference.problem or "the reference system did not run"
    info = reference.summary.info
    value = aggregate_value(reference.summary, gate)
    if value is None:
        return None, f"the reference system {info.system!r} recorded no {gate.metric}"
    return value, None


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
    header = f"{name} {rule}"
    by_system = _compares_systems(gate, summary.info)
    if by_system and reference is not None and reference.problem and not skip_reason:
        skip_reason = reference.problem  # unlike numbers are not compared, even when forced
    if skip_reason:
        return GateResult(label, name, rule, "skipped", skip_reason)
    value = aggregate_value(summary, gate)
    if value is None:
        message = (
            f"{header}: cannot be checked: no row of {label} recorded "
            f"{gate.metric}\nif this eval does not compute {gate.metric}, switch the gate "
            f'off in its table: [gates."{label}"] "{name}" = false'
        )
        return GateResult(label, name, rule, "failed", message)
    baseline, source = None, ""
    if gate.rule.uses_baseline:
        if by_system and gate.metric != VS_BASELINE:
            if reference is None:
                raise ValueError(f"{label}: a comparison gate needs the reference system")
            baseline, problem = _reference_value(gate, reference)
            source = f"system {summary.info.compare_to!r} in this run"
        else:
            baseline, problem = _stored_value(gate, state)
            source = state.path
        if problem:
            message = f"{header}: cannot be checked\n{problem}"
            return GateResult(label, name, rule, "failed", message, value)
    bound = gate.rule.bound(baseline)
    holds = gate.rule.holds(value, baseline)
    verdict = "holds" if holds else "FAILS"
    lines = [
        f"{header} {verdict}: {gate.metric} {gate.stat} is {value:g}, "
        f"{'within' if holds else 'outside'} {gate.rule.op} {gate.rule.describe_bound(baseline)}",
        f"value     {value:g} ({gate.stat} of {gate.metric})",
        f"bound     {gate.rule.describe_bound(baseline)}",
    ]
    if baseline is not None:
        lines.append(f"baseline  {baseline:g} from {source}")
    lines.append(_rows_line(summary, gate.metric))
    status: Status = "passed" if holds else "failed"
    return GateResult(label, name, rule, status, "\n".join(lines), value, bound, baseline)


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
