"""Wall time and peak memory of one deterministic eval in row mode and in bulk mode.

Writes a synthetic dataset of N rows (answers, golds, a cited context, token counts; no
embedding metric, so no model is loaded), an eval taking ``em``, ``f1``, ``idk_citation``
and ``tokens``, and gates on them, then runs ``pytest`` on it in a subprocess per mode
under ``/usr/bin/time`` (wall seconds and peak RSS of the whole pytest process, which
without xdist is the controller). Nothing is asserted: the figures are for reading
(docs/performance.md, "Bulk mode")::

    .venv/bin/python benchmarks/bulk_memory.py 200000 --modes row bulk
    .venv/bin/python benchmarks/bulk_memory.py 20000 200000 --modes bulk

Bytes per row are the slope between two sizes of the same mode: what each further row
costs, without the interpreter, pytest and the plugin that every run pays once.
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

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_answers(row, em, f1, idk_citation, tokens):
    assert idk_citation(row) == 0
    em(row)
    f1(row)
    tokens(row)
"""

GATES = """
[gates]
"idk_citation.sum" = "== 0"
"errors.sum" = "== 0"
"f1.mean" = ">= 0.5"
"tokens.p95" = "<= 500"
"""

CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def write_project(folder: Path, rows: int) -> None:
    """The eval, its gates and ``rows`` deterministic rows (one in eight answers wrong)."""
    (folder / "test_bulk_eval.py").write_text(EVAL, encoding="utf-8")
    (folder / "thresholds.toml").write_text(GATES, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as out:
        for i in range(rows):
            gold = CITIES[i % len(CITIES)]
            answer = CITIES[(i + (i % 8 == 0)) % len(CITIES)]
            row = {
                "id": f"q{i:07d}",
                "question": f"Which city is number {i}?",
                "answer": f"{answer} [CIT:d{i}].",
                "gold": [gold],
                "contexts": [{"doc_id": f"d{i}", "text": f"{gold} is the city of row {i}."}],
                "tokens": 100 + i % 300,
            }
            out.write(json.dumps(row) + "\n")


def measure(folder: Path, mode: str) -> dict[str, float]:
    """Run the eval in ``mode``: wall seconds, peak RSS in MB, and pytest's exit status."""
    command = [
        "/usr/bin/time",
        "-f",
        "%e %M",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        f"--ragmetrics-mode={mode}",
        "--ragmetrics-no-cache",
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    seconds, kilobytes = done.stderr.strip().splitlines()[-1].split()
    return {"seconds": float(seconds), "peak_mb": int(kilobytes) / 1024, "exit": done.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="+", help="dataset sizes to run")
    parser.add_argument("--modes", nargs="+", default=["row", "bulk"], choices=["row", "bulk"])
    args = parser.parse_args()
    results = []
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            write_project(Path(tmp), rows)
            for mode in args.modes:
                figures = {"rows": rows, "mode": mode, **measure(Path(tmp), mode)}
                print(json.dumps(figures), flush=True)
                results.append(figures)
    for mode in args.modes:
        runs = sorted((r for r in results if r["mode"] == mode), key=lambda r: r["rows"])
        if len(runs) >= 2:
            small, large = runs[0], runs[-1]
            grown = (large["peak_mb"] - small["peak_mb"]) * 2**20
            per_row = grown / (large["rows"] - small["rows"])
            print(f"{mode}: {per_row:,.0f} bytes of peak RSS per further row")


if __name__ == "__main__":
    main()
