"""The rows GitHub annotations point at: errored rows first, then failing ones, over every
eval, at most the room the gates leave, and the count of the others."""

from __future__ import annotations

from pathlib import Path

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.plugin.annotate import row_annotations
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize


def _info(name: str) -> EvalInfo:
    return EvalInfo(f"evals/test_{name}.py", f"evals/test_{name}.py", f"{name}.jsonl", "0" * 64, 6)


def test_errored_rows_of_every_eval_come_before_failed_ones_and_the_rest_are_counted(
    tmp_path: Path,
) -> None:
    """Two evals of 4 failed rows then 2 errored rows each, room for 5: the 2 + 2
    errored rows, then the first failed row of the first eval; 12 - 5 = 7 left out."""
    payloads = [
        RowPayload(_info(name), f"{name}{i}", i, {"f1": 0.0}, {}, error, failed=error is None)
        for name in ("a", "b")
        for i in range(6)
        for error in ["boom" if i >= 4 else None]
    ]
    summaries = summarize(payloads, Settings())
    annotations, left = row_annotations(summaries, tmp_path, tmp_path, room=5)
    assert [a.title for a in annotations] == [
        "pytest-ragmetrics: row a4 of evals/test_a.py errored",
        "pytest-ragmetrics: row a5 of evals/test_a.py errored",
        "pytest-ragmetrics: row b4 of evals/test_b.py errored",
        "pytest-ragmetrics: row b5 of evals/test_b.py errored",
        "pytest-ragmetrics: row a0 of evals/test_a.py failed",
    ]
    assert left == 7
    assert row_annotations(summaries, tmp_path, tmp_path, room=0) == ([], 12)
