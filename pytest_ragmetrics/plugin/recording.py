"""What a row test or dataset-level test sends on its report (any process that runs tests).

A test's recorder (``plugin.state.RowRecorder``, ``DatasetRecorder``) collects what its
metric fixtures computed; when the test's last phase is reported, this module turns that,
with how the test ended, into a typed payload (``results.summary.RowPayload``,
``DatasetPayload``) and attaches it to the report, which reaches the controller with or
without pytest-xdist: as its wire form from an xdist worker, as itself in a process that
reports its own tests (``carry``).

How a test ended is classified in one place (``raised_error``): a failed ``assert`` or
``pytest.fail`` in the test's body is its verdict on the row; anything else raised (a
fixture's setup, a bug, a live system's exception) is an error of the row.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import DatasetError, RowError
from pytest_ragmetrics.live.system import LiveSystemError
from pytest_ragmetrics.metrics.catalog import SPECS
from pytest_ragmetrics.plugin.fixtures import own_metrics
from pytest_ragmetrics.plugin.state import (
    BATCH_PAYLOADS_KEY,
    DATASET_RECORDER_KEY,
    RECORDER_KEY,
    BatchParam,
    DatasetParam,
    RowParam,
    RowRecorder,
    RunState,
    batch_param,
    dataset_param,
    located,
    row_param,
    run_state,
)
from pytest_ragmetrics.printable import printable_line, printable_lines, printable_text
from pytest_ragmetrics.results.baseline import baseline_path, input_digest
from pytest_ragmetrics.results.summary import BatchPayload, DatasetPayload, EvalInfo, RowPayload
from pytest_ragmetrics.text.citations import holds_citation

# The report attribute the payload's wire form travels in.
PAYLOAD_ATTR = "ragmetrics"
# Row fields the reports show beside the metrics (the HTML drill-down).
SHOWN_FIELDS = ("question", "answer", "gold", "answerable")
# What the metrics that read an answer's citation markers (``MetricSpec.reads_citations``)
# record, as a value or as a row detail: a run where no answer holds a marker the plugin
# recognises is warned about (``plugin.finish.citation_warning``).
CITING = frozenset(info.name for spec in SPECS if spec.reads_citations for info in spec.records)
# What the plugin itself failed to get for a row: a live system's output, a judge's
# verdict (JudgeRowError, JudgeNotConfigured), a field a metric needs.
CALL_FAILURES = (LiveSystemError, RowError)
# Set on such a report: it is an error, even in the call phase (pytest_report_teststatus).
ERRORED_ATTR = "ragmetrics_errored"


def is_final(call: pytest.CallInfo[None], report: pytest.TestReport) -> bool:
    """Whether this is the report a payload rides on: the call, or a setup that did not
    pass (the test then has no call)."""
    return call.when == "call" or (call.when == "setup" and report.outcome != "passed")


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a row's test ended: the phase that ended it (``setup`` or ``call``), what it
    raised, and whether it failed or was skipped. A row test's outcome is its final
    report's (``of_report``); a bulk item builds one per row it runs."""

    when: str
    excinfo: pytest.ExceptionInfo[BaseException] | None
    failed: bool
    skipped: bool

    @classmethod
    def of_report(cls, call: pytest.CallInfo[None], report: pytest.TestReport) -> Outcome:
        return cls(call.when, call.excinfo, report.failed, report.skipped)


def raised_error(where: str, outcome: Outcome) -> str | None:
    """``where: <phase> raised <Type>: <first line>`` when the test failed by an exception
    that is not its verdict; ``None`` when it passed, was skipped, or its body failed an
    ``assert`` or ``pytest.fail`` (the test's verdict on the row, not an error)."""
    if not outcome.failed or outcome.excinfo is None:
        return None
    excinfo = outcome.excinfo
    if outcome.when == "call" and excinfo.errisinstance((AssertionError, pytest.fail.Exception)):
        return None
    message = str(excinfo.value).splitlines()[0] if str(excinfo.value) else ""
    return f"{where}: {outcome.when} raised {excinfo.typename}: {message}"


def call_failure(param: RowParam, outcome: Outcome) -> str | None:
    """The line a row test's error is reported with when what failed is one of
    ``CALL_FAILURES``: ``file:line: what: why``, the row's error in the reports; None for
    anything else (a failed assert is the test's verdict, another exception a bug)."""
    excinfo = outcome.excinfo
    if excinfo is None or not excinfo.errisinstance(CALL_FAILURES):
        return None
    return located(param.row, str(excinfo.value))


def wants_traceback(config: pytest.Config) -> bool:
    """Whether the run asked for full tracebacks (``--tb=long`` or ``-vv``): a failed
    call is then reported with pytest's traceback instead of its one line."""
    return bool(config.option.tbstyle == "long" or config.option.verbose >= 2)


def function_id(item: pytest.Item) -> str:
    """The test function an item runs, without its parameters: ``mod.py::test_x``."""
    if item.parent is None:
        return item.nodeid
    return f"{item.parent.nodeid}::{getattr(item, 'originalname', item.name)}"


def citation_census(recorder: RowRecorder | None, settings: Settings) -> dict[str, int] | None:
    """Whether the row's answer holds a citation marker (``cites``, 1 or 0) and how many
    contexts it has, for a row that recorded a metric reading citations; ``None``
    otherwise. All a run's warning about answers citing another way needs
    (``plugin.finish.citation_warning``)."""
    if recorder is None:
        return None
    if CITING.isdisjoint(recorder.values) and CITING.isdisjoint(recorder.details):
        return None
    row = recorder.row
    answer = row.answer if isinstance(row.answer, str) else ""
    cites = holds_citation(answer, settings.citations)
    return {"cites": int(cites), "contexts": len(row.contexts or ())}


@dataclass(frozen=True)
class PayloadContext:
    """What a row's payload takes from the run besides the row and how its test ended:
    the test function, every test of its eval, whether outputs are saved, the settings.
    Plain data, so a process that runs rows without the pytest item (a Ray worker,
    ``plugin.ray_engine``) builds the same payload.

    ``digests``: whether each row's inputs are digested (``results.baseline.input_digest``),
    which only pairing rows with a stored baseline needs: the eval has one, or the run
    writes one (``eval_digests``); ``metrics``, the metric fixtures the test function
    takes as its own arguments (each row says which of them it never called);
    ``rows_shown``, whether a report shows each row (``Options.rows_shown``, which the
    controller's ``Gathered.shown`` is too): only then is a row's evidence built, as text,
    into its payload, and its shown fields."""

    test: str
    eval_tests: tuple[str, ...]
    save_outputs: bool
    settings: Settings
    digests: bool = True
    metrics: tuple[str, ...] = ()
    rows_shown: bool = True

    @classmethod
    def of_item(cls, item: pytest.Item, param: RowParam) -> PayloadContext:
        """The context of ``item``'s rows: the same for every row of its test function and
        eval, so built once for them (collection is over when rows report)."""
        state = run_state(item.config)
        if item.parent is None:  # no test function to share it with
            return cls._of(item, param, state)
        built = item.config.stash.setdefault(PAYLOAD_CONTEXTS_KEY, {})
        key = (item.parent.nodeid, getattr(item, "originalname", item.name), param.info.label)
        context = built.get(key)
        if context is None:
            context = built[key] = cls._of(item, param, state)
        return context

    @classmethod
    def _of(cls, item: pytest.Item, param: RowParam, state: RunState) -> PayloadContext:
        test = function_id(item)
        return cls(
            test,
            tuple(sorted(state.eval_tests.get(param.info.name, {test}))),
            state.options.save_outputs is not None,
            state.thresholds.settings,
            eval_digests(param.info, state),
            tuple(own_metrics(item, _argnames(item))),
            state.options.rows_shown,
        )


def _argnames(item: pytest.Item) -> tuple[str, ...]:
    """The arguments of the test function itself, as pytest resolved them (not those of
    the fixtures it takes)."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's own, no public accessor
    return tuple(info.argnames) if info is not None else ()


def eval_digests(info: EvalInfo, state: RunState) -> bool:
    """Whether the rows of the eval ``info`` digest their inputs: it has a stored baseline
    to pair them with, or this run writes one. A baseline that appears while the rows run
    is refused when the run ends (``plugin.finish``), never paired with undigested rows."""
    if state.options.update_baseline:
        return True
    return baseline_path(state.project_root, info.module, info.name, info.system).exists()


# What every row of a test function and eval sends alike, built for its first row: by
# test module, function and eval (with its system).
PAYLOAD_CONTEXTS_KEY = pytest.StashKey[dict[tuple[str, str, str], PayloadContext]]()


def row_payload(
    item: pytest.Item, param: RowParam, recorder: RowRecorder | None, outcome: Outcome
) -> RowPayload:
    """The payload of one row: of a row test's final report, or of one row a bulk item
    ran (``recorder`` is ``None`` when the row never started: its item did not set up)."""
    return payload_for(PayloadContext.of_item(item, param), param, recorder, outcome)


def payload_for(
    context: PayloadContext, param: RowParam, recorder: RowRecorder | None, outcome: Outcome
) -> RowPayload:
    """``row_payload`` from the run's ``context`` instead of the item."""
    error = recorder.error if recorder else None
    if error is None and outcome.failed:
        error = raised_error(param.row.where(), outcome)
    evidence: dict[str, str] = {}
    if recorder is not None and recorder.evidence and context.rows_shown:
        evidence, failure = built_evidence(recorder)
        if failure is not None:
            error = failure if error is None else f"{error}\n{failure}"
    row = recorder.row if recorder else param.row  # a live row carries its output
    saved = recorder.saved if recorder and context.save_outputs else None
    return RowPayload(
        param.info,
        param.row.id,
        param.row.index,
        recorder.values if recorder else {},
        recorder.breakdowns if recorder else {},
        error,
        test=context.test,
        eval_tests=context.eval_tests,
        skipped=outcome.skipped,
        evidence=evidence,
        details=recorder.details if recorder else {},
        fields=_shown_fields(row.data) if context.rows_shown else {},
        output=saved,
        inputs=input_digest(param.row.data) if context.digests else "",
        citations=citation_census(recorder, context.settings),
        failed=outcome.failed and error is None,  # an error is not the test's verdict
        session=_session(param.row.data.get("session_id")),
        uncalled=_uncalled(context, recorder, outcome),
    )


def _shown_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The row's fields the reports show beside its metrics (``SHOWN_FIELDS``): in the
    payload only when a report shows rows, as its evidence is (the controller keeps
    neither otherwise)."""
    return {name: data[name] for name in SHOWN_FIELDS if name in data}


def built_evidence(recorder: RowRecorder) -> tuple[dict[str, str], str | None]:
    """The texts of the row's evidence, each ``Evidence`` built now, and why the row
    errors when building one raised (a user's template or function with a bug): the
    metric, the exception and how to fix it. A metric whose evidence raised has none."""
    texts: dict[str, str] = {}
    failures: list[str] = []
    for metric, evidence in recorder.evidence.items():
        if type(evidence) is str:
            texts[metric] = evidence
            continue
        try:
            texts[metric] = str(evidence)
        except Exception as raised:
            failures.append(
                f"the evidence of {metric} raised {type(raised).__name__}: {raised}; an "
                "Evidence's template must take its arguments (str.format), its function "
                "must return a string"
            )
    if not failures:
        return texts, None
    return texts, located(recorder.row, "\n".join(failures))


def _uncalled(
    context: PayloadContext, recorder: RowRecorder | None, outcome: Outcome
) -> tuple[str, ...] | None:
    """The metric fixtures the test takes and did not call on the row; ``None`` when its
    body did not run to its end on the row (a bad row, a skip, a failure or an error
    before the call), which says nothing of its calls."""
    if recorder is None or outcome.when != "call" or outcome.skipped or outcome.failed:
        return None
    called = recorder.called
    if called.issuperset(context.metrics):  # the common row: every one called
        return ()
    return tuple(name for name in context.metrics if name not in called)


def _session(value: object) -> str | None:
    """A row's ``session_id`` as the label its session is resampled by (``None``: the row
    is on its own)."""
    return None if value is None else sys.intern(str(value))


def dataset_payload(
    item: pytest.Item, param: DatasetParam, call: pytest.CallInfo[None], report: pytest.TestReport
) -> DatasetPayload:
    """The payload of a dataset-level test's final report."""
    recorder = item.stash.get(DATASET_RECORDER_KEY, None)
    error = recorder.error if recorder else None
    error = error or raised_error(item.nodeid, Outcome.of_report(call, report))
    test = function_id(item)
    state = run_state(item.config)
    return DatasetPayload(
        param.info,
        test,
        tuple(state.eval_tests.get(param.info.name, {test})),
        # An error (bad rows included) is reported as such, not as a partial run; rows
        # left out by row_errors = "skip" make the statistics partial.
        len(recorder.rows) if recorder and not error else len(param.loaded),
        recorder.values if recorder else {},
        recorder.details if recorder else {},
        error,
        report.skipped,
    )


def attach_payload(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
) -> None:
    """Attach what a row or dataset-level test recorded to its final report; a row whose
    live-system or judge call failed is marked an error and, unless tracebacks were asked
    for, reported with its one line."""
    evaluated = row_param(item) or dataset_param(item) or batch_param(item)
    if report.failed and evaluated is not None:
        printable_failure(report)
    if not is_final(call, report):
        return
    outcome = Outcome.of_report(call, report)
    param = row_param(item)
    if param is not None:
        # Taken out of the stash: the item lives to the end of the run, what its row
        # recorded (values, evidence, the metrics' memo) is in the payload from here on.
        recorder = item.stash.get(RECORDER_KEY, None)
        if recorder is not None:
            del item.stash[RECORDER_KEY]
        payload = row_payload(item, param, recorder, outcome)
        carry(item, report, payload)
        if report.passed and recorder is not None and recorder.error is None:
            _evidence_failure(report, payload)
        failure = call_failure(param, outcome) if report.failed else None
        if failure is not None:
            setattr(report, ERRORED_ATTR, True)  # an attribute: it travels from xdist workers
            if not wants_traceback(item.config):
                report.longrepr = printable_text(failure)
    rows = dataset_param(item)
    if rows is not None:
        carry(item, report, dataset_payload(item, rows, call, report))
    batch = batch_param(item)
    if batch is not None:
        # Taken out of the stash: the item lives to the end of the run, its rows need not.
        payloads = item.stash.get(BATCH_PAYLOADS_KEY, None)
        if payloads is not None:
            del item.stash[BATCH_PAYLOADS_KEY]
        else:  # the item did not set up (or -x stopped it): no row started
            payloads = [row_payload(item, row, None, outcome) for row in _unstarted(batch)]
        carry(item, report, BatchPayload(function_id(item), tuple(payloads)))


def _evidence_failure(report: pytest.TestReport, payload: RowPayload) -> None:
    """Error the passed report of a row whose payload errors all the same: only an
    evidence that raised when built (``built_evidence``) does that, and a bulk item's
    row errors for it too (its batch fails), so a row test does not read passed."""
    if payload.error is None:
        return
    report.outcome = "failed"
    report.longrepr = printable_text(payload.error)
    setattr(report, ERRORED_ATTR, True)


def printable_failure(report: pytest.TestReport) -> None:
    """Make the failure of an eval's test safe to print (``pytest_ragmetrics.printable``):
    its message and traceback quote the row's answer, id or question, which may hold
    control characters or a line that GitHub Actions would run as a workflow command."""
    longrepr = report.longrepr
    if isinstance(longrepr, str):
        report.longrepr = printable_text(longrepr)
        return
    if isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        path, line, reason = longrepr
        report.longrepr = (path, line, printable_line(reason))
        return
    chain: Any = getattr(longrepr, "chain", None)
    tracebacks = [(tb, crash) for tb, crash, _ in chain] if chain else []
    traceback: Any = getattr(longrepr, "reprtraceback", None)
    if not tracebacks and traceback is not None:
        tracebacks = [(traceback, getattr(longrepr, "reprcrash", None))]
    for traceback, crash in tracebacks:
        if crash is not None:
            crash.message = printable_text(crash.message)
        for entry in traceback.reprentries:
            entry.lines = printable_lines(entry.lines)
            args = getattr(entry, "reprfuncargs", None)
            if args is not None:
                args.args = [(name, printable_text(value)) for name, value in args.args]
            local = getattr(entry, "reprlocals", None)
            if local is not None:
                local.lines = printable_lines(local.lines)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = printable_text(crash.message)


def carry(
    item: pytest.Item,
    report: pytest.TestReport,
    payload: RowPayload | DatasetPayload | BatchPayload,
) -> None:
    """Attach ``payload`` to ``report`` in the form its receiver reads: an xdist worker's
    reports cross to the controller as plain data, so there it travels as its wire form
    (``to_dict``); a process that reports its own tests hands the payload itself to its
    ``RunSession.receive``, with no wire form to build and read back per row."""
    if hasattr(item.config, "workerinput"):
        setattr(report, PAYLOAD_ATTR, payload.to_dict())
    else:
        setattr(report, PAYLOAD_ATTR, payload)


def _unstarted(batch: BatchParam) -> list[RowParam]:
    """The rows of a batch whose item did not set up, each an error of its own: as read,
    or as the dataset's index knows them if they can no longer be read."""
    try:
        return batch.read()
    except DatasetError:
        return batch.unread()


def is_row_error(report: pytest.CollectReport | pytest.TestReport) -> bool:
    """A row whose live-system or judge call failed: an ERROR, in the call phase too."""
    return report.when == "call" and report.failed and getattr(report, ERRORED_ATTR, False)
