"""Benchmark of the retrieval metrics of pytest-ragmetrics against pytrec_eval.

Run it from the repository root with the project's virtualenv::

    .venv/bin/pytest benchmarks/bench_retrieval.py --benchmark-only [--bench-size large]

What is measured
----------------
A deterministic synthetic collection (``numpy.random.default_rng(0)``): 1,000 queries
(10,000 with ``--bench-size large``), each with 1 to 20 judged documents (grades 0..3, so
judged non-relevant ones too) drawn from a pool of 200 documents, and a run retrieving 100
of the pool, so about half of the judged documents are never retrieved. A judged
document's score is ``uniform(0, 1) + 0.25 * grade`` (relevant documents tend to rank
higher, as in a real run), every score a 32-bit float: trec_eval compares scores in single
precision and this module in double, so scores that are distinct only in double precision
would rank differently (the test suite documents this); 32-bit scores keep the comparison
exact.

The same twelve metrics are computed by both implementations, the mean over all queries:
``ndcg@10``, ``mrr``, ``precision@5``, ``recall@10``, ``hit_rate@5``, ``map``, ``map@10``,
``gm_map`` (its geometric mean), ``rprec``, ``bpref``, ``num_rel_ret`` and
``iprec_at_recall@0.5`` (trec_eval's ``ndcg_cut_10``, ``recip_rank``, ``P_5``,
``recall_10``, ``success_5``, ``map``, ``map_cut_10``, ``gm_map``, ``Rprec``, ``bpref``,
``num_rel_ret``, ``iprec_at_recall_0.50``). Each timing starts
from the Python dicts and includes everything the caller pays:

``ours``
    ``pytest_ragmetrics.metrics.retrieval.evaluate(qrels, run, metrics)``.
``reference``
    pytrec_eval: ``RelevanceEvaluator(qrels, measures).evaluate(run)``, then the mean over
    queries of each measure (``math.fsum``).

ranx is not timed here: it JIT-compiles with numba on first use (about 50 s), more than
this suite's budget; its parity with ours is checked in the test suite.

Four scenarios:

``scores``
    ``{doc: score}`` with the continuous scores above (few ties).
``tied``
    The same scores rounded to 2 decimals: at most 176 values (0.00 to 1.75), and the
    unjudged and grade-0 documents all below 1.00, so many documents tie. trec_eval and
    ours break ties by doc id descending.
``equal``
    Every score of a query equal: the worst case for tie breaking, where the whole ranking
    is decided by doc id.
``lists``
    Ranked lists ``[doc, ...]`` (the ``scores`` run in trec_eval's order). Ours takes
    them as they are; pytrec_eval only takes scores, so its timing includes converting
    each list to ``{doc: 1 / rank}`` (what a caller holding lists pays).

Before any timing, each scenario's numbers are checked: ours per query and on the mean
must equal pytrec_eval's to 1e-9, or the case fails without timing anything.

One query per row
-----------------
``test_retrieval_per_row`` times what a row test's retrieval fixtures pay: one query at a
time, over the first 300 queries of the collection (3,000 with ``--bench-size large``),
each a dataset row with its ranking as a list (``retrieved``, the ``scores`` run in
trec_eval's order, as a row holds it) and its grades (``relevant``). Per row, five
measures, as a row test calling ``ndcg(row, k=10)``, ``mrr(row)``, ``recall(row, k=10)``,
``precision(row, k=5)`` and ``hit_rate(row, k=5)`` computes them:

``ours``
    each fixture's computation (``retrieval_measure``: the value and its evidence), all
    five sharing one fresh ``MetricContext`` per row, as the plugin gives the metrics of
    one row.
``reference``
    pytrec_eval on the row alone: ``RelevanceEvaluator({id: qrels}, measures)`` evaluating
    ``{id: {doc: 1 / rank}}`` (a list converted to scores, as pytrec_eval needs them).

The per-row values are checked against pytrec_eval's to 1e-9 first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.retrieval import evaluate, retrieval_measure, score_queries

from conftest import SIDES, Side, Timer

METRICS = (
    "ndcg@10",
    "mrr",
    "precision@5",
    "recall@10",
    "hit_rate@5",
    "map",
    "map@10",
    "gm_map",
    "rprec",
    "bpref",
    "num_rel_ret",
    "iprec_at_recall@0.5",
)
TREC_KEYS = {
    "ndcg@10": "ndcg_cut_10",
    "mrr": "recip_rank",
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "hit_rate@5": "success_5",
    "map": "map",
    "map@10": "map_cut_10",
    "gm_map": "gm_map",
    "rprec": "Rprec",
    "bpref": "bpref",
    "num_rel_ret": "num_rel_ret",
    "iprec_at_recall@0.5": "iprec_at_recall_0.50",
}
TREC_MEASURES = {
    "ndcg_cut.10",
    "recip_rank",
    "P.5",
    "recall.10",
    "success.5",
    "map",
    "map_cut.10",
    "gm_map",
    "Rprec",
    "bpref",
    "num_rel_ret",
    "iprec_at_recall",
}
# trec_eval's gm_map per query is log(max(AP, GM_FLOOR)); its mean is exp(mean(logs)).
GM_FLOOR = 0.00001
SCENARIOS = ("scores", "tied", "equal", "lists")
QUERIES = {"small": 1_000, "large": 10_000}
DOCS = 100
TOLERANCE = 1e-9

Qrels = dict[str, dict[str, int]]
Scores = dict[str, dict[str, float]]
Lists = dict[str, list[str]]

# ---------------------------------------------------------------------------------------
# The synthetic collection
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Collection:
    qrels: Qrels
    scores: Scores  # continuous
    tied: Scores  # rounded to 2 decimals
    equal: Scores  # every score 0.0
    lists: Lists  # ``scores`` ranked as trec_eval does


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """Score descending, then doc id descending (trec_eval)."""
    return sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)


def make_collection(queries: int, docs: int, seed: int) -> Collection:
    rng = np.random.default_rng(seed)
    pool = np.array([f"doc{i}" for i in range(2 * docs)])
    retrieved = np.argsort(rng.random((queries, pool.size)), axis=1)[:, :docs]
    noise = rng.random((queries, docs), dtype=np.float32)
    qrels: Qrels = {}
    scores: Scores = {}
    tied: Scores = {}
    for i in range(queries):
        judged = rng.choice(pool.size, size=int(rng.integers(1, 21)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        qid = f"q{i}"
        qrels[qid] = {str(pool[j]): int(g) for j, g in zip(judged, grades, strict=True)}
        grade_of = np.zeros(pool.size, dtype=np.float32)
        grade_of[judged] = grades
        values = (noise[i] + np.float32(0.25) * grade_of[retrieved[i]]).astype(np.float64)
        names = pool[retrieved[i]].tolist()
        scores[qid] = dict(zip(names, values.tolist(), strict=True))
        tied[qid] = dict(zip(names, np.round(values, 2).tolist(), strict=True))
    lists = {qid: trec_order(run) for qid, run in scores.items()}
    equal = {qid: dict.fromkeys(run, 0.0) for qid, run in scores.items()}
    return Collection(qrels, scores, tied, equal, lists)


def as_scores(lists: Lists) -> Scores:
    """Ranked lists as ``{doc: 1 / rank}``, for pytrec_eval, which needs scores."""
    return {
        qid: {doc: 1.0 / rank for rank, doc in enumerate(docs, 1)} for qid, docs in lists.items()
    }


# ---------------------------------------------------------------------------------------
# The two implementations, each from Python dicts to the means
# ---------------------------------------------------------------------------------------


def run_ours(qrels: Qrels, run: Mapping[str, Any]) -> dict[str, float]:
    return dict(evaluate(qrels, run, METRICS))


def trec_per_query(qrels: Qrels, run: Scores) -> dict[str, dict[str, float]]:
    result: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(
        qrels, TREC_MEASURES
    ).evaluate(run)
    return result


def trec_mean(name: str, values: list[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.exp(mean) if name == "gm_map" else mean


def run_pytrec_eval(qrels: Qrels, run: Scores) -> dict[str, float]:
    per_query = trec_per_query(qrels, run)
    return {
        name: trec_mean(name, [row[key] for row in per_query.values()])
        for name, key in TREC_KEYS.items()
    }


def scenario_call(collection: Collection, scenario: str, side: Side) -> Callable[[], Any]:
    """What ``side`` runs in ``scenario``, as a no-argument call."""
    qrels = collection.qrels
    if scenario == "lists":
        lists = collection.lists
        if side == "ours":
            return lambda: run_ours(qrels, lists)
        return lambda: run_pytrec_eval(qrels, as_scores(lists))
    run = {"scores": collection.scores, "tied": collection.tied, "equal": collection.equal}[
        scenario
    ]
    if side == "ours":
        return lambda: run_ours(qrels, run)
    return lambda: run_pytrec_eval(qrels, run)


# ---------------------------------------------------------------------------------------
# Checking, then timing
# ---------------------------------------------------------------------------------------


def check_against_trec_eval(collection: Collection, scenario: str) -> list[str]:
    """Ours equals pytrec_eval per query and on the mean; the differences otherwise."""
    qrels = collection.qrels
    ours_run: Mapping[str, Any] = {
        "scores": collection.scores,
        "tied": collection.tied,
        "equal": collection.equal,
        "lists": collection.lists,
    }[scenario]
    trec_run = as_scores(collection.lists) if scenario == "lists" else ours_run
    theirs = trec_per_query(qrels, trec_run)  # type: ignore[arg-type]
    qids = list(ours_run)
    if sorted(theirs) != sorted(qids):
        return [f"{scenario}: pytrec_eval evaluated {len(theirs)} queries, ours {len(qids)}"]
    ours = score_queries(qids, qrels, [ours_run[qid] for qid in qids], METRICS)
    means = run_ours(qrels, ours_run)
    problems = []
    for name, key in TREC_KEYS.items():
        expected = np.array([theirs[qid][key] for qid in qids])
        mine_all = ours[name]
        if name == "gm_map":  # per query ours is AP, trec_eval's log(max(AP, floor))
            mine_all = np.log(np.maximum(mine_all, GM_FLOOR))
        gap = np.abs(mine_all - expected)
        if gap.max() > TOLERANCE:
            worst = int(gap.argmax())
            mine, reference = float(mine_all[worst]), float(expected[worst])
            problems.append(
                f"{scenario} {name}: {int((gap > TOLERANCE).sum())} queries differ, e.g. "
                f"{qids[worst]}: ours {mine!r}, pytrec_eval {reference!r}"
            )
        mean = trec_mean(name, expected.tolist())
        if abs(means[name] - mean) > TOLERANCE:
            problems.append(f"{scenario} {name}: mean ours {means[name]!r}, pytrec_eval {mean!r}")
    return problems


@pytest.fixture(scope="module")
def collection(size: str) -> Collection:
    return make_collection(QUERIES[size], DOCS, seed=0)


@pytest.fixture(scope="module")
def checked(collection: Collection) -> set[str]:
    """The scenarios whose numbers were checked against pytrec_eval."""
    return set()


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_retrieval(
    compare: Timer, collection: Collection, checked: set[str], scenario: str, side: Side
) -> None:
    if scenario not in checked:
        problems = check_against_trec_eval(collection, scenario)
        assert not problems, "\n".join(problems)
        checked.add(scenario)
    means = compare(f"retrieval {scenario}", side, scenario_call(collection, scenario, side))
    assert set(means) == set(METRICS)


# ---------------------------------------------------------------------------------------
# One query per row, as a row test's fixtures compute it
# ---------------------------------------------------------------------------------------

ROW_QUERIES = {"small": 300, "large": 3_000}
# (fixture, its options, our recorded name, pytrec_eval's per-query key)
ROW_CALLS: tuple[tuple[str, dict[str, Any], str, str], ...] = (
    ("ndcg", {"k": 10}, "ndcg@10", "ndcg_cut_10"),
    ("mrr", {}, "mrr", "recip_rank"),
    ("recall", {"k": 10}, "recall@10", "recall_10"),
    ("precision", {"k": 5}, "precision@5", "P_5"),
    ("hit_rate", {"k": 5}, "hit_rate@5", "success_5"),
)
ROW_MEASURES = {"ndcg_cut.10", "recip_rank", "recall.10", "P.5", "success.5"}


def _no_embed(texts: Any) -> Any:
    raise AssertionError("retrieval metrics embed nothing")


def rows_of(collection: Collection, queries: int) -> list[Row]:
    """The first ``queries`` queries as dataset rows: ``retrieved`` the ranked list,
    ``relevant`` the grades."""
    return [
        Row(qid, "rows.jsonl", i + 1, i, {"retrieved": ranked, "relevant": collection.qrels[qid]})
        for i, (qid, ranked) in enumerate(list(collection.lists.items())[:queries])
    ]


def per_row_ours(rows: list[Row]) -> list[dict[str, float]]:
    """Each row's five values, through the fixtures' computation and one context a row."""
    settings = Settings()
    measures = [(retrieval_measure(family), options) for family, options, _, _ in ROW_CALLS]
    values = []
    for row in rows:
        context = MetricContext(settings, _no_embed)
        row_values: dict[str, float] = {}
        for measure, options in measures:
            row_values.update(measure(row, context, **options).values)
        values.append(row_values)
    return values


def per_row_pytrec_eval(rows: list[Row]) -> list[dict[str, float]]:
    """Each row's five values from pytrec_eval, one evaluator a row."""
    values = []
    for row in rows:
        qrels = {row.id: row["relevant"]}
        run = {row.id: {doc: 1.0 / rank for rank, doc in enumerate(row["retrieved"], 1)}}
        result = pytrec_eval.RelevanceEvaluator(qrels, ROW_MEASURES).evaluate(run)[row.id]
        values.append({name: result[key] for _, _, name, key in ROW_CALLS})
    return values


@pytest.mark.parametrize("side", SIDES)
def test_retrieval_per_row(compare: Timer, collection: Collection, size: str, side: Side) -> None:
    rows = rows_of(collection, ROW_QUERIES[size])
    ours, theirs = per_row_ours(rows), per_row_pytrec_eval(rows)
    problems = [
        f"{row.id} {name}: ours {mine[name]!r}, pytrec_eval {reference[name]!r}"
        for row, mine, reference in zip(rows, ours, theirs, strict=True)
        for name in reference
        if abs(mine[name] - reference[name]) > TOLERANCE
    ]
    assert not problems, "\n".join(problems[:10])
    call = {"ours": per_row_ours, "reference": per_row_pytrec_eval}[side]
    values = compare("retrieval one query per row", side, lambda: call(rows))
    assert len(values) == len(rows)
