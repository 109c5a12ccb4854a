"""Per-row computations of the retrieval, text, repeat and judge-pipeline metrics (Tier 1,
Tier 2, judge pipeline), behind the metric fixtures of ``pytest_ragmetrics.plugin.fixtures``.

Each is ``measure(row, ctx, **options) -> Measured`` over the pure functions of
``pytest_ragmetrics.metrics``; a missing or malformed field raises ``RowError`` naming the
file, line and field.
"""

from __future__ import annotations

from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import Compute, Measured, MetricContext, claim_text, golds
from pytest_ragmetrics.metrics.classification import Confusion
from pytest_ragmetrics.metrics.corpus import BLEU_STATS, JUDGE_PIPELINE_COUNTS
from pytest_ragmetrics.metrics.grounding import cosine
from pytest_ragmetrics.metrics.judge import TalliedEntailment
from pytest_ragmetrics.metrics.retrieval import (
    NEEDS_CUTOFF,
    as_qrels,
    parse_metric,
    retrieval_consistency,
    score_queries,
)
from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE, Judge, judge_for
from pytest_ragmetrics.metrics.trust.suite import (
    TrustInputError,
    TrustItem,
    judge_texts,
    row_trust,
    trust_item,
)
from pytest_ragmetrics.text.citations import strip_citations

GAINS = {"linear": "ndcg", "exponential": "ndcg_exp"}

# -- retrieval (Tier 1) ------------------------------------------------------------------


def ranking_field(row: Row, metric: str) -> str:
    """Where the row's ranking comes from: ``retrieved``, else ``contexts``."""
    for name in ("retrieved", "contexts"):
        if name in row.data:
            return name
    raise RowError(f"{row.where('retrieved')}: required by {metric} but missing (no contexts)")


def ranking(row: Row, metric: str) -> list[str]:
    """The row's ranked doc ids: ``retrieved``, else the order of its ``contexts``, where
    several chunks of one document count once, at the first one's rank."""
    if ranking_field(row, metric) == "retrieved":
        return list(row["retrieved"])
    return list(dict.fromkeys(row.context_ids))


def _cutoff(metric: str, k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise TypeError(f"{metric}(row, k=...): k must be an integer >= 1, got {k!r}")
    return k


def _retrieval_name(fixture: str, family: str, k: int | None) -> str:
    if k is None and family in NEEDS_CUTOFF:
        raise TypeError(f"{fixture}(row, k=...) needs a cutoff, e.g. {fixture}(row, k=10)")
    return parse_metric(family if k is None else f"{family}@{k}").name


def _rank_evidence(ranked: list[str], qrels: dict[str, float], k: int | None) -> str:
    relevant = {doc for doc, grade in qrels.items() if grade > 0}
    ranks = [str(i + 1) for i, doc in enumerate(ranked) if doc in relevant]
    where = f"relevant at rank {', '.join(ranks)}" if ranks else "no relevant doc retrieved"
    cut = f"; cutoff {k}" if k is not None else ""
    return f"{where} of {len(ranked)} retrieved ({len(relevant)} relevant in qrels{cut})"


def retrieval_measure(family: str) -> Compute:
    """The per-row computation of one retrieval family, through ``score_queries``: the
    same code as the batch ``evaluate``."""

    def measure(
        row: Row, ctx: MetricContext, k: int | None = None, gain: str = "linear"
    ) -> Measured:
        cut = _cutoff(family, k)
        name_family = family
        if family == "ndcg":
            if gain not in GAINS:
                raise ValueError(f"ndcg(row, gain=...): use one of {', '.join(GAINS)}")
            name_family = GAINS[gain]
        name = _retrieval_name(family, name_family, cut)
        qrels = as_qrels(row.require("relevant", family))
        ranked = ranking(row, family)
        if not qrels:
            raise RowError(f"{row.where('relevant')}: {family} needs at least one judgement")
        try:
            values = score_queries([row.id], {row.id: qrels}, [ranked], [name])
        except ValueError as error:
            raise RowError(f"{row.where(ranking_field(row, family))}: {error}") from None
        value = float(values[name][0])
        return Measured({name: value}, _rank_evidence(ranked, qrels, cut), primary=name)

    return measure


def measure_retrieval_consistency(row: Row, ctx: MetricContext, k: int | None = None) -> Measured:
    metric = "retrieval_consistency"
    cut = _cutoff(metric, k)
    name = metric if cut is None else f"{metric}@{cut}"
    repeats = row.require("retrieved_repeats", metric)
    if not repeats:
        raise RowError(f"{row.where('retrieved_repeats')}: {metric} needs at least one repeat")
    first = ranking(row, metric)
    value = retrieval_consistency(first, repeats, cut)
    same = round(value * len(repeats))
    evidence = f"{same} of {len(repeats)} repeated retrievals equal the first" + (
        f" in the top {cut}" if cut is not None else ""
    )
    return Measured({name: value}, evidence, primary=name)


# -- text (Tier 2) ---------------------------------------------------------------------------


def measure_rouge(metric: str) -> Compute:
    def measure(row: Row, ctx: MetricContext) -> Measured:
        from pytest_ragmetrics.metrics.text import rouge

        if "rouge" not in ctx.memo:  # rouge1, rouge2 and rougeL of one test share it
            answer = claim_text(row, metric, ctx.settings)
            ctx.memo["rouge"] = rouge(answer, golds(row, metric), ctx.settings.rouge_use_stemmer)
        value = float(getattr(ctx.memo["rouge"], metric))
        return Measured({metric: value}, f"{metric} F-measure, best of the gold(s)")

    return measure


def measure_bleu(row: Row, ctx: MetricContext) -> Measured:
    from pytest_ragmetrics.metrics.text import sentence_bleu

    result = sentence_bleu(claim_text(row, "bleu", ctx.settings), golds(row, "bleu"))
    stats = result.stats
    evidence = (
        f"sentence BLEU {result.score:.2f}: {stats.sys_len} hypothesis / {stats.ref_len} "
        f"reference tokens, matched n-grams {'/'.join(map(str, stats.correct))}"
    )
    return Measured({"bleu": result.score}, evidence, {BLEU_STATS: stats.as_dict()})


# -- repeats: consistency of the answer over reruns (Tier 2/3) ---------------------------------


def _repeats(row: Row, metric: str) -> list[str]:
    repeats = list(row.require("repeats", metric))
    if not repeats:
        raise RowError(f"{row.where('repeats')}: {metric} needs at least one repeat")
    return repeats


def measure_exact_repeats(row: Row, ctx: MetricContext) -> Measured:
    from pytest_ragmetrics.metrics.text import response_exact_match_rate

    metric = "response_exact_match_rate"
    repeats = _repeats(row, metric)
    value = response_exact_match_rate(row.require("answer", metric), repeats)
    evidence = f"{round(value * len(repeats))} of {len(repeats)} repeats equal the answer"
    return Measured({metric: value}, evidence)


def semantic_repeat_texts(row: Row, settings: Settings) -> list[str]:
    metric = "response_semantic_consistency"
    answer = strip_citations(row.require("answer", metric), settings.citations)
    repeats = [strip_citations(r, settings.citations) for r in _repeats(row, metric)]
    return [answer, *repeats]


def measure_semantic_repeats(row: Row, ctx: MetricContext) -> Measured:
    metric = "response_semantic_consistency"
    answer, *repeats = semantic_repeat_texts(row, ctx.settings)
    vectors = ctx.embed([answer, *repeats])
    cosines = [cosine(vectors[0], vector) for vector in vectors[1:]]
    value = sum(cosines) / len(cosines)
    evidence = "cosine of each repeat to the answer: " + ", ".join(f"{c:.3f}" for c in cosines)
    return Measured({metric: value}, evidence)


# -- judge pipeline ------------------------------------------------------------------------------

_CELL_NAMES = {
    "tp": "true positive",
    "fp": "false positive",
    "fn": "false negative",
    "tn": "true negative",
}


def measure_judge_pipeline(row: Row, ctx: MetricContext) -> Measured:
    metric = "judge_pipeline"
    show, should = row.require("show", metric), row.require("show_gold", metric)
    cell = Confusion.of(show, should)
    name = next(n for n, count in cell.counts().items() if count)
    evidence = (
        f"{'shown' if show else 'not shown'}, {'should' if should else 'should not'} be "
        f"({_CELL_NAMES[name]})"
    )
    return Measured(
        {metric: float(show == should)}, evidence, {JUDGE_PIPELINE_COUNTS: cell.counts()}
    )


# -- Trust-Score suite --------------------------------------------------------------------------


def _trust_item(row: Row) -> TrustItem:
    try:
        return trust_item(row.data, row.where())
    except TrustInputError as error:
        raise RowError(str(error)) from None


def trust_texts(row: Row, settings: Settings) -> list[str]:
    """What the embedding judge will embed for the row (nothing for a table judge)."""
    if settings.trust_judge != "embedding":
        return []
    return judge_texts(_trust_item(row))


def measure_trust(row: Row, ctx: MetricContext) -> Measured:
    """The row's Trust-Score statistics, recorded for the eval's numbers; the fixture
    returns the row's calibrated STR-EM (0-100) with the rest as evidence."""
    settings = ctx.settings
    tallied = None
    if settings.trust_judge == LLM_TRUST_JUDGE:
        tallied = TalliedEntailment(ctx.judge(), row)
        judge: Judge = tallied
    else:
        judge = judge_for(
            settings.trust_judge, settings.base_dir, ctx.embed, settings.trust_judge_tau
        )
    stats = row_trust(_trust_item(row), judge, settings.refusal_flag, settings.refusal_threshold)
    citation = (
        "no sentence to cite from"
        if stats.citation is None
        else f"citation recall {stats.citation.recall:.3g}, precision "
        f"{stats.citation.precision:.3g} over {stats.citation.sentences} sentence(s)"
    )
    evidence = (
        f"{'refused' if stats.refused else 'answered'}, "
        f"{'answerable' if stats.answerable else 'unanswerable'}; STR-EM {stats.str_em:.3g}, "
        f"calibrated {stats.calib_str_em:.3g}; {citation}"
    )
    details = {"trust": stats.as_dict(), **(tallied.details() if tallied else {})}
    return Measured({}, evidence, details=details, score=100 * stats.calib_str_em)
