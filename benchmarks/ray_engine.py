"""Bulk mode on the local engine vs the Ray engine, against encoding the texts directly.

Writes a synthetic eval of N rows taking ``overlap`` (each answer's cited sentences
embedded against their contexts) and ``f1``, ``tokens``, ``idk_citation``, then runs, in one
command so that the ratios come from one run on the same machine:

1. **floor**: the texts the eval embeds (the plugin's own listing of them), encoded with
   all-MiniLM-L6-v2 in this process exactly as the plugin chunks them, nothing else: the
   least any engine can spend;
2. **local**: ``pytest --ragmetrics-mode=bulk --ragmetrics-no-cache`` (cold cache);
3. **ray**: ``pytest --ragmetrics-engine=ray --ragmetrics-no-cache`` (cold cache), which
   starts a local Ray with the machine's CPUs.

Production logs repeat themselves (the same documents retrieved, the same answers to the
same questions): the rows draw their answers and contexts from ``--unique`` distinct
texts each, which sets how much of the run is encoding. Wall seconds and peak RSS come from
``/usr/bin/time`` (Ray's worker processes are not in the pytest process's RSS). Nothing is
asserted: the figures are for reading (docs/scale.md)::

    .venv/bin/python benchmarks/ray_engine.py 100000 --unique 5000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl", batch_size=BATCH)


def test_answers(row, f1, idk_citation, tokens, overlap):
    assert idk_citation(row) == 0
    f1(row)
    tokens(row)
    overlap(row)
"""

GATES = """
[gates]
"idk_citation.sum" = "== 0"
"errors.sum" = "== 0"
"overlap.mean" = ">= 0"
"""

CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def write_project(folder: Path, rows: int, unique: int, batch: int) -> None:
    """The eval and ``rows`` rows whose answers and contexts come from ``unique`` each."""
    (folder / "test_ray_eval.py").write_text(EVAL.replace("BATCH", str(batch)), encoding="utf-8")
    (folder / "thresholds.toml").write_text(GATES, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as out:
        for i in range(rows):
            k = (i * 7919) % unique  # spreads the repeats over the file
            city = CITIES[k % len(CITIES)]
            row = {
                "id": f"q{i:07d}",
                "question": f"Where is landmark {k}?",
                "answer": f"Landmark {k} stands in {city} [CIT:d{k}].",
                "gold": [city],
                "contexts": [
                    {"doc_id": f"d{k}", "text": f"Landmark {k} is a monument in {city}, built {k}."}
                ],
                "tokens": 100 + i % 300,
            }
            out.write(json.dumps(row) + "\n")


def floor(folder: Path) -> dict[str, float]:
    """Encode the eval's texts as the plugin chunks them, with nothing around it."""
    from pytest_ragmetrics.config.thresholds import Settings
    from pytest_ragmetrics.data.dataset import load_dataset
    from pytest_ragmetrics.embeddings.model import PACKAGED_MODEL, embedder_for
    from pytest_ragmetrics.embeddings.prepare import ENCODE_CHUNK
    from pytest_ragmetrics.metrics.catalog import FIXTURES

    settings = Settings()
    listing = FIXTURES["overlap"].texts
    assert listing is not None
    texts: dict[str, None] = {}
    for loaded in load_dataset(folder / "rows.jsonl").rows:
        texts.update(dict.fromkeys(listing(loaded.row, settings)))
    ordered = sorted(texts, key=len, reverse=True)
    embedder = embedder_for(PACKAGED_MODEL)
    embedder.encode(["warm up: import and load the model"])
    started = time.perf_counter()
    for begin in range(0, len(ordered), ENCODE_CHUNK):
        embedder.encode(ordered[begin : begin + ENCODE_CHUNK])
    return {"seconds": time.perf_counter() - started, "texts": len(ordered)}


def run(folder: Path, *options: str) -> dict[str, float]:
    """One pytest run of the eval: wall seconds, peak RSS in MB, exit status."""
    command = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "pytest", "-q"]
    command += ["-p", "no:cacheprovider", "-p", "no:xdist", "--ragmetrics-no-cache", *options]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a local Ray
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    seconds, kilobytes = done.stderr.strip().splitlines()[-1].split()
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
    return {"seconds": float(seconds), "peak_mb": int(kilobytes) / 1024, "exit": done.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, help="rows of the eval")
    parser.add_argument("--unique", type=int, default=5000, help="distinct answers/contexts")
    parser.add_argument("--batch-size", type=int, default=25000, help="rows per bulk item")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder, args.rows, args.unique, args.batch_size)
        figures = {"floor": floor(folder)}
        print(json.dumps({"run": "floor", **figures["floor"]}), flush=True)
        for name, options in (
            ("local", ["--ragmetrics-mode=bulk"]),
            ("ray", ["--ragmetrics-engine=ray"]),
        ):
            figures[name] = run(folder, *options)
            print(json.dumps({"run": name, "rows": args.rows, **figures[name]}), flush=True)
    base = figures["floor"]["seconds"]
    for name in ("local", "ray"):
        print(f"{name}: {figures[name]['seconds'] / base:.2f}x the floor's encode time")
    print(f"ray / local: {figures['ray']['seconds'] / figures['local']['seconds']:.2f}")


if __name__ == "__main__":
    main()
