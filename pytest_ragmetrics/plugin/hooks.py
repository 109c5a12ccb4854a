"""pytest-ragmetrics hooks. Hooks only: the work lives in the modules they call.

"Controller" is the process that reports (the only process without pytest-xdist, the
coordinating one with it); "worker" is an xdist worker. Importing this module imports
neither torch, sentence-transformers nor faiss.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics import __version__
from pytest_ragmetrics.config.project import (
    INI_KEY,
    THRESHOLDS_NAME,
    Project,
    ProjectError,
    locate_project,
)
from pytest_ragmetrics.config.thresholds import Thresholds, ThresholdsError, load_thresholds
from pytest_ragmetrics.embeddings.cache import CACHE_DIR_ENV, CACHE_DIR_NAME
from pytest_ragmetrics.embeddings.model import EmbeddingModelError, model_label, resolve_model_dir
from pytest_ragmetrics.embeddings.prepare import PrepareStats
from pytest_ragmetrics.embeddings.progress import LineProgress
from pytest_ragmetrics.files import display_path, write_atomic
from pytest_ragmetrics.gates.configcheck import check_configuration
from pytest_ragmetrics.gates.evaluate import applies
from pytest_ragmetrics.plugin.collect import MARKER_HELP, parametrize_rows
from pytest_ragmetrics.plugin.finish import finish_run, send_gate_reports
from pytest_ragmetrics.plugin.fixtures import session_texts
from pytest_ragmetrics.plugin.state import (
    ERRORED_ATTR,
    STATE_KEY,
    Options,
    RunState,
    call_failure,
    dataset_report_payload,
    embedding_store,
    eval_of,
    row_param,
    row_report_payload,
    rows_param,
    run_state,
    wants_traceback,
)
from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.markdown import markdown_summary
from pytest_ragmetrics.reports.terminal import json_document, terminal_lines
from pytest_ragmetrics.results.summary import EvalInfo

GITHUB_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
RUN_CACHE_KEY = "ragmetrics_run_cache"
RUN_ID_KEY = "ragmetrics_run_id"
PREPARE_STATS_KEY = "ragmetrics_prepare_stats"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare every --ragmetrics-* option and ini key (all processes, at start-up)."""
    group = parser.getgroup("ragmetrics", "RAG evaluation metrics and gates")
    group.addoption(
        "--ragmetrics-thresholds",
        metavar="PATH",
        default=None,
        help=f"the {THRESHOLDS_NAME} with settings and gates (default: ini {INI_KEY}, else "
        f"the nearest {THRESHOLDS_NAME} at or above the test paths)",
    )
    group.addoption(
        "--ragmetrics-limit",
        metavar="N",
        type=int,
        default=None,
        help="run only the first N rows of each dataset (of each system of a dataset of "
        "systems); gates are then skipped (default: all rows)",
    )
    group.addoption(
        "--ragmetrics-json",
        metavar="PATH",
        default=None,
        help="write the aggregates, gates and per-row values as JSON to PATH (default: off)",
    )
    group.addoption(
        "--ragmetrics-md",
        metavar="PATH",
        default=None,
        help="write a Markdown summary (tables and gates) to PATH; it is also appended to "
        f"${GITHUB_SUMMARY_ENV} when that variable is set (default: off)",
    )
    group.addoption(
        "--ragmetrics-html",
        metavar="PATH",
        default=None,
        help="write one self-contained HTML report (tables, gates, plots, transformations, "
        "per-row drill-down) to PATH (default: off)",
    )
    group.addoption(
        "--ragmetrics-update-baseline",
        action="store_true",
        default=False,
        help="store this run's aggregates and row values as each eval's baseline; this "
        "accepts them as the reference (default: off)",
    )
    group.addoption(
        "--ragmetrics-force-gates",
        action="store_true",
        default=False,
        help="check gates and allow baseline updates on partial runs or with errored rows "
        "(default: off)",
    )
    group.addoption(
        "--ragmetrics-cache-dir",
        metavar="DIR",
        default=None,
        help=f"directory of the embedding cache (default: ${CACHE_DIR_ENV} if set, "
        f"else {CACHE_DIR_NAME}/ in the project root, the thresholds file's folder)",
    )
    group.addoption(
        "--ragmetrics-no-cache",
        action="store_true",
        default=False,
        help="neither read nor write the embedding cache; texts are still encoded only once "
        "per run (default: off)",
    )
    group.addoption(
        "--ragmetrics-refresh",
        action="store_true",
        default=False,
        help="ignore cached live-system outputs and LLM-judge verdicts: call them anew "
        "and cache the new answers (default: off)",
    )
    group.addoption(
        "--ragmetrics-save-outputs",
        metavar="PATH",
        default=None,
        help="write the live systems' outputs as a JSON Lines dataset to PATH, loadable as "
        "a recorded eval (default: off)",
    )
    parser.addini(
        INI_KEY,
        "path of the thresholds file, relative to the ini file (default: the nearest "
        f"{THRESHOLDS_NAME} at or above the test paths)",
        default="",
    )


def _project(config: pytest.Config) -> Project:
    """The thresholds file in force and the project root (``pytest_ragmetrics.config.project``)."""
    try:
        return locate_project(
            invocation_dir=config.invocation_params.dir,
            args=config.args,
            option=config.getoption("ragmetrics_thresholds"),
            ini_value=str(config.getini(INI_KEY) or ""),
            inipath=config.inipath,
            rootpath=config.rootpath,
        )
    except ProjectError as error:
        raise pytest.UsageError(str(error)) from None


def _cache_dir(config: pytest.Config, root: Path) -> Path:
    """Where this process's embedding cache lives; ``--ragmetrics-no-cache`` gives the run
    a private directory (shared with xdist workers, removed at the end)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and RUN_CACHE_KEY in workerinput:
        return Path(workerinput[RUN_CACHE_KEY])
    if config.getoption("ragmetrics_no_cache"):
        return Path(tempfile.mkdtemp(prefix="ragmetrics-run-cache-"))
    chosen = config.getoption("ragmetrics_cache_dir") or os.environ.get(CACHE_DIR_ENV)
    if chosen:
        return config.invocation_params.dir / chosen
    return root / CACHE_DIR_NAME


def _check_writable(option: str, path: Path) -> None:
    """Refuse, before anything runs, an output path that cannot be written."""
    if path.is_dir():
        raise pytest.UsageError(f"{option} {path}: is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise pytest.UsageError(f"{option} {path}: cannot create {path.parent}: {error}") from None


def _options(config: pytest.Config) -> Options:
    limit = config.getoption("ragmetrics_limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--ragmetrics-limit must be at least 1, got {limit}")
    json_path = config.getoption("ragmetrics_json")
    save_outputs = config.getoption("ragmetrics_save_outputs")
    workerinput = getattr(config, "workerinput", None)
    run_id = workerinput[RUN_ID_KEY] if workerinput else uuid.uuid4().hex
    if save_outputs and workerinput is None:
        _check_writable("--ragmetrics-save-outputs", config.invocation_params.dir / save_outputs)
    md_path = config.getoption("ragmetrics_md")
    html_path = config.getoption("ragmetrics_html")
    project = _project(config)
    return Options(
        cache_dir=_cache_dir(config, project.root),
        project=project,
        limit=limit,
        json_path=config.invocation_params.dir / json_path if json_path else None,
        md_path=config.invocation_params.dir / md_path if md_path else None,
        html_path=config.invocation_params.dir / html_path if html_path else None,
        update_baseline=config.getoption("ragmetrics_update_baseline"),
        force_gates=config.getoption("ragmetrics_force_gates"),
        refresh=config.getoption("ragmetrics_refresh"),
        save_outputs=config.invocation_params.dir / save_outputs if save_outputs else None,
        run_id=run_id,
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, read thresholds.toml, set up the run state (all processes)."""
    config.addinivalue_line("markers", MARKER_HELP)
    options = _options(config)
    try:
        thresholds = load_thresholds(options.thresholds) if options.thresholds else Thresholds()
    except ThresholdsError as error:
        raise pytest.UsageError(str(error)) from None
    settings = thresholds.settings
    try:
        resolve_model_dir(settings.embedding_model, settings.base_dir)
    except EmbeddingModelError as error:
        where = f"{options.thresholds}: [settings] " if options.thresholds else ""
        raise pytest.UsageError(f"{where}{error}") from None
    config.stash[STATE_KEY] = RunState(options, thresholds, options.project.root)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(ControllerHooks(config), "ragmetrics-controller")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the cache; remove the run's private cache (``--ragmetrics-no-cache``)."""
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    if state.store is not None:
        state.store.close()
    if config.getoption("ragmetrics_no_cache") and not hasattr(config, "workerinput"):
        shutil.rmtree(state.options.cache_dir, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the thresholds file in force, the project root, the embedding model, tau_sim
    and the cache (controller)."""
    state = run_state(config)
    settings = state.thresholds.settings
    cache = (
        "off (--ragmetrics-no-cache)"
        if config.getoption("ragmetrics_no_cache")
        else display_path(state.options.cache_dir, state.project_root)
    )
    return [
        f"ragmetrics: {__version__}, {state.options.project.describe()}",
        f"ragmetrics embeddings: {model_label(settings.embedding_model)}, "
        f"tau_sim {settings.tau_sim:g}, cache {cache}",
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize tests that take `row` over their dataset (collecting process)."""
    parametrize_rows(metafunc, run_state(metafunc.config))


# tryfirst: the outermost wrapper, so the texts are embedded before anything else runs.
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Prepare, then score: embed every text the selected rows need (each process that
    runs rows; under xdist the first worker encodes while the others wait for the cache)."""
    config = session.config
    collection_failed = session.testsfailed and not config.option.continue_on_collection_errors
    if session.items and not config.option.collectonly and not collection_failed:
        texts = session_texts(session.items, run_state(config).thresholds.settings)
        if texts:
            try:
                embedding_store(config).prepare(texts, _progress(config))
            except EmbeddingModelError as error:
                raise pytest.UsageError(str(error)) from None
    return (yield)


def _progress(config: pytest.Config) -> LineProgress:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            return LineProgress(reporter.write, reporter.isatty)
    capture = config.pluginmanager.get_plugin("capturemanager")
    name = f"[{workerinput['workerid']}] ragmetrics" if workerinput else "ragmetrics"

    stream = sys.__stderr__ or sys.stderr

    def write(text: str) -> None:  # a worker's stderr is the terminal's, once uncaptured
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            stream.write(text)
            stream.flush()

    return LineProgress(write, stream.isatty(), name)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Hand this process's embedding statistics to the report (xdist: to the controller)."""
    state = run_state(session.config)
    if state.store is None:
        return
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is None:
        state.prepare_stats["main"] = state.store.stats
    else:
        session.config.workeroutput[PREPARE_STATS_KEY] = state.store.stats.as_dict()  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach what a row test or dataset-level test recorded to its final report; a
    failed live-system or judge call errors with one line (the running process)."""
    report = yield
    last = call.when == "call" or (call.when == "setup" and report.outcome != "passed")
    if not last:
        return report
    param = row_param(item)
    if param is not None:
        report.ragmetrics = row_report_payload(item, param, call, report)  # type: ignore[attr-defined]
        failure = call_failure(param, call) if report.failed else None
        if failure is not None:
            setattr(report, ERRORED_ATTR, True)  # an attribute: it travels from xdist workers
            if not wants_traceback(item.config):
                report.longrepr = failure
    rows = rows_param(item)
    if rows is not None:
        report.ragmetrics = dataset_report_payload(item, rows, call, report)  # type: ignore[attr-defined]
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(
    report: pytest.CollectReport | pytest.TestReport, config: pytest.Config
) -> tuple[str, str, str] | None:
    """A row whose live-system or judge call failed is an ERROR, in the call phase too
    (the process that reports: the controller under xdist)."""
    if report.when == "call" and report.failed and getattr(report, ERRORED_ATTR, False):
        return "error", "E", "ERROR"
    return None


class ControllerHooks:
    """Hooks of the reporting process only: registered in pytest_configure when no
    ``workerinput`` says this is an xdist worker."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.state = run_state(config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Share the run's id, and its private cache, with every xdist worker."""
        node.workerinput[RUN_ID_KEY] = self.state.options.run_id
        if self.config.getoption("ragmetrics_no_cache"):
            node.workerinput[RUN_CACHE_KEY] = str(self.state.options.cache_dir)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Keep what preparing cost on each xdist worker, for the summary."""
        stats = getattr(node, "workeroutput", {}).get(PREPARE_STATS_KEY)
        if stats is not None:
            self.state.prepare_stats[node.gateway.id] = PrepareStats(**stats)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the row payload of every report, local or from a worker."""
        payload = getattr(report, "ragmetrics", None)
        if payload is not None:
            self.state.payloads.append(payload)

    # trylast: the innermost wrapper, so the gates are reported before the terminal
    # reporter's own wrapper prints the final progress.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Before any row runs, refuse configuration that would silence a gate; after
        every row ran (or the run stopped), gate and report the gates as tests."""
        stopped: str | None = None
        # Without xdist the items are known here, so the configuration is checked and the
        # progress line counts the gates from the start; under xdist both happen when the
        # rows are back.
        collected = [info for info in map(eval_of, session.items) if info is not None]
        if collected:
            self._check_configuration(collected)
        counted = self._expected_gates(collected)
        session.testscollected += counted
        try:
            return (yield)
        except (session.Failed, session.Interrupted) as stop:
            stopped = str(stop)
            raise
        finally:
            if session.shouldfail or session.shouldstop:
                stopped = stopped or str(session.shouldfail or session.shouldstop)
            if not collected:
                reported = {EvalInfo.from_payload(p) for p in self.state.payloads}
                self._check_configuration(sorted(reported, key=lambda info: info.label))
            results = finish_run(self.state, stopped)
            infos = {s.info.label: s.info for s in self.state.summaries}
            session.testscollected += len(results) - counted
            send_gate_reports(session, results, infos)

    def _check_configuration(self, infos: list[EvalInfo]) -> None:
        """Raise a usage error for configuration that silences gates; keep the notes."""
        option = self.config.option
        narrowed = bool(
            option.keyword
            or option.markexpr
            or option.deselect
            or getattr(option, "lf", False)
            or self.config.args_source == pytest.Config.ArgsSource.ARGS
        )
        state = self.state
        findings = check_configuration(infos, state.thresholds, state.project_root, narrowed)
        if findings.errors:
            raise pytest.UsageError("\n".join(findings.errors))
        state.notes += [note for note in findings.notes if note not in state.notes]

    def _expected_gates(self, infos: list[EvalInfo]) -> int:
        evals = {info.label: info for info in infos}
        thresholds = self.state.thresholds
        return sum(
            applies(gate, info)
            for info in evals.values()
            for gate in thresholds.gates_for(info.name, info.system)
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the main table, the appendix and the gate summary."""
        if not self.state.summaries:
            return
        terminalreporter.section("ragmetrics")
        thresholds = self.state.options.thresholds
        for line in terminal_lines(
            self.state.summaries,
            self.state.gate_results,
            self.state.thresholds.settings,
            display_path(thresholds, self.state.project_root) if thresholds else None,
            [*self.state.notes, *_embedding_notes(self.state.prepare_stats)],
        ):
            terminalreporter.write_line(line)

    @pytest.hookimpl(trylast=True)  # after the module-level hook stored local statistics
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write the --ragmetrics-json, -html and -md reports (and GitHub's summary)."""
        state, settings = self.state, self.state.thresholds.settings
        options = state.options
        if options.json_path is not None or options.html_path is not None:
            document = json_document(state.summaries, state.gate_results, settings, __version__)
            if options.json_path is not None:
                text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
                write_atomic(options.json_path, text + "\n")
            if options.html_path is not None:
                write_atomic(options.html_path, render_html(document))
        github = os.environ.get(GITHUB_SUMMARY_ENV)
        if not state.summaries or (state.options.md_path is None and not github):
            return
        markdown = markdown_summary(state.summaries, state.gate_results, settings, __version__)
        if state.options.md_path is not None:
            write_atomic(state.options.md_path, markdown)
        if github:  # GitHub Actions collects what every step appends to this file
            with open(github, "a", encoding="utf-8", errors="backslashreplace") as summary:
                summary.write(markdown)


def _embedding_notes(stats: dict[str, PrepareStats]) -> list[str]:
    """One line on where the embedding time went, per process that embedded anything."""
    return [
        f"embeddings ({process}): {one.describe()}"
        for process, one in sorted(stats.items())
        if one.texts
    ]
