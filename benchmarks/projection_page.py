"""How large the picture of an eval's embedding space makes its reports.

One pytest run, in a fresh subprocess, of a synthetic eval whose rows each hold a
question, an answer and one context of their own (``random.Random(0)``; every text 120 to
200 characters, as long as or longer than real questions and answers, so the figures are
on the heavy side), with ``POINTS / 3`` rows, rounded up: one dataset-level test computes
``embedding_space`` over the contexts, and the run writes the HTML and JSON reports with
``--ragmetrics-projection-limit POINTS``, so POINTS points are drawn. The embedding model
is the packaged one; the texts are encoded into a new cache of the run's own.

The script prints the size of the HTML page (as written and gzipped, as a CI artifact
store or a web server would send it) and of the JSON report, and, for reference, the
same with the picture left out of the JSON (its ``projection``). Nothing is asserted:
the figures are for reading (docs/reports.md, "How many points")::

    .venv/bin/python benchmarks/projection_page.py 5000 3000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_ragmetrics.reports.write import json_text

WORDS = [
    *("river", "city", "museum", "bridge", "harbour", "island", "festival", "scholar"),
    *("valley", "mountain", "treaty", "empire", "railway", "canal", "cathedral"),
    *("library", "market", "garden", "forest", "lake", "engine", "orbit", "kitten"),
    *("tax", "invoice", "protein", "glacier", "violin", "harvest", "printer"),
]

EVAL_MODULE = """\
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_space(rows, embedding_space):
    embedding_space(rows, field="contexts")
"""


def text(rng: random.Random, end: str) -> str:
    """A sentence of 120 to 200 characters from ``WORDS``."""
    length = rng.randint(120, 200)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < length:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize()[: length - 1] + end


def write_eval(directory: Path, rows: int) -> None:
    rng = random.Random(0)
    lines = []
    for i in range(rows):
        row = {
            "id": f"q{i:05d}",
            "question": text(rng, "?"),
            "answer": text(rng, "."),
            "contexts": [{"doc_id": f"doc-{i:05d}", "text": text(rng, ".")}],
        }
        lines.append(json.dumps(row) + "\n")
    (directory / "rows.jsonl").write_text("".join(lines), encoding="utf-8")
    (directory / "test_space.py").write_text(EVAL_MODULE, encoding="utf-8")
    (directory / "thresholds.toml").write_text("", encoding="utf-8")
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def measure(points: int) -> tuple[int, int, int, int]:
    """HTML bytes, HTML gzipped bytes, JSON bytes, JSON bytes without the picture."""
    with tempfile.TemporaryDirectory(prefix="projection-page-") as tmp:
        directory = Path(tmp)
        write_eval(directory, -(-points // 3))
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        command = [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"),
            f"--ragmetrics-cache-dir={directory / 'cache'}",
            f"--ragmetrics-projection-limit={points}",
            "--ragmetrics-html=report.html",
            "--ragmetrics-json=report.json",
        ]
        done = subprocess.run(
            command, cwd=directory, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"pytest did not pass:\n{done.stdout[-3000:]}{done.stderr}")
        page = (directory / "report.html").read_bytes()
        report = (directory / "report.json").read_bytes()
        document = json.loads(report)
        drawn = len(document["evals"][0]["projection"]["points"])
        if drawn != points:
            raise SystemExit(f"the picture drew {drawn} points, not {points}")
        for entry in document["evals"]:
            entry.pop("projection", None)
        without = json_text(document).encode("utf-8")
        return len(page), len(gzip.compress(page)), len(report), len(without)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("points", nargs="+", type=int, help="points drawn (at least 3)")
    args = parser.parse_args()
    print(f"{'points':>7} {'HTML KB':>9} {'gzipped KB':>11} {'JSON KB':>9} {'w/o picture':>12}")
    for points in args.points:
        html, zipped, report, without = measure(points)
        print(
            f"{points:>7} {html / 1000:>9.0f} {zipped / 1000:>11.0f} "
            f"{report / 1000:>9.0f} {without / 1000:>12.0f}"
        )


if __name__ == "__main__":
    main()
