"""Each retrieval measure's formula, written once, over the ranks of one query or many.

A ``Ranked`` holds, per query, the grades and 0-based ranks of the judged documents a
measure needs, in qrels order, and how many documents the query retrieved; its
``value`` computes one measure for every query it holds. The arrays are those of
``arrays.py``: ``COLUMNS`` (numpy, a row per query; what ``evaluate`` and
``score_queries`` run, 1,024 queries at a time) or ``ONE_QUERY`` (lists; what a row's
fixtures run, ``query.py``). The same formula gives the same float for a query either
way, and ``tests/unit/metrics/test_retrieval_query.py`` checks it bit for bit.

Conventions every formula shares:

* a document is *relevant* when its grade is at least ``options.relevance_level``
  (trec_eval -l, above 0); a tracked document graded below it is judged non-relevant;
  grade -1 marks a padding column (an unjudged document: trec_eval reads a negative
  grade so), rank ``inf`` a document not retrieved, or past the run's cutoff (-M);
* R is the number of relevant documents in the qrels, retrieved or not;
* a cutoff k keeps the documents of 0-based rank below k; no cutoff is ``inf``;
* a query without a relevant document (R = 0) scores 0 on every measure but
  ``num_ret``, as in trec_eval; a query with an empty ranking scores 0 on every measure
  but ``num_rel``.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_ragmetrics.metrics.retrieval.arrays import ArrayOps, Docs, Marks, PerQuery
from pytest_ragmetrics.metrics.retrieval.names import RetrievalMetric
from pytest_ragmetrics.metrics.trec_options import TrecOptions


class Ranked:
    """The judged documents of one or many queries (``grades``: -1 for padding;
    ``ranks``: 0-based, ``inf`` when not retrieved) and how many documents each query
    retrieved, with what several formulas share computed once, when one first needs it.

    Which documents are tracked is the caller's choice (``names.ranks_every_judged``):
    those graded above 0 for every measure but bpref (and ndcg when ``gains`` gives
    grade 0 a gain), which need every document graded 0 or more."""

    def __init__(
        self,
        xp: ArrayOps,
        grades: Docs,
        ranks: Docs,
        retrieved: PerQuery,
        options: TrecOptions,
    ) -> None:
        self.xp, self.grades, self.ranks = xp, grades, ranks
        self.retrieved, self.options = retrieved, options
        # Computed once, when a formula first needs them (plain attributes: Python 3.11's
        # cached_property takes a lock, a few microseconds a row).
        self._relevant: Marks | None = None
        self._total: PerQuery | None = None
        self._relevant_ranks: Docs | None = None
        self._precisions: Docs | None = None

    @property
    def relevant(self) -> Marks:
        """Graded at the relevance level or above (padding, grade -1, never is)."""
        if self._relevant is None:
            self._relevant = self.xp.at_least(self.grades, self.options.relevance_level)
        return self._relevant

    @property
    def total(self) -> PerQuery:
        """R: each query's relevant documents in the qrels, retrieved or not."""
        if self._total is None:
            self._total = self.xp.count(self.relevant)
        return self._total

    @property
    def relevant_ranks(self) -> Docs:
        """Each query's relevant documents' ranks in rank order, ``inf`` after them (the
        unretrieved relevant ones, then the other columns)."""
        if self._relevant_ranks is None:
            xp = self.xp
            self._relevant_ranks = xp.sort(xp.where(self.relevant, self.ranks, math.inf))
        return self._relevant_ranks

    @property
    def precisions(self) -> Docs:
        """The precision at each of ``relevant_ranks``: how many relevant documents so
        far over the 1-based rank, 0 past the last retrieved one."""
        if self._precisions is None:
            xp, ranks = self.xp, self.relevant_ranks
            found = xp.add(xp.columns(ranks), 1.0)
            self._precisions = xp.where(xp.finite(ranks), xp.divide(found, xp.add(ranks, 1.0)), 0.0)
        return self._precisions

    def value(self, metric: RetrievalMetric) -> PerQuery:
        """One measure of every query held: ``metric``'s family, cutoff and level.
        ``gm_map`` is the query's average precision (its mean over queries is geometric:
        ``corpus.evaluate`` and the fixtures' ``gm_map.gmean``)."""
        family = metric.family
        cutoff = math.inf if metric.k is None else float(metric.k)
        if family in ("ndcg", "ndcg_exp"):
            return ndcg(self, cutoff, exponential=family == "ndcg_exp")
        if family in ("map", "gm_map"):
            return average_precision(self, cutoff)
        if family == "iprec_at_recall":
            assert metric.level is not None
            return interpolated_precision(self, float(metric.level))
        return _FORMULAS[family](self, cutoff)


def hit_rate(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``success_k``: 1 when a relevant document is ranked within the cutoff,
    else 0 (also when the qrels have none or nothing was retrieved). Needs a cutoff."""
    xp = ranked.xp
    return xp.indicator(found_within(ranked, cutoff) > 0)


def precision(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``P_k``: the relevant documents within the cutoff k over k, even when
    fewer than k documents were retrieved. Needs a cutoff; 0 for an empty ranking."""
    return found_within(ranked, cutoff) / cutoff


def recall(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``recall_k``: the relevant documents within the cutoff over R, 0 when
    R is 0. Needs a cutoff."""
    return ranked.xp.ratio(found_within(ranked, cutoff), ranked.total)


def reciprocal_rank(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``recip_rank`` (no cutoff) and ``mrr@k``: 1 / the 1-based rank of the
    first relevant document within the cutoff, 0 when there is none (1 / inf)."""
    xp, ranks = ranked.xp, ranked.relevant_ranks
    first = xp.min(xp.where(xp.less(ranks, cutoff), ranks, math.inf))
    return 1.0 / (first + 1.0)


def relevant_retrieved(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``num_rel_ret``: how many relevant documents were retrieved (the mean
    over queries where trec_eval's summary gives the sum). No cutoff."""
    return found_within(ranked, cutoff)


def relevant_judged(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``num_rel``: R, the relevant documents in the qrels, retrieved or not."""
    return ranked.total


def retrieved(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``num_ret``: how many documents were retrieved, after the run's cutoff
    (-M); counted whether or not the qrels have a relevant document."""
    return ranked.retrieved


def r_precision(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``Rprec``: the relevant documents among the first R retrieved, over R;
    0 when R is 0. No cutoff."""
    xp = ranked.xp
    return xp.ratio(found_within(ranked, ranked.total), ranked.total)


def found_within(ranked: Ranked, cutoff: Any) -> PerQuery:
    """How many relevant documents each query has within ``cutoff`` (a number, or one
    per query), as a float."""
    xp = ranked.xp
    return xp.count(xp.less(ranked.relevant_ranks, cutoff))


def average_precision(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``map`` (``map_cut_k`` with a cutoff): the precision at each relevant
    document retrieved within the cutoff, summed, over R (the relevant documents not
    retrieved add 0); 0 when R is 0. ``gm_map``'s value per query."""
    xp = ranked.xp
    precisions = ranked.precisions
    if cutoff != math.inf:
        precisions = xp.where(xp.less(ranked.relevant_ranks, cutoff), precisions, 0.0)
    return xp.ratio(xp.sum(precisions), ranked.total)


def interpolated_precision(ranked: Ranked, level: float) -> PerQuery:
    """trec_eval 9's ``iprec_at_recall_L``: recall level L asks for the first
    c = trunc(L * R + 0.9) relevant documents (at least 1); the value is the highest
    precision at any rank from the c-th retrieved relevant document on, 0 when fewer than
    c were retrieved (and when R is 0). A non-relevant document never has a higher
    precision than the relevant one before it, so the maximum is over the retrieved
    relevant documents. No cutoff."""
    xp, ranks = ranked.xp, ranked.relevant_ranks
    needed = xp.pairwise_max(xp.trunc(level * ranked.total + 0.9), 1.0)
    found = xp.add(xp.columns(ranks), 1.0)
    reached = xp.both(xp.at_least(found, needed), xp.finite(ranks))
    return xp.max(xp.where(reached, ranked.precisions, 0.0))


def ndcg(ranked: Ranked, cutoff: float, exponential: bool) -> PerQuery:
    """trec_eval ``ndcg`` (``ndcg_cut_k`` with a cutoff) and ``ndcg_exp``: DCG over the
    ideal DCG, each summing gain / log2(rank + 1) over 1-based ranks within the cutoff.

    The gain is the grade (``ndcg``), or its value in ``options.gains`` (a grade not listed
    keeps its own; a gain may be negative, and grade 0 may gain), or 2^grade - 1
    (``ndcg_exp``). The ideal ranking holds the positive gains of the qrels, best first,
    whether retrieved or not: nDCG is at most 1, below 0 only with a negative gain. 0 when
    the ideal DCG is 0 (no document with a positive gain)."""
    xp = ranked.xp
    gains = _gains(ranked, exponential)
    hit = xp.less(ranked.ranks, cutoff)
    dcg = xp.sum(xp.where(hit, xp.divide(gains, xp.discount(ranked.ranks)), 0.0))
    ideal_gains = xp.sort_descending(xp.where(xp.above(gains, 0.0), gains, 0.0))
    positions = xp.columns(ideal_gains)
    ideal_terms = xp.divide(ideal_gains, xp.discount(positions))
    ideal = xp.sum(xp.where(xp.less(positions, cutoff), ideal_terms, 0.0))
    return xp.ratio(dcg, ideal)


def _gains(ranked: Ranked, exponential: bool) -> Docs:
    """Each tracked document's gain (``ndcg``); padding (grade -1) gains -1 or -0.5 and is
    never retrieved, so it enters neither DCG."""
    xp = ranked.xp
    if exponential:
        return xp.add(xp.exp2(ranked.grades), -1.0)
    gains = ranked.options.gains
    return xp.mapped(ranked.grades, gains) if gains else ranked.grades


def bpref(ranked: Ranked, cutoff: float) -> PerQuery:
    """trec_eval ``bpref``: each retrieved relevant document adds 1 - min(n, R) / min(N, R),
    n the judged non-relevant documents (graded 0 up to the relevance level) retrieved
    above it and N all of the qrels' (it adds 1 when min(N, R) is 0); the sum is over R,
    0 when R is 0. Needs every judged document tracked. No cutoff."""
    xp, relevant, total = ranked.xp, ranked.relevant, ranked.total
    nonrelevant = xp.both(xp.at_least(ranked.grades, 0.0), xp.negate(relevant))
    above = xp.count_before(nonrelevant, ranked.ranks)
    scale = xp.pairwise_min(xp.count(nonrelevant), total)
    terms = xp.one_minus(xp.ratios(xp.minimum(above, total), scale))
    retrieved_relevant = xp.both(relevant, xp.finite(ranked.ranks))
    return xp.ratio(xp.sum(xp.where(retrieved_relevant, terms, 0.0)), total)


_FORMULAS = {
    "hit_rate": hit_rate,
    "precision": precision,
    "recall": recall,
    "mrr": reciprocal_rank,
    "num_rel_ret": relevant_retrieved,
    "num_rel": relevant_judged,
    "num_ret": retrieved,
    "rprec": r_precision,
    "bpref": bpref,
}
