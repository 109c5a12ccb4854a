"""trec_eval's set-based and precision-recall measures and options of ``evaluate``.

Parity with pytrec_eval (trec_eval 9.x compiled in) on seeded random data, per query and
on the mean, to 1e-9; hand-computed cases for each measure and for the options pytrec_eval
does not expose (-M ``cutoff``, -c ``all_queries``, ndcg ``gains``, ``ties="double"``).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import pytrec_eval

from pytest_ragmetrics.metrics.retrieval import RECALL_LEVELS, evaluate, score_queries

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
    "map_cut.5,20",
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
    return _nan_free(evaluator.evaluate(run))


@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("seed", range(20))
def test_per_query_values_equal_pytrec_eval(seed: int, relevance_level: int) -> None:
    qrels, run = _collection(seed)
    reference = _reference(qrels, run, relevance_level=relevance_level)
    qids = [qid for qid in run if qid in qrels]
    ours = score_queries(qids, qrels, [run[qid] for qid in qids], NAMES, _options(relevance_level))
    assert set(reference) == set(qids)
    for i, qid in enumerate(qids):
        for name in NAMES:
            expected = reference[qid][TREC_KEYS[name]]
            if name == "gm_map":  # trec_eval keeps log(max(AP, 0.00001)) per query
                expected = math.exp(expected)
                got = max(float(ours[name][i]), 0.00001)
            else:
                got = float(ours[name][i])
            assert got == pytest.approx(expected, abs=TOLERANCE), (qid, name)


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
    from pytest_ragmetrics.metrics.retrieval import Options

    return Options(relevance_level=relevance_level)


def _nan_free(reference: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """trec_eval's iprec_at_recall at a level asking for 0 relevant documents is the
    precision of the whole ranking, 0 / 0 (NaN) for an empty one; ours is 0."""
    for values in reference.values():
        for key, value in values.items():
            if math.isnan(value):
                assert key.startswith("iprec_at_recall"), key
                assert values["num_ret"] == 0, key
                values[key] = 0.0
    return reference
