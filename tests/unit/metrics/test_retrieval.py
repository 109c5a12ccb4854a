"""Retrieval metrics (``pytest_ragmetrics.metrics.retrieval``): by hand, then against
trec_eval (pytrec_eval) and ranx.

Expected numbers come from three places, never from the module under test:

* hand computation on small cases, the arithmetic in the comments, with ``L3 = log2(3)``,
  ``L5 = log2(5)``, ``L6 = log2(6)`` (and ``log2(2) = 1``, ``log2(4) = 2``): the discount of
  1-based rank r is log2(r + 1);
* pytrec_eval (trec_eval 9 itself), per query and on the mean, for the metrics trec_eval
  has: ``hit_rate@k`` = ``success_k``, ``precision@k`` = ``P_k``, ``recall@k`` =
  ``recall_k``, ``mrr`` = ``recip_rank``, ``ndcg@k`` = ``ndcg_cut_k``, ``ndcg`` = ``ndcg``;
* ranx for what trec_eval lacks: ``mrr@k`` (trec_eval's ``recip_rank`` has no cutoff) and
  the exponential-gain ``ndcg_exp`` (ranx ``ndcg_burges``).

pytrec_eval is only ever given grades 0..3: a negative grade in its qrels corrupts its
memory (seen here: a later, unrelated ``evaluate`` call never returns), so negative grades
are checked by hand only.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.metrics.retrieval import (
    Evaluation,
    Ranking,
    RetrievalMetric,
    corpus,
    evaluate,
    parse_metric,
    score_queries,
)
from pytest_ragmetrics.metrics.trec_options import TrecOptions

L3, L5, L6 = math.log2(3), math.log2(5), math.log2(6)

KS = (1, 2, 3, 5, 10, 20)
# Our name -> pytrec_eval's per-query key.
TREC_NAMES: dict[str, str] = {
    **{f"hit_rate@{k}": f"success_{k}" for k in KS},
    **{f"precision@{k}": f"P_{k}" for k in KS},
    **{f"recall@{k}": f"recall_{k}" for k in KS},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in KS},
    "mrr": "recip_rank",
    "ndcg": "ndcg",
}
TREC_MEASURES = {
    f"{measure}.{','.join(map(str, KS))}" for measure in ("success", "P", "recall", "ndcg_cut")
} | {"recip_rank", "ndcg"}
ALL_NAMES = [
    *TREC_NAMES,
    *(f"mrr@{k}" for k in KS),
    "ndcg_exp",
    *(f"ndcg_exp@{k}" for k in KS),
]

# Doc ids whose string order differs from their numeric order ("d9" > "d10" > "d1"), so
# ties broken on the numbers instead of the strings would show.
DOCS = [f"d{i}" for i in range(12)]

Qrels = dict[str, dict[str, int]]
Run = dict[str, Any]


def value(judgements: Mapping[str, float], ranking: Ranking, metric: str) -> float:
    """One metric of one query."""
    return float(score_queries(["q"], {"q": judgements}, [ranking], [metric])[metric][0])


def values(judgements: Mapping[str, float], ranking: Ranking) -> dict[str, float]:
    """Every metric of one query."""
    scores = score_queries(["q"], {"q": judgements}, [ranking], ALL_NAMES)
    return {name: float(array[0]) for name, array in scores.items()}


def trec_eval(qrels: Qrels, run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query results for every measure of ``TREC_MEASURES``."""
    result: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(
        qrels, TREC_MEASURES
    ).evaluate(run)
    return result


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """trec_eval's ranking of a scored run: score (as a 32-bit float) descending, then doc
    id descending."""
    return sorted(scores, key=lambda doc: (float(np.float32(scores[doc])), doc), reverse=True)


def some_as_lists(draw: st.DrawFn, run: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """``run`` with some rankings, drawn, given as trec_eval-ordered lists instead."""
    as_list = draw(st.lists(st.booleans(), min_size=len(run), max_size=len(run)))
    return {
        qid: trec_order(scores) if flag else scores
        for (qid, scores), flag in zip(run.items(), as_list, strict=True)
    }


def as_scores(ranking: Sequence[str]) -> dict[str, float]:
    """A ranked list as distinct scores that rank it the same way."""
    return {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}


# ---------------------------------------------------------------------------------------
# By hand
# ---------------------------------------------------------------------------------------

# Binary qrels: d1, d3, d4 relevant, d2 judged non-relevant (grade 0), x unjudged.
# Ranks: x 1, d1 2 (relevant), d2 3, d3 4 (relevant); d4 is never retrieved.
BINARY_QRELS = {"d1": 1, "d2": 0, "d3": 1, "d4": 1}
BINARY_RANKING = ["x", "d1", "d2", "d3"]
# Ideal: three relevant docs at ranks 1, 2, 3 (d4 included): 1 + 1/L3 + 1/2.
BINARY_IDEAL = 1 + 1 / L3 + 1 / 2


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("hit_rate@1", 0.0),  # x is unjudged
        ("hit_rate@2", 1.0),  # d1
        ("hit_rate@10", 1.0),
        ("precision@1", 0.0),
        ("precision@2", 1 / 2),  # d1
        ("precision@4", 2 / 4),  # d1, d3 (d2 is judged non-relevant)
        ("precision@10", 2 / 10),  # only 4 retrieved: still divided by 10
        ("recall@1", 0.0),
        ("recall@2", 1 / 3),  # d4 (not retrieved) counts in the denominator
        ("recall@4", 2 / 3),
        ("recall@10", 2 / 3),
        ("mrr", 1 / 2),  # first relevant at rank 2
        ("mrr@1", 0.0),
        ("mrr@2", 1 / 2),
        ("ndcg@1", 0.0),
        ("ndcg@2", (1 / L3) / (1 + 1 / L3)),  # DCG@2 = 1/L3; ideal@2 = 1 + 1/L3
        ("ndcg@4", (1 / L3 + 1 / L5) / BINARY_IDEAL),  # d1 at 2, d3 at 4; ideal has d4
        ("ndcg", (1 / L3 + 1 / L5) / BINARY_IDEAL),
        ("ndcg_exp", (1 / L3 + 1 / L5) / BINARY_IDEAL),  # 2^1 - 1 = 1: same as linear
    ],
)
def test_binary_by_hand(metric: str, expected: float) -> None:
    assert value(BINARY_QRELS, BINARY_RANKING, metric) == pytest.approx(expected, abs=1e-12)


# Graded: a 3, b 2, c 1; n and m judged non-relevant (m not retrieved); x unjudged.
# Ranks: c 1 (g1), n 2, a 3 (g3), x 4, b 5 (g2).
GRADED_QRELS = {"a": 3, "b": 2, "c": 1, "n": 0, "m": 0}
GRADED_RANKING = ["c", "n", "a", "x", "b"]
# Linear ideal: 3, 2, 1 at ranks 1..3 = 3 + 2/L3 + 1/2. Exponential gains 7, 3, 1:
# 7 + 3/L3 + 1/2.


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("hit_rate@1", 1.0),
        ("mrr", 1.0),
        ("precision@2", 1 / 2),  # c, not n
        ("precision@5", 3 / 5),
        ("recall@3", 2 / 3),  # c, a of a, b, c
        ("recall@5", 3 / 3),
        ("ndcg@1", 1 / 3),  # DCG@1 = 1 (c); ideal@1 = 3 (a)
        ("ndcg@3", (1 + 3 / 2) / (3 + 2 / L3 + 1 / 2)),  # c at 1, a at 3 (log2 4 = 2)
        ("ndcg", (1 + 3 / 2 + 2 / L6) / (3 + 2 / L3 + 1 / 2)),  # + b at 5
        ("ndcg_exp@2", 1 / (7 + 3 / L3)),  # DCG@2 = 1 (c: 2^1 - 1); ideal@2 = 7 + 3/L3
        ("ndcg_exp@3", (1 + 7 / 2) / (7 + 3 / L3 + 1 / 2)),
        ("ndcg_exp", (1 + 7 / 2 + 3 / L6) / (7 + 3 / L3 + 1 / 2)),
    ],
)
def test_graded_by_hand(metric: str, expected: float) -> None:
    assert value(GRADED_QRELS, GRADED_RANKING, metric) == pytest.approx(expected, abs=1e-12)


def test_exponential_gain_differs_from_linear() -> None:
    # a 1, b 3, ranked a, b. Linear: (1 + 3/L3) / (3 + 1/L3); exponential (gains 1, 7):
    # (1 + 7/L3) / (7 + 1/L3).
    judgements, ranking = {"a": 1, "b": 3}, ["a", "b"]
    assert value(judgements, ranking, "ndcg") == pytest.approx((1 + 3 / L3) / (3 + 1 / L3))
    assert value(judgements, ranking, "ndcg_exp") == pytest.approx((1 + 7 / L3) / (7 + 1 / L3))


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("hit_rate@1", 0.0),  # a (grade -2) is not relevant
        ("precision@1", 0.0),
        ("precision@3", 1 / 3),  # b only
        ("mrr", 1 / 3),  # b at rank 3
        ("recall@3", 1.0),  # the denominator is 1: only b has a grade > 0
        # DCG = 2/log2(4) = 1, no (negative) gain for a; ideal = 2. Counting a's grade
        # would give (-2 + 1) / 2.
        ("ndcg", 1 / 2),
        ("ndcg@3", 1 / 2),
        ("ndcg_exp", (3 / 2) / 3),  # gain 2^2 - 1 = 3 at rank 3; ideal 3
    ],
)
def test_negative_grades_are_not_relevant(metric: str, expected: float) -> None:
    assert value({"a": -2, "b": 2, "c": 0}, ["a", "c", "b"], metric) == pytest.approx(expected)


def test_query_without_relevant_document_scores_zero() -> None:
    # Only judged non-relevant docs, two of them retrieved at the top.
    assert values({"a": 0, "b": 0, "c": -1}, ["a", "b", "c", "x"]) == dict.fromkeys(ALL_NAMES, 0.0)


def test_query_without_relevant_document_counts_in_the_mean() -> None:
    # q1: mrr 1; q2: 0 (no relevant doc) -> (1 + 0) / 2.
    result = evaluate({"q1": {"a": 1}, "q2": {"a": 0}}, {"q1": ["a"], "q2": ["a"]}, ["mrr"])
    assert result == {"mrr": 0.5}
    assert result.queries == 2


@pytest.mark.parametrize("empty", [{}, []], ids=["scores", "list"])
def test_empty_ranking_scores_zero(empty: Ranking) -> None:
    assert values({"a": 1, "b": 2}, empty) == dict.fromkeys(ALL_NAMES, 0.0)


def test_empty_rankings_only() -> None:
    # Every ranking of the batch empty: nothing retrieved anywhere.
    scores = score_queries(["q1", "q2"], {"q1": {"a": 1}, "q2": {"b": 3}}, [{}, []], ALL_NAMES)
    for name, array in scores.items():
        assert array.tolist() == [0.0, 0.0], name


def test_empty_ranking_counts_in_the_mean() -> None:
    # q1: mrr 1 and precision@1 1; q2 (empty) 0 -> means 1/2.
    result = evaluate(
        {"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}, "q2": {}}, ["mrr", "precision@1"]
    )
    assert result == {"mrr": 0.5, "precision@1": 0.5}
    assert (result.queries, result.missing, result.unjudged) == (2, (), ())


def test_pytrec_eval_scores_an_empty_run_as_zero() -> None:
    # The spec claims pytrec_eval evaluates an empty ranking as 0 on everything: check it.
    theirs = trec_eval({"q": {"a": 1, "b": 2}}, {"q": {}})
    assert set(theirs["q"].values()) == {0.0}
    assert set(values({"a": 1, "b": 2}, {}).values()) == {0.0}


def test_ties_broken_by_doc_id_descending() -> None:
    # All tied: trec_eval ranks c, b, a. a at rank 3: mrr 1/3, ndcg 1/log2(4).
    tied = {"a": 1.0, "b": 1.0, "c": 1.0}
    assert value({"a": 1}, tied, "mrr") == pytest.approx(1 / 3)
    assert value({"a": 1}, tied, "ndcg") == pytest.approx(1 / 2)
    assert value({"a": 1}, tied, "hit_rate@2") == 0.0
    assert value({"c": 1}, tied, "mrr") == 1.0


def test_ties_compare_doc_ids_as_strings() -> None:
    # d2 (0.7) first, then d9 and d10 tied: "d9" > "d10" as strings, so d10 is third
    # (mrr 1/3); numeric order would put d10 second (1/2).
    assert value({"d10": 1}, {"d9": 0.5, "d10": 0.5, "d2": 0.7}, "mrr") == pytest.approx(1 / 3)


def test_ties_with_several_relevant_documents() -> None:
    # Order: d (0.9), then a, b, c tied -> c, b, a, then e (0.1).
    # Relevant: c (g1) rank 2, a (g2) rank 4, e (g1) rank 5.
    scores = {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.9, "e": 0.1}
    judgements = {"a": 2, "c": 1, "e": 1}
    assert value(judgements, scores, "mrr") == pytest.approx(1 / 2)
    assert value(judgements, scores, "precision@3") == pytest.approx(1 / 3)
    assert value(judgements, scores, "recall@4") == pytest.approx(2 / 3)
    # DCG = 1/L3 + 2/L5 + 1/L6; ideal = 2 + 1/L3 + 1/log2(4).
    expected = (1 / L3 + 2 / L5 + 1 / L6) / (2 + 1 / L3 + 1 / 2)
    assert value(judgements, scores, "ndcg") == pytest.approx(expected)


@pytest.mark.parametrize(
    ("judgements", "ranking"),
    [(BINARY_QRELS, BINARY_RANKING), (GRADED_QRELS, GRADED_RANKING)],
    ids=["binary", "graded"],
)
def test_ranked_list_equals_equivalent_scores(
    judgements: Mapping[str, float], ranking: list[str]
) -> None:
    as_list, as_dict = values(judgements, ranking), values(judgements, as_scores(ranking))
    assert as_list == as_dict
    assert as_list["mrr"] > 0  # not trivially equal


def test_ranked_list_is_taken_as_given() -> None:
    # A list is not re-sorted by doc id: a first -> mrr 1. The same docs with tied scores
    # rank c, b, a -> 1/3.
    assert value({"a": 1}, ["a", "b", "c"], "mrr") == 1.0
    assert value({"a": 1}, {"a": 0.0, "b": 0.0, "c": 0.0}, "mrr") == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("metric", "expected"),
    [("mrr@1", 0.0), ("mrr@2", 0.0), ("mrr@3", 1 / 3), ("mrr@5", 1 / 3), ("mrr", 1 / 3)],
)
def test_mrr_cutoff(metric: str, expected: float) -> None:
    # First relevant doc (c) at rank 3.
    assert value({"c": 1, "e": 1}, ["a", "b", "c", "d", "e"], metric) == pytest.approx(expected)


def test_mixed_scores_and_lists_in_one_call() -> None:
    # q1 scores (b first, a at 2: mrr 1/2), q2 list (a at 1: 1), q3 scores (a alone: 1),
    # q4 list (a at 3: 1/3).
    qrels = {q: {"a": 1} for q in ("q1", "q2", "q3", "q4")}
    rankings: list[Ranking] = [{"a": 0.1, "b": 0.2}, ["a", "b"], {"a": 1.0}, ["b", "c", "a"]]
    mrr = score_queries(["q1", "q2", "q3", "q4"], qrels, rankings, ["mrr"])["mrr"]
    np.testing.assert_allclose(mrr, [1 / 2, 1, 1, 1 / 3])


def test_missing_and_unjudged_queries_are_left_out() -> None:
    # q1 mrr 1, q2 mrr 1/2 -> 0.75. Counting q3 (no run) as 0 would give 0.5; q9 (not in
    # the qrels) cannot be scored at all.
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {"q1": ["a"], "q2": ["b", "a"], "q9": ["a"]}
    result = evaluate(qrels, run, ["mrr", "mrr"])
    assert isinstance(result, Evaluation)
    assert result == {"mrr": 0.75}
    assert (result.queries, result.missing, result.unjudged) == (2, ("q3",), ("q9",))


def test_query_with_no_judgement_is_left_out_like_trec_eval() -> None:
    qrels: Qrels = {"q1": {}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    assert sorted(trec_eval(qrels, run)) == ["q2"]  # pytrec_eval evaluates q2 only
    result = evaluate(qrels, run, ["precision@1"])
    assert result == {"precision@1": 1.0}
    assert result.unjudged == ("q1",)


def test_scores_equal_in_single_precision_tie_like_trec_eval() -> None:
    # 1 - 1e-9 rounds to 1.0 as a 32-bit float: trec_eval sees a tie, ranks b first (doc id
    # descending) and a second -> recip_rank 1/2. In double precision a is first -> 1.
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0 - 1e-9}}
    assert trec_eval(qrels, run)["q"]["recip_rank"] == 0.5
    assert evaluate(qrels, run, ["mrr"]) == {"mrr": 0.5}


# ---------------------------------------------------------------------------------------
# Errors and names
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ranking", [["a", "b", "a"], ["b", "a", "b"]], ids=["relevant", "other"])
def test_duplicate_doc_in_a_list_is_an_error(ranking: list[str]) -> None:
    with pytest.raises(ValueError, match="more than once"):
        evaluate({"q": {"a": 1}}, {"q": ranking}, ["mrr"])


@pytest.mark.parametrize("doc", ["a", "b"], ids=["relevant", "other"])
def test_nan_score_is_an_error(doc: str) -> None:
    scores = {"a": 1.0, "b": 0.5, doc: math.nan}
    with pytest.raises(ValueError, match="NaN"):
        evaluate({"q": {"a": 1}}, {"q": scores}, ["mrr"])


@pytest.mark.parametrize("bad", ["high", None, math.nan, [1]])
def test_grade_that_is_not_a_number_is_an_error(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^qrels: a grade is not a number \(.*\); use numbers"):
        evaluate({"q": {"a": 1, "b": bad}}, {"q": {"a": 1.0}}, ["mrr"])


@pytest.mark.parametrize("bad", ["high", None, [1]])
@pytest.mark.parametrize("doc", ["a", "b"], ids=["relevant", "other"])
def test_score_that_is_not_a_number_is_an_error(doc: str, bad: Any) -> None:
    scores = {"a": 1.0, "b": 0.5, doc: bad}
    with pytest.raises(ValueError, match=r"^run: a score is not a number \(.*\); use numbers"):
        evaluate({"q": {"a": 1}}, {"q": scores}, ["mrr"])


def test_string_ranking_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a string"):
        evaluate({"q": {"a": 1}}, {"q": "ab"}, ["mrr"])


@pytest.mark.parametrize(
    "name",
    ["precision", "recall", "hit_rate", "ndcg@0", "mrr@0", "foo@3", "foo", "ndcg@", "NDCG@10",
     "ndcg@-1", "ndcg@10x", "rprec@10", "iprec_at_recall@0.05", ""],
)  # fmt: skip
def test_bad_metric_name_is_an_error(name: str) -> None:
    with pytest.raises(ValueError, match=r"retrieval metric|cutoff|use |recall level"):
        parse_metric(name)
    with pytest.raises(ValueError, match=r"retrieval metric|cutoff|use |recall level"):
        evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["mrr", name])


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("ndcg@10", RetrievalMetric("ndcg", 10)),
        ("ndcg", RetrievalMetric("ndcg", None)),
        ("ndcg_exp@3", RetrievalMetric("ndcg_exp", 3)),
        ("mrr", RetrievalMetric("mrr", None)),
        ("hit_rate@1", RetrievalMetric("hit_rate", 1)),
    ],
)
def test_parse_metric(name: str, parsed: RetrievalMetric) -> None:
    assert parse_metric(name) == parsed
    assert parsed.name == name


@pytest.mark.parametrize("run", [{"q2": {"a": 1.0}}, {}], ids=["other query", "empty run"])
def test_no_common_query_is_an_error(run: Run) -> None:
    with pytest.raises(ValueError, match="no query"):
        evaluate({"q1": {"a": 1}}, run, ["mrr"])


# ---------------------------------------------------------------------------------------
# Parity with trec_eval (pytrec_eval)
# ---------------------------------------------------------------------------------------


def assert_trec_parity(qrels: Qrels, run: Mapping[str, Mapping[str, float]], ours: Run) -> None:
    """``ours`` (``run`` with some rankings as lists) evaluates like trec_eval on ``run``:
    per query and on the mean, to 1e-9, over the same queries."""
    theirs = trec_eval(qrels, run)
    common = [qid for qid in run if qid in qrels]
    assert sorted(theirs) == sorted(common)
    result = evaluate(qrels, ours, TREC_NAMES)
    assert result.queries == len(common)
    assert result.missing == tuple(sorted(set(qrels) - set(run)))
    assert result.unjudged == tuple(sorted(set(run) - set(qrels)))
    per_query = score_queries(common, qrels, [ours[qid] for qid in common], TREC_NAMES)
    for name, trec_name in TREC_NAMES.items():
        expected = [theirs[qid][trec_name] for qid in common]
        np.testing.assert_allclose(per_query[name], expected, rtol=0, atol=1e-9, err_msg=name)
        assert result[name] == pytest.approx(math.fsum(expected) / len(expected), abs=1e-9), name


# Both trec_eval and this module compare scores in single precision: "near" draws doubles
# that differ below it (see test_scores_equal_in_single_precision_tie_like_trec_eval).
SCORES = {
    "continuous": st.floats(-1e6, 1e6, allow_nan=False),
    "near": st.sampled_from([1.0, 1.0 - 1e-9, 1.0 + 1e-9, 1.0 - 1e-7, 0.9999999]),
    "tied": st.sampled_from([0.0, 0.5, 1.0]),
    "extreme": st.sampled_from([-math.inf, -0.0, 0.0, 1.0, math.inf]),
}


@st.composite
def collections(draw: st.DrawFn) -> tuple[Qrels, Run, Run]:
    """qrels (binary or graded 0..3), a scored run (a ranking may be empty; a query may be
    on one side only; q0 is on both), and the same run with some rankings given as
    trec_eval-ordered lists. Every qrels query judges at least one doc: one that judges
    none is test_query_with_no_judgement_is_left_out_like_trec_eval."""
    top_grade = draw(st.sampled_from([1, 3]))
    score = SCORES[draw(st.sampled_from(sorted(SCORES)))]
    qrels: Qrels = {}
    run: Run = {}
    for i in range(draw(st.integers(1, 6))):
        qid = f"q{i}"
        side = "both" if i == 0 else draw(st.sampled_from(["both", "both", "qrels", "run"]))
        if side != "run":
            grades = st.integers(0, top_grade)
            qrels[qid] = draw(st.dictionaries(st.sampled_from(DOCS), grades, min_size=1))
        if side != "qrels":
            run[qid] = draw(st.dictionaries(st.sampled_from(DOCS), score))
    return qrels, run, some_as_lists(draw, run)


@settings(max_examples=300, deadline=None)
@given(collections())
def test_trec_eval_parity(collection: tuple[Qrels, Run, Run]) -> None:
    qrels, run, ours = collection
    assert_trec_parity(qrels, run, run)
    assert_trec_parity(qrels, run, ours)


def random_collection(queries: int, docs: int, seed: int) -> tuple[Qrels, Run]:
    """``queries`` queries, up to 30 judged docs (grades 0..3) and ``docs`` retrieved out
    of a pool of ``2 * docs``; every tenth ranking is short, every third one tied."""
    rng = np.random.default_rng(seed)
    pool = np.array([f"doc{i}" for i in range(2 * docs)])
    qrels: Qrels = {}
    run: Run = {}
    for i in range(queries):
        judged = rng.choice(pool, size=int(rng.integers(1, 31)), replace=False)
        qrels[f"q{i}"] = {str(doc): int(rng.integers(0, 4)) for doc in judged}
        size = docs if i % 10 else int(rng.integers(0, docs))
        scores = rng.random(size)
        if i % 3 == 0:
            scores = np.round(scores, 1)
        retrieved = rng.choice(pool, size=size, replace=False)
        run[f"q{i}"] = dict(zip(map(str, retrieved), scores.tolist(), strict=True))
    return qrels, run


def test_trec_eval_parity_large() -> None:
    qrels, run = random_collection(500, 50, seed=7)
    qrels["unjudged"], run["missing"] = {"doc0": 1}, {"doc0": 1.0}
    assert_trec_parity(qrels, run, run)
    assert_trec_parity(qrels, run, {qid: trec_order(scores) for qid, scores in run.items()})


def _mixed_collection() -> tuple[Qrels, Run, Run]:
    """Tied, short and list-given queries side by side."""
    qrels, run = random_collection(130, 30, seed=5)
    mixed: Run = {
        qid: trec_order(scores) if i % 4 == 0 else scores
        for i, (qid, scores) in enumerate(run.items())
    }
    return qrels, run, mixed


@pytest.mark.parametrize("block", [1, 3, 64])
def test_trec_eval_parity_in_blocks_of_queries(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    # Queries are scored _QUERY_BLOCK at a time (1,024): with small blocks the block edges
    # fall between tied, short and list-given queries of one call.
    monkeypatch.setattr(corpus, "_QUERY_BLOCK", block)
    qrels, run, mixed = _mixed_collection()
    assert_trec_parity(qrels, run, run)
    assert_trec_parity(qrels, run, mixed)


@pytest.mark.parametrize("block", [1, 3, 64])
def test_blocks_change_no_value(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Scoring by blocks gives the very floats of scoring every query at once, whatever
    the options: each block pads its rows to the call's widest query, since numpy sums a
    row in an order that depends on its width (nDCG and bpref would differ in the last
    bit)."""
    qrels, _, mixed = _mixed_collection()
    qids = list(mixed)
    rankings = [mixed[qid] for qid in qids]
    names = [*ALL_NAMES, "bpref", "gm_map"]
    variants = (TrecOptions(), TrecOptions(cutoff=7), TrecOptions(ties="double"), TrecOptions(2))
    for options in variants:
        monkeypatch.setattr(corpus, "_QUERY_BLOCK", len(qids))
        whole = corpus.score_queries(qids, qrels, rankings, names, options)
        monkeypatch.setattr(corpus, "_QUERY_BLOCK", block)
        blocked = corpus.score_queries(qids, qrels, rankings, names, options)
        assert {n: v.tobytes() for n, v in blocked.items()} == {
            n: v.tobytes() for n, v in whole.items()
        }


def test_trec_eval_parity_long_rankings() -> None:
    # 2,200 relevant docs x 2,500 retrieved is more than the 2^22 comparisons of a block,
    # so one query's documents span blocks: ties must be resolved in the right query.
    rng = np.random.default_rng(3)
    pool = [f"doc{i}" for i in range(2600)]
    qrels: Qrels = {}
    run: Run = {}
    for i in range(3):
        order = rng.permutation(len(pool))
        qrels[f"q{i}"] = {pool[j]: int(rng.integers(1, 4)) for j in order[:2200]}
        scores = rng.random(2500)
        if i:
            scores = np.round(scores, 4)  # q1, q2: many ties
        run[f"q{i}"] = {pool[j]: float(s) for j, s in zip(order[100:], scores, strict=True)}
    assert_trec_parity(qrels, run, run)


# ---------------------------------------------------------------------------------------
# Parity with ranx: mrr@k and ndcg_exp (ranx "ndcg_burges")
# ---------------------------------------------------------------------------------------

RANX_NAMES = {
    **{f"mrr@{k}": f"mrr@{k}" for k in (1, 3, 10)},
    "mrr": "mrr",
    **{f"ndcg_exp@{k}": f"ndcg_burges@{k}" for k in (1, 3, 10)},
    "ndcg_exp": "ndcg_burges",
}


@pytest.fixture(scope="module")
def ranx_case() -> tuple[Qrels, Run, dict[str, dict[str, float]]]:
    """A random collection without ties, and ranx's per-query scores on it.

    Without ties because ranx does not break them by doc id descending as trec_eval (and
    this module) do. ranx JIT-compiles its metrics with numba on first use (cached on
    disk after that), so it is called exactly once, here.
    """
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate as ranx_evaluate

    rng = np.random.default_rng(11)
    pool = [f"d{i}" for i in range(40)]
    qrels: Qrels = {}
    run: Run = {}
    for i in range(200):
        judged = rng.choice(pool, size=int(rng.integers(1, 13)), replace=False)
        qrels[f"q{i}"] = {str(doc): int(rng.integers(0, 4)) for doc in judged}
        retrieved = rng.choice(pool, size=int(rng.integers(1, 41)), replace=False)
        distinct = rng.permutation(retrieved.size) / retrieved.size  # no tie
        run[f"q{i}"] = dict(zip(map(str, retrieved), distinct.tolist(), strict=True))
    ranx_run = RanxRun(run)
    ranx_evaluate(RanxQrels(qrels), ranx_run, list(RANX_NAMES.values()))
    return qrels, run, ranx_run.scores


@pytest.mark.slow  # the ranx_case fixture pays numba's JIT compile (tens of seconds)
@pytest.mark.parametrize("name", RANX_NAMES)
def test_ranx_parity(name: str, ranx_case: tuple[Qrels, Run, dict[str, dict[str, float]]]) -> None:
    qrels, run, theirs = ranx_case
    qids = list(run)
    ours = score_queries(qids, qrels, [run[qid] for qid in qids], [name])[name]
    expected = [theirs[RANX_NAMES[name]][qid] for qid in qids]
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9)
    assert np.count_nonzero(ours) > len(qids) // 10  # not a parity of zeros
    assert evaluate(qrels, run, [name])[name] == pytest.approx(np.mean(expected), abs=1e-9)


# ---------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------

PROPERTY_KS = range(1, len(DOCS) + 3)
PROPERTY_NAMES = [
    "mrr",
    "ndcg",
    "ndcg_exp",
    *(
        f"{family}@{k}"
        for family in ("hit_rate", "mrr", "recall", "precision", "ndcg", "ndcg_exp")
        for k in PROPERTY_KS
    ),
]


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[str], Qrels, list[Ranking]]:
    """A few queries: grades -1..3 (any may be missing), rankings as lists or scores."""
    qids = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    qrels: Qrels = {}
    rankings: list[Ranking] = []
    for qid in qids:
        qrels[qid] = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3)))
        if draw(st.booleans()):
            rankings.append(draw(st.lists(st.sampled_from(DOCS), unique=True)))
        else:
            rankings.append(draw(st.dictionaries(st.sampled_from(DOCS), SCORES["tied"])))
    return qids, qrels, rankings


@settings(max_examples=150, deadline=None)
@given(batches())
def test_properties(batch: tuple[list[str], Qrels, list[Ranking]]) -> None:
    qids, qrels, rankings = batch
    scores = score_queries(qids, qrels, rankings, PROPERTY_NAMES)
    for name, array in scores.items():
        assert ((array >= 0) & (array <= 1 + 1e-12)).all(), name
    relevant = np.array([sum(grade > 0 for grade in qrels[qid].values()) for qid in qids])
    retrieved = np.array([len(ranking) for ranking in rankings])
    for k in PROPERTY_KS:
        found = scores[f"precision@{k}"] * k
        assert (found <= np.minimum(relevant, retrieved) + 1e-9).all()
        assert (scores[f"hit_rate@{k}"] >= scores[f"precision@{k}"]).all()
        assert (scores["mrr"] >= scores[f"mrr@{k}"]).all()
        if k > 1:
            for family in ("hit_rate", "recall", "mrr"):
                assert (scores[f"{family}@{k}"] >= scores[f"{family}@{k - 1}"]).all(), family
    assert (scores[f"mrr@{PROPERTY_KS[-1]}"] == scores["mrr"]).all()  # k beyond any ranking


@st.composite
def ideal_rankings(draw: st.DrawFn) -> tuple[dict[str, int], list[str]]:
    """Judgements with a relevant doc, and a ranking with the relevant docs first by grade
    descending (equal grades in any order), then non-relevant or unjudged ones."""
    judgements = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1))
    top = draw(st.sampled_from(sorted(judgements)))
    judgements[top] = max(1, judgements[top])
    relevant = draw(st.permutations([doc for doc, grade in judgements.items() if grade > 0]))
    relevant = sorted(relevant, key=lambda doc: -judgements[doc])  # stable: keeps the draw
    others = [doc for doc in DOCS if judgements.get(doc, 0) <= 0]
    tail = draw(st.lists(st.sampled_from(others), unique=True)) if others else []
    return judgements, relevant + tail


@settings(max_examples=150, deadline=None)
@given(ideal_rankings())
def test_ideal_ranking_has_ndcg_one(case: tuple[dict[str, int], list[str]]) -> None:
    judgements, ranking = case
    cuts = ("", "@1", "@2", "@3", "@5", "@20")
    ndcg_names = [f"{family}{cut}" for family in ("ndcg", "ndcg_exp") for cut in cuts]
    for form in (ranking, as_scores(ranking)):
        scores = score_queries(["q"], {"q": judgements}, [form], ndcg_names)
        for name, array in scores.items():
            assert array[0] == pytest.approx(1.0, abs=1e-12), name


# -- evaluate pauses the garbage collector while it builds the ranks --------------------


def test_evaluate_pauses_the_collector_and_gives_it_back_as_it_found_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collector is off while the ranks are built, and its state is the caller's
    again afterwards: running after a success and after an error, still off when the
    caller had turned it off."""
    seen: list[bool] = []
    real = corpus.score_queries

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(corpus, "score_queries", spy)
    qrels = {"q1": {"d1": 1}}
    assert gc.isenabled()
    assert evaluate(qrels, {"q1": ["d1"]}, ["mrr"]) == {"mrr": 1.0}
    assert seen == [False]
    assert gc.isenabled()
    with pytest.raises(ValueError, match="more than once"):
        evaluate(qrels, {"q1": ["d1", "d1"]}, ["mrr"])
    assert gc.isenabled()
    gc.disable()
    try:
        evaluate(qrels, {"q1": ["d1"]}, ["mrr"])
        assert not gc.isenabled()
    finally:
        gc.enable()
