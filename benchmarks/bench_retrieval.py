"""Benchmark of the retrieval metrics of pytest-ragmetrics against pytrec_eval and ranx.

Run it from the repository root with the project's virtualenv::

    .venv/bin/python benchmarks/bench_retrieval.py [--queries 10000] [--docs 100]
        [--repeats 3] [--seed 0] [--out PATH]

What is measured
----------------
A deterministic synthetic collection (``numpy.random.default_rng(--seed)``): ``--queries``
queries, each with 1 to 20 judged documents (grades 0..3, so judged non-relevant ones
too) drawn from a pool of ``2 * --docs`` documents, and a run retrieving ``--docs`` of the
pool, so about half of the judged documents are never retrieved. A judged document's score
is ``uniform(0, 1) + 0.25 * grade`` (relevant documents tend to rank higher, as in a real
run), every score a 32-bit float: trec_eval compares scores in single precision and this
module in double, so scores that are distinct only in double precision would rank
differently (the test suite documents this); 32-bit scores keep the comparison exact.

The same five metrics are computed by the three implementations, the mean over all
queries: ``ndcg@10``, ``mrr``, ``precision@5``, ``recall@10``, ``hit_rate@5`` (trec_eval's
``ndcg_cut_10``, ``recip_rank``, ``P_5``, ``recall_10``, ``success_5``; ranx's same names).
Each timing starts from the Python dicts and includes everything the caller pays:

``ours``
    ``pytest_ragmetrics.metrics.retrieval.evaluate(qrels, run, metrics)``.
``pytrec_eval``
    ``RelevanceEvaluator(qrels, measures).evaluate(run)``, then the mean over queries of
    each measure (``math.fsum``).
``ranx``
    ``evaluate(Qrels(qrels), Run(run), metrics)``. ranx JIT-compiles its functions with
    numba on first use, and again for every width of its doc-id strings: one unmeasured
    warm-up call on a tiny input (10 queries, the collection's longest doc ids, the same
    metrics) comes first, so the compilation (or the loading of numba's on-disk cache) is
    excluded. ranx's metrics run on numba's thread pool (``numba threads`` below); ours
    and pytrec_eval use one core.

Four scenarios:

``scores``
    ``{doc: score}`` with the continuous scores above (few ties).
``tied``
    The same scores rounded to 2 decimals: at most 176 values (0.00 to 1.75), and the
    unjudged and grade-0 documents all below 1.00; with the defaults, 65 distinct scores
    for 100 documents per query on average (printed), so many documents tie. trec_eval and
    ours break ties by doc id descending; ranx does not, so its numbers differ there (see
    ``ranx |d|``).
``equal``
    Every score of a query equal: the worst case for tie breaking, where the whole ranking
    is decided by doc id.
``lists``
    Ranked lists ``[doc, ...]`` (the ``scores`` run in trec_eval's order). Ours takes
    them as they are; pytrec_eval and ranx only take scores, so their timing includes
    converting each list to ``{doc: 1 / rank}`` (what a caller holding lists pays; the
    conversion alone is printed too).

Before any timing, every scenario's numbers are checked: ours per query and on the mean
must equal pytrec_eval's to 1e-9, or the script prints the differences and exits with
status 1 without timing anything.

How to read the output
----------------------
* ``seconds``: the median over ``--repeats`` runs of each implementation (each run listed).
* ``ours/pytrec_eval``, ``ours/ranx``: below 1 means ours is faster.
* ``ranx |d|``: the largest difference between ranx's means and ours, for information
  (0 up to rounding without ties; not 0 with ties, broken differently by ranx).
* ``machine``: timings on a small shared machine are noisy; a load average well above 0
  before the benchmark means other processes competed for the cores.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval
from benchinfo import load_average, machine_info

from pytest_ragmetrics.metrics.retrieval import evaluate, score_queries

METRICS = ("ndcg@10", "mrr", "precision@5", "recall@10", "hit_rate@5")
TREC_KEYS = {
    "ndcg@10": "ndcg_cut_10",
    "mrr": "recip_rank",
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "hit_rate@5": "success_5",
}
TREC_MEASURES = {"ndcg_cut.10", "recip_rank", "P.5", "recall.10", "success.5"}
RANX_METRICS = list(METRICS)  # ranx's names are ours for these five
SCENARIOS = ("scores", "tied", "equal", "lists")
IMPLEMENTATIONS = ("ours", "pytrec_eval", "ranx")
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
    """Ranked lists as ``{doc: 1 / rank}``, for the implementations that need scores."""
    return {
        qid: {doc: 1.0 / rank for rank, doc in enumerate(docs, 1)} for qid, docs in lists.items()
    }


# ---------------------------------------------------------------------------------------
# The three implementations, each from Python dicts to the five means
# ---------------------------------------------------------------------------------------


def run_ours(qrels: Qrels, run: Mapping[str, Any]) -> dict[str, float]:
    return dict(evaluate(qrels, run, METRICS))


def trec_per_query(qrels: Qrels, run: Scores) -> dict[str, dict[str, float]]:
    result: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(
        qrels, TREC_MEASURES
    ).evaluate(run)
    return result


def run_pytrec_eval(qrels: Qrels, run: Scores) -> dict[str, float]:
    per_query = trec_per_query(qrels, run)
    return {
        name: math.fsum(row[key] for row in per_query.values()) / len(per_query)
        for name, key in TREC_KEYS.items()
    }


def run_ranx(qrels: Qrels, run: Scores) -> dict[str, float]:
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate as ranx_evaluate

    means = ranx_evaluate(RanxQrels(qrels), RanxRun(run), RANX_METRICS)
    return {name: float(means[name]) for name in METRICS}


def warm_up_ranx(collection: Collection) -> float:
    """One call on a tiny input: numba compiles (or loads its cache); returns seconds.

    ranx stores doc ids as numpy strings as wide as the longest one and numba compiles
    for each width, so the tiny input has the collection's longest doc ids. It has 10
    queries: on fewer, ranx sets numba's thread count to 1 for the rest of the process.
    """
    qrels_doc = max((doc for judged in collection.qrels.values() for doc in judged), key=len)
    run_doc = max((doc for run in collection.scores.values() for doc in run), key=len)
    qrels = {f"w{i}": {qrels_doc: 1, "x": 0} for i in range(10)}
    run = {f"w{i}": {run_doc: 0.5, "x": 0.7} for i in range(10)}
    started = time.perf_counter()
    run_ranx(qrels, run)
    return time.perf_counter() - started


def scenario_inputs(collection: Collection, scenario: str) -> dict[str, Callable[[], Any]]:
    """What each implementation runs in ``scenario``, as a no-argument call."""
    qrels = collection.qrels
    if scenario == "lists":
        lists = collection.lists
        return {
            "ours": lambda: run_ours(qrels, lists),
            "pytrec_eval": lambda: run_pytrec_eval(qrels, as_scores(lists)),
            "ranx": lambda: run_ranx(qrels, as_scores(lists)),
        }
    run = {"scores": collection.scores, "tied": collection.tied, "equal": collection.equal}[
        scenario
    ]
    return {
        "ours": lambda: run_ours(qrels, run),
        "pytrec_eval": lambda: run_pytrec_eval(qrels, run),
        "ranx": lambda: run_ranx(qrels, run),
    }


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
        gap = np.abs(ours[name] - expected)
        if gap.max() > TOLERANCE:
            worst = int(gap.argmax())
            mine, reference = float(ours[name][worst]), float(expected[worst])
            problems.append(
                f"{scenario} {name}: {int((gap > TOLERANCE).sum())} queries differ, e.g. "
                f"{qids[worst]}: ours {mine!r}, pytrec_eval {reference!r}"
            )
        mean = math.fsum(expected.tolist()) / len(qids)
        if abs(means[name] - mean) > TOLERANCE:
            problems.append(f"{scenario} {name}: mean ours {means[name]!r}, pytrec_eval {mean!r}")
    return problems


@dataclass
class Results:
    seconds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    means: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def median(self, scenario: str, implementation: str) -> float:
        return statistics.median(self.seconds[scenario][implementation])


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def run_benchmark(args: argparse.Namespace) -> Results | list[str]:
    """Check every scenario against pytrec_eval, then time; the problems if a check fails."""
    results = Results()
    print(f"building {args.queries} queries x {args.docs} docs (seed {args.seed}) ...", flush=True)
    started = time.perf_counter()
    collection = make_collection(args.queries, args.docs, args.seed)
    results.details["build_s"] = time.perf_counter() - started
    results.details["judged"] = sum(map(len, collection.qrels.values()))
    results.details["relevant"] = sum(
        sum(grade > 0 for grade in judged.values()) for judged in collection.qrels.values()
    )
    distinct = [len(set(run.values())) for run in collection.tied.values()]
    results.details["tied_distinct_scores"] = statistics.mean(distinct)

    print("checking ours against pytrec_eval (per query and mean, 1e-9) ...", flush=True)
    problems = [p for scenario in SCENARIOS for p in check_against_trec_eval(collection, scenario)]
    if problems:
        return problems
    results.details["checked"] = len(SCENARIOS) * len(METRICS) * args.queries

    print("warming ranx up on a tiny input (numba compile, not measured) ...", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's NumbaTypeSafetyWarning inside ranx
        results.details["ranx_warm_up_s"] = warm_up_ranx(collection)
        results.details["conversion_s"] = statistics.median(
            timed(lambda: as_scores(collection.lists))[0] for _ in range(args.repeats)
        )
        results.details["load_before"] = load_average()
        for repeat in range(1, args.repeats + 1):
            print(f"repeat {repeat}/{args.repeats}", flush=True)
            for scenario in SCENARIOS:
                for implementation, call in scenario_inputs(collection, scenario).items():
                    seconds, means = timed(call)
                    results.seconds.setdefault(scenario, {}).setdefault(implementation, [])
                    results.seconds[scenario][implementation].append(seconds)
                    results.means.setdefault(scenario, {})[implementation] = means
        results.details["load_after"] = load_average()
    return results


# ---------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------


def numba_threads() -> int | None:
    try:
        import numba
    except ImportError:
        return None
    return int(numba.get_num_threads())


def machine(details: Mapping[str, Any]) -> dict[str, Any]:
    """Where the numbers come from, and how busy the machine was around them."""
    packages = ("pytest-ragmetrics", "numpy", "pytrec-eval-terrier", "ranx", "numba")
    return machine_info(details, packages, numba_threads=numba_threads())


def ranx_gap(results: Results, scenario: str) -> float:
    ours, theirs = results.means[scenario]["ours"], results.means[scenario]["ranx"]
    return max(abs(ours[name] - theirs[name]) for name in METRICS)


def report(results: Results, args: argparse.Namespace) -> dict[str, Any]:
    info = machine(results.details)
    details = results.details
    print()
    print(
        f"machine: {info['platform']}, {info['processor']}, Python {info['python']}, "
        f"{info['cpu_count']} CPUs ({info['cpus_usable']} usable), "
        f"numba threads (ranx) {info['numba_threads']}"
    )
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    load = info["load_average"]
    if load["before"] is not None:
        print(
            f"load average (1 min): {load['before']:.2f} before the timings, "
            f"{load['after']:.2f} after them (their own work included)"
        )
    print(
        f"workload: {args.queries} queries x {args.docs} retrieved docs, "
        f"{details['judged']} judgements ({details['relevant']} relevant); "
        f"tied run: {details['tied_distinct_scores']:.0f} distinct scores per query on "
        f"average; metrics {', '.join(METRICS)}; median of {args.repeats} run(s)"
    )
    print(
        f"check: ours = pytrec_eval to {TOLERANCE:g} on all {details['checked']} "
        f"per-query values ({len(SCENARIOS)} scenarios) and on the means"
    )
    print(
        f"ranx warm-up (tiny input, not measured): {details['ranx_warm_up_s']:.2f} s; "
        f"list -> {{doc: 1/rank}} conversion (in pytrec_eval and ranx 'lists'): "
        f"{details['conversion_s']:.2f} s"
    )
    print()
    header = (
        f"{'scenario':<8} {'ours s':>8} {'pytrec_eval s':>14} {'ranx s':>8} "
        f"{'ours/pytrec_eval':>17} {'ours/ranx':>10} {'ranx |d|':>9}"
    )
    print(header)
    table: dict[str, dict[str, float]] = {}
    for scenario in SCENARIOS:
        ours, trec, ranx = (results.median(scenario, name) for name in IMPLEMENTATIONS)
        gap = ranx_gap(results, scenario)
        table[scenario] = {
            "ours_s": ours,
            "pytrec_eval_s": trec,
            "ranx_s": ranx,
            "ours/pytrec_eval": ours / trec,
            "ours/ranx": ours / ranx,
            "ranx_max_abs_diff": gap,
        }
        print(
            f"{scenario:<8} {ours:>8.3f} {trec:>14.3f} {ranx:>8.3f} "
            f"{ours / trec:>17.2f} {ours / ranx:>10.2f} {gap:>9.1e}"
        )
    print()
    print("runs (s):")
    for scenario in SCENARIOS:
        for name in IMPLEMENTATIONS:
            runs = ", ".join(f"{s:.3f}" for s in results.seconds[scenario][name])
            print(f"  {scenario:<8} {name:<12} {runs}")
    return {
        "machine": info,
        "queries": args.queries,
        "docs": args.docs,
        "seed": args.seed,
        "repeats": args.repeats,
        "metrics": list(METRICS),
        "table": table,
        "runs": results.seconds,
        "means": results.means,
        "details": {k: v for k, v in details.items() if k not in ("load_before", "load_after")},
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=10_000, help="queries (default: 10000)")
    parser.add_argument(
        "--docs", type=int, default=100, help="retrieved docs per query (default: 100)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each timing; the median is reported"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the collection")
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.queries < 1 or args.docs < 1 or args.repeats < 1:
        parser.error("--queries, --docs and --repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    outcome = run_benchmark(args)
    if isinstance(outcome, list):
        print("\nours differs from pytrec_eval: no timing reported.")
        for problem in outcome:
            print(f"  - {problem}")
        return 1
    document = report(outcome, args)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        print(f"\nresults written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
