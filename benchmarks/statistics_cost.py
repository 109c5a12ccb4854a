"""What the statistics of comparisons add to a run: the same eval, gated by 10 comparison
gates against its stored baseline, and by the same 10 gates against fixed numbers.

Writes a synthetic log of N rows (answers, golds, tokens, latencies; no embedding metric,
so no model is loaded), stores its baseline, then changes the log (one answer in eight
differs, tokens and latencies move) and runs the eval twice per round in a subprocess,
in bulk mode: with ``COMPARED`` (every gate ``... baseline``, each computing its paired
interval, p-value and MDE) and with ``FIXED`` (the same metrics and statistics against
numbers, which compute none). The two runs differ only in the gates' evidence, so the
ratio of their wall times is what the statistics cost. Rounds alternate the order of the
two runs; the medians and each round's ratio are printed. Nothing is asserted: the
figures are for reading (docs/performance.md, "Statistics")::

    .venv/bin/python benchmarks/statistics_cost.py 100000 --rounds 3
    .venv/bin/python benchmarks/statistics_cost.py 5000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl", mode="bulk")


def test_answers(row, em, f1, idk_citation, tokens, latency):
    idk_citation(row)
    em(row)
    f1(row)
    tokens(row)
    latency(row)
"""

# Ten comparison gates: means, rates, sums and percentiles, difference and ratio rules.
COMPARED = """
[gates]
"f1.mean" = ">= baseline - 0.2"
"f1.p50" = ">= baseline - 0.2"
"em.rate" = ">= baseline - 0.2 @ 95%"
"idk_citation.sum" = "<= baseline + 5"
"tokens.mean" = "<= 1.2x baseline"
"tokens.p50" = "<= 1.2x baseline"
"tokens.p95" = "<= 1.2x baseline"
"latency_ms.mean" = "<= 1.2x baseline @ 95%"
"latency_ms.p50" = "<= baseline + 100"
"latency_ms.p95" = "<= 1.5x baseline"
"""

# The same metrics and statistics against numbers: no comparison, no evidence.
FIXED = """
[gates]
"f1.mean" = ">= 0"
"f1.p50" = ">= 0"
"em.rate" = ">= 0"
"idk_citation.sum" = ">= 0"
"tokens.mean" = ">= 0"
"tokens.p50" = ">= 0"
"tokens.p95" = ">= 0"
"latency_ms.mean" = ">= 0"
"latency_ms.p50" = ">= 0"
"latency_ms.p95" = ">= 0"
"""

CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def synthetic_rows(rows: int, changed: bool) -> Iterator[dict[str, Any]]:
    """``rows`` deterministic rows; ``changed`` moves one answer in eight, and every
    row's tokens and latency, as a new prompt would."""
    for i in range(rows):
        gold = CITIES[i % len(CITIES)]
        wrong = (i % 8 == 0) != (changed and i % 8 == 3)
        answer = CITIES[(i + wrong) % len(CITIES)]
        yield {
            "id": f"q{i:07d}",
            "question": f"Which city is number {i}?",
            "answer": f"{answer} [CIT:d{i}].",
            "gold": [gold],
            "contexts": [{"doc_id": f"d{i}", "text": f"{gold} is the city of row {i}."}],
            "tokens": 100 + (i * 7919) % 300 + (i % 13 if changed else 0),
            "latency_ms": 200 + (i * 104729) % 900 + (i % 17 if changed else 0),
        }


def write_rows(folder: Path, rows: int, changed: bool) -> None:
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as out:
        for row in synthetic_rows(rows, changed):
            out.write(json.dumps(row) + "\n")


def pytest_run(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    return subprocess.run(
        [*command, "--ragmetrics-no-cache", *options],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )


def prepare(folder: Path, rows: int) -> None:
    """The eval with its baseline stored from the original log, then the changed log."""
    (folder / "test_stats_eval.py").write_text(EVAL, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "thresholds.toml").write_text(COMPARED, encoding="utf-8")
    write_rows(folder, rows, changed=False)
    stored = pytest_run(folder, "--ragmetrics-update-baseline")
    if stored.returncode != 0:
        raise SystemExit(f"storing the baseline failed:\n{stored.stdout[-2000:]}")
    write_rows(folder, rows, changed=True)


def timed(folder: Path, gates: str) -> tuple[float, str]:
    """Wall seconds of one run with ``gates``, and its gate summary."""
    (folder / "thresholds.toml").write_text(gates, encoding="utf-8")
    start = time.perf_counter()
    done = pytest_run(folder)
    seconds = time.perf_counter() - start
    summary = re.findall(r"^Gates: (.*)$", done.stdout, re.MULTILINE)
    if not summary:
        raise SystemExit(f"the run printed no gate summary:\n{done.stdout[-2000:]}")
    return seconds, summary[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, help="rows in the log")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare(folder, args.rows)
        ratios, compared, fixed = [], [], []
        for round_ in range(args.rounds):
            order = [("compared", COMPARED), ("fixed", FIXED)]
            times: dict[str, float] = {}
            for name, gates in order if round_ % 2 == 0 else reversed(order):
                times[name], summary = timed(folder, gates)
                print(f"round {round_ + 1} {name}: {times[name]:.2f} s ({summary})", flush=True)
            compared.append(times["compared"])
            fixed.append(times["fixed"])
            ratios.append(times["compared"] / times["fixed"])
        print(
            json.dumps(
                {
                    "rows": args.rows,
                    "compared_median_s": statistics.median(compared),
                    "fixed_median_s": statistics.median(fixed),
                    "ratio_median": statistics.median(ratios),
                    "ratios": [round(r, 3) for r in ratios],
                }
            )
        )


if __name__ == "__main__":
    main()
