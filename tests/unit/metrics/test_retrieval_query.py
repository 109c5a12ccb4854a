"""One query in pure Python (``metrics.retrieval.query``), the path of the per-row fixtures.

It runs the formulas of ``metrics.retrieval.formulas`` on one query's lists
(``arrays.ONE_QUERY``), where ``score_queries`` runs them on numpy rows
(``arrays.COLUMNS``). Its values must be the very floats ``score_queries`` gives (the
reference for the bits: the vectorised path, itself checked against trec_eval in
test_retrieval.py and test_trec_measures.py), and within 1e-9 of pytrec_eval's on single
queries: ties, all-equal scores, ranked lists, cutoffs, relevance levels and gains. Its
building blocks are checked against numpy directly: the sum and the 32-bit rounding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from test_retrieval import trec_order
from test_trec_measures import EDGE_DOCS, EDGE_SCORES, TREC_KEYS, TREC_MEASURES, nan_free

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.retrieval import (
    FAMILIES,
    NEEDS_CUTOFF,
    RECALL_LEVELS,
    TAKES_CUTOFF,
    fixtures,
    parse_metric,
    retrieval_measure,
    score_queries,
)
from pytest_ragmetrics.metrics.retrieval.arrays import COLUMNS, ONE_QUERY, ArrayOps, numpy_sum
from pytest_ragmetrics.metrics.retrieval.query import query_ranks
from pytest_ragmetrics.metrics.trec_options import TrecOptions

KS = (1, 2, 3, 5, 10, 20)
# Every metric name: each family whole and at each cutoff it takes, every recall level.
NAMES = [
    *(family for family in FAMILIES if family not in NEEDS_CUTOFF and family != "iprec_at_recall"),
    *(f"{family}@{k}" for family in sorted(TAKES_CUTOFF) for k in KS),
    *(f"iprec_at_recall@{level}" for level in RECALL_LEVELS),
]


def bits(value: float) -> str:
    """A float's exact value, sign of zero included: equal bits, equal strings."""
    return float(value).hex()


def assert_same_floats(
    judgements: Mapping[str, Any], ranking: Any, options: TrecOptions, names: list[str]
) -> None:
    """The one-query path gives, for every name, the float ``score_queries`` gives for
    that name (alone or with others: the same, see
    ``test_a_metric_does_not_depend_on_the_others_asked_with_it``)."""
    ranks = query_ranks(judgements, ranking, options)
    assert ranks is not None
    for name in names:
        expected = score_queries(["q"], {"q": judgements}, [ranking], [name], options)[name]
        metric = parse_metric(name)
        got = ranks.value(metric.family, metric.k, metric.level)
        assert bits(got) == bits(expected[0]), name


# -- the building blocks, against numpy -------------------------------------------------


def test_both_kinds_of_arrays_offer_every_operation_the_formulas_may_use() -> None:
    # The formulas run on either kind: an operation missing from one would fail only
    # when a measure using it first runs on that kind.
    operations = {
        name
        for name, member in vars(ArrayOps).items()
        if callable(member) and not name.startswith("_")
    }
    assert len(operations) > 20
    for arrays in (ONE_QUERY, COLUMNS):
        missing = sorted(name for name in operations if not callable(getattr(arrays, name, None)))
        assert missing == [], type(arrays).__name__


FINITE = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.lists(FINITE, max_size=20),
        st.lists(st.floats(-1e3, 1e3), min_size=100, max_size=300),
        st.lists(st.sampled_from([0.0, -0.0, 1.0, 0.5]), max_size=40),
    )
)
def test_numpy_sum_is_numpys(terms: list[float]) -> None:
    # Up to 300 terms: sequential below 8, 8 running sums up to 128, halves beyond.
    with np.errstate(over="ignore", invalid="ignore"):
        expected = np.array([terms], dtype=np.float64).reshape(1, len(terms)).sum(axis=1)[0]
    assert bits(numpy_sum(terms)) == bits(expected)


def test_numpy_sum_of_nothing_is_zero() -> None:
    assert bits(numpy_sum([])) == bits(0.0)


# -- every metric of one query: the floats of score_queries -----------------------------

DOCS = [f"d{i}" for i in range(12)]  # "d9" > "d10" > "d1": ties go by the strings
GRADES = {
    "binary": st.integers(0, 1),
    "graded": st.integers(-1, 3),
    "fractional": st.sampled_from([-0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.25]),
}
SCORES = {
    **EDGE_SCORES,  # continuous, tied, equal, extreme (infinities, signed zeros), near
    "ints": st.integers(-3, 3),
    "large": st.floats(-1e40, 1e40),  # beyond 32-bit floats: infinite there
}


@st.composite
def options(draw: st.DrawFn) -> TrecOptions:
    gains = draw(
        st.sampled_from(
            [None, {1: 3.0, 2: 7.0}, {1.5: -1.0, 3: 0.0, 2: 10}, {0: 2.0, 1: -1.0}, {0: -0.5}]
        )
    )
    return TrecOptions(
        relevance_level=draw(st.sampled_from([1, 2, 0.5, 3])),
        cutoff=draw(st.one_of(st.none(), st.integers(1, 12))),
        gains=gains,
        ties=draw(st.sampled_from(["float32", "double"])),
    )


@st.composite
def queries(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """Judgements (one kind of grade; any may be missing) and a ranked list: drawn, or
    the trec_eval order of scores of one kind (all equal, tied, infinite ...)."""
    grades = GRADES[draw(st.sampled_from(sorted(GRADES)))]
    judgements = draw(st.dictionaries(st.sampled_from(DOCS), grades))
    if draw(st.booleans()):
        return judgements, draw(st.lists(st.sampled_from(DOCS), unique=True))
    score = SCORES[draw(st.sampled_from(sorted(SCORES)))]
    return judgements, trec_order(draw(st.dictionaries(st.sampled_from(DOCS), score)))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # numpy: 1e40 in 32 bits
@settings(max_examples=500, deadline=None)
@given(queries(), options())
def test_every_metric_is_the_float_of_score_queries(
    query: tuple[dict[str, Any], Any], trec_options: TrecOptions
) -> None:
    judgements, ranking = query
    assert_same_floats(judgements, ranking, trec_options, NAMES)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # numpy: 1e40 in 32 bits
@settings(max_examples=300, deadline=None)
@given(st.lists(queries(), min_size=1, max_size=3), options())
def test_a_metric_does_not_depend_on_the_others_asked_with_it(
    batch: list[tuple[dict[str, Any], Any]], trec_options: TrecOptions
) -> None:
    # bpref ranks the documents graded 0 too, and a gain for grade 0 puts them in nDCG:
    # asked together or alone, every metric of every query is the same float.
    qids = [f"q{i}" for i in range(len(batch))]
    qrels = {qid: judgements for qid, (judgements, _) in zip(qids, batch, strict=True)}
    rankings = [ranking for _, ranking in batch]
    together = score_queries(qids, qrels, rankings, NAMES, trec_options)
    for name in NAMES:
        alone = score_queries(qids, qrels, rankings, [name], trec_options)[name]
        assert list(map(bits, alone)) == list(map(bits, together[name])), name


@pytest.mark.parametrize("seed", range(4))
def test_long_queries_are_the_floats_of_score_queries(seed: int) -> None:
    # 150 to 300 judged documents: the sums of more than 128 terms split in halves.
    rng = np.random.default_rng(seed)
    pool = [f"doc{i}" for i in range(600)]
    judged = rng.choice(len(pool), size=int(rng.integers(150, 301)), replace=False)
    judgements = {pool[i]: int(rng.integers(0, 4)) for i in judged}
    retrieved = rng.choice(len(pool), size=400, replace=False)
    scores = np.round(rng.random(400), 2 if seed % 2 else 6)  # seed 1, 3: many ties
    run = {pool[i]: float(score) for i, score in zip(retrieved, scores, strict=True)}
    for ranking in (trec_order(run), list(run)):  # trec_eval's order, and another
        for trec_options in (TrecOptions(), TrecOptions(relevance_level=2, cutoff=250)):
            assert_same_floats(judgements, ranking, trec_options, NAMES)


# -- and trec_eval's, on single queries --------------------------------------------------


@st.composite
def single_queries(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, float]]:
    """trec_eval's kind of query: grades 0..3 (maybe no relevant document) and a non-empty
    scored ranking of one kind (all equal, tied, near in 32 bits ...), which ours takes
    as the list of trec_eval's order."""
    score = EDGE_SCORES[draw(st.sampled_from(sorted(EDGE_SCORES)))]
    top = draw(st.sampled_from([0, 1, 3]))
    judgements = draw(st.dictionaries(st.sampled_from(EDGE_DOCS), st.integers(0, top), min_size=1))
    run = draw(st.dictionaries(st.sampled_from(EDGE_DOCS), score, min_size=1))
    return judgements, run


@settings(max_examples=300, deadline=None)
@given(single_queries(), st.sampled_from([1, 2, 3]), st.one_of(st.none(), st.integers(1, 8)))
def test_single_queries_equal_pytrec_eval(
    query: tuple[dict[str, int], dict[str, float]],
    relevance_level: int,
    cutoff: int | None,
) -> None:
    # trec_eval -M N keeps the first N documents of the ranking: pytrec_eval is given
    # the run cut that way.
    judgements, run = query
    ordered = trec_order(run)
    trec_run = {doc: run[doc] for doc in ordered[:cutoff]}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {"q": judgements}, TREC_MEASURES, relevance_level=relevance_level
    )
    expected = nan_free(evaluator.evaluate({"q": trec_run}))["q"]
    ranks = query_ranks(
        judgements, ordered, TrecOptions(relevance_level=relevance_level, cutoff=cutoff)
    )
    assert ranks is not None
    for name, key in TREC_KEYS.items():
        metric = parse_metric(name)
        got = ranks.value(metric.family, metric.k, metric.level)
        if name == "gm_map":  # trec_eval keeps log(max(AP, 0.00001)) per query
            got, expected_value = max(got, 0.00001), math.exp(expected[key])
        else:
            expected_value = expected[key]
        assert got == pytest.approx(expected_value, abs=1e-9), name


# -- what is not a well-formed query goes to score_queries ------------------------------


@pytest.mark.parametrize(
    ("judgements", "ranking"),
    [
        ({"a": math.nan}, ["a"]),  # NaN
        ({"a": True}, ["a"]),  # a bool is no grade
        ({"a": np.float64(1.0)}, ["a"]),  # another type: read as score_queries reads it
        ({"a": 10**400}, ["a"]),  # too large for a float
        ({"a": 1}, ["a", "b", "a"]),  # listed twice
        ({"a": 1}, "ab"),  # a string
        ({"a": 1}, {"a": 0.5}),  # scores: a row's ranking is a list
        ({"a": 1}, {"a", "b"}),  # not a sequence
    ],
)
def test_what_is_not_well_formed_is_left_to_score_queries(
    judgements: dict[str, Any], ranking: Any
) -> None:
    assert query_ranks(judgements, ranking, TrecOptions()) is None


# -- the fixtures: one ranking a row, kept in the row's context -------------------------


def _no_embed(texts: Any) -> Any:
    raise AssertionError("retrieval metrics embed nothing")


def _row(row_id: str, **data: Any) -> Row:
    return Row(row_id, "rows.jsonl", 3, 0, data)


# d1, d3, d4 relevant, d2 judged non-relevant, x unjudged; d1 at rank 2, d3 at rank 4.
RELEVANT = {"d1": 1, "d2": 0, "d3": 1, "d4": 1}
RETRIEVED = ["x", "d1", "d2", "d3"]


def test_a_rows_fixtures_rank_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    def counted(*args: Any) -> Any:
        calls.append(args)
        return query_ranks(*args)

    monkeypatch.setattr(fixtures, "query_ranks", counted)
    ctx = MetricContext(Settings(), _no_embed)
    row = _row("r1", retrieved=RETRIEVED, relevant=RELEVANT)
    assert retrieval_measure("mrr")(row, ctx).values == {"mrr": 1 / 2}
    assert retrieval_measure("precision")(row, ctx, k=4).values == {"precision@4": 2 / 4}
    assert retrieval_measure("recall")(row, ctx, k=4).values == {"recall@4": 2 / 3}
    assert retrieval_measure("hit_rate")(row, ctx, k=1).values == {"hit_rate@1": 0.0}
    # bpref: d1 has no judged non-relevant doc above it (1), d3 has d2: 1 - 1/1 = 0; / 3.
    assert retrieval_measure("bpref")(row, ctx).values == {"bpref": 1 / 3}
    assert len(calls) == 1


def test_another_row_on_the_same_context_is_ranked_again() -> None:
    ctx = MetricContext(Settings(), _no_embed)
    first = retrieval_measure("mrr")(_row("r1", retrieved=RETRIEVED, relevant=RELEVANT), ctx)
    second = retrieval_measure("mrr")(_row("r2", retrieved=["d4"], relevant=RELEVANT), ctx)
    assert (first.values, second.values) == ({"mrr": 1 / 2}, {"mrr": 1.0})
    assert second.evidence == "relevant at rank 1 of 1 retrieved (3 relevant in qrels)"


def test_other_options_rank_the_row_again() -> None:
    # Two contexts sharing a memo (as no plugin context does): the second's run is cut
    # to its first document, where no relevant one is.
    row = _row("r1", retrieved=RETRIEVED, relevant=RELEVANT)
    memo: dict[str, Any] = {}
    whole = MetricContext(Settings(), _no_embed, memo)
    cut = MetricContext(Settings(retrieval=TrecOptions(cutoff=1)), _no_embed, memo)
    assert retrieval_measure("mrr")(row, whole).values == {"mrr": 1 / 2}
    measured = retrieval_measure("mrr")(row, cut)
    assert measured.values == {"mrr": 0.0}
    assert measured.evidence == (
        "no relevant doc retrieved of 4 retrieved, run cut to 1 (3 relevant in qrels)"
    )


def test_evidence_names_the_cutoff_and_the_level() -> None:
    ctx = MetricContext(Settings(retrieval=TrecOptions(relevance_level=2)), _no_embed)
    row = _row("r1", retrieved=["a", "b", "c"], relevant={"a": 1, "c": 2, "d": 3})
    measured = retrieval_measure("recall")(row, ctx, k=2)
    assert measured.values == {"recall@2": 0.0}  # c (rank 3) and d (not retrieved)
    assert measured.evidence == (
        "relevant at rank 3 of 3 retrieved (2 relevant in qrels; cutoff 2; relevant from grade 2)"
    )


def test_a_duplicate_fails_every_fixture_of_the_row() -> None:
    ctx = MetricContext(Settings(), _no_embed)
    row = _row("r1", retrieved=["a", "b", "a"], relevant=["a"])
    for family in ("mrr", "ndcg"):
        with pytest.raises(RowError, match=r"field 'retrieved'.*lists 'a' more than once"):
            retrieval_measure(family)(row, ctx)
