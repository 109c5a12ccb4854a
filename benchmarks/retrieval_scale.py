"""How ``evaluate`` scales with the number of queries, against pytrec_eval in the same
process: the collection of ``bench_retrieval.py`` (100 retrieved documents a query, 1 to
20 graded judgements, its twelve measures) at each size given, continuous scores.

For each size, both sides' numbers are first checked equal to 1e-9 (per query and on the
mean, ``bench_retrieval.check_against_trec_eval``); then each side is timed ``--rounds``
times, alternating, from the Python dicts, and the medians are printed with their ratio
(ours / pytrec_eval; below 1, ours is faster) and how each side's time grew from the
smallest size. The garbage collector runs as in a caller's program. Nothing is asserted:
the figures are for reading (docs/performance.md, "Retrieval")::

    .venv/bin/python benchmarks/retrieval_scale.py 10000 100000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_retrieval import (  # the sibling module, found through sys.path
    DOCS,
    check_against_trec_eval,
    make_collection,
    run_ours,
    run_pytrec_eval,
)


def _median_seconds(
    call: Callable[[], Any], other: Callable[[], Any], rounds: int
) -> tuple[float, float]:
    """Medians of ``call`` and ``other``, each timed ``rounds`` times, alternating."""
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        for timed, into in ((call, mine), (other, theirs)):
            start = time.perf_counter()
            timed()
            into.append(time.perf_counter() - start)
    return statistics.median(mine), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="+", type=int, help="numbers of queries")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    first: tuple[float, float] | None = None
    print("queries    ours s  pytrec_eval s  ours/pytrec_eval  growth ours  growth pytrec_eval")
    for size in args.sizes:
        collection = make_collection(size, DOCS, seed=0)
        problems = check_against_trec_eval(collection, "scores")
        if problems:
            sys.exit("\n".join(problems))
        qrels, run = collection.qrels, collection.scores
        ours, reference = _median_seconds(
            partial(run_ours, qrels, run), partial(run_pytrec_eval, qrels, run), args.rounds
        )
        first = first or (ours, reference)
        print(
            f"{size:>7}  {ours:>8.3f}  {reference:>13.3f}  {ours / reference:>16.2f}  "
            f"{ours / first[0]:>11.1f}  {reference / first[1]:>18.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
