"""What a row test with metric fixtures costs beyond pytest itself, in time and peak memory.

Two pytest runs over the same synthetic rows, each in a fresh subprocess:

``bare``
    one test function parametrized over the rows (each row's dict, its id as the test id,
    read from the JSONL file with ``json``), whose body does nothing: the cost of pytest
    collecting, running and reporting as many items, with pytest-ragmetrics installed but
    unused.
``ours``
    the same rows as a pytest-ragmetrics eval (``@pytest.mark.ragmetrics(dataset=...)``),
    one test per row that takes ``row`` and four deterministic metric fixtures, ``em``,
    ``f1``, ``idk_citation`` and ``tokens``, and calls each: everything the plugin does
    for a row (validation, fixtures, recording, aggregation, gates, the terminal summary),
    with the metric math itself included.

Each row has a question, a one-to-three sentence answer citing a context with
``[CIT:<doc_id>]``, two gold answers and a token count (``random.Random(0)``). One row in
ten answers "I don't know." and cites nothing; one in ten gives its answer, then says it
does not know the rest and cites (``idk_citation`` is 1 there, and such an answer has to
be split into sentences). Both runs use ``-q -p no:cacheprovider -p no:xdist``, with
bytecode written and read as in a user's runs (``PYTHONDONTWRITEBYTECODE`` is removed from
their environment; one unmeasured run of each side writes it first). For each size, each
side runs ``--rounds`` times, alternating; the script prints the medians of wall time and
of peak resident memory (``ru_maxrss`` of the pytest process), the ratios ours / bare of
the medians, and the lowest and highest ratio of one round's pair (how noisy the machine
was). Nothing is asserted: the figures are for reading (docs/performance.md, "Per-row
cost")::

    .venv/bin/python benchmarks/row_overhead.py 10000 50000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVAL_MODULE = """\
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_row(row, em, f1, idk_citation, tokens):
    em(row)
    f1(row)
    idk_citation(row)
    tokens(row)
"""

BARE_MODULE = """\
import json
from pathlib import Path

import pytest

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "rows.jsonl").read_text(encoding="utf-8").splitlines()
]


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_row(row):
    pass
"""

# Runs pytest in this process and prints its exit code and peak resident memory (KiB).
RUNNER = """\
import resource, sys
import pytest
code = pytest.main(sys.argv[1:])
print("ROW-OVERHEAD", int(code), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

WORDS = [
    *("river", "city", "museum", "bridge", "harbour", "island", "festival", "scholar"),
    *("valley", "mountain", "treaty", "empire", "railway", "canal", "cathedral"),
    *("library", "market", "garden", "forest", "lake"),
]


def make_row(index: int, rng: random.Random) -> dict[str, Any]:
    """One synthetic logged answer: deterministic given ``rng``."""
    gold = " ".join(rng.choice(WORDS).title() for _ in range(rng.randint(1, 3)))
    doc = f"doc-{index % 97}"
    if index % 10 == 0:
        answer = "I don't know."
    elif index % 10 == 5:  # says it does not know, and cites: the answer must be split
        answer = f"{gold} [CIT:{doc}]. I don't know the rest [CIT:{doc}]."
    else:
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize()
            for _ in range(rng.randint(1, 3))
        ]
        answer = f"{gold}. " + " ".join(f"{s} [CIT:{doc}]." for s in sentences)
    return {
        "id": f"q{index:06d}",
        "question": f"Which {rng.choice(WORDS)} is it, number {index}?",
        "answer": answer,
        "gold": [gold, gold.lower()],
        "tokens": rng.randint(200, 900),
    }


def write_workspace(root: Path, rows: int) -> tuple[Path, Path]:
    """The eval and bare directories under ``root``, over the same ``rows`` rows."""
    rng = random.Random(0)
    lines = "".join(json.dumps(make_row(i, rng)) + "\n" for i in range(rows))
    directories = (root / "evals", root / "bare")
    for directory, module in zip(directories, (EVAL_MODULE, BARE_MODULE), strict=True):
        directory.mkdir(parents=True)
        (directory / "rows.jsonl").write_text(lines, encoding="utf-8")
        (directory / "test_rows.py").write_text(module, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return directories


# Not passed on to the runs: a user's runs write and read bytecode, and take no options
# or plugins from the environment.
UNSET = ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_kib: int


def run_pytest(directory: Path) -> Run:
    """One pytest run of ``directory`` in a fresh interpreter: wall time and peak memory."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["HF_HUB_OFFLINE"] = "1"
    command = [sys.executable, "-c", RUNNER, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, str(directory)],
        cwd=directory.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    last = done.stdout.strip().splitlines()[-1:] or [""]
    fields = last[0].split()
    if len(fields) != 3 or fields[0] != "ROW-OVERHEAD" or fields[1] != "0":
        raise SystemExit(f"pytest {directory} did not pass:\n{done.stdout[-3000:]}{done.stderr}")
    return Run(seconds, int(fields[2]))


def measure(rows: int, rounds: int) -> tuple[dict[str, Run], list[float]]:
    """Medians of each side over ``rounds`` alternating runs on ``rows`` rows, after one
    unmeasured run of each; and each round's ratio of wall times, ours / bare."""
    with tempfile.TemporaryDirectory(prefix="row-overhead-") as tmp:
        evals, bare = write_workspace(Path(tmp), rows)
        run_pytest(bare), run_pytest(evals)  # bytecode written, files in the page cache
        runs: dict[str, list[Run]] = {"bare": [], "ours": []}
        for _ in range(rounds):
            runs["bare"].append(run_pytest(bare))
            runs["ours"].append(run_pytest(evals))
    medians = {
        side: Run(
            statistics.median(r.seconds for r in side_runs),
            int(statistics.median(r.peak_kib for r in side_runs)),
        )
        for side, side_runs in runs.items()
    }
    pairs = [o.seconds / b.seconds for o, b in zip(runs["ours"], runs["bare"], strict=True)]
    return medians, pairs


WIDTHS = (8, 8, 8, 6, 11, 9, 9, 6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="+", type=int, help="row counts")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    header = ("rows", "bare s", "ours s", "time", "pairs", "bare MiB", "ours MiB", "mem")
    print(" ".join(f"{title:>{width}}" for title, width in zip(header, WIDTHS, strict=True)))
    for rows in args.sizes:
        result, pairs = measure(rows, args.rounds)
        bare, ours = result["bare"], result["ours"]
        print(
            f"{rows:>8} {bare.seconds:>8.2f} {ours.seconds:>8.2f} "
            f"{ours.seconds / bare.seconds:>5.2f}x {min(pairs):>5.2f}-{max(pairs):<5.2f}"
            f"{bare.peak_kib / 1024:>9.1f} {ours.peak_kib / 1024:>9.1f} "
            f"{ours.peak_kib / bare.peak_kib:>5.2f}x"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
