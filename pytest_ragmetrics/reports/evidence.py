"""The evidence of the gates, as every report words it: a comparison's change with its
interval, p-value, pairs, MDE and verdict; the advice on margins below what the rows can
detect; the rows that regressed under a gate that passed. Pure functions of the report
document (``gates[].stats``, docs/reports.md#json)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_ragmetrics.reports.columns import Entry
from pytest_ragmetrics.reports.document import gate_nodeid
from pytest_ragmetrics.results.pairing import listing

Gate = Mapping[str, Any]


def change(value: float, scale: str) -> str:
    """A change on its scale: ``+0.012`` (difference), ``1.079x`` (ratio), ``0.75``."""
    if scale == "ratio":
        return f"{value:.3g}x"
    return f"{value:+.3g}" if scale == "difference" else f"{value:.3g}"


def interval(stats: Mapping[str, Any], level: bool = True) -> str:
    """``+0.345 [95% CI +0.226, +0.476]`` (without ``95% CI`` when not ``level``)."""
    scale = stats["scale"]
    low, high = (change(end, scale) for end in stats["interval"])
    shown = f"{stats['confidence'] * 100:g}% CI " if level else ""
    return f"{change(stats['estimate'], scale)} [{shown}{low}, {high}]"


def pairs(stats: Mapping[str, Any]) -> str:
    """``42 pairs``, ``18 sessions of 42 pairs`` (``rows`` for one run's value)."""
    unit = "pairs" if stats.get("n_pairs") is not None else "rows"
    if stats.get("clustered"):
        return f"{stats['units']} sessions of {stats['n']} {unit}"
    return f"{stats['n']} {unit}"


def p_value(p: float) -> str:
    return f"p {p:.2g}" if p >= 0.001 else f"p {p:.1e}"


def evidence_text(stats: Mapping[str, Any]) -> str:
    """One line of a gate's evidence: change and interval, p-value, pairs, MDE, verdict."""
    parts = [interval(stats)]
    if stats.get("p_value") is not None:
        parts.append(p_value(stats["p_value"]))
    parts.append(pairs(stats))
    if stats.get("mde") is not None:
        parts.append(f"MDE {stats['mde']:.2g}")
    if stats.get("p_adjusted") is not None:
        parts.append(f"{stats['correction']}-adjusted p {stats['p_adjusted']:.2g}")
    if stats.get("verdict") is not None:
        parts.append(str(stats["verdict"]))
    return " · ".join(parts)


def stated_gates(evals: Sequence[Entry]) -> Iterator[tuple[Entry, Gate, Mapping[str, Any]]]:
    """Every gate with evidence, with its eval and its stats."""
    for entry in evals:
        for gate in entry.get("gates") or ():
            stats = gate.get("stats")
            if isinstance(stats, Mapping):
                yield entry, gate, stats


def comparison_table(evals: Sequence[Entry]) -> tuple[list[list[str]], int]:
    """The gates whose evidence shows something (all but the comparisons in which every
    pair is unchanged), as rows: gate, status, change with interval, p, pairs, MDE,
    verdict; and how many unchanged comparisons were left out."""
    rows, unchanged = [], 0
    for entry, gate, stats in stated_gates(evals):
        if stats.get("verdict") == "unchanged":
            unchanged += 1
            continue
        p = stats.get("p_value")
        level = f" ({stats['confidence'] * 100:g}%)" if stats["confidence"] != 0.95 else ""
        verdict = str(stats.get("verdict") or stats.get("reading") or "")
        if stats.get("p_adjusted") is not None:
            verdict += f"; {stats['correction']}-adjusted p {stats['p_adjusted']:.2g}"
        rows.append(
            [
                f"{entry['label']} {gate['name']}",
                "FAILED" if gate["status"] == "failed" else str(gate["status"]),
                interval(stats, level=False) + level,
                p_value(p) if p is not None else "",
                pairs(stats),
                f"{stats['mde']:.2g}" if stats.get("mde") is not None else "",
                verdict,
            ]
        )
    return rows, unchanged


def advice_lines(evals: Sequence[Entry]) -> list[str]:
    """``<gate>: <advice>`` for every gate whose margin the rows cannot back."""
    return [
        f"{gate_nodeid(entry, gate)}: {stats['advice']}"
        for entry, gate, stats in stated_gates(evals)
        if stats.get("advice")
    ]


def regressed_despite_passing(evals: Sequence[Entry]) -> list[tuple[str, int, str]]:
    """Passing gates whose rule some paired rows break on their own: the gate, how many,
    and the rows (``id before → after``)."""
    found = []
    for entry in evals:
        for gate in entry.get("gates") or ():
            changes = gate.get("regressed") or ()
            if gate.get("status") == "passed" and changes:
                shown = [f"{c['id']} {c['before']:g} → {c['after']:g}" for c in changes]
                found.append((gate_nodeid(entry, gate), len(changes), listing(shown)))
    return found
