"""The Ray engine: bulk evals' embedding and per-row scoring as Ray Data stages.

With ``engine = "ray"`` in ``[settings]`` (or ``--ragmetrics-engine=ray``) every eval runs
in bulk mode and two things leave the pytest process (docs/scale.md):

- **Embedding.** The run's texts are listed, looked up in the cache and cut into chunks
  exactly as the local engine does (``embeddings.prepare``); the misses' chunks go through
  ``map_batches`` to a pool of actors that each load the model once (one GPU an actor
  when the cluster has GPUs). Same chunks, same model, so on CPU the same vectors; they
  are stored in the cache as they come back.
- **Scoring.** A bulk item's rows go through ``map_batches`` to tasks that run the user's
  test once per row, exactly as ``plugin.rows.run_row`` does in the pytest process, the
  vectors read from the cache directory. Each row comes back as its payload (the
  ``RowPayload`` its own row test would have sent), so aggregates, gates, baselines and
  reports are those of the local engine.
- **Reading.** The tasks read their own rows (``reads_on_workers``): the pytest process
  sends the rows' positions, and the dataset's index with how a row is made a parameter
  (``collect.RowSource``) travels once a run through the object store; each task reads
  its positions with ``data.dataset.DatasetReader`` and makes them parameters as
  ``collect.BatchRows.params`` does, so validation, a bad row's ``file:line`` and the ids
  are the local engine's. Ray Data's own readers (``read_json``, ``read_parquet``) cannot
  number a row by its line nor validate it so. The file must be at the same path on every
  node; a worker that cannot read it errors its task's rows, naming the path and the node.

The eval module is sent to the workers by value, and so are the metrics declared in user
code that its test takes (``pytest_ragmetrics.metric``), with the modules declaring them:
a worker imports no conftest.py, so each task scores its rows with a catalog of its own,
built from the run's declarations the job carries (``Catalog.snapshot``); a worker that
Ray reuses for another job (another project's, whose metric may have the same name and
other code) keeps nothing of it. The rest (this package, the modules the eval and the
metrics import) must be importable there. Rows answered by live systems, and rows of a
test that asks the LLM judge, stay in the pytest process (``plugin.bulk``); a worker that
is asked for the judge all the same errors the row, saying so.

The rows of a task that failed for good (its worker died on every attempt) are run again,
one row a task, so that only the row at fault is lost; a row that is lost is never
dropped: it is that row's error, and the item fails. Ray is imported only here, on first use; the
local engine never imports it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import socket
import sys
import urllib.parse
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import (
    DatasetError,
    DatasetIndex,
    DatasetReader,
    Row,
    RowError,
)
from pytest_ragmetrics.data.formats import is_sql
from pytest_ragmetrics.embeddings.cache import CacheReadError, read_vectors
from pytest_ragmetrics.embeddings.model import (
    Embedder,
    SentenceTransformerEmbedder,
    Vectors,
)
from pytest_ragmetrics.embeddings.prepare import EncodingError, encode_here
from pytest_ragmetrics.judge.client import LlmJudge
from pytest_ragmetrics.metrics.base import Embed, Texts
from pytest_ragmetrics.metrics.catalog import Catalog, Declared, catalog_in_force
from pytest_ragmetrics.metrics.custom import CustomMetric
from pytest_ragmetrics.plugin.catalog import run_catalog
from pytest_ragmetrics.plugin.collect import BatchRows, RowSource
from pytest_ragmetrics.plugin.fixtures import MetricFixture, bound_metrics, check_row
from pytest_ragmetrics.plugin.options import Options
from pytest_ragmetrics.plugin.recording import Outcome, payload_for
from pytest_ragmetrics.plugin.rows import RowJob, RowRun, run_row
from pytest_ragmetrics.plugin.state import BatchParam, RowParam, RowRecorder, run_state
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload

RAY_ADDRESS_ENV = "RAY_ADDRESS"
# Rows in one scoring task: enough to pay a task's overhead, few enough to spread a
# batch over the cluster's CPUs and to lose little when a worker dies.
ROWS_PER_TASK = 256
# Attempts of a task whose worker died before it gives up (Ray's own retry).
TASK_RETRIES = 2
# The most rows a task reading its own rows may have to read past before its first one
# (from the nearest place a reader can start, ``DatasetIndex.resumes``): plain JSONL can
# start every 1,024 rows, so any of its batches qualifies; a file that can only be read
# from its start (compressed JSONL, CSV, Parquet in large row groups) would be read again
# from its start by every task, and is read by the pytest process instead.
READ_AHEAD = 4096


class RayEngineError(EncodingError):
    """The Ray engine cannot run: a cluster cannot be reached or started, or its actors
    failed on every attempt. Before the rows run it stops the run (a usage error); while
    an item runs, each of its rows errors with it."""


class NoJudgeOnRay(RowError):
    """An LLM-judge metric called on a Ray worker."""


class LostRow(Exception):
    """A row the Ray engine sent out and never got back."""


STOP = "stop"  # the key of what a worker sends back when a row called pytest.exit


@dataclass(frozen=True)
class StopRun:
    """A row on a worker called ``pytest.exit``: the pytest process stops the run with it,
    as in row mode."""

    reason: str
    returncode: int | None


@dataclass(frozen=True)
class RaySession:
    """The Ray the run uses: ``started`` when this run started it (and stops it).
    ``shared``: for each dataset whose tasks read its rows (``reads_on_workers``), the
    object-store reference of its index and row source, put there once a run."""

    started: bool
    shared: dict[BatchRows, Any] = field(default_factory=dict)


NEEDS_RAY = (
    "the Ray engine needs Ray: pip install 'pytest-ragmetrics[ray]', or run without "
    '--ragmetrics-engine=ray / engine = "ray"'
)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as error:  # installed in part: check_usable found the package
        raise pytest.UsageError(f"{NEEDS_RAY} ({error})") from None
    return ray


def check_usable(options: Options) -> None:
    """Usage errors, before anything runs: Ray that cannot be imported (missing, or
    installed in part), a run whose private cache folder the workers of a remote cluster
    could not read, or a cluster ``RAY_ADDRESS`` names that does not answer (the run
    joins it here; ``session`` then uses it, and leaves it running)."""
    address = os.environ.get(RAY_ADDRESS_ENV)
    if options.no_cache and address:
        raise pytest.UsageError(
            f"--ragmetrics-no-cache with {RAY_ADDRESS_ENV} set: the run's private cache is a "
            "folder on this machine, which the cluster's workers cannot read; give "
            "--ragmetrics-cache-dir a folder on a file system every node mounts instead"
        )
    ray = _ray()
    if address and not ray.is_initialized():
        check_reachable(address, options.ray_timeout)
        try:  # joined now, so that a cluster that does not answer stops the run at once
            _start(ray, address)
        except RayEngineError as error:
            raise pytest.UsageError(str(error)) from None


def check_reachable(address: str, timeout: int) -> None:
    """Whether the cluster at ``address`` (``host:port`` or ``ray://host:port``) accepts a
    connection within ``timeout`` seconds: Ray itself would try for minutes. ``auto``
    and ``local`` are Ray's to resolve (it fails at once when no cluster is recorded)."""
    where = _host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except OSError as error:
        why = "no answer" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise pytest.UsageError(
            f"the Ray engine cannot reach {RAY_ADDRESS_ENV}={address} within {timeout} s "
            f"({why}): start the cluster or correct the address, unset {RAY_ADDRESS_ENV} "
            "to use a local Ray, or wait longer with --ragmetrics-ray-timeout"
        ) from None


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port of a cluster address; ``None`` for ``auto``, ``local`` or an
    address without a port."""
    parts = urllib.parse.urlsplit(address if "://" in address else f"//{address}")
    try:
        port = parts.port
    except ValueError:  # not a port number: Ray names the problem
        return None
    if parts.hostname is None or port is None:
        return None
    return parts.hostname, port


def session(config: pytest.Config) -> Any:
    """Ray, connected: to the cluster ``RAY_ADDRESS`` names, else a local Ray started for
    the run (the CPUs Ray detects, no dashboard), stopped by ``stop``."""
    state = run_state(config)
    ray = _ray()
    if state.ray is None:
        address = os.environ.get(RAY_ADDRESS_ENV)
        started = not ray.is_initialized()
        if started:
            _start(ray, address)
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # its notes; its errors show
        with warnings.catch_warnings():  # Ray's own deprecations of its own defaults
            warnings.simplefilter("ignore", DeprecationWarning)
            context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # pytest's output is the run's
        context.print_on_execution_start = False
        # A block whose task failed on every retry must not abort the other blocks: the
        # rows it held are found missing and become errors (``run_rows``), the rest count.
        context.max_errored_blocks = -1
        state.ray = RaySession(started)
    return ray


def _start(ray: Any, address: str | None) -> None:
    """Join the cluster at ``address``, or start a new local Ray: ``"local"``, never a
    cluster an earlier ``ray start`` left recorded on the machine (which ``ray.init()``
    would join), with the CPUs Ray detects (it knows a container's limits)."""
    try:
        if address:
            ray.init(address=address, logging_level=logging.WARNING)
        else:
            ray.init(address="local", include_dashboard=False, logging_level=logging.WARNING)
    except Exception as error:  # Ray fails to connect or start in many ways; each is named
        where = f"{RAY_ADDRESS_ENV}={address}" if address else "a local Ray"
        fix = f"unset {RAY_ADDRESS_ENV} to use a local Ray" if address else "see Ray's log"
        raise RayEngineError(
            f"the Ray engine: {where}: {type(error).__name__}: {_first_line(error)}; {fix}"
        ) from None


def stop(config: pytest.Config) -> None:
    """Shut down the Ray this run started; a cluster the run joined is left running."""
    state = run_state(config)
    if state.ray is not None and state.ray.started:
        _ray().shutdown()
    state.ray = None


# -- embedding --------------------------------------------------------------------------


def chunk_encoder(config: pytest.Config) -> Any:
    """The ``embeddings.prepare.ChunkEncoder`` of the Ray engine: the chunks encoded by an
    actor pool, each chunk with its vectors as it comes back."""

    def encode(embedder: Embedder, chunks: list[list[str]]) -> Iterator[tuple[list[str], Vectors]]:
        assert isinstance(embedder, SentenceTransformerEmbedder)  # what embedder_for makes
        ray = session(config)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        cpus = int(ray.cluster_resources().get("CPU", 1))
        actors = max(1, min(len(chunks), gpus or cpus))
        items = [{"i": i, "texts": pickle.dumps(chunk)} for i, chunk in enumerate(chunks)]
        model = {"model_dir": str(embedder.model_dir), "name": embedder.name}
        with _without_retry_deprecations():
            encoded = ray.data.from_items(items).map_batches(
                ChunkEncoderActor,
                fn_constructor_kwargs=model,
                batch_size=1,
                compute=ray.data.ActorPoolStrategy(size=actors),
                num_gpus=1 if gpus else 0,
                num_cpus=0 if gpus else 1,
                max_restarts=TASK_RETRIES,
                max_task_retries=TASK_RETRIES,
            )
        done: set[int] = set()
        try:
            for batch in encoded.iter_batches(batch_size=1, batch_format="numpy"):
                for i, blob in zip(batch["i"], batch["vectors"], strict=True):
                    done.add(int(i))
                    yield chunks[int(i)], pickle.loads(blob)
        except Exception as error:  # Ray's own errors: the run stops, naming it
            raise RayEngineError(
                f"the Ray engine's encoders failed: {type(error).__name__}: {_first_line(error)}"
            ) from None
        if len(done) < len(chunks):
            raise RayEngineError(
                f"the Ray engine's encoders failed on every attempt for "
                f"{len(chunks) - len(done)} of {len(chunks)} chunk(s) of texts (Ray's errors "
                "are above); what was encoded is in the cache"
            )

    return encode


def alone_encoder(pool: Any) -> Any:
    """The ``ChunkEncoder`` of the texts a row asks for alone (a live row's answer, a
    dataset metric's texts), a few at a time and from the pytest process: when the run's
    vectors are a CPU's (a cluster without GPUs, ``encoding_device``) they are encoded
    here, by the model this process loads once, rather than by a new pool of actors that
    each load it for a handful of texts (seconds a row); on GPUs by the ``pool``
    (``chunk_encoder``), whose vectors are cached under the GPU's model identity."""

    def encode(embedder: Embedder, chunks: list[list[str]]) -> Iterator[tuple[list[str], Vectors]]:
        assert isinstance(embedder, SentenceTransformerEmbedder)  # what embedder_for makes
        if embedder.device == "cpu":
            return encode_here(embedder, chunks)
        result: Iterator[tuple[list[str], Vectors]] = pool(embedder, chunks)
        return result

    return encode


def encoding_device(config: pytest.Config) -> str:
    """Where the actor pool encodes: ``cuda`` when the cluster has GPUs (an actor takes
    one), else ``cpu``. Part of the model's cache identity, so a GPU's vectors and a
    CPU's are never taken for each other."""
    return "cuda" if session(config).cluster_resources().get("GPU", 0) else "cpu"


class ChunkEncoderActor:
    """One actor of the encoding pool: the model, loaded once, on the actor's GPU if Ray
    gave it one."""

    def __init__(self, model_dir: str, name: str) -> None:
        import ray

        device = "cuda" if ray.get_gpu_ids() else "cpu"
        self.embedder = SentenceTransformerEmbedder(Path(model_dir), name, device=device)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        vectors = [
            pickle.dumps(self.embedder.encode(pickle.loads(blob))) for blob in batch["texts"]
        ]
        return {"i": list(batch["i"]), "vectors": vectors}


# -- scoring ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerRows:
    """How a task gets its rows when it reads them itself (``reads_on_workers``): the
    dataset's ``(RowSource, DatasetIndex)`` in the object store, put once a run, and the
    eval the rows are made parameters of. The task is given the rows' positions."""

    shared: Any  # the ray.ObjectRef of (RowSource, DatasetIndex)
    info: EvalInfo

    def rows(self) -> BatchRows:
        """The dataset's rows as ``collect.BatchRows`` reads them, with a reader of this
        task's own (a reader holds an open file)."""
        source, index = _shared_here(self.shared)
        return BatchRows(source, DatasetReader(index))


@dataclass(frozen=True)
class WorkerJob:
    """What a scoring task gets: the rows' job, where the vectors are and under what model
    identity, and the test's metrics declared in user code (``declared``: the part of the
    run's catalog the worker builds its own from). A metric declared too late never gets
    here: its test failed to collect (``fixtures.late_metrics``). ``rows``: where the task
    reads its rows, or ``None`` when they come with it, read by the pytest process."""

    job: RowJob
    cache_dir: Path
    identity: str | None  # the embedding model's cache identity; None without embedding
    declared: tuple[Declared, ...] = ()
    rows: WorkerRows | None = None

    def catalog(self) -> Catalog:
        """The catalog the worker scores the job's rows with."""
        return Catalog(self.declared)


def reads_on_workers(batch: BatchParam) -> bool:
    """Whether the tasks read the batch's rows themselves (``workers_can_read``)."""
    return workers_can_read(_batch_rows(batch).reader.index)


def workers_can_read(index: DatasetIndex) -> bool:
    """Whether tasks can read the rows of ``index``'s dataset themselves: a file (a SQL
    query's rows come from a database the pytest process was given access to) in which
    no row is more than ``READ_AHEAD`` rows past a place a reader can start."""
    if is_sql(index.path):
        return False
    starts = [resume.position for resume in index.resumes] + [len(index)]
    return max(later - earlier for earlier, later in itertools.pairwise(starts)) <= READ_AHEAD


def _batch_rows(batch: BatchParam) -> BatchRows:
    rows = batch.source
    assert isinstance(rows, BatchRows)  # the only kind collection makes
    return rows


def _ray_session(config: pytest.Config) -> RaySession:
    """The run's ``RaySession``, Ray joined or started if it was not yet."""
    session(config)
    ray_session = run_state(config).ray
    assert isinstance(ray_session, RaySession)  # what session() sets
    return ray_session


def _shared(ray: Any, config: pytest.Config, rows: BatchRows) -> Any:
    """The object-store reference of the dataset's index and row source, put on first
    use: one copy a run, which every task of every batch of the dataset reads."""
    shared = _ray_session(config).shared
    if rows not in shared:
        shared[rows] = ray.put((rows.source, rows.reader.index))
    return shared[rows]


# The datasets this worker process took from the object store, by reference, the last
# few: a worker that Ray gives many tasks of a run unpickles a dataset's index once.
_HERE: OrderedDict[str, tuple[RowSource, DatasetIndex]] = OrderedDict()
KEPT_HERE = 2


def _shared_here(shared: Any) -> tuple[RowSource, DatasetIndex]:
    import ray

    key = shared.hex()
    if key not in _HERE:
        _HERE[key] = ray.get(shared)
        while len(_HERE) > KEPT_HERE:
            _HERE.popitem(last=False)
    _HERE.move_to_end(key)
    return _HERE[key]


def run_rows(
    config: pytest.Config,
    job: RowJob,
    params: Sequence[RowParam],
    count: Callable[[int], None] = lambda rows: None,
) -> list[RowRun]:
    """Each row of ``params``, read by the pytest process, run on Ray, in order (see
    ``_run_on_ray``)."""
    return _run_on_ray(config, job, params, None, count)


def run_batch(
    config: pytest.Config,
    job: RowJob,
    batch: BatchParam,
    count: Callable[[int], None] = lambda rows: None,
) -> list[RowRun]:
    """Each row of ``batch`` run on Ray, in order, its tasks reading the rows themselves
    (``reads_on_workers``): the pytest process holds each row as the dataset's index
    knows it (id, line, position), what a failed batch's message names. A row lost on
    Ray is read here, so that its error shows its fields as a row read here would."""
    return _run_on_ray(config, job, batch.unread(), batch, count)


def _run_on_ray(
    config: pytest.Config,
    job: RowJob,
    params: Sequence[RowParam],
    batch: BatchParam | None,
    count: Callable[[int], None],
) -> list[RowRun]:
    """Each row of ``params`` run on Ray, in order; with ``batch``, the tasks read the
    rows, ``params`` naming them only. ``count`` is told of each task's rows as they come
    back (the progress of bulk rows). The rows of a task that failed on every
    attempt (a row that kills its worker, or makes the task fail) are run again one row a
    task, so that only the row at fault is lost. A row that did not come back (its own
    task failed on every attempt, or Ray could not be reached, or the test's arguments or
    its metrics of the user's cannot travel) is that row's error, naming why; the other
    rows count."""
    try:
        ray = session(config)
    except RayEngineError as error:
        return _lost_rows(job, params, batch, str(error))
    declared = _user_metrics(config, job)
    _send_by_value(ray, job, declared)
    unsendable = _unpicklable(ray, job) or _unpicklable_metric(ray, declared)
    if unsendable is not None:
        return _lost_rows(job, params, batch, unsendable)
    rows = None
    if batch is not None:
        rows = WorkerRows(_shared(ray, config, _batch_rows(batch)), batch.info)
    work = WorkerJob(job, *_vectors_at(config, job), declared, rows)
    everything = list(enumerate(params))
    # One block a task, of at most ROWS_PER_TASK rows: a task that fails for good loses no
    # more, and its rows are then run one a task.
    back, why = _score(ray, work, everything, -(-len(everything) // ROWS_PER_TASK), count)
    missing = [(i, param) for i, param in everything if i not in back]
    if missing:
        alone, why = _score(ray, work, missing, len(missing), count)
        back.update(alone)
    lost = [param for i, param in everything if i not in back]
    lost_runs = iter(_lost_rows(job, lost, batch, why))
    return [RowRun(param, *back[i]) if i in back else next(lost_runs) for i, param in everything]


def _lost_rows(
    job: RowJob, params: Sequence[RowParam], batch: BatchParam | None, why: str
) -> list[RowRun]:
    """Each row of ``params`` lost, saying ``why``; rows the tasks were to read are read
    here first (as the index knows them if they cannot be), so that the error of a lost
    row shows its fields on either path."""
    if batch is not None and params:
        positions = [param.row.index for param in params]
        # Unreadable here too: the rows as the index knows them, their error saying why
        # they were lost.
        with contextlib.suppress(DatasetError):
            params = batch.source.params(batch.info, positions)
    return [_lost(job, param, why) for param in params]


def _score(
    ray: Any,
    work: WorkerJob,
    indexed: Sequence[tuple[int, RowParam]],
    blocks: int,
    count: Callable[[int], None],
) -> tuple[dict[int, tuple[RowPayload, str | None]], str]:
    """The rows of ``indexed`` scored by ``score_rows`` in ``blocks`` tasks: what came
    back (payload and message by index, ``count`` told as each task's rows come), and
    why the others did not. A task is given its rows, or their positions when it reads
    them itself."""
    if work.rows is None:
        items = [{"i": i, "param": pickle.dumps(param)} for i, param in indexed]
    else:
        items = [{"i": i, "position": param.row.index} for i, param in indexed]
    with _without_retry_deprecations():
        scored = ray.data.from_items(items, override_num_blocks=blocks).map_batches(
            score_rows, batch_size=None, fn_kwargs={"work": work}, max_retries=TASK_RETRIES
        )
    back: dict[int, tuple[RowPayload, str | None]] = {}
    task = "run alone, its task" if blocks == len(indexed) else "its task"
    why = f"the Ray engine lost this row: {task} failed on every attempt (Ray's error is above)"
    stop: StopRun | None = None
    try:
        for batch in scored.iter_batches(batch_size=None, batch_format="numpy"):
            for i, blob in zip(batch["i"], batch["run"], strict=True):
                came = pickle.loads(blob)
                if isinstance(came, dict):  # a row called pytest.exit (``score_rows``)
                    stop = StopRun(*came[STOP])
                    break
                back[int(i)] = came
            if stop is not None:
                break
            count(len(batch["i"]))
    except Exception as error:  # Ray stopped the whole run: each row not back errors
        why = f"the Ray engine lost this row: {type(error).__name__}: {_first_line(error)}"
    if stop is not None:
        pytest.exit(stop.reason, stop.returncode)
    return back, why


def _vectors_at(config: pytest.Config, job: RowJob) -> tuple[Path, str | None]:
    """The cache directory the workers read vectors from, and the model's identity there
    (``None`` when no metric of the job embeds: no model is touched)."""
    state = run_state(config)
    fixtures = run_catalog(config).fixtures
    embeds = any(fixtures[name].texts is not None for name in job.metrics)
    if not embeds or state.store is None:
        return state.options.cache_dir, None
    return state.options.cache_dir, state.store.embedder.identity


def _user_metrics(config: pytest.Config, job: RowJob) -> tuple[Declared, ...]:
    """The job's metrics declared in user code: what of the run's catalog the workers
    need."""
    declared = run_catalog(config).declared
    return tuple(declared[name] for name in job.metrics if name in declared)


def _send_by_value(ray: Any, job: RowJob, declared: Sequence[Declared]) -> None:
    """The eval module, and the modules declaring the job's metrics of the user's, go to
    the workers inside the job: a test file or a conftest.py, which they could not import
    by name (pytest imports a conftest.py as ``conftest``, from a folder of its own)."""
    names = [getattr(job.test, "__module__", ""), *map(_declaring_module, declared)]
    for name in dict.fromkeys(names):
        module = sys.modules.get(name)
        if module is not None:
            ray.cloudpickle.register_pickle_by_value(module)


def _declaring_module(declared: Declared) -> str:
    """The module of a declared metric's function (``""`` if it has none)."""
    measure = declared.spec.compute if declared.spec is not None else None
    metric = getattr(measure, "__self__", None)
    return metric.function.__module__ if isinstance(metric, CustomMetric) else ""


def _pickling_error(ray: Any, value: object) -> str | None:
    """Why ``value`` cannot be sent to Ray's workers (``Type: first line``), or None."""
    try:
        ray.cloudpickle.dumps(value)
    except Exception as error:  # pickling fails in many ways; each is named
        return f"{type(error).__name__}: {_first_line(error)}"
    return None


def _unpicklable(ray: Any, job: RowJob) -> str | None:
    """Why the test's arguments cannot travel to the workers, naming the fixture; None
    when they can."""
    for name, value in job.shared.items():
        error = _pickling_error(ray, value)
        if error is not None:
            return (
                f"the Ray engine sends the test's arguments to its workers, but fixture "
                f"`{name}` cannot be pickled ({error}); make it picklable, or run this eval "
                "on the local engine"
            )
    return None


def _unpicklable_metric(ray: Any, declared: Sequence[Declared]) -> str | None:
    """Why a metric of the user's cannot travel to the workers, naming it and where it was
    declared; None when every one can."""
    for metric in declared:
        error = _pickling_error(ray, metric)
        if error is not None:
            return (
                f"the Ray engine sends metric `{metric.name}` ({metric.origin}) to its "
                f"workers, but it cannot be pickled ({error}): what its function uses from "
                "its module must be picklable (create the rest inside the function), or run "
                'this eval on the local engine (without --ragmetrics-engine=ray or engine = "ray")'
            )
    return None


def _lost(job: RowJob, param: RowParam, why: str) -> RowRun:
    try:
        raise LostRow(why)  # raised, so that it has the traceback pytest's ExceptionInfo needs
    except LostRow as error:
        outcome = Outcome("call", pytest.ExceptionInfo.from_exception(error), True, False)
    return RowRun(param, payload_for(job.payload, param, None, outcome), why)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else ""


@contextlib.contextmanager
def _without_retry_deprecations() -> Iterator[None]:
    """Ray Data retries a task, and restarts an actor, whose worker died for ever by
    default: a row that kills its worker would hang the run. The stages are given
    ``TASK_RETRIES`` instead, through the keyword arguments Ray 2.60 has for it; it warns
    that they go in a later release (the extra pins below that one), silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*is deprecated")
        yield


def score_rows(batch: dict[str, np.ndarray], work: WorkerJob) -> dict[str, list[Any]]:
    """A scoring task: each row of the batch run as ``plugin.rows.run_row`` runs it, its
    payload and message pickled back; a row that calls ``pytest.exit`` sends back
    ``{STOP: (reason, returncode)}`` instead of the batch."""
    if work.rows is None:
        params: list[RowParam] = [pickle.loads(blob) for blob in batch["param"]]
    else:
        positions = [int(position) for position in batch["position"]]
        rows = work.rows.rows()
        problem: str | None = None
        try:
            params = rows.params(work.rows.info, positions)
        except DatasetError as error:
            problem = _unreadable_here(error, rows.reader.index)
        finally:
            rows.reader.close()
        if problem is not None:
            unread = rows.unread(work.rows.info, positions)
            runs = [_unreadable_run(work.job, param, problem) for param in unread]
            return {"i": list(batch["i"]), "run": [pickle.dumps((r.payload, None)) for r in runs]}
    catalog = work.catalog()
    try:  # the run's catalog, in force for the batch: what the user's code looks up reads it
        with catalog_in_force(catalog), _runxfail(work.job.runxfail):
            runs = _run_here(work, params, catalog)
    except pytest.exit.Exception as stopped:  # a row stops the run, as in row mode
        # Plain values, not a StopRun: a reused worker may hold this module imported
        # anew, whose class pickle refuses as "not the same object".
        stop = {STOP: (stopped.msg, stopped.returncode)}
        return {"i": list(batch["i"][:1]), "run": [pickle.dumps(stop)]}
    return {"i": list(batch["i"]), "run": [pickle.dumps((r.payload, r.message)) for r in runs]}


def _unreadable_here(error: DatasetError, index: DatasetIndex) -> str:
    """Why a task could not read its rows, naming the file and the node it ran on: on a
    cluster, every node must see the dataset at the path the pytest process scanned."""
    import ray

    address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    node = f"{address} ({ray.get_runtime_context().get_node_id()[:12]})"
    return (
        f"{error} [read by a Ray worker on node {node} at {index.path}: on a cluster the "
        "dataset must be the same file at the same path on every node, e.g. on a file "
        "system every node mounts]"
    )


def _unreadable_run(job: RowJob, param: RowParam, problem: str) -> RowRun:
    """A row its task could not read: its error, as ``bulk.unreadable`` makes it when the
    pytest process cannot read a batch."""
    recorder = RowRecorder(param.row)
    recorder.error = f"{param.row.where()}: {problem}"
    outcome = Outcome("setup", None, failed=True, skipped=False)
    return RowRun(param, payload_for(job.payload, param, recorder, outcome), None)


@contextlib.contextmanager
def _runxfail(runxfail: bool) -> Iterator[None]:
    """With --runxfail, ``pytest.xfail()`` does nothing on the worker for the batch, as
    pytest makes it do in the pytest process (its exception raised by a test still
    fails the row)."""
    if not runxfail:
        yield
        return
    xfail = pytest.xfail

    def nop(*args: object, **kwargs: object) -> None:
        pass

    nop.Exception = xfail.Exception  # type: ignore[attr-defined]
    pytest.xfail = nop  # type: ignore[assignment]
    try:
        yield
    finally:
        pytest.xfail = xfail


def _run_here(work: WorkerJob, params: Sequence[RowParam], catalog: Catalog) -> list[RowRun]:
    """The rows run on this worker, their metrics those of ``catalog`` (the job's)."""
    settings = work.job.payload.settings
    embed = _prepared_vectors(work, params, catalog)

    def start(param: RowParam, recorder: RowRecorder) -> Row:
        check_row(param, recorder, settings.row_errors)
        return param.row

    def bind(names: Sequence[str], recorder: RowRecorder, param: RowParam) -> list[MetricFixture]:
        return bound_metrics(names, recorder, param, settings, embed, _no_judge, catalog.fixtures)

    return [run_row(work.job, param, start, bind) for param in params]


def _prepared_vectors(work: WorkerJob, params: Sequence[RowParam], catalog: Catalog) -> Embed:
    """``embed`` on a worker: the vectors the run prepared for these rows, read from the
    cache directory in one read-only query (the texts listed as the pytest process listed
    them). A vector that cannot be read is the row's error, naming the directory."""
    found: dict[str, Vectors] = {}
    problem = None
    if work.identity is not None:
        settings = work.job.payload.settings
        listers = [catalog.fixtures[name].texts for name in work.job.metrics]
        texts = dict.fromkeys(
            text
            for param in params
            if not param.problems
            for lister in listers
            if lister is not None
            for text in _texts(lister, param.row, settings)
        )
        try:
            found = read_vectors(work.cache_dir, work.identity, texts)
        except CacheReadError as error:
            problem = str(error)

    def embed(texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 0), np.float32)
        missing = [text for text in texts if text not in found]
        if missing:
            raise RowError(
                f"{len(missing)} text(s) could not be read from the embedding cache the Ray "
                f"workers read ({problem or work.cache_dir}): on a cluster it must be a "
                "folder every node mounts (--ragmetrics-cache-dir)"
            )
        return np.stack([found[text] for text in texts])

    return embed


def _texts(lister: Texts, row: Row, settings: Settings) -> list[str]:
    """What a metric embeds for ``row``; nothing for a row it cannot measure (it errors
    when the metric runs, as in the pytest process)."""
    try:
        return list(lister(row, settings))
    except RowError:
        return []


def _no_judge() -> LlmJudge:
    raise NoJudgeOnRay(
        "the LLM judge is called from the pytest process only: run this eval on the local "
        'engine (without --ragmetrics-engine=ray or engine = "ray")'
    )
