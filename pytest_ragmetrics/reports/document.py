"""The report document: the run's results built once, as the ``--ragmetrics-json`` file
holds them (schema: docs/reports.md#json). The terminal section, the Markdown summary
and the HTML page are pure functions of this one document, so they cannot disagree.

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
from pytest_ragmetrics.gates.evidence import metric_intervals
from pytest_ragmetrics.inference.records import Evidence
from pytest_ragmetrics.metrics.catalog import BASELINE, ERRORS
from pytest_ragmetrics.metrics.space.points import PICTURE_DETAIL
from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE
from pytest_ragmetrics.reports.presentation import suites
from pytest_ragmetrics.reports.projection import projection_entry
from pytest_ragmetrics.results.history import RunRecord
from pytest_ragmetrics.results.pairing import BaselineState
from pytest_ragmetrics.results.summary import EvalSummary, RowResult

JSON_SCHEMA_VERSION = 1
GATE_STATUSES = ("passed", "failed", "skipped")
ROW_STATUSES = ("passed", "failed", "error")
# The most recent runs of the history a report holds: enough for a trend, while the
# report stays the same size however long the history grows.
HISTORY_WINDOW = 50

ReportDocument = dict[str, Any]


def trust_judge_description(settings: Settings) -> str:
    """How the Trust-Score citation numbers were judged (its entailment judge, the
    ``trust_judge`` setting, not the ``[judge]`` metrics), in words for every report."""
    if settings.trust_judge == "embedding":
        return (
            f"embedding similarity >= {settings.trust_judge_tau:g}, an approximation of NLI "
            "entailment: citation numbers are not comparable with published ones"
        )
    kind, _, where = settings.trust_judge.partition(":")
    if kind == LLM_TRUST_JUDGE:
        return "the [judge] LLM endpoint"
    if kind == "nli":
        return f"NLI cross-encoder {where}"
    return f"verdict table {where}"


def _gate_document(result: GateResult) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": result.name,
        "rule": result.rule,
        "status": result.status,
        "passed": result.passed,
        "value": result.value,
        "bound": result.bound,
        "baseline": result.baseline,
        "message": result.message,
        "regressed": [
            {"id": change.id, "before": change.before, "after": change.after}
            for change in result.regressed
        ],
    }
    if result.notes:  # only when the baseline's rows did not pair exactly
        document["notes"] = list(result.notes)
    # The evidence of the comparison (or, for a rule read on an interval, of the value),
    # and why a comparison has none (docs/reports.md#json, docs/statistics.md).
    document["stats"] = result.stats.as_dict() if result.stats is not None else None
    if result.stats_note:
        document["stats_note"] = result.stats_note
    return document


def interval_document(evidence: Evidence) -> dict[str, Any]:
    """One statistic's interval for one run (an eval's ``intervals``)."""
    return {
        "estimate": evidence.estimate,
        "low": evidence.low,
        "high": evidence.high,
        "confidence": evidence.confidence,
        "method": evidence.method,
        "n": evidence.n,
        "units": evidence.units,
    }


def _row_document(summary: EvalSummary, row: RowResult) -> dict[str, Any]:
    return {
        **row.details,  # first: the fixed keys below always win
        "id": row.id,
        "system": summary.info.system,
        "question": row.fields.get("question"),
        "answer": row.fields.get("answer"),
        "gold": row.fields.get("gold"),
        "answerable": row.fields.get("answerable"),
        "metrics": row.values,
        ERRORS: row.errors,
        "evidence": row.evidence,
        "status": row.status,
        "failed_tests": sorted(row.failed),
    }


def _baseline_document(stored: BaselineState) -> dict[str, Any]:
    """The stored baseline's entry; for one whose rows pair with this run's, also each
    stored row's values (``row_values``: id -> metric -> value), so a report can draw the
    baseline's distribution beside this run's; not those of a metric the baseline holds
    another version of (``not_compared``)."""
    document = stored.as_dict()
    baseline = stored.baseline
    paired = stored.pairing is not None and not stored.problem
    if paired and baseline is not None and baseline.rows is not None:
        document["row_values"] = {
            row_id: {
                metric: value
                for metric, value in row.values.items()
                if metric not in stored.not_compared
            }
            for row_id, row in sorted(baseline.rows.items())
        }
    return document


def _eval_document(
    summary: EvalSummary,
    results: Sequence[GateResult],
    rows: bool,
    intervals: Settings | None,
) -> dict[str, Any]:
    info = summary.info
    details = summary.dataset_details
    entry: dict[str, Any] = {
        "name": info.name,
        "label": info.label,
        "system": info.system,
        "compare_to": info.compare_to if info.compared else None,
        "module": info.module,
        "dataset": info.dataset,
        "dataset_sha256": info.dataset_sha256,
        "dataset_rows": info.dataset_rows,
        "n": summary.rows_used,
        ERRORS: summary.errors,
        "row_statuses": {
            status: sum(row.status == status for row in summary.rows) for status in ROW_STATUSES
        },
        "metrics": summary.metrics,
        "breakdowns": summary.breakdowns,
        "signatures": summary.signatures,
        "dataset_level": {
            "details": {k: v for k, v in details.items() if k != PICTURE_DETAIL},
            ERRORS: list(summary.dataset_errors),
        },
        "gates": [_gate_document(r) for r in results if r.eval == info.label],
    }
    if intervals is not None:
        drawn = metric_intervals(summary.rows, summary.metrics, intervals)
        entry["intervals"] = {
            metric: {stat: interval_document(evidence) for stat, evidence in stats.items()}
            for metric, stats in drawn.items()
        }
    picture = details.get(PICTURE_DETAIL)
    if isinstance(picture, Mapping):  # a dataset-level test drew the eval's embeddings
        entry["projection"] = projection_entry(picture, details, summary.rows)
    if rows:
        entry["rows"] = [_row_document(summary, row) for row in summary.rows]
    entry["warnings"] = list(summary.warnings)
    if summary.stored is not None:
        entry[BASELINE] = _baseline_document(summary.stored)
    if info.rerun is not None:
        entry["rerun"] = info.rerun
    if info.compared:
        found = summary.transformations
        entry["transformations"] = found.as_dict() if found is not None else None
        if found is None:
            entry["transformations_note"] = summary.transformations_note
    return entry


def report_document(
    summaries: Sequence[EvalSummary],
    results: Sequence[GateResult],
    settings: Settings,
    plugin_version: str,
    rows: bool = True,
    intervals: bool = False,
) -> ReportDocument:
    """The report document of a run: its version, the settings' signature, one entry per
    eval (and system), and, when some eval ran the Trust-Score suite, its judge.

    ``rows=False`` leaves out each entry's ``rows`` (every row's values, evidence and
    fields): the terminal section, the Markdown summary and the run history read none
    of them, and held as report entries they are as much again as the run's results,
    at the end of the run, when its memory peaks. The reports that show rows (JSON,
    HTML) need a document with them.

    ``intervals``: give each eval the confidence interval of each per-row metric's mean
    and corpus statistics (``intervals``), for the written reports; the terminal does
    without them, and they cost a bootstrap per metric."""
    document: ReportDocument = {
        "schema_version": JSON_SCHEMA_VERSION,
        "plugin_version": plugin_version,
        "settings": settings.signature(),
        "stats": settings.stats.as_dict(),
        "evals": [
            _eval_document(summary, results, rows, settings if intervals else None)
            for summary in summaries
        ],
    }
    # The judge of the dataset-level suites' citation numbers (Trust-Score), which their
    # tables name.
    if any(suite.name in summary.metrics for suite in suites() for summary in summaries):
        document["trust_judge"] = {
            "setting": settings.trust_judge,
            "approximate": settings.trust_judge == "embedding",
            "description": trust_judge_description(settings),
        }
    return document


def history_document(
    path: str, records: Sequence[RunRecord], appended: bool, note: str | None = None
) -> dict[str, Any]:
    """The ``history`` key: where the history is, how many runs it records (this one
    included when ``appended``; ``note`` says why it was not), and the records of the last
    ``HISTORY_WINDOW`` runs, oldest first."""
    return {
        "path": path,
        "recorded": len(records),
        "appended": appended,
        "note": note,
        "runs": [record.as_dict() for record in records[-HISTORY_WINDOW:]],
    }


def entries(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document's eval entries, in order."""
    return list(document.get("evals") or ())


def gates(evals: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The gates of ``evals``, eval by eval."""
    return [gate for entry in evals for gate in entry.get("gates") or ()]


def gate_nodeid(entry: Mapping[str, Any], gate: Mapping[str, Any]) -> str:
    """How a gate is named in reports: ``<eval label>::gate::<metric.stat>``."""
    return f"{entry.get('label')}::gate::{gate.get('name')}"


def gate_summary(evals: Iterable[Mapping[str, Any]]) -> str:
    """``Gates: 3 passed, 1 failed, 0 skipped``."""
    found = gates(evals)
    counts = {status: sum(g.get("status") == status for g in found) for status in GATE_STATUSES}
    return (
        f"Gates: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    )


def row_counts(evals: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many rows passed, failed (a test's assertion on the row failed) and errored
    (``error``: the row could not be evaluated), over ``evals``."""
    counts = dict.fromkeys(ROW_STATUSES, 0)
    for entry in evals:
        for status, count in (entry.get("row_statuses") or {}).items():
            counts[status] = counts.get(status, 0) + int(count)
    return counts


def run_verdict(evals: Sequence[Mapping[str, Any]]) -> tuple[str, bool]:
    """The headline of a run (or of some of its evals) and whether it is a clean one:
    the rows that failed, the errors (errored rows and dataset-level tests) and the gates
    that failed, each counted when there is one; else ``all gates hold``, or ``no gates
    configured``. A run with a failed or errored row never reads as clean."""
    rows = row_counts(evals)
    errors = sum(int(entry.get(ERRORS) or 0) for entry in evals)
    failed_gates = sum(gate.get("status") == "failed" for gate in gates(evals))
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
