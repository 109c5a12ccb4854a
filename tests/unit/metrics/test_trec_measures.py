"""trec_eval's set-based and precision-recall measures and options of ``evaluate``.

Parity with pytrec_eval (trec_eval 9.x compiled in) on seeded random data and on
Hypothesis's collections of edge cases, per query and on the mean, to 1e-9; hand-computed
cases for each measure and for the options pytrec_eval
does not expose (-M ``cutoff``, -c ``all_queries``, ndcg ``gains``, ``ties="double"``).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from test_retrieval import some_as_lists

from pytest_ragmetrics.metrics.retrieval import RECALL_LEVELS, evaluate, score_queries
from pytest_ragmetrics.metrics.trec_options import TrecOptions

TOLERANCE = 1e-9
# Our name -> pytrec_eval's key in its per-query results.
TREC_KEYS = {
    "map": "map",
    "map@5": "map_cut_5",
    "map@20": "map_cut_20",
    "gm_map": "gm_map",
    "rprec": "Rprec",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "bpref": "bpref",
    "mrr": "recip_rank",
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "hit_rate@5": "success_5",
    "ndcg": "ndcg",
    "ndcg@10": "ndcg_cut_10",
    **{
        f"iprec_at_recall@{level}": f"iprec_at_recall_{float(level):.2f}" for level in RECALL_LEVELS
    },
}
TREC_MEASURES = {
    "map",
    "map_cut.3,5,20",
    "gm_map",
    "Rprec",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "bpref",
    "recip_rank",
    "P.5",
    "recall.10",
    "success.5",
    "ndcg",
    "ndcg_cut.10",
    "iprec_at_recall",
}
NAMES = list(TREC_KEYS)


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels (0..3, some queries without a relevant document) and a run with
    unjudged documents, ties (scores on a coarse grid), empty rankings and queries of the
    qrels missing from the run."""
    rng = random.Random(seed)
    pool = [f"d{i:02d}" for i in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        qid = f"q{q}"
        judged = rng.sample(pool, rng.randint(1, 15))
        qrels[qid] = {doc: rng.choice([0, 0, 1, 1, 2, 3]) for doc in judged}
        roll = rng.random()
        if roll < 0.1:
            continue  # missing from the run
        if roll < 0.15:
            run[qid] = {}
            continue
        retrieved = rng.sample(pool, rng.randint(1, 30))
        grid = rng.choice([4, 20, 1000])
        run[qid] = {doc: rng.randint(0, grid) / grid for doc in retrieved}
    return qrels, run


def _reference(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], **options: Any
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, **options)
    return nan_free(evaluator.evaluate(run))


@pytest.mark.parametrize("with_bpref", [True, False])
@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("seed", range(20))
def test_per_query_values_equal_pytrec_eval(
    seed: int, relevance_level: int, with_bpref: bool
) -> None:
    qrels, run = _collection(seed)
    assert_per_query_parity(qrels, run, run, relevance_level, with_bpref)


def assert_per_query_parity(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    ours_run: dict[str, Any],
    relevance_level: int,
    with_bpref: bool,
) -> None:
    """Ours on ``ours_run`` (``run``, some rankings maybe as lists) equals pytrec_eval on
    ``run``, every measure of every query both have, and every mean."""
    # Without bpref only the documents graded above 0 are ranked: both ways must agree.
    names = NAMES if with_bpref else [name for name in NAMES if name != "bpref"]
    qids = [qid for qid in run if qid in qrels]
    reference = {qid: _empty_ranking(qrels[qid], relevance_level) for qid in qids}
    scored = {qid: ranking for qid, ranking in run.items() if ranking}
    if any(qid in qrels for qid in scored):
        reference.update(_reference(qrels, scored, relevance_level=relevance_level))
    rankings = [ours_run[qid] for qid in qids]
    ours = score_queries(qids, qrels, rankings, names, _options(relevance_level))
    assert set(reference) == set(qids)
    for i, qid in enumerate(qids):
        for name in names:
            expected = reference[qid][TREC_KEYS[name]]
            if name == "gm_map":  # trec_eval keeps log(max(AP, 0.00001)) per query
                expected = math.exp(expected)
                got = max(float(ours[name][i]), 0.00001)
            else:
                got = float(ours[name][i])
            assert got == pytest.approx(expected, abs=TOLERANCE), (qid, name)
    if qids:
        means = evaluate(qrels, ours_run, names, relevance_level=relevance_level)
        for name in names:
            values = [reference[qid][TREC_KEYS[name]] for qid in qids]
            mean = math.fsum(values) / len(values)
            expected = math.exp(mean) if name == "gm_map" else mean
            assert means[name] == pytest.approx(expected, abs=TOLERANCE), name


def _empty_ranking(judgements: dict[str, int], relevance_level: int) -> dict[str, float]:
    """trec_eval's values for an empty ranking: 0 but num_rel, and gm_map's floor
    log(0.00001); iprec_at_recall 0 (see nan_free). Written out rather than asked of
    pytrec_eval, which crashes now and then on an empty ranking when given a
    relevance_level."""
    values = dict.fromkeys(TREC_KEYS.values(), 0.0)
    values["num_rel"] = float(sum(grade >= relevance_level for grade in judgements.values()))
    values["gm_map"] = math.log(0.00001)
    return values


# Doc ids whose string order differs from their numeric order (d9 > d10 > d1), so ties
# broken on the numbers instead of the strings would show.
EDGE_DOCS = [f"d{i}" for i in range(12)]
EDGE_SCORES = {
    "continuous": st.floats(-1e6, 1e6, allow_nan=False),
    "tied": st.sampled_from([0.0, 0.5, 1.0]),
    "equal": st.just(0.25),  # every retrieved document tied: decided by doc id alone
    "extreme": st.sampled_from([-math.inf, -0.0, 0.0, 1.0, math.inf]),
    "near": st.sampled_from([1.0, 1.0 - 1e-9, 1.0 + 1e-9, 0.9999999]),  # float32 ties
}


@st.composite
def edge_collections(
    draw: st.DrawFn,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict[str, Any]]:
    """Graded qrels (0..3: a query may have no relevant document, or only judged
    non-relevant ones), a run of one kind of scores (a ranking may be empty, a query on
    one side only), and the same run with some rankings as trec_eval-ordered lists."""
    score = EDGE_SCORES[draw(st.sampled_from(sorted(EDGE_SCORES)))]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(draw(st.integers(1, 6))):
        side = "both" if i == 0 else draw(st.sampled_from(["both", "both", "qrels", "run"]))
        if side != "run":
            grades = st.integers(0, draw(st.sampled_from([0, 1, 3])))
            qrels[f"q{i}"] = draw(st.dictionaries(st.sampled_from(EDGE_DOCS), grades, min_size=1))
        if side != "qrels":
            run[f"q{i}"] = draw(st.dictionaries(st.sampled_from(EDGE_DOCS), score))
    return qrels, run, some_as_lists(draw, run)


@settings(max_examples=300, deadline=None)
@given(edge_collections(), st.sampled_from([1, 2, 3]), st.booleans())
def test_edge_cases_equal_pytrec_eval(
    collection: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict[str, Any]],
    relevance_level: int,
    with_bpref: bool,
) -> None:
    qrels, run, ours = collection
    assert_per_query_parity(qrels, run, ours, relevance_level, with_bpref)


@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("seed", range(20))
def test_means_equal_pytrec_eval(seed: int, relevance_level: int) -> None:
    qrels, run = _collection(seed)
    reference = _reference(qrels, run, relevance_level=relevance_level)
    ours = evaluate(qrels, run, NAMES, relevance_level=relevance_level)
    assert ours.queries == len(reference)
    for name in NAMES:
        values = [reference[qid][TREC_KEYS[name]] for qid in reference]
        if name == "gm_map":  # trec_eval: exp of the mean of the per-query logs
            expected = math.exp(math.fsum(values) / len(values))
        else:
            expected = math.fsum(values) / len(values)
        assert ours[name] == pytest.approx(expected, abs=TOLERANCE), name


def _options(relevance_level: int) -> Any:
    from pytest_ragmetrics.metrics.trec_options import TrecOptions

    return TrecOptions(relevance_level=relevance_level)


def nan_free(reference: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """trec_eval's iprec_at_recall at a level asking for 0 relevant documents is the
    precision of the whole ranking, 0 / 0 (NaN) for an empty one; ours is 0."""
    for values in reference.values():
        for key, value in values.items():
            if math.isnan(value):
                assert key.startswith("iprec_at_recall"), key
                assert values["num_ret"] == 0, key
                values[key] = 0.0
    return reference


# Hand-computed cases. Qrels: a=2, b=1, d=1 relevant at level 1 (R = 3); c=0, e=0 judged
# non-relevant (N = 2); x, y unjudged. Ranking (1-based): a 1, c 2, x 3, b 4, e 5, y 6;
# d is not retrieved.
HAND_QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 1, "e": 0}}
HAND_RUN = {"q": ["a", "c", "x", "b", "e", "y"]}
HAND_LEVEL_1 = {
    # precision at each retrieved relevant doc: a 1/1, b 2/4; AP = (1 + 0.5) / R = 0.5
    "map": 0.5,
    "gm_map": 0.5,  # one query: the geometric mean is its AP
    # only a is in the first 3: 1 / R
    "map@3": 1 / 3,
    # R = 3: the first 3 hold a only
    "rprec": 1 / 3,
    "num_ret": 6.0,
    "num_rel": 3.0,
    "num_rel_ret": 2.0,
    # a: no judged non-relevant above -> 1; b: c above -> 1 - min(1, 3) / min(2, 3) = 0.5;
    # (1 + 0.5) / R = 0.5
    "bpref": 0.5,
    # level L asks for c = trunc(3L + 0.9) relevant docs; max precision from the c-th on:
    # c <= 1 -> max(1, 0.5) = 1; c = 2 -> 0.5; c = 3 (more than retrieved) -> 0
    "iprec_at_recall@0.0": 1.0,  # c = 0
    "iprec_at_recall@0.1": 1.0,  # 1.2 -> 1
    "iprec_at_recall@0.2": 1.0,  # 1.5 -> 1
    "iprec_at_recall@0.3": 1.0,  # 1.8 -> 1
    "iprec_at_recall@0.4": 0.5,  # 2.1 -> 2
    "iprec_at_recall@0.5": 0.5,  # 2.4 -> 2
    "iprec_at_recall@0.6": 0.5,  # 2.7 -> 2
    "iprec_at_recall@0.7": 0.5,  # 0.7 * 3 + 0.9 = 2.9999999999999996 in double -> 2
    "iprec_at_recall@0.8": 0.0,  # 3.3 -> 3
    "iprec_at_recall@0.9": 0.0,  # 3.6 -> 3
    "iprec_at_recall@1.0": 0.0,  # 3.9 -> 3
}
# At level 2 only a is relevant (R = 1) and b, c, d, e are judged non-relevant (N = 4).
HAND_LEVEL_2 = {
    "map": 1.0,  # a at rank 1: 1 / 1
    "rprec": 1.0,  # the first 1 holds a
    "num_rel": 1.0,
    "num_rel_ret": 1.0,
    "bpref": 1.0,  # nothing judged above a
    "iprec_at_recall@1.0": 1.0,  # c = trunc(1.9) = 1: precision 1 at a
    # nDCG keeps the grades: DCG = 2 / log2(2) + 1 / log2(5); IDCG = 2 + 1/log2(3) + 1/log2(4)
    "ndcg": (2 + 1 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / math.log2(4)),
}


@pytest.mark.parametrize(("level", "expected"), [(1, HAND_LEVEL_1), (2, HAND_LEVEL_2)])
def test_hand_computed_measures(level: int, expected: dict[str, float]) -> None:
    ours = evaluate(HAND_QRELS, HAND_RUN, list(expected), relevance_level=level)
    assert dict(ours) == pytest.approx(expected, abs=TOLERANCE)
    scored = {"q": {doc: 10.0 - rank for rank, doc in enumerate(HAND_RUN["q"])}}
    reference = _reference(HAND_QRELS, scored, relevance_level=level)["q"]
    for name in expected:
        key = TREC_KEYS.get(name, "map_cut_3" if name == "map@3" else "")
        if key and name != "gm_map":
            assert reference[key] == pytest.approx(expected[name], abs=TOLERANCE), name


def test_gm_map_mean_is_geometric_with_trec_eval_floor() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["c", "a"], "q2": ["c"]}
    # AP: q1 1/2, q2 0 -> floored at 0.00001; exp(mean(log)) = sqrt(0.5 * 0.00001)
    ours = evaluate(qrels, run, ["gm_map", "map"])
    assert ours["gm_map"] == pytest.approx(math.sqrt(0.5 * 0.00001), abs=TOLERANCE)
    assert ours["map"] == pytest.approx(0.25, abs=TOLERANCE)


def test_cutoff_keeps_the_first_documents_only() -> None:
    # cut to a, c, x: a relevant at 1 of R = 3; num_ret 3; bpref a -> 1, / 3
    names = ["map", "num_ret", "num_rel_ret", "bpref", "recall@10", "rprec"]
    ours = evaluate(HAND_QRELS, HAND_RUN, names, cutoff=3)
    expected = {
        "map": 1 / 3,
        "num_ret": 3.0,
        "num_rel_ret": 1.0,
        "bpref": 1 / 3,
        "recall@10": 1 / 3,
        "rprec": 1 / 3,
    }
    assert dict(ours) == pytest.approx(expected, abs=TOLERANCE)
    scored = {"q": {doc: 10.0 - rank for rank, doc in enumerate(HAND_RUN["q"])}}
    assert dict(evaluate(HAND_QRELS, scored, names, cutoff=3)) == pytest.approx(expected)
    assert evaluate(HAND_QRELS, HAND_RUN, names, cutoff=100) == evaluate(
        HAND_QRELS, HAND_RUN, names
    )


def test_all_queries_averages_missing_queries_as_empty_rankings() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 2}, "q3": {}}
    run = {"q1": ["a"]}
    names = ["map", "num_rel", "ndcg", "iprec_at_recall@0.0"]
    default = evaluate(qrels, run, names)
    assert (default.queries, default.missing) == (1, ("q2",))
    assert dict(default) == {"map": 1.0, "num_rel": 1.0, "ndcg": 1.0, "iprec_at_recall@0.0": 1.0}
    every = evaluate(qrels, run, names, all_queries=True)
    assert (every.queries, every.missing) == (2, ("q2",))
    # q2 scores 0 but keeps its 2 relevant documents: num_rel (1 + 2) / 2
    assert dict(every) == {"map": 0.5, "num_rel": 1.5, "ndcg": 0.5, "iprec_at_recall@0.0": 0.5}
    only_missing = evaluate(qrels, {"q9": ["a"]}, ["map"], all_queries=True)
    assert (only_missing["map"], only_missing.queries) == (0.0, 2)


def test_gains_map_grades_for_ndcg() -> None:
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": ["a", "b"]}
    # gains a 1 (not listed: its grade), b 3. DCG = 1/log2(2) + 3/log2(3);
    # ideal b, a: IDCG = 3/log2(2) + 1/log2(3)
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    ours = evaluate(qrels, run, ["ndcg", "ndcg@1", "ndcg_exp"], gains={2: 3})
    assert ours["ndcg"] == pytest.approx(expected, abs=TOLERANCE)
    assert ours["ndcg@1"] == pytest.approx(1 / 3, abs=TOLERANCE)  # 1/log2(2) over 3/log2(2)
    # ndcg_exp keeps 2^grade - 1: 1 and 3, the same numbers here
    assert ours["ndcg_exp"] == pytest.approx(expected, abs=TOLERANCE)
    plain = evaluate(qrels, run, ["ndcg"])["ndcg"]
    assert plain == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=TOLERANCE)


# trec_eval's ndcg with gains (m_ndcg.c): a retrieved document gains its grade's gain,
# negative ones included; the ideal ranking is built from the *positive* gains of every
# judged document of the qrels (grade 0 included when it is given a gain), best first. A
# negative grade in the qrels is unjudged: it gains nothing. pytrec_eval's extension
# module takes trec_eval's gains parameter (``ndcg.1=-1``: 0.1309 and 1.0, ``ndcg.0=1``:
# 0.7387); ``test_gains_equal_pytrec_eval`` compares with it on random qrels.
GAIN_QRELS = {"q": {"a": 1, "b": 2, "c": 0, "d": -1, "e": 1}}
GAIN_RUN = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}  # a, b, c, d
GAIN_RUN_WITHOUT_A = {"q": {"b": 2.0, "c": 1.0, "d": 0.5}}  # b, c, d


@pytest.mark.parametrize("with_bpref", [False, True])
@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # DCG = -1/log2(2) (a) + 2/log2(3) (b); c gains 0, d is unjudged. The ideal holds
        # the positive gains only: b's 2 at rank 1 -> IDCG = 2.
        (GAIN_RUN, (-1 + 2 / math.log2(3)) / 2),
        # DCG = 2/log2(2) (b); the unretrieved a and e (gain -1) are in no ranking.
        (GAIN_RUN_WITHOUT_A, 1.0),
    ],
)
def test_negative_gains_stay_out_of_the_ideal_ranking(
    run: dict[str, dict[str, float]], expected: float, with_bpref: bool
) -> None:
    names = ["ndcg", "bpref"] if with_bpref else ["ndcg"]
    ours = evaluate(GAIN_QRELS, run, names, gains={1: -1})
    assert ours["ndcg"] == pytest.approx(expected, abs=TOLERANCE)
    assert ours["ndcg"] <= 1.0


def test_negative_gains_can_make_ndcg_negative() -> None:
    # a (gain -1) at rank 1, b (gain 2) at rank 4: DCG = -1 + 2/log2(5); IDCG = 2.
    ours = evaluate({"q": {"a": 1, "b": 2}}, {"q": ["a", "x", "y", "b"]}, ["ndcg"], gains={1: -1})
    assert ours["ndcg"] == pytest.approx((-1 + 2 / math.log2(5)) / 2, abs=TOLERANCE)
    assert ours["ndcg"] < 0


@pytest.mark.parametrize("with_bpref", [False, True])
def test_grade_zero_can_be_given_a_gain(with_bpref: bool) -> None:
    # gains: grade 0 -> 1 (c), grade 1 -> 1 (a, e), grade 2 -> 2 (b); d is unjudged.
    # Ranking b, c, d: DCG = 2/log2(2) + 1/log2(3). Ideal: 2, 1, 1, 1 ->
    # 2 + 1/log2(3) + 1/log2(4) + 1/log2(5).
    names = ["ndcg", "ndcg@2", "bpref"] if with_bpref else ["ndcg", "ndcg@2"]
    ours = evaluate(GAIN_QRELS, GAIN_RUN_WITHOUT_A, names, gains={0: 1})
    ideal = 2 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5)
    assert ours["ndcg"] == pytest.approx((2 + 1 / math.log2(3)) / ideal, abs=TOLERANCE)
    # @2: DCG = 2 + 1/log2(3), ideal 2 + 1/log2(3)
    assert ours["ndcg@2"] == pytest.approx(1.0, abs=TOLERANCE)
    without = evaluate(GAIN_QRELS, GAIN_RUN_WITHOUT_A, ["ndcg"])["ndcg"]
    # grade 0 gains nothing by default: DCG 2, ideal 2 + 1/log2(3) + 1/log2(4)
    assert without == pytest.approx(2 / (2 + 1 / math.log2(3) + 1 / 2), abs=TOLERANCE)


def test_a_query_of_grade_zero_documents_only_can_gain() -> None:
    # c and n graded 0, each gaining 3; c retrieved at rank 2: DCG 3/log2(3), ideal
    # 3 + 3/log2(3) (trec_eval 9.0.8: 0.3869). Nothing is relevant: map stays 0.
    ours = evaluate({"q": {"c": 0, "n": 0}}, {"q": ["x", "c"]}, ["ndcg", "map"], gains={0: 3})
    expected = (3 / math.log2(3)) / (3 + 3 / math.log2(3))
    assert dict(ours) == pytest.approx({"ndcg": expected, "map": 0.0}, abs=TOLERANCE)


def _graded_collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels graded -1 to 3, each query with a document graded 0 or more (trec_eval loops
    forever on a query judged negative only), and a run with ties and unjudged documents."""
    rng = random.Random(seed)
    pool = [f"d{i:02d}" for i in range(30)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(10):
        judged = rng.sample(pool, rng.randint(1, 10))
        qrels[f"q{q}"] = {doc: rng.choice([-1, 0, 0, 1, 2, 3]) for doc in judged}
        qrels[f"q{q}"][judged[0]] = rng.choice([0, 1, 2, 3])
        grid = rng.choice([4, 1000])
        run[f"q{q}"] = {doc: rng.randint(0, grid) / grid for doc in rng.sample(pool, 15)}
    return qrels, run


@pytest.mark.parametrize("with_bpref", [False, True])
@pytest.mark.parametrize(
    "gains",
    # Gains a whole number apart: trec_eval 9.0's sort of the gains compares their
    # difference cut to an int, which leaves gains less than 1 apart in any order.
    [{1: -1}, {0: 1}, {0: 2, 1: -1, 2: 5}, {0: -0.5}, {2: -3, 3: 1}],
)
@pytest.mark.parametrize("seed", range(10))
def test_gains_equal_pytrec_eval(seed: int, gains: dict[int, float], with_bpref: bool) -> None:
    # pytrec_eval's Python wrapper passes numeric parameters only; its extension module
    # takes trec_eval's ``ndcg.<grade>=<gain>,...`` as trec_eval's -m does.
    import pytrec_eval_ext

    qrels, run = _graded_collection(seed)
    parameter = ",".join(f"{grade}={gain:g}" for grade, gain in sorted(gains.items()))
    evaluator = pytrec_eval_ext.RelevanceEvaluator(qrels, {f"ndcg.{parameter}"}, 1, False)
    reference = evaluator.evaluate(run)
    qids = list(run)
    names = ["ndcg", "bpref"] if with_bpref else ["ndcg"]
    ours = score_queries(qids, qrels, [run[qid] for qid in qids], names, TrecOptions(gains=gains))
    expected = [reference[qid]["ndcg"] for qid in qids]
    assert list(ours["ndcg"]) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize(("ties", "expected"), [("float32", 0.5), ("double", 1.0)])
def test_ties_float32_or_double(ties: str, expected: float) -> None:
    # 1.0 and 1.00000001 are one 32-bit float: a tie, broken by doc id descending (b first)
    ours = evaluate({"q": {"a": 1}}, {"q": {"b": 1.0, "a": 1.00000001}}, ["mrr"], ties=ties)  # type: ignore[arg-type]
    assert ours["mrr"] == expected


@pytest.mark.parametrize("ties", ["float32", "double"])
def test_ties_change_only_how_scores_compare_not_iprec_rounding(ties: str) -> None:
    # R = 4 relevant documents, ranking r1, n, n, r2: precision 1 at r1, 2/4 at r2.
    # At recall 0.3 trec_eval 9 asks for c = trunc(0.3 * 4 + 0.9) = 2 relevant documents
    # -> 0.5; trec_eval 10.0's lround(1.2) = 1 would give 1.0. Both ties keep 9's rule.
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1}}
    run = {"q": {"r1": 4.0, "n1": 3.0, "n2": 2.0, "r2": 1.0}}
    ours = evaluate(qrels, run, ["iprec_at_recall@0.3"], ties=ties)  # type: ignore[arg-type]
    assert ours["iprec_at_recall@0.3"] == pytest.approx(0.5, abs=TOLERANCE)


def test_float32_ties_match_pytrec_eval() -> None:
    run = {"q": {"b": 1.0, "a": 1.00000001}}
    assert _reference({"q": {"a": 1}}, run)["q"]["recip_rank"] == 0.5


def test_empty_ranking_iprec_is_zero_not_nan() -> None:
    ours = evaluate({"q": {"a": 1}}, {"q": {}}, ["iprec_at_recall@0.0", "bpref", "gm_map"])
    expected = {"iprec_at_recall@0.0": 0.0, "bpref": 0.0, "gm_map": 0.00001}
    assert dict(ours) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("relevance_level", 0),
        ("relevance_level", "1"),
        ("relevance_level", True),
        ("cutoff", 0),
        ("cutoff", 2.5),
        ("ties", "single"),
        ("all_queries", "yes"),
        ("gains", {"2": 3}),
        ("gains", {2: math.nan}),
        ("gains", {2: math.inf}),  # would make ndcg NaN, and a baseline's JSON invalid
        ("gains", {-1: 2}),  # a negative grade is unjudged: its gain could never apply
        ("relevance_level", math.inf),
    ],
)
def test_bad_option_is_an_error(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"evaluate\({option}=\.\.\.\): .*; "):
        evaluate(HAND_QRELS, HAND_RUN, ["map"], **{option: value})


@pytest.mark.parametrize(
    "name", ["map@0", "rprec@5", "bpref@10", "num_ret@3", "iprec_at_recall@0.25", "iprec_at_recall"]
)
def test_bad_measure_name_is_an_error(name: str) -> None:
    with pytest.raises(ValueError, match=r"use |recall level|at least 1"):
        evaluate(HAND_QRELS, HAND_RUN, [name])
