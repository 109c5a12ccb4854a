"""The two kinds of arrays the retrieval formulas (``formulas.py``) run on, with the
operations a formula may use: ``COLUMNS`` for many queries at once (numpy), ``ONE_QUERY``
for one query (Python lists, where numpy's fixed cost per operation would be most of the
time). Neither knows a measure: each operation is elementwise, a reduction over a query's
documents, or a sort, and both give the same floats for one query.

Shapes. ``Docs`` holds one value per tracked document of each query: a (queries, width)
float array, each query's row padded with grade -1 (unjudged) and rank ``inf``, or for
one query a list. ``Marks`` is the same shape of booleans. ``PerQuery`` is one value per
query: a (queries,) array, or a float; plain arithmetic on it works on both.

Equal floats. A reduction over a query's documents is numpy's: from 0.0, pairwise over
the terms in order, zeros included (``numpy_sum``); the discount log2(rank + 2) and
2^grade come from numpy itself (a table of discounts, computed once; numpy's log2 and
exp2 may run SIMD code whose last bit differs from the C library's ``math.log2``). The
rest (comparisons, counts, minima, maxima, one division per element) is exact or one
IEEE operation on the same operands.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeAlias

# One value per tracked document of each query (see the module docstring).
Docs: TypeAlias = Any
Marks: TypeAlias = Any
PerQuery: TypeAlias = Any


class ArrayOps(Protocol):
    """What a formula may do with ``Docs``, ``Marks`` and ``PerQuery`` values. ``bound``
    is a number or a ``PerQuery`` value (each query's own)."""

    def less(self, values: Docs, bound: Any) -> Marks: ...
    def at_least(self, values: Docs, bound: Any) -> Marks: ...
    def above(self, values: Docs, bound: Any) -> Marks: ...
    def both(self, first: Marks, second: Marks) -> Marks: ...
    def negate(self, marks: Marks) -> Marks: ...
    def finite(self, values: Docs) -> Marks: ...
    def where(self, marks: Marks, values: Docs, fill: float) -> Docs: ...
    def add(self, values: Docs, number: float) -> Docs: ...
    def divide(self, numerators: Docs, denominators: Docs) -> Docs: ...
    def ratios(self, numerators: Docs, denominators: PerQuery) -> Docs: ...
    def one_minus(self, values: Docs) -> Docs: ...
    def minimum(self, values: Docs, bound: Any) -> Docs: ...
    def columns(self, values: Docs) -> Docs: ...
    def sort(self, values: Docs) -> Docs: ...
    def sort_descending(self, values: Docs) -> Docs: ...
    def discount(self, ranks: Docs) -> Docs: ...
    def exp2(self, values: Docs) -> Docs: ...
    def mapped(self, values: Docs, table: Mapping[float, float]) -> Docs: ...
    def count_before(self, marks: Marks, ranks: Docs) -> Docs: ...
    def sum(self, values: Docs) -> PerQuery: ...
    def count(self, marks: Marks) -> PerQuery: ...
    def max(self, values: Docs) -> PerQuery: ...
    def min(self, values: Docs) -> PerQuery: ...
    def ratio(self, numerator: PerQuery, denominator: PerQuery) -> PerQuery: ...
    def indicator(self, truth: Any) -> PerQuery: ...
    def trunc(self, values: PerQuery) -> PerQuery: ...
    def pairwise_max(self, first: PerQuery, second: Any) -> PerQuery: ...
    def pairwise_min(self, first: PerQuery, second: Any) -> PerQuery: ...


def _per_doc(bound: Any) -> Any:
    """A ``PerQuery`` array as a column, to compare or combine with each query's row."""
    return bound[:, None] if getattr(bound, "ndim", 0) == 1 else bound


class Columns:
    """Many queries: numpy arrays, each query a row (``ArrayOps``; reductions along rows).
    numpy is imported by each operation, not with the plugin."""

    def less(self, values: Docs, bound: Any) -> Marks:
        return values < _per_doc(bound)

    def at_least(self, values: Docs, bound: Any) -> Marks:
        return values >= _per_doc(bound)

    def above(self, values: Docs, bound: Any) -> Marks:
        return values > _per_doc(bound)

    def both(self, first: Marks, second: Marks) -> Marks:
        return first & second

    def negate(self, marks: Marks) -> Marks:
        return ~marks

    def finite(self, values: Docs) -> Marks:
        import numpy as np

        return np.isfinite(values)

    def where(self, marks: Marks, values: Docs, fill: float) -> Docs:
        import numpy as np

        return np.where(marks, values, fill)

    def add(self, values: Docs, number: float) -> Docs:
        return values + number

    def divide(self, numerators: Docs, denominators: Docs) -> Docs:
        return numerators / denominators

    def ratios(self, numerators: Docs, denominators: PerQuery) -> Docs:
        import numpy as np

        column = np.broadcast_to(denominators[:, None], numerators.shape)
        return np.divide(numerators, column, out=np.zeros_like(numerators), where=column > 0)

    def one_minus(self, values: Docs) -> Docs:
        return 1.0 - values

    def minimum(self, values: Docs, bound: Any) -> Docs:
        import numpy as np

        return np.minimum(values, _per_doc(bound))

    def columns(self, values: Docs) -> Docs:
        import numpy as np

        return np.arange(values.shape[1], dtype=np.float64)

    def sort(self, values: Docs) -> Docs:
        import numpy as np

        return np.sort(values, axis=1)

    def sort_descending(self, values: Docs) -> Docs:
        import numpy as np

        return -np.sort(-values, axis=1)

    def discount(self, ranks: Docs) -> Docs:
        import numpy as np

        return np.log2(ranks + 2.0)

    def exp2(self, values: Docs) -> Docs:
        import numpy as np

        return np.exp2(values)

    def mapped(self, values: Docs, table: Mapping[float, float]) -> Docs:
        import numpy as np

        return np.vectorize(lambda value: float(table.get(value, value)), otypes=[np.float64])(
            values
        )

    def count_before(self, marks: Marks, ranks: Docs) -> Docs:
        """Per document, how many marked documents of its query rank above it, counted
        along each query's rank order (the unranked, ``inf``, last)."""
        import numpy as np

        rows = np.arange(marks.shape[0])[:, None]
        order = np.argsort(ranks, axis=1, kind="stable")
        in_order = marks[rows, order]
        before = np.empty(in_order.shape)
        before[rows, order] = np.cumsum(in_order, axis=1) - in_order
        return before

    def sum(self, values: Docs) -> PerQuery:
        return values.sum(axis=1)

    def count(self, marks: Marks) -> PerQuery:
        import numpy as np

        return marks.sum(axis=1).astype(np.float64)

    def max(self, values: Docs) -> PerQuery:
        return values.max(axis=1, initial=0.0)

    def min(self, values: Docs) -> PerQuery:
        return values.min(axis=1, initial=math.inf)

    def ratio(self, numerator: PerQuery, denominator: PerQuery) -> PerQuery:
        import numpy as np

        return np.divide(
            numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0
        )

    def indicator(self, truth: Any) -> PerQuery:
        import numpy as np

        return truth.astype(np.float64)

    def trunc(self, values: PerQuery) -> PerQuery:
        import numpy as np

        return np.trunc(values)

    def pairwise_max(self, first: PerQuery, second: Any) -> PerQuery:
        import numpy as np

        return np.maximum(first, second)

    def pairwise_min(self, first: PerQuery, second: Any) -> PerQuery:
        import numpy as np

        return np.minimum(first, second)


# log2(rank + 2) for ranks 0, 1, ...: grown (doubled) by ``_discounts`` when a query needs more.
_DISCOUNT_TABLE: list[float] = []


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


class OneQuery:
    """One query: lists of its documents' values, floats for the query
    (``ArrayOps``), in pure Python but for the discount table and 2^grade."""

    def less(self, values: Docs, bound: Any) -> Marks:
        return [value < bound for value in values]

    def at_least(self, values: Docs, bound: Any) -> Marks:
        return [value >= bound for value in values]

    def above(self, values: Docs, bound: Any) -> Marks:
        return [value > bound for value in values]

    def both(self, first: Marks, second: Marks) -> Marks:
        return [a and b for a, b in zip(first, second, strict=True)]

    def negate(self, marks: Marks) -> Marks:
        return [not mark for mark in marks]

    def finite(self, values: Docs) -> Marks:
        return [value != math.inf for value in values]  # ranks: never NaN or -inf

    def where(self, marks: Marks, values: Docs, fill: float) -> Docs:
        return [value if mark else fill for mark, value in zip(marks, values, strict=True)]

    def add(self, values: Docs, number: float) -> Docs:
        return [value + number for value in values]

    def divide(self, numerators: Docs, denominators: Docs) -> Docs:
        return [a / b for a, b in zip(numerators, denominators, strict=True)]

    def ratios(self, numerators: Docs, denominators: PerQuery) -> Docs:
        if denominators > 0:
            return [value / denominators for value in numerators]
        return [0.0] * len(numerators)

    def one_minus(self, values: Docs) -> Docs:
        return [1.0 - value for value in values]

    def minimum(self, values: Docs, bound: Any) -> Docs:
        return [min(value, bound) for value in values]

    def columns(self, values: Docs) -> Docs:
        return [float(column) for column in range(len(values))]

    def sort(self, values: Docs) -> Docs:
        return sorted(values)

    def sort_descending(self, values: Docs) -> Docs:
        return sorted(values, reverse=True)

    def discount(self, ranks: Docs) -> Docs:
        try:
            return [_DISCOUNT_TABLE[int(rank)] if rank != math.inf else math.inf for rank in ranks]
        except IndexError:  # a rank beyond the table: grow it
            deepest = max(int(rank) for rank in ranks if rank != math.inf)
            table = _discounts(deepest + 1)
            return [table[int(rank)] if rank != math.inf else math.inf for rank in ranks]

    def exp2(self, values: Docs) -> Docs:
        import numpy as np

        powers: list[float] = np.exp2(np.array(values, dtype=np.float64)).tolist()
        return powers

    def mapped(self, values: Docs, table: Mapping[float, float]) -> Docs:
        return [float(table.get(value, value)) for value in values]

    def count_before(self, marks: Marks, ranks: Docs) -> Docs:
        """Per ranked document, how many marked documents rank above it (each rank is
        one document's; the unranked, ``inf``, are above none)."""
        marked = sorted(
            rank for rank, mark in zip(ranks, marks, strict=True) if mark and rank != math.inf
        )
        return [float(bisect_left(marked, rank)) for rank in ranks]

    def sum(self, values: Docs) -> PerQuery:
        return numpy_sum(values)

    def count(self, marks: Marks) -> PerQuery:
        return float(sum(marks))

    def max(self, values: Docs) -> PerQuery:
        top: float = max(values, default=0.0)  # numpy's max with initial=0.0
        return top if top > 0.0 else 0.0

    def min(self, values: Docs) -> PerQuery:
        return min(values, default=math.inf)

    def ratio(self, numerator: PerQuery, denominator: PerQuery) -> PerQuery:
        return numerator / denominator if denominator > 0 else 0.0

    def indicator(self, truth: Any) -> PerQuery:
        return 1.0 if truth else 0.0

    def trunc(self, values: PerQuery) -> PerQuery:
        return float(math.trunc(values))

    def pairwise_max(self, first: PerQuery, second: Any) -> PerQuery:
        return max(first, second)

    def pairwise_min(self, first: PerQuery, second: Any) -> PerQuery:
        return min(first, second)


COLUMNS = Columns()
ONE_QUERY = OneQuery()
