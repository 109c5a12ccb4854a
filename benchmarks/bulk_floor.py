"""A bulk-mode eval against the floor: the direct loop over the same metric functions.

Writes the deterministic dataset and eval of ``bulk_memory.py`` (``em``, ``f1``,
``idk_citation``, ``tokens``, four gates; no model loaded) as JSONL or Parquet, then times,
pair by pair, two whole commands on the same file, each in a subprocess under
``/usr/bin/time`` (wall seconds, peak RSS):

* **floor**: this script with ``--floor``: read the file (``json.loads`` a line at a time,
  or pyarrow a row group at a time), call the package's pure functions the metric
  fixtures call (``strip_citations``, ``exact_match``, ``best_f1``, ``idk_citation``,
  ``token_usage``) on each row, keep the values, and compute the statistics the gates
  read. What a hand-written loop with no plugin costs;
* **bulk**: ``pytest --ragmetrics-mode=bulk`` on the eval (no xdist, no cache).

It prints each pair's figures and the median ratios bulk / floor of wall and of CPU
seconds (user and system: on a machine shared with other work, wall time measures the
others too). ``--check`` also writes
the bulk run's ``--ragmetrics-json`` report once and compares its means and sums with the
floor's, so the two commands are shown to compute the same numbers::

    .venv/bin/python benchmarks/bulk_floor.py 1000000 --rounds 3 --check
    .venv/bin/python benchmarks/bulk_floor.py 1000000 --rounds 3 --format parquet

Nothing is asserted on a time; the figures are for reading (docs/performance.md, "Bulk
mode against the floor").
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bulk_memory import write_project


def floor(path: Path) -> dict[str, float]:
    """The direct loop: each row's values from the package's pure functions, then the
    means, sums and 95th percentile the eval's gates read."""
    import numpy as np

    from pytest_ragmetrics.metrics import best_f1, exact_match, idk_citation, token_usage
    from pytest_ragmetrics.text.citations import strip_citations

    em: list[float] = []
    f1: list[float] = []
    idk: list[float] = []
    tokens: list[float] = []

    def score(row: dict[str, Any]) -> None:
        answer, gold = row["answer"], row["gold"]
        claim = strip_citations(answer)
        em.append(exact_match(claim, gold))
        f1.append(best_f1(claim, gold).score)
        ids = [context["doc_id"] for context in row["contexts"]]
        idk.append(idk_citation(answer, ids).score)
        tokens.append(float(token_usage(row["tokens"]).total))

    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                score(json.loads(line))
    else:
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches():
            for row in batch.to_pylist():
                score(row)
    return {
        "rows": len(em),
        "em.mean": math.fsum(em) / len(em),
        "f1.mean": math.fsum(f1) / len(f1),
        "idk_citation.sum": math.fsum(idk),
        "tokens.mean": math.fsum(tokens) / len(tokens),
        "tokens.p95": float(np.percentile(tokens, 95)),
    }


def timed(command: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user and system), peak RSS in MB and stdout of
    ``command``; a failed command stops the benchmark, showing its output."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e %U %S %M", *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    seconds, user, system, kilobytes = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), float(user) + float(system), int(kilobytes) / 1024, done.stdout


BULK = [
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "--ragmetrics-mode=bulk",
    "--ragmetrics-no-cache",
]


def check(folder: Path, expected: dict[str, float]) -> None:
    """Run the bulk eval once more with its JSON report and compare the floor's figures
    with the report's statistics."""
    timed([sys.executable, *BULK, "--ragmetrics-json=report.json"], folder)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    (evaluated,) = report["evals"]
    for key, value in expected.items():
        if key == "rows":
            got = evaluated["n"]
        else:
            metric, statistic = key.split(".")
            got = evaluated["metrics"][metric][statistic]
        same = math.isclose(got, value, rel_tol=1e-12, abs_tol=1e-12)
        print(f"check {key}: floor {value!r}, bulk {got!r}: {'same' if same else 'DIFFERENT'}")
        if not same:
            sys.exit("the floor and the bulk eval computed different numbers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, help="dataset size")
    parser.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs")
    parser.add_argument("--check", action="store_true", help="compare the numbers too")
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # the floor's own run
    args = parser.parse_args()
    if args.floor is not None:
        print(json.dumps(floor(args.floor)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder, args.rows, args.format)
        data = folder / f"rows.{args.format}"
        ratios, cpu_ratios, floors = [], [], []
        for round_ in range(args.rounds):
            floor_s, floor_cpu, floor_mb, out = timed(
                [sys.executable, __file__, str(args.rows), "--floor", str(data)], folder
            )
            floors.append(json.loads(out))
            bulk_s, bulk_cpu, bulk_mb, _ = timed([sys.executable, *BULK], folder)
            ratios.append(bulk_s / floor_s)
            cpu_ratios.append(bulk_cpu / floor_cpu)
            print(
                json.dumps(
                    {
                        "round": round_ + 1,
                        "rows": args.rows,
                        "format": args.format,
                        "floor_s": floor_s,
                        "floor_cpu_s": round(floor_cpu, 2),
                        "floor_peak_mb": round(floor_mb, 1),
                        "bulk_s": bulk_s,
                        "bulk_cpu_s": round(bulk_cpu, 2),
                        "bulk_peak_mb": round(bulk_mb, 1),
                        "bulk/floor": round(bulk_s / floor_s, 2),
                        "bulk/floor cpu": round(bulk_cpu / floor_cpu, 2),
                    }
                ),
                flush=True,
            )
        print(
            f"median bulk/floor over {args.rounds} pair(s): wall {statistics.median(ratios):.2f}, "
            f"cpu {statistics.median(cpu_ratios):.2f}"
        )
        if args.check:
            check(folder, floors[0])


if __name__ == "__main__":
    main()
