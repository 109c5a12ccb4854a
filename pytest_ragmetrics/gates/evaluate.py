"""Evaluating an eval's gates against its aggregates and a baseline.

A rule's ``baseline`` is the stored baseline file, or, in an eval whose marker names
``compare_to``, the reference system's aggregate in the same run (``Reference``); a rule's
``stored_baseline`` is always the file. Rules relative to the reference system do not
apply to the reference system itself: comparing it with itself could not fail.

A comparison on a statistic of per-row values is paired (``gates.pairs``): both sides'
statistics are computed over the rows both recorded the metric on, and the gate carries
the evidence of the change (``gates.evidence``). A rule read on an interval (``@ 95%``)
is decided on it; ``correct`` adjusts those decisions for the number of such gates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_ragmetrics.config.thresholds import Gate, Settings
from pytest_ragmetrics.gates.evidence import (
    GateStats,
    adjusted,
    blind,
    comparison_stats,
    evidence_text,
    holds,
    interval_text,
    number,
    reading_text,
    value_stats,
)
from pytest_ragmetrics.gates.pairs import Matched, Pairs, paired_statistics
from pytest_ragmetrics.gates.stored import RowChange, regressed_pairs, regressed_rows
from pytest_ragmetrics.inference.settings import Correction
from pytest_ragmetrics.metrics.registry import (
    VS_BASELINE,
    UnknownAggregate,
    interval_kind,
    metric_info,
    per_row,
)
from pytest_ragmetrics.results.baseline import Baseline
from pytest_ragmetrics.results.pairing import (
    BASELINE_METRIC,
    SHOWN_IDS,
    BaselineState,
    accepting,
    listing,
)
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    plain_rows,
    rows_by_id,
    status_counts,
)

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
    stats: GateStats | None = None  # the evidence of its comparison (or value)
    stats_note: str | None = None  # why a comparison has no evidence
    gate: Gate | None = None  # the gate itself: a correction re-reads its rule

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
    """What a baseline rule compares: the value (of the rows both sides recorded the
    metric on, for a statistic of per-row values), the baseline's number, where it came
    from, the rows that regressed, and the pairs themselves."""

    value: float
    baseline: float
    source: str
    notes: tuple[str, ...] = ()
    regressed: tuple[RowChange, ...] = ()
    paired: int = 0  # rows compared one by one
    pairs: Pairs | None = None


def _rows_line(summary: EvalSummary, metric: str) -> str:
    count = int(summary.metrics.get(metric, {}).get("count", 0))
    return (
        f"rows      {count} with a value of {summary.n} run "
        f"({summary.errors} errored; dataset has {summary.info.dataset_rows})"
    )


def _stat(metrics: Mapping[str, Mapping[str, float]], gate: Gate) -> float | None:
    """``metric.stat`` in ``metrics``; ``None`` when nothing recorded the metric, for a
    ``count`` or ``sum`` too: read as 0, a gate on a metric no row computes could never
    fail, so it cannot be checked."""
    return metrics.get(gate.metric, {}).get(gate.stat)


def aggregate_value(summary: EvalSummary, gate: Gate) -> float | None:
    """The gate's ``metric.stat`` in ``summary`` (see ``_stat``)."""
    return _stat(summary.metrics, gate)


def _paired(
    gate: Gate, matched: Matched, settings: Settings, source: str, notes: list[str]
) -> tuple[Comparison | None, str | None]:
    """The comparison of a statistic of per-row values over the rows both sides
    recorded it on, with the rows that regressed under the gate's rule."""
    pairs = matched.pairs(gate)
    if pairs.n == 0:
        return None, f"no row this run shares with {source} recorded {gate.metric} on both sides"
    ours, theirs = paired_statistics(gate, pairs, settings)
    if ours is None or theirs is None:
        return None, f"{gate.name} has no value over the {pairs.n} paired rows"
    if pairs.partial:
        notes.append(f"on {pairs.describe()}")
    regressed = regressed_pairs(gate, pairs)
    return Comparison(ours, theirs, source, tuple(notes), regressed, pairs.n, pairs), None


@dataclass
class Matches:
    """The rows of one eval matched with its stored baseline's and its reference
    system's, built when a gate first needs them and shared by its other gates."""

    stored: Matched | None = None
    reference: Matched | None = None


def _against_stored(
    gate: Gate,
    summary: EvalSummary,
    value: float,
    state: BaselineState,
    settings: Settings,
    matches: Matches,
) -> tuple[Comparison | None, str | None]:
    """The comparison with the stored baseline file, or why there is none."""
    if state.problem:
        return None, state.problem
    baseline = state.baseline
    if baseline is None:
        return None, state.missing
    refused = state.metric_problem(gate.metric)
    if refused:
        return None, refused
    pairing, notes = state.pairing, [state.note] if state.note else []
    kind, _ = interval_kind(gate.metric, gate.stat)
    if pairing is not None and baseline.rows is not None and kind is not None:
        if not pairing.exact:
            notes.append(f"on the rows both share: {pairing.describe()}")
        if matches.stored is None:
            current = rows_by_id(plain_rows(summary.rows))
            matches.stored = Matched.of(pairing.shared, current, baseline.rows)
        return _paired(gate, matches.stored, settings, state.path, notes)
    return _stored_aggregates(gate, summary, value, state, baseline, notes)


def _stored_aggregates(
    gate: Gate,
    summary: EvalSummary,
    value: float,
    state: BaselineState,
    baseline: Baseline,
    notes: list[str],
) -> tuple[Comparison | None, str | None]:
    """The comparison of an aggregate that pairing rows cannot give (a count, a
    dataset-level statistic, a baseline that stored aggregates only): the stored one, or
    both recomputed over the shared rows where rows differ and the metric is per row."""
    pairing = state.pairing
    stored_value = baseline.value(gate.metric, gate.stat)
    if pairing is not None and not pairing.exact:
        if per_row(gate.metric):
            on_shared = _stat(pairing.current, gate)
            if on_shared is None:
                return None, f"no row this run shares with {state.path} recorded {gate.metric}"
            value, stored_value = on_shared, _stat(pairing.stored, gate)
            notes.append(f"on the rows both share: {pairing.describe()}")
        else:
            notes.append(
                f"rows differ ({pairing.describe()}), and {gate.metric} is not built from "
                f"rows: compared over all rows of each side ({summary.rows_used} in this run, "
                f"{baseline.n} in the baseline)"
            )
    if stored_value is None:
        return None, (
            f"the baseline {state.path} has no value for {gate.name}\n"
            + accepting(state.update_command)
        )
    regressed: tuple[RowChange, ...] = ()
    paired = 0
    if pairing is not None and baseline.rows is not None:  # count: no per-row reading
        shared = set(pairing.shared)
        rows = [row for row in plain_rows(summary.rows) if row.id in shared]
        earlier = {row_id: baseline.rows[row_id].values for row_id in pairing.shared}
        regressed, paired = regressed_rows(gate, rows, earlier), len(rows)
    return Comparison(value, stored_value, state.path, tuple(notes), regressed, paired), None


def _against_reference(
    gate: Gate,
    summary: EvalSummary,
    value: float,
    reference: Reference | None,
    settings: Settings,
    matches: Matches,
) -> tuple[Comparison | None, str | None]:
    """The comparison with the reference system in this run, or why there is none."""
    if reference is None:
        raise ValueError(f"{summary.info.label}: a comparison gate needs the reference system")
    if reference.summary is None:
        return None, reference.problem or "the reference system did not run"
    other = reference.summary
    source = f"system {summary.info.compare_to!r} in this run"
    kind, _ = interval_kind(gate.metric, gate.stat)
    if kind is not None:
        if matches.reference is None:
            ours = rows_by_id(plain_rows(summary.rows))
            theirs = rows_by_id(plain_rows(other.rows))
            matches.reference = Matched.of(ours.keys() & theirs.keys(), ours, theirs)
        return _paired(gate, matches.reference, settings, source, [])
    baseline = aggregate_value(other, gate)
    if baseline is None:
        return None, f"the reference system {other.info.system!r} recorded no {gate.metric}"
    earlier = {row.id: row.values for row in plain_rows(other.rows)}
    shared = [row for row in plain_rows(summary.rows) if row.id in earlier]
    regressed = regressed_rows(gate, shared, earlier)
    return Comparison(value, baseline, source, (), regressed, len(shared)), None


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
    *,
    settings: Settings,
    matches: Matches | None = None,
) -> GateResult:
    """Evaluate one gate; ``skip_reason`` (a partial run) skips it without looking.
    ``settings``: the run's (how corpus statistics reduce, how comparisons are read);
    ``matches``: the eval's rows matched with its baselines', shared by its gates."""
    matches = matches if matches is not None else Matches()
    name, rule, label = gate.name, gate.rule.text, summary.info.label
    by_system = _compares_systems(gate, summary.info)
    if by_system and reference is not None and reference.problem and not skip_reason:
        skip_reason = reference.problem  # unlike numbers are not compared, even when forced
    if skip_reason:
        return GateResult(label, name, rule, "skipped", skip_reason, gate=gate)
    if gate.metric == BASELINE_METRIC:
        return _pairing_gate(summary, gate, state)
    value = aggregate_value(summary, gate)
    if value is None and gate.metric in summary.metrics:
        message = (
            f"{name} {rule}: cannot be checked: the rows of {label} recorded {gate.metric}, "
            f"but gave it no {gate.stat}: {gate.metric}'s own aggregation computes "
            f"{gate.stat} from what the rows carry besides their values, and they carry "
            f"none for it here (the metric's docs say what it needs)"
        )
        return GateResult(label, name, rule, "failed", message, gate=gate)
    if value is None:
        errored = status_counts(summary.rows).get("error", 0)
        errors = (
            f"\n{errored} of {len(summary.rows)} row(s) errored (their errors are listed "
            "above): fix them, and the rows that reach the metric record it"
            if errored
            else ""
        )
        message = (
            f"{name} {rule}: cannot be checked: no row of {label} recorded "
            f"{gate.metric}{errors}\nif this eval does not compute {gate.metric}, switch the "
            f'gate off in its table: [gates."{label}"] "{name}" = false'
        )
        return GateResult(label, name, rule, "failed", message, gate=gate)
    if not gate.rule.uses_baseline:
        if not gate.rule.statistical:
            return _verdict(summary, gate, value, None)
        found, why = value_stats(gate, plain_rows(summary.rows), settings)
        return _verdict(summary, gate, value, None, found, why)
    if by_system and gate.metric != VS_BASELINE:
        comparison, problem = _against_reference(gate, summary, value, reference, settings, matches)
    else:
        comparison, problem = _against_stored(gate, summary, value, state, settings, matches)
    if comparison is None:
        message = f"{name} {rule}: cannot be checked\n{problem}"
        return GateResult(label, name, rule, "failed", message, value, gate=gate)
    return _compared(summary, gate, comparison, settings)


def _compared(
    summary: EvalSummary, gate: Gate, comparison: Comparison, settings: Settings
) -> GateResult:
    """A baseline rule decided on its comparison, with the comparison's evidence (or
    why it has none)."""
    if comparison.pairs is not None:
        found, why = comparison_stats(gate, comparison.pairs, settings)
    else:
        found, (_, why) = None, interval_kind(gate.metric, gate.stat)
        why = why or "the stored baseline holds aggregates only, so its rows cannot be paired"
    return _verdict(summary, gate, comparison.value, comparison, found, why)


def _headline(
    gate: Gate, value: float, described: str, passed: bool, stats: GateStats | None
) -> str:
    """The first line of a gate's message: the rule, whether it holds, and why."""
    name, rule = gate.name, gate.rule
    if rule.statistical and stats is not None:
        shown = interval_text(stats.view())
        what = "change" if rule.scale != "value" else f"{gate.metric} {gate.stat}"
        return f"{name} {rule.text} {'holds' if passed else 'FAILS'}: the {what} is {shown}"
    return (
        f"{name} {rule.text} {'holds' if passed else 'FAILS'}: {gate.metric} {gate.stat} is "
        f"{value:g}, {'within' if passed else 'outside'} {rule.op} {described}"
    )


def _stats_lines(gate: Gate, stats: GateStats | None, why: str | None) -> list[str]:
    """The evidence block of a gate's message."""
    if stats is None:
        return [f"evidence  none: {why}"] if why else []
    e = stats.evidence
    lines = [
        f"{'change' if e.scale != 'value' else 'interval'}    {evidence_text(stats.view())}",
        f"method    {e.method}",
    ]
    if e.delta is not None:
        shown = (number(end, "difference") for end in e.delta)
        lines.insert(1, "          difference {} [{}, {}]".format(*shown))
    if gate.rule.statistical:
        lines.append(f"reading   {reading_text(gate.rule, f'{gate.metric}.{gate.stat}')}")
    if stats.advice:
        lines.append(f"advice    {stats.advice}")
    return lines


def _comparison_lines(comparison: Comparison | None) -> list[str]:
    """Where a comparison's baseline came from, how its rows paired, and the rows that
    break the rule on their own."""
    if comparison is None:
        return []
    lines = [f"baseline  {comparison.baseline:g} from {comparison.source}"]
    lines += [f"          {note}" for note in comparison.notes]
    if comparison.paired:
        regressed = comparison.regressed
        first = [change.describe() for change in regressed[:SHOWN_IDS]]  # not 10,000
        shown = listing(first, total=len(regressed)) if regressed else "none"
        lines.append(
            f"regressed {len(regressed)} of {comparison.paired} paired rows break the rule "
            f"on their own: {shown}"
        )
    return lines


def _verdict(
    summary: EvalSummary,
    gate: Gate,
    value: float,
    comparison: Comparison | None,
    stats: GateStats | None = None,
    why: str | None = None,
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
        return GateResult(label, name, rule, "failed", message, value, None, baseline, gate=gate)
    if gate.rule.statistical and stats is None:
        message = f"{name} {rule}: cannot be checked: no interval: {why}"
        return GateResult(label, name, rule, "failed", message, value, bound, baseline, gate=gate)
    # a rule whose test cannot reach its level could never fail (or never pass): not a gate
    cannot = blind(gate.rule, stats.evidence) if stats is not None else None
    if gate.rule.statistical and stats is not None:
        passed = holds(gate.rule, stats.evidence) and cannot is None
    else:
        passed = gate.rule.holds(value, baseline)
    headline = _headline(gate, value, described, passed, stats)
    lines = [
        f"{name} {rule}: cannot be checked: {cannot}" if cannot else headline,
        f"value     {value:g} ({gate.stat} of {gate.metric})",
        f"bound     {described}",
        *_comparison_lines(comparison),
        *_stats_lines(gate, stats, why),
        _rows_line(summary, gate.metric),
    ]
    status: Status = "passed" if passed else "failed"
    message = "\n".join(lines)
    notes = comparison.notes if comparison is not None else ()
    regressed = comparison.regressed if comparison is not None else ()
    return GateResult(
        label,
        name,
        rule,
        status,
        message,
        value,
        bound,
        baseline,
        regressed,
        notes,
        stats,
        why if stats is None else None,
        gate,
    )


def evaluate_gates(
    summary: EvalSummary,
    gates: Sequence[Gate],
    state: BaselineState,
    skip_reason: str | None,
    reference: Reference | None = None,
    *,
    settings: Settings,
) -> list[GateResult]:
    """Evaluate every gate of one eval that applies to it, in thresholds.toml order."""
    matches = Matches()
    return distrusted(
        [
            evaluate_gate(
                summary, gate, state, skip_reason, reference, settings=settings, matches=matches
            )
            for gate in gates
            if applies(gate, summary.info)
        ]
    )


def _vouching(metric: str) -> tuple[str, ...]:
    try:
        return metric_info(metric).vouching
    except UnknownAggregate:
        return ()  # recorded by a user's own code: nothing vouches for it


def distrusted(results: Sequence[GateResult]) -> list[GateResult]:
    """One eval's gates, with every gate on a metric whose vouching gate failed (a judge
    metric's agreement with people, ``MetricInfo.vouching``) failed as "cannot be
    trusted", naming that gate: a number no one can trust passes no gate, whatever it
    is. A skipped gate stays skipped."""
    failed: dict[str, GateResult] = {}
    for result in results:
        gate = result.gate
        if gate is not None and result.status == "failed" and gate.stat in _vouching(gate.metric):
            failed.setdefault(gate.metric, result)
    if not failed:
        return list(results)
    marked = []
    for result in results:
        gate = result.gate
        vouch = failed.get(gate.metric) if gate is not None else None
        if gate is None or vouch is None or gate.stat in _vouching(gate.metric):
            marked.append(result)
            continue
        if result.status == "skipped":
            marked.append(result)
            continue
        first = vouch.message.splitlines()[0]
        why = (
            f"{result.name}: cannot be trusted: the gate {vouch.name} failed, so "
            f"{gate.metric}'s values are not trusted ({first})"
        )
        message = "\n".join([why, *result.message.splitlines()])
        marked.append(replace(result, status="failed", message=message))
    return marked


def correct(results: Sequence[GateResult], method: Correction) -> list[GateResult]:
    """The statistical gates of a run decided on their p-values adjusted by ``method``
    (``holm``, ``bh``; ``none`` leaves every gate as its interval decided it): a default
    reading fails when its adjusted p-value falls below ``1 - confidence``, a ``proven``
    one passes only then. Skipped gates and gates that could not be checked are not in
    the family."""
    from pytest_ragmetrics.inference.multiplicity import adjusted as adjust

    family = [
        i
        for i, result in enumerate(results)
        if result.gate is not None
        and result.gate.rule.statistical
        and result.stats is not None
        and result.stats.p_gate is not None
        and result.status != "skipped"
        and blind(result.gate.rule, result.stats.evidence) is None
    ]
    if method == "none" or not family:
        return list(results)
    p_values = [_p_gate(results[i]) for i in family]
    corrected = list(results)
    for i, p in zip(family, adjust(p_values, method), strict=True):
        corrected[i] = _corrected(results[i], p, method, len(family))
    return corrected


def _p_gate(result: GateResult) -> float:
    p = result.stats.p_gate if result.stats is not None else None
    if p is None:
        raise ValueError(f"{result.nodeid}: a statistical gate without its p-value")
    return p


def _corrected(result: GateResult, p: float, method: Correction, family: int) -> GateResult:
    """``result`` decided on its adjusted p-value ``p``."""
    if result.gate is None or result.stats is None:
        raise ValueError(f"{result.nodeid}: only a statistical gate is corrected")
    rule = result.gate.rule
    alpha = 1 - (rule.confidence or 0.95)
    passed = p < alpha if rule.proven else p >= alpha
    lines = result.message.splitlines()
    head = re.sub(r" (holds|FAILS):", " holds:" if passed else " FAILS:", lines[0], count=1)
    note = (
        f"corrected {method}-adjusted p {p:.3g} over {family} statistical gates of the run, "
        f"against {alpha:g}: the gate {'holds' if passed else 'fails'} "
        f"({'passes only below' if rule.proven else 'fails only below'} it)"
    )
    message = "\n".join([head, *lines[1:], note])
    stats = adjusted(result.stats, p, method)
    return replace(result, status="passed" if passed else "failed", message=message, stats=stats)
