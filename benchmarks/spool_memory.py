"""What the controller's row store holds for rows a report shows, with and without the
run's spool, and what the spool costs in CPU.

Builds N row payloads shaped like the bulk eval of ``bulk_memory.py`` as its JSON
report shows them (``em``, ``f1``, ``idk_citation``, ``tokens`` and its breakdown, a
citation census, an inputs digest, the four metrics' evidence texts and the question,
answer and gold), one at a time, and gathers them as the controller does
(``Gathered(shown=True)``): with a spool (``results.spool``, every row's shown parts in
a file) and without one (every row kept whole in memory, as before the spool). For each:

- the bytes the store holds once every row is gathered, traced with ``tracemalloc``
  (a run of its own: tracing slows everything), per row;
- the CPU seconds of gathering the rows and of one pass that reads every row back as a
  ``RowResult`` (what a report that shows rows does), per row, untraced.

Only the store is measured: not pytest, the rows' runs or the reports, so it shows this
part's effect alone (``bulk_memory.py`` measures whole runs)::

    .venv/bin/python benchmarks/spool_memory.py 200000 1000000
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Iterator

from pytest_ragmetrics.results.records import EvalInfo, RowPayload
from pytest_ragmetrics.results.spool import Spool
from pytest_ragmetrics.results.summary import Gathered

INFO = EvalInfo("test_bulk_eval.py", "test_bulk_eval.py", "rows.jsonl", "0" * 64, 0)
CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def payloads(rows: int) -> Iterator[RowPayload]:
    """The bulk eval's rows as their payloads reach the controller, evidence as its JSON
    report shows it."""
    for i in range(rows):
        gold = CITIES[i % len(CITIES)]
        answer = CITIES[(i + (i % 8 == 0)) % len(CITIES)]
        right = gold == answer
        tokens = 100 + i % 300
        yield RowPayload(
            INFO,
            f"q{i:07d}",
            i,
            {"idk_citation": 0.0, "em": float(right), "f1": float(right), "tokens": float(tokens)},
            {"tokens_by_stage": {"(unstaged)": float(tokens)}},
            None,
            test="test_answers",
            eval_tests=("test_answers",),
            evidence={
                "idk_citation": "no IDK sentence carries a citation",
                "em": "answer matches a gold after normalisation"
                if right
                else "answer matches none of 1 gold(s) after normalisation",
                "f1": f"best gold {gold!r}: {int(right)} common token(s), precision "
                f"{int(right)}, recall {int(right)}",
                "tokens": f"{tokens} tokens ((unstaged) {tokens})",
            },
            fields={
                "question": f"Which city is number {i}?",
                "answer": f"{answer} [CIT:d{i}].",
                "gold": [gold],
                "answerable": None,
            },
            inputs=format(i * 2654435761 % 2**64, "016x"),
            citations={"cites": 1, "contexts": 1},
        )


def gather(rows: int, spooled: bool) -> tuple[Gathered, Spool | None]:
    spool = Spool() if spooled else None
    gathered = Gathered(True, spool)
    for payload in payloads(rows):
        gathered.add(payload)
    return gathered, spool


def held_bytes(rows: int, spooled: bool) -> int:
    """What the gathered store holds, traced (the payloads, made one at a time, freed)."""
    gc.collect()
    tracemalloc.start()
    gathered, spool = gather(rows, spooled)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del gathered
    if spool is not None:
        spool.close()
    return held


def cpu_seconds(rows: int, spooled: bool) -> tuple[float, float]:
    """CPU seconds of gathering ``rows`` rows and of reading each back once."""
    gc.collect()
    started = time.process_time()
    gathered, spool = gather(rows, spooled)
    gathering = time.process_time() - started
    (store,) = gathered.rows.values()
    started = time.process_time()
    for _ in store.summary_rows():
        pass
    reading = time.process_time() - started
    if spool is not None:
        spool.close()
    return gathering, reading


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="+", help="numbers of rows to gather")
    args = parser.parse_args()
    for rows in args.rows:
        for spooled in (False, True):
            held = held_bytes(rows, spooled)
            gathering, reading = cpu_seconds(rows, spooled)
            figures = {
                "rows": rows,
                "store": "spool" if spooled else "memory",
                "held_mb": round(held / 2**20, 1),
                "held_bytes_per_row": round(held / rows),
                "gather_us_per_row": round(gathering / rows * 1e6, 1),
                "read_us_per_row": round(reading / rows * 1e6, 1),
            }
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
