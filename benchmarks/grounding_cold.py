"""What a cold run of the grounding metrics costs beyond encoding its texts, as whole
processes: ``pytest`` with an empty embedding cache against a script that encodes the
same texts with the same model directly.

Two commands over the rows of ``bench_grounding.py`` (three cited sentences and five
contexts a row, every text distinct), each a fresh process:

``direct``
    a Python script that imports sentence-transformers, loads the packaged
    all-MiniLM-L6-v2 from its directory and encodes the run's unique texts in one
    ``model.encode(texts, batch_size=64)``: the floor any pipeline built on this model
    pays, import and model load included.
``cold``
    ``pytest`` on the eval of ``overlap`` and ``faithfulness`` over the same rows, with a
    new, empty ``--ragmetrics-cache-dir`` each round: collection, the prepare step
    (analysing the answers, encoding every text, storing the vectors, the analyses and
    the similarity set), scoring, the rows as tests, the gates and the summary.

Both run with ``HF_HUB_OFFLINE=1`` and bytecode written and read as in a user's runs (one
unmeasured run of each side first). Each side runs ``--rounds`` times, alternating; the
script prints the medians of wall time, their ratio cold / direct, and the lowest and
highest ratio of one round's pair. Encoding dominates both sides and torch's threads take
every core, so read these figures only from a quiet machine (the load average is
printed). Nothing is asserted (docs/performance.md, "Grounding")::

    .venv/bin/python benchmarks/grounding_cold.py 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_grounding import PYTEST_FLAGS, make_rows, unique_texts, write_workspace

# Encodes the texts of the JSON file named by the first argument, as the reference.
DIRECT = """\
import json, sys
from pathlib import Path

from sentence_transformers import SentenceTransformer

from pytest_ragmetrics.embeddings.model import packaged_model_dir

texts = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
model = SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)
vectors = model.encode(texts, batch_size=64)
assert vectors.shape == (len(texts), 384), vectors.shape
"""

# Not passed on to the runs: a user's runs write and read bytecode, and take no options
# or plugins from the environment.
UNSET = ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def timed(command: list[str], cwd: Path) -> float:
    """Wall seconds of one run of ``command``; a failed run stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=environment(), capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr}")
    return seconds


def measure(rows: int, rounds: int) -> tuple[float, float, list[float]]:
    """Medians of the direct and cold sides over ``rounds`` alternating rounds, after one
    unmeasured run of each; and each round's ratio cold / direct."""
    with tempfile.TemporaryDirectory(prefix="grounding-cold-") as tmp:
        root = Path(tmp)
        data = make_rows(rows)
        eval_dir, _ = write_workspace(root, data)
        texts = root / "texts.json"
        texts.write_text(json.dumps(unique_texts(data)), encoding="utf-8")
        script = root / "direct.py"
        script.write_text(DIRECT, encoding="utf-8")
        direct = [sys.executable, str(script), str(texts)]

        def cold(round_: int) -> list[str]:
            cache = root / f"cache-{round_}"  # a new, empty cache every round
            flags = (*PYTEST_FLAGS, "--ragmetrics-cache-dir", str(cache))
            return [sys.executable, "-m", "pytest", *flags]

        timed(direct, root), timed(cold(-1), eval_dir)
        direct_s, cold_s = [], []
        for round_ in range(rounds):
            direct_s.append(timed(direct, root))
            cold_s.append(timed(cold(round_), eval_dir))
    pairs = [c / d for c, d in zip(cold_s, direct_s, strict=True)]
    return statistics.median(direct_s), statistics.median(cold_s), pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="?", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    direct, cold, pairs = measure(args.rows, args.rounds)
    print(f"{'rows':>6} {'direct s':>9} {'cold s':>8} {'cold/direct':>12} {'pairs':>11}")
    print(
        f"{args.rows:>6} {direct:>9.2f} {cold:>8.2f} {cold / direct:>11.2f}x "
        f"{min(pairs):>5.2f}-{max(pairs):<5.2f}"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
