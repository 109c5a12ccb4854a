"""What a row costs the pytest process on the Ray engine: its own CPU time, not Ray's.

However large the cluster, each row costs the pytest process something (scanning the
dataset at collection, sending the row or its position out, taking its record back,
aggregating it, reporting it): that cost, not the cluster, bounds a run (docs/scale.md).
This writes a deterministic eval taking ``em``, ``f1``, ``idk_citation`` and ``tokens`` (no
embedding: no model load to drown the figure) over ``--rows`` rows, runs it on a local Ray
with ``--ragmetrics-limit`` at two sizes, and reads the pytest process's own CPU seconds
(``time.process_time()`` at the end of the run, which leaves out Ray's worker processes).
The difference between the two sizes, divided by the difference in rows, is the cost of
one more row; the fixed costs (imports, starting Ray) cancel. Nothing is asserted: the
figures are for reading, and timings on a shared machine are noisy (run it twice)::

    .venv/bin/python benchmarks/ray_pytest_cpu.py --small 4000 --large 40000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl", batch_size=10000)


def test_answers(row, em, f1, idk_citation, tokens):
    em(row); idk_citation(row); tokens(row); f1(row)
"""

# Prints the pytest process's own CPU seconds when the run ends.
CONFTEST = """
import time


def pytest_unconfigure(config):
    print(f"\\nPYTEST-PROCESS-CPU {time.process_time():.3f}")
"""

CITIES = ["Paris", "Rome", "Berlin", "Madrid"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q"]


def write_project(folder: Path, rows: int) -> None:
    """The eval and ``rows`` rows, every ninth answering the wrong city."""
    (folder / "test_eval.py").write_text(EVAL, encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (folder / "thresholds.toml").write_text('[gates]\n"f1.mean" = ">= 0.3"\n', encoding="utf-8")
    (folder / "tox.ini").write_text("[pytest]\n", encoding="utf-8")
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as out:
        for i in range(rows):
            city = CITIES[i % 4]
            row = {
                "id": f"q{i:06d}",
                "question": f"Which city is number {i}?",
                "answer": f"{city} is the city [CIT:d{i % 4}].",
                "gold": [CITIES[(i + (i % 9 == 0)) % 4]],
                "contexts": [{"doc_id": f"d{i % 4}", "text": f"{city} is a city."}],
                "tokens": 100 + i % 7,
            }
            out.write(json.dumps(row) + "\n")


def pytest_cpu(folder: Path, limit: int) -> float:
    """The pytest process's own CPU seconds for a run of the first ``limit`` rows."""
    done = subprocess.run(
        [*PYTEST, "--ragmetrics-engine=ray", f"--ragmetrics-limit={limit}"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    marked = [line for line in done.stdout.splitlines() if line.startswith("PYTEST-PROCESS-CPU")]
    if not marked:
        raise SystemExit(f"the run of {limit} rows printed no CPU time:\n{done.stdout[-2000:]}")
    return float(marked[-1].split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=4000)
    parser.add_argument("--large", type=int, default=40000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        write_project(Path(folder), args.large)
        small = pytest_cpu(Path(folder), args.small)
        large = pytest_cpu(Path(folder), args.large)
    per_row = (large - small) / (args.large - args.small) * 1e6
    print(
        f"pytest process CPU: {small:.2f} s for {args.small} rows, {large:.2f} s for {args.large}"
    )
    print(f"per further row: {per_row:.0f} µs")


if __name__ == "__main__":
    main()
