"""The records a row or dataset test sends the controller and the record the controller
keeps of each row (``RowPayload``, ``DatasetPayload``, ``BatchPayload``, ``RowResult``),
with their wire forms.

They live apart from the merging (``results.summary``) so that the packed store of
gathered rows (``results.rowstore``), which summary uses, can build and read them too.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pytest_ragmetrics.metrics.catalog import UNJUDGED, in_force

if TYPE_CHECKING:
    pass


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

    # Written out, each slot set by its own setter: one payload is made per row, and the
    # generated frozen ``__init__`` (``object.__setattr__`` by name for each of nineteen
    # fields, then ``__post_init__``) cost about twice as much.
    def __init__(
        self,
        info: EvalInfo,
        row: str,
        index: int,
        values: Mapping[str, float],
        breakdowns: Mapping[str, Mapping[str, float]],
        error: str | None,
        test: str = "test",
        eval_tests: tuple[str, ...] = ("test",),
        skipped: bool = False,
        evidence: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
        fields: Mapping[str, Any] | None = None,
        output: Mapping[str, Any] | None = None,
        inputs: str = "",
        citations: Mapping[str, int] | None = None,
        failed: bool = False,
        session: str | None = None,
        uncalled: tuple[str, ...] | None = None,
    ) -> None:
        _PAYLOAD_SLOTS["info"](self, info)
        _PAYLOAD_SLOTS["row"](self, row)
        _PAYLOAD_SLOTS["index"](self, index)
        _PAYLOAD_SLOTS["values"](self, values)
        _PAYLOAD_SLOTS["breakdowns"](self, breakdowns)
        _PAYLOAD_SLOTS["error"](self, error)
        # Every row of an eval names the same few test functions: one string each, shared
        # by the rows' records on the controller, not one copy per row.
        _PAYLOAD_SLOTS["test"](self, sys.intern(test))
        _PAYLOAD_SLOTS["eval_tests"](self, tuple(sorted(eval_tests)))
        _PAYLOAD_SLOTS["skipped"](self, skipped)
        _PAYLOAD_SLOTS["evidence"](self, {} if evidence is None else evidence)
        _PAYLOAD_SLOTS["details"](self, {} if details is None else details)
        _PAYLOAD_SLOTS["fields"](self, {} if fields is None else fields)
        _PAYLOAD_SLOTS["output"](self, output)
        _PAYLOAD_SLOTS["inputs"](self, inputs)
        _PAYLOAD_SLOTS["citations"](self, citations)
        _PAYLOAD_SLOTS["failed"](self, failed)
        _PAYLOAD_SLOTS["session"](self, session)
        _PAYLOAD_SLOTS["uncalled"](self, uncalled)

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
@functools.lru_cache(maxsize=1024)
def _with_test(tests: frozenset[str], test: str) -> frozenset[str]:
    """``tests`` and ``test``, one shared object for the same tests: the rows of an eval
    name the same few test functions, and a set is 216 bytes a row on the controller
    (and a shared set's hash, which the row store's layouts are looked up by, is computed
    once)."""
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


# Each of ``RowPayload``'s slots' own setter, by field (``RowPayload.__init__``).
_PAYLOAD_SLOTS = {
    field_info.name: RowPayload.__dict__[field_info.name].__set__
    for field_info in dataclasses.fields(RowPayload)
}


class _HasStatus(Protocol):
    @property
    def status(self) -> str | None: ...  # None: a report's row written before statuses


_Owner = TypeVar("_Owner")
_Row = TypeVar("_Row", bound=_HasStatus)


def first_failing(
    groups: Iterable[tuple[_Owner, Iterable[_Row]]], limit: int
) -> tuple[list[tuple[_Owner, _Row]], int]:
    """The first ``limit`` rows that errored, then those that failed, over ``groups``
    (each an owner, an eval, and its rows, in order), each with its owner, and how many
    rows errored or failed in all: one pass over the rows, only those that can be listed
    kept (a large eval's rows are made as they are read). What a report that lists
    failing rows (the pull-request comment, the annotations) lists."""
    kept: dict[str, list[tuple[_Owner, _Row]]] = {"error": [], "failed": []}
    found = 0
    for owner, rows in groups:
        for row in rows:
            status = row.status
            listed = kept.get(status) if status is not None else None
            if listed is None:
                continue
            found += 1
            if len(listed) < limit:
                listed.append((owner, row))
    return [*kept["error"], *kept["failed"]][: max(0, limit)], found
