"""A bulk-mode eval against the floor: the direct loop over the same metric functions.

Writes the deterministic dataset and eval of ``bulk_memory.py`` (``em``, ``f1``,
``idk_citation``, ``tokens``, four gates; no model loaded) as JSONL or Parquet, then times,
round by round, three whole commands on the same file, each in a subprocess under
``/usr/bin/time`` (wall seconds, peak RSS):

* **floor**: this script with ``--floor``: read the file (``json.loads`` a line at a time,
  or pyarrow a row group at a time), call the package's pure functions the metric
  fixtures call (``strip_citations``, ``exact_match``, ``best_f1``, ``idk_citation``,
  ``token_usage``) on each row, keep the values, and compute the statistics the gates
  read. What a hand-written loop with no plugin costs;
* **declared**: this script with ``--declared``: the same reading, each row a ``Row``, and
  the eval's four metric fixtures' declarations computed on it as a fixture computes
  them (``MetricSpec.compute`` with one ``MetricContext`` a row, each result checked by
  ``check_measured``), no pytest and no plugin: the least any bulk path built on the
  metric declarations costs, whatever it does besides;
* **bulk**: ``pytest --ragmetrics-mode=bulk`` on the eval (no xdist, no cache).

It prints each round's figures and the median ratios bulk / floor (of wall and of CPU
seconds: user and system; on a machine shared with other work, wall time measures the
others too) and declared / floor (of CPU seconds). ``--check`` also writes
the bulk run's ``--ragmetrics-json`` report once and compares its means and sums with the
floor's (the declared loop's numbers are compared with the floor's in every round), so
the commands are shown to compute the same numbers::

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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bulk_memory import write_project


def floor(path: Path) -> dict[str, float]:
    """The direct loop: each row's values from the package's pure functions, then the
    means, sums and 95th percentile the eval's gates read."""
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

    for row in _rows(path):
        score(row)
    return _statistics(em, f1, idk, tokens)


def declared(path: Path) -> dict[str, float]:
    """The rows through the metric declarations the eval's fixtures compute, as a fixture
    computes them, in one loop: no test function, recorder, payload or store."""
    from pytest_ragmetrics.config.thresholds import Settings
    from pytest_ragmetrics.data.row import Row
    from pytest_ragmetrics.metrics.base import MetricContext
    from pytest_ragmetrics.metrics.catalog import in_force
    from pytest_ragmetrics.metrics.values import check_measured

    fixtures = in_force().fixtures
    specs = [fixtures[name] for name in ("idk_citation", "em", "f1", "tokens")]
    settings = Settings()
    kept: dict[str, list[float]] = {spec.fixture: [] for spec in specs}

    def no_embedding(texts: Any) -> Any:
        raise AssertionError("no metric of this eval embeds")

    for line, data in enumerate(_rows(path), 1):
        row = Row(data["id"], path.name, line, line - 1, data)
        context = MetricContext(settings, no_embedding, {}, None)
        for spec in specs:
            measured = spec.compute(row, context)
            check_measured(spec, measured)
            kept[spec.fixture].append(measured.values[spec.fixture])
    return _statistics(kept["em"], kept["f1"], kept["idk_citation"], kept["tokens"])


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """The file's rows as dicts: ``json.loads`` a line at a time, or pyarrow a row group
    at a time."""
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)
        return
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches():
        yield from batch.to_pylist()


def _statistics(
    em: list[float], f1: list[float], idk: list[float], tokens: list[float]
) -> dict[str, float]:
    """The means, sums and 95th percentile the eval's gates read."""
    import numpy as np

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
    parser.add_argument("--declared", type=Path, help=argparse.SUPPRESS)  # and the declared's
    args = parser.parse_args()
    if args.floor is not None:
        print(json.dumps(floor(args.floor)))
        return
    if args.declared is not None:
        print(json.dumps(declared(args.declared)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder, args.rows, args.format)
        data = folder / f"rows.{args.format}"
        ratios: dict[str, list[float]] = {"bulk": [], "bulk cpu": [], "declared cpu": []}
        floors = []
        for round_ in range(args.rounds):
            floor_s, floor_cpu, floor_mb, out = timed(
                [sys.executable, __file__, str(args.rows), "--floor", str(data)], folder
            )
            floors.append(json.loads(out))
            _, declared_cpu, _, out = timed(
                [sys.executable, __file__, str(args.rows), "--declared", str(data)], folder
            )
            if json.loads(out) != floors[-1]:
                sys.exit(f"the declared loop computed other numbers: {out} != {floors[-1]}")
            bulk_s, bulk_cpu, bulk_mb, _ = timed([sys.executable, *BULK], folder)
            ratios["bulk"].append(bulk_s / floor_s)
            ratios["bulk cpu"].append(bulk_cpu / floor_cpu)
            ratios["declared cpu"].append(declared_cpu / floor_cpu)
            print(
                json.dumps(
                    {
                        "round": round_ + 1,
                        "rows": args.rows,
                        "format": args.format,
                        "floor_s": floor_s,
                        "floor_cpu_s": round(floor_cpu, 2),
                        "floor_peak_mb": round(floor_mb, 1),
                        "declared_cpu_s": round(declared_cpu, 2),
                        "bulk_s": bulk_s,
                        "bulk_cpu_s": round(bulk_cpu, 2),
                        "bulk_peak_mb": round(bulk_mb, 1),
                        "bulk/floor": round(bulk_s / floor_s, 2),
                        "bulk/floor cpu": round(bulk_cpu / floor_cpu, 2),
                        "declared/floor cpu": round(declared_cpu / floor_cpu, 2),
                    }
                ),
                flush=True,
            )
        median = {name: statistics.median(found) for name, found in ratios.items()}
        print(
            f"median over {args.rounds} round(s): bulk/floor wall {median['bulk']:.2f}, "
            f"cpu {median['bulk cpu']:.2f}; declared/floor cpu {median['declared cpu']:.2f}"
        )
        if args.check:
            check(folder, floors[0])


if __name__ == "__main__":
    main()
