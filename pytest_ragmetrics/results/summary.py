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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.metrics.base import Aggregate, Bounds, MetricSettings
from pytest_ragmetrics.metrics.catalog import ERRORS, SIGNATURES, in_force
from pytest_ragmetrics.metrics.hooks import NOTES_DETAIL
from pytest_ragmetrics.metrics.prices import NO_PRICES, Prices
from pytest_ragmetrics.metrics.registry import UnknownAggregate, metric_info
from pytest_ragmetrics.results.records import (
    BATCH_KIND,
    DATASET_KIND,
    LIVE_DETAIL,
    NOTHING,
    BatchPayload,
    DatasetPayload,
    EvalInfo,
    Payload,
    PayloadError,
    RowPayload,
    RowResult,
    carried_payloads,
    carries_batch,
    merge_details,
    payload_from_dict,
    payloads_from_dict,
)
from pytest_ragmetrics.results.rowstore import RowsById, RowStore, StoredRows
from pytest_ragmetrics.results.stats import aggregate

if TYPE_CHECKING:
    from pytest_ragmetrics.results.pairing import BaselineState
    from pytest_ragmetrics.results.spool import Spool
    from pytest_ragmetrics.results.transformations import Transformations

# What this module gives its readers: its own merging and, re-exported, the records it
# merges (defined in results.records, where the row store reads them too).
__all__ = [
    "BATCH_KIND",
    "DATASET_KIND",
    "LIVE_DETAIL",
    "NOTHING",
    "BatchPayload",
    "DatasetPayload",
    "EvalContext",
    "EvalInfo",
    "EvalSummary",
    "FixtureUse",
    "Gathered",
    "Payload",
    "PayloadError",
    "RowPayload",
    "RowResult",
    "aggregate_rows",
    "carried_payloads",
    "carries_batch",
    "merge_details",
    "payload_from_dict",
    "payloads_from_dict",
    "plain_rows",
    "rows_by_id",
    "signatures",
    "summarize",
    "whole_rows",
]


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
        rows = self.rows
        if isinstance(rows, StoredRows):  # without reading the spooled rows' shown parts
            return rows.errored() + len(self.dataset_errors)
        return sum(1 for row in rows if row.errors) + len(self.dataset_errors)

    def incomplete_tests(self) -> dict[str, int]:
        """Test functions of the eval that ran fewer rows than the dataset has."""
        rows = self.info.dataset_rows
        return {test: ran for test, ran in self.coverage.items() if ran < rows}


def whole_rows(rows: Sequence[RowResult], having: str | None = None) -> Iterable[RowResult]:
    """The rows that can have errors, details, evidence, shown fields, outputs or
    sessions: of a gathered eval, only those its store keeps whole or spooled (the others
    hold numbers only), and with ``having`` (a part of ``rowstore.SHOWN_PARTS``) of the
    spooled ones only those that have it; of any other sequence, all."""
    return rows.whole_rows(having) if isinstance(rows, StoredRows) else rows


def plain_rows(rows: Sequence[RowResult]) -> Sequence[RowResult]:
    """``rows`` for a reader of their numbers, statuses, censuses and sessions: of a
    gathered eval, without the spooled rows' evidence, details, fields and outputs (the
    spool not read, ``StoredRows.plain``); any other sequence as it is."""
    return rows.plain() if isinstance(rows, StoredRows) else rows


def rows_by_id(rows: Sequence[RowResult]) -> Mapping[str, RowResult]:
    """``{row.id: row for row in rows}``; of a gathered eval, a mapping that makes each row
    when read and keeps none (``RowsById``), looked up in its store."""
    if isinstance(rows, StoredRows):
        return RowsById(rows)
    return {row.id: row for row in rows}


def status_counts(rows: Sequence[RowResult]) -> dict[str, int]:
    """How many of ``rows`` have each status (``RowResult.status``), for the statuses some
    row has; of a gathered eval, counted by the store's layouts, no row made."""
    if isinstance(rows, StoredRows):
        return rows.statuses()
    return dict(Counter(row.status for row in rows))


def all_digested(rows: Sequence[RowResult]) -> bool:
    """Whether every one of ``rows`` has an inputs digest (``RowResult.inputs``)."""
    if isinstance(rows, StoredRows):
        return rows.all_digested()
    return all(row.inputs for row in rows)


def citation_censuses(rows: Sequence[RowResult]) -> list[tuple[Mapping[str, int], int]]:
    """The citation census of each of ``rows`` that has one, with how many rows hold it
    (of a gathered eval, the rows sharing a layout at once; of any other sequence, one
    each)."""
    if isinstance(rows, StoredRows):
        return rows.censuses()
    return [(row.citations, 1) for row in rows if row.citations is not None]


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
        having = whole_rows(rows, "details")
        recorded = [row.details[name] for row in having if name in row.details]
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

    ``spool``: where the stores put their rows' shown parts (``results.spool``; the
    controller's one of the run); without one such rows are kept whole in memory.
    """

    shown: bool = True
    spool: Spool | None = None
    infos: dict[str, EvalInfo] = field(default_factory=dict)
    rows: dict[str, RowStore] = field(default_factory=dict)
    tests: dict[str, set[str]] = field(default_factory=dict)
    datasets: dict[str, list[DatasetPayload]] = field(default_factory=dict)
    # By eval and test function: which of its metric fixtures went uncalled on its rows.
    uses: dict[str, dict[str, FixtureUse]] = field(default_factory=dict)

    def add(self, payload: Payload) -> None:
        """Merge one row or dataset payload into what was gathered."""
        label = payload.info.label  # a property: read once
        self.infos.setdefault(label, payload.info)
        tests = self.tests.get(label)
        if tests is None:  # not setdefault: no set made and thrown away per row
            tests = self.tests[label] = set()
        tests.update(payload.eval_tests)
        store = self.rows.get(label)
        if store is None:
            store = self.rows[label] = RowStore(self.spool)
        if isinstance(payload, DatasetPayload):
            self.datasets.setdefault(label, []).append(payload)
            return
        store.add(payload, self.shown)
        if payload.uncalled is not None:
            uses = self.uses.setdefault(label, {})
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
