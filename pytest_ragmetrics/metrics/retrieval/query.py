"""One query's ranks in pure Python: the per-row fixtures' path to the formulas.

A row test's retrieval fixtures each ask for one measure of one query. Through numpy
arrays (built for thousands of queries at a time) every such call paid numpy's fixed cost,
a few microseconds for each of the twenty-odd array operations of a measure, on arrays of a
handful of numbers. Here one query's ranks are computed once, in Python, and every measure
is read from them by ``formulas.py`` on ``ONE_QUERY`` lists: the formulas ``score_queries``
runs on numpy arrays, giving the same floats (``arrays.py`` says how). The fixtures keep
the ranks for a row (``MetricContext.memo``), so a row test naming several retrieval
fixtures ranks once.

``query_ranks`` takes what a well-formed row's query is: grades that are ints or floats,
none NaN, and a ranked list of doc ids, each listed once (a row's ``retrieved``; rows give
no scores, so there are no ties to break). For anything else it returns ``None`` and the
caller goes through ``score_queries``, whose error (or reading of an unusual value) is then
exactly what it was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.metrics.retrieval.arrays import ONE_QUERY
from pytest_ragmetrics.metrics.retrieval.formulas import Ranked
from pytest_ragmetrics.metrics.retrieval.names import RetrievalMetric, ranks_every_judged
from pytest_ragmetrics.metrics.trec_options import TrecOptions


@dataclass(frozen=True)
class QueryRanks:
    """One query's ranks, what every measure of the query is read from (``measure``): its
    judged documents graded 0 or more (negative grades are not judged) in qrels order,
    with their grades and 0-based ranks (``inf`` when not retrieved or past
    ``options.cutoff``) and how many documents were retrieved (at most the cutoff), as
    ``every`` (what bpref tracks, and ndcg when ``gains`` gives grade 0 a gain) and as
    ``graded``, the documents graded above 0 (what every other measure tracks; ``every``
    itself when no document is graded 0)."""

    every: Ranked
    graded: Ranked
    options: TrecOptions

    @property
    def total(self) -> float:
        """R, the relevant documents of the qrels, retrieved or not."""
        total: float = self.graded.total
        return total

    def relevant_found(self) -> list[int]:
        """The 1-based ranks of the retrieved relevant documents, best first."""
        return [int(rank) + 1 for rank in self.graded.relevant_ranks if rank != math.inf]

    def measure(self, metric: RetrievalMetric) -> float:
        """One measure of the query (``formulas.Ranked.value``)."""
        every = ranks_every_judged(metric, self.options)
        value: float = (self.every if every else self.graded).value(metric)
        return value

    def value(self, family: str, k: int | None = None, level: str | None = None) -> float:
        """One measure of the query: its ``family`` (``names.Family``), cutoff ``k``
        (``None``: the whole ranking) and, for iprec_at_recall, recall ``level``."""
        return self.measure(RetrievalMetric(family, k, level))  # type: ignore[arg-type]


_PLAIN = frozenset({float, int})


def _numbers(values: list[Any]) -> list[float] | None:
    """``values`` as floats when each is an int or a float (no bool, no other type) and
    none is NaN: numbers that ``float`` and numpy read alike. ``None`` otherwise."""
    if not _PLAIN.issuperset(map(type, values)):
        return None
    try:
        numbers = list(map(float, values))
    except OverflowError:  # an int too large for a float
        return None
    return None if any(map(math.isnan, numbers)) else numbers


def query_ranks(
    judgements: Mapping[str, float], ranking: object, options: TrecOptions
) -> QueryRanks | None:
    """One query's ``QueryRanks``: ``judgements`` its qrels ``{doc_id: grade}``,
    ``ranking`` its ranked list of doc ids (what a row's ``retrieved`` is). ``None`` for
    what is not a well-formed query (see the module docstring), scores included (the
    rows give none): ``score_queries`` then answers."""
    grades = _numbers(list(judgements.values()))
    if grades is None or not isinstance(ranking, Sequence) or isinstance(ranking, str):
        return None
    docs = [doc for doc, grade in zip(judgements, grades, strict=True) if grade >= 0]
    kept = [grade for grade in grades if grade >= 0]
    ranks = _list_ranks(ranking, docs)
    if ranks is None:
        return None
    retrieved = len(ranking)
    if options.cutoff is not None:  # trec_eval -M: only the first N documents exist
        ranks = [rank if rank < options.cutoff else math.inf for rank in ranks]
        retrieved = min(retrieved, options.cutoff)
    every = Ranked(ONE_QUERY, kept, ranks, float(retrieved), options)
    if all(grade > 0 for grade in kept):
        return QueryRanks(every, every, options)
    graded = [i for i, grade in enumerate(kept) if grade > 0]
    grades, graded_ranks = [kept[i] for i in graded], [ranks[i] for i in graded]
    return QueryRanks(
        every, Ranked(ONE_QUERY, grades, graded_ranks, float(retrieved), options), options
    )


def _list_ranks(ranking: Sequence[object], docs: Sequence[str]) -> list[float] | None:
    try:
        position = dict(zip(ranking, range(len(ranking)), strict=True))
    except TypeError:  # an id that cannot be a key
        return None
    if len(position) != len(ranking):  # a document listed twice
        return None
    return [float(position.get(doc, math.inf)) for doc in docs]
