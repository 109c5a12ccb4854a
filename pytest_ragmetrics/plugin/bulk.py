"""Bulk mode: one test item runs the eval's test once for each row of its batch (the
process that runs the item).

A bulk eval is parametrized over batches of rows (``plugin.state.BatchParam``) instead of
one item per row, which saves pytest's per-item cost (about 1 ms and 18 KB of controller
memory a row). A batch holds its rows' positions only: its item reads them from the
dataset when it runs (``data.dataset.DatasetReader``), so no process holds a JSONL or
Parquet dataset whole; on the Ray engine its tasks read them (``plugin.ray_engine``).
The user's test function is unchanged: for each row the item does what a row test's
fixtures would do (``plugin.fixtures.start_row``: a bad row fails or is
skipped, a live row is answered), gives the test the row and fresh metric fixtures bound
to that row's recorder, and every other argument as pytest set it up for the batch. How a
row ended is classified by the rules of row mode (``plugin.recording``), and each row's
payload is exactly the one its own item would have sent; the item's report carries them
all (``results.summary.BatchPayload``).

The item passes when every row passed (or was skipped). Otherwise it fails, naming how
many rows failed and errored and the first ``SHOWN_ROWS`` of them with their file:line
and message; a batch with errored rows is a failed item, not an ERROR, since pytest gives
one outcome per item; the rows' own statuses are in the reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from pytest_ragmetrics.data.dataset import DatasetError, Row
from pytest_ragmetrics.plugin.fixtures import MetricFixture, metric_binder, own_metrics, start_row
from pytest_ragmetrics.plugin.progress import judging_fixtures
from pytest_ragmetrics.plugin.recording import Outcome, PayloadContext, payload_for
from pytest_ragmetrics.plugin.rows import BindMetric, RowJob, RowRun, StartRow, run_row
from pytest_ragmetrics.plugin.state import (
    BATCH_PAYLOADS_KEY,
    BatchParam,
    RowParam,
    RowRecorder,
    RunState,
    batch_param,
    run_state,
)
from pytest_ragmetrics.results.summary import RowPayload

# How many failing rows a failed batch lists; every row is in the JSON and HTML reports.
SHOWN_ROWS = 10


def run_batch(item: pytest.Item, count: Callable[[int], None] = lambda rows: None) -> bool | None:
    """Run a bulk item's test once per row and keep the rows' payloads for its report;
    ``None`` for any other item (pytest calls it as usual). The rows run in this process,
    or on Ray with the Ray engine (``plugin.ray_engine``); ``count`` is told of the rows
    as they finish (the progress of bulk rows). Fails the item, listing the first failing
    rows, unless every row passed or was skipped."""
    batch = batch_param(item)
    if batch is None or not isinstance(item, pytest.Function):
        return None
    # Live rows are answered by the systems of this process, and the LLM judge is called
    # from it: such batches stay on the local engine.
    state = run_state(item.config)
    on_ray = state.engine == "ray" and not batch.live and not _asks_judge(item, state)
    if on_ray:
        from pytest_ragmetrics.plugin import ray_engine  # imports Ray when first used

        if ray_engine.reads_on_workers(batch):  # the tasks read the rows
            first = batch.source.unread(batch.info, batch.positions[:1])[0]
            runs = ray_engine.run_batch(item.config, _job(item, first), batch, count)
            return _finish(item, batch, runs)
    problem: str | None = None
    try:
        params = batch.read()
    except DatasetError as error:
        problem = str(error)
    if problem is not None:  # failed outside the except block: no chained traceback
        item.stash[BATCH_PAYLOADS_KEY] = unreadable(item, batch, problem)
        pytest.fail(f"{batch.label}: {problem}", pytrace=False)
    job = _job(item, params[0])
    if on_ray:
        runs = ray_engine.run_rows(item.config, job, params, count)
    else:
        start, bind = _here(item)  # once for the item: its binders serve every row
        runs = [_counted(run_row(job, param, start, bind), count) for param in params]
    return _finish(item, batch, runs)


def _asks_judge(item: pytest.Function, state: RunState) -> bool:
    """Whether the item's test takes a metric fixture that asks the LLM judge for
    verdicts under the run's settings: its rows are judged from this process, where the
    judge's client, its cache and its accounting live (docs/scale.md)."""
    judging = judging_fixtures(state.thresholds.settings)
    return not judging.isdisjoint(own_metrics(item))


def _job(item: pytest.Function, first: RowParam) -> RowJob:
    """What running each row of ``item`` takes besides the row (``first``: any row of its
    batch, for the eval it belongs to)."""
    argnames: Sequence[str] = item._fixtureinfo.argnames  # what pytest itself passes
    return RowJob(
        item.obj,
        {name: item.funcargs[name] for name in argnames if name != "row"},
        tuple(own_metrics(item, argnames)),
        PayloadContext.of_item(item, first),
        runxfail=bool(item.config.option.runxfail),
    )


def _finish(item: pytest.Item, batch: BatchParam, runs: Sequence[RowRun]) -> bool:
    """Keep the rows' payloads for the item's report; fail it if a row failed or errored."""
    item.stash[BATCH_PAYLOADS_KEY] = [run.payload for run in runs]
    message = batch_failure(batch, runs)
    if message is not None:
        pytest.fail(message, pytrace=False)
    return True


def _counted(run: RowRun, count: Callable[[int], None]) -> RowRun:
    """``run``, counted as one row done: a call and a comparison a row (``RateProgress``)."""
    count(1)
    return run


def unreadable(item: pytest.Item, batch: BatchParam, problem: str) -> list[RowPayload]:
    """The payload of each row of a batch whose rows could not be read: an error of that
    row, saying why, so the eval still counts it (its gates see errored rows, never
    fewer rows)."""
    params = batch.unread()
    context = PayloadContext.of_item(item, params[0])
    outcome = Outcome("setup", None, failed=True, skipped=False)
    payloads = []
    for param in params:
        recorder = RowRecorder(param.row)
        recorder.error = f"{param.row.where()}: {problem}"
        payloads.append(payload_for(context, param, recorder, outcome))
    return payloads


def _here(item: pytest.Function) -> tuple[StartRow, BindMetric]:
    """How a row starts and binds its metrics in this process: as a row test's fixtures
    do, a live row answered by the ``ragmetrics_system`` fixture's systems."""

    def systems() -> Any:
        return item._request.getfixturevalue("ragmetrics_system")  # pytest's own request

    def start(param: RowParam, recorder: RowRecorder) -> Row:
        return start_row(param, recorder, item, systems)

    binders: dict[tuple[str, ...], Callable[[RowRecorder, RowParam], list[MetricFixture]]] = {}

    def bind(names: Sequence[str], recorder: RowRecorder, param: RowParam) -> list[MetricFixture]:
        key = tuple(names)  # the item's metric fixtures: the same for each of its rows
        binder = binders.get(key)
        if binder is None:
            binder = binders[key] = metric_binder(item.config, key)
        return binder(recorder, param)

    return start, bind


def batch_failure(batch: BatchParam, runs: Sequence[RowRun]) -> str | None:
    """The failed batch's message: how many of its rows failed and errored, then the first
    ``SHOWN_ROWS`` of them, in dataset order; ``None`` when none did."""
    failing = [run for run in runs if run.payload.failed or run.errored]
    if not failing:
        return None
    failed = sum(run.payload.failed for run in runs)
    errored = sum(run.errored for run in runs)
    lines = [
        f"{batch.label}: {failed} of {len(runs)} rows failed, {errored} errored "
        f"(every row's status is in the --ragmetrics-json and --ragmetrics-html reports)"
    ]
    for run in failing[:SHOWN_ROWS]:
        first, *rest = run.line().splitlines() or [""]
        lines += [f"  {first}", *(f"    {more}" for more in rest)]
    if len(failing) > SHOWN_ROWS:
        lines.append(f"  ... and {len(failing) - SHOWN_ROWS} more failing row(s)")
    return "\n".join(lines)
