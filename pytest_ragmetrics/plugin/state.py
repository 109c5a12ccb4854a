"""Per-run state kept in pytest's stash, and the small objects that travel with a test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.config.project import Project
from pytest_ragmetrics.config.thresholds import Settings, Thresholds
from pytest_ragmetrics.data.dataset import Dataset, LoadedRow, Problem, Row, RowError
from pytest_ragmetrics.embeddings.cache import EmbeddingCache
from pytest_ragmetrics.embeddings.model import Embedder, embedder_for
from pytest_ragmetrics.embeddings.prepare import EmbeddingStore, PrepareStats
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.judge.client import LlmJudge
from pytest_ragmetrics.live.cache import OutputCache
from pytest_ragmetrics.live.system import LiveSystemError
from pytest_ragmetrics.metrics.judge import JudgeNotConfigured
from pytest_ragmetrics.results.baseline import input_digest
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    dataset_payload,
    merge_details,
    row_payload,
)
from pytest_ragmetrics.text.citations import find_citations


@dataclass(frozen=True)
class Options:
    """The ``--ragmetrics-*`` command-line options, parsed."""

    project: Project  # the thresholds file in force and the project root
    limit: int | None
    json_path: Path | None
    md_path: Path | None
    html_path: Path | None
    update_baseline: bool
    force_gates: bool
    cache_dir: Path
    refresh: bool = False  # --ragmetrics-refresh: call live systems and the judge anew
    save_outputs: Path | None = None  # --ragmetrics-save-outputs
    run_id: str = "run"  # shared by the controller and every xdist worker of the run

    @property
    def thresholds(self) -> Path | None:
        return self.project.thresholds


@dataclass
class RunState:
    """Everything the plugin keeps for one pytest run (controller or worker)."""

    options: Options
    thresholds: Thresholds
    # Where eval names, baselines and displayed paths are relative to: the project root of
    # ``pytest_ragmetrics.config.project``, which pytest's rootdir need not be.
    project_root: Path
    datasets: dict[tuple[Path, str | None], Dataset] = field(default_factory=dict)
    eval_datasets: dict[str, Path] = field(default_factory=dict)
    eval_tests: dict[str, set[str]] = field(default_factory=dict)
    payloads: list[Mapping[str, Any]] = field(default_factory=list)
    summaries: list[EvalSummary] = field(default_factory=list)
    gate_results: list[GateResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    store: EmbeddingStore | None = None
    live_cache: OutputCache | None = None
    llm: LlmJudge | None = None
    prepare_stats: dict[str, PrepareStats] = field(default_factory=dict)  # by process


STATE_KEY = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE_KEY]


def embedding_store(config: pytest.Config) -> EmbeddingStore:
    """The process's embedding store, created on first use (no model is loaded here)."""
    state = run_state(config)
    if state.store is None:
        settings = state.thresholds.settings

        def make_embedder(cache: EmbeddingCache) -> Embedder:
            return embedder_for(settings.embedding_model, settings.base_dir, cache.file_digest)

        state.store = EmbeddingStore(make_embedder, EmbeddingCache(state.options.cache_dir))
    return state.store


@dataclass(frozen=True)
class RowParam:
    """The parameter of one row test: the eval, the row, and what is wrong with it."""

    info: EvalInfo
    loaded: LoadedRow
    problems: tuple[Problem, ...]
    rerun: Row | None = None  # the same row in the marker's `rerun` file, if any
    live: str | None = None  # the live system that answers the row's question, if any

    @property
    def row(self) -> Row:
        return self.loaded.row

    def error_message(self) -> str:
        return "\n".join(f"{self.row.where(p.field)}: {p.message}" for p in self.problems)


@dataclass(frozen=True)
class RowsParam:
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


def rows_param(item: pytest.Item) -> RowsParam | None:
    """The rows a dataset-level test runs over, or ``None`` for any other test."""
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("rows") if callspec else None
    return param if isinstance(param, RowsParam) else None


def eval_of(item: pytest.Item) -> EvalInfo | None:
    """The eval a row test or dataset-level test belongs to."""
    param = row_param(item) or rows_param(item)
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
    evidence: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    memo: dict[str, Any] = field(default_factory=dict)  # shared by the test's metric fixtures
    # A live row's second output (determinism) and its line for --ragmetrics-save-outputs.
    rerun: Row | None = None
    saved: dict[str, Any] | None = None

    def record(
        self,
        values: Mapping[str, float],
        breakdowns: Mapping[str, Mapping[str, float]],
        evidence: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        self.values.update(values)
        for name, parts in breakdowns.items():
            self.breakdowns[name] = dict(parts)
        self.evidence.update(evidence or {})
        merge_details(self.details, details or {})

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}\n{message}"


RECORDER_KEY = pytest.StashKey[RowRecorder]()


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
                f"and model to {where}"
            )
        options = state.options
        state.llm = LlmJudge(
            judge, options.cache_dir, refresh=options.refresh, run_id=options.run_id
        )
    return state.llm


def live_cache(config: pytest.Config) -> OutputCache:
    """The process's cache of live system outputs, created on first use."""
    state = run_state(config)
    if state.live_cache is None:
        options = state.options
        state.live_cache = OutputCache(options.cache_dir, options.run_id, options.refresh)
    return state.live_cache


# Row fields the reports show beside the metrics (the HTML drill-down).
SHOWN_FIELDS = ("question", "answer", "gold", "answerable")


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


def _row_error(
    param: RowParam, call: pytest.CallInfo[None], report: pytest.TestReport
) -> str | None:
    """Why the row errored, if it did: bad data, or a failure that is not the test's
    own verdict. A failed ``assert`` or ``pytest.fail`` is a verdict; anything else
    raised (a fixture's setup, a bug, a live system's exception) is an error."""
    if not report.failed or call.excinfo is None:
        return None
    excinfo = call.excinfo
    if call.when == "call" and excinfo.errisinstance((AssertionError, pytest.fail.Exception)):
        return None
    message = str(excinfo.value).splitlines()[0] if str(excinfo.value) else ""
    return f"{param.row.where()}: {call.when} raised {excinfo.typename}: {message}"


def located(row: Row, message: str) -> str:
    """``message`` starting with the row's ``file:line``, which it gets unless it has it."""
    where = row.where()
    return message if message.startswith(where) else f"{where}: {message}"


# What the plugin itself failed to get for a row: a live system's output, a judge's
# verdict (JudgeRowError, JudgeNotConfigured), a field a metric needs.
CALL_FAILURES = (LiveSystemError, RowError)
# Set on such a report: it is an error, even in the call phase (pytest_report_teststatus).
ERRORED_ATTR = "ragmetrics_errored"


def call_failure(param: RowParam, call: pytest.CallInfo[None]) -> str | None:
    """The line a row test's error is reported with when what failed is one of
    ``CALL_FAILURES``: ``file:line: what: why``, the row's error in the reports; None for
    anything else (a failed assert is the test's verdict, another exception a bug)."""
    excinfo = call.excinfo
    if excinfo is None or not excinfo.errisinstance(CALL_FAILURES):
        return None
    return located(param.row, str(excinfo.value))


def wants_traceback(config: pytest.Config) -> bool:
    """Whether the run asked for full tracebacks (``--tb=long`` or ``-vv``): a failed
    call is then reported with pytest's traceback instead of its one line."""
    return bool(config.option.tbstyle == "long" or config.option.verbose >= 2)


def _test_name(item: pytest.Item) -> str:
    """The test function an item runs, without its parameters: ``mod.py::test_x``."""
    if item.parent is None:
        return item.nodeid
    return f"{item.parent.nodeid}::{getattr(item, 'originalname', item.name)}"


def dataset_report_payload(
    item: pytest.Item, param: RowsParam, call: pytest.CallInfo[None], report: pytest.TestReport
) -> dict[str, Any]:
    """The payload of a dataset-level test's final report."""
    recorder = item.stash.get(DATASET_RECORDER_KEY, None)
    error = recorder.error if recorder else None
    if error is None and report.failed and call.excinfo is not None:
        excinfo = call.excinfo
        verdict = call.when == "call" and excinfo.errisinstance(
            (AssertionError, pytest.fail.Exception)
        )
        if not verdict:
            first = str(excinfo.value).splitlines()[0] if str(excinfo.value) else ""
            error = f"{item.nodeid}: {call.when} raised {excinfo.typename}: {first}"
    test = _test_name(item)
    state = run_state(item.config)
    return dataset_payload(
        param.info,
        test,
        state.eval_tests.get(param.info.name, {test}),
        # An error (bad rows included) is reported as such, not as a partial run; rows
        # left out by row_errors = "skip" make the statistics partial.
        len(recorder.rows) if recorder and not error else len(param.loaded),
        recorder.values if recorder else {},
        recorder.details if recorder else {},
        error,
        report.skipped,
    )


# Metrics that read an answer's citation markers: a run where no answer holds one the
# plugin recognises is warned about (``summary.citation_warning``).
CITATION_METRICS = frozenset({"overlap", "faithfulness", "idk_citation", "anchor_coverage"})


def _citation_census(recorder: RowRecorder | None, settings: Settings) -> dict[str, int] | None:
    """How many citation markers the row's answer holds and how many contexts it has, for
    a row that recorded a metric reading citations; ``None`` otherwise."""
    if recorder is None:
        return None
    if not (CITATION_METRICS & set(recorder.values) or "trust" in recorder.details):
        return None
    row = recorder.row
    answer = row.answer if isinstance(row.answer, str) else ""
    markers = find_citations(answer, row.context_ids, settings.citations)
    return {"markers": len(markers), "contexts": len(row.contexts or ())}


def row_report_payload(
    item: pytest.Item, param: RowParam, call: pytest.CallInfo[None], report: pytest.TestReport
) -> dict[str, Any]:
    """The payload of a row test's final report (call, or setup when setup did not pass)."""
    recorder = item.stash.get(RECORDER_KEY, None)
    error = recorder.error if recorder else None
    error = error or _row_error(param, call, report)
    state = run_state(item.config)
    test = _test_name(item)
    row = recorder.row if recorder else param.row  # a live row carries its output
    saved = recorder.saved if recorder and state.options.save_outputs else None
    return row_payload(
        param.info,
        param.row.id,
        param.row.index,
        recorder.values if recorder else {},
        recorder.breakdowns if recorder else {},
        error,
        test=test,
        eval_tests=state.eval_tests.get(param.info.name, {test}),
        skipped=report.skipped,
        evidence=recorder.evidence if recorder else {},
        details=recorder.details if recorder else {},
        fields={name: row.data[name] for name in SHOWN_FIELDS if name in row.data},
        output=saved,
        inputs=input_digest(param.row.data),
        citations=_citation_census(recorder, state.thresholds.settings),
    )
