"""The statistical evidence of a gate: the interval of its comparison (or of its value),
how its rule reads that interval, the verdict on the change and advice on its margin.

Every gate that compares with a baseline (a stored one, or the reference system) on a
statistic of per-row values gets a ``GateStats`` (docs/statistics.md): the paired change
with its interval at the rule's confidence (``@ 95%``) or the run's
(``[settings.stats] confidence``), the p-value of no change, the method, the number of
pairs and the minimum detectable effect (MDE). A plain rule keeps its meaning: its
stats only inform, and its margin is checked against the MDE. A statistical rule is
decided on the interval (``holds``), or, under a multiplicity correction, on its
adjusted p-value (``correct``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from pytest_ragmetrics.config.rules import Reading, Rule
from pytest_ragmetrics.config.thresholds import Gate, Settings
from pytest_ragmetrics.gates.pairs import Pairs, corpus_parts, reducer
from pytest_ragmetrics.inference.power import rows_to_detect
from pytest_ragmetrics.inference.records import Evidence, NotComparable, Statistic
from pytest_ragmetrics.metrics.catalog import CORPUS_STATS
from pytest_ragmetrics.metrics.registry import UnknownAggregate, interval_kind, metric_info
from pytest_ragmetrics.results.summary import RowResult

if TYPE_CHECKING:
    import numpy as np

    from pytest_ragmetrics.inference.resample import Units

Verdict = Literal["regressed", "within noise", "improved", "changed", "unchanged"]
# The statistic each gate statistic is resampled as (``rate`` is the mean of 0/1 values).
_STATISTICS: Final[dict[str, Statistic]] = {
    "mean": "mean",
    "rate": "mean",
    "sum": "sum",
    "p50": "p50",
    "p95": "p95",
}


@dataclass(frozen=True)
class GateStats:
    """A gate's evidence, as the reports show it (``gates[].stats`` in the JSON report).

    ``margin``: for a comparison, how far the rule lets the change go the harmful way
    (``Rule.margin``); ``verdict``: what the interval says of the change itself, whatever
    the rule; ``p_gate``: for a statistical rule, the two-sided p-value of its own
    hypothesis (that the rule breaks, or, ``proven``, that it holds), which a
    multiplicity correction adjusts into ``p_adjusted``; ``rows_to_detect``: the rows
    that would bring the MDE down to the margin; ``advice``: why a plain rule's margin
    cannot be trusted at this number of rows, or why a ``proven`` rule cannot pass.
    """

    evidence: Evidence
    reading: Reading
    margin: float | None = None
    verdict: Verdict | None = None
    p_gate: float | None = None
    p_adjusted: float | None = None
    correction: str = "none"
    rows_to_detect: int | None = None
    advice: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's ``stats`` entry of the gate."""
        e = self.evidence
        delta, ci = (e.estimate, [e.low, e.high]) if e.scale == "difference" else (None, None)
        if e.delta is not None:
            delta, ci = e.delta[0], [e.delta[1], e.delta[2]]
        document: dict[str, Any] = {
            "scale": e.scale,
            "estimate": e.estimate,
            "interval": [e.low, e.high],
            "delta": delta,
            "ci": ci,
            "confidence": e.confidence,
            "p_value": e.p_value,
            "method": e.method,
            "n_pairs": e.n if e.scale != "value" else None,
            "n": e.n,
            "units": e.units,
            "clustered": e.clustered,
            "mde": e.mde,
            "margin": self.margin,
            "verdict": self.verdict,
            "reading": self.reading,
            "p_gate": self.p_gate,
            "p_adjusted": self.p_adjusted,
            "correction": self.correction,
            "rows_to_detect": self.rows_to_detect,
            "advice": self.advice,
        }
        if e.sides is not None:
            document["sides"] = {
                name: {"mean": side.mean, "low": side.low, "high": side.high}
                for name, side in zip(("current", "reference"), e.sides, strict=True)
            }
            document["bootstrap_p_value"] = e.bootstrap_p
        return document


def _unit(scale: str) -> str:
    return "x" if scale == "ratio" else ""


def number(value: float, scale: str, signed: bool = True) -> str:
    """A change as reports write it: ``+0.012``, ``-3.4`` or ``1.08x``."""
    if scale == "ratio":
        return f"{value:.4g}x"
    return f"{value:+.4g}" if signed and scale == "difference" else f"{value:.4g}"


def describe(evidence: Evidence) -> str:
    """``-0.004 [95% CI -0.031, +0.022]``, on the evidence's scale."""
    scale, level = evidence.scale, f"{evidence.confidence * 100:g}%"
    low, high = number(evidence.low, scale), number(evidence.high, scale)
    return f"{number(evidence.estimate, scale)} [{level} CI {low}, {high}]"


def reading_text(rule: Rule, metric_stat: str) -> str:
    """What a statistical rule's reading asks of its interval, in words."""
    level = f"{(rule.confidence or 0) * 100:g}%"
    bound = number(rule.null, rule.scale, signed=False)
    of = f"of {metric_stat}" if rule.scale == "value" else "of the change"
    if rule.scale == "ratio":
        of = "of the ratio to the baseline"
    if rule.reading == "no-difference":
        return f"no-difference: fails only when the {level} interval {of} leaves out {bound}"
    beyond = "below" if rule.harm == "lower" else "above"
    within = "above" if rule.harm == "lower" else "below"
    if rule.reading in ("inferiority", "refuted"):
        return (
            f"{rule.reading}: fails only when the whole {level} interval {of} lies {beyond} {bound}"
        )
    return f"{rule.reading}: passes only when the whole {level} interval {of} lies {within} {bound}"


def _unchanged(evidence: Evidence) -> float:
    return 1.0 if evidence.scale == "ratio" else 0.0


def _test_agrees(rule: Rule, evidence: Evidence) -> bool:
    """Whether the test of no change agrees that there is one, where that matters: for a
    comparison whose bound *is* no change, a change counts as shown only when both the
    interval and the p-value of no change show it (they are different procedures and
    can disagree at the edge, e.g. Newcombe's interval and the exact McNemar test on a
    handful of discordant pairs); elsewhere the interval alone decides."""
    if evidence.p_value is None or rule.null != _unchanged(evidence):
        return True
    return evidence.p_value < 1 - evidence.confidence


def holds(rule: Rule, evidence: Evidence) -> bool:
    """A statistical rule read on its interval (no multiplicity correction): the default
    reading fails only when the interval shows the rule broken, ``proven`` passes only
    when it shows the rule kept."""
    low, high, bound = evidence.low, evidence.high, rule.null
    shown = _test_agrees(rule, evidence)
    if rule.harm == "lower":
        if rule.proven:
            return shown and (low > bound if rule.op == ">" else low >= bound)
        return high >= bound or not shown
    if rule.harm == "higher":
        if rule.proven:
            return shown and (high < bound if rule.op == "<" else high <= bound)
        return low <= bound or not shown
    return low <= bound <= high or not shown


def gate_p(rule: Rule, evidence: Evidence) -> float:
    """The two-sided p-value of the rule's own hypothesis: that it breaks (the default
    reading, small when the interval shows harm) or, ``proven``, that it holds (small
    when the interval shows it keeps)."""
    below, above = evidence.p_below or 0.0, evidence.p_above or 0.0
    if rule.harm == "lower":
        one = above if rule.proven else below
    elif rule.harm == "higher":
        one = below if rule.proven else above
    else:
        one = min(below, above)
    p = min(1.0, 2 * one)
    if evidence.p_value is not None and rule.null == _unchanged(evidence):
        return max(p, evidence.p_value)  # both must show it (``_test_agrees``)
    return p


def verdict(rule: Rule, evidence: Evidence) -> Verdict:
    """What the interval says of the change, whatever the rule: wholly on the harmful
    side of no change (regressed), wholly on the other (improved), or neither."""
    unchanged = _unchanged(evidence)
    low, high = evidence.low, evidence.high
    side = "below" if high < unchanged else "above" if low > unchanged else None
    tested = evidence.p_value is None or evidence.p_value < 1 - evidence.confidence
    if side is None or not tested:  # both the interval and the test must show a change
        return "within noise"
    if rule.harm is None:
        return "changed"
    return "regressed" if (side == "below") == (rule.harm == "lower") else "improved"


def _pairs_word(evidence: Evidence) -> str:
    if evidence.clustered:
        return f"{evidence.units} paired sessions"
    return f"{evidence.n} paired rows"


def advice(rule: Rule, evidence: Evidence) -> tuple[str | None, int | None]:
    """For a plain comparison, whether its margin is below what the pairs can detect (it
    would flip on noise), and the rows that would detect it; for a ``proven`` rule whose
    interval is wider than its margin, that it cannot pass without an improvement."""
    mde, margin = evidence.mde, rule.margin
    if mde is None or mde <= 0:
        return None, None
    shown = f"{mde:.2g}"
    level = f"{evidence.confidence * 100:g}%"
    if not rule.statistical:
        if margin >= mde:
            return None, None
        if margin <= 0:
            return (
                f"a margin of {margin:g} is below what any number of rows can detect: on a "
                f"change smaller than {shown} (what {_pairs_word(evidence)} detect) the gate "
                f"flips on noise; read it on its interval (add '@ {level}') or give it a "
                f"margin of at least {shown}"
            ), None
        rows = rows_to_detect(evidence.units, mde, margin)
        return (
            f"the margin {margin:g} is below what {_pairs_word(evidence)} can detect "
            f"({shown}): the gate will flip on noise; about {rows:,} "
            f"{'sessions' if evidence.clustered else 'rows'} would detect it, or read it "
            f"on its interval (add '@ {level}')"
        ), rows
    if rule.reading == "non-inferiority":
        half = (evidence.high - evidence.low) / 2
        if margin > 0 and half > margin:
            rows = rows_to_detect(evidence.units, half, margin)
            return (
                f"the interval is ±{half:.3g} wide, wider than the margin {margin:g}: the gate "
                f"passes only on a shown improvement; about {rows:,} "
                f"{'sessions' if evidence.clustered else 'rows'} would let an unchanged run pass"
            ), rows
    return None, None


def _units(sessions: tuple[str | None, ...]) -> Units:
    from pytest_ragmetrics.inference.resample import Units

    return Units.of(sessions)


def comparison_stats(
    gate: Gate, pairs: Pairs, settings: Settings
) -> tuple[GateStats | None, str | None]:
    """The evidence of a comparison gate over ``pairs``, or why there is none."""

    from pytest_ragmetrics.inference.evidence import corpus_evidence, paired_evidence

    kind, why = interval_kind(gate.metric, gate.stat)
    if kind is None:
        return None, why
    if pairs.n == 0:
        return None, f"no row recorded {gate.metric} on both sides"
    rule, stats = gate.rule, settings.stats
    scale: Literal["difference", "ratio"] = "ratio" if rule.relative else "difference"
    units, confidence = _units(pairs.sessions), rule.confidence or stats.confidence
    try:
        if kind == "corpus":
            names, ours, theirs = _tables(pairs)
            evidence = corpus_evidence(
                ours,
                theirs,
                reducer(gate.metric, gate.stat, names, settings),
                scale=scale,
                settings=stats,
                units=units,
                confidence=confidence,
                bound=rule.null,
            )
        else:
            evidence = paired_evidence(
                *pairs.arrays,
                statistic=_STATISTICS[gate.stat],
                scale=scale,
                settings=stats,
                units=units,
                binary=kind == "binary",
                confidence=confidence,
                bound=rule.null,
            )
    except NotComparable as error:
        return None, str(error)
    if _identical(pairs):
        # Nothing moved (a run against the very log its baseline was stored from): no
        # spread to estimate noise from, so no MDE and no advice on the margin.
        quiet = replace(evidence, mde=None)
        return GateStats(quiet, rule.reading, rule.margin, "unchanged", _p(rule, evidence)), None
    return _gate_stats(rule, evidence), None


def _identical(pairs: Pairs) -> bool:
    """Every pair's two sides are the same (values, or sufficient statistics)."""
    if pairs.current_parts or pairs.reference_parts:
        # On the parts both sides have: a baseline stored before a part was counted (the
        # rows' number of references, which only signatures read) still matches.
        return all(
            ours[name] == theirs[name]
            for ours, theirs in zip(pairs.current_parts, pairs.reference_parts, strict=True)
            for name in ours.keys() & theirs.keys()
        )
    return pairs.current == pairs.reference


def _p(rule: Rule, evidence: Evidence) -> float | None:
    return gate_p(rule, evidence) if rule.statistical else None


def _tables(pairs: Pairs) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Both sides' sufficient statistics as arrays with the same columns."""
    names, _ = corpus_parts([*pairs.current_parts, *pairs.reference_parts])
    import numpy as np

    def table(parts: tuple[Any, ...]) -> np.ndarray:
        return np.array([[row.get(name, 0.0) for name in names] for row in parts], dtype=float)

    return names, table(pairs.current_parts), table(pairs.reference_parts)


def statistic_evidence(
    metric: str,
    stat: str,
    rows: Sequence[RowResult],
    settings: Settings,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """The interval of one run's ``metric.stat`` over the rows that recorded it, in id
    order (rows of one session resampled together); ``NotComparable`` when there is none,
    saying why."""
    import numpy as np

    from pytest_ragmetrics.inference.evidence import single_corpus_evidence, single_evidence

    kind, why = interval_kind(metric, stat)
    if kind is None:
        raise NotComparable(why)
    stats = settings.stats
    confidence = confidence or stats.confidence
    ordered = sorted(rows, key=lambda row: row.id)
    if kind == "corpus":
        breakdown = CORPUS_STATS[metric][0]
        having = [row for row in ordered if breakdown in row.breakdowns]
        names, table = corpus_parts([row.breakdowns[breakdown] for row in having])
        return single_corpus_evidence(
            table,
            reducer(metric, stat, names, settings),
            settings=stats,
            units=_units(tuple(row.session for row in having)),
            confidence=confidence,
            bound=bound,
        )
    having = [row for row in ordered if metric in row.values]
    return single_evidence(
        np.array([row.values[metric] for row in having], dtype=float),
        statistic=_STATISTICS[stat],
        settings=stats,
        units=_units(tuple(row.session for row in having)),
        binary=kind == "binary",
        confidence=confidence,
        bound=bound,
    )


def value_stats(
    gate: Gate, rows: Sequence[RowResult], settings: Settings
) -> tuple[GateStats | None, str | None]:
    """The evidence of a fixed-bound statistical gate (``>= 0.4 @ 95%``): the interval of
    the run's own statistic, or why there is none."""
    rule = gate.rule
    try:
        evidence = statistic_evidence(
            gate.metric, gate.stat, rows, settings, rule.confidence, rule.null
        )
    except NotComparable as error:
        return None, str(error)
    return GateStats(evidence, rule.reading, p_gate=gate_p(rule, evidence)), None


def metric_intervals(
    rows: Sequence[RowResult], metrics: Iterable[str], settings: Settings
) -> dict[str, dict[str, Evidence]]:
    """The interval of each per-row metric's mean (its rate for 0/1 values) and of its
    corpus statistics, at the run's confidence, for reports of one run: ``{metric:
    {stat: evidence}}``; metrics without an interval (dataset-level ones) are left out."""
    intervals: dict[str, dict[str, Evidence]] = {}
    for metric in metrics:
        try:
            info = metric_info(metric)
        except UnknownAggregate:
            info = None
        wanted = ["mean", *(info.corpus if info is not None else ())]
        for stat in wanted:
            if interval_kind(metric, stat)[0] is None:
                continue
            try:
                found = statistic_evidence(metric, stat, rows, settings)
            except NotComparable:
                continue  # too few rows: no interval to show
            intervals.setdefault(metric, {})[stat] = found
    return intervals


def _gate_stats(rule: Rule, evidence: Evidence) -> GateStats:
    told, rows = advice(rule, evidence)
    return GateStats(
        evidence,
        rule.reading,
        margin=rule.margin,
        verdict=verdict(rule, evidence),
        p_gate=_p(rule, evidence),
        rows_to_detect=rows,
        advice=told,
    )


def adjusted(stats: GateStats, p_adjusted: float, method: str) -> GateStats:
    return replace(stats, p_adjusted=p_adjusted, correction=method)
