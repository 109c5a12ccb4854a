"""The typed report model: the run's results as frozen dataclasses, built once from the
eval summaries and the gate results (``ReportModel.build``), and written as the report
document (``as_dict``: the ``--ragmetrics-json`` file, schema docs/reports.md#json).

Each view holds what its part of the document holds, typed, and writes its own JSON
object; the JSON keys are written in one place each, here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from pytest_ragmetrics.results.pairing import BaselineState
from pytest_ragmetrics.results.summary import EvalSummary, RowResult
from pytest_ragmetrics.results.transformations import Transformations

JSON_SCHEMA_VERSION = 1
ROW_STATUSES = ("passed", "failed", "error")


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


@dataclass(frozen=True)
class RegressedRow:
    """A paired row that breaks a gate's rule on its own: its values before and after."""

    id: str
    before: float
    after: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class GateView:
    """One gate of one eval (``gates[]``): its rule, outcome, numbers and evidence."""

    name: str
    rule: str
    status: str
    passed: bool | None
    value: float | None
    bound: float | None
    baseline: float | None
    message: str
    regressed: tuple[RegressedRow, ...]
    notes: tuple[str, ...]  # only when the baseline's rows did not pair exactly
    stats: Mapping[str, Any] | None  # the evidence of its comparison (or of its value)
    stats_note: str | None  # why a comparison has none

    @classmethod
    def of(cls, result: GateResult) -> GateView:
        return cls(
            name=result.name,
            rule=result.rule,
            status=result.status,
            passed=result.passed,
            value=result.value,
            bound=result.bound,
            baseline=result.baseline,
            message=result.message,
            regressed=tuple(
                RegressedRow(change.id, change.before, change.after) for change in result.regressed
            ),
            notes=tuple(result.notes),
            stats=result.stats.as_dict() if result.stats is not None else None,
            stats_note=result.stats_note,
        )

    def as_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "name": self.name,
            "rule": self.rule,
            "status": self.status,
            "passed": self.passed,
            "value": self.value,
            "bound": self.bound,
            "baseline": self.baseline,
            "message": self.message,
            "regressed": [change.as_dict() for change in self.regressed],
        }
        if self.notes:
            document["notes"] = list(self.notes)
        document["stats"] = self.stats
        if self.stats_note:
            document["stats_note"] = self.stats_note
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


@dataclass(frozen=True)
class RowView:
    """One row of an eval (``rows[]``): its details, fields, values and outcome."""

    result: RowResult
    system: str | None

    def as_dict(self) -> dict[str, Any]:
        row = self.result
        return {
            **row.details,  # first: the fixed keys below always win
            "id": row.id,
            "system": self.system,
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


def baseline_document(stored: BaselineState) -> dict[str, Any]:
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


@dataclass(frozen=True)
class EvalView:
    """One eval, or one system of an eval (``evals[]``)."""

    summary: EvalSummary
    gates: tuple[GateView, ...]
    intervals: Mapping[str, Mapping[str, Evidence]] | None  # None: not drawn
    rows: tuple[RowView, ...] | None  # None: the document leaves rows out

    @classmethod
    def of(
        cls,
        summary: EvalSummary,
        results: Sequence[GateResult],
        rows: bool,
        intervals: Settings | None,
    ) -> EvalView:
        label = summary.info.label
        return cls(
            summary=summary,
            gates=tuple(GateView.of(r) for r in results if r.eval == label),
            intervals=(
                None
                if intervals is None
                else metric_intervals(summary.rows, summary.metrics, intervals)
            ),
            rows=(
                tuple(RowView(row, summary.info.system) for row in summary.rows) if rows else None
            ),
        )

    @property
    def row_statuses(self) -> dict[str, int]:
        rows = self.summary.rows
        return {status: sum(row.status == status for row in rows) for status in ROW_STATUSES}

    @property
    def transformations(self) -> Transformations | None:
        return self.summary.transformations

    def as_dict(self) -> dict[str, Any]:
        summary, info = self.summary, self.summary.info
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
            "row_statuses": self.row_statuses,
            "metrics": summary.metrics,
            "breakdowns": summary.breakdowns,
            "signatures": summary.signatures,
            "dataset_level": {
                "details": {k: v for k, v in details.items() if k != PICTURE_DETAIL},
                ERRORS: list(summary.dataset_errors),
            },
            "gates": [gate.as_dict() for gate in self.gates],
        }
        if self.intervals is not None:
            entry["intervals"] = {
                metric: {stat: interval_document(evidence) for stat, evidence in stats.items()}
                for metric, stats in self.intervals.items()
            }
        picture = details.get(PICTURE_DETAIL)
        if isinstance(picture, Mapping):  # a dataset-level test drew the eval's embeddings
            entry["projection"] = projection_entry(picture, details, summary.rows)
        if self.rows is not None:
            entry["rows"] = [row.as_dict() for row in self.rows]
        entry["warnings"] = list(summary.warnings)
        if summary.stored is not None:
            entry[BASELINE] = baseline_document(summary.stored)
        if info.rerun is not None:
            entry["rerun"] = info.rerun
        if info.compared:
            found = self.transformations
            entry["transformations"] = found.as_dict() if found is not None else None
            if found is None:
                entry["transformations_note"] = summary.transformations_note
        return entry


@dataclass(frozen=True)
class TrustJudgeView:
    """How the citation numbers of the dataset-level suites (Trust-Score) were judged."""

    setting: str
    approximate: bool
    description: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "approximate": self.approximate,
            "description": self.description,
        }


@dataclass(frozen=True)
class ReportModel:
    """The run's results, built once: the settings' signature, one view per eval (and
    system), and, when some eval ran a dataset-level suite, its judge."""

    plugin_version: str
    settings: Mapping[str, Any]  # Settings.signature()
    stats: Mapping[str, Any]  # the statistics settings
    evals: tuple[EvalView, ...]
    trust_judge: TrustJudgeView | None
    schema_version: int = JSON_SCHEMA_VERSION

    @classmethod
    def build(
        cls,
        summaries: Sequence[EvalSummary],
        results: Sequence[GateResult],
        settings: Settings,
        plugin_version: str,
        rows: bool = True,
        intervals: bool = False,
    ) -> ReportModel:
        """The model of a run (``reports.document.report_document`` says what ``rows``
        and ``intervals`` leave out)."""
        judged = any(s.name in summary.metrics for s in suites() for summary in summaries)
        judge = TrustJudgeView(
            settings.trust_judge,
            settings.trust_judge == "embedding",
            trust_judge_description(settings),
        )
        return cls(
            plugin_version=plugin_version,
            settings=settings.signature(),
            stats=settings.stats.as_dict(),
            evals=tuple(
                EvalView.of(summary, results, rows, settings if intervals else None)
                for summary in summaries
            ),
            trust_judge=judge if judged else None,
        )

    def as_dict(self) -> dict[str, Any]:
        """The report document (the ``--ragmetrics-json`` file's object)."""
        document: dict[str, Any] = {
            "schema_version": self.schema_version,
            "plugin_version": self.plugin_version,
            "settings": self.settings,
            "stats": self.stats,
            "evals": [view.as_dict() for view in self.evals],
        }
        if self.trust_judge is not None:
            document["trust_judge"] = self.trust_judge.as_dict()
        return document
