"""The corpus API: ``evaluate`` (the mean of each measure over a run, trec_eval's
numbers) and ``score_queries`` (each measure of each query), vectorised over queries.

Every measure is computed from the ranks of each query's relevant documents only (and of
its judged non-relevant ones when ``bpref`` is asked for, ``ranking.py``), by the formulas
of ``formulas.py`` on numpy arrays (``arrays.COLUMNS``), 1,024 queries at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pytest_ragmetrics.collector import collector_paused
from pytest_ragmetrics.metrics.retrieval.arrays import COLUMNS
from pytest_ragmetrics.metrics.retrieval.formulas import Ranked
from pytest_ragmetrics.metrics.retrieval.names import (
    GM_FLOOR,
    RetrievalMetric,
    parse_metric,
    ranks_every_judged,
)
from pytest_ragmetrics.metrics.retrieval.ranking import (
    FloatArray,
    JudgedRanks,
    Qrels,
    Ranking,
    Run,
    Tracked,
    flat_ranks,
    judged_ranks,
    track,
    width_of,
)
from pytest_ragmetrics.metrics.trec_options import Ties, TrecOptions

# Queries scored at a time (``score_queries``): a block's arrays stay in the processor's
# cache. Each block pads its rows to the call's widest query, so blocks change no value.
_QUERY_BLOCK = 1024


def _ranked(judged: JudgedRanks, options: TrecOptions) -> Ranked:
    return Ranked(COLUMNS, judged.grades, judged.ranks, judged.retrieved, options)


def metric_values(
    judged: JudgedRanks, metric: RetrievalMetric, options: TrecOptions | None = None
) -> FloatArray:
    """One metric for every query of ``judged`` (``formulas.Ranked.value``). ``gm_map``
    is the per-query average precision (its mean is geometric: ``evaluate``)."""
    values: FloatArray = _ranked(judged, options or TrecOptions()).value(metric)
    return values


def judge_rankings(
    qids: Sequence[str],
    tracked: Tracked,
    rankings: Sequence[Ranking],
    options: TrecOptions,
    width: int,
) -> JudgedRanks:
    """The ranks of the ``tracked`` documents of each query in its ranking (scores or a
    list), each ranking cut to its first ``options.cutoff`` documents; rows padded to
    ``width`` columns."""
    ranks, retrieved = flat_ranks(qids, tracked, rankings, options)
    return judged_ranks(tracked, ranks, retrieved, width)


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
    tracked = [track(qids[i : i + _QUERY_BLOCK], qrels, bool(every)) for i in starts]
    # Each block's documents graded above 0, and which of the tracked ones they are
    # (``None``: all of them).
    positive = [block.positive if every else (block, None) for block in tracked]
    every_width, graded_width = width_of(tracked), width_of([block for block, _ in positive])
    blocks = []
    for start, documents, (graded_docs, keep) in zip(starts, tracked, positive, strict=True):
        end = start + _QUERY_BLOCK
        ranks, retrieved = flat_ranks(qids[start:end], documents, rankings[start:end], options)
        values: dict[str, FloatArray] = {}
        if every:
            ranked = _ranked(judged_ranks(documents, ranks, retrieved, every_width), options)
            values.update({metric.name: ranked.value(metric) for metric in every})
        if graded:
            graded_ranks = ranks if keep is None else ranks[keep]
            judged = judged_ranks(graded_docs, graded_ranks, retrieved, graded_width)
            ranked = _ranked(judged, options)
            values.update({metric.name: ranked.value(metric) for metric in graded})
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
