"""Merging per-row records into per-eval aggregates (on the controller).

Each row test sends one small JSON-like payload on its report (see ``row_payload``). This
module merges them: payloads of several tests over the same row are combined, rows are
put back in dataset order, and every metric is aggregated (``pytest_ragmetrics.stats``).
The result depends only on the set of payloads, not on the order they arrived in, so
aggregates are bit-identical with and without pytest-xdist.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_ragmetrics.registry import METRICS
from pytest_ragmetrics.stats import aggregate

ERRORS_METRIC = "errors"


@dataclass(frozen=True)
class EvalInfo:
    """What an eval runs over: its name, the module that defines it, and its dataset."""

    name: str
    module: str
    dataset: str
    dataset_sha256: str
    dataset_rows: int

    def as_payload(self) -> dict[str, Any]:
        return {
            "eval": self.name,
            "module": self.module,
            "dataset": self.dataset,
            "dataset_sha256": self.dataset_sha256,
            "dataset_rows": self.dataset_rows,
        }


def row_payload(
    info: EvalInfo,
    row_id: str,
    index: int,
    values: Mapping[str, float],
    breakdowns: Mapping[str, Mapping[str, float]],
    error: str | None,
    test: str = "test",
    eval_tests: Iterable[str] = ("test",),
    skipped: bool = False,
    evidence: Mapping[str, str] | None = None,
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record one row test sends to the controller: plain, small, JSON-able.

    ``test`` is the test function that ran the row, ``eval_tests`` every test function of
    the eval that the sending process collected (deselected ones included), so the
    controller can tell a complete eval from a partial one.
    """
    return {
        **info.as_payload(),
        "row": row_id,
        "index": index,
        "values": dict(values),
        "breakdowns": {name: dict(parts) for name, parts in breakdowns.items()},
        "error": error,
        "test": test,
        "eval_tests": sorted(eval_tests),
        "skipped": skipped,
        "evidence": dict(evidence or {}),
        "details": dict(details or {}),
    }


@dataclass
class RowResult:
    """Everything recorded for one row of an eval, over all the tests that ran it."""

    id: str
    index: int
    values: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, float]] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    tests: set[str] = field(default_factory=set)

    @property
    def ran(self) -> bool:
        """True when some test ran the row (a skip counts only if the row was bad)."""
        return bool(self.tests)

    def merge(self, payload: Mapping[str, Any]) -> None:
        if not payload["skipped"] or payload["error"]:
            self.tests.add(payload["test"])
        for metric, value in payload["values"].items():
            if metric in self.values and self.values[metric] != value:
                self.errors.append(
                    f"{metric} recorded twice with different values "
                    f"({self.values[metric]!r} and {value!r})"
                )
                continue
            self.values[metric] = value
        for name, parts in payload["breakdowns"].items():
            self.breakdowns.setdefault(name, {}).update(parts)
        self.evidence.update(payload["evidence"])
        self.details.update(payload["details"])
        if payload["error"] and payload["error"] not in self.errors:
            self.errors.append(payload["error"])


@dataclass(frozen=True)
class EvalSummary:
    """One eval's rows in dataset order and their aggregates."""

    info: EvalInfo
    rows: tuple[RowResult, ...]
    metrics: dict[str, dict[str, float]]
    breakdowns: dict[str, dict[str, dict[str, float]]]
    coverage: dict[str, int] = field(default_factory=dict)
    skipped: int = 0

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def errors(self) -> int:
        return sum(1 for row in self.rows if row.errors)

    def incomplete_tests(self) -> dict[str, int]:
        """Test functions of the eval that ran fewer rows than the dataset has."""
        rows = self.info.dataset_rows
        return {test: ran for test, ran in self.coverage.items() if ran < rows}


def _aggregate_breakdown(rows: Iterable[RowResult], name: str) -> dict[str, dict[str, float]]:
    """Per part: ``sum`` and ``mean`` over the rows that have the breakdown at all.

    A row without a part counts 0 for it, so the parts' means add up to the whole's.
    """
    having = [row.breakdowns[name] for row in rows if name in row.breakdowns]
    parts = sorted({part for breakdown in having for part in breakdown})
    result = {}
    for part in parts:
        total = math.fsum(breakdown.get(part, 0.0) for breakdown in having)
        result[part] = {"sum": total, "mean": total / len(having)}
    return result


def _summarize_eval(info: EvalInfo, all_rows: list[RowResult], tests: set[str]) -> EvalSummary:
    rows = sorted((row for row in all_rows if row.ran), key=lambda row: row.index)
    for row in rows:
        row.errors.sort()  # arrival order differs between xdist runs
        row.values[ERRORS_METRIC] = 1.0 if row.errors else 0.0
    names = sorted({metric for row in rows for metric in row.values})
    metrics = {}
    for metric in names:
        values = [row.values[metric] for row in rows if metric in row.values]
        info_of = METRICS.get(metric)
        metrics[metric] = aggregate(values, binary=bool(info_of and info_of.binary))
    breakdown_names = sorted({name for row in rows for name in row.breakdowns})
    breakdowns = {name: _aggregate_breakdown(rows, name) for name in breakdown_names}
    coverage = {test: sum(test in row.tests for row in rows) for test in sorted(tests)}
    skipped = len(all_rows) - len(rows)
    return EvalSummary(info, tuple(rows), metrics, breakdowns, coverage, skipped)


def summarize(payloads: Iterable[Mapping[str, Any]]) -> list[EvalSummary]:
    """Merge row payloads into one ``EvalSummary`` per eval, sorted by eval name."""
    infos: dict[str, EvalInfo] = {}
    rows: dict[str, dict[str, RowResult]] = {}
    tests: dict[str, set[str]] = {}
    for payload in payloads:
        name = payload["eval"]
        infos.setdefault(
            name,
            EvalInfo(
                name,
                payload["module"],
                payload["dataset"],
                payload["dataset_sha256"],
                payload["dataset_rows"],
            ),
        )
        by_id = rows.setdefault(name, {})
        row = by_id.setdefault(payload["row"], RowResult(payload["row"], payload["index"]))
        row.merge(payload)
        tests.setdefault(name, set()).update(payload["eval_tests"])
    return [
        _summarize_eval(infos[name], list(rows[name].values()), tests[name])
        for name in sorted(infos)
    ]
