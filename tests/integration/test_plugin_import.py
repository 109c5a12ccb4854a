"""Importing the plugin, as every pytest run does, leaves the heavy modules for later.

pytest imports the entry point of ``[project.entry-points.pytest11]`` in every run of every
project the plugin is installed in, and the run registers the fixtures' modules it names
(``FIXTURE_MODULES``) when it is configured. They declare the options, the hooks and the
metric fixtures; numpy, the embedding model's libraries, the judge's HTTP client and the
metrics' separate implementation modules are imported by the code that computes, and the
run's session, results, gates and reports by the hooks that need them. A fresh
interpreter is the point here: the test process has imported everything long ago. The
time it takes is measured by ``benchmarks/plugin_import.py``, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest_ragmetrics
from pytest_ragmetrics.plugin.hooks import FIXTURE_MODULES

# The entry point and the modules every run registers from it.
ENTRY_POINTS = ("pytest_ragmetrics.plugin.hooks", *FIXTURE_MODULES.values())

# What no entry point may import: the numeric and model libraries, the judge's network
# stack, and the plugin's own modules that compute (the metric families' modules hold the
# declarations the fixtures are generated from, and are imported; these hold only math or
# machinery) or that run, finish and report a run.
NOT_ON_IMPORT = (
    "numpy",
    "torch",
    "sentence_transformers",
    "faiss",
    "rapidfuzz",
    "pyarrow",
    "sqlalchemy",
    "psycopg",
    "filelock",
    "http.client",
    "ssl",
    "sqlite3",
    "umap",
    "numba",
    "pytest_ragmetrics.metrics.space.geometry",
    "pytest_ragmetrics.metrics.space.projection",
    "pytest_ragmetrics.metrics.trust.suite",
    "pytest_ragmetrics.metrics.trust.judges",
    "pytest_ragmetrics.metrics.trust.refusal",
    "pytest_ragmetrics.metrics.rouge_tokenizer",
    "pytest_ragmetrics.judge.client",
    "pytest_ragmetrics.judge.verdicts",
    "pytest_ragmetrics.data.parquet",
    "pytest_ragmetrics.data.sql",
    "pytest_ragmetrics.embeddings.model",
    "pytest_ragmetrics.embeddings.cache",
    "pytest_ragmetrics.metrics.hooks",
    "pytest_ragmetrics.live.system",
    "pytest_ragmetrics.live.cache",
    "pytest_ragmetrics.config.thresholds",
    "pytest_ragmetrics.plugin.session",
    "pytest_ragmetrics.plugin.collect",
    "pytest_ragmetrics.plugin.finish",
    "pytest_ragmetrics.inference.evidence",
    "pytest_ragmetrics.inference.resample",
    "pytest_ragmetrics.results.summary",
    "pytest_ragmetrics.results.history",
    "pytest_ragmetrics.gates.evaluate",
    "pytest_ragmetrics.reports.document",
    "pytest_ragmetrics.reports.html",
)

# One row, its numbers by hand: the answer is the gold, so EM = F1 = 1; "How many" asks
# for a count and "Two" has no digits, so the finalizer keeps the whole answer and F1
# (short) = 1; of d1, d2 only d2 is relevant (grade 1), so nDCG@2 = (1 / log2(3)) /
# (1 / log2(2)) = 1 / log2(3).
ROW = {
    "id": "q1",
    "question": "How many moons does Mars have?",
    "answer": "Two",
    "gold": ["Two"],
    "retrieved": ["d1", "d2"],
    "relevant": {"d2": 1},
}
EVAL = """
import math

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_row(row, em, f1, f1_short, ndcg):
    assert em(row) == 1.0
    assert f1(row) == 1.0
    assert f1_short(row) == 1.0
    assert ndcg(row, k=2) == pytest.approx(1 / math.log2(3))
"""

# Imports the entry points, notes what they loaded, then runs the eval in the same process.
SCRIPT = """
import json, sys
import pytest
{imports}
loaded = sorted(name for name in {watched!r} if name in sys.modules)
status = pytest.main([{eval!r}, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"])
print(json.dumps({{"loaded": loaded, "status": int(status), "numpy": "numpy" in sys.modules}}))
"""


def _run(tmp_path: Path) -> dict[str, object]:
    (tmp_path / "rows.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    eval_file = tmp_path / "test_eval.py"
    eval_file.write_text(textwrap.dedent(EVAL), encoding="utf-8")
    script = SCRIPT.format(
        imports="\n".join(f"import {name}" for name in ENTRY_POINTS),
        watched=NOT_ON_IMPORT,
        eval=str(eval_file),
    )
    # The package under test, first on the path, whatever is installed.
    package_root = str(Path(pytest_ragmetrics.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_entry_points_import_nothing_heavy_and_a_run_computes_after(tmp_path: Path) -> None:
    result = _run(tmp_path)
    assert result["loaded"] == [], f"importing the plugin imported {result['loaded']}"
    assert result["status"] == 0, "the eval run after the import failed (its output is above)"
    # nDCG is computed with numpy: imported by the run, on first use.
    assert result["numpy"] is True


def test_finishing_a_run_that_compares_nothing_needs_no_numpy() -> None:
    """The end of a run (summaries, gates, reports) imports numpy only to compute the
    statistics of a comparison (pytest_ragmetrics.inference), on first use."""
    modules = (
        "pytest_ragmetrics.plugin.finish",
        "pytest_ragmetrics.gates.evaluate",
        "pytest_ragmetrics.reports.document",
        "pytest_ragmetrics.reports.terminal",
        "pytest_ragmetrics.reports.markdown",
    )
    script = "import sys\n" + "".join(f"import {name}\n" for name in modules)
    script += "print('numpy' in sys.modules)"
    package_root = str(Path(pytest_ragmetrics.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
