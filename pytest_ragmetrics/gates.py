"""Evaluating an eval's gates against its aggregates and its stored baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragmetrics.baseline import Baseline
from pytest_ragmetrics.config import Gate
from pytest_ragmetrics.summary import EvalSummary

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class GateResult:
    """The outcome of one gate of one eval, with everything a reader needs to judge it."""

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


def _rows_line(summary: EvalSummary, metric: str) -> str:
    count = int(summary.metrics.get(metric, {}).get("count", 0))
    return (
        f"rows      {count} with a value of {summary.n} run "
        f"({summary.errors} errored; dataset has {summary.info.dataset_rows})"
    )


def _baseline_value(gate: Gate, state: BaselineState) -> tuple[float | None, str | None]:
    """The baseline number a gate needs, or why there is none."""
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


def evaluate_gate(
    summary: EvalSummary, gate: Gate, state: BaselineState, skip_reason: str | None
) -> GateResult:
    """Evaluate one gate; ``skip_reason`` (a partial run) skips it without looking."""
    name, rule = gate.name, gate.rule.text
    header = f"{name} {rule}"
    if skip_reason:
        return GateResult(summary.info.name, name, rule, "skipped", skip_reason)
    value = summary.metrics.get(gate.metric, {}).get(gate.stat)
    if value is None and gate.stat in ("count", "sum"):
        value = 0.0  # nothing recorded: no rows with a value, nothing summed
    if value is None:
        message = (
            f"{header}: cannot be checked: no row of {summary.info.name} recorded "
            f"{gate.metric}\nif this eval does not compute {gate.metric}, switch the gate "
            f'off in its table: [gates."{summary.info.name}"] "{name}" = false'
        )
        return GateResult(summary.info.name, name, rule, "failed", message)
    baseline = None
    if gate.rule.uses_baseline:
        baseline, problem = _baseline_value(gate, state)
        if problem:
            message = f"{header}: cannot be checked\n{problem}"
            return GateResult(summary.info.name, name, rule, "failed", message, value)
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
        lines.append(f"baseline  {baseline:g} from {state.path}")
    lines.append(_rows_line(summary, gate.metric))
    status: Status = "passed" if holds else "failed"
    return GateResult(
        summary.info.name, name, rule, status, "\n".join(lines), value, bound, baseline
    )


def evaluate_gates(
    summary: EvalSummary, gates: Sequence[Gate], state: BaselineState, skip_reason: str | None
) -> list[GateResult]:
    """Evaluate every gate of one eval, in thresholds.toml order."""
    return [evaluate_gate(summary, gate, state, skip_reason) for gate in gates]
