"""Rendering results: terminal lines and the JSON report. Pure functions of the data."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.metrics.registry import MetricInfo, UnknownAggregate, metric_info
from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE
from pytest_ragmetrics.results.summary import EvalSummary, RowResult

JSON_SCHEMA_VERSION = 1
NOT_COMPUTED = "—"


def _score(value: float) -> str:
    return f"{value:.3f}"


def _amount(value: float) -> str:
    return f"{value:.1f}"


def _ms(value: float) -> str:
    return f"{value:.0f}"


def _count(value: float) -> str:
    return f"{value:.0f}"


@dataclass(frozen=True)
class Column:
    """A table column: heading, the aggregate it shows and how to format it."""

    heading: str
    metric: str
    stat: str
    fmt: Callable[[float], str]

    def cell(self, summary: EvalSummary) -> str:
        value = summary.metrics.get(self.metric, {}).get(self.stat)
        return NOT_COMPUTED if value is None else self.fmt(value)


MAIN_COLUMNS = (
    Column("Faithfulness", "faithfulness", "mean", _score),
    Column("Overlap", "overlap", "mean", _score),
    Column("F1", "f1", "mean", _score),
    Column("Tokens", "tokens", "mean", _amount),
    Column("P50 ms", "latency_ms", "p50", _ms),
    Column("Abstain", "abstain", "mean", _score),
)
APPENDIX_COLUMNS = (
    Column("EM", "em", "mean", _score),
    Column("P95 ms", "latency_ms", "p95", _ms),
    Column("IDK+Cit", "idk_citation", "sum", _count),
    Column("Errors", "errors", "sum", _count),
)


def render_table(headings: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Aligned plain-text table: first column left-aligned, the others right-aligned."""
    body = [list(row) for row in rows]
    widths = [
        max(len(str(cell)) for cell in column) for column in zip(headings, *body, strict=True)
    ]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return [line(headings), line(["-" * w for w in widths]), *(line(row) for row in body)]


def _table(
    summaries: Sequence[EvalSummary], columns: Sequence[Column], lead: Sequence[str]
) -> list[str]:
    rows = []
    for summary in summaries:
        lead_cells = [summary.info.label, str(summary.rows_used)][: len(lead)]
        rows.append([*lead_cells, *(column.cell(summary) for column in columns)])
    return render_table([*lead, *(c.heading for c in columns)], rows)


_TABLED = frozenset(c.metric for c in (*MAIN_COLUMNS, *APPENDIX_COLUMNS)) | {
    "prompt_tokens",
    "completion_tokens",
    "overlap_answered",
    "trust",  # its own table
}
_WIDTH = 96


def _natural(metric: str) -> tuple[str, int]:
    """Sort key: ``hit_rate@5`` before ``hit_rate@10``."""
    base, _, k = metric.partition("@")
    return base, int(k) if k.isdigit() else -1


def _info(metric: str) -> MetricInfo | None:
    try:
        return metric_info(metric)
    except UnknownAggregate:
        return None  # recorded by a user's own code


def _dataset_stats(metric: str) -> tuple[str, ...] | None:
    info = _info(metric)
    return info.dataset if info else None


def _mean_part(metric: str, stats: dict[str, float]) -> list[str]:
    """``name mean`` with any corpus statistics in parentheses."""
    if "mean" not in stats:
        return []
    info = _info(metric)
    extra = [f"{stat} {stats[stat]:.4g}" for stat in (info.corpus if info else ()) if stat in stats]
    corpus = f" ({', '.join(extra)})" if extra else ""
    return [f"{metric} {stats['mean']:.4g}{corpus}"]


def _wrapped(parts: Sequence[str], first: str, indent: str) -> list[str]:
    lines, line = [], first
    for part in parts:
        candidate = f"{line} · {part}" if line != first else line + part
        if line != first and len(candidate) > _WIDTH:
            lines.append(line)
            candidate = indent + part
        line = candidate
    return [*lines, line] if parts else lines


def more_metric_lines(summaries: Sequence[EvalSummary]) -> list[str]:
    """Every recorded metric the tables do not show: the mean of per-row metrics (with
    corpus statistics in parentheses), then each statistic of dataset-level metrics."""
    lines = []
    for summary in summaries:
        names = sorted(set(summary.metrics) - _TABLED, key=_natural)
        dataset_level = [name for name in names if _dataset_stats(name) is not None]
        per_row = [
            part
            for name in names
            if name not in dataset_level
            for part in _mean_part(name, summary.metrics[name])
        ]
        block = _wrapped(per_row, "    ", "    ")
        for name in dataset_level:
            stats, wanted = summary.metrics[name], _dataset_stats(name) or ()
            parts = [f"{stat} {stats[stat]:.4g}" for stat in wanted if stat in stats]
            block += _wrapped(parts, f"    {name}: ", "      ")
        if block:
            lines += [f"  {summary.info.label} ({summary.rows_used} rows):", *block]
    return ["More metrics (mean over rows unless named):", *lines] if lines else []


def _stage_lines(summaries: Sequence[EvalSummary]) -> list[str]:
    lines = []
    for summary in summaries:
        stages = summary.breakdowns.get("tokens_by_stage")
        if stages:
            parts = " · ".join(f"{stage} {_amount(v['mean'])}" for stage, v in stages.items())
            lines.append(f"  {summary.info.label}: {parts}")
    return ["Tokens by stage (mean per row):", *lines] if lines else []


def _stop_reason_lines(summaries: Sequence[EvalSummary]) -> list[str]:
    lines = []
    for summary in summaries:
        reasons = summary.breakdowns.get("stop_reason")
        if reasons:
            ordered = sorted(reasons.items(), key=lambda item: (-item[1]["sum"], item[0]))
            parts = [f"{reason} {v['sum']:.0f} ({v['mean']:.0%})" for reason, v in ordered]
            lines += _wrapped(parts, f"  {summary.info.label}: ", "    ")
    return ["Stop reasons (rows, share):", *lines] if lines else []


def transformation_lines(summaries: Sequence[EvalSummary]) -> list[str]:
    """Per compared system: the ids that went IDK → supported, and the regressions."""
    lines = []
    for summary in summaries:
        if not summary.info.compared:
            continue
        reference = summary.info.compare_to
        head = f"  {summary.info.label} vs {reference}:"
        found = summary.transformations
        if found is None:
            lines.append(f"{head} {summary.transformations_note}")
            continue
        lines.append(f"{head} {found.compared} ids compared")
        for title, ids in found.kinds():
            listed = list(ids) or ["none"]
            lines += _wrapped(listed, f"    {title} ({len(ids)}): ", "      ")
    return ["Transformations (by row id):", *lines] if lines else []


def stored_baseline_lines(summaries: Sequence[EvalSummary]) -> list[str]:
    """Per eval with a stored baseline: how its rows pair with this run's, the unpaired
    ids and the transformations; evals where nothing moved share one line."""
    lines, quiet = [], 0
    for summary in summaries:
        stored = summary.stored
        if stored is None or (stored.baseline is None and stored.problem is None):
            continue
        head = f"  {summary.info.label}:"
        if stored.problem is not None:
            lines.append(f"{head} not compared: {stored.problem.splitlines()[0]}")
            continue
        pairing = stored.pairing
        if pairing is None:
            lines.append(f"{head} rows not paired: {stored.note}")
            continue
        found = pairing.transformations
        moved = found is not None and (found.idk_to_supported or found.regressions)
        if pairing.exact and not moved:
            quiet += 1
            continue
        lines.append(f"{head} {pairing.describe()}")
        for title, ids in pairing.listed():
            if ids:
                lines += _wrapped(list(ids), f"    {title} ({len(ids)}): ", "      ")
        if found is not None:
            for title, ids in found.kinds():
                lines += _wrapped(list(ids) or ["none"], f"    {title} ({len(ids)}): ", "      ")
        else:
            lines.append(f"    no transformations: {pairing.transformations_note}")
    if quiet:
        lines.append(f"  {quiet} other eval(s): every stored row paired, none changed state")
    return ["Stored baselines (rows paired by id):", *lines] if lines else []


TRUST_COLUMNS = (
    Column("Answered", "trust", "answered_num", _count),
    Column("Refusal F1", "trust", "refusal_f1", _amount),
    Column("Answerable F1", "trust", "answerable_f1", _amount),
    Column("Macro F1", "trust", "macro_f1", _amount),
    Column("Calib EM F1", "trust", "calib_str_em_f1", _amount),
    Column("Citation F1", "trust", "answered_citation_f1", _amount),
    Column("Trust", "trust", "trust_score", _amount),
)


def judge_description(settings: Settings) -> str:
    """How the Trust-Score citation numbers were judged, in words for every report."""
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


def trust_lines(summaries: Sequence[EvalSummary], settings: Settings) -> list[str]:
    """The Trust-Score table (0-100) of the evals that ran the ``trust`` fixture."""
    with_trust = [s for s in summaries if "trust" in s.metrics]
    if not with_trust:
        return []
    rows = [
        [
            s.info.label,
            _count(s.metrics["trust"]["num_samples"]),
            *(c.cell(s) for c in TRUST_COLUMNS),
        ]
        for s in with_trust
    ]
    table = render_table(["Eval", "N", *(c.heading for c in TRUST_COLUMNS)], rows)
    warnings = [
        f"  {s.info.label}: {message}"
        for s in with_trust
        for message in s.dataset_details.get("trust_warnings", ())
    ]
    return [f"Trust-Score (0-100; judge: {judge_description(settings)}):", *table, *warnings]


def _gate_lines(results: Sequence[GateResult]) -> list[str]:
    if not results:
        return ["Gates: none configured for these evals"]
    counts = {
        status: sum(r.status == status for r in results)
        for status in ("passed", "failed", "skipped")
    }
    lines = [
        f"Gates: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    ]
    for result in results:
        if result.status != "passed":
            first_line = result.message.splitlines()[0]
            lines.append(f"  {result.status.upper():7} {result.nodeid}: {first_line}")
    return lines


def _citations(settings: Settings) -> str:
    pattern = settings.citation_pattern
    return settings.citation_format + (f" and {pattern}" if pattern else "")


def terminal_lines(
    summaries: Sequence[EvalSummary],
    results: Sequence[GateResult],
    settings: Settings,
    thresholds_path: str | None,
    notes: Sequence[str] = (),
) -> list[str]:
    """The ragmetrics section of the terminal summary."""
    lines = [
        f"thresholds: {thresholds_path or 'none'} · citations: {_citations(settings)}"
        f" · IDK phrases: {len(settings.idk_patterns)} · tau_sim: {settings.tau_sim:g}",
        "",
        *_table(summaries, MAIN_COLUMNS, ("Eval", "N")),
        "",
        "Appendix",
        *_table(summaries, APPENDIX_COLUMNS, ("Eval",)),
    ]
    for block in (
        _stage_lines(summaries),
        _stop_reason_lines(summaries),
        transformation_lines(summaries),
        stored_baseline_lines(summaries),
        more_metric_lines(summaries),
        trust_lines(summaries, settings),
    ):
        if block:
            lines += ["", *block]
    lines += ["", f"{NOT_COMPUTED} = not computed by this eval", "", *_gate_lines(results)]
    warnings = [f"  {warning}" for summary in summaries for warning in summary.warnings]
    if warnings:
        lines += ["", "Warnings:", *warnings]
    if notes:
        lines += ["", *notes]
    return lines


def _gate_document(result: GateResult) -> dict[str, Any]:
    return {
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
        "errors": row.errors,
        "evidence": row.evidence,
    }


def _eval_document(summary: EvalSummary, results: Sequence[GateResult]) -> dict[str, Any]:
    info = summary.info
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
        "errors": summary.errors,
        "metrics": summary.metrics,
        "breakdowns": summary.breakdowns,
        "dataset_level": {
            "details": summary.dataset_details,
            "errors": list(summary.dataset_errors),
        },
        "gates": [_gate_document(r) for r in results if r.eval == info.label],
        "rows": [_row_document(summary, row) for row in summary.rows],
    }
    entry["warnings"] = list(summary.warnings)
    if summary.stored is not None:
        entry["baseline"] = summary.stored.as_dict()
    if info.rerun is not None:
        entry["rerun"] = info.rerun
    if info.compared:
        found = summary.transformations
        entry["transformations"] = found.as_dict() if found is not None else None
        if found is None:
            entry["transformations_note"] = summary.transformations_note
    return entry


def json_document(
    summaries: Sequence[EvalSummary],
    results: Sequence[GateResult],
    settings: Settings,
    plugin_version: str,
) -> dict[str, Any]:
    """The ``--ragmetrics-json`` report (schema documented in the README): one entry per
    eval, or per eval and system for a dataset of several systems."""
    document = {
        "schema_version": JSON_SCHEMA_VERSION,
        "plugin_version": plugin_version,
        "settings": settings.signature(),
        "evals": [_eval_document(summary, results) for summary in summaries],
    }
    if any("trust" in summary.metrics for summary in summaries):
        document["trust_judge"] = {
            "setting": settings.trust_judge,
            "approximate": settings.trust_judge == "embedding",
            "description": judge_description(settings),
        }
    return document
