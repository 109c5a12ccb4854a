"""The ranks of each query's judged documents in its run, read from Python dicts and
lists into flat arrays (``score_queries``'s input to the formulas).

A run gives, per query, either scores (``{doc_id: score}``, ranked by score descending,
ties broken by doc id descending, as trec_eval does; like trec_eval 9, scores are compared
as 32-bit floats, so scores equal at that precision tie, or as doubles with
``ties="double"``, as trec_eval 10) or a ranked list (``[doc_id, ...]``, best first).
Only the ranks of the judged documents a measure needs are computed: one comparison of
each retrieved judged document's score with its query's scores, vectorised over the
queries. The grades and scores of every query are read from the caller's dicts into flat
arrays, a pass each, and nothing is built query by query except the doc-id order of tied
scores. numpy is imported by the functions that compute.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, repeat
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_ragmetrics.metrics.trec_options import Ties, TrecOptions

if TYPE_CHECKING:  # numpy is imported by the functions that compute, not with the plugin
    import numpy as np
    import numpy.typing as npt

Qrels = Mapping[str, Mapping[str, float]]
Ranking = Mapping[str, float] | Sequence[str]
Run = Mapping[str, Ranking]
FloatArray: TypeAlias = "npt.NDArray[np.float64]"
IntArray: TypeAlias = "npt.NDArray[np.int64]"
# Bounds a block of comparisons (retrieved judged documents x their runs' length).
_BLOCK_ELEMENTS = 1 << 22
# The grade of a padding column: negative, so unjudged (trec_eval's reading).
PADDING_GRADE = -1.0


@dataclass(frozen=True)
class JudgedRanks:
    """Per query, what every formula needs: the grades of the judged documents tracked
    (grade > 0; for bpref, and for ndcg when grade 0 has a gain, every grade >= 0),
    padded with ``PADDING_GRADE``, their 0-based ranks in the run (``inf`` when not
    retrieved, cut off or padding) and how many documents were retrieved (as floats).
    Shapes: (queries, width) twice, (queries,)."""

    grades: FloatArray
    ranks: FloatArray
    retrieved: FloatArray


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
class Tracked:
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
    def positive(self) -> tuple[Tracked, npt.NDArray[np.bool_]]:
        """The documents graded above 0, in the same order, as a ``Tracked`` of their own
        (every query kept, with maybe none), and which of ours they are."""
        import numpy as np

        keep = self.grades > 0
        docs = list(compress(self.docs, keep.tolist()))
        query = self.query[keep]
        counts = np.bincount(query, minlength=self.counts.size)
        return Tracked(docs, self.grades[keep], query, counts), keep

    def only(self, queries: Sequence[int]) -> tuple[Tracked, npt.NDArray[np.bool_]]:
        """The documents of ``queries`` (indices, ascending) as a ``Tracked`` of their
        own, and which of ours they are."""
        import numpy as np

        chosen = np.zeros(self.counts.size, dtype=bool)
        chosen[list(queries)] = True
        keep = chosen[self.query]
        renumbered = np.cumsum(chosen) - 1
        docs = list(compress(self.docs, keep.tolist()))
        subset = Tracked(docs, self.grades[keep], renumbered[self.query[keep]], self.counts[chosen])
        return subset, keep


def track(qids: Sequence[str], qrels: Qrels, nonrelevant: bool) -> Tracked:
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
    return Tracked(docs, grades[keep], query, np.bincount(query, minlength=len(qids)))


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
    scored: Sequence[Mapping[str, float]], tracked: Tracked, lengths: IntArray
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
    scored: Sequence[Mapping[str, float]], tracked: Tracked, ties: Ties = "float32"
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
    qids: Sequence[str], rankings: Sequence[Ranking], tracked: Tracked, ties: Ties
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


def flat_ranks(
    qids: Sequence[str], tracked: Tracked, rankings: Sequence[Ranking], options: TrecOptions
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


def judged_ranks(
    tracked: Tracked, ranks: FloatArray, retrieved: IntArray, width: int
) -> JudgedRanks:
    """``tracked``'s grades and ``ranks`` per query, rows padded to ``width`` columns."""
    import numpy as np

    return JudgedRanks(
        tracked.spread(tracked.grades, PADDING_GRADE, width),
        tracked.spread(ranks, math.inf, width),
        retrieved.astype(np.float64),
    )


def width_of(blocks: Sequence[Tracked]) -> int:
    """The most documents any query of ``blocks`` tracks: every block's rows are that
    wide, so that a query's values do not depend on the block it falls in."""
    return max((int(block.counts.max(initial=0)) for block in blocks), default=0)
