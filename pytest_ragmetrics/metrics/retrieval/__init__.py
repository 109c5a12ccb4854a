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

The package, one purpose a module:

* ``names.py``: the families, the cutoffs they take, ``parse_metric``;
* ``formulas.py``: each measure's formula, written once over the ranks of one query or of
  many (``Ranked``), on the arrays of ``arrays.py``: numpy rows for many queries, Python
  lists for one, giving the same floats;
* ``ranking.py``: the ranks of each query's judged documents, read from the caller's
  dicts and lists into flat arrays (scores, ties, ranked lists, the run's cutoff);
* ``corpus.py``: ``evaluate`` and ``score_queries``, the formulas over numpy rows, 1,024
  queries at a time;
* ``query.py``: one row's query ranked in Python, the per-row fixtures' path to the same
  formulas (numpy's fixed cost per operation would be most of a row's time);
* ``fixtures.py``: the per-row computations (``retrieval_measure``), their evidence,
  ``retrieval_consistency``, and the families' declarations, ``SPECS``.

Importing the package imports no numpy: the functions that compute do.
"""

from __future__ import annotations

from pytest_ragmetrics.metrics.retrieval.corpus import (
    Evaluation,
    evaluate,
    judge_rankings,
    metric_values,
    score_queries,
)
from pytest_ragmetrics.metrics.retrieval.fixtures import (
    GAINS,
    NDCG_RANGE,
    SPECS,
    as_qrels,
    gm_map_gmean,
    measure_retrieval_consistency,
    ranking,
    ranking_field,
    retrieval_consistency,
    retrieval_measure,
)
from pytest_ragmetrics.metrics.retrieval.names import (
    FAMILIES,
    GM_FLOOR,
    GM_MAP_LOGS,
    NEEDS_CUTOFF,
    RECALL_LEVELS,
    TAKES_CUTOFF,
    Family,
    RetrievalMetric,
    parse_metric,
    ranks_every_judged,
)
from pytest_ragmetrics.metrics.retrieval.ranking import (
    FloatArray,
    IntArray,
    JudgedRanks,
    Qrels,
    Ranking,
    Run,
)
from pytest_ragmetrics.metrics.trec_options import Ties, TrecOptions

__all__ = [
    "FAMILIES",
    "GAINS",
    "GM_FLOOR",
    "GM_MAP_LOGS",
    "NDCG_RANGE",
    "NEEDS_CUTOFF",
    "RECALL_LEVELS",
    "SPECS",
    "TAKES_CUTOFF",
    "Evaluation",
    "Family",
    "FloatArray",
    "IntArray",
    "JudgedRanks",
    "Qrels",
    "Ranking",
    "RetrievalMetric",
    "Run",
    "Ties",
    "TrecOptions",
    "as_qrels",
    "evaluate",
    "gm_map_gmean",
    "judge_rankings",
    "measure_retrieval_consistency",
    "metric_values",
    "parse_metric",
    "ranking",
    "ranking_field",
    "ranks_every_judged",
    "retrieval_consistency",
    "retrieval_measure",
    "score_queries",
]
