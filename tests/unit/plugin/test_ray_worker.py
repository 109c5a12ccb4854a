"""A Ray scoring task run in this process (``ray_engine.score_rows``, without Ray): it
scores its batch with a catalog built from the declarations its job carries, so a worker
that Ray reuses for another job, whose metric has the same name and other code, scores
each job with its own and keeps none. Expected values by hand."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics import catalog
from pytest_ragmetrics.metrics.custom import MetricFunction, declare
from pytest_ragmetrics.plugin.ray_engine import WorkerJob, score_rows
from pytest_ragmetrics.plugin.recording import PayloadContext
from pytest_ragmetrics.plugin.rows import RowJob
from pytest_ragmetrics.plugin.state import RowParam
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload

INFO = EvalInfo("test_x.py", "test_x.py", "data/q.jsonl", "0" * 64, 1)
ROW = Row("a", "data/q.jsonl", 1, 0, {"id": "a", "answer": "one two three"})
PARAM = RowParam(INFO, ROW, ())
CONTEXT = PayloadContext("test_x.py::test_each", ("test_x.py::test_each",), False, Settings())


def words(row: Row) -> float:
    """Words of the answer."""
    return len(row.answer.split())


def letters(row: Row) -> float:
    """Letters of the answer."""
    return sum(character.isalpha() for character in row.answer)


def each_row(row: Row, length: Any) -> None:
    """The eval's test: records ``length``."""
    length(row)


def _job(function: MetricFunction) -> WorkerJob:
    """A job whose test takes ``length``, ``function`` declared under that name."""
    metric = declare(function, "length", ("answer",), None, False)
    spec = metric.spec()
    declared = (catalog.Declared(spec.records[0], spec, metric.origin),)
    job = RowJob(each_row, {}, ("length",), CONTEXT)
    return WorkerJob(job, Path("no-cache"), None, declared)


def _scored(work: WorkerJob) -> tuple[RowPayload, str | None]:
    batch = {"i": np.array([0]), "param": np.array([pickle.dumps(PARAM)], dtype=object)}
    returned = score_rows(batch, work)
    assert list(returned["i"]) == [0]
    payload, message = pickle.loads(returned["run"][0])
    return payload, message


def test_each_job_scores_with_its_own_declaration_and_leaves_none_behind() -> None:
    before = catalog.in_force()
    first, _ = _scored(_job(words))
    assert first.values == {"length": 3.0}  # "one two three"
    assert catalog.in_force() is before
    assert "length" not in before.fixtures
    # Same name, declared at another line: no clash with the first job's.
    second, _ = _scored(_job(letters))
    assert second.values == {"length": 11.0}  # 3 + 3 + 5 letters
    assert second.error is None
    assert catalog.in_force() is before
