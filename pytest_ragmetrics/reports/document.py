"""The report document: the run's results built once (``reports.model``), as the
``--ragmetrics-json`` file holds them (schema: docs/reports.md#json). The terminal
section, the Markdown summary and the HTML page are pure functions of this one document,
so they cannot disagree: each reads the model's views, and a document read back
from a JSON file is read into the model first (``model_of``).

One entry per eval, or per eval and system for a dataset of several systems; each holds
the eval's aggregates, gates, rows, stored baseline and transformations, and for an eval
whose dataset-level tests drew it, the picture of its embedding space (``projection``). With
``--ragmetrics-history``, ``history`` holds the recorded runs the trends are drawn from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.reports.model import (
    HISTORY_WINDOW as HISTORY_WINDOW,
)
from pytest_ragmetrics.reports.model import (
    ROW_STATUSES,
    EvalView,
    GateView,
    HistoryView,
    ReportModel,
)
from pytest_ragmetrics.results.history import RunRecord
from pytest_ragmetrics.results.summary import EvalSummary

GATE_STATUSES = ("passed", "failed", "skipped")

ReportDocument = dict[str, Any]


def report_document(
    summaries: Sequence[EvalSummary],
    results: Sequence[GateResult],
    settings: Settings,
    plugin_version: str,
    rows: bool = True,
    intervals: bool = False,
) -> ReportDocument:
    """The report document of a run: its version, the settings' signature, one entry per
    eval (and system), and, when some eval ran the Trust-Score suite, its judge; written
    from the typed model of the run (``reports.model.ReportModel``).

    ``rows=False`` leaves out each entry's ``rows`` (every row's values, evidence and
    fields): the terminal section, the Markdown summary and the run history read none
    of them, and held as report entries they are as much again as the run's results,
    at the end of the run, when its memory peaks. The reports that show rows (JSON,
    HTML) need a document with them.

    ``intervals``: give each eval the confidence interval of each per-row metric's mean
    and corpus statistics (``intervals``), for the written reports; the terminal does
    without them, and they cost a bootstrap per metric."""
    model = ReportModel.build(summaries, results, settings, plugin_version, rows, intervals)
    return model.as_dict()


def history_document(
    path: str, records: Sequence[RunRecord], appended: bool, note: str | None = None
) -> dict[str, Any]:
    """The ``history`` key (``reports.model.HistoryView``): where the history is, how
    many runs it records (this one included when ``appended``; ``note`` says why it was
    not), and the records of the last ``HISTORY_WINDOW`` runs, oldest first."""
    return HistoryView.of(path, records, appended, note).as_dict()


def model_of(report: ReportModel | Mapping[str, Any]) -> ReportModel:
    """``report`` as the typed model: a report document (a JSON file read back) is read
    into one (``ReportModel.from_document``)."""
    return report if isinstance(report, ReportModel) else ReportModel.from_document(report)


def entries(report: ReportModel | Mapping[str, Any]) -> tuple[EvalView, ...]:
    """The report's evals, in order."""
    return model_of(report).evals


def gates(evals: Iterable[EvalView]) -> list[GateView]:
    """The gates of ``evals``, eval by eval."""
    return [gate for view in evals for gate in view.gates]


def gate_nodeid(view: EvalView, gate: GateView) -> str:
    """How a gate is named in reports: ``<eval label>::gate::<metric.stat>``."""
    return f"{view.label}::gate::{gate.name}"


def gate_summary(evals: Iterable[EvalView]) -> str:
    """``Gates: 3 passed, 1 failed, 0 skipped``."""
    found = gates(evals)
    counts = {status: sum(g.status == status for g in found) for status in GATE_STATUSES}
    return (
        f"Gates: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    )


def row_counts(evals: Iterable[EvalView]) -> dict[str, int]:
    """How many rows passed, failed (a test's assertion on the row failed) and errored
    (``error``: the row could not be evaluated), over ``evals``."""
    counts = dict.fromkeys(ROW_STATUSES, 0)
    for view in evals:
        for status, count in view.row_statuses.items():
            counts[status] = counts.get(status, 0) + int(count)
    return counts


def run_verdict(evals: Sequence[EvalView]) -> tuple[str, bool]:
    """The headline of a run (or of some of its evals) and whether it is a clean one:
    the rows that failed, the errors (errored rows and dataset-level tests) and the gates
    that failed, each counted when there is one; else ``all gates hold``, or ``no gates
    configured``. A run with a failed or errored row never reads as clean."""
    rows = row_counts(evals)
    errors = sum(int(view.errors or 0) for view in evals)
    failed_gates = sum(gate.status == "failed" for gate in gates(evals))
    problems = [
        f"{count} {what}"
        for count, what in (
            (rows["failed"], "row(s) failed"),
            (errors, "error(s)"),
            (failed_gates, "gate(s) failed"),
        )
        if count
    ]
    if problems:
        return ", ".join(problems), False
    return ("all gates hold" if gates(evals) else "no gates configured"), True
