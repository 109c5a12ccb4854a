"""One query's retrieval metrics in pure Python, equal to ``metrics.retrieval``'s to the bit.

A row test's retrieval fixtures each ask for one metric of one query. Through the arrays
of ``metrics.retrieval`` (built for thousands of queries at a time) every such call paid
numpy's fixed cost, a few microseconds for each of the twenty-odd array operations of a
metric, on arrays of a handful of numbers. Here one query's ranks are computed once, in
Python, and every metric is read from them; ``metrics.retrieval`` keeps them for a row
(``MetricContext.memo``), so a row test naming several retrieval fixtures ranks once.

The definitions are ``metrics.retrieval``'s (its module docstring). The values are the same
floats, not only close: each one is computed from the same numbers, in the same order, by
the same operations as there, where one query is one row of the arrays:

* a sum over a query's tracked documents is numpy's: from 0.0, pairwise over the terms
  in qrels order, zeros included (``numpy_sum``);
* the discount log2(rank + 2) and ndcg_exp's gain 2^grade - 1 come from numpy itself
  (a table of discounts, computed once, and the gains once a query): numpy's log2 and
  exp2 may run SIMD code whose last bit differs from the C library's ``math.log2``;
``query_ranks`` takes what a well-formed row's query is: grades that are ints or floats,
none NaN, and a ranked list of doc ids, each listed once (a row's ``retrieved``; rows
give no scores, so there are no ties to break). For anything else it returns
``None`` and the caller goes through ``metrics.retrieval.score_queries``, whose error (or
reading of an unusual value) is then exactly what it was.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pytest_ragmetrics.metrics.trec_options import TrecOptions

# log2(rank + 2) for ranks 0, 1, ...: grown (doubled) by ``_discounts`` when a query needs more.
_DISCOUNT_TABLE: list[float] = []


def numpy_sum(terms: Sequence[float]) -> float:
    """The sum numpy's ``add.reduce`` gives for ``terms`` as one row of a float64 array:
    0.0 plus numpy's pairwise sum, sequential below 8 terms, 8 running sums up to 128,
    halves (cut at a multiple of 8) beyond. Python's ``sum`` is not it: from 3.12 on it
    compensates the rounding."""
    total = 0.0
    if len(terms) < 8:
        for term in terms:
            total += term
        return total
    return total + _pairwise(terms, 0, len(terms))


def _pairwise(terms: Sequence[float], start: int, count: int) -> float:
    if count < 8:
        total = 0.0
        for i in range(start, start + count):
            total += terms[i]
        return total
    if count <= 128:
        sums = list(terms[start : start + 8])
        end = start + count - count % 8
        for block in range(start + 8, end, 8):
            for lane in range(8):
                sums[lane] += terms[block + lane]
        total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + (
            (sums[4] + sums[5]) + (sums[6] + sums[7])
        )
        for i in range(end, start + count):
            total += terms[i]
        return total
    half = count // 2
    half -= half % 8
    return _pairwise(terms, start, half) + _pairwise(terms, start + half, count - half)


def _discounts(size: int) -> list[float]:
    """numpy's log2(rank + 2.0) for ranks 0 to at least ``size - 1``."""
    global _DISCOUNT_TABLE
    table = _DISCOUNT_TABLE
    if len(table) < size:
        import numpy as np

        length = max(64, 2 * size)
        table = np.log2(np.arange(length, dtype=np.float64) + 2.0).tolist()
        _DISCOUNT_TABLE = table
    return table


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


@dataclass(frozen=True)
class QueryRanks:
    """One query's judged documents graded 0 or more (negative grades are not judged), in
    qrels order: their grades and 0-based ranks (``inf`` when not retrieved or past
    ``options.cutoff``), and how many documents were retrieved (at most the cutoff).
    What every metric of the query is read from, by ``value``."""

    grades: tuple[float, ...]
    ranks: tuple[float, ...]
    retrieved: int
    options: TrecOptions

    @cached_property
    def graded(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The grades and ranks of the documents graded above 0: what every metric but
        bpref tracks (bpref counts the judged non-relevant ones too, and so does ndcg when
        ``gains`` gives grade 0 a gain)."""
        kept = [i for i, grade in enumerate(self.grades) if grade > 0]
        if len(kept) == len(self.grades):
            return self.grades, self.ranks
        return tuple(self.grades[i] for i in kept), tuple(self.ranks[i] for i in kept)

    @cached_property
    def relevant(self) -> tuple[bool, ...]:
        """Per graded document: at the relevance level or above."""
        level = self.options.relevance_level
        return tuple(grade >= level for grade in self.graded[0])

    @cached_property
    def total(self) -> float:
        """R, the relevant documents of the qrels, retrieved or not."""
        return float(sum(self.relevant))

    @cached_property
    def relevant_ranks(self) -> list[float]:
        """The relevant documents' ranks in rank order, ``inf`` after (as many as graded
        documents: the unretrieved and the not relevant ones are ``inf``)."""
        ranks = self.graded[1]
        return sorted(
            rank if hit else math.inf for rank, hit in zip(ranks, self.relevant, strict=True)
        )

    def relevant_found(self) -> list[int]:
        """The 1-based ranks of the retrieved relevant documents, best first."""
        return [int(rank) + 1 for rank in self.relevant_ranks if rank != math.inf]

    @cached_property
    def precisions(self) -> list[float]:
        """The precision at each of ``relevant_ranks``: (how many so far) / (1-based
        rank), 0 past the last retrieved one."""
        return [
            (found / (rank + 1.0)) if rank != math.inf else 0.0
            for found, rank in enumerate(self.relevant_ranks, 1)
        ]

    @cached_property
    def exponential_gains(self) -> list[float]:
        """ndcg_exp's gain 2^grade - 1 of each graded document, 2^grade from numpy."""
        import numpy as np

        powers: list[float] = np.exp2(np.array(self.graded[0], dtype=np.float64)).tolist()
        return [power - 1.0 for power in powers]

    def value(self, family: str, k: int | None = None, level: str | None = None) -> float:
        """One metric of the query: its ``family`` (``metrics.retrieval.Family``), cutoff
        ``k`` (``None``: the whole ranking) and, for iprec_at_recall, recall ``level``."""
        cutoff = math.inf if k is None else float(k)
        if family in ("ndcg", "ndcg_exp"):
            return self._ndcg(family, cutoff)
        if family == "num_ret":
            return float(self.retrieved)
        if family == "num_rel":
            return self.total
        if family == "rprec":
            return self._rprec()
        if family in ("map", "gm_map"):
            return self._average_precision(cutoff)
        if family == "iprec_at_recall":
            assert level is not None
            return self._iprec(level)
        if family == "bpref":
            return self._bpref()
        return self._found(family, cutoff)

    def _gains(self, family: str, grades: tuple[float, ...]) -> list[float]:
        if family == "ndcg_exp":
            return self.exponential_gains
        gains = self.options.gains
        if gains:  # a grade without its own gain keeps its value (trec_eval)
            return [float(gains.get(grade, grade)) for grade in grades]
        return list(grades)

    def _ndcg(self, family: str, cutoff: float) -> float:
        """DCG over the ideal DCG, whose ranking holds the positive gains only (trec_eval);
        the documents graded 0 are ranked when ``gains`` gives them a gain."""
        every = family == "ndcg" and self.options.grade_zero_gains
        grades, ranks = (self.grades, self.ranks) if every else self.graded
        gains = self._gains(family, grades)
        deepest = max((int(rank) for rank in ranks if rank < cutoff), default=0)
        discounts = _discounts(max(deepest + 1, len(gains)))
        dcg = numpy_sum(
            [
                gain / discounts[int(rank)] if rank < cutoff else 0.0
                for gain, rank in zip(gains, ranks, strict=True)
            ]
        )
        positive = sorted((gain for gain in gains if gain > 0), reverse=True)
        ideal_gains = positive + [0.0] * (len(gains) - len(positive))
        ideal = numpy_sum(
            [
                gain / discounts[position] if position < cutoff else 0.0
                for position, gain in enumerate(ideal_gains)
            ]
        )
        return dcg / ideal if ideal > 0 else 0.0

    def _ratio(self, count: float) -> float:
        """count / R, 0 when the qrels have no relevant document."""
        total = self.total
        return count / total if total > 0 else 0.0

    def _rprec(self) -> float:
        total = self.total
        ranks = self.graded[1]
        return self._ratio(
            float(sum(hit and rank < total for hit, rank in zip(self.relevant, ranks, strict=True)))
        )

    def _average_precision(self, cutoff: float) -> float:
        precisions = self.precisions
        if cutoff != math.inf:
            precisions = [
                precision if rank < cutoff else 0.0
                for precision, rank in zip(precisions, self.relevant_ranks, strict=True)
            ]
        return self._ratio(numpy_sum(precisions))

    def _iprec(self, level: str) -> float:
        needed = max(math.trunc(float(level) * self.total + 0.9), 1)
        reached = [
            precision
            for found, (precision, rank) in enumerate(
                zip(self.precisions, self.relevant_ranks, strict=True), 1
            )
            if found >= needed and rank != math.inf
        ]
        return max(reached, default=0.0)

    def _found(self, family: str, cutoff: float) -> float:
        """The metrics of the relevant documents retrieved within the cutoff."""
        found = [
            rank
            for rank, hit in zip(self.graded[1], self.relevant, strict=True)
            if hit and rank < cutoff
        ]
        if family == "mrr":
            return 1.0 / (min(found, default=math.inf) + 1.0)
        count = float(len(found))
        if family == "hit_rate":
            return 1.0 if count > 0 else 0.0
        if family == "precision":
            return count / cutoff
        if family == "recall":
            return self._ratio(count)
        return count  # num_rel_ret

    def _bpref(self) -> float:
        """Over every judged document (graded 0 or more): each retrieved relevant one
        gains 1 - min(n, R) / min(N, R), n the judged non-relevant ones ranked above it."""
        level = self.options.relevance_level
        relevant = [grade >= level for grade in self.grades]
        total = float(sum(relevant))
        nonrelevant_ranks = sorted(
            rank
            for rank, hit in zip(self.ranks, relevant, strict=True)
            if not hit and rank != math.inf
        )
        scale = min(float(len(relevant)) - total, total)
        terms = []
        for rank, hit in zip(self.ranks, relevant, strict=True):
            if not hit or rank == math.inf:
                terms.append(0.0)
                continue
            above = float(bisect_left(nonrelevant_ranks, rank))
            terms.append(1.0 - (min(above, total) / scale if scale > 0 else 0.0))
        return numpy_sum(terms) / total if total > 0 else 0.0


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
    kept = tuple(grade for grade in grades if grade >= 0)
    ranks = _list_ranks(ranking, docs)
    if ranks is None:
        return None
    retrieved = len(ranking)
    if options.cutoff is not None:  # trec_eval -M: only the first N documents exist
        ranks = [rank if rank < options.cutoff else math.inf for rank in ranks]
        retrieved = min(retrieved, options.cutoff)
    return QueryRanks(kept, tuple(ranks), retrieved, options)


def _list_ranks(ranking: Sequence[object], docs: Sequence[str]) -> list[float] | None:
    try:
        position = dict(zip(ranking, range(len(ranking)), strict=True))
    except TypeError:  # an id that cannot be a key
        return None
    if len(position) != len(ranking):  # a document listed twice
        return None
    return [float(position.get(doc, math.inf)) for doc in docs]
