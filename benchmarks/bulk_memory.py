"""Wall time and peak memory of one deterministic eval in row mode and in bulk mode.

Writes a synthetic dataset of N rows (answers, golds, a cited context, token counts; no
embedding metric, so no model is loaded) as JSONL or Parquet (``--format``), an eval
taking ``em``, ``f1``, ``idk_citation`` and ``tokens``, and gates on them, then runs
``pytest`` on it in a subprocess per mode under ``/usr/bin/time`` (wall seconds, CPU
seconds and peak RSS of the whole pytest process, which without xdist is the
controller). Each run's line gives pytest's exit status and its gate summary
(``Gates: 4 passed, ...``): a run whose gates were not evaluated says so. Nothing is
asserted: the figures are for reading (docs/performance.md, "Bulk mode")::

    .venv/bin/python benchmarks/bulk_memory.py 200000 1000000 --modes row bulk \
        --row-mode-max 200000
    .venv/bin/python benchmarks/bulk_memory.py 200000 1000000 --modes bulk --format parquet

``--baseline`` first stores the eval's baseline (a run with
``--ragmetrics-update-baseline``, not measured) and adds two gates against it
(``BASELINE_GATES``), so the measured run reads the stored rows and pairs its own with
them::

    .venv/bin/python benchmarks/bulk_memory.py 200000 1000000 --modes bulk --baseline

``--row-mode-max`` leaves row mode out of the larger sizes (a million rows in row mode
would need some 13 GB). ``--json`` also writes the ``--ragmetrics-json`` report, so its
cost is in the figures. Each run also gives ``peak_mb_before_reports``: the process's
peak RSS when the session finishes, after the rows were gathered, summarised and gated
and before any report is built (read by a ``conftest.py`` of the project). Bytes per
row are the slope between two sizes of the same mode:
what each further row costs, without the interpreter, pytest and the plugin that every
run pays once.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.{suffix}")


def test_answers(row, em, f1, idk_citation, tokens):
    assert idk_citation(row) == 0
    em(row)
    f1(row)
    tokens(row)
"""

# The peak RSS (in KB on Linux) when the session finishes, before the reports are built.
CONFTEST = """
import resource

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open("peak_before_reports.txt", "w") as out:
        out.write(str(peak))
"""

GATES = """
[gates]
"idk_citation.sum" = "== 0"
"errors.sum" = "== 0"
"f1.mean" = ">= 0.5"
"tokens.p95" = "<= 500"
"""

# Gates that pair each row with the stored baseline's (``--baseline``).
BASELINE_GATES = """
"em.mean" = ">= baseline - 0.01"
"tokens.mean" = "<= 1.2x baseline"
"""

# Rows per Parquet row group: the writer holds one group at a time.
PARQUET_GROUP = 50_000
CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def synthetic_rows(rows: int) -> Iterator[dict[str, Any]]:
    """``rows`` deterministic rows; one in eight answers names the wrong city."""
    for i in range(rows):
        gold = CITIES[i % len(CITIES)]
        answer = CITIES[(i + (i % 8 == 0)) % len(CITIES)]
        yield {
            "id": f"q{i:07d}",
            "question": f"Which city is number {i}?",
            "answer": f"{answer} [CIT:d{i}].",
            "gold": [gold],
            "contexts": [{"doc_id": f"d{i}", "text": f"{gold} is the city of row {i}."}],
            "tokens": 100 + i % 300,
        }


def write_parquet(path: Path, rows: int) -> None:
    """The rows as Parquet, written a row group of ``PARQUET_GROUP`` rows at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    made = synthetic_rows(rows)
    schema: Any = None
    writer: Any = None
    try:
        while group := list(itertools.islice(made, PARQUET_GROUP)):
            table = pa.Table.from_pylist(group, schema=schema)
            if writer is None:
                schema = table.schema
                writer = pq.ParquetWriter(path, schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def write_project(folder: Path, rows: int, fmt: str = "jsonl") -> None:
    """The eval, its gates and ``rows`` deterministic rows in ``fmt`` (jsonl or parquet)."""
    (folder / "test_bulk_eval.py").write_text(EVAL.replace("{suffix}", fmt), encoding="utf-8")
    (folder / "thresholds.toml").write_text(GATES, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    if fmt == "parquet":
        write_parquet(folder / "rows.parquet", rows)
        return
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as out:
        for row in synthetic_rows(rows):
            out.write(json.dumps(row) + "\n")


def store_baseline(folder: Path, mode: str) -> None:
    """Store the eval's baseline, then gate the measured runs against it."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         f"--ragmetrics-mode={mode}", "--ragmetrics-no-cache", "--ragmetrics-update-baseline"],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"storing the baseline failed:\n{done.stdout}\n{done.stderr}")
    with (folder / "thresholds.toml").open("a", encoding="utf-8") as gates:
        gates.write(BASELINE_GATES)


def measure(folder: Path, mode: str, report: bool = False) -> dict[str, Any]:
    """Run the eval in ``mode``: wall seconds, CPU seconds (user and system), peak RSS in
    MB, pytest's exit status and its gate summary (``None`` when the run printed none:
    its gates did not run)."""
    command = [
        "/usr/bin/time",
        "-f",
        "%e %U %S %M",
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
        *(["--ragmetrics-json=report.json"] if report else []),
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    seconds, user, system, kilobytes = done.stderr.strip().splitlines()[-1].split()
    gates = re.findall(r"^Gates: (.*)$", done.stdout, re.MULTILINE)
    before_reports = int((folder / "peak_before_reports.txt").read_text(encoding="utf-8"))
    return {
        "peak_mb_before_reports": round(before_reports / 1024, 1),
        "seconds": float(seconds),
        "cpu_seconds": round(float(user) + float(system), 2),
        "peak_mb": int(kilobytes) / 1024,
        "exit": done.returncode,
        "gates": gates[-1] if gates else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="+", help="dataset sizes to run")
    parser.add_argument("--modes", nargs="+", default=["row", "bulk"], choices=["row", "bulk"])
    parser.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    parser.add_argument(
        "--row-mode-max", type=int, default=None, help="run row mode only up to this size"
    )
    parser.add_argument("--json", action="store_true", help="also write the JSON report")
    parser.add_argument(
        "--baseline", action="store_true", help="gate against a stored baseline of the rows"
    )
    args = parser.parse_args()
    results = []
    for rows in args.rows:
        modes = [
            mode
            for mode in args.modes
            if mode == "bulk" or args.row_mode_max is None or rows <= args.row_mode_max
        ]
        with tempfile.TemporaryDirectory() as tmp:
            write_project(Path(tmp), rows, args.format)
            if args.baseline:
                store_baseline(Path(tmp), modes[-1])
            for mode in modes:
                figures = {
                    "rows": rows,
                    "mode": mode,
                    "format": args.format,
                    "baseline": args.baseline,
                    **measure(Path(tmp), mode, args.json),
                }
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
