"""The evidence of the gates, as every report words it: a comparison's change with its
interval, p-value, pairs, MDE and verdict; the advice on margins below what the rows can
detect; the rows that regressed under a gate that passed. Pure functions of the report
model's gates (``GateView.stats``: ``gates[].stats``, docs/reports.md#json)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pytest_ragmetrics.gates.evidence import GateEvidence, interval_text, p_text, pairs_text
from pytest_ragmetrics.reports.columns import Entry
from pytest_ragmetrics.reports.document import gate_nodeid
from pytest_ragmetrics.reports.model import GateView
from pytest_ragmetrics.results.pairing import SHOWN_IDS


def stated_gates(evals: Sequence[Entry]) -> Iterator[tuple[Entry, GateView, GateEvidence]]:
    """Every gate with evidence, with its eval and its stats."""
    for entry in evals:
        for gate in entry.gates:
            if gate.stats is not None:
                yield entry, gate, gate.stats


def comparison_table(evals: Sequence[Entry]) -> tuple[list[list[str]], int]:
    """The gates whose evidence shows something (all but the passing comparisons in
    which every pair is unchanged), as rows: gate, status, change with interval, p,
    pairs, MDE, verdict; and how many unchanged comparisons were left out."""
    rows, unchanged = [], 0
    for entry, gate, stats in stated_gates(evals):
        if stats.scale == "value":
            continue  # one run's value against a number: no comparison
        partial = stats.n_shared not in (None, stats.n)
        if stats.verdict == "unchanged" and gate.status != "failed" and not partial:
            unchanged += 1  # listed all the same: a failed gate, or one on fewer rows
            continue
        p = stats.p_value
        level = f" ({stats.confidence * 100:g}%)" if stats.confidence != 0.95 else ""
        verdict: str = stats.verdict or ""
        if stats.p_adjusted is not None:
            verdict += f"; {stats.correction}-adjusted p {stats.p_adjusted:.2g}"
        rows.append(
            [
                f"{entry.label} {gate.name}",
                "FAILED" if gate.status == "failed" else str(gate.status),
                interval_text(stats, level=False) + level,
                p_text(p) if p is not None else "",
                pairs_text(stats),
                f"{stats.mde:.2g}" if stats.mde is not None else "",
                verdict,
            ]
        )
    return rows, unchanged


def advice_lines(evals: Sequence[Entry]) -> list[str]:
    """``<gate>: <advice>`` for every gate whose margin the rows cannot back."""
    return [
        f"{gate_nodeid(entry, gate)}: {stats.advice}"
        for entry, gate, stats in stated_gates(evals)
        if stats.advice
    ]


def regressed_despite_passing(evals: Sequence[Entry]) -> list[tuple[str, int, list[str]]]:
    """Passing gates whose rule some paired rows break on their own: the gate, how many,
    and the first ``SHOWN_IDS`` of them (``id before → after``)."""
    found = []
    for entry in evals:
        for gate in entry.gates:
            changes = gate.regressed
            if gate.status == "passed" and changes:
                shown = [f"{c.id} {c.before:g} → {c.after:g}" for c in changes[:SHOWN_IDS]]
                found.append((gate_nodeid(entry, gate), len(changes), shown))
    return found
