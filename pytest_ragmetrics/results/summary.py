"""Merging per-row records into per-eval aggregates (on the controller).

Each row test sends one small payload on its report (``RowPayload``, as plain JSON-like
data: xdist serialises report attributes); a dataset-level test (one that takes ``rows``)
sends the statistics it computed over all rows (``DatasetPayload``). This module merges
them: payloads of several tests over the same row are combined, rows are put back in
dataset order, every metric is aggregated (``pytest_ragmetrics.results.stats``), corpus
statistics are computed from summed per-row sufficient statistics (``CORPUS_STATS`` of
``pytest_ragmetrics.metrics.catalog``), and dataset-level statistics are added as they
are. The result depends only on the set of payloads, not on the order they arrived in, so
aggregates are bit-identical with and without pytest-xdist.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.metrics.base import Aggregate, Bounds, MetricSettings
from pytest_ragmetrics.metrics.catalog import ERRORS, SIGNATURES, UNJUDGED, in_force
from pytest_ragmetrics.metrics.hooks import NOTES_DETAIL
from pytest_ragmetrics.metrics.prices import NO_PRICES, Prices
from pytest_ragmetrics.metrics.registry import UnknownAggregate, metric_info
from pytest_ragmetrics.results.rowstore import RowStore, StoredRows
from pytest_ragmetrics.results.stats import aggregate

if TYPE_CHECKING:
    from pytest_ragmetrics.results.pairing import BaselineState
    from pytest_ragmetrics.results.transformations import Transformations

# The row detail a live system's output is described in (``plugin.fixtures``).
LIVE_DETAIL = "live"


@dataclass(frozen=True)
class EvalInfo:
    """What an eval runs over: its name, the module that defines it, and its dataset.

    For a dataset of several systems (docs/metrics.md#3-comparing-systems) there is one
    ``EvalInfo`` per system: ``dataset_rows`` counts that system's rows, ``compare_to``
    names the eval's reference system (the marker's ``compare_to``), ``system_index`` is the
    system's place in the dataset. ``rerun`` is the display path of the second run of the
    same rows (``determinism``), if the marker names one.
    """

    name: str
    module: str
    dataset: str
    dataset_sha256: str
    dataset_rows: int
    system: str | None = None
    system_index: int = 0
    compare_to: str | None = None
    rerun: str | None = None
    rerun_sha256: str | None = None
    test_path: str = ""  # the module's path in pytest's node ids (relative to its rootdir)
    systems: tuple[str, ...] = ()  # every system of the dataset (or live eval), in order

    @property
    def label(self) -> str:
        """How reports and gate ids name it: ``evals/test_study.py[config_a]``."""
        return self.name if self.system is None else f"{self.name}[{self.system}]"

    @property
    def compared(self) -> bool:
        """True for a system that is compared with the eval's reference system."""
        return self.compare_to is not None and self.system != self.compare_to

    def as_payload(self) -> dict[str, Any]:
        return {
            "eval": self.name,
            "module": self.module,
            "dataset": self.dataset,
            "dataset_sha256": self.dataset_sha256,
            "dataset_rows": self.dataset_rows,
            "system": self.system,
            "system_index": self.system_index,
            "compare_to": self.compare_to,
            "rerun": self.rerun,
            "rerun_sha256": self.rerun_sha256,
            "test_path": self.test_path,
            "systems": list(self.systems),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> EvalInfo:
        return cls(
            payload["eval"],
            payload["module"],
            payload["dataset"],
            payload["dataset_sha256"],
            payload["dataset_rows"],
            payload.get("system"),
            payload.get("system_index", 0),
            payload.get("compare_to"),
            payload.get("rerun"),
            payload.get("rerun_sha256"),
            payload.get("test_path", ""),
            tuple(payload.get("systems", ())),
        )


class PayloadError(ValueError):
    """A report carried a ``ragmetrics`` payload this version cannot read."""


# The keys of each payload's wire form besides the eval's (``EvalInfo.as_payload``).
_ROW_KEYS = frozenset(
    {"row", "inputs", "fields", "index", "values", "breakdowns", "error", "test"}
    | {"eval_tests", "skipped", "evidence", "details", "output", "citations", "failed"}
    | {"session", "uncalled"}
)
_DATASET_KEYS = frozenset(
    {"kind", "test", "eval_tests", "rows", "values", "details", "error", "skipped"}
)
_INFO_KEYS = frozenset(EvalInfo("", "", "", "", 0).as_payload())
DATASET_KIND = "dataset"
BATCH_KIND = "batch"


def _malformed(payload: Mapping[str, Any], what: str) -> PayloadError:
    test = payload.get("test", "?") if isinstance(payload, Mapping) else "?"
    return PayloadError(
        f"ragmetrics payload of {test}: {what}; the controller and the xdist workers must "
        "run the same pytest-ragmetrics version"
    )


def _checked(
    payload: Mapping[str, Any], keys: frozenset[str], types: Mapping[str, type | tuple[type, ...]]
) -> None:
    """Raise ``PayloadError`` unless ``payload`` has exactly ``keys`` (plus the eval's)
    and each key of ``types`` holds a value of that type."""
    expected = keys | _INFO_KEYS
    missing, unknown = sorted(expected - set(payload)), sorted(set(payload) - expected)
    if missing or unknown:
        parts = [f"missing {', '.join(missing)}"] if missing else []
        parts += [f"unknown {', '.join(unknown)}"] if unknown else []
        raise _malformed(payload, "; ".join(parts))
    for key, kind in types.items():
        if not isinstance(payload[key], kind):
            raise _malformed(payload, f"{key} is {type(payload[key]).__name__}")


@dataclass(frozen=True, slots=True)
class RowPayload:
    """The record one row test sends to the controller on its report.

    ``test`` is the test function that ran the row, ``eval_tests`` every test function of
    the eval that the sending process collected (deselected ones included), so the
    controller can tell a complete eval from a partial one. ``fields`` carries the row's
    fields that the reports show (question, answer, gold, answerable); ``output``, a live
    row's line for ``--ragmetrics-save-outputs`` (sent only with that option); ``inputs``,
    the digest of the row's inputs that pairs it with a stored baseline's row
    (``pytest_ragmetrics.results.baseline.input_digest``); ``citations``, for a row whose
    test recorded a metric that reads citations, the markers its answer holds and its
    contexts; ``failed``, whether the test's own verdict on the row failed (an ``assert``
    or ``pytest.fail`` in its body, not an error); ``session``, the row's ``session_id``
    (rows of one session are resampled together when runs are compared); ``uncalled``,
    the metric fixtures the test takes but did not call on the row (``None`` when its
    body did not run on the row). xdist serialises report attributes, so it travels as
    ``to_dict()``: plain, small, JSON-able.
    """

    info: EvalInfo
    row: str
    index: int
    values: Mapping[str, float]
    breakdowns: Mapping[str, Mapping[str, float]]
    error: str | None
    test: str = "test"
    eval_tests: tuple[str, ...] = ("test",)
    skipped: bool = False
    evidence: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, Any] = field(default_factory=dict)
    output: Mapping[str, Any] | None = None
    inputs: str = ""
    citations: Mapping[str, int] | None = None
    failed: bool = False
    session: str | None = None
    uncalled: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "eval_tests", tuple(sorted(self.eval_tests)))
        # Every row of an eval names the same few test functions: one string each, shared
        # by the rows' records on the controller, not one copy per row.
        object.__setattr__(self, "test", sys.intern(self.test))

    def to_dict(self) -> dict[str, Any]:
        """The wire form, attached to the test's report."""
        return {
            **self.info.as_payload(),
            "row": self.row,
            "inputs": self.inputs,
            "fields": dict(self.fields),
            "index": self.index,
            "values": dict(self.values),
            "breakdowns": {name: dict(parts) for name, parts in self.breakdowns.items()},
            "error": self.error,
            "test": self.test,
            "eval_tests": list(self.eval_tests),
            "skipped": self.skipped,
            "evidence": dict(self.evidence),
            "details": dict(self.details),
            "output": dict(self.output) if self.output is not None else None,
            "citations": dict(self.citations) if self.citations is not None else None,
            "failed": self.failed,
            "session": self.session,
            "uncalled": list(self.uncalled) if self.uncalled is not None else None,
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> RowPayload:
        """Read the wire form back; ``PayloadError`` if it is not one."""
        _checked(
            payload,
            _ROW_KEYS,
            {
                "row": str,
                "index": int,
                "values": dict,
                "breakdowns": dict,
                "error": (str, type(None)),
                "test": str,
                "eval_tests": list,
                "skipped": bool,
                "evidence": dict,
                "details": dict,
                "fields": dict,
                "output": (dict, type(None)),
                "inputs": str,
                "citations": (dict, type(None)),
                "failed": bool,
                "session": (str, type(None)),
                "uncalled": (list, type(None)),
            },
        )
        return cls(
            EvalInfo.from_payload(payload),
            payload["row"],
            payload["index"],
            dict(payload["values"]),
            {name: dict(parts) for name, parts in payload["breakdowns"].items()},
            payload["error"],
            payload["test"],
            tuple(payload["eval_tests"]),
            payload["skipped"],
            dict(payload["evidence"]),
            dict(payload["details"]),
            dict(payload["fields"]),
            dict(payload["output"]) if payload["output"] is not None else None,
            payload["inputs"],
            dict(payload["citations"]) if payload["citations"] is not None else None,
            payload["failed"],
            payload["session"],
            tuple(payload["uncalled"]) if payload["uncalled"] is not None else None,
        )


@dataclass(frozen=True)
class DatasetPayload:
    """The record a dataset-level test (one that takes ``rows``) sends to the controller:
    the statistics of each dataset-level metric it computed over ``rows`` rows."""

    info: EvalInfo
    test: str
    eval_tests: tuple[str, ...]
    rows: int
    values: Mapping[str, Mapping[str, float]]
    details: Mapping[str, Any]
    error: str | None
    skipped: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "eval_tests", tuple(sorted(self.eval_tests)))

    def to_dict(self) -> dict[str, Any]:
        """The wire form, attached to the test's report."""
        return {
            **self.info.as_payload(),
            "kind": DATASET_KIND,
            "test": self.test,
            "eval_tests": list(self.eval_tests),
            "rows": self.rows,
            "values": {name: dict(stats) for name, stats in self.values.items()},
            "details": dict(self.details),
            "error": self.error,
            "skipped": self.skipped,
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> DatasetPayload:
        """Read the wire form back; ``PayloadError`` if it is not one."""
        _checked(
            payload,
            _DATASET_KEYS,
            {
                "test": str,
                "eval_tests": list,
                "rows": int,
                "values": dict,
                "details": dict,
                "error": (str, type(None)),
                "skipped": bool,
            },
        )
        return cls(
            EvalInfo.from_payload(payload),
            payload["test"],
            tuple(payload["eval_tests"]),
            payload["rows"],
            {name: dict(stats) for name, stats in payload["values"].items()},
            dict(payload["details"]),
            payload["error"],
            payload["skipped"],
        )


@dataclass(frozen=True)
class BatchPayload:
    """The record a test item of a bulk eval sends: one ``RowPayload`` per row it ran, each
    exactly what that row's own test item would have sent in row mode, so the controller
    expands it (``payloads_from_dict``) and nothing downstream knows the difference."""

    test: str
    rows: tuple[RowPayload, ...]

    def to_dict(self) -> dict[str, Any]:
        """The wire form, attached to the item's report."""
        return {"kind": BATCH_KIND, "test": self.test, "rows": [row.to_dict() for row in self.rows]}

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> BatchPayload:
        """Read the wire form back; ``PayloadError`` if it is not one."""
        keys = {"kind", "test", "rows"}
        if set(payload) != keys:
            raise _malformed(payload, f"a batch has exactly the keys {', '.join(sorted(keys))}")
        if not isinstance(payload["test"], str) or not isinstance(payload["rows"], list):
            raise _malformed(payload, "a batch has a test name and a list of rows")
        rows = []
        for row in payload["rows"]:
            if not isinstance(row, Mapping) or "kind" in row:
                raise _malformed(payload, "a batch's rows are row payloads")
            rows.append(RowPayload.from_dict(row))
        return cls(payload["test"], tuple(rows))


Payload = RowPayload | DatasetPayload


def payload_from_dict(payload: object) -> Payload | BatchPayload:
    """The payload a report carried, by its ``kind``; ``PayloadError`` for anything else,
    so a record is never dropped without a word."""
    if not isinstance(payload, Mapping):
        raise PayloadError(f"ragmetrics payload: expected a mapping, got {type(payload).__name__}")
    kind = payload.get("kind")
    if kind == DATASET_KIND:
        return DatasetPayload.from_dict(payload)
    if kind == BATCH_KIND:
        return BatchPayload.from_dict(payload)
    if kind is not None:
        raise _malformed(payload, f"unknown kind {kind!r}")
    return RowPayload.from_dict(payload)


def payloads_from_dict(payload: object) -> tuple[Payload, ...]:
    """The row and dataset payloads a report carried: a batch's rows, or the one payload."""
    read = payload_from_dict(payload)
    return read.rows if isinstance(read, BatchPayload) else (read,)


def carried_payloads(payload: object) -> tuple[Payload, ...]:
    """The row and dataset payloads a report carried, as its wire form (from an xdist
    worker: read back, checked) or as itself (in the process that ran the test)."""
    if isinstance(payload, BatchPayload):
        return payload.rows
    if isinstance(payload, RowPayload | DatasetPayload):
        return (payload,)
    return payloads_from_dict(payload)


def carries_batch(payload: object) -> bool:
    """Whether a report's payload is a bulk item's rows, as itself or its wire form."""
    if isinstance(payload, Mapping):
        return payload.get("kind") == BATCH_KIND
    return isinstance(payload, BatchPayload)


def merge_details(details: dict[str, Any], new: Mapping[str, Any]) -> None:
    """Add ``new`` row details to ``details``, the same whichever arrives first: a detail
    under a metric's name that declares how its details merge (``MetricInfo.merge``: the
    judge's records, per metric) merges so, a live output counts as called in this run if
    any test of the row called it, and any other detail is replaced. Used within a test
    (several fixtures) and across the tests of a row."""
    for name, detail in new.items():
        if name in details:
            detail = _merged(name, details[name], detail)
        details[name] = detail


def _merged(name: str, old: Any, new: Any) -> Any:
    """Two details of one row under ``name``, merged (``merge_details``)."""
    if name == LIVE_DETAIL:
        return {**new, "cached": new["cached"] and old["cached"]}
    info = in_force().metrics.get(name)
    merge = info.merge if info is not None else None
    return new if merge is None else merge(old, new)


@functools.lru_cache(maxsize=1024)
def _with_test(tests: frozenset[str], test: str) -> frozenset[str]:
    """``tests`` and ``test``, one shared object for the same tests: the rows of an eval
    name the same few test functions, and a set is 216 bytes a row on the controller."""
    return tests | {test}


@functools.lru_cache(maxsize=1024)
def _census(counts: tuple[tuple[str, int], ...]) -> Mapping[str, int]:
    """A row's citation census, read-only and shared by the rows with the same counts."""
    return MappingProxyType(dict(counts))


# What a row without evidence, details or shown fields holds: one read-only empty mapping
# shared by all of them (each empty dict was 64 bytes a row on the controller), replaced
# by the row's own dict when the first entry comes (``RowResult.merge``).
NOTHING: Mapping[str, Any] = MappingProxyType({})


def _nothing() -> Mapping[str, Any]:
    return NOTHING


@dataclass(slots=True)
class RowResult:
    """Everything recorded for one row of an eval, over all the tests that ran it.

    The controller holds one per row to the end of the run, so it has slots, its sets of
    test names and its citation census are shared between rows (``_with_test``,
    ``_census``) rather than copied into each, and so are its empty evidence, details,
    shown fields (``NOTHING``) and errors (``()``): read-only, so nothing can write into
    what every row shares; ``merge`` gives a row its own when it has some.
    """

    id: str
    index: int
    values: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, float]] = field(default_factory=dict)
    evidence: Mapping[str, str] = field(default_factory=_nothing)
    details: Mapping[str, Any] = field(default_factory=_nothing)
    errors: tuple[str, ...] = ()
    tests: frozenset[str] = frozenset()
    fields: Mapping[str, Any] = field(
        default_factory=_nothing
    )  # question, answer, gold, answerable
    output: dict[str, Any] | None = None  # a live row's saved line (--ragmetrics-save-outputs)
    inputs: str = ""  # digest of the row's inputs (pytest_ragmetrics.results.baseline.input_digest)
    citations: Mapping[str, int] | None = None  # markers and contexts, if citations were read
    failed: frozenset[str] = frozenset()  # tests whose verdict on the row failed
    session: str | None = None  # its session_id: resampled with the session's other rows

    @property
    def status(self) -> str:
        """``error`` when the row errored, ``failed`` when a test's verdict on it failed,
        else ``passed``."""
        return "error" if self.errors else "failed" if self.failed else "passed"

    @property
    def ran(self) -> bool:
        """True when some test ran the row (a skip counts only if the row was bad)."""
        return bool(self.tests)

    def merge(self, payload: RowPayload, shown: bool = True) -> None:
        """Add what one test sent for the row; its evidence and shown fields only when
        ``shown`` (``Gathered.shown``)."""
        # An unjudged row (its proxy relevance label NULL) is skipped but counts as run:
        # it is in the eval, counted by `unjudged`, with no value to average.
        unjudged = payload.values.get(UNJUDGED) == 1.0
        if not payload.skipped or payload.error or unjudged:
            self.tests = _with_test(self.tests, payload.test)
        if payload.failed:
            self.failed = _with_test(self.failed, payload.test)
        self.inputs = payload.inputs or self.inputs
        self.session = payload.session or self.session
        if payload.citations is not None:
            self.citations = _census(tuple(payload.citations.items()))
        for metric, value in payload.values.items():
            if metric in self.values and self.values[metric] != value:
                self.errors = (
                    *self.errors,
                    f"{metric} recorded twice with different values "
                    f"({self.values[metric]!r} and {value!r})",
                )
                continue
            self.values[metric] = value
        for name, parts in payload.breakdowns.items():
            self.breakdowns.setdefault(name, {}).update(parts)
        if shown and payload.evidence:
            self.evidence = {**self.evidence, **payload.evidence}
        if shown and payload.fields:
            self.fields = {**self.fields, **payload.fields}
        if payload.details:
            details = dict(self.details)
            merge_details(details, payload.details)
            self.details = details
        if payload.output is not None:
            self.output = dict(payload.output)
        if payload.error and payload.error not in self.errors:
            self.errors = (*self.errors, payload.error)


@dataclass(frozen=True)
class EvalSummary:
    """One eval's rows in dataset order and their aggregates.

    ``rows`` is a ``StoredRows`` for a gathered eval: each row made on access from the
    packed store (``pytest_ragmetrics.results.rowstore``), so a reader that goes over a
    big eval's rows should use each one and let it go, not keep them all."""

    info: EvalInfo
    rows: Sequence[RowResult]
    metrics: dict[str, dict[str, float]]
    breakdowns: dict[str, dict[str, dict[str, float]]]
    coverage: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    # Dataset-level tests: what they found beyond the statistics, and how they failed.
    dataset_details: dict[str, Any] = field(default_factory=dict)
    dataset_errors: tuple[str, ...] = ()
    # A system compared with the eval's reference system (pytest_ragmetrics.results.compare).
    transformations: Transformations | None = None
    transformations_note: str | None = None
    # The stored baseline file and how this run's rows pair with it (set at the end).
    stored: BaselineState | None = None
    # What makes some numbers of the eval doubtful, for every report (set at the end).
    warnings: tuple[str, ...] = ()
    # How its numbers were computed, sacrebleu's way ("bleu" -> "nrefs:1|case:mixed|...").
    signatures: dict[str, str] = field(default_factory=dict)
    # (test, metric fixture, rows it ran): a fixture the test takes but called on none of
    # the rows its body ran on, so nothing of it was recorded.
    uncalled: tuple[tuple[str, str, int], ...] = ()

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def rows_used(self) -> int:
        """Rows that row tests ran, or for an eval of dataset-level tests only, the rows
        those tests were computed over."""
        return self.n or max(self.coverage.values(), default=0)

    @functools.cached_property
    def errors(self) -> int:
        """Errored rows and dataset-level tests (counted once: every gate's message and
        every report reads it)."""
        return sum(1 for row in whole_rows(self.rows) if row.errors) + len(self.dataset_errors)

    def incomplete_tests(self) -> dict[str, int]:
        """Test functions of the eval that ran fewer rows than the dataset has."""
        rows = self.info.dataset_rows
        return {test: ran for test, ran in self.coverage.items() if ran < rows}


def whole_rows(rows: Sequence[RowResult]) -> Iterable[RowResult]:
    """The rows that can have errors, details, evidence, shown fields, outputs or
    sessions: of a gathered eval, only those its store keeps whole (the others hold
    numbers only); of any other sequence, all."""
    return rows.whole_rows() if isinstance(rows, StoredRows) else rows


def _breakdowns_of(rows: Sequence[RowResult], name: str) -> Iterator[Mapping[str, float]]:
    """The breakdown ``name`` of each row that has it, in order, one at a time."""
    if isinstance(rows, StoredRows):
        return rows.breakdowns_of(name)
    return (row.breakdowns[name] for row in rows if name in row.breakdowns)


def _aggregate_breakdown(rows: Sequence[RowResult], name: str) -> dict[str, dict[str, float]]:
    """Per part: ``sum`` and ``mean`` over the rows that have the breakdown at all.

    A row without a part counts 0 for it, so the parts' means add up to the whole's.
    The rows' breakdowns are read one at a time (twice), not held together.
    """
    having, found = 0, set[str]()
    for breakdown in _breakdowns_of(rows, name):
        having += 1
        found.update(breakdown)
    result = {}
    for part in sorted(found):
        total = math.fsum(breakdown.get(part, 0.0) for breakdown in _breakdowns_of(rows, name))
        result[part] = {"sum": total, "mean": total / having}
    return result


def _binary(metric: str) -> bool:
    try:
        return metric_info(metric).binary
    except UnknownAggregate:
        return False  # recorded by a user's own code: plain statistics


def _sums(
    breakdowns: Mapping[str, Mapping[str, Mapping[str, float]]], name: str | None
) -> dict[str, float]:
    """The summed parts of the breakdown ``name`` (none when it is ``None`` or absent)."""
    parts = breakdowns.get(name, {}) if name is not None else {}
    return {part: stats["sum"] for part, stats in parts.items()}


def _add_corpus_stats(
    metrics: dict[str, dict[str, float]],
    breakdowns: dict[str, dict[str, dict[str, float]]],
    settings: MetricSettings,
) -> None:
    """Statistics computed from summed per-row sufficient statistics (``bleu.corpus``)
    under the run's settings (``chrf.corpus`` reads its beta)."""
    for metric, (breakdown, reduce) in in_force().corpus_stats.items():
        if metric in metrics and breakdown in breakdowns:
            metrics[metric].update(reduce(_sums(breakdowns, breakdown), settings))


def signatures(
    metrics: Mapping[str, Mapping[str, float]],
    breakdowns: Mapping[str, Mapping[str, Mapping[str, float]]],
    settings: MetricSettings,
) -> dict[str, str]:
    """The signature strings of the recorded metrics that have one (``bleu``,
    ``bleu.corpus``), from the run's settings and the rows' summed statistics."""
    found: dict[str, str] = {}
    for metric, (breakdown, sign) in SIGNATURES.items():
        if metric in metrics:
            found.update(sign(settings, _sums(breakdowns, breakdown)))
    return found


def _aggregating() -> list[tuple[str, Aggregate]]:
    """The metrics in the catalog that declare how their rows' details become eval-level
    statistics (``MetricInfo.aggregate``), each with its hook, in the catalog's order."""
    return [(info.name, info.aggregate) for info in in_force().metrics.values() if info.aggregate]


@dataclass(frozen=True)
class EvalContext:
    """What an aggregation hook reads of its eval (``metrics.base.AggregateContext``)."""

    bounds: Bounds
    stats: StatsSettings
    prices: Prices = NO_PRICES  # [settings.prices]: the judge's tokens are priced with them


def _add_aggregated(
    metrics: dict[str, dict[str, float]],
    rows: Sequence[RowResult],
    details: dict[str, Any],
    context: EvalContext,
) -> None:
    """The eval-level statistics of each metric that declares them from its rows' details
    (the Trust-Score suite, the LLM judge's accounting, a judge metric's repeats and
    agreement), given the rows' details under its name in dataset order, the per-row
    aggregates and the eval's context (its gates' fixed bounds, the run's
    ``[settings.stats]``); they join the metric's per-row
    statistics, if it has any, and what they say of them goes to the eval's details."""
    for name, aggregate_details in _aggregating():
        recorded = [row.details[name] for row in whole_rows(rows) if name in row.details]
        aggregated = aggregate_details(recorded, metrics, context) if recorded else None
        if aggregated is not None:
            metrics[name] = {**metrics.get(name, {}), **aggregated.stats}
            details.update(aggregated.details)
            if aggregated.notes:
                details.setdefault(NOTES_DETAIL, {}).update(aggregated.notes)


def _merge_dataset_payloads(
    payloads: list[DatasetPayload],
    metrics: dict[str, dict[str, float]],
    coverage: dict[str, int],
) -> tuple[dict[str, Any], tuple[str, ...]]:
    details: dict[str, Any] = {}
    errors: list[str] = []
    for payload in sorted(payloads, key=lambda p: p.test):
        if not payload.skipped or payload.error:
            coverage[payload.test] = payload.rows
        for name, stats in payload.values.items():
            if name in metrics and metrics[name] != stats:
                errors.append(f"{payload.test}: {name} computed twice with different values")
                continue
            metrics[name] = dict(stats)
        details.update(payload.details)
        if payload.error:
            errors.append(payload.error)
    return details, tuple(errors)


def aggregate_rows(
    rows: Sequence[RowResult], settings: MetricSettings
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, float]]]]:
    """The aggregates of per-row values and breakdowns over ``rows``, with the corpus
    statistics computed from their summed sufficient statistics with ``settings`` (the
    run's: they say how BLEU's are reduced)."""
    if isinstance(rows, StoredRows):  # columns, not a row object per row and metric
        names, breakdown_names = sorted(rows.metric_names()), sorted(rows.breakdown_names())
    else:
        names = sorted({metric for row in rows for metric in row.values})
        breakdown_names = sorted({name for row in rows for name in row.breakdowns})
    metrics = {}
    for metric in names:
        if isinstance(rows, StoredRows):
            values = rows.column(metric)
        else:
            values = [row.values[metric] for row in rows if metric in row.values]
        metrics[metric] = aggregate(values, binary=_binary(metric))
    breakdowns = {name: _aggregate_breakdown(rows, name) for name in breakdown_names}
    _add_corpus_stats(metrics, breakdowns, settings)
    return metrics, breakdowns


def _summarize_eval(
    info: EvalInfo,
    store: RowStore,
    tests: set[str],
    dataset_payloads: list[DatasetPayload],
    settings: MetricSettings,
    uses: Mapping[str, FixtureUse] | None = None,
    bounds: Bounds | None = None,
) -> EvalSummary:
    rows = store.summary_rows()
    metrics, breakdowns = aggregate_rows(rows, settings)
    signed = signatures(metrics, breakdowns, settings)
    coverage = rows.coverage(sorted(tests))
    details, errors = _merge_dataset_payloads(dataset_payloads, metrics, coverage)
    _add_aggregated(
        metrics, rows, details, EvalContext(bounds or {}, settings.stats, settings.prices)
    )
    if dataset_payloads:  # a dataset-level test counts in `errors` like a row
        ran = [p for p in dataset_payloads if not p.skipped or p.error]
        flags = rows.column(ERRORS)
        flags += [1.0 if p.error else 0.0 for p in sorted(ran, key=lambda p: p.test)]
        metrics[ERRORS] = aggregate(flags, binary=True)
    skipped = len(store) - len(rows)
    return EvalSummary(
        info,
        rows,
        metrics,
        breakdowns,
        coverage,
        skipped,
        details,
        errors,
        signatures=signed,
        uncalled=tuple(
            (test, fixture, use.rows)
            for test, use in sorted((uses or {}).items())
            for fixture in use.never_called()
        ),
    )


@dataclass
class FixtureUse:
    """How a test function used the metric fixtures it takes, over the rows its body ran
    on: how many rows, and on how many of them each fixture went uncalled."""

    rows: int = 0
    uncalled: dict[str, int] = field(default_factory=dict)

    def add(self, uncalled: Sequence[str]) -> None:
        self.rows += 1
        for fixture in uncalled:
            self.uncalled[fixture] = self.uncalled.get(fixture, 0) + 1

    def never_called(self) -> list[str]:
        """The fixtures called on none of the rows, sorted."""
        return sorted(name for name, rows in self.uncalled.items() if rows == self.rows)


@dataclass
class Gathered:
    """The payloads of a run merged as they arrive (on the controller), so a row is held
    once, in its eval's ``RowStore`` (packed when it holds only numbers), and not also as
    the payloads it came in.

    Merging in arrival order is what ``summarize`` does with a list of payloads, so the
    summaries are the same whether the payloads were gathered one by one or all at once.

    ``shown``: whether a report will show each row. Only the rows of the JSON and HTML
    reports show a row's evidence and its fields (question, answer, gold, answerable), and
    for a run without either they were most of what each row's result held; without,
    rows keep neither, and every number, aggregate and gate is the same.
    """

    shown: bool = True
    infos: dict[str, EvalInfo] = field(default_factory=dict)
    rows: dict[str, RowStore] = field(default_factory=dict)
    tests: dict[str, set[str]] = field(default_factory=dict)
    datasets: dict[str, list[DatasetPayload]] = field(default_factory=dict)
    # By eval and test function: which of its metric fixtures went uncalled on its rows.
    uses: dict[str, dict[str, FixtureUse]] = field(default_factory=dict)

    def add(self, payload: Payload) -> None:
        """Merge one row or dataset payload into what was gathered."""
        info = self.infos.setdefault(payload.info.label, payload.info)
        self.tests.setdefault(info.label, set()).update(payload.eval_tests)
        store = self.rows.get(info.label)
        if store is None:
            store = self.rows[info.label] = RowStore()
        if isinstance(payload, DatasetPayload):
            self.datasets.setdefault(info.label, []).append(payload)
            return
        store.add(payload, self.shown)
        if payload.uncalled is not None:
            uses = self.uses.setdefault(info.label, {})
            use = uses.get(payload.test)
            if use is None:
                use = uses[payload.test] = FixtureUse()
            use.add(payload.uncalled)

    def summaries(
        self, settings: MetricSettings, bounds: Callable[[EvalInfo], Bounds] | None = None
    ) -> list[EvalSummary]:
        """One ``EvalSummary`` per eval and system, sorted by eval name and then by the
        systems' order in the dataset; ``settings`` are the run's metric settings,
        ``bounds`` gives each eval's gates' fixed bounds (``MetricInfo.aggregate``)."""
        order = sorted(self.infos.values(), key=lambda info: (info.name, info.system_index))
        return [
            _summarize_eval(
                info,
                self.rows[info.label],
                self.tests[info.label],
                self.datasets.get(info.label, []),
                settings,
                self.uses.get(info.label),
                bounds(info) if bounds is not None else None,
            )
            for info in order
        ]


def summarize(payloads: Iterable[Payload], settings: MetricSettings) -> list[EvalSummary]:
    """Merge row and dataset payloads into one ``EvalSummary`` per eval and system, sorted
    by eval name and then by the systems' order in the dataset; ``settings`` are the run's
    metric settings (corpus statistics such as ``bleu.corpus`` are reduced with them)."""
    gathered = Gathered()
    for payload in payloads:
        gathered.add(payload)
    return gathered.summaries(settings)
