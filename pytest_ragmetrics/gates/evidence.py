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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from pytest_ragmetrics.config.rules import Reading, Rule
from pytest_ragmetrics.config.thresholds import Gate, Settings
from pytest_ragmetrics.gates.pairs import Pairs, corpus_parts, reducer
from pytest_ragmetrics.inference.power import rows_to_detect
from pytest_ragmetrics.inference.records import Evidence, NotComparable, Scale, Side, Statistic
from pytest_ragmetrics.inference.settings import Correction
from pytest_ragmetrics.metrics.catalog import in_force
from pytest_ragmetrics.metrics.registry import (
    UnknownAggregate,
    interval_kind,
    metric_info,
    value_range,
)
from pytest_ragmetrics.results.rowstore import StoredRows
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

    ``bound``: the rule's bound on the evidence's scale (an offset from the baseline, a
    factor of it, or the fixed number); ``margin``: for a comparison, how far the rule
    lets the change go the harmful way
    (``Rule.margin``); ``verdict``: what the interval says of the change itself, whatever
    the rule; ``p_gate``: for a statistical rule, the two-sided p-value of its own
    hypothesis (that the rule breaks, or, ``proven``, that it holds), which a
    multiplicity correction adjusts into ``p_adjusted``; ``rows_to_detect``: the rows
    that would bring the MDE down to the margin; ``advice``: why a plain rule's margin
    cannot be trusted at this number of rows, or why a ``proven`` rule cannot pass.
    """

    evidence: Evidence
    reading: Reading
    bound: float | None = None  # the rule's bound on ``evidence.scale`` (Rule.null)
    margin: float | None = None
    verdict: Verdict | None = None
    p_gate: float | None = None
    p_adjusted: float | None = None
    correction: Correction = "none"
    rows_to_detect: int | None = None
    advice: str | None = None
    shared: int | None = None  # the rows both sides have, of which ``evidence.n`` paired

    def view(self) -> GateEvidence:
        """The evidence as the reports read it (``gates[].stats``): the interval of the
        change, and of the difference when the change is a ratio."""
        e = self.evidence
        delta, ci = (e.estimate, (e.low, e.high)) if e.scale == "difference" else (None, None)
        if e.delta is not None:
            delta, ci = e.delta[0], (e.delta[1], e.delta[2])
        return GateEvidence(
            scale=e.scale,
            estimate=e.estimate,
            interval=(e.low, e.high),
            delta=delta,
            ci=ci,
            confidence=e.confidence,
            p_value=e.p_value,
            p_bound=e.p_bound,
            p_floor=e.p_floor,
            method=e.method,
            n_pairs=e.n if e.scale != "value" else None,
            n_shared=self.shared,
            n=e.n,
            units=e.units,
            clustered=e.clustered,
            mde=e.mde,
            bound=self.bound,
            margin=self.margin,
            verdict=self.verdict,
            reading=self.reading,
            p_gate=self.p_gate,
            p_adjusted=self.p_adjusted,
            correction=self.correction,
            rows_to_detect=self.rows_to_detect,
            advice=self.advice,
            sides=GateSides(*e.sides) if e.sides is not None else None,
            # sacrebleu's paired-bootstrap p-value comes with the sides, or not at all
            bootstrap_p_value=e.bootstrap_p if e.sides is not None else None,
        )


@dataclass(frozen=True)
class GateSides:
    """Each side's bootstrap mean and interval of a corpus statistic (``stats.sides``)."""

    current: Side
    reference: Side

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {
            name: {"mean": side.mean, "low": side.low, "high": side.high}
            for name, side in (("current", self.current), ("reference", self.reference))
        }

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> GateSides:
        current, reference = (written[name] for name in ("current", "reference"))
        return cls(
            Side(current["mean"], current["low"], current["high"]),
            Side(reference["mean"], reference["low"], reference["high"]),
        )


@dataclass(frozen=True)
class GateEvidence:
    """A gate's evidence as every report reads it, and as the JSON report holds it
    (``gates[].stats``, docs/reports.md#json): built from a run's ``GateStats``
    (``GateStats.view``) or read back from a report document (``from_dict``), so that a
    JSON file renders as the run that wrote it did.

    ``estimate`` and ``interval`` are on ``scale``; ``delta`` and ``ci``: the difference
    and its interval (for a ratio too, else ``None`` for one run's value); ``n_pairs``:
    the pairs of a comparison (``None`` for one run's value); ``n_shared``: the rows both
    sides have, of which ``n`` paired; ``sides`` and ``bootstrap_p_value``: for a corpus
    statistic only, written only then. The rest are ``GateStats``'s and ``Evidence``'s.
    """

    scale: Scale
    estimate: float
    interval: tuple[float, float]
    delta: float | None
    ci: tuple[float, float] | None
    confidence: float
    p_value: float | None
    p_bound: float | None
    p_floor: float | None
    method: str
    n_pairs: int | None
    n_shared: int | None
    n: int
    units: int
    clustered: bool
    mde: float | None
    bound: float | None
    margin: float | None
    verdict: Verdict | None
    reading: Reading
    p_gate: float | None
    p_adjusted: float | None
    correction: Correction
    rows_to_detect: int | None
    advice: str | None
    sides: GateSides | None = None
    bootstrap_p_value: float | None = None

    def __post_init__(self) -> None:
        if self.sides is None and self.bootstrap_p_value is not None:
            raise ValueError(
                "gates[].stats: a bootstrap_p_value without the sides it compares; "
                "give both (a corpus statistic) or neither"
            )

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's ``stats`` entry of the gate."""
        document: dict[str, Any] = {
            "scale": self.scale,
            "estimate": self.estimate,
            "interval": list(self.interval),
            "delta": self.delta,
            "ci": list(self.ci) if self.ci is not None else None,
            "confidence": self.confidence,
            "p_value": self.p_value,
            "p_bound": self.p_bound,
            "p_floor": self.p_floor,
            "method": self.method,
            "n_pairs": self.n_pairs,
            "n_shared": self.n_shared,
            "n": self.n,
            "units": self.units,
            "clustered": self.clustered,
            "mde": self.mde,
            "bound": self.bound,
            "margin": self.margin,
            "verdict": self.verdict,
            "reading": self.reading,
            "p_gate": self.p_gate,
            "p_adjusted": self.p_adjusted,
            "correction": self.correction,
            "rows_to_detect": self.rows_to_detect,
            "advice": self.advice,
        }
        if self.sides is not None:
            document["sides"] = self.sides.as_dict()
            document["bootstrap_p_value"] = self.bootstrap_p_value
        return document

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> GateEvidence:
        """The evidence as a report document holds it. The keys every version of the
        report wrote are required; those added since (``p_bound``, ``p_floor``,
        ``n_shared``) and the optional ones read as absent (``None``) when missing. A
        closed value (scale, verdict, reading, correction) outside its set is an error."""
        sides = written.get("sides")
        low, high = written["interval"]
        ci = written.get("ci")
        return cls(
            scale=_closed(written, "scale", Scale),
            estimate=written["estimate"],
            interval=(low, high),
            delta=written.get("delta"),
            ci=(ci[0], ci[1]) if ci is not None else None,
            confidence=written["confidence"],
            p_value=written.get("p_value"),
            p_bound=written.get("p_bound"),
            p_floor=written.get("p_floor"),
            method=written["method"],
            n_pairs=written.get("n_pairs"),
            n_shared=written.get("n_shared"),
            n=written["n"],
            units=written["units"],
            clustered=written["clustered"],
            mde=written.get("mde"),
            bound=written.get("bound"),
            margin=written.get("margin"),
            verdict=_closed(written, "verdict", Verdict, optional=True),
            reading=_closed(written, "reading", Reading),
            p_gate=written.get("p_gate"),
            p_adjusted=written.get("p_adjusted"),
            correction=_closed(written, "correction", Correction),
            rows_to_detect=written.get("rows_to_detect"),
            advice=written.get("advice"),
            sides=GateSides.from_dict(sides) if sides is not None else None,
            bootstrap_p_value=written.get("bootstrap_p_value"),
        )


def _closed(written: Mapping[str, Any], key: str, kind: Any, optional: bool = False) -> Any:
    """``written[key]`` when it is one of the values of the ``Literal`` ``kind`` (or
    ``None``, when ``optional``)."""
    value = written.get(key) if optional else written[key]
    allowed = get_args(kind)
    if (value is None and optional) or value in allowed:
        return value
    shown = ", ".join(repr(name) for name in allowed)
    raise ValueError(f"gates[].stats.{key}: {value!r} is not one of {shown}")


def _unit(scale: str) -> str:
    return "x" if scale == "ratio" else ""


def number(value: float, scale: str, signed: bool = True) -> str:
    """A number on a comparison's scale as every report writes it: ``+0.012`` (a
    difference, 3 significant digits), ``1.005x`` (a ratio, 4: ratios sit near 1),
    ``0.75`` (a value); ``+1290``, not ``+1.29e+03``, for a token count's change."""
    if scale == "ratio":
        return f"{_significant(value, 4)}x"
    return _significant(value, 3, signed and scale == "difference")


def _significant(value: float, digits: int, signed: bool = False) -> str:
    """``value`` to ``digits`` significant digits, in plain notation from 0.0001 to a
    million (an integer part longer than ``digits`` is kept whole), else ``g``'s."""
    sign = "+" if signed else ""
    size = abs(value)
    if not 1e-4 <= size < 1e6:
        return f"{value:{sign}.{digits}g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(size)))
    shown = f"{value:{sign}.{decimals}f}"
    return shown.rstrip("0").rstrip(".") if "." in shown else shown


def interval_text(stats: GateEvidence, level: bool = True) -> str:
    """``+0.345 [95% CI +0.226, +0.476]`` from a gate's evidence; without ``95% CI``
    when not ``level``."""
    scale = stats.scale
    low, high = (number(end, scale) for end in stats.interval)
    shown = f"{stats.confidence * 100:g}% CI " if level else ""
    return f"{number(stats.estimate, scale)} [{shown}{low}, {high}]"


def pairs_text(stats: GateEvidence) -> str:
    """``42 pairs``, ``18 sessions of 42 pairs`` (``rows`` for one run's value)."""
    unit = "pairs" if stats.n_pairs is not None else "rows"
    shared = stats.n_shared
    of = f" of {shared}" if shared is not None and shared != stats.n else ""
    if stats.clustered:
        return f"{stats.units} sessions of {stats.n}{of} {unit}"
    return f"{stats.n}{of} {unit}"


def p_text(p: float) -> str:
    """``p 0.12``, ``p 1.0e-04``."""
    return f"p {p:.2g}" if p >= 0.001 else f"p {p:.1e}"


def evidence_text(stats: GateEvidence) -> str:
    """One line of a gate's evidence, as every report writes it: the change and its
    interval, the p-value of no change, the pairs, the MDE, an adjusted p-value, the
    verdict."""
    parts = [interval_text(stats)]
    if stats.p_value is not None:
        parts.append(p_text(stats.p_value))
    parts.append(pairs_text(stats))
    if stats.mde is not None:
        parts.append(f"MDE {stats.mde:.2g}")
    if stats.p_adjusted is not None:
        parts.append(f"{stats.correction}-adjusted p {stats.p_adjusted:.2g}")
    if stats.verdict is not None:
        parts.append(stats.verdict)
    return " · ".join(parts)


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


def _test_p(rule: Rule, evidence: Evidence) -> float | None:
    """The p-value of the test that must agree with the interval before the rule's bound
    counts as crossed: the sign-flip test of the bound itself (a mean, sum or ratio of
    values that are not 0/1), else, at a bound of no change, the test of no change
    (McNemar's for 0/1 values); ``None`` where the interval alone decides."""
    if evidence.p_bound is not None:
        return evidence.p_bound
    if evidence.p_value is not None and rule.null == _unchanged(evidence):
        return evidence.p_value
    return None


def _cannot_show(evidence: Evidence) -> tuple[str, str] | None:
    """Why the comparison's test cannot show a change at its level, whatever the data
    (its smallest p-value, ``Evidence.p_floor``, is not below ``1 - confidence``), and
    what would let it: more rows, or more random flips. ``None`` when it can."""
    floor, alpha = evidence.p_floor, 1 - evidence.confidence
    if floor is None or floor < alpha:
        return None
    unit = "sessions" if evidence.clustered else "rows"
    reason = (
        f"{evidence.units} paired {unit} cannot show a change at "
        f"{evidence.confidence * 100:g}% (the smallest p-value their test can give, with "
        f"all of them changed the same way, is {floor:.3g}, not below {alpha:.3g})"
    )
    if 2.0 ** (1 - evidence.units) >= alpha:  # too few units for an exact test
        return reason, f"{math.floor(math.log2(1 / alpha)) + 2} or more {unit} could"
    return reason, f"[settings.stats] permutations = {math.floor(1 / alpha) + 1:,} or more could"


def blind(rule: Rule, evidence: Evidence) -> str | None:
    """Why a rule read on an interval can never be decided by its evidence: it needs a
    test to agree, and the test cannot reach the level, so the default reading could
    never fail and ``proven`` never pass. ``None`` when it can be decided."""
    if not rule.statistical or _test_p(rule, evidence) is None:
        return None
    found = _cannot_show(evidence)
    if found is None:
        return None
    reason, remedy = found
    never = "pass" if rule.proven else "fail"
    floor = evidence.p_floor or 0.0
    return (
        f"{reason}, so the rule could never {never}; {remedy}, or a confidence below "
        f"{100 * (1 - floor):g}%"
    )


def _test_agrees(rule: Rule, evidence: Evidence) -> bool:
    """Whether the test of the bound agrees that the interval shows something (they are
    different procedures, and can disagree at the edge: Newcombe's interval and the
    exact McNemar test on a handful of discordant pairs; a bootstrap of two rows that
    changed alike, whose interval has no width while the sign-flip test puts p at 0.5)."""
    p = _test_p(rule, evidence)
    return p is None or p < 1 - evidence.confidence


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
    test = _test_p(rule, evidence)
    return p if test is None else max(p, test)  # both must show it (``_test_agrees``)


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
    would flip on noise), and the rows that would detect it; for a non-inferiority rule
    whose margin is below the MDE, that an unchanged run will rarely pass, and the rows
    with which it would four times out of five."""
    mde, margin = evidence.mde, rule.margin
    cannot = _cannot_show(evidence)
    if cannot is not None and not rule.statistical:
        reason, remedy = cannot
        return f"{reason}: the gate compares the numbers and flips on noise; {remedy}", None
    if mde is None or mde <= 0:
        return None, None
    shown, rows_word = f"{mde:.2g}", "sessions" if evidence.clustered else "rows"
    level = f"{evidence.confidence * 100:g}%"
    if rule.statistical:
        if rule.reading != "non-inferiority" or margin <= 0 or margin >= mde:
            return None, None
        rows = rows_to_detect(evidence.units, mde, margin)
        return (
            f"the margin {margin:g} is below what {_pairs_word(evidence)} can detect "
            f"({shown}): an unchanged run will rarely pass; about {rows:,} {rows_word} "
            "would let it pass four times out of five"
        ), rows
    if margin >= mde:
        return None, None
    if margin < 0:
        return (
            f"the rule asks for an improvement of {-margin:g}, and {_pairs_word(evidence)} "
            f"detect changes of {shown}: the gate passes or fails on noise; to require a "
            f"shown improvement, read it on its interval (add '@ {level} proven')"
        ), None
    if margin == 0:
        return (
            f"a margin of 0 is below what any number of rows can detect: on a change "
            f"smaller than {shown} (what {_pairs_word(evidence)} detect) the gate flips on "
            f"noise; read it on its interval (add '@ {level}') or give it a margin of at "
            f"least {shown}"
        ), None
    rows = rows_to_detect(evidence.units, mde, margin)
    return (
        f"the margin {margin:g} is below what {_pairs_word(evidence)} can detect "
        f"({shown}): the gate will flip on noise; about {rows:,} {rows_word} would detect "
        f"it, or read it on its interval (add '@ {level}')"
    ), rows


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
    units, confidence = pairs.units, rule.confidence or stats.confidence
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
    found = _gate_stats(rule, evidence, unchanged=_identical(pairs))
    return replace(found, shared=pairs.candidates), None


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
    """Both sides' sufficient statistics as arrays with the same columns (the parts
    either side counted; a part a row lacks counts 0)."""
    names, table = corpus_parts([*pairs.current_parts, *pairs.reference_parts])
    return names, table[: pairs.n], table[pairs.n :]


def statistic_evidence(
    metric: str,
    stat: str,
    rows: Sequence[RowResult],
    settings: Settings,
    confidence: float | None = None,
    bound: float | None = None,
) -> Evidence:
    """The interval of one run's ``metric.stat`` over the rows that recorded it (``rows``
    in id order; rows of one session resampled together); ``NotComparable`` when there
    is none, saying why."""
    import numpy as np

    from pytest_ragmetrics.inference.evidence import single_corpus_evidence, single_evidence

    kind, why = interval_kind(metric, stat)
    if kind is None:
        raise NotComparable(why)
    stats = settings.stats
    confidence = confidence or stats.confidence
    if kind == "corpus":
        breakdown = in_force().corpus_stats[metric][0]
        parts, sessions = _breakdowns_of(rows, breakdown)
        names, table = corpus_parts(parts)
        return single_corpus_evidence(
            table,
            reducer(metric, stat, names, settings),
            settings=stats,
            units=_units(sessions),
            confidence=confidence,
            bound=bound,
        )
    values, sessions = _values_of(rows, metric)
    found = single_evidence(
        np.array(values, dtype=float),
        statistic=_STATISTICS[stat],
        settings=stats,
        units=_units(sessions),
        binary=kind == "binary",
        confidence=confidence,
        bound=bound,
    )
    support = value_range(metric)
    if support is None:
        return found
    scale = float(len(values)) if stat == "sum" else 1.0
    return found.held_to(support[0] * scale, support[1] * scale)


def _values_of(
    rows: Sequence[RowResult], metric: str
) -> tuple[list[float], tuple[str | None, ...]]:
    """The values of ``metric`` of the rows that recorded it, in order, and their
    sessions: of a gathered eval read off the store's columns, no row made."""
    if isinstance(rows, StoredRows):
        return rows.column(metric), tuple(rows.sessions(metric=metric))
    having = [row for row in rows if metric in row.values]
    return [row.values[metric] for row in having], tuple(row.session for row in having)


def _breakdowns_of(
    rows: Sequence[RowResult], breakdown: str
) -> tuple[list[Mapping[str, float]], tuple[str | None, ...]]:
    """The breakdown ``breakdown`` of the rows that have it, in order, and their
    sessions (``_values_of`` for a corpus statistic's parts)."""
    if isinstance(rows, StoredRows):
        return list(rows.breakdowns_of(breakdown)), tuple(rows.sessions(breakdown=breakdown))
    having = [row for row in rows if breakdown in row.breakdowns]
    return [row.breakdowns[breakdown] for row in having], tuple(row.session for row in having)


def value_stats(
    gate: Gate, rows: Sequence[RowResult], settings: Settings
) -> tuple[GateStats | None, str | None]:
    """The evidence of a fixed-bound statistical gate (``>= 0.4 @ 95%``): the interval of
    the run's own statistic, or why there is none."""
    rule = gate.rule
    try:
        evidence = statistic_evidence(
            gate.metric, gate.stat, by_id(rows), settings, rule.confidence, rule.null
        )
    except NotComparable as error:
        return None, str(error)
    return GateStats(evidence, rule.reading, rule.null, p_gate=gate_p(rule, evidence)), None


def by_id(rows: Sequence[RowResult]) -> Sequence[RowResult]:
    """``rows`` in id order, so that resampling does not depend on the order they arrived
    in; a gathered eval's rows are ordered in the store, none made (a million rows made
    at once would be a gigabyte at the end of the run), and read as columns
    (``_values_of``)."""
    if isinstance(rows, StoredRows):
        return rows.by_id()
    return sorted(rows, key=_row_id)


def _row_id(row: RowResult) -> str:
    return row.id


def metric_intervals(
    rows: Sequence[RowResult], metrics: Iterable[str], settings: Settings
) -> dict[str, dict[str, Evidence]]:
    """The interval of each per-row metric's mean (its rate for 0/1 values) and of its
    corpus statistics, at the run's confidence, for reports of one run: ``{metric:
    {stat: evidence}}``; metrics without an interval (dataset-level ones) are left out."""
    intervals: dict[str, dict[str, Evidence]] = {}
    ordered = by_id(rows)
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
                found = statistic_evidence(metric, stat, ordered, settings)
            except NotComparable:
                continue  # too few rows: no interval to show
            intervals.setdefault(metric, {})[stat] = found
    return intervals


def _gate_stats(rule: Rule, evidence: Evidence, unchanged: bool) -> GateStats:
    """A comparison's stats. When every pair is unchanged (a run against the very log its
    baseline was stored from) the verdict says so, and a plain rule gets no advice: a
    replay has no noise to flip on. Its MDE is what the interval implies: none for
    values with no spread, Newcombe's for 0/1 values, whose interval keeps the width a
    few unseen discordant pairs could give."""
    told, rows = advice(rule, evidence) if rule.statistical or not unchanged else (None, None)
    return GateStats(
        evidence,
        rule.reading,
        rule.null,
        margin=rule.margin,
        verdict="unchanged" if unchanged else verdict(rule, evidence),
        p_gate=_p(rule, evidence),
        rows_to_detect=rows,
        advice=told,
    )


def adjusted(stats: GateStats, p_adjusted: float, method: Correction) -> GateStats:
    return replace(stats, p_adjusted=p_adjusted, correction=method)
