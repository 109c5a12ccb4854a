"""The typed report model: the run's results as frozen dataclasses, built once from the
eval summaries and the gate results (``ReportModel.build``), or read back from a report
document written earlier (``ReportModel.from_document``), and written as the report
document (``as_dict``: the ``--ragmetrics-json`` file, schema docs/reports.md#json).

Each view holds what its part of the document holds, typed, and writes its own JSON
object; the JSON keys are written in one place each, here. The terminal section, the
Markdown summary and the HTML page read the views, so they cannot disagree, and a JSON
file renders as the run that wrote it did.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.gates.evidence import GateEvidence, metric_intervals
from pytest_ragmetrics.inference.records import Evidence
from pytest_ragmetrics.metrics.catalog import BASELINE, ERRORS
from pytest_ragmetrics.metrics.hooks import NOTES_DETAIL
from pytest_ragmetrics.metrics.space.points import PICTURE_DETAIL
from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE
from pytest_ragmetrics.reports.presentation import suites
from pytest_ragmetrics.reports.projection import projection_entry
from pytest_ragmetrics.results.baseline_rows import BaselineRows, StoredRow
from pytest_ragmetrics.results.history import RunRecord
from pytest_ragmetrics.results.pairing import BaselineState
from pytest_ragmetrics.results.rowstore import MadeOnRead
from pytest_ragmetrics.results.summary import EvalSummary, RowResult, plain_rows, status_counts
from pytest_ragmetrics.results.transformations import Transformations

JSON_SCHEMA_VERSION = 1
ROW_STATUSES = ("passed", "failed", "error")
# The most recent runs of the history a report holds: enough for a trend, while the
# report stays the same size however long the history grows.
HISTORY_WINDOW = 50


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

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> RegressedRow:
        return cls(written["id"], written["before"], written["after"])


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
    stats: GateEvidence | None  # the evidence of its comparison (or of its value)
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
            stats=result.stats.view() if result.stats is not None else None,
            stats_note=result.stats_note,
        )

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> GateView:
        """The gate as a report document holds it."""
        stats = written.get("stats")
        if stats is not None and not isinstance(stats, Mapping):
            raise ValueError(f"gates[].stats of {written['name']}: {stats!r} is not an object")
        return cls(
            name=written["name"],
            rule=written["rule"],
            status=written["status"],
            passed=written.get("passed"),
            value=written.get("value"),
            bound=written.get("bound"),
            baseline=written.get("baseline"),
            message=written.get("message") or "",
            regressed=tuple(RegressedRow.from_dict(c) for c in written.get("regressed") or ()),
            notes=tuple(written.get("notes") or ()),
            stats=GateEvidence.from_dict(stats) if stats is not None else None,
            stats_note=written.get("stats_note"),
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
        document["stats"] = self.stats.as_dict() if self.stats is not None else None
        if self.stats_note:
            document["stats_note"] = self.stats_note
        return document


@dataclass(frozen=True)
class IntervalView:
    """One statistic's confidence interval for one run (an eval's ``intervals``)."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n: int
    units: int

    @classmethod
    def of(cls, evidence: Evidence) -> IntervalView:
        return cls(
            evidence.estimate,
            evidence.low,
            evidence.high,
            evidence.confidence,
            evidence.method,
            evidence.n,
            evidence.units,
        )

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> IntervalView:
        return cls(
            written["estimate"],
            written["low"],
            written["high"],
            written["confidence"],
            written["method"],
            written["n"],
            written["units"],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "method": self.method,
            "n": self.n,
            "units": self.units,
        }


def interval_document(evidence: Evidence) -> dict[str, Any]:
    """One statistic's interval for one run (an eval's ``intervals``)."""
    return IntervalView.of(evidence).as_dict()


# The keys a row's entry always has; whatever else it holds is its details (``sentences``,
# ``live``, ``short_answer``, ...), written first so these win.
_ROW_KEYS = (
    "id",
    "system",
    "question",
    "answer",
    "gold",
    "answerable",
    "metrics",
    ERRORS,
    "evidence",
    "status",
    "failed_tests",
)


@dataclass(frozen=True)
class RowView:
    """One row of an eval (``rows[]``): its fields, values, outcome and details."""

    id: str
    system: str | None
    question: Any
    answer: Any
    gold: Any
    answerable: Any
    metrics: Mapping[str, Any]
    errors: Sequence[str]
    evidence: Mapping[str, Any]
    status: str | None  # None: a document written before rows had one
    failed_tests: Sequence[str]
    details: Mapping[str, Any]  # what the metrics recorded of the row (``sentences``, ...)

    @classmethod
    def of(cls, row: RowResult, system: str | None) -> RowView:
        fields = row.fields
        return cls(
            id=row.id,
            system=system,
            question=fields.get("question"),
            answer=fields.get("answer"),
            gold=fields.get("gold"),
            answerable=fields.get("answerable"),
            metrics=row.values,
            errors=row.errors,
            evidence=row.evidence,
            status=row.status,
            failed_tests=sorted(row.failed),
            details=row.details,
        )

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> RowView:
        """The row as a report document holds it."""
        return cls(
            id=written.get("id"),  # type: ignore[arg-type]  # as written, shown as text
            system=written.get("system"),
            question=written.get("question"),
            answer=written.get("answer"),
            gold=written.get("gold"),
            answerable=written.get("answerable"),
            metrics=written.get("metrics") or {},
            errors=written.get(ERRORS) or [],
            evidence=written.get("evidence") or {},
            status=written.get("status"),
            failed_tests=written.get("failed_tests") or [],
            details={k: v for k, v in written.items() if k not in _ROW_KEYS},
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.details,  # first: the fixed keys below always win
            "id": self.id,
            "system": self.system,
            "question": self.question,
            "answer": self.answer,
            "gold": self.gold,
            "answerable": self.answerable,
            "metrics": self.metrics,
            ERRORS: list(self.errors),  # a row's own are a tuple (``RowResult``)
            "evidence": dict(self.evidence),  # a row without any shares a read-only one
            "status": self.status,
            "failed_tests": self.failed_tests,
        }


class RowViews(MadeOnRead[RowView]):
    """The rows of a run's own eval as views made when read, one at a time, from the
    summary's rows (``EvalSummary.rows``, themselves made from packed columns): a view is
    not kept, so a report that goes over a million rows holds one of them at a time, not
    the several kilobytes each that a tuple of them held at the end of the run. It reads as
    the tuple did: length, iteration, indexing, slicing and equality (with any sequence of
    equal views, a tuple read back from a document among them)."""

    def __init__(self, rows: Sequence[RowResult], system: str | None) -> None:
        self._rows = rows
        self._system = system

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> RowView: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[RowView]: ...

    def __getitem__(self, index: int | slice) -> RowView | Sequence[RowView]:
        if isinstance(index, slice):
            return RowViews(self._rows[index], self._system)
        return RowView.of(self._rows[index], self._system)

    def __iter__(self) -> Iterator[RowView]:
        system = self._system
        for row in self._rows:
            yield RowView.of(row, system)


def baseline_document(stored: BaselineState) -> dict[str, Any]:
    """The stored baseline's entry, with its aggregates (``metrics``: metric -> statistic
    -> value) when it is compared; for one whose rows pair with this run's, also each
    stored row's values (``row_values``: id -> metric -> value), so a report can draw the
    baseline's distribution beside this run's; in both, not those of a metric the
    baseline holds another version of (``not_compared``)."""
    document = stored.as_dict()
    baseline = stored.baseline
    if baseline is not None and not stored.problem:  # its aggregates, compared: "before"
        document["metrics"] = {
            metric: dict(stats)
            for metric, stats in sorted(baseline.metrics.items())
            if metric not in stored.not_compared
        }
    paired = stored.pairing is not None and not stored.problem
    if paired and baseline is not None and baseline.rows is not None:
        document[ROW_VALUES] = StoredValues(baseline.rows, frozenset(stored.not_compared))
    return document


# The key of a paired baseline's entry that holds each stored row's values.
ROW_VALUES = "row_values"


class StoredValues(Mapping[str, Mapping[str, float]]):
    """A paired baseline's ``row_values``: each stored row's values by id, in id order,
    less the metrics not compared, each row's made when read from the baseline's rows
    (``results.baseline_rows``), never all at once: a million stored rows as one dict of
    dicts held half a gigabyte, built for every run though only the JSON and HTML
    reports read it. ``as_dict`` for a reader that needs the whole dict; the JSON
    writer writes it a row at a time (``reports.write``)."""

    def __init__(self, rows: Mapping[str, StoredRow], not_compared: frozenset[str]) -> None:
        self._rows = rows
        self._not_compared = not_compared

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows if isinstance(self._rows, BaselineRows) else sorted(self._rows))

    def __getitem__(self, row_id: str) -> Mapping[str, float]:
        return self._compared(self._rows[row_id].values)

    def items(self) -> Iterator[tuple[str, Mapping[str, float]]]:  # type: ignore[override]
        """The rows in id order, each made when read (a stored baseline's walked once)."""
        if isinstance(self._rows, BaselineRows):
            return ((row_id, self._compared(row.values)) for row_id, row in self._rows.in_order())
        return ((row_id, self[row_id]) for row_id in self)

    def _compared(self, values: Mapping[str, float]) -> dict[str, float]:
        hidden = self._not_compared
        return {metric: value for metric, value in values.items() if metric not in hidden}

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {row_id: dict(values) for row_id, values in self.items()}


def transformations_of(written: Mapping[str, Any]) -> Transformations:
    """A ``transformations`` object of a report document, read back."""
    return Transformations(
        tuple(written.get("idk_to_supported") or ()),
        tuple(written.get("regressions") or ()),
        int(written.get("compared") or 0),
    )


@dataclass(frozen=True)
class BaselineView:
    """An eval's stored baseline (``baseline``), read: the entry is kept as written
    (``baseline_document``; its keys depend on its ``status``), and each part a report
    shows is read through a property, so no renderer spells its keys."""

    written: dict[str, Any]

    @property
    def path(self) -> str | None:
        return self.written.get("path")

    @property
    def status(self) -> str | None:
        """``paired``, ``not paired``, ``not compared`` or ``none stored``."""
        return self.written.get("status")

    @property
    def problem(self) -> str | None:
        """Why it is not compared."""
        return self.written.get("problem")

    @property
    def note(self) -> str | None:
        """Why its rows are not paired."""
        return self.written.get("note")

    @property
    def not_compared(self) -> Mapping[str, Sequence[str]]:
        """Metric -> what differs, for the metrics stored under another version."""
        return self.written.get("not_compared") or {}

    @property
    def coverage(self) -> float | None:
        return self.written.get("coverage")

    def count(self, what: str) -> int:
        """How many rows are ``shared``, ``added``, ``removed``, ``changed`` or
        ``stored_rows``."""
        return int(self.written.get(what) or 0)

    def ids(self, what: str) -> Sequence[str]:
        """The ids ``added``, ``removed`` or whose inputs ``changed``."""
        return self.written.get(f"{what}_ids") or ()

    @property
    def transformations(self) -> Transformations | None:
        found = self.written.get("transformations")
        return transformations_of(found) if isinstance(found, Mapping) else None

    @property
    def transformations_note(self) -> str | None:
        return self.written.get("transformations_note")

    @property
    def metrics(self) -> Mapping[str, Mapping[str, float]]:
        """The stored aggregates (metric -> statistic -> value) this run is compared
        with; empty for a baseline that is not compared."""
        return self.written.get("metrics") or {}

    @property
    def row_values(self) -> Mapping[str, Mapping[str, Any]]:
        """Each stored row's values, by id in id order, for a baseline that pairs: made
        when read for this run's (``StoredValues``), a dict for a document read back."""
        return self.written.get(ROW_VALUES) or {}

    def as_dict(self, values_marker: str | None = None) -> dict[str, Any]:
        """The entry as the JSON report writes it; ``values_marker``: its ``row_values``
        (when they are made when read) written as this text, which the JSON writer
        replaces with them a row at a time (``reports.write``)."""
        values = self.written.get(ROW_VALUES)
        if not isinstance(values, StoredValues):
            return self.written
        shown = values_marker if values_marker is not None else values.as_dict()
        return {**self.written, ROW_VALUES: shown}

    @property
    def streamed_values(self) -> StoredValues | None:
        """The ``row_values`` the JSON writer writes a row at a time, if any."""
        values = self.written.get(ROW_VALUES)
        return values if isinstance(values, StoredValues) else None


Intervals = Mapping[str, Mapping[str, IntervalView]]


@dataclass(frozen=True)
class EvalView:
    """One eval, or one system of an eval (``evals[]``).

    ``compare_to`` is the eval's reference system for a system compared with it, else
    ``None``; ``baseline`` the stored baseline's entry (``baseline_document``), ``None``
    for an eval with no stored baseline to speak of; ``transformations`` (with
    ``transformations_note`` saying why there are none) only for a compared system."""

    name: str
    label: str
    system: str | None
    compare_to: str | None
    module: str | None
    dataset: str | None
    dataset_sha256: str | None
    dataset_rows: int | None
    n: int
    errors: int
    row_statuses: Mapping[str, int]
    metrics: Mapping[str, Mapping[str, float]]
    breakdowns: Mapping[str, Mapping[str, Mapping[str, float]]]
    signatures: Mapping[str, str]
    dataset_details: Mapping[str, Any]  # the dataset-level tests' details, no picture
    dataset_errors: tuple[str, ...]
    gates: tuple[GateView, ...]
    intervals: Intervals | None  # None: not drawn
    projection: Mapping[str, Any] | None  # the picture of its embedding space, if drawn
    # None: the document leaves rows out; a run's own, views made when read (``RowViews``)
    rows: Sequence[RowView] | None
    warnings: tuple[str, ...]
    baseline: BaselineView | None
    rerun: Any
    transformations: Transformations | None
    transformations_note: str | None

    @classmethod
    def of(
        cls,
        summary: EvalSummary,
        results: Sequence[GateResult],
        rows: bool,
        intervals: Settings | None,
    ) -> EvalView:
        info, details = summary.info, summary.dataset_details
        picture = details.get(PICTURE_DETAIL)
        drawn = (
            None
            if intervals is None
            else metric_intervals(plain_rows(summary.rows), summary.metrics, intervals)
        )
        found = summary.transformations if info.compared else None
        stored = summary.stored
        return cls(
            name=info.name,
            label=info.label,
            system=info.system,
            compare_to=info.compare_to if info.compared else None,
            module=info.module,
            dataset=info.dataset,
            dataset_sha256=info.dataset_sha256,
            dataset_rows=info.dataset_rows,
            n=summary.rows_used,
            errors=summary.errors,
            row_statuses=dict.fromkeys(ROW_STATUSES, 0) | status_counts(summary.rows),
            metrics=summary.metrics,
            breakdowns=summary.breakdowns,
            signatures=summary.signatures,
            dataset_details={k: v for k, v in details.items() if k != PICTURE_DETAIL},
            dataset_errors=tuple(summary.dataset_errors),
            gates=tuple(GateView.of(r) for r in results if r.eval == info.label),
            intervals=(
                None
                if drawn is None
                else {
                    metric: {stat: IntervalView.of(evidence) for stat, evidence in stats.items()}
                    for metric, stats in drawn.items()
                }
            ),
            # a dataset-level test drew the eval's embeddings
            projection=(
                projection_entry(picture, details, summary.rows)
                if isinstance(picture, Mapping)
                else None
            ),
            rows=RowViews(summary.rows, info.system) if rows else None,
            warnings=tuple(summary.warnings),
            baseline=None if stored is None else BaselineView(baseline_document(stored)),
            rerun=info.rerun,
            transformations=found,
            transformations_note=(
                summary.transformations_note if info.compared and found is None else None
            ),
        )

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> EvalView:
        """The eval as a report document holds it."""
        level = written.get("dataset_level") or {}
        drawn = written.get("intervals")
        rows = written.get("rows")
        stored, found = written.get(BASELINE), written.get("transformations")
        return cls(
            name=written["name"],
            label=written["label"],
            system=written.get("system"),
            compare_to=written.get("compare_to"),
            module=written.get("module"),
            dataset=written.get("dataset"),
            dataset_sha256=written.get("dataset_sha256"),
            dataset_rows=written.get("dataset_rows"),
            n=written["n"],
            errors=written.get(ERRORS) or 0,
            row_statuses=written.get("row_statuses") or {},
            metrics=written.get("metrics") or {},
            breakdowns=written.get("breakdowns") or {},
            signatures=written.get("signatures") or {},
            dataset_details=level.get("details") or {},
            dataset_errors=tuple(level.get(ERRORS) or ()),
            gates=tuple(GateView.from_dict(gate) for gate in written.get("gates") or ()),
            intervals=(
                None
                if drawn is None
                else {
                    metric: {stat: IntervalView.from_dict(found) for stat, found in stats.items()}
                    for metric, stats in drawn.items()
                }
            ),
            projection=written.get("projection"),
            rows=None if rows is None else tuple(RowView.from_dict(row) for row in rows),
            warnings=tuple(written.get("warnings") or ()),
            baseline=None if stored is None else BaselineView(stored),
            rerun=written.get("rerun"),
            transformations=None if found is None else transformations_of(found),
            transformations_note=written.get("transformations_note"),
        )

    @property
    def notes(self) -> Mapping[str, Sequence[str]]:
        """What the metrics' aggregations say of the eval, each block under its title
        (``metrics.hooks.Aggregated.notes``)."""
        found = self.dataset_details.get(NOTES_DETAIL)
        return found if isinstance(found, Mapping) else {}

    def stat(self, metric: str, name: str) -> Any:
        """The aggregate ``metric.name``, ``None`` when the eval has none."""
        stats = self.metrics.get(metric)
        return stats.get(name) if isinstance(stats, Mapping) else None

    def interval(self, metric: str, name: str = "mean") -> IntervalView | None:
        """The confidence interval of ``metric.name`` for this run alone (a rate is its
        0/1 metric's mean), ``None`` when the eval has none."""
        found = (self.intervals or {}).get(metric) or {}
        return found.get("mean" if name == "rate" else name)

    def as_dict(self, rows_marker: str | None = None) -> dict[str, Any]:
        """The eval's entry; ``rows_marker``: its ``rows`` written as this text, not as a
        list of every row's object (``reports.write.report_chunks`` puts the rows in its
        place, one at a time)."""
        entry: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "system": self.system,
            "compare_to": self.compare_to,
            "module": self.module,
            "dataset": self.dataset,
            "dataset_sha256": self.dataset_sha256,
            "dataset_rows": self.dataset_rows,
            "n": self.n,
            ERRORS: self.errors,
            "row_statuses": self.row_statuses,
            "metrics": self.metrics,
            "breakdowns": self.breakdowns,
            "signatures": self.signatures,
            "dataset_level": {
                "details": self.dataset_details,
                ERRORS: list(self.dataset_errors),
            },
            "gates": [gate.as_dict() for gate in self.gates],
        }
        if self.intervals is not None:
            entry["intervals"] = {
                metric: {stat: found.as_dict() for stat, found in stats.items()}
                for metric, stats in self.intervals.items()
            }
        if self.projection is not None:
            entry["projection"] = self.projection
        if self.rows is not None:
            entry["rows"] = (
                rows_marker if rows_marker is not None else [row.as_dict() for row in self.rows]
            )
        entry["warnings"] = list(self.warnings)
        if self.baseline is not None:
            values_marker = None if rows_marker is None else f"{rows_marker}-values"
            entry[BASELINE] = self.baseline.as_dict(values_marker)
        if self.rerun is not None:
            entry["rerun"] = self.rerun
        if self.compare_to is not None:
            found = self.transformations
            entry["transformations"] = found.as_dict() if found is not None else None
            if found is None:
                entry["transformations_note"] = self.transformations_note
        return entry

    def without_rows(self) -> EvalView:
        return replace(self, rows=None)


@dataclass(frozen=True)
class TrustJudgeView:
    """How the citation numbers of the dataset-level suites (Trust-Score) were judged."""

    setting: str
    approximate: bool
    description: str

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> TrustJudgeView:
        return cls(written["setting"], written["approximate"], written["description"])

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "approximate": self.approximate,
            "description": self.description,
        }


@dataclass(frozen=True)
class HistoryView:
    """The run history a report shows (``history``, with ``--ragmetrics-history``): where
    it is, how many runs it records (this one included when ``appended``; ``note`` says
    why it was not), and the records of the last ``HISTORY_WINDOW`` runs, oldest first,
    as the history file holds them."""

    path: str
    recorded: int
    appended: bool
    note: str | None
    runs: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(
        cls, path: str, records: Sequence[RunRecord], appended: bool, note: str | None = None
    ) -> HistoryView:
        runs = tuple(record.as_dict() for record in records[-HISTORY_WINDOW:])
        return cls(path, len(records), appended, note, runs)

    @classmethod
    def from_dict(cls, written: Mapping[str, Any]) -> HistoryView:
        runs = tuple(written.get("runs") or ())
        return cls(
            written["path"],
            written.get("recorded", len(runs)),
            bool(written.get("appended")),
            written.get("note"),
            runs,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "recorded": self.recorded,
            "appended": self.appended,
            "note": self.note,
            "runs": list(self.runs),
        }


@dataclass(frozen=True)
class ReportModel:
    """The run's results, built once: the settings' signature, one view per eval (and
    system), when some eval ran a dataset-level suite its judge, and with a run history
    the runs it records."""

    plugin_version: str
    settings: Mapping[str, Any]  # Settings.signature()
    stats: Mapping[str, Any]  # the statistics settings
    evals: tuple[EvalView, ...]
    trust_judge: TrustJudgeView | None
    history: HistoryView | None = None
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

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> ReportModel:
        """The model of a report document (a ``--ragmetrics-json`` file, read back): it
        renders as the run that wrote it did."""
        judge, history = document.get("trust_judge"), document.get("history")
        return cls(
            plugin_version=str(document.get("plugin_version")),
            settings=document.get("settings") or {},
            stats=document.get("stats") or {},
            evals=tuple(EvalView.from_dict(entry) for entry in document.get("evals") or ()),
            trust_judge=None if judge is None else TrustJudgeView.from_dict(judge),
            history=None if history is None else HistoryView.from_dict(history),
            schema_version=document.get("schema_version", JSON_SCHEMA_VERSION),
        )

    def with_history(self, history: HistoryView) -> ReportModel:
        return replace(self, history=history)

    def without_rows(self) -> ReportModel:
        """The model less each eval's rows (what the run history records reads)."""
        return replace(self, evals=tuple(view.without_rows() for view in self.evals))

    def as_dict(self, rows_marker: str | None = None) -> dict[str, Any]:
        """The report document (the ``--ragmetrics-json`` file's object). ``rows_marker``:
        the ``rows`` of the eval at place ``i`` written as the text ``<rows_marker><i>``,
        for a writer that puts the rows there one at a time (``reports.write``)."""
        document: dict[str, Any] = {
            "schema_version": self.schema_version,
            "plugin_version": self.plugin_version,
            "settings": self.settings,
            "stats": self.stats,
            "evals": [
                view.as_dict(None if rows_marker is None else f"{rows_marker}{place}")
                for place, view in enumerate(self.evals)
            ],
        }
        if self.trust_judge is not None:
            document["trust_judge"] = self.trust_judge.as_dict()
        if self.history is not None:
            document["history"] = self.history.as_dict()
        return document
