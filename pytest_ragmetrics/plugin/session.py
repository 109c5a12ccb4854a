"""One pytest run as the plugin sees it: the object every hook hands off to.

``RunSession`` is built at configure time in every process and kept in the config's stash.
Every process prepares embeddings and attaches what its tests recorded to their reports;
the controller (the only process without pytest-xdist, the coordinating one with it) also
gathers those payloads, finishes the run (aggregates, baselines, gates), reports the gates
as tests, and renders the reports from one document.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_ragmetrics import __version__
from pytest_ragmetrics.collector import Freezer, collector_paused
from pytest_ragmetrics.config.thresholds import Thresholds, ThresholdsError, load_thresholds
from pytest_ragmetrics.embeddings.cache import CacheDirError, ready_cache_dir
from pytest_ragmetrics.embeddings.model import EmbeddingModelError, model_label, resolve_model_dir
from pytest_ragmetrics.embeddings.prepare import EncodingError, PrepareStats
from pytest_ragmetrics.files import display_path
from pytest_ragmetrics.metrics.catalog import Catalog
from pytest_ragmetrics.metrics.custom import CorpusError
from pytest_ragmetrics.metrics.hooks import Prepared
from pytest_ragmetrics.plugin.catalog import run_catalog
from pytest_ragmetrics.plugin.collect import parametrize_rows
from pytest_ragmetrics.plugin.fixtures import (
    embeds,
    metrics_taken,
    preparations,
    prepared_rows,
    session_texts,
)
from pytest_ragmetrics.plugin.options import (
    RUN_CACHE_KEY,
    RUN_ID_KEY,
    Options,
    parse_options,
    workerinput,
)
from pytest_ragmetrics.plugin.recording import PAYLOAD_ATTR, attach_payload
from pytest_ragmetrics.plugin.state import (
    STATE_KEY,
    PreparedRows,
    RunState,
    batch_param,
    embedding_store,
    eval_of,
)
from pytest_ragmetrics.printable import printable_line
from pytest_ragmetrics.results.spool import Spool, SpoolError
from pytest_ragmetrics.results.summary import EvalInfo, Gathered, carried_payloads, carries_batch

# What runs rows, finishes a run and reports it is imported when it is needed: importing
# the plugin, which every pytest run does, needs none of it.
if TYPE_CHECKING:
    from pytest_ragmetrics.plugin.finish import Finished
    from pytest_ragmetrics.plugin.progress import BulkProgress, Display, RowsProgress
    from pytest_ragmetrics.reports.model import ReportModel
    from pytest_ragmetrics.reports.write import Comment, Unwritten
    from pytest_ragmetrics.results.history import History, RunRecord

# What an xdist worker hands back to the controller (``workeroutput``).
PREPARE_STATS_KEY = "ragmetrics_prepare_stats"
# The runs that end as runs: every test ran (or -x stopped them), some may have failed.
# Interrupted runs (Ctrl-C, collection errors, pytest.exit) and internal errors are not
# recorded in the history.
COMPLETED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


def _thresholds(options: Options, catalog: Catalog) -> Thresholds:
    """The thresholds file in force, read and checked against the run's ``catalog``; its
    embedding model resolved."""
    path = options.thresholds
    try:
        thresholds = load_thresholds(path, catalog) if path else Thresholds()
    except ThresholdsError as error:
        raise pytest.UsageError(str(error)) from None
    settings = thresholds.settings
    try:
        resolve_model_dir(settings.embedding_model, settings.base_dir)
    except EmbeddingModelError as error:
        where = f"{path}: [settings] " if path else ""
        raise pytest.UsageError(f"{where}{error}") from None
    return thresholds


def _check_judge_compare(state: RunState) -> None:
    """``--ragmetrics-judge-compare`` needs two judges that differ: ``[judge]`` and the one
    it replaces, ``[judge.previous]``; without them the option could only do nothing."""
    from pytest_ragmetrics.metrics.judge import judge_signature

    where = state.options.thresholds or "thresholds.toml"
    judge = state.thresholds.judge
    if judge is None or judge.previous is None:
        raise pytest.UsageError(
            "--ragmetrics-judge-compare compares [judge] with the judge it replaces: add a "
            f"[judge.previous] table to {where} with the keys that differ (model, prompts, "
            "base_url, ...)"
        )
    if judge_signature(judge) == judge_signature(judge.previous):
        raise pytest.UsageError(
            f"--ragmetrics-judge-compare: [judge.previous] in {where} is the same judge as "
            "[judge] (same model, prompts and temperature): nothing to compare"
        )


class RunSession:
    """The plugin's side of one pytest run, in one process."""

    def __init__(self, config: pytest.Config, state: RunState, freezer: Freezer) -> None:
        self.config = config
        self.state = state
        self.freezer = freezer  # what the run holds to its end, kept from the collector
        self.controller = workerinput(config) is None
        # The controller's findings: what the tests sent, merged row by row as it
        # arrives, then what finishing made of it. The rows' shown parts go to the spool
        # (made on its first row, removed in ``close``); a worker has no store, so none.
        self.spool = Spool() if self.controller else None
        self.spool_failure: str | None = None  # why the spool could not keep the rows
        self.pytest_session: pytest.Session | None = None  # to stop it if the spool fails
        self.gathered = Gathered(self.state.options.rows_shown, self.spool)
        self.notes: list[str] = []
        self.prepare_stats: dict[str, PrepareStats] = {}  # by process
        self.finished: Finished | None = None  # set when the rows ran (``end_loop``)
        self.expected_gates = 0  # counted in the progress line before the rows ran
        self.checked = False  # the configuration was checked before the rows ran
        self.rows_progress: RowsProgress | None = None  # in each process that runs rows
        self.bulk_progress: BulkProgress | None = None  # there too, with bulk items
        # --ragmetrics-history (controller): the history as found, then what this run did.
        self.history: History | None = None
        self.history_records: tuple[RunRecord, ...] = ()
        self.history_note: str | None = None  # why this run was not appended
        # Files the user asked for that could not be written: each fails the run.
        self.unwritten: list[Unwritten] = []

    @classmethod
    def configure(cls, config: pytest.Config, freezer: Freezer) -> RunSession:
        """Parse the options, read thresholds.toml, and keep the run's state in the stash;
        on the controller, read the run history (before any row runs, so a damaged one is
        refused at once)."""
        options = parse_options(config)
        state = RunState(options, _thresholds(options, run_catalog(config)), options.project.root)
        if state.engine == "ray" and (getattr(config.option, "numprocesses", None) or 0):
            raise pytest.UsageError(
                "the Ray engine spreads the rows over Ray's workers itself: run it without "
                "pytest-xdist's -n"
            )
        if state.engine == "ray":
            from pytest_ragmetrics.plugin import ray_engine  # Ray itself when it encodes

            ray_engine.check_usable(options)
            state.encode_chunks = ray_engine.chunk_encoder(config)
            state.encode_alone = ray_engine.alone_encoder(state.encode_chunks)
            state.encoding_device = lambda: ray_engine.encoding_device(config)
        if options.judge_compare:
            _check_judge_compare(state)
        config.stash[STATE_KEY] = state
        session = cls(config, state, freezer)
        if session.controller and options.history_dir is not None:
            from pytest_ragmetrics.results.history import HistoryError, open_history

            try:
                session.history = open_history(options.history_dir, state.project_root)
            except HistoryError as error:
                raise pytest.UsageError(str(error)) from None
            session.history_records = session.history.prior
        return session

    def close(self) -> None:
        """Close the embedding cache and the bulk evals' datasets, forget the answers'
        sentence analyses; remove the run's private cache on the controller; let go of the
        rows' results."""
        for reader in self.state.readers.values():
            reader.close()
        if self.state.store is not None:
            self.state.store.close()
            from pytest_ragmetrics.text.sentences import forget_spans

            forget_spans()  # the answers' analyses the prepare step handed over
        if self.state.ray is not None:
            from pytest_ragmetrics.plugin import ray_engine  # only a run that used Ray

            ray_engine.stop(self.config)
        if self.state.options.no_cache and self.controller:
            shutil.rmtree(self.state.options.cache_dir, ignore_errors=True)
        if self.spool is not None:  # also after a failed or interrupted run
            self.spool.close()
        # pytest holds the config, and so this session, until the process exits: freed
        # now, the rows' results are not passed over again by the interpreter's
        # collections at exit (docs/performance.md, "Per-row cost").
        self.finished = None
        for built in ("results", "document"):
            self.__dict__.pop(built, None)

    def header_lines(self) -> list[str]:
        """The thresholds file, project root, embedding model, tau_sim and cache in force."""
        state = self.state
        settings = state.thresholds.settings
        cache = (
            "off (--ragmetrics-no-cache)"
            if state.options.no_cache
            else display_path(state.options.cache_dir, state.project_root)
        )
        return [
            f"ragmetrics: {__version__}, {state.options.project.describe()}",
            f"ragmetrics embeddings: {model_label(settings.embedding_model)}, "
            f"tau_sim {settings.tau_sim:g}, cache {cache}",
        ]

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        """Give a test its rows. The rows, like the items made of them, live to the end of
        the run: the collector is paused while they are read, and then need not go over
        them again (``collector.Freezer``)."""
        with collector_paused():
            given = parametrize_rows(metafunc, self.state)
        if given:
            self.freezer.hold()

    def prepare(self, session: pytest.Session) -> None:
        """Check the cache directory when the selected rows call a live system or the
        judge, and embed every text they need, unless nothing will run."""
        config = session.config
        # Collection is over: row items hold the rows they run, and bulk items read
        # theirs when they run; whole datasets need not stay.
        self.state.datasets.clear()
        collection_failed = session.testsfailed and not config.option.continue_on_collection_errors
        if not session.items or config.option.collectonly or collection_failed:
            return
        from pytest_ragmetrics.plugin.progress import bulk_progress, display, rows_progress

        shown = display(config)
        self.rows_progress = rows_progress(session.items, self.state, shown)
        given = workerinput(config)
        share = int(given.get("workercount", 1)) if given else 1
        self.bulk_progress = bulk_progress(session.items, shown, share)
        try:
            if self.rows_progress is not None:  # live outputs or verdicts: kept in the cache
                ready_cache_dir(self.state.options.cache_dir)
            self._prepare_embeddings(session, shown)
        except (CacheDirError, EmbeddingModelError, EncodingError) as error:
            self._stop(session, str(error))
        if self.freezer.holds:  # the items, and what preparing made for them, live to the end
            self.freezer.hold()

    def _stop(self, session: pytest.Session, reason: str) -> NoReturn:
        """End the run before any row runs, saying why: a usage error; on an xdist worker
        a failed session carrying the reason, which the controller stops the run with (a
        worker's usage error would be an internal error of the controller)."""
        if self.controller:
            raise pytest.UsageError(reason)
        session.shouldfail = reason
        raise session.Failed(reason)

    def _prepare_embeddings(self, session: pytest.Session, shown: Display) -> None:
        """Run the before-rows hooks the rows' metrics declare (grounding's pre-scoring of
        overlaps) and embed the texts the rows need: the cache read first, the misses
        encoded (``CacheDirError`` when the cache directory cannot be kept,
        ``EmbeddingModelError`` or ``EncodingError`` when the texts cannot be encoded)."""
        from pytest_ragmetrics.embeddings.progress import EncodingProgress

        config = session.config
        settings = self.state.thresholds.settings
        taken = metrics_taken(session.items)  # no walk over every row for what none takes
        started = self._start_preparations(session.items, taken)
        done = {key: prepared.done for key, (_, prepared) in started.items()}
        texts = session_texts(session.items, settings, done) if embeds(taken) else []
        if texts:
            encoding = EncodingProgress(shown.lines(in_place=True))
            embedding_store(config).prepare(texts, encoding)
        self.state.prepared = {
            key: PreparedRows(fixtures, prepared.complete() if prepared.complete else prepared.done)
            for key, (fixtures, prepared) in started.items()
        }

    def _start_preparations(
        self, items: Sequence[pytest.Item], taken: frozenset[str]
    ) -> dict[str, tuple[frozenset[str], Prepared]]:
        """Call the before-rows hook of every declaration among the metric fixtures
        ``taken`` that has one, once per hook, with the rows its fixtures run on
        (``plugin.fixtures.prepared_rows``), the settings and the embedding store; by the
        hook's key, the fixtures declaring it and what it prepared so far."""
        settings = self.state.thresholds.settings
        started = {}
        for preparation, fixtures in preparations(sorted(taken)):
            rows = prepared_rows(items, fixtures)
            if rows:
                store = embedding_store(self.config)
                started[preparation.key] = (fixtures, preparation.prepare(rows, settings, store))
        return started

    def test_done(self, item: pytest.Item) -> None:
        """Write the progress of live calls and judge verdicts after a test ran."""
        if self.rows_progress is not None:
            self.rows_progress.test_done(item.nodeid, self.state)

    def end_progress(self) -> None:
        """The last progress lines, with their totals, once the rows ran."""
        if self.rows_progress is not None:
            self.rows_progress.end(self.state)
            self.rows_progress = None
        if self.bulk_progress is not None:
            self.bulk_progress.lines.finish()  # unless the last item's rows wrote it
            self.bulk_progress = None

    def attach_payload(
        self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> None:
        attach_payload(item, call, report)

    def run_batch(self, item: pytest.Function) -> bool | None:
        """Run a bulk item's rows (``plugin.bulk``), counting them in the progress of bulk
        rows; ``None``, for pytest to run it, for any other test."""
        batch = batch_param(item)
        if batch is None:
            return None
        from pytest_ragmetrics.plugin.bulk import run_batch

        progress = self.bulk_progress
        if progress is None:  # no progress was prepared (nothing was to run)
            return run_batch(item)
        with progress.running(batch.size):
            return run_batch(item, progress.count)

    def hand_over_stats(self) -> None:
        """Keep this process's embedding statistics (a worker sends them to the controller)."""
        store = self.state.store
        if store is None:
            return
        if self.controller:
            self.prepare_stats["main"] = store.stats
        else:
            self.config.workeroutput[PREPARE_STATS_KEY] = store.stats.as_dict()  # type: ignore[attr-defined]

    # The controller only, from here on.

    def configure_node(self, node: Any) -> None:
        """Share the run's id, and its private cache, with an xdist worker."""
        node.workerinput[RUN_ID_KEY] = self.state.options.run_id
        if self.state.options.no_cache:
            node.workerinput[RUN_CACHE_KEY] = str(self.state.options.cache_dir)

    def node_down(self, node: Any) -> None:
        """Keep what preparing cost on an xdist worker."""
        stats = getattr(node, "workeroutput", {}).get(PREPARE_STATS_KEY)
        if stats is not None:
            self.prepare_stats[node.gateway.id] = PrepareStats(**stats)

    def receive(self, report: pytest.TestReport) -> None:
        """Keep the payload a report carries, local or from a worker; a bulk item's batch
        becomes its rows' payloads, as their own items would have sent them."""
        payload = getattr(report, PAYLOAD_ATTR, None)
        if payload is not None:
            try:
                for read in carried_payloads(payload):
                    self.gathered.add(read)
            except SpoolError as error:
                self._spool_failed(error)
            # pytest keeps every report to the end (the terminal's statistics): drop the
            # wire form, read now, so a row's record is held once, not twice.
            delattr(report, PAYLOAD_ATTR)
            if carries_batch(payload):
                # A bulk item's rows' records live to the end of the run: kept from the
                # collector, whose full collections would otherwise walk every record
                # gathered so far, again and again (half the CPU of a run of 200,000 bulk
                # rows, docs/performance.md). Young garbage goes first, not frozen with them.
                self.freezer.hold(young_garbage=True)

    def _spool_failed(self, error: SpoolError) -> None:
        """The spool cannot keep the rows' shown parts: stop the run after the test
        running now (its gates and reports would miss rows); it fails with the reason
        (``write_reports``)."""
        self.spool_failure = self.spool_failure or str(error)
        if self.pytest_session is not None:
            self.pytest_session.shouldfail = self.spool_failure

    def start_loop(self, session: pytest.Session) -> None:
        """Without xdist the items are known before any row runs: refuse configuration
        that would silence a gate, and count the gates in the progress line; under xdist
        both happen when the rows are back (``end_loop``)."""
        self.pytest_session = session
        collected = [info for info in map(eval_of, session.items) if info is not None]
        if collected:
            self._check_configuration(collected)
        self.expected_gates = self._count_gates(collected)
        session.testscollected += self.expected_gates
        self.checked = bool(collected)

    def end_loop(self, session: pytest.Session, stopped: str | None) -> None:
        """After every row ran (or the run stopped): finish the run and report the gates
        as tests."""
        if session.shouldfail or session.shouldstop:
            stopped = stopped or str(session.shouldfail or session.shouldstop)
        from pytest_ragmetrics.plugin.finish import finish_run
        from pytest_ragmetrics.plugin.gate_reports import send_gate_reports

        if not self.checked:
            reported = self.gathered.infos.values()
            self._check_configuration(sorted(reported, key=lambda info: info.label))
        if self.spool_failure is not None:  # rows were lost: nothing to gate
            return
        try:
            thresholds = self.state.thresholds
            summaries = self.gathered.summaries(
                thresholds.settings, lambda info: thresholds.bounds(info.name, info.system)
            )
            # The summaries hold the rows now; drop the index by id.
            self.gathered = Gathered(self.state.options.rows_shown, self.spool)
            finished = self.finished = finish_run(self.state, summaries, stopped)
        except CorpusError as error:  # a metric of the user's: no number to gate or report
            raise pytest.UsageError(str(error)) from None
        except SpoolError as error:  # a spooled row could not be read back
            self._spool_failed(error)
            self.finished = None
            return
        self.notes += finished.notes
        self.unwritten += finished.unwritten
        results = finished.gate_results
        infos = {summary.info.label: summary.info for summary in finished.summaries}
        session.testscollected += len(results) - self.expected_gates
        send_gate_reports(session, results, infos)

    def _check_configuration(self, infos: list[EvalInfo]) -> None:
        """Raise a usage error for configuration that silences gates; keep the notes."""
        from pytest_ragmetrics.gates.configcheck import check_configuration

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
        self.notes += [note for note in findings.notes if note not in self.notes]

    def _count_gates(self, infos: list[EvalInfo]) -> int:
        if not infos:  # no eval collected: leave the gates' module unimported
            return 0
        from pytest_ragmetrics.gates.evaluate import applies

        evals = {info.label: info for info in infos}
        thresholds = self.state.thresholds
        return sum(
            applies(gate, info)
            for info in evals.values()
            for gate in thresholds.gates_for(info.name, info.system)
        )

    @cached_property
    def results(self) -> ReportModel:
        """The finished run's results, the report model: with every row's view only when
        a report that shows rows is written (JSON, HTML)."""
        from pytest_ragmetrics.inference import release_draws
        from pytest_ragmetrics.plugin.finish import Finished
        from pytest_ragmetrics.reports.model import ReportModel

        finished = self.finished or Finished((), (), ())
        settings = self.state.thresholds.settings
        options = self.state.options
        written = (options.json_path, options.html_path, options.md_path)
        model = ReportModel.build(
            finished.summaries,
            finished.gate_results,
            settings,
            __version__,
            self.state.options.rows_shown,
            intervals=any(path is not None for path in written),
        )
        release_draws()  # the intervals' bootstrap draws
        return model

    @cached_property
    def document(self) -> ReportModel:
        """The report model of the finished run, built once: every report renders it.
        With a run history, built after ``record_history``, so it holds this run's record."""
        if self.history is None:
            return self.results
        from pytest_ragmetrics.reports.model import HistoryView

        shown = display_path(self.history.path, self.state.project_root)
        appended = self.history_note is None
        history = HistoryView.of(shown, self.history_records, appended, self.history_note)
        return self.results.with_history(history)

    def record_history(self, exitstatus: int) -> None:
        """Append this run's record to the run history, if one is kept and the run
        completed with some eval run; otherwise say why not (``history_note``)."""
        history = self.history
        if history is None:
            return
        from pytest_ragmetrics.reports.document import entries
        from pytest_ragmetrics.results.history import (
            HistoryError,
            append_record,
            run_record,
            utc_now,
        )

        if exitstatus not in COMPLETED:
            self.history_note = f"the run did not complete (exit status {int(exitstatus)})"
        elif not entries(self.results):
            self.history_note = "no eval ran"
        else:
            record = run_record(self.results.without_rows().as_dict(), utc_now(), history.git)
            try:
                append_record(history.path, record)
            except HistoryError as error:
                from pytest_ragmetrics.reports.write import Unwritten

                self.history_note = str(error)
                self.unwritten.append(Unwritten("--ragmetrics-history", f"run history: {error}"))
                return
            self.history_records = (*self.history_records, record)

    def terminal_lines(self) -> list[str]:
        """The ragmetrics section of the terminal summary; empty when no eval ran."""
        if self.finished is None or not self.finished.summaries:
            return []
        from pytest_ragmetrics.reports.terminal import terminal_lines

        thresholds = self.state.options.thresholds
        shown = display_path(thresholds, self.state.project_root) if thresholds else None
        notes = [*self.notes, *embedding_notes(self.prepare_stats)]
        return terminal_lines(self.document, shown, notes)

    def write_reports(self, session: pytest.Session) -> None:
        """Record the run in its history, then write the --ragmetrics-json, -html and -md
        reports (and GitHub's summary); a file asked for and not written is an error of
        the run, and a run that would have passed fails."""
        from pytest_ragmetrics.reports.write import Unwritten, write_reports

        if self.spool_failure is not None:  # the rows are not all there: no report of them
            self.unwritten.append(Unwritten("spool", self.spool_failure))
            self._fail_for_unwritten(session)
            return
        self.record_history(session.exitstatus)
        options = self.state.options
        root = self.state.project_root
        self.unwritten += write_reports(
            self.document,
            options.json_path,
            options.html_path,
            options.md_path,
            lambda path: display_path(path, root),
            self._comment(session),
        )
        if self.unwritten:
            self._fail_for_unwritten(session)

    def _comment(self, session: pytest.Session) -> Comment | None:
        """The pull-request comment asked for, linking to the option's page, else the
        GitHub run's; the run has failed already when its exit status is not 0."""
        path = self.state.options.pr_comment_path
        if path is None:
            return None
        from pytest_ragmetrics.reports.comment import run_page_link
        from pytest_ragmetrics.reports.write import Comment

        link = self.state.options.pr_comment_link or run_page_link(os.environ)
        failed = session.exitstatus != pytest.ExitCode.OK or bool(self.unwritten)
        return Comment(path, link, failed)

    def annotation_lines(self) -> list[str]:
        """Under GitHub Actions (and not ``--ragmetrics-annotations=off``), the workflow
        commands that annotate the failed gates and the errored or failing rows."""
        finished = self.finished
        if finished is None or not self.state.options.annotations:
            return []
        from pytest_ragmetrics.plugin.annotate import (
            WORKSPACE_ENV,
            annotations_of,
            under_github,
        )

        if not under_github(os.environ):
            return []
        from pytest_ragmetrics.reports.annotations import annotation_commands

        workspace = os.environ.get(WORKSPACE_ENV)
        repository = Path(workspace) if workspace else self.config.rootpath
        gates, rows, left = annotations_of(
            finished.gate_results,
            finished.summaries,
            self.state.options.thresholds,
            self.state.project_root,
            repository,
        )
        return annotation_commands(gates, rows, left)

    def _fail_for_unwritten(self, session: pytest.Session) -> None:
        """Each file not written as an error in pytest's summary (the ERRORS section, the
        short summary, the count in the last line), or on stderr without a terminal; the
        exit status of a run that would have passed is 1, any other is kept."""
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for unwritten in self.unwritten:
            if reporter is None:
                sys.stderr.write(f"ERROR: {printable_line(unwritten.message)}\n")
                continue
            reporter.stats.setdefault("error", []).append(unwritten_report(unwritten))


def unwritten_report(unwritten: Unwritten) -> pytest.TestReport:
    """A file that was not written as the report of an error (``ragmetrics::<option>``),
    so pytest lists and counts it like any other."""
    nodeid = f"ragmetrics::{unwritten.what}"
    location = ("ragmetrics", None, f"writing {unwritten.what}")
    now = time.time()
    message = printable_line(unwritten.message)
    return pytest.TestReport(
        nodeid, location, {}, "failed", message, "teardown", (), 0.0, now, now, []
    )


def embedding_notes(stats: dict[str, PrepareStats]) -> Sequence[str]:
    """One line on where the embedding time went, per process that embedded (or read)
    anything."""
    return [
        f"embeddings ({process}): {one.describe()}"
        for process, one in sorted(stats.items())
        if one.used
    ]
