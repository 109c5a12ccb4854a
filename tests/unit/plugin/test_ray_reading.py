"""Which datasets the Ray engine's tasks read themselves (``ray_engine.workers_can_read``):
those in which no row is more than ``READ_AHEAD`` rows past a place a reader can start.
Plain JSONL can start every 1,024 rows (``RESUME_EVERY``); compressed JSONL and CSV only
at their start, so only while they are short."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_ragmetrics.data.dataset import RESUME_EVERY, scan_dataset
from pytest_ragmetrics.plugin.ray_engine import READ_AHEAD, workers_can_read


def _lines(rows: int) -> str:
    return "".join(json.dumps({"id": f"r{i}", "answer": f"a{i}"}) + "\n" for i in range(rows))


def _csv(rows: int) -> str:
    return "id,answer\n" + "".join(f"r{i},a{i}\n" for i in range(rows))


@pytest.mark.parametrize(
    ("name", "rows", "tasks_read"),
    [
        ("rows.jsonl", 3 * READ_AHEAD, True),  # a place to start every RESUME_EVERY rows
        ("rows.jsonl.gz", READ_AHEAD, True),  # read from its start: no row too far
        ("rows.jsonl.gz", READ_AHEAD + 1, False),
        ("rows.csv", READ_AHEAD, True),
        ("rows.csv", READ_AHEAD + 1, False),
    ],
)
def test_tasks_read_a_file_whose_rows_are_near_a_place_to_start(
    tmp_path: Path, name: str, rows: int, tasks_read: bool
) -> None:
    assert RESUME_EVERY <= READ_AHEAD  # so that plain JSONL always qualifies
    path = tmp_path / name
    text = _csv(rows) if name.endswith(".csv") else _lines(rows)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    index = scan_dataset(path)
    assert len(index) == rows
    assert workers_can_read(index) is tasks_read
