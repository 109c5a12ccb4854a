"""Retrieval metrics (Tier 1), vectorised over queries, equal to trec_eval.

Names are ranx-style: ``hit_rate@k``, ``mrr``, ``mrr@k``, ``recall@k``, ``precision@k``,
``ndcg``, ``ndcg@k``, ``ndcg_exp`` and ``ndcg_exp@k``. For each query:

* a document is *relevant* when its grade in the qrels is > 0 (trec_eval's relevance
  level 1 for integer grades); a judged document with grade 0 or less is non-relevant,
  an unjudged one too;
* ``hit_rate@k`` is 1 when a relevant document is among the first k retrieved (trec_eval
  ``success_k``);
* ``precision@k`` is the number of relevant documents among the first k, divided by k even
  when fewer than k were retrieved (trec_eval ``P_k``);
* ``recall@k`` divides the same number by the number of relevant documents in the qrels,
  retrieved or not; a query with none scores 0 (trec_eval ``recall_k``);
* ``mrr`` is 1/rank of the first relevant document, 0 when none was retrieved (trec_eval
  ``recip_rank``, no cutoff); ``mrr@k`` looks at the first k documents only;
* ``ndcg@k`` is DCG@k / IDCG@k with linear gain (the grade), discount log2(rank + 1) for
  1-based ranks, and the ideal ranking built from *all* relevant documents of the qrels;
  0 when the qrels have no relevant document (trec_eval ``ndcg_cut_k``; ``ndcg`` without a
  cutoff is trec_eval ``ndcg``). ``ndcg_exp`` uses the exponential gain 2^grade - 1.

A run gives, per query, either scores (``{doc_id: score}``, ranked by score descending,
ties broken by doc id descending, as trec_eval does; like trec_eval, scores are compared as
32-bit floats, so scores equal at that precision tie) or a ranked list
(``[doc_id, ...]``, best first). A query of the qrels that is absent from the run is left
out of the mean (trec_eval) and listed in ``Evaluation.missing``; a query of the run that
the qrels do not judge is left out too and listed in ``Evaluation.unjudged``. A query whose
ranking is *empty* is evaluated and scores 0 on every metric (pytrec_eval does the same).

The per-row fixtures and ``evaluate`` share ``score_queries``: every metric is computed
from the ranks of each query's relevant documents only, so the cost is one comparison of
each relevant document's score with the query's scores, vectorised over all queries.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    Compute,
    Cutoff,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
)

Qrels = Mapping[str, Mapping[str, float]]
Ranking = Mapping[str, float] | Sequence[str]
Run = Mapping[str, Ranking]
FloatArray = npt.NDArray[np.float64]

Family = Literal["hit_rate", "mrr", "recall", "precision", "ndcg", "ndcg_exp"]
FAMILIES: tuple[Family, ...] = ("hit_rate", "mrr", "recall", "precision", "ndcg", "ndcg_exp")
NEEDS_CUTOFF = frozenset({"hit_rate", "recall", "precision"})
_NAME = re.compile(r"^(?P<family>[a-z_]+?)(?:@(?P<k>[0-9]+))?$")
# Bounds the (queries x relevant x retrieved) comparison block, in elements.
_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class RetrievalMetric:
    """A parsed metric name: its family and cutoff (``None``: the whole ranking)."""

    family: Family
    k: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"


def parse_metric(name: str) -> RetrievalMetric:
    """``"ndcg@10"`` -> ``RetrievalMetric("ndcg", 10)``; ``ValueError`` names the problem."""
    match = _NAME.match(name)
    family = match.group("family") if match else None
    if match is None or family not in FAMILIES:
        raise ValueError(
            f"unknown retrieval metric {name!r}; use one of "
            + ", ".join(f"{f}@k" if f in NEEDS_CUTOFF else f"{f}[@k]" for f in FAMILIES)
        )
    k = int(match.group("k")) if match.group("k") is not None else None
    if k is not None and k < 1:
        raise ValueError(f"{name!r}: the cutoff k must be at least 1")
    if k is None and family in NEEDS_CUTOFF:
        raise ValueError(f"{name!r} needs a cutoff, e.g. {family}@10")
    return RetrievalMetric(family, k)


@dataclass(frozen=True)
class JudgedRanks:
    """Per query, what every metric needs: the grades of the relevant documents (grade > 0,
    padded with 0), their 0-based ranks in the run (``inf`` when not retrieved or padding)
    and how many documents were retrieved. Shapes: (queries, width), (queries, width),
    (queries,)."""

    grades: FloatArray
    ranks: FloatArray
    retrieved: npt.NDArray[np.int64]


def _discount(ranks: FloatArray) -> FloatArray:
    return np.log2(ranks + 2.0)


def _gain(grades: FloatArray, family: Family) -> FloatArray:
    return np.exp2(grades) - 1.0 if family == "ndcg_exp" else grades


def _ndcg(judged: JudgedRanks, metric: RetrievalMetric) -> FloatArray:
    cutoff = math.inf if metric.k is None else metric.k
    gains = _gain(judged.grades, metric.family)
    hit = judged.ranks < cutoff
    dcg = np.where(hit, gains / _discount(np.where(hit, judged.ranks, 0.0)), 0.0).sum(axis=1)
    ideal_gains = -np.sort(-gains, axis=1)  # best grades first; padding (gain 0) last
    positions = np.arange(ideal_gains.shape[1], dtype=np.float64)
    ideal_terms = np.where(positions < cutoff, ideal_gains / _discount(positions), 0.0)
    ideal = ideal_terms.sum(axis=1)
    values: FloatArray = np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)
    return values


def metric_values(judged: JudgedRanks, metric: RetrievalMetric) -> FloatArray:
    """One metric for every query of ``judged``; the definitions are in the module doc."""
    if metric.family in ("ndcg", "ndcg_exp"):
        return _ndcg(judged, metric)
    cutoff = math.inf if metric.k is None else metric.k
    relevant = judged.grades > 0
    found = relevant & (judged.ranks < cutoff)
    count = found.sum(axis=1).astype(np.float64)
    values: FloatArray
    if metric.family == "mrr":
        first = np.where(found, judged.ranks, np.inf).min(axis=1, initial=np.inf)
        values = 1.0 / (first + 1.0)
    elif metric.family == "hit_rate":
        values = (count > 0).astype(np.float64)
    elif metric.family == "precision":
        values = count / float(cutoff)
    else:  # recall
        total = relevant.sum(axis=1).astype(np.float64)
        values = np.divide(count, total, out=np.zeros_like(count), where=total > 0)
    return values


# -- building the ranks from Python data ------------------------------------------------


def _relevant_docs(judgements: Mapping[str, float]) -> tuple[list[str], list[float]]:
    docs = [doc for doc, grade in judgements.items() if grade > 0]
    return docs, [float(judgements[doc]) for doc in docs]


def _pad(rows: Sequence[Sequence[float]], width: int, fill: float) -> FloatArray:
    """Rows of unequal length as one (len(rows), width) array padded with ``fill``."""
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=int(lengths.sum()))
    if len(rows) and (lengths == width).all():
        return flat.reshape(len(rows), width)
    out = np.full((len(rows), width), fill)
    row_index = np.repeat(np.arange(len(rows)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[row_index, np.arange(flat.size) - starts] = flat
    return out


def _break_ties(
    ranks: FloatArray,
    q: int,
    scores: npt.NDArray[np.float32],
    judged: npt.NDArray[np.float32],
    ids: list[str],
    docs: Sequence[str],
    columns: Sequence[int],
) -> None:
    """Add to each tied document's rank the documents of equal 32-bit score that trec_eval
    puts above it: equal scores go by doc id descending."""
    groups: dict[float, list[str]] = {}  # score -> its documents' ids, sorted
    for column in columns:
        value = float(judged[column])
        if value not in groups:
            equal = np.flatnonzero(scores == judged[column])
            members = ids if equal.size == len(ids) else [ids[i] for i in equal.tolist()]
            groups[value] = sorted(members)
        group = groups[value]
        ranks[q, column] += len(group) - bisect.bisect_right(group, docs[column])


def _score_ranks(
    scored: Sequence[Mapping[str, float]], docs: Sequence[Sequence[str]], width: int
) -> FloatArray:
    """Ranks of each query's ``docs`` in its scored run, vectorised over the queries."""
    longest = max(map(len, scored), default=0)
    # trec_eval keeps scores as 32-bit floats: scores equal at that precision are a tie.
    all_scores = _pad([list(s.values()) for s in scored], longest, -math.inf).astype(np.float32)
    if np.isnan(all_scores).any():
        raise ValueError("run scores must be numbers (found NaN)")
    lookups = [[s.get(d, math.nan) for d in ds] for s, ds in zip(scored, docs, strict=True)]
    judged = _pad(lookups, width, math.nan).astype(np.float32)
    ranks = np.full(judged.shape, math.inf)
    block = max(1, _BLOCK_ELEMENTS // max(1, width * longest))
    for start in range(0, len(scored), block):
        part = slice(start, start + block)
        mine = judged[part][:, :, None]
        theirs = all_scores[part][:, None, :]
        ranks[part] = (theirs > mine).sum(axis=2)
        ties = (theirs == mine).sum(axis=2) > 1  # rare: equal scores need the doc ids
        for query in np.flatnonzero(ties.any(axis=1)).tolist():
            q = start + query
            ids = list(scored[q])  # the column order of all_scores[q], before its padding
            columns = np.flatnonzero(ties[query]).tolist()
            _break_ties(ranks, q, all_scores[q, : len(ids)], judged[q], ids, docs[q], columns)
    ranks[np.isnan(judged)] = math.inf
    return ranks


def _list_ranks(qid: str, ranking: Sequence[str], docs: Sequence[str]) -> list[float]:
    position = dict(zip(ranking, range(len(ranking)), strict=True))
    if len(position) != len(ranking):
        seen: set[str] = set()
        twice = next(doc for doc in ranking if doc in seen or seen.add(doc))  # type: ignore[func-returns-value]
        raise ValueError(f"query {qid!r}: the ranking lists {twice!r} more than once")
    return [float(position.get(doc, math.inf)) for doc in docs]


def judge_rankings(qids: Sequence[str], qrels: Qrels, rankings: Sequence[Ranking]) -> JudgedRanks:
    """The ranks of each query's relevant documents in its ranking (scores or a list)."""
    relevant = [_relevant_docs(qrels[qid]) for qid in qids]
    width = max((len(docs) for docs, _ in relevant), default=0)
    grades = _pad([g for _, g in relevant], width, 0.0)
    ranks = np.full((len(qids), width), math.inf)
    scored_at = [i for i, r in enumerate(rankings) if isinstance(r, Mapping)]
    if scored_at:
        scored = [rankings[i] for i in scored_at]
        docs = [relevant[i][0] for i in scored_at]
        ranks[scored_at] = _score_ranks(scored, docs, width)  # type: ignore[arg-type]
    for i, ranking in enumerate(rankings):
        if not isinstance(ranking, Mapping):
            if isinstance(ranking, str):
                raise ValueError(f"query {qids[i]!r}: a ranking is a list of doc ids, not a string")
            ranks[i, : len(relevant[i][0])] = _list_ranks(qids[i], ranking, relevant[i][0])
    retrieved = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
    return JudgedRanks(grades, ranks, retrieved)


def score_queries(
    qids: Sequence[str], qrels: Qrels, rankings: Sequence[Ranking], metrics: Iterable[str]
) -> dict[str, FloatArray]:
    """Every metric for every query, in ``qids`` order: ``{name: values}``."""
    parsed = [parse_metric(name) for name in metrics]
    judged = judge_rankings(qids, qrels, rankings)
    return {metric.name: metric_values(judged, metric) for metric in parsed}


class Evaluation(dict[str, float]):
    """``{metric name: mean over the evaluated queries}``, plus which queries those were.

    ``queries`` is how many were evaluated; ``missing`` lists qrels queries absent from the
    run and ``unjudged`` run queries absent from the qrels (both left out of the means).
    """

    queries: int
    missing: tuple[str, ...]
    unjudged: tuple[str, ...]

    def __init__(
        self,
        means: Mapping[str, float],
        queries: int,
        missing: Sequence[str],
        unjudged: Sequence[str],
    ) -> None:
        super().__init__(means)
        self.queries, self.missing, self.unjudged = queries, tuple(missing), tuple(unjudged)


def evaluate(qrels: Qrels, run: Run, metrics: Iterable[str]) -> Evaluation:
    """Mean of each metric over the queries both ``qrels`` and ``run`` have (trec_eval).

    ``qrels = {qid: {doc_id: grade}}``; ``run = {qid: {doc_id: score}}`` or
    ``{qid: [doc_id, ...]}`` (ranked); ``metrics`` like ``["ndcg@10", "mrr", "hit_rate@5"]``.
    A query whose qrels are empty (``{}``) has no judgement and is unjudged, as in trec_eval,
    whose qrels cannot express it. Raises ``ValueError`` for an unknown metric name, a NaN
    score, a doc id listed twice in a ranking, or when no query is in both (there would be
    no mean).
    """
    names = list(dict.fromkeys(metrics))
    for name in names:
        parse_metric(name)
    judged = {qid for qid, judgements in qrels.items() if judgements}
    qids = [qid for qid in run if qid in judged]
    if not qids:
        raise ValueError("no query of the run is judged in the qrels: there is nothing to average")
    values = score_queries(qids, qrels, [run[qid] for qid in qids], names)
    means = {name: math.fsum(values[name].tolist()) / len(qids) for name in names}
    missing = sorted(qid for qid in judged if qid not in run)
    unjudged = sorted(qid for qid in run if qid not in judged)
    return Evaluation(means, len(qids), missing, unjudged)


def as_qrels(relevant: Any) -> dict[str, float]:
    """A row's ``relevant`` field as qrels: a list of doc ids is grade 1 for each."""
    if isinstance(relevant, Mapping):
        return {str(doc): float(grade) for doc, grade in relevant.items()}
    return dict.fromkeys(map(str, relevant), 1.0)


def retrieval_consistency(
    first: Sequence[str], repeats: Sequence[Sequence[str]], k: int | None = None
) -> float:
    """Share of ``repeats`` (further retrievals of the same question) whose top k equals
    the first retrieval's top k, order included; the whole lists when ``k`` is None.
    No repeats is a ``ValueError``: there is nothing to be consistent with."""
    if not repeats:
        raise ValueError("retrieval_consistency needs at least one repeated retrieval")
    if k is not None and k < 1:
        raise ValueError(f"retrieval_consistency: k must be at least 1, got {k}")
    top = list(first[:k])
    return sum(list(repeat[:k]) == top for repeat in repeats) / len(repeats)


# -- the metric fixtures ----------------------------------------------------------------

GAINS = {"linear": "ndcg", "exponential": "ndcg_exp"}


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


_RANKING_DOC = (
    " The ranking is the row's retrieved ids, else its contexts' doc ids in order (a "
    "document's chunks count once); relevant holds the ids (grade 1) or id -> grade."
)


def _family(
    name: str, doc: str, records: tuple[tuple[str, str], ...], cutoff: Cutoff, binary: bool
) -> MetricSpec:
    infos = tuple(
        MetricInfo(metric, description, binary=binary, cutoff=cutoff)
        for metric, description in records
    )
    options = ("k", "gain") if name == "ndcg" else ("k",)
    return MetricSpec(
        name, doc + _RANKING_DOC, infos, ("relevant",), retrieval_measure(name), options=options
    )


SPECS = (
    _family(
        "hit_rate",
        "1 when a relevant doc is in the top k, else 0; k is required (records hit_rate@k).",
        (("hit_rate", "a relevant doc is in the top k"),),
        "required",
        True,
    ),
    _family(
        "mrr",
        "1 / rank of the first relevant doc (0 when none is within k), 0-1; records mrr, or "
        "mrr@k with k.",
        (("mrr", "1 / rank of the first relevant doc (within k)"),),
        "optional",
        False,
    ),
    _family(
        "recall",
        "Relevant docs in the top k / all relevant docs, 0-1; k is required (recall@k).",
        (("recall", "relevant docs in the top k / all relevant docs"),),
        "required",
        False,
    ),
    _family(
        "precision",
        "Relevant docs in the top k / k, 0-1; k is required (precision@k).",
        (("precision", "relevant docs in the top k / k"),),
        "required",
        False,
    ),
    _family(
        "ndcg",
        "nDCG (within k when given), 0-1: graded gains with a log2 discount over the ideal "
        "ranking; gain='linear' records ndcg, gain='exponential' (2^grade - 1) ndcg_exp.",
        (
            ("ndcg", "nDCG (within k), linear gain"),
            ("ndcg_exp", "nDCG (within k), gain 2^grade - 1"),
        ),
        "optional",
        False,
    ),
    MetricSpec(
        "retrieval_consistency",
        "Share of the repeated retrievals (retrieved_repeats) whose top k equals the first "
        "ranking's top k, order included (the whole lists without k), 0-1.",
        (
            MetricInfo(
                "retrieval_consistency",
                "share of repeated retrievals equal in the top k",
                cutoff="optional",
            ),
        ),
        ("retrieved_repeats",),
        measure_retrieval_consistency,
        options=("k",),
    ),
)
