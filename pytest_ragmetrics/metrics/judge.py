"""The LLM-judge metrics (docs/metrics.md#4-tiered-metrics, #judge-quality) on one row, and
the judge's accounting over an eval.

``faithfulness_judge`` (0-1, the answer against its contexts), ``answer_relevance`` (0-1,
the answer against the question), ``answer_correctness`` (1-5, against the gold answer)
and ``e2e_score`` (0-1, overall usefulness against the gold answer) are one verdict each
from the ``[judge]`` endpoint (``pytest_ragmetrics.judge.client``). ``consistency_score`` judges
the same item twice more, each time anew (never from the first verdict's cache entry),
and scores 1 when the two scores differ by at most 0.5.

Every verdict a row asked for is tallied in the row's ``judge`` detail, failed ones
included, so the eval's ``judge`` statistics (``error_rate``, ``avg_latency_ms``, tokens)
count every row, errored or not. A verdict that cannot be had (the call failed after its
retries, the endpoint is unreachable, the reply is not a verdict) makes the row error;
it is never turned into a score. Judge tokens and latency are the judge's own: they never
enter the row's ``tokens`` or ``latency_ms``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.judge.prompts import PROMPT_NAMES, load_prompt
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Aggregate,
    AggregateContext,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    Presentation,
    Range,
    RunThresholds,
    always,
    golds,
)
from pytest_ragmetrics.metrics.prices import PRICES_TABLE, Prices, dollars

# The client (HTTP, TLS, file locks) and its verdicts are imported when a row is judged:
# the declarations below, which every pytest run imports with the plugin, need neither.
if TYPE_CHECKING:
    from pytest_ragmetrics.inference.settings import StatsSettings
    from pytest_ragmetrics.judge.client import LlmJudge
    from pytest_ragmetrics.judge.config import JudgeConfig
    from pytest_ragmetrics.judge.verdicts import Call, JudgeError
    from pytest_ragmetrics.metrics.hooks import Aggregated

JUDGE_METRICS = ("faithfulness_judge", "answer_relevance", "answer_correctness", "e2e_score")
# The verdicts each judge metric's prompt asks for, in order: the categories a person's
# label (the row's ``human`` field) takes, and the ordinal scale agreement is read on.
VERDICTS: dict[str, tuple[float, ...]] = {
    "faithfulness_judge": (0.0, 0.5, 1.0),
    "answer_relevance": (0.0, 0.5, 1.0),
    "answer_correctness": (1.0, 2.0, 3.0, 4.0, 5.0),
    "e2e_score": (0.0, 0.25, 0.5, 0.75, 1.0),
}
# The row field holding people's labels, ``{metric: label}`` (docs/datasets.md).
HUMAN = "human"
CONSISTENCY = "consistency_score"
# |s1 - s2| <= delta counts as consistent (docs/metrics.md#consistency_score)
CONSISTENCY_DELTA = 0.5
TRUST_ENTAILMENT = "trust_entailment"  # the tally of the Trust-Score judge's verdicts
# The judge's eval-level metric (``JUDGE``), and the row detail its tallies are kept in.
JUDGE_NAME = "judge"
COST_STAT = "cost_usd"  # judge.cost_usd: the judge's tokens at [settings.prices]
# What each metric's prompt is filled with.
_NEEDS: dict[str, tuple[str, ...]] = {
    "faithfulness_judge": ("question", "answer", "contexts"),
    "answer_relevance": ("question", "answer"),
    "answer_correctness": ("question", "answer", "gold"),
    "e2e_score": ("question", "answer", "gold"),
}


class JudgeRowError(RowError):
    """The row could not be judged; ``details`` keeps what the attempt cost."""

    def __init__(self, message: str, details: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.details = details


class JudgeNotConfigured(RowError):
    """A judge metric ran without a ``[judge]`` table in thresholds.toml."""


def needs(metric: str) -> tuple[str, ...]:
    """The row fields a judge metric fills its prompt with."""
    return _NEEDS[metric]


@dataclass
class Tally:
    """The verdicts one row asked one metric for, and what they cost.

    ``replies`` are verdicts that got an answer from the endpoint (parsed or not); their
    latency and tokens are summed (a cached reply keeps what it was measured with).
    ``requests`` counts the HTTP requests sent in this run, retries included.
    """

    verdicts: int = 0
    cached: int = 0
    requests: int = 0
    replies: int = 0
    unparseable: int = 0
    failed: int = 0
    latency_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, call: Call | None, error: JudgeError | None = None) -> None:
        from pytest_ragmetrics.judge.verdicts import UnparseableVerdict

        self.verdicts += 1
        if isinstance(error, UnparseableVerdict):
            self.unparseable += 1
        elif error is not None:
            self.failed += 1
        if call is None:
            return
        self.requests += call.attempts
        self.cached += call.cached
        if error is None or isinstance(error, UnparseableVerdict):
            self.replies += 1
            self.latency_ms += call.latency_ms
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _contexts(row: Row, metric: str) -> str:
    contexts = row.require("contexts", metric)
    blocks = []
    for context in contexts:
        title = f"Title: {context['title']}\n" if context.get("title") else ""
        blocks.append(f"[{context['doc_id']}] {title}{context['text']}")
    return "\n\n".join(blocks)


def prompt_fields(row: Row, metric: str) -> dict[str, str]:
    """The prompt's fields from the row: contexts as ``[doc_id] Title: T`` blocks (so the
    answer's citations can be followed), gold aliases joined by " | "."""
    fields: dict[str, str] = {}
    for name in _NEEDS[metric]:
        if name == "contexts":
            fields[name] = _contexts(row, metric)
        elif name == "gold":
            fields[name] = " | ".join(golds(row, metric))
        else:
            value = row.require(name, metric)
            if not isinstance(value, str):
                raise RowError(f"{row.where(name)}: {metric} needs a string")
            fields[name] = value
    return fields


def _judge_once(
    judge: LlmJudge,
    row: Row,
    metric: str,
    key: str,
    fields: Mapping[str, str],
    repeat: int,
    fresh: bool = False,
) -> tuple[float, str, Tally]:
    from pytest_ragmetrics.judge.verdicts import JudgeError

    tally = Tally()
    try:
        verdict = judge.judge(metric, fields, repeat=repeat, fresh=fresh)
    except JudgeError as error:
        tally.add(error.call, error)
        # from None: the judge's frames stay out of the traceback (pytest -l shows locals).
        raise JudgeRowError(
            f"{row.where()}: {key}: {error}", {JUDGE_NAME: {key: _record(tally, judge)}}
        ) from None
    tally.add(verdict.call)
    return verdict.score, verdict.reason, tally


def human_label(row: Row, metric: str) -> float | None:
    """The person's label of ``metric`` on ``row`` (its ``human`` field), or ``None``; a
    label that names no judge metric, or is not one of the metric's verdicts, errors the
    row, naming the field: a typo must not leave the agreement silently short."""
    labels = row.data.get(HUMAN)
    if labels is None:
        return None
    unknown = sorted(set(labels) - set(JUDGE_METRICS))
    if unknown:
        raise RowError(
            f"{row.where(HUMAN)}: {', '.join(map(repr, unknown))} is no LLM-judge metric; "
            f"label one of {', '.join(JUDGE_METRICS)}"
        )
    if metric not in labels:
        return None
    label = float(labels[metric])
    if label not in VERDICTS[metric]:
        allowed = ", ".join(f"{value:g}" for value in VERDICTS[metric])
        raise RowError(
            f"{row.where(HUMAN)}: the label of {metric} is {labels[metric]!r}; a person labels "
            f"it as the judge is asked to, one of {allowed}"
        )
    return label


def _verdicts(
    judge: LlmJudge, row: Row, metric: str, key: str, fields: Mapping[str, str]
) -> tuple[list[float], str, Tally]:
    """The judge's ``repeats`` verdicts on one item, in the order asked, the first reason
    given, and what they cost; a verdict that cannot be had errors the row with what the
    verdicts before it cost, tallied under ``key``."""
    scores: list[float] = []
    tallies: list[Tally] = []
    reason = ""
    for repeat in range(judge.config.repeats):
        try:
            score, said, tally = _judge_once(judge, row, metric, key, fields, repeat)
        except JudgeRowError as error:
            spent = Tally(**_tally(error.details[JUDGE_NAME][key]))
            error.details = {JUDGE_NAME: {key: _record(_sum([*tallies, spent]), judge)}}
            raise
        scores.append(score)
        tallies.append(tally)
        reason = reason or said
    return scores, reason, _sum(tallies)


def _mean(scores: Sequence[float]) -> float:
    """The mean of a row's verdicts, summed in order: the same float in every process."""
    return math.fsum(scores) / len(scores)


# The key of the previous judge's tally in a row's ``judge`` detail: ``metric`` + this.
PREVIOUS_TALLY = "@previous"


def judge_measure(metric: str) -> Callable[[Row, MetricContext], Measured]:
    """The computation behind one judge metric fixture: the mean of the judge's
    ``repeats`` verdicts; with a previous judge to compare with, its verdicts too."""

    def measure(row: Row, ctx: MetricContext) -> Measured:
        label = human_label(row, metric)  # a bad label errors the row before any request
        judge = ctx.judge()
        fields = prompt_fields(row, metric)
        scores, reason, total = _verdicts(judge, row, metric, metric, fields)
        repeats = len(scores)
        value = _mean(scores)
        record = {**_record(total, judge), "score": value, "reason": reason}
        details: dict[str, Any] = {JUDGE_NAME: {metric: record}}
        if repeats > 1:
            record["scores"] = scores
        # What the metric's own aggregation reads of the row: its verdicts (the spread of
        # repeats; the judge's values on unlabelled rows for the bias-corrected mean).
        kept: dict[str, Any] = {"scores": scores}
        if label is not None:
            kept.update(human=label, row=row.id)
        cached = _cached_text(total.cached, repeats)
        said = reason or "no reason given"
        previous: tuple[str, list[float]] | None = None
        if judge.previous is not None:
            key = metric + PREVIOUS_TALLY
            try:
                before, _, spent = _verdicts(judge.previous, row, metric, key, fields)
            except JudgeRowError as error:  # the new judge's verdicts were had: counted
                error.details = {JUDGE_NAME: {**error.details[JUDGE_NAME], metric: record}}
                raise
            details[JUDGE_NAME][key] = _record(spent, judge.previous)
            kept.update(previous=before, row=row.id)
            previous = (judge.previous.config.model, before)
        details[metric] = kept
        evidence = Evidence(_judge_evidence, judge.label, scores, cached, said, previous)
        return Measured({metric: value}, evidence, details=details)

    return measure


def _judge_evidence(
    label: str,
    scores: list[float],
    cached: str,
    said: str,
    previous: tuple[str, list[float]] | None,
) -> str:
    """A judge metric's evidence: its score (the mean of its repeats, each shown), whether
    the verdicts were cached, the judge's reason, and the previous judge's score."""
    value = _mean(scores)
    if len(scores) == 1:
        evidence = f"{label} scored {value:g}{cached}: {said}"
    else:
        shown = ", ".join(f"{score:g}" for score in scores)
        evidence = f"{label} scored {value:g}, the mean of {shown}{cached}: {said}"
    if previous is not None:
        model, before = previous
        evidence += f"; the previous judge ({model}): {_mean(before):g}"
    return evidence


def _cached_text(cached: int, repeats: int) -> str:
    if not cached:
        return ""
    if repeats == 1:
        return " (cached verdict)"
    return f" ({cached} of {repeats} verdicts cached)"


def measure_consistency(
    row: Row, ctx: MetricContext, metric: str = "faithfulness_judge"
) -> Measured:
    """Judge the row's ``metric`` item twice anew; 1 when the scores differ by <= 0.5."""
    if metric not in JUDGE_METRICS:
        raise TypeError(
            f"consistency_score(row, metric=...) takes one of {', '.join(JUDGE_METRICS)}; "
            f"got {metric!r}"
        )
    judge = ctx.judge()
    fields = prompt_fields(row, metric)
    first, _, tally = _judge_once(judge, row, metric, CONSISTENCY, fields, 1, fresh=True)
    try:
        second, _, again = _judge_once(judge, row, metric, CONSISTENCY, fields, 2, fresh=True)
    except JudgeRowError as error:
        spent = Tally(**_tally(error.details[JUDGE_NAME][CONSISTENCY]))
        error.details = {JUDGE_NAME: {CONSISTENCY: _record(_sum([tally, spent]), judge)}}
        raise
    total = _sum([tally, again])
    consistent = abs(first - second) <= CONSISTENCY_DELTA
    details = {
        JUDGE_NAME: {
            CONSISTENCY: {**_record(total, judge), "metric": metric, "scores": [first, second]}
        }
    }
    verdict = "within" if consistent else "more than"
    evidence = Evidence(
        "{} judged twice anew: {:g} and {:g}, {} {:g} apart",
        metric,
        first,
        second,
        verdict,
        CONSISTENCY_DELTA,
    )
    return Measured({CONSISTENCY: 1.0 if consistent else 0.0}, evidence, details=details)


class TalliedEntailment:
    """The LLM judge as the Trust-Score entailment judge, ``(premise, hypothesis) ->
    bool``, tallying every verdict for the row's ``judge`` detail.

    The one place an ``entailment`` verdict becomes a boolean (``"entailed": true`` is a
    score of 1.0); a verdict that cannot be had makes the row error, with what was spent.
    """

    def __init__(self, judge: LlmJudge, row: Row) -> None:
        self.judge = judge
        self.row = row
        self.tally = Tally()

    def details(self) -> dict[str, Any]:
        if not self.tally.verdicts:
            return {}
        return {JUDGE_NAME: {TRUST_ENTAILMENT: _record(self.tally, self.judge)}}

    def __call__(self, premise: str, hypothesis: str) -> bool:
        from pytest_ragmetrics.judge.verdicts import JudgeError

        fields = {"premise": premise, "hypothesis": hypothesis}
        try:
            verdict = self.judge.judge("entailment", fields)
        except JudgeError as error:
            self.tally.add(error.call, error)
            raise JudgeRowError(
                f"{self.row.where()}: trust entailment: {error}", self.details()
            ) from None
        self.tally.add(verdict.call)
        return verdict.score == 1.0


def _sum(tallies: list[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        for name, value in tally.as_dict().items():
            setattr(total, name, getattr(total, name) + value)
    return total


def merge_judge_details(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Merge two tests' ``judge`` details of one row, per metric, the same whichever
    reported first: a record of verdicts asked of the endpoint wins over one served from
    the cache; two records that both asked (the consistency judgments, which bypass the
    cache) are both counted."""
    merged = dict(old)
    for key, record in new.items():
        if key not in merged:
            merged[key] = record
            continue
        first, second = sorted((merged[key], record), key=lambda r: json.dumps(r, sort_keys=True))
        if first["cached"] or second["cached"]:
            merged[key] = min(first, second, key=lambda r: bool(r["cached"]))
        else:
            total = _sum([Tally(**_tally(first)), Tally(**_tally(second))])
            merged[key] = {**first, **total.as_dict()}
    return merged


def _tally(record: Mapping[str, Any]) -> dict[str, Any]:
    return {name: record[name] for name in Tally.__dataclass_fields__}


# The key of a judge record naming the model of the judge that made its verdicts: the
# judge's tokens are priced by it (``judge_cost``).
JUDGE_MODEL = "model"


def _record(tally: Tally, judge: LlmJudge) -> dict[str, Any]:
    """A tally as a row's ``judge`` detail records it, with the model that spent it."""
    return {**tally.as_dict(), JUDGE_MODEL: judge.config.model}


def judge_cost(
    records: Sequence[Mapping[str, Any]], prices: Prices
) -> tuple[dict[str, float], tuple[str, ...]]:
    """The judge's cost in US dollars over every verdict tallied (``judge.cost_usd``), and
    the lines the reports show of it, when ``[settings.prices]`` exists.

    Each record's prompt and completion tokens at the price of the model of the judge
    that made them (the run's ``[judge]``, or the previous judge of a comparison): the
    same tokens as ``judge.prompt_tokens`` and ``judge.completion_tokens``, so a verdict
    served from the cache counts at what it cost when it was asked. Kept apart from the
    rows' ``cost_usd``, the system's cost. A model without a price gives no cost and a
    line saying so (never a cost of 0); without ``[settings.prices]``, nothing."""
    if not prices:
        return {}, ()
    spent: dict[str, tuple[float, float]] = {}
    for record in records:
        model = str(record.get(JUDGE_MODEL, ""))
        prompt, completion = spent.get(model, (0.0, 0.0))
        spent[model] = (prompt + record["prompt_tokens"], completion + record["completion_tokens"])
    unpriced = sorted(model for model in spent if prices.price(model) is None)
    if unpriced:
        return {}, (
            f"not priced: [settings.{PRICES_TABLE}] has no price for the judge's model "
            f"{', '.join(map(repr, unpriced))}; add it to see judge.{COST_STAT}",
        )
    lines = []
    costs = []
    for model, (prompt, completion) in spent.items():
        price = prices.price(model)
        assert price is not None  # every model was checked above
        cost = price.cost(int(prompt), int(completion))
        costs.append(cost)
        lines.append(
            f"{dollars(cost)}: {prompt:,.0f} prompt + {completion:,.0f} completion tokens of "
            f"{model}"
        )
    total = math.fsum(costs)
    if len(lines) > 1:
        lines.insert(0, f"{dollars(total)} in all")
    return {COST_STAT: total}, tuple(lines)


def judge_statistics(records: list[Mapping[str, Any]]) -> dict[str, float]:
    """The eval's ``judge`` statistics from every row's tallies (errored rows included).

    ``error_rate`` = (unparseable + failed) / verdicts asked for; ``avg_latency_ms`` is
    the mean latency of the verdicts that got a reply.
    """
    fields = Tally.__dataclass_fields__
    total = {name: math.fsum(r.get(name, 0) for r in records) for name in fields}
    statistics = {
        "verdicts": total["verdicts"],
        "cached": total["cached"],
        "requests": total["requests"],
        "unparseable": total["unparseable"],
        "failed": total["failed"],
        "error_rate": (total["unparseable"] + total["failed"]) / total["verdicts"],
        "prompt_tokens": total["prompt_tokens"],
        "completion_tokens": total["completion_tokens"],
        "tokens": total["prompt_tokens"] + total["completion_tokens"],
    }
    if total["replies"]:
        statistics["avg_latency_ms"] = total["latency_ms"] / total["replies"]
    return statistics


def judge_aggregate(
    details: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Mapping[str, float]],
    context: AggregateContext,
) -> Aggregated | None:
    """``JUDGE``'s eval-level statistics: the judge's accounting over every verdict the
    rows asked for (each row's tallies, errored rows included, ``judge_statistics``), and
    ``consistency_score``, the rows' mean (docs/metrics.md#judge-quality), and with
    ``[settings.prices]`` its cost (``judge_cost``); none when no verdict was tallied."""
    records = [record for tallies in details for record in tallies.values()]
    if not records:
        return None
    statistics = judge_statistics(records)
    if CONSISTENCY in metrics:
        statistics[CONSISTENCY] = metrics[CONSISTENCY]["mean"]
    cost, lines = judge_cost(records, context.prices)
    statistics.update(cost)
    from pytest_ragmetrics.metrics.hooks import Aggregated

    return Aggregated(statistics, notes={JUDGE_COST_NOTE: lines} if lines else {})


# A judge metric's statistics of its repeated verdicts (``[judge] repeats`` > 1).
REPEAT_STATS = ("spread", "unstable", "flip_rate")
# Its statistics against the judge it replaces (``--ragmetrics-judge-compare``): the
# change of its mean, and the share of rows whose value changed.
COMPARE_STATS = ("judge_shift", "judge_changed")
# The eval detail holding each judge metric's comparison of two judges, for the reports.
JUDGE_COMPARE = "judge_compare"
# Its agreement with people, over the rows that carry a person's label (``human``): the
# rows labelled, Krippendorff's alpha at the ordinal level (``agreement``), Cohen's kappa
# plain and quadratic-weighted, accuracy, and the bias-corrected (PPI++) mean.
AGREEMENT_STATS = ("labelled", "agreement", "kappa", "weighted_kappa", "accuracy", "ppi_mean")
# The statistics that vouch for the judge metric: a failed gate on one fails the others.
VOUCHING = ("agreement", "kappa", "weighted_kappa", "accuracy")
JUDGE_AGREEMENT = "judge_agreement"  # the eval detail holding each metric's agreement
DISAGREEMENTS_SHOWN = 20  # labelled rows where judge and people differ, listed per metric
CHANGED_SHOWN = 20  # rows whose value changed, listed per metric (all are counted)


def repeat_statistics(
    rows: Sequence[Sequence[float]], bounds: Sequence[Callable[[float], bool]]
) -> dict[str, float]:
    """The statistics of the rows' repeated verdicts (each row's, in the order asked):

    * ``spread``: the judge's noise, the pooled within-row standard deviation,
      sqrt(mean over rows of each row's sample variance, n - 1 in the denominator);
    * ``unstable``: the share of rows whose verdicts are not all the same;
    * ``flip_rate``: the share of rows whose verdicts fall on both sides of a bound of the
      eval's gates on the metric (some pass it, some do not), when it has one.

    Only rows asked more than once count; none such, no statistics."""
    repeated = [scores for scores in rows if len(scores) > 1]
    if not repeated:
        return {}
    variances = []
    for scores in repeated:
        mean = math.fsum(scores) / len(scores)
        variances.append(math.fsum((s - mean) ** 2 for s in scores) / (len(scores) - 1))
    stats = {
        "spread": math.sqrt(math.fsum(variances) / len(variances)),
        "unstable": sum(len(set(scores)) > 1 for scores in repeated) / len(repeated),
    }
    if bounds:
        flipped = sum(
            any(len({passes(score) for score in scores}) > 1 for passes in bounds)
            for scores in repeated
        )
        stats["flip_rate"] = flipped / len(repeated)
    return stats


def judged_aggregate(metric: str) -> Aggregate:
    """A judge metric's eval-level statistics from its rows' details under its name: the
    statistics of the repeated verdicts (``repeat_statistics``)."""

    def aggregate(
        details: Sequence[Mapping[str, Any]],
        metrics: Mapping[str, Mapping[str, float]],
        context: AggregateContext,
    ) -> Aggregated | None:
        stats = repeat_statistics(
            [detail["scores"] for detail in details if "scores" in detail],
            context.bounds.get(metric, ()),
        )
        compared = [detail for detail in details if "previous" in detail]
        said: dict[str, Any] = {}
        notes: dict[str, tuple[str, ...]] = {}
        if compared:
            comparison = judge_comparison(compared, context.stats)
            stats.update(judge_shift=comparison["shift"], judge_changed=comparison["changed_share"])
            said[JUDGE_COMPARE] = {metric: comparison}
            notes[f"{metric}: the previous judge and this one"] = comparison_lines(comparison)
        if any("human" in detail for detail in details):
            found, agreed, lines = people_agreement(metric, details, context.stats)
            stats.update(found)
            said[JUDGE_AGREEMENT] = {metric: agreed}
            notes[f"{metric}: agreement with people"] = lines
        if not stats:
            return None
        from pytest_ragmetrics.metrics.hooks import Aggregated

        return Aggregated(stats, said, notes)

    return aggregate


def judge_comparison(compared: Sequence[Mapping[str, Any]], stats: StatsSettings) -> dict[str, Any]:
    """Two judges on the same rows (each row's detail: the new judge's ``scores``, the
    previous judge's ``previous``, its ``row`` id), in dataset order: each side's mean,
    the paired change of the mean (new minus previous) with its interval at the run's
    confidence (docs/statistics.md, the same evidence a baseline gate computes), the
    share of rows whose value changed, and the first ``CHANGED_SHOWN`` of them."""
    import numpy as np

    from pytest_ragmetrics.inference.evidence import paired_evidence
    from pytest_ragmetrics.inference.resample import Units

    now = np.array([_mean(detail["scores"]) for detail in compared])
    before = np.array([_mean(detail["previous"]) for detail in compared])
    evidence = paired_evidence(
        now,
        before,
        statistic="mean",
        scale="difference",
        settings=stats,
        units=Units.rows(len(compared)),
    )
    changed = [
        {"row": detail["row"], "previous": float(old), "current": float(new)}
        for detail, old, new in zip(compared, before, now, strict=True)
        if old != new
    ]
    return {
        "rows": len(compared),
        "mean": float(now.mean()),
        "previous_mean": float(before.mean()),
        "shift": evidence.estimate,
        "interval": [evidence.low, evidence.high],
        "confidence": evidence.confidence,
        "method": evidence.method,
        "p_value": evidence.p_value,
        "changed_share": len(changed) / len(compared),
        "changed_count": len(changed),
        "changed": changed[:CHANGED_SHOWN],
    }


def verdict_of(scores: Sequence[float], verdicts: Sequence[float]) -> float:
    """One verdict for a row asked ``len(scores)`` times, to count against a person's
    label: the lower median of its verdicts (one of them), moved to the nearest of the
    metric's ``verdicts`` (the lower of two as near) when the judge answered between
    them."""
    middle = sorted(scores)[(len(scores) - 1) // 2]
    return min(verdicts, key=lambda verdict: (abs(verdict - middle), verdict))


def people_agreement(
    metric: str, details: Sequence[Mapping[str, Any]], stats: StatsSettings
) -> tuple[dict[str, float], dict[str, Any], tuple[str, ...]]:
    """A judge metric's agreement with people over its judged rows' details (each: the
    row's verdicts, and a person's ``human`` label on some): the gateable statistics
    (``AGREEMENT_STATS``, those with a value), the JSON report's record, and the lines
    the reports show.

    Agreement is read on the metric's verdicts as an ordinal scale (``VERDICTS``), each
    row's judge value being ``verdict_of`` its verdicts; the bias-corrected mean (PPI++,
    ``inference.agreement.ppi_mean``) uses the row's value itself, the mean of its
    verdicts, on the labelled rows and on the rows nobody labelled."""
    from pytest_ragmetrics.inference.agreement import NotDefined, agreement, ppi_mean

    verdicts = VERDICTS[metric]
    judged = [verdict_of(detail["scores"], verdicts) for detail in details]
    human = [detail.get("human") for detail in details]
    found = agreement(judged, human, scale="ordinal", values=verdicts, settings=stats)
    labelled = [(_mean(d["scores"]), d["human"]) for d in details if "human" in d]
    rest = [_mean(d["scores"]) for d in details if "human" not in d]
    corrected: Any
    if len(labelled) >= 2 and len(rest) >= 2:
        people = [label for _, label in labelled]
        corrected = ppi_mean(
            people, [value for value, _ in labelled], rest, confidence=stats.confidence
        )
    else:
        corrected = NotDefined(
            f"{len(labelled)} labelled and {len(rest)} unlabelled row(s): the bias-corrected "
            "mean needs 2 of each"
        )
    measured = {
        "agreement": found.alpha,
        "kappa": found.kappa,
        "weighted_kappa": found.weighted_kappa,
        "accuracy": found.accuracy,
        "ppi_mean": corrected,
    }
    values = {"labelled": float(found.labelled)}
    values.update(
        {name: got.estimate for name, got in measured.items() if hasattr(got, "estimate")}
    )
    disagree = [
        {"row": d["row"], "judge": j, "human": d["human"]}
        for d, j in zip(details, judged, strict=True)
        if "human" in d and j != d["human"]
    ]
    record = {
        **found.as_dict(),
        "corrected_mean": corrected.as_dict(),
        "judge_mean_labelled": math.fsum(v for v, _ in labelled) / len(labelled),
        "disagreements": disagree[:DISAGREEMENTS_SHOWN],
        "disagreement_count": len(disagree),
    }
    return values, record, _agreement_lines(found.labelled, measured, found, disagree)


def _agreement_lines(
    labelled: int, measured: Mapping[str, Any], found: Any, disagree: Sequence[Mapping[str, Any]]
) -> tuple[str, ...]:
    """A judge metric's agreement with people, as every report words it."""
    names = {
        "agreement": "alpha (ordinal)",
        "kappa": "kappa",
        "weighted_kappa": "weighted kappa",
        "accuracy": "accuracy",
        "ppi_mean": "bias-corrected mean",
    }
    lines = [f"{labelled} labelled row(s)"]
    for name, got in measured.items():
        if got is None:
            continue
        if hasattr(got, "estimate"):
            level = f"{got.confidence * 100:g}%"
            lines.append(
                f"{names[name]} {got.estimate:.3g} [{got.low:.3g}, {got.high:.3g}] at {level}"
            )
        else:
            lines.append(f"{names[name]}: none ({got.reason})")
    if found.confusion is not None:
        lines += _confusion_lines(found.confusion.values, found.confusion.counts)
    lines.append(f"{len(disagree)} labelled row(s) where the judge and people differ")
    for row in disagree[:DISAGREEMENTS_SHOWN]:
        lines.append(f"  {row['row']}: judge {row['judge']:g}, people {row['human']:g}")
    return tuple(lines)


def _confusion_lines(values: Sequence[float], counts: Sequence[Sequence[int]]) -> list[str]:
    """The confusion table, a row per judge verdict, a column per person's label."""
    heads = [f"{value:g}" for value in values]
    width = max(len(text) for text in [*heads, *(str(c) for row in counts for c in row)])
    corner = "judge \\ people"
    lines = [corner + "".join(f"  {head:>{width}}" for head in heads)]
    for head, row in zip(heads, counts, strict=True):
        cells = "".join(f"  {count:>{width}}" for count in row)
        lines.append(f"{head:>{len(corner)}}{cells}")
    return lines


def comparison_lines(comparison: Mapping[str, Any]) -> tuple[str, ...]:
    """Two judges compared, as every report words it."""
    low, high = comparison["interval"]
    p = comparison["p_value"]
    level = f"{comparison['confidence'] * 100:g}%"
    lines = [
        f"mean {comparison['previous_mean']:.4g} -> {comparison['mean']:.4g} over "
        f"{comparison['rows']} rows: change {comparison['shift']:+.3g} "
        f"[{low:+.3g}, {high:+.3g}] at {level}" + (f", p {p:.2g}" if p is not None else ""),
        f"{comparison['changed_count']} of {comparison['rows']} rows changed their value",
    ]
    for changed in comparison["changed"]:
        lines.append(f"  {changed['row']}: {changed['previous']:g} -> {changed['current']:g}")
    more = comparison["changed_count"] - len(comparison["changed"])
    if more:
        lines.append(f"  and {more} more (every row's verdicts are in the JSON report)")
    return tuple(lines)


def judge_run_signature(thresholds: RunThresholds) -> dict[str, str] | None:
    """What an eval that used the judge adds to its baseline's signature: the judge's
    (``judge_signature``), when the run has one; scores of another judge differ."""
    return None if thresholds.judge is None else judge_signature(thresholds.judge)


def judge_signature(config: JudgeConfig) -> dict[str, str]:
    """What makes judge scores comparable with a stored baseline: the model, the prompts
    and a temperature other than 0 (not the endpoint's address, which differs between
    machines, nor ``repeats``: a mean of several verdicts estimates the same score)."""
    prompts = hashlib.sha256()
    for name in PROMPT_NAMES:
        prompts.update(load_prompt(name, config.prompts).encode())
    signed = {"model": config.model, "prompts_sha256": prompts.hexdigest()[:16]}
    if config.temperature:
        signed["temperature"] = f"{config.temperature:g}"
    return signed


# -- the metric fixtures and the judge's statistics --------------------------------------

# The LLM judge's accounting and quality over an eval (``judge_statistics``, plus the
# rows' mean ``consistency_score``).
JUDGE_STATS = (
    "verdicts",
    "cached",
    "requests",
    "unparseable",
    "failed",
    "error_rate",
    "avg_latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "tokens",
    COST_STAT,
    "consistency_score",
)
# The title of the judge's cost in every report's notes.
JUDGE_COST_NOTE = "LLM judge cost"
# Judge-quality numbers that may be named alone, as docs/metrics.md#judge-quality names them.
JUDGE_QUALITY = ("consistency_score", "error_rate", "avg_latency_ms")
JUDGE = MetricInfo(
    JUDGE_NAME,
    "the LLM judge's calls, errors, latency and tokens",
    dataset=JUDGE_STATS,
    aggregate=judge_aggregate,
    merge=merge_judge_details,
    signature=judge_run_signature,
    presentation=Presentation(
        formats={
            "avg_latency_ms": "ms",
            "prompt_tokens": "integer",
            "completion_tokens": "integer",
            "tokens": "integer",
            COST_STAT: "usd",
        }
    ),
)

# metric -> (fixture doc, registry description, range)
_JUDGED: dict[str, tuple[str, str, Range]] = {
    "faithfulness_judge": (
        "LLM judge ([judge] in thresholds.toml): the answer is supported by its contexts, 0-1.",
        "LLM judge: the answer is supported by its contexts, 0-1",
        UNIT,
    ),
    "answer_relevance": (
        "LLM judge ([judge] in thresholds.toml): the answer addresses the question, 0-1.",
        "LLM judge: the answer addresses the question, 0-1",
        UNIT,
    ),
    "answer_correctness": (
        "LLM judge ([judge] in thresholds.toml): correctness of the answer against the gold "
        "answer, 1-5.",
        "LLM judge: correctness against the gold answer, 1-5",
        (1.0, 5.0),
    ),
    "e2e_score": (
        "LLM judge ([judge] in thresholds.toml): overall usefulness of the answer against the "
        "gold answer, 0-1.",
        "LLM judge: overall usefulness against the gold answer, 0-1",
        UNIT,
    ),
}

# Why the judged metrics take no generated property test.
NEEDS_A_JUDGE = "each value is an LLM judge's verdict, which needs a judge server ([judge])"

SPECS = (
    *(
        MetricSpec(
            metric,
            doc + " A verdict that cannot be had makes the row error; it is never a score.",
            (
                MetricInfo(
                    metric,
                    description,
                    range=value_range,
                    derived=(*REPEAT_STATS, *COMPARE_STATS, *AGREEMENT_STATS),
                    vouching=VOUCHING,
                    aggregate=judged_aggregate(metric),
                ),
            ),
            needs(metric),
            judge_measure(metric),
            untested={"properties": NEEDS_A_JUDGE},
            asks_judge=always,
        )
        for metric, (doc, description, value_range) in _JUDGED.items()
    ),
    MetricSpec(
        CONSISTENCY,
        "LLM judge quality: judges the row's metric (default faithfulness_judge) twice anew; "
        f"1 when the two scores differ by <= {CONSISTENCY_DELTA:g}, else 0.",
        (
            MetricInfo(
                CONSISTENCY,
                "LLM judge: two fresh verdicts differ by <= 0.5",
                kind="binary",
                range=UNIT,
            ),
        ),
        ("question", "answer"),
        measure_consistency,
        options=("metric",),
        untested={"properties": NEEDS_A_JUDGE},
        asks_judge=always,
    ),
)
DERIVED = (JUDGE,)
