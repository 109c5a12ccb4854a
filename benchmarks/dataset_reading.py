"""What reading a dataset a batch at a time costs against reading it whole.

Bulk evals scan a dataset at collection (``scan_dataset``: each row's id, line and
system) and read each batch's rows again when it runs (``DatasetReader``); row mode
reads it whole once (``load_dataset``). This times, in one process, the three on the
synthetic rows of ``bulk_memory.py`` (JSONL or Parquet), the reader in batches of 5000
rows, and prints microseconds a row and the ratios to ``load_dataset`` (medians of
``--repeat`` runs, interleaved). Nothing is asserted: the figures are for reading
(docs/performance.md, "Bulk mode")::

    .venv/bin/python benchmarks/dataset_reading.py 100000
    .venv/bin/python benchmarks/dataset_reading.py 100000 --format parquet
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bulk_memory import write_project

from pytest_ragmetrics.data.dataset import DatasetReader, load_dataset, scan_dataset

BATCH = 5000


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _by_batches(path: Path, rows: int) -> None:
    reader = DatasetReader(scan_dataset(path))
    try:
        for start in range(0, rows, BATCH):
            reader.rows(range(start, min(start + BATCH, rows)))
    finally:
        reader.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_project(folder, args.rows, args.format)
        path = folder / f"rows.{args.format}"
        ways: dict[str, Callable[[], object]] = {
            "load_dataset (whole)": lambda: load_dataset(path),
            "scan_dataset (collection)": lambda: scan_dataset(path),
            "scan + read in batches (bulk)": lambda: _by_batches(path, args.rows),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.repeat):
            for name, work in ways.items():
                times[name].append(_seconds(work))
    whole = statistics.median(times["load_dataset (whole)"])
    for name, measured in times.items():
        median = statistics.median(measured)
        per_row = median / args.rows * 1e6
        print(f"{name:32} {per_row:7.1f} µs a row  {median / whole:5.2f}x load_dataset")


if __name__ == "__main__":
    main()
