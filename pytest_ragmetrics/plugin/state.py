"""Per-process run state kept in pytest's stash, and the small objects that travel with a
test: its row parameter and what its metric fixtures record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import pytest

from pytest_ragmetrics.data.dataset import (
    Dataset,
    DatasetError,
    DatasetReader,
    LoadedRow,
    Location,
    Problem,
    Row,
)
from pytest_ragmetrics.metrics.judge import JudgeNotConfigured

# What a run's resources, and its results, are made of is imported by the functions that
# create them, on first use: importing the plugin, which every pytest run does, needs none.
if TYPE_CHECKING:
    from pytest_ragmetrics.config.thresholds import Thresholds
    from pytest_ragmetrics.embeddings.cache import EmbeddingCache
    from pytest_ragmetrics.embeddings.model import Embedder
    from pytest_ragmetrics.embeddings.prepare import ChunkEncoder, EmbeddingStore
    from pytest_ragmetrics.judge.client import LlmJudge
    from pytest_ragmetrics.live.cache import OutputCache
    from pytest_ragmetrics.metrics.base import Evidence
    from pytest_ragmetrics.metrics.hooks import RowKey
    from pytest_ragmetrics.plugin.options import Options
    from pytest_ragmetrics.results.summary import EvalInfo, RowPayload


@dataclass
class RunState:
    """What every process keeps for one pytest run (controller or worker): the options and
    thresholds, what collection loaded, and the resources fixtures create on first use.
    What the controller gathers from the reports lives in ``plugin.session.RunSession``."""

    options: Options
    thresholds: Thresholds
    # Where eval names, baselines and displayed paths are relative to: the project root of
    # ``pytest_ragmetrics.config.project``, which pytest's rootdir need not be.
    project_root: Path
    # The datasets collection loaded, by file and format; emptied once rows start running.
    datasets: dict[tuple[Location, str | None], Dataset] = field(default_factory=dict)
    # The readers of bulk evals' datasets (their index, and the pass under way), closed
    # when the run ends.
    readers: dict[tuple[Location, str | None], DatasetReader] = field(default_factory=dict)
    eval_datasets: dict[str, Location] = field(default_factory=dict)
    eval_tests: dict[str, set[str]] = field(default_factory=dict)
    store: EmbeddingStore | None = None
    live_cache: OutputCache | None = None
    llm: LlmJudge | None = None
    # The Ray session the run started (plugin.ray_engine), shut down when the run ends.
    ray: Any = None
    # Who encodes the texts the store misses: this process, or the Ray engine's actors,
    # and on what device ("cuda" where the Ray engine's cluster has GPUs).
    encode_chunks: ChunkEncoder | None = None  # None: this process (``encode_here``)
    encode_alone: ChunkEncoder | None = None  # a row's own texts; None: as encode_chunks
    encoding_device: Callable[[], str] = lambda: "cpu"
    # What the metrics' before-rows hooks prepared for this process's rows, by the hook's
    # key (``metrics.base.Preparation``; ``plugin.fixtures.run_preparations``).
    prepared: dict[str, PreparedRows] = field(default_factory=dict)
    # The plugin's metric fixtures each test function takes (``plugin.fixtures.own_metrics``),
    # by the id of the fixture info its items share, kept with it.
    own_metrics: dict[int, tuple[Any, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def engine(self) -> str:
        """Where bulk evals' rows are scored: the option, else the setting."""
        return self.options.engine or self.thresholds.settings.engine


@dataclass(frozen=True)
class PreparedRows:
    """What one before-rows hook (``metrics.base.Preparation``) prepared: each row's
    result by the row's file and position, for the metric fixtures declaring the hook
    (``fixtures``), which find it in the row's memo under the hook's key."""

    fixtures: frozenset[str]
    results: Mapping[RowKey, Any]


STATE_KEY = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE_KEY]


def embedding_store(config: pytest.Config) -> EmbeddingStore:
    """The process's embedding store, created on first use (no model is loaded here)."""
    state = run_state(config)
    if state.store is None:
        from pytest_ragmetrics.embeddings.cache import EmbeddingCache
        from pytest_ragmetrics.embeddings.model import embedder_for
        from pytest_ragmetrics.embeddings.prepare import EmbeddingStore, encode_here

        settings = state.thresholds.settings

        def make_embedder(cache: EmbeddingCache) -> Embedder:
            device = state.encoding_device()  # where the run's vectors are computed
            return embedder_for(
                settings.embedding_model, settings.base_dir, cache.file_digest, device
            )

        cache = EmbeddingCache(state.options.cache_dir)
        # On the Ray engine the workers read the vectors from the cache: not held here.
        keep = state.engine != "ray"
        encode = state.encode_chunks or encode_here
        state.store = EmbeddingStore(make_embedder, cache, encode, keep, state.encode_alone)
    return state.store


@dataclass(frozen=True, slots=True)
class RowParam:
    """The parameter of one row test: the eval, the row, and what is wrong with it (the
    row's problems as loaded, and those of the eval's metrics). Every row test's item
    holds its parameter to the end of the run, so it holds the row itself, not the
    dataset's ``LoadedRow``, and has slots."""

    info: EvalInfo
    row: Row
    problems: tuple[Problem, ...]
    rerun: Row | None = None  # the same row in the marker's `rerun` file, if any
    live: str | None = None  # the live system that answers the row's question, if any

    def error_message(self) -> str:
        return "\n".join(f"{self.row.where(p.field)}: {p.message}" for p in self.problems)


@dataclass(frozen=True)
class DatasetParam:
    """The parameter of a dataset-level test (one that takes ``rows``): the eval and every
    row it runs over (the first N with ``--ragmetrics-limit``)."""

    info: EvalInfo
    loaded: tuple[LoadedRow, ...]

    def bad_rows(self) -> list[str]:
        """One message per problem of every row that did not load or validate."""
        return [
            f"{loaded.row.where(problem.field)}: {problem.message}"
            for loaded in self.loaded
            for problem in loaded.problems
        ]


class BatchRows(Protocol):
    """Where a bulk eval's batches read their rows (``plugin.collect.BatchRows``)."""

    @property
    def live(self) -> bool: ...

    def params(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]: ...

    def unread(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]: ...


@dataclass(frozen=True)
class BatchParam:
    """The parameter of one test item of a bulk eval: a run of rows of one eval (one
    system), given by their positions in the dataset; they are read, each with its own
    ``RowParam``, when the item runs (``read``) and the user's test runs once per row
    (``pytest_ragmetrics.plugin.bulk``). ``first`` is the 1-based position of the batch's
    first row among the eval's selected rows, so ids are stable in every xdist worker."""

    info: EvalInfo
    source: BatchRows
    positions: Sequence[int]
    first: int

    @property
    def size(self) -> int:
        return len(self.positions)

    @property
    def id(self) -> str:
        """``rows-<first>-<last>``, the positions of the batch's rows (1-based, inclusive)."""
        return f"rows-{self.first}-{self.first + self.size - 1}"

    @property
    def label(self) -> str:
        """The item's test id: ``id``, after its system's name in a dataset of systems."""
        return self.id if self.info.system is None else f"{self.info.system}/{self.id}"

    @property
    def live(self) -> bool:
        """Whether live systems answer the rows' questions."""
        return self.source.live

    def read(self) -> list[RowParam]:
        """The batch's rows, read from the dataset (``DatasetError`` if it changed)."""
        return self.source.params(self.info, self.positions)

    def unread(self) -> list[RowParam]:
        """The batch's rows as the dataset's index knows them (id, line, system), with
        no fields: for reporting each as an error when they cannot be read."""
        return self.source.unread(self.info, self.positions)


def batch_param(item: pytest.Item) -> BatchParam | None:
    """The rows a bulk test item runs, or ``None`` for any other test."""
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("row") if callspec else None
    return param if isinstance(param, BatchParam) else None


def item_rows(item: pytest.Item) -> Sequence[RowParam]:
    """The rows an item runs its test on: its row, its batch's rows (read from the
    dataset), or none. A batch whose rows can no longer be read has none here: when it
    runs, each of its rows errors, saying why (``plugin.bulk``)."""
    single = row_param(item)
    if single is not None:
        return (single,)
    batch = batch_param(item)
    if batch is None:
        return ()
    try:
        return batch.read()
    except DatasetError:
        return ()


def dataset_param(item: pytest.Item) -> DatasetParam | None:
    """The rows a dataset-level test runs over, or ``None`` for any other test."""
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("rows") if callspec else None
    return param if isinstance(param, DatasetParam) else None


def eval_of(item: pytest.Item) -> EvalInfo | None:
    """The eval a row test or dataset-level test belongs to."""
    param = row_param(item) or dataset_param(item) or batch_param(item)
    return param.info if param is not None else None


def row_param(item: pytest.Item) -> RowParam | None:
    """The row an item runs on, or ``None`` for a test that is not a row test."""
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("row") if callspec else None
    return param if isinstance(param, RowParam) else None


@dataclass
class RowRecorder:
    """What one test recorded for its row, sent to the controller on the report."""

    row: Row
    values: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, float]] = field(default_factory=dict)
    # The text, or an ``Evidence`` built only if the payload carries it (``rows_shown``).
    evidence: dict[str, str | Evidence] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    memo: dict[str, Any] = field(default_factory=dict)  # shared by the test's metric fixtures
    # A live row's second output (determinism) and its line for --ragmetrics-save-outputs.
    rerun: Row | None = None
    saved: dict[str, Any] | None = None
    # The metric fixtures the test called on the row: one it takes and never calls on any
    # row is warned about (``plugin.recording.payload_for``, ``plugin.finish``).
    called: set[str] = field(default_factory=set)

    def record(
        self,
        values: Mapping[str, float],
        breakdowns: Mapping[str, Mapping[str, float]],
        details: Mapping[str, Any] | None = None,
    ) -> None:
        self.values.update(values)
        if breakdowns:  # most metrics have none
            for name, parts in breakdowns.items():
                self.breakdowns[name] = dict(parts)
        if details:
            from pytest_ragmetrics.results.summary import merge_details

            merge_details(self.details, details)

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}\n{message}"


RECORDER_KEY = pytest.StashKey[RowRecorder]()
# What each row of a bulk item recorded, once the item ran its rows (``plugin.bulk``).
BatchPayloads: TypeAlias = "list[RowPayload]"
BATCH_PAYLOADS_KEY = pytest.StashKey[BatchPayloads]()


def llm_judge(config: pytest.Config) -> LlmJudge:
    """The process's LLM judge, created on first use; ``JudgeNotConfigured`` (the row
    errors) when thresholds.toml has no ``[judge]`` table."""
    state = run_state(config)
    if state.llm is None:
        judge = state.thresholds.judge
        if judge is None:
            where = state.options.thresholds or "thresholds.toml"
            raise JudgeNotConfigured(
                f"an LLM-judge metric needs an endpoint: add a [judge] table with base_url "
                f"(or function) and model to {where}"
            )
        from pytest_ragmetrics.judge.client import LlmJudge

        options = state.options
        if options.judge_repeats is not None:
            judge = dataclasses.replace(judge, repeats=options.judge_repeats)
        state.llm = LlmJudge(
            judge, options.cache_dir, refresh=options.refresh, run_id=options.run_id
        )
        if options.judge_compare and judge.previous is not None:  # checked when configured
            previous = dataclasses.replace(judge.previous, repeats=judge.repeats)
            state.llm.previous = LlmJudge(
                previous, options.cache_dir, refresh=options.refresh, run_id=options.run_id
            )
    return state.llm


def live_cache(config: pytest.Config) -> OutputCache:
    """The process's cache of live system outputs, created on first use."""
    state = run_state(config)
    if state.live_cache is None:
        from pytest_ragmetrics.live.cache import OutputCache

        options = state.options
        state.live_cache = OutputCache(options.cache_dir, options.run_id, options.refresh)
    return state.live_cache


@dataclass
class DatasetRecorder:
    """What one dataset-level test recorded: each metric's statistics over the rows."""

    rows: list[Row]
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def record(self, metric: str, stats: Mapping[str, float], details: Any) -> None:
        if metric in self.values:
            raise ValueError(
                f"{metric} is recorded once per eval; compute it once per test, and give "
                "another field or corpus its own eval (ragmetrics marker name=...)"
            )
        self.values[metric] = dict(stats)
        self.details[metric] = details

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}\n{message}"


DATASET_RECORDER_KEY = pytest.StashKey[DatasetRecorder]()


def located(row: Row, message: str) -> str:
    """``message`` starting with the row's ``file:line``, which it gets unless it has it."""
    where = row.where()
    return message if message.startswith(where) else f"{where}: {message}"
