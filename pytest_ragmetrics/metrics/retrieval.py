"""Retrieval metrics (Tier 1), vectorised over queries, equal to trec_eval.

Names are ranx-style: ``hit_rate@k``, ``mrr``, ``mrr@k``, ``recall@k``, ``precision@k``,
``ndcg``, ``ndcg@k``, ``ndcg_exp``, ``ndcg_exp@k``, ``map``, ``map@k``, ``gm_map``,
``rprec``, ``bpref``, ``num_ret``, ``num_rel``, ``num_rel_ret`` and
``iprec_at_recall@0.0`` ... ``iprec_at_recall@1.0``. For each query:

* a document is *relevant* when its grade in the qrels is at least the relevance level
  (1 unless ``evaluate(relevance_level=...)``, trec_eval -l); a judged document graded
  below it is non-relevant, an unjudged one too;
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
  nDCG keeps the grades whatever the relevance level: every document graded above 0 gains.
  With ``gains`` (trec_eval ndcg's gains parameter) a gain may be negative and grade 0
  may gain; as in trec_eval the ideal ranking holds the positive gains only, so nDCG is at
  most 1 (and may be negative), whichever other metrics are asked with it;
* ``map`` is the sum of the precisions at each retrieved relevant document divided by the
  number R of relevant documents in the qrels (trec_eval ``map``); ``map@k`` sums over the
  first k only (``map_cut_k``); ``gm_map`` is per query the same average precision, and
  its mean over queries is geometric, each value floored at 0.00001 (``gm_map``);
* ``rprec`` is the relevant documents among the first R, over R (``Rprec``);
* ``num_ret``, ``num_rel`` and ``num_rel_ret`` count the retrieved, relevant and
  relevant retrieved documents (the mean over queries: trec_eval's summary sums them);
* ``iprec_at_recall@L`` is trec_eval 9's interpolated precision at recall L: with
  c = trunc(L * R + 0.9), the highest precision at or after the c-th retrieved relevant
  document, 0 when fewer were retrieved (``iprec_at_recall_L``);
* ``bpref`` ranks the judged non-relevant documents (graded 0 up to the relevance level;
  negative grades are not judged) too: each retrieved relevant document adds
  1 - min(n, R) / min(N, R), n the judged non-relevant ones above it and N all of the
  qrels' (1 when n is 0); the sum is divided by R (trec_eval ``bpref``).

Every measure but ``num_ret`` is 0 for a query without relevant documents, as in trec_eval.

A run gives, per query, either scores (``{doc_id: score}``, ranked by score descending,
ties broken by doc id descending, as trec_eval does; like trec_eval 9, scores are compared
as 32-bit floats, so scores equal at that precision tie, or as doubles with
``ties="double"``, as trec_eval 10) or a ranked list
(``[doc_id, ...]``, best first). A query of the qrels that is absent from the run is left
out of the mean (trec_eval; with ``all_queries=True``, trec_eval -c, it is evaluated with
an empty ranking) and listed in ``Evaluation.missing``; a query of the run that
the qrels do not judge is left out too and listed in ``Evaluation.unjudged``. A query whose
ranking is *empty* is evaluated and scores 0 on every metric but ``num_rel`` (pytrec_eval
does the same, except that trec_eval's ``iprec_at_recall`` at a level asking for no relevant
document divides 0 by 0 there: NaN; ours is 0). ``evaluate(cutoff=N)`` (trec_eval -M) cuts
each ranking to its first N documents before anything.

``evaluate`` runs ``score_queries``: every metric is computed from the ranks of each
query's relevant documents only (and of its judged non-relevant ones when ``bpref`` is
asked for), so the cost is one comparison of each retrieved relevant document's score
with the query's scores, vectorised over the queries, 1,024 at a time. The
grades and scores of every query are read from the caller's dicts into flat arrays, a
pass each, and nothing is built query by query except the doc-id order of tied scores.
The per-row fixtures evaluate one query, where numpy's fixed cost per operation would be
most of the time: ``retrieval_query`` ranks it once per row in Python and gives the same
floats as ``score_queries`` on that query alone. Each formula is therefore written twice,
here over arrays and there over one query: a change to one must be made to the other, and
``tests/unit/metrics/test_retrieval_query.py`` compares the two bit for bit.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import chain, compress, repeat
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from pytest_ragmetrics.collector import collector_paused
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    COUNT,
    UNIT,
    Compute,
    CorpusReduction,
    Cutoff,
    Kind,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Range,
)
from pytest_ragmetrics.metrics.retrieval_query import QueryRanks, query_ranks
from pytest_ragmetrics.metrics.trec_options import RETRIEVAL_SETTINGS, Ties, TrecOptions

if TYPE_CHECKING:  # numpy is imported by the functions that compute, not with the plugin
    import numpy as np
    import numpy.typing as npt

Qrels = Mapping[str, Mapping[str, float]]
Ranking = Mapping[str, float] | Sequence[str]
Run = Mapping[str, Ranking]
FloatArray: TypeAlias = "npt.NDArray[np.float64]"
IntArray: TypeAlias = "npt.NDArray[np.int64]"

Family = Literal[
    "hit_rate",
    "mrr",
    "recall",
    "precision",
    "ndcg",
    "ndcg_exp",
    "map",
    "gm_map",
    "rprec",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    "bpref",
]
FAMILIES: tuple[Family, ...] = get_args(Family)
NEEDS_CUTOFF = frozenset({"hit_rate", "recall", "precision"})
TAKES_CUTOFF = frozenset({"hit_rate", "recall", "precision", "mrr", "ndcg", "ndcg_exp", "map"})
# trec_eval's 11 recall points of iprec_at_recall, written as in our metric names.
RECALL_LEVELS = tuple(f"{i / 10:.1f}" for i in range(11))
# trec_eval's floor of a query's average precision in the geometric mean (gm_map).
GM_FLOOR = 0.00001
# The breakdown the gm_map fixture records: per row log(max(AP, GM_FLOOR)) and 1.
GM_MAP_LOGS = "gm_map_logs"
_NAME = re.compile(r"^(?P<family>[a-z_]+?)(?:@(?P<k>[0-9]+(?:\.[0-9]+)?))?$")
# Queries scored at a time (``score_queries``): a block's arrays stay in the processor's
# cache. Each block pads its rows to the call's widest query, so blocks change no value.
_QUERY_BLOCK = 1024
# Bounds a block of comparisons (retrieved judged documents x their runs' length).
_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class RetrievalMetric:
    """A parsed metric name: its family and cutoff (``None``: the whole ranking); for
    ``iprec_at_recall`` the recall level instead (one of ``RECALL_LEVELS``)."""

    family: Family
    k: int | None = None
    level: str | None = None

    @property
    def name(self) -> str:
        if self.level is not None:
            return f"{self.family}@{self.level}"
        return self.family if self.k is None else f"{self.family}@{self.k}"


def _usage(family: Family) -> str:
    if family == "iprec_at_recall":
        return "iprec_at_recall@0.0 ... @1.0"
    if family in NEEDS_CUTOFF:
        return f"{family}@k"
    return f"{family}[@k]" if family in TAKES_CUTOFF else family


def parse_metric(name: str) -> RetrievalMetric:
    """``"ndcg@10"`` -> ``RetrievalMetric("ndcg", 10)``; ``ValueError`` names the problem."""
    match = _NAME.match(name)
    family = match.group("family") if match else None
    if match is None or family not in FAMILIES:
        raise ValueError(
            f"unknown retrieval metric {name!r}; use one of "
            + ", ".join(_usage(f) for f in FAMILIES)
        )
    suffix = match.group("k")
    if family == "iprec_at_recall":
        if suffix not in RECALL_LEVELS:
            raise ValueError(
                f"{name!r}: the recall level is one of {', '.join(RECALL_LEVELS)}, "
                "e.g. iprec_at_recall@0.5"
            )
        return RetrievalMetric(family, level=suffix)
    if suffix is not None and (family not in TAKES_CUTOFF or not suffix.isdigit()):
        raise ValueError(f"{name!r}: use {_usage(family)}")
    k = int(suffix) if suffix is not None else None
    if k is not None and k < 1:
        raise ValueError(f"{name!r}: the cutoff k must be at least 1")
    if k is None and family in NEEDS_CUTOFF:
        raise ValueError(f"{name!r} needs a cutoff, e.g. {family}@10")
    return RetrievalMetric(family, k)


@dataclass(frozen=True)
class JudgedRanks:
    """Per query, what every metric needs: the grades of the judged documents we track
    (grade > 0; for bpref, and for ndcg when grade 0 has a gain, every grade >= 0), padded
    with 0, whether each column is such a document, their 0-based ranks in the run (``inf``
    when not retrieved, cut off or padding) and how many documents were retrieved. Shapes:
    (queries, width) three times, (queries,)."""

    grades: FloatArray
    judged: npt.NDArray[np.bool_]
    ranks: FloatArray
    retrieved: npt.NDArray[np.int64]


def _discount(ranks: FloatArray) -> FloatArray:
    import numpy as np

    return np.log2(ranks + 2.0)


def _gain(judged: JudgedRanks, family: Family, gains: Mapping[float, float] | None) -> FloatArray:
    """The gain of each tracked document: 2^grade - 1 for ndcg_exp (0 for grade 0); for
    ndcg the grade, or its value in ``gains`` (a grade missing there keeps itself, as in
    trec_eval; grade 0 gains only what ``gains`` gives it, and a gain may be negative).
    Padding gains nothing."""
    import numpy as np

    grades = np.where(judged.judged, judged.grades, 0.0)
    if family == "ndcg_exp":
        return np.exp2(grades) - 1.0
    if gains:
        mapped = np.vectorize(lambda g: float(gains.get(g, g)), otypes=[np.float64])(grades)
        return np.where(judged.judged, mapped, 0.0)
    return grades


def _ndcg(judged: JudgedRanks, metric: RetrievalMetric, options: TrecOptions) -> FloatArray:
    """DCG within the cutoff over the ideal DCG (0 when that is 0). As trec_eval's ndcg
    builds it, the ideal ranking holds the positive gains only, best first: a negative
    gain lowers the DCG of a ranking that retrieves its document and is in no ideal one."""
    import numpy as np

    cutoff = math.inf if metric.k is None else metric.k
    gains = _gain(judged, metric.family, options.gains)
    hit = judged.ranks < cutoff
    dcg = np.where(hit, gains / _discount(np.where(hit, judged.ranks, 0.0)), 0.0).sum(axis=1)
    positive = np.where(gains > 0, gains, 0.0)
    ideal_gains = -np.sort(-positive, axis=1)  # best gains first; the rest (0) last
    positions = np.arange(ideal_gains.shape[1], dtype=np.float64)
    ideal_terms = np.where(positions < cutoff, ideal_gains / _discount(positions), 0.0)
    ideal = ideal_terms.sum(axis=1)
    values: FloatArray = np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)
    return values


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator, 0 where the denominator is 0 (a query without relevant
    documents scores 0, as in trec_eval)."""
    import numpy as np

    values: FloatArray = np.divide(
        numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0
    )
    return values


def _precisions(sorted_ranks: FloatArray) -> FloatArray:
    """Precision at each retrieved relevant document: (how many so far) / (its rank),
    0 past the last one."""
    import numpy as np

    found = np.arange(1, sorted_ranks.shape[1] + 1, dtype=np.float64)
    hit = np.isfinite(sorted_ranks)
    return np.where(hit, found / np.where(hit, sorted_ranks + 1.0, 1.0), 0.0)


class _Ranked:
    """``judged`` under ``options``, with what several metrics share computed once, when
    one first needs it: the relevant documents, how many each query has, their ranks in
    rank order and the precision at each, and the order of all the ranks."""

    def __init__(self, judged: JudgedRanks, options: TrecOptions) -> None:
        self.judged, self.options = judged, options

    @cached_property
    def relevant(self) -> npt.NDArray[np.bool_]:
        """Judged at the relevance level or above."""
        return self.judged.judged & (self.judged.grades >= self.options.relevance_level)

    @cached_property
    def total(self) -> FloatArray:
        """R, each query's relevant documents in the qrels, retrieved or not."""
        import numpy as np

        total: FloatArray = self.relevant.sum(axis=1).astype(np.float64)
        return total

    @cached_property
    def relevant_ranks(self) -> FloatArray:
        """Each query's retrieved relevant documents' ranks in rank order, ``inf`` after."""
        import numpy as np

        return np.sort(np.where(self.relevant, self.judged.ranks, np.inf), axis=1)

    @cached_property
    def precisions(self) -> FloatArray:
        """The precision at each of ``relevant_ranks``, 0 past the last one."""
        return _precisions(self.relevant_ranks)

    @cached_property
    def rank_order(self) -> IntArray:
        """Each query's columns by rank, best first; the unretrieved (``inf``) last."""
        import numpy as np

        order: IntArray = np.argsort(self.judged.ranks, axis=1, kind="stable")
        return order


def _average_precision(ranked: _Ranked, cutoff: float) -> FloatArray:
    """trec_eval map (map_cut_k): the precisions at the relevant documents retrieved
    within the cutoff, summed, over R. Those documents are a prefix of
    ``relevant_ranks``, and the precision at each does not depend on the cutoff."""
    import numpy as np

    precisions = ranked.precisions
    if cutoff != math.inf:
        precisions = np.where(ranked.relevant_ranks < cutoff, precisions, 0.0)
    return _ratio(precisions.sum(axis=1), ranked.total)


def _iprec(ranked: _Ranked, level: str) -> FloatArray:
    """trec_eval 9's iprec_at_recall: the recall level asks for the first c relevant
    documents, c = trunc(level * R + 0.9) for R relevant ones in the qrels; the value is the
    highest precision at any rank from the c-th retrieved relevant document on (at any
    relevant one when c is 0), 0 when fewer than c were retrieved. A later non-relevant
    document never has a higher precision than the relevant one before it, so the maximum
    is over the retrieved relevant documents."""
    import numpy as np

    sorted_ranks = ranked.relevant_ranks
    found = np.arange(1, sorted_ranks.shape[1] + 1, dtype=np.float64)
    needed = np.maximum(np.trunc(float(level) * ranked.total + 0.9), 1.0)
    reached = (found[None, :] >= needed[:, None]) & np.isfinite(sorted_ranks)
    values: FloatArray = np.where(reached, ranked.precisions, 0.0).max(axis=1, initial=0.0)
    return values


def _bpref(ranked: _Ranked) -> FloatArray:
    """trec_eval bpref: over the retrieved relevant documents, 1 - min(n, R) / min(N, R)
    where n is the judged non-relevant documents retrieved above it, R the relevant and N
    the judged non-relevant documents of the qrels (1 when n is 0); the sum over R.

    n is counted in rank order: the judged non-relevant documents before each one, with
    the unretrieved ones last (they are above no retrieved document)."""
    import numpy as np

    judged, relevant, total = ranked.judged, ranked.relevant, ranked.total
    nonrelevant = judged.judged & ~relevant
    rows = np.arange(nonrelevant.shape[0])[:, None]
    in_order = nonrelevant[rows, ranked.rank_order]
    above = np.empty(in_order.shape)
    above[rows, ranked.rank_order] = np.cumsum(in_order, axis=1) - in_order
    nonrel_total = nonrelevant.sum(axis=1).astype(np.float64)
    scale = np.minimum(nonrel_total, total)[:, None]
    terms = 1.0 - _ratio(np.minimum(above, total[:, None]), np.broadcast_to(scale, above.shape))
    terms = np.where(relevant & np.isfinite(judged.ranks), terms, 0.0)
    return _ratio(terms.sum(axis=1), total)


def metric_values(
    judged: JudgedRanks, metric: RetrievalMetric, options: TrecOptions | None = None
) -> FloatArray:
    """One metric for every query of ``judged``; the definitions are in the module doc.
    ``gm_map`` is the per-query average precision (its mean is geometric: ``evaluate``)."""
    return _metric_values(_Ranked(judged, options or TrecOptions()), metric)


def _metric_values(ranked: _Ranked, metric: RetrievalMetric) -> FloatArray:
    import numpy as np

    judged = ranked.judged
    if metric.family in ("ndcg", "ndcg_exp"):
        return _ndcg(judged, metric, ranked.options)
    if metric.family == "num_ret":
        return judged.retrieved.astype(np.float64)
    cutoff = math.inf if metric.k is None else metric.k
    relevant, total = ranked.relevant, ranked.total
    values: FloatArray
    if metric.family == "num_rel":
        values = total
    elif metric.family == "rprec":
        values = _ratio((relevant & (judged.ranks < total[:, None])).sum(axis=1) * 1.0, total)
    elif metric.family in ("map", "gm_map"):
        values = _average_precision(ranked, cutoff)
    elif metric.family == "iprec_at_recall":
        assert metric.level is not None
        values = _iprec(ranked, metric.level)
    elif metric.family == "bpref":
        values = _bpref(ranked)
    else:
        values = _found_values(ranked, metric.family, cutoff)
    return values


def _found_values(ranked: _Ranked, family: Family, cutoff: float) -> FloatArray:
    """The metrics of the relevant documents retrieved within the cutoff."""
    import numpy as np

    found = ranked.relevant & (ranked.judged.ranks < cutoff)
    values: FloatArray
    if family == "mrr":
        first = np.where(found, ranked.judged.ranks, np.inf).min(axis=1, initial=np.inf)
        values = 1.0 / (first + 1.0)
        return values
    count: FloatArray = found.sum(axis=1).astype(np.float64)
    if family == "hit_rate":
        values = (count > 0).astype(np.float64)
    elif family == "precision":
        values = count / float(cutoff)
    elif family == "recall":
        values = _ratio(count, ranked.total)
    else:  # num_rel_ret
        values = count
    return values


# -- building the ranks from Python data ------------------------------------------------


def _numbers(values: Iterable[Any], count: int, where: str) -> FloatArray:
    """``count`` values as doubles, read in one pass; ``where`` names them in the
    ``ValueError`` when one is not a number."""
    import numpy as np

    try:
        return np.fromiter(values, dtype=np.float64, count=count)
    except (TypeError, ValueError) as error:
        raise _not_a_number(where, str(error)) from None


def _refuse_nan(numbers: FloatArray, where: str) -> None:
    """A NaN is a ``ValueError`` too: numpy reads None as NaN."""
    import numpy as np

    if np.isnan(numbers).any():
        raise _not_a_number(where, "found NaN or None")


def _not_a_number(where: str, problem: str) -> ValueError:
    return ValueError(f"{where} is not a number ({problem}); use numbers, e.g. 1 or 0.5")


@dataclass(frozen=True)
class _Tracked:
    """The judged documents whose ranks the metrics need, every query's in turn in one
    flat sequence (so that nothing is built query by query): their ids and grades, the
    index of each one's query, and how many each query has."""

    docs: list[str]
    grades: FloatArray
    query: IntArray
    counts: IntArray

    @cached_property
    def starts(self) -> IntArray:
        """Where each query's documents begin in ``docs``."""
        import numpy as np

        starts: IntArray = np.cumsum(self.counts) - self.counts
        return starts

    @cached_property
    def columns(self) -> IntArray:
        """Each document's place among its query's: its column in ``spread``."""
        import numpy as np

        columns: IntArray = np.arange(self.query.size) - self.starts[self.query]
        return columns

    def per_query(self) -> list[list[str]]:
        """Each query's documents, in qrels order."""
        starts = self.starts.tolist()
        ends = [*starts[1:], len(self.docs)]
        return [self.docs[start:end] for start, end in zip(starts, ends, strict=True)]

    def spread(self, values: npt.NDArray[Any], fill: float, width: int) -> npt.NDArray[Any]:
        """One value per document as a (queries, ``width``) array of the same dtype, each
        query's values in its row, in qrels order, then ``fill``; ``width`` is at least
        the widest query's."""
        import numpy as np

        if self.counts.size * width == values.size:  # as many in every query: no padding
            return values.reshape(self.counts.size, width)
        out = np.full((self.counts.size, width), fill, dtype=values.dtype)
        out[self.query, self.columns] = values
        return out

    @cached_property
    def positive(self) -> tuple[_Tracked, npt.NDArray[np.bool_]]:
        """The documents graded above 0, in the same order, as a ``_Tracked`` of their own
        (every query kept, with maybe none), and which of ours they are."""
        import numpy as np

        keep = self.grades > 0
        docs = list(compress(self.docs, keep.tolist()))
        query = self.query[keep]
        counts = np.bincount(query, minlength=self.counts.size)
        return _Tracked(docs, self.grades[keep], query, counts), keep

    def only(self, queries: Sequence[int]) -> tuple[_Tracked, npt.NDArray[np.bool_]]:
        """The documents of ``queries`` (indices, ascending) as a ``_Tracked`` of their
        own, and which of ours they are."""
        import numpy as np

        chosen = np.zeros(self.counts.size, dtype=bool)
        chosen[list(queries)] = True
        keep = chosen[self.query]
        renumbered = np.cumsum(chosen) - 1
        docs = list(compress(self.docs, keep.tolist()))
        subset = _Tracked(
            docs, self.grades[keep], renumbered[self.query[keep]], self.counts[chosen]
        )
        return subset, keep


def _track(qids: Sequence[str], qrels: Qrels, nonrelevant: bool) -> _Tracked:
    """The documents to rank: graded above 0, or with ``nonrelevant`` every one graded
    0 or more (bpref counts judged non-relevant ones, ndcg with a gain for grade 0 gains
    from them; trec_eval reads a negative grade as unjudged)."""
    import numpy as np

    judgements = list(map(qrels.__getitem__, qids))
    sizes = np.fromiter(map(len, judgements), dtype=np.int64, count=len(judgements))
    every = chain.from_iterable(judgement.values() for judgement in judgements)
    grades = _numbers(every, int(sizes.sum()), "qrels: a grade")
    _refuse_nan(grades, "qrels: a grade")
    keep = grades >= 0 if nonrelevant else grades > 0
    docs = list(compress(chain.from_iterable(judgements), keep.tolist()))
    query = np.repeat(np.arange(len(qids)), sizes)[keep]
    return _Tracked(docs, grades[keep], query, np.bincount(query, minlength=len(qids)))


def _rows(scores: npt.NDArray[Any], lengths: IntArray) -> npt.NDArray[Any]:
    """Each query's scores (``lengths`` of them in turn) as a row, padded with NaN to the
    longest run: padding is neither above nor equal to any score."""
    import numpy as np

    longest = int(lengths.max(initial=0))
    if lengths.size and (lengths == longest).all():
        return scores.reshape(lengths.size, longest)
    rows = np.full((lengths.size, longest), math.nan, dtype=scores.dtype)
    row = np.repeat(np.arange(lengths.size), lengths)
    rows[row, np.arange(scores.size) - (np.cumsum(lengths) - lengths)[row]] = scores
    return rows


def _above(
    rows: npt.NDArray[Any], query: IntArray, mine: npt.NDArray[Any]
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """How many entries of its query's row are above each of ``mine`` (0 for NaN: not
    retrieved), and whether another one is equal to it (a tie, which the doc ids break).
    One comparison with the whole row for each retrieved document, vectorised over
    blocks of at most about ``_BLOCK_ELEMENTS`` comparisons."""
    import numpy as np

    above = np.zeros(mine.size)
    tied = np.zeros(mine.size, dtype=bool)
    retrieved = np.flatnonzero(~np.isnan(mine))
    block = max(1, _BLOCK_ELEMENTS // max(1, rows.shape[1]))
    for start in range(0, retrieved.size, block):
        part = retrieved[start : start + block]
        row, value = rows[query[part]], mine[part, None]
        above[part] = (row > value).sum(axis=1)
        tied[part] = (row == value).sum(axis=1) > 1
    return above, tied


def _break_ties(
    scores: npt.NDArray[np.floating[Any]],
    ids: list[str],
    mine: npt.NDArray[np.floating[Any]],
    docs: Sequence[str],
) -> list[int]:
    """For each of one query's tracked ``docs`` (scored ``mine``, NaN when not
    retrieved), how many documents of equal score trec_eval puts above it: equal scores
    go by doc id descending. ``ids`` are the run's documents in the order of ``scores``."""
    import numpy as np

    groups: dict[float, list[str]] = {}  # score -> its documents' ids, sorted
    above = []
    for doc, value in zip(docs, mine.tolist(), strict=True):
        if math.isnan(value):  # not retrieved
            above.append(0)
            continue
        if value not in groups:
            equal = np.flatnonzero(scores == value)
            members = ids if equal.size == len(ids) else [ids[i] for i in equal.tolist()]
            groups[value] = sorted(members)
        group = groups[value]
        above.append(len(group) - bisect.bisect_right(group, doc))
    return above


def _read_scores(
    scored: Sequence[Mapping[str, float]], tracked: _Tracked, lengths: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Every query's scores (``lengths`` of them in turn), and each tracked document's
    score in its query's run, NaN when the run does not have it. One pass reads a query's
    scores, then looks its documents up while the query's dict is still in the
    processor's cache (a tenth less time at 100,000 queries than two passes)."""
    import numpy as np

    sizes = np.empty(2 * lengths.size, dtype=np.int64)
    sizes[0::2], sizes[1::2] = lengths, tracked.counts  # a query's scores, then its lookups
    both = _numbers(
        chain.from_iterable(
            chain(ranking.values(), map(ranking.get, docs, repeat(math.nan)))
            for ranking, docs in zip(scored, tracked.per_query(), strict=True)
        ),
        int(sizes.sum()),
        "run: a score",
    )
    is_score = np.repeat(np.arange(sizes.size) % 2 == 0, sizes)
    scores = both[is_score]
    _refuse_nan(scores, "run: a score")
    return scores, both[~is_score]


def _score_ranks(
    scored: Sequence[Mapping[str, float]], tracked: _Tracked, ties: Ties = "float32"
) -> FloatArray:
    """The 0-based rank of each tracked document in its query's scored run, ``inf`` when
    the run does not have it: the documents scoring higher, plus the tied ones trec_eval
    puts above it."""
    import numpy as np

    # trec_eval 9 keeps scores as 32-bit floats: scores equal at that precision are a tie;
    # trec_eval 10 compares them as doubles (ties="double").
    dtype: type[np.floating[Any]] = np.float32 if ties == "float32" else np.float64
    lengths = np.fromiter(map(len, scored), dtype=np.int64, count=len(scored))
    scores, mine = (values.astype(dtype) for values in _read_scores(scored, tracked, lengths))
    ranks, tied = _above(_rows(scores, lengths), tracked.query, mine)
    if tied.any():  # rare: equal scores need the doc ids
        ends, first = np.cumsum(lengths).tolist(), tracked.starts.tolist()
        for q in np.unique(tracked.query[tied]).tolist():
            own = slice(first[q], first[q] + int(tracked.counts[q]))
            run = scores[ends[q] - len(scored[q]) : ends[q]]  # in the order of list(scored[q])
            ranks[own] += _break_ties(run, list(scored[q]), mine[own], tracked.docs[own])
    ranks[np.isnan(mine)] = math.inf
    return ranks


def _list_ranks(qid: str, ranking: Sequence[str], docs: Sequence[str]) -> list[float]:
    position = dict(zip(ranking, range(len(ranking)), strict=True))
    if len(position) != len(ranking):
        seen: set[str] = set()
        twice = next(doc for doc in ranking if doc in seen or seen.add(doc))  # type: ignore[func-returns-value]
        raise ValueError(f"query {qid!r}: the ranking lists {twice!r} more than once")
    return [float(position.get(doc, math.inf)) for doc in docs]


def _ranks(
    qids: Sequence[str], rankings: Sequence[Ranking], tracked: _Tracked, ties: Ties
) -> FloatArray:
    """The 0-based rank of each tracked document in its query's ranking, scored or
    listed, ``inf`` when the ranking does not have it."""
    import numpy as np

    # dict first: its check is a few times quicker than the abstract Mapping's
    is_scored = [isinstance(ranking, (dict, Mapping)) for ranking in rankings]
    scored_at = list(compress(range(len(rankings)), is_scored))
    scored: list[Mapping[str, float]] = [rankings[i] for i in scored_at]  # type: ignore[misc]
    if len(scored_at) == len(rankings):
        return _score_ranks(scored, tracked, ties)
    ranks = np.full(len(tracked.docs), math.inf)
    if scored_at:
        subset, theirs = tracked.only(scored_at)
        ranks[theirs] = _score_ranks(scored, subset, ties)
    first, docs = tracked.starts.tolist(), tracked.per_query()
    for i in compress(range(len(rankings)), (not flag for flag in is_scored)):
        ranking = rankings[i]
        if isinstance(ranking, str):
            raise ValueError(f"query {qids[i]!r}: a ranking is a list of doc ids, not a string")
        ranks[first[i] : first[i] + len(docs[i])] = _list_ranks(qids[i], ranking, docs[i])  # type: ignore[arg-type]
    return ranks


def _flat_ranks(
    qids: Sequence[str], tracked: _Tracked, rankings: Sequence[Ranking], options: TrecOptions
) -> tuple[FloatArray, IntArray]:
    """The rank of each of the ``tracked`` documents in its query's ranking (scores or a
    list), each ranking cut to its first ``options.cutoff`` documents, and how many
    documents each query retrieved (after the cut)."""
    import numpy as np

    ranks = _ranks(qids, rankings, tracked, options.ties)
    retrieved = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
    if options.cutoff is not None:  # trec_eval -M: only the first N documents exist
        ranks[ranks >= options.cutoff] = math.inf
        retrieved = np.minimum(retrieved, options.cutoff)
    return ranks, retrieved


def _judged_ranks(
    tracked: _Tracked, ranks: FloatArray, retrieved: IntArray, width: int
) -> JudgedRanks:
    """``tracked``'s grades and ``ranks`` per query, rows padded to ``width`` columns."""
    import numpy as np

    judged = tracked.spread(np.ones(len(tracked.docs), dtype=bool), False, width)
    return JudgedRanks(
        tracked.spread(tracked.grades, 0.0, width),
        judged,
        tracked.spread(ranks, math.inf, width),
        retrieved,
    )


def judge_rankings(
    qids: Sequence[str],
    tracked: _Tracked,
    rankings: Sequence[Ranking],
    options: TrecOptions,
    width: int,
) -> JudgedRanks:
    """The ranks of the ``tracked`` documents of each query in its ranking (scores or a
    list), each ranking cut to its first ``options.cutoff`` documents; rows padded to
    ``width`` columns."""
    ranks, retrieved = _flat_ranks(qids, tracked, rankings, options)
    return _judged_ranks(tracked, ranks, retrieved, width)


def _width(blocks: Sequence[_Tracked]) -> int:
    """The most documents any query of ``blocks`` tracks: every block's rows are that
    wide, so that a query's values do not depend on the block it falls in."""
    return max((int(block.counts.max(initial=0)) for block in blocks), default=0)


def ranks_every_judged(metric: RetrievalMetric, options: TrecOptions) -> bool:
    """Whether ``metric`` needs the ranks of the documents graded 0 too: bpref counts
    them, and ndcg gains from them when ``gains`` gives grade 0 a gain. The others need
    the documents graded above 0 only."""
    return metric.family == "bpref" or (metric.family == "ndcg" and options.grade_zero_gains)


def score_queries(
    qids: Sequence[str],
    qrels: Qrels,
    rankings: Sequence[Ranking],
    metrics: Iterable[str],
    options: TrecOptions | None = None,
) -> dict[str, FloatArray]:
    """Every metric for every query, in ``qids`` order: ``{name: values}``. For ``gm_map``
    the value is the query's average precision (its geometric mean is ``evaluate``'s).

    The queries are scored ``_QUERY_BLOCK`` at a time, each block's arrays in the
    processor's cache: over 100,000 queries at once, time grew 12x to 13x from 10,000
    queries, by blocks about as the queries. A query's row in every block is as wide as
    the widest query of the call (its judged documents, padded), as it would be in one
    block: numpy sums a row in an order that depends on its width, so the same width
    gives the same floats, whatever the blocks.

    A metric's values never depend on the other metrics asked with it: the documents
    graded 0 are ranked only when a metric needs them (``ranks_every_judged``), and the
    other metrics are then computed from the documents graded above 0 alone, in rows as
    wide as without them."""
    import numpy as np

    parsed = [parse_metric(name) for name in metrics]
    options = options or TrecOptions()
    every = [metric for metric in parsed if ranks_every_judged(metric, options)]
    graded = [metric for metric in parsed if not ranks_every_judged(metric, options)]
    starts = range(0, max(len(qids), 1), _QUERY_BLOCK)  # no query: one empty block
    tracked = [_track(qids[i : i + _QUERY_BLOCK], qrels, bool(every)) for i in starts]
    # Each block's documents graded above 0, and which of the tracked ones they are
    # (``None``: all of them).
    positive = [block.positive if every else (block, None) for block in tracked]
    every_width, graded_width = _width(tracked), _width([block for block, _ in positive])
    blocks = []
    for start, documents, (graded_docs, keep) in zip(starts, tracked, positive, strict=True):
        end = start + _QUERY_BLOCK
        ranks, retrieved = _flat_ranks(qids[start:end], documents, rankings[start:end], options)
        values: dict[str, FloatArray] = {}
        if every:
            ranked = _Ranked(_judged_ranks(documents, ranks, retrieved, every_width), options)
            values.update({metric.name: _metric_values(ranked, metric) for metric in every})
        if graded:
            graded_ranks = ranks if keep is None else ranks[keep]
            judged = _judged_ranks(graded_docs, graded_ranks, retrieved, graded_width)
            ranked = _Ranked(judged, options)
            values.update({metric.name: _metric_values(ranked, metric) for metric in graded})
        blocks.append({metric.name: values[metric.name] for metric in parsed})
    if len(blocks) == 1:
        return blocks[0]
    return {
        metric.name: np.concatenate([block[metric.name] for block in blocks]) for metric in parsed
    }


class Evaluation(dict[str, float]):
    """``{metric name: mean over the evaluated queries}``, plus which queries those were.

    The mean is arithmetic except for ``gm_map``, whose mean is trec_eval's geometric one.
    ``queries`` is how many were evaluated; ``missing`` lists qrels queries absent from the
    run and ``unjudged`` run queries absent from the qrels (both left out of the means,
    except ``missing`` ones with ``all_queries=True``).
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


def _mean(name: str, values: FloatArray) -> float:
    """The arithmetic mean; for gm_map trec_eval's geometric mean of the average
    precisions, each floored at ``GM_FLOOR`` (so one query with none retrieved does not
    make the mean 0): exp(mean(log(max(AP, 0.00001))))."""
    import numpy as np

    if parse_metric(name).family == "gm_map":
        logs = np.log(np.maximum(values, GM_FLOOR))
        return math.exp(math.fsum(logs.tolist()) / len(values))
    return math.fsum(values.tolist()) / len(values)


def _common_queries(
    qrels: Qrels, run: Run
) -> tuple[list[str], list[Ranking], list[str], list[str]]:
    """The run's queries that the qrels judge, in run order, and their rankings; the
    judged queries missing from the run and the run's unjudged ones, sorted. When every
    query is on both sides (the usual case) no query is looked up twice: at 100,000
    queries each pass over the ids costs tens of milliseconds in cache misses."""
    judged = {qid for qid, judgements in qrels.items() if judgements}
    qids = list(filter(judged.__contains__, run))
    missing = sorted(judged.difference(run)) if len(qids) < len(judged) else []
    unjudged = sorted(qid for qid in run if qid not in judged) if len(qids) < len(run) else []
    rankings = list(run.values()) if not unjudged else list(map(run.__getitem__, qids))
    return qids, rankings, missing, unjudged


def evaluate(
    qrels: Qrels,
    run: Run,
    metrics: Iterable[str],
    *,
    relevance_level: float = 1,
    cutoff: int | None = None,
    all_queries: bool = False,
    gains: Mapping[float, float] | None = None,
    ties: Ties = "float32",
) -> Evaluation:
    """Mean of each metric over the queries both ``qrels`` and ``run`` have (trec_eval).

    ``qrels = {qid: {doc_id: grade}}``; ``run = {qid: {doc_id: score}}`` or
    ``{qid: [doc_id, ...]}`` (ranked); ``metrics`` like ``["ndcg@10", "mrr", "hit_rate@5"]``.
    A query whose qrels are empty (``{}``) has no judgement and is unjudged, as in trec_eval,
    whose qrels cannot express it. The options are trec_eval's:

    * ``relevance_level`` (-l): the lowest grade that is relevant for the binary measures
      (everything but nDCG, which keeps the grades);
    * ``cutoff`` (-M): each ranking is cut to its first ``cutoff`` documents before anything;
    * ``all_queries`` (-c): every judged query of the qrels is averaged; one absent from the
      run is evaluated with an empty ranking (0 on every measure but ``num_rel``);
    * ``gains``: grade -> gain for ``ndcg`` and ``ndcg@k`` (trec_eval ndcg's gains
      parameter); a grade not listed gains its own value;
    * ``ties``: "float32" compares scores as 32-bit floats (trec_eval 9, pytrec_eval),
      "double" as 64-bit ones, as trec_eval 10 does. Only the comparison of scores
      changes: every measure keeps trec_eval 9's rules (``iprec_at_recall``'s
      c = trunc(L * R + 0.9), where trec_eval 10 rounds L * R to the nearest).

    Raises ``ValueError`` for an unknown metric name, a bad option, a grade or a score that
    is not a number (NaN and None included), a doc id listed twice in a ranking, or when no
    query is in both (there would be no mean).
    """
    options = TrecOptions(relevance_level, cutoff, gains, ties)
    if not isinstance(all_queries, bool):
        raise ValueError(
            f"evaluate(all_queries=...): {all_queries!r} is not True or False; use "
            "True to average over every judged query of the qrels (trec_eval -c)"
        )
    names = list(dict.fromkeys(metrics))
    for name in names:
        parse_metric(name)
    qids, rankings, missing, unjudged = _common_queries(qrels, run)
    if all_queries:
        qids, rankings = qids + missing, rankings + [[] for _ in missing]
    if not qids:
        raise ValueError("no query of the run is judged in the qrels: there is nothing to average")
    # Building the ranks allocates lists for every query, none in a reference cycle: with
    # the collector running, each burst of them walked every dict of the caller's qrels
    # and run again, half the time at 100,000 queries (time grew 19x from 10,000).
    with collector_paused():
        values = score_queries(qids, qrels, rankings, names, options)
    means = {name: _mean(name, values[name]) for name in names}
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


def _level(level: Any) -> str:
    """``iprec_at_recall(row, level=0.5)``'s level as written in the metric name."""
    usage = f"use one of {', '.join(RECALL_LEVELS)}"
    if level is None:
        raise TypeError(f"iprec_at_recall(row, level=...) needs a recall level; {usage}")
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise TypeError(f"iprec_at_recall(row, level=...): {level!r} is not a number; {usage}")
    written = f"{level:.1f}"
    if written not in RECALL_LEVELS or float(written) != level:
        raise TypeError(f"iprec_at_recall(row, level=...): {level!r} is not a level; {usage}")
    return written


def _retrieval_metric(fixture: str, family: str, k: int | None, level: Any) -> RetrievalMetric:
    if family == "iprec_at_recall":
        return _parsed(f"{family}@{_level(level)}")
    if k is None and family in NEEDS_CUTOFF:
        raise TypeError(f"{fixture}(row, k=...) needs a cutoff, e.g. {fixture}(row, k=10)")
    return _parsed(family if k is None else f"{family}@{k}")


@lru_cache(maxsize=1024)
def _parsed(name: str) -> RetrievalMetric:
    """``parse_metric``, once per name: a row test asks for the same few names every row."""
    return parse_metric(name)


def _rank_evidence(
    ranked: list[str], qrels: dict[str, float], options: TrecOptions, ranks: QueryRanks | None
) -> tuple[str, str]:
    """A row's evidence around its cutoff: what comes before ``; cutoff k`` and after it.
    The same for every retrieval fixture of the row: ``_RowQuery`` keeps it. The 1-based
    ranks of the relevant documents come from ``ranks`` when the row has them, else from
    a pass over the ranking."""
    level = options.relevance_level
    if ranks is not None:
        found, relevant = ranks.relevant_found(), int(ranks.total)
    else:
        judged = {doc for doc, grade in qrels.items() if grade >= level}
        shown = ranked if options.cutoff is None else ranked[: options.cutoff]
        found = [i + 1 for i, doc in enumerate(shown) if doc in judged]
        relevant = len(judged)
    where = (
        f"relevant at rank {', '.join(map(str, found))}" if found else "no relevant doc retrieved"
    )
    graded = f"; relevant from grade {level:g}" if level != 1 else ""
    runs = "" if options.cutoff is None else f", run cut to {options.cutoff}"
    head = f"{where} of {len(ranked)} retrieved{runs} ({relevant} relevant in qrels"
    return head, f"{graded})"


@dataclass(frozen=True)
class _RowQuery:
    """A row's query as its retrieval fixtures read it, kept in the row's
    ``MetricContext.memo`` (``_ROW_QUERY``) so that the row's fixtures read the fields and
    rank the documents once: the row (the memo holds it, so it is that very row), the
    options it was ranked under, its qrels and ranking, and its ranks
    (``retrieval_query``), ``None`` when the query is not well-formed."""

    row: Row
    options: TrecOptions
    qrels: dict[str, float]
    ranked: list[str]
    ranks: QueryRanks | None

    @cached_property
    def _evidence(self) -> tuple[str, str]:
        return _rank_evidence(self.ranked, self.qrels, self.options, self.ranks)

    def evidence(self, k: int | None) -> str:
        """Where the relevant documents are, for a fixture with cutoff ``k``."""
        head, tail = self._evidence
        return f"{head}; cutoff {k}{tail}" if k is not None else head + tail


_ROW_QUERY = "retrieval"


def _row_query(row: Row, ctx: MetricContext, family: str) -> _RowQuery:
    """The row's query, from the memo when a fixture of the same row and options read it
    already; a row that lacks a field raises ``RowError`` each time, and is not kept."""
    options = ctx.settings.retrieval
    kept = ctx.memo.get(_ROW_QUERY)
    if isinstance(kept, _RowQuery) and kept.row is row and kept.options == options:
        return kept
    qrels = as_qrels(row.require("relevant", family))
    ranked = ranking(row, family)
    if not qrels:
        raise RowError(f"{row.where('relevant')}: {family} needs at least one judgement")
    query = _RowQuery(row, options, qrels, ranked, query_ranks(qrels, ranked, options))
    ctx.memo[_ROW_QUERY] = query
    return query


def _scored_value(row: Row, query: _RowQuery, family: str, name: str) -> float:
    """One metric of the row through ``score_queries``; its ``ValueError`` (a doc id
    listed twice) becomes the row's error."""
    try:
        values = score_queries(
            [row.id], {row.id: query.qrels}, [query.ranked], [name], query.options
        )
    except ValueError as error:
        raise RowError(f"{row.where(ranking_field(row, family))}: {error}") from None
    return float(values[name][0])


def retrieval_measure(family: str) -> Compute:
    """The per-row computation of one retrieval family with the run's
    ``[settings.retrieval]`` options. A row is one query and is always evaluated
    (``all_queries`` has nothing to add). It is ranked once for all of the row's retrieval
    fixtures, in Python (``retrieval_query``: the same floats as ``score_queries``, which
    a batch ``evaluate`` runs, without numpy's fixed cost per call)."""

    def measure(
        row: Row,
        ctx: MetricContext,
        k: int | None = None,
        gain: str = "linear",
        level: Any = None,
    ) -> Measured:
        cut = _cutoff(family, k)
        name_family = family
        if family == "ndcg":
            if gain not in GAINS:
                raise ValueError(f"ndcg(row, gain=...): use one of {', '.join(GAINS)}")
            name_family = GAINS[gain]
        metric = _retrieval_metric(family, name_family, cut, level)
        name = metric.name
        query = _row_query(row, ctx, family)
        if query.ranks is not None:
            value = query.ranks.value(metric.family, metric.k, metric.level)
        else:  # not a well-formed query: score_queries says what is wrong
            value = _scored_value(row, query, family, name)
        evidence = query.evidence(cut)
        breakdowns = {}
        if family == "gm_map":  # summed over the rows into gm_map.gmean
            breakdowns[GM_MAP_LOGS] = {"log_ap": math.log(max(value, GM_FLOOR)), "queries": 1.0}
        return Measured({name: value}, evidence, breakdowns, primary=name)

    return measure


def gm_map_gmean(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``gm_map.gmean``: trec_eval's gm_map over the rows, exp(mean(log(max(AP, 0.00001))))
    from the rows' summed logarithms (the settings change nothing here)."""
    return {"gmean": math.exp(sums["log_ap"] / sums["queries"])}


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


# at most 1; below 0 only with a negative gain in `gains` (trec_eval's rule)
NDCG_RANGE: Range = (-math.inf, 1.0)

_RANKING_DOC = (
    " The ranking is the row's retrieved ids, else its contexts' doc ids in order (a "
    "document's chunks count once); relevant holds the ids (grade 1) or id -> grade."
)


def _family(
    name: str,
    doc: str,
    records: tuple[tuple[str, str, Range], ...],
    cutoff: Cutoff,
    kind: Kind,
    corpus: tuple[str, ...] = (),
    misleading: Mapping[str, str] | None = None,
) -> MetricSpec:
    levels = RECALL_LEVELS if name == "iprec_at_recall" else ()
    infos = tuple(
        MetricInfo(
            metric,
            description,
            kind=kind,
            range=value_range,
            cutoff=cutoff,
            corpus=corpus,
            levels=levels,
            misleading=misleading or {},
        )
        for metric, description, value_range in records
    )
    if name == "ndcg":
        options: tuple[str, ...] = ("k", "gain")
    elif levels:
        options = ("level",)
    else:
        options = ("k",) if name in TAKES_CUTOFF else ()
    return MetricSpec(
        name,
        doc + _RANKING_DOC,
        infos,
        ("relevant",),
        retrieval_measure(name),
        options=options,
        corpus=CorpusReduction(GM_MAP_LOGS, gm_map_gmean) if corpus else None,
        settings=RETRIEVAL_SETTINGS,
    )


SPECS = (
    _family(
        "hit_rate",
        "1 when a relevant doc is in the top k, else 0; k is required (records hit_rate@k).",
        (("hit_rate", "a relevant doc is in the top k", UNIT),),
        "required",
        "binary",
    ),
    _family(
        "mrr",
        "1 / rank of the first relevant doc (0 when none is within k), 0-1; records mrr, or "
        "mrr@k with k.",
        (("mrr", "1 / rank of the first relevant doc (within k)", UNIT),),
        "optional",
        "continuous",
    ),
    _family(
        "recall",
        "Relevant docs in the top k / all relevant docs, 0-1; k is required (recall@k).",
        (("recall", "relevant docs in the top k / all relevant docs", UNIT),),
        "required",
        "continuous",
    ),
    _family(
        "precision",
        "Relevant docs in the top k / k, 0-1; k is required (precision@k).",
        (("precision", "relevant docs in the top k / k", UNIT),),
        "required",
        "continuous",
    ),
    _family(
        "ndcg",
        "nDCG (within k when given), 0-1: graded gains with a log2 discount over the ideal "
        "ranking; gain='linear' records ndcg, gain='exponential' (2^grade - 1) ndcg_exp.",
        (
            ("ndcg", "nDCG (within k), linear gain", NDCG_RANGE),
            ("ndcg_exp", "nDCG (within k), gain 2^grade - 1", UNIT),
        ),
        "optional",
        "continuous",
    ),
    _family(
        "map",
        "Average precision (trec_eval map), 0-1: the precisions at each retrieved relevant "
        "doc (within k when given), summed, over all relevant docs; records map, or map@k.",
        (("map", "average precision (within k)", UNIT),),
        "optional",
        "continuous",
    ),
    _family(
        "gm_map",
        "The query's average precision, 0-1, as map; the eval's gm_map.gmean is trec_eval's "
        "gm_map, the geometric mean over the rows with each value floored at 0.00001.",
        (("gm_map", "average precision; gm_map.gmean: trec_eval's geometric mean", UNIT),),
        "none",
        "corpus",
        corpus=("gmean",),
        misleading={
            stat: f"the {what} of the rows' average precisions is map.{stat}; trec_eval's "
            "gm_map is gm_map.gmean"
            for stat, what in (("mean", "arithmetic mean"), ("sum", "sum"))
        },
    ),
    _family(
        "rprec",
        "R-precision (trec_eval Rprec), 0-1: relevant docs in the top R / R, R the number "
        "of relevant docs.",
        (("rprec", "relevant docs in the top R / R", UNIT),),
        "none",
        "continuous",
    ),
    _family(
        "bpref",
        "bpref (trec_eval), 0-1: per retrieved relevant doc 1 - min(n, R) / min(N, R), n "
        "the judged non-relevant docs above it (grade 0 in relevant), summed over R.",
        (("bpref", "relevant docs ranked above judged non-relevant ones", UNIT),),
        "none",
        "continuous",
    ),
    _family(
        "num_ret",
        "The number of retrieved docs (trec_eval num_ret; its summary is the sum).",
        (("num_ret", "retrieved docs", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "num_rel",
        "The number of relevant docs in the qrels (trec_eval num_rel).",
        (("num_rel", "relevant docs in the qrels", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "num_rel_ret",
        "The number of relevant docs retrieved (trec_eval num_rel_ret).",
        (("num_rel_ret", "relevant docs retrieved", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "iprec_at_recall",
        "Interpolated precision at a recall level (trec_eval 9 iprec_at_recall), 0-1: "
        "level is one of 0.0, 0.1, ..., 1.0 and required (records iprec_at_recall@0.5).",
        (("iprec_at_recall", "interpolated precision at the recall level", UNIT),),
        "required",
        "continuous",
    ),
    MetricSpec(
        "retrieval_consistency",
        "Share of the repeated retrievals (retrieved_repeats) whose top k equals the first "
        "ranking's top k, order included (the whole lists without k), 0-1.",
        (
            MetricInfo(
                "retrieval_consistency",
                "share of repeated retrievals equal in the top k",
                range=UNIT,
                cutoff="optional",
            ),
        ),
        ("retrieved_repeats",),
        measure_retrieval_consistency,
        options=("k",),
    ),
)
