"""The ragmetrics section of the terminal summary: lines rendered from the report model
(``reports.model``; a report document is read into it first). Pure functions of the
model's views."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_ragmetrics.gates.evidence import evidence_text
from pytest_ragmetrics.metrics.base import MetricInfo, NumberFormat
from pytest_ragmetrics.reports.columns import (
    FORMATS,
    NOT_COMPUTED,
    Column,
    Entry,
    amount,
    appendix_columns,
    count,
    main_columns,
    suite_columns,
)
from pytest_ragmetrics.reports.document import (
    gate_nodeid,
    gate_summary,
    gates,
    model_of,
    row_counts,
)
from pytest_ragmetrics.reports.evidence import (
    advice_lines,
    comparison_table,
    regressed_despite_passing,
)
from pytest_ragmetrics.reports.model import BaselineView, HistoryView, ReportModel
from pytest_ragmetrics.reports.presentation import info, suites, tabled, unlisted
from pytest_ragmetrics.results.pairing import (
    UNPAIRED,
    describe_pairing,
    not_compared_title,
    problem_listing,
)
from pytest_ragmetrics.results.transformations import Transformations


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


def _table(evals: Sequence[Entry], columns: Sequence[Column], lead: Sequence[str]) -> list[str]:
    rows = []
    for entry in evals:
        lead_cells = [str(entry.label), str(entry.n)][: len(lead)]
        rows.append([*lead_cells, *(column.cell(entry) for column in columns)])
    return render_table([*lead, *(c.heading for c in columns)], rows)


_WIDTH = 96


def _tabled() -> frozenset[str]:
    """The metrics "More metrics" leaves out: those a table shows, and those declared
    not to be listed."""
    return tabled("main", "appendix", "suite") | unlisted()


def _natural(metric: str) -> tuple[str, float, str]:
    """Sort key: the suffix after ``@`` as a number, so ``hit_rate@5`` comes before
    ``hit_rate@10`` and ``iprec_at_recall@0.2`` before ``iprec_at_recall@0.3``."""
    base, _, suffix = metric.partition("@")
    try:
        number = float(suffix)
    except ValueError:
        number = -1.0
    return base, number, suffix


def _dataset_stats(metric: str) -> tuple[str, ...] | None:
    found = info(metric)
    return found.dataset if found else None


def _mean_part(metric: str, stats: Mapping[str, float]) -> list[str]:
    """``name mean`` with any corpus and derived statistics in parentheses."""
    if "mean" not in stats:
        return []
    found = info(metric)
    besides = (*found.corpus, *found.derived) if found else ()
    extra = [f"{stat} {stats[stat]:.4g}" for stat in besides if stat in stats]
    corpus = f" ({', '.join(extra)})" if extra else ""
    declared = found.presentation.format if found else None
    return [f"{metric} {_listed(stats['mean'], declared)}{corpus}"]


def _listed(value: float, declared: NumberFormat | None) -> str:
    """A number of "More metrics": to 4 significant digits, or in dollars for a metric
    declared in them (``usd``): an amount of money without its sign reads as a score."""
    return FORMATS["usd"](value) if declared == "usd" else f"{value:.4g}"


def _dataset_part(metric: str, stat: str, value: float) -> str:
    """``stat value`` of a dataset-level metric (``judge.cost_usd`` in dollars)."""
    found = info(metric)
    return f"{stat} {_listed(value, found.presentation.formats.get(stat) if found else None)}"


def _wrapped(parts: Sequence[str], first: str, indent: str) -> list[str]:
    lines, line = [], first
    for part in parts:
        candidate = f"{line} · {part}" if line != first else line + part
        if line != first and len(candidate) > _WIDTH:
            lines.append(line)
            candidate = indent + part
        line = candidate
    return [*lines, line] if parts else lines


def more_metric_lines(evals: Sequence[Entry]) -> list[str]:
    """Every recorded metric the tables do not show: the mean of per-row metrics (with
    corpus and derived statistics in parentheses), then each statistic of dataset-level metrics."""
    lines, shown = [], _tabled()
    for entry in evals:
        metrics = entry.metrics
        names = sorted(set(metrics) - shown, key=_natural)
        dataset_level = [name for name in names if _dataset_stats(name) is not None]
        per_row = [
            part
            for name in names
            if name not in dataset_level
            for part in _mean_part(name, metrics[name])
        ]
        block = _wrapped(per_row, "    ", "    ")
        for name in dataset_level:
            stats, wanted = metrics[name], _dataset_stats(name) or ()
            parts = [_dataset_part(name, stat, stats[stat]) for stat in wanted if stat in stats]
            block += _wrapped(parts, f"    {name}: ", "      ")
        if block:
            lines += [f"  {entry.label} ({entry.n} rows):", *block]
    return ["More metrics (mean over rows unless named):", *lines] if lines else []


def note_lines(evals: Sequence[Entry]) -> list[str]:
    """What the metrics' aggregations say of each eval (a judge metric's agreement with
    people, two judges compared), each block under its title."""
    lines = []
    for entry in evals:
        for title, said in entry.notes.items():
            lines += [f"  {entry.label}: {title}", *(f"    {line}" for line in said)]
    return ["Notes of the metrics:", *lines] if lines else []


def signature_lines(evals: Sequence[Entry]) -> list[str]:
    """Per eval, how its tool-dependent numbers were computed: sacrebleu's signature of
    each (``bleu``, ``bleu.corpus``), so numbers computed differently are not compared."""
    lines = [
        f"  {entry.label}: {name} {signature}"
        for entry in evals
        for name, signature in sorted(entry.signatures.items())
    ]
    return (
        ["Signatures (sacrebleu's; numbers signed differently are not comparable):", *lines]
        if lines
        else []
    )


def _stage_lines(evals: Sequence[Entry]) -> list[str]:
    lines = []
    for entry in evals:
        stages = entry.breakdowns.get("tokens_by_stage")
        if stages:
            parts = " · ".join(f"{stage} {amount(v['mean'])}" for stage, v in stages.items())
            lines.append(f"  {entry.label}: {parts}")
    return ["Tokens by stage (mean per row):", *lines] if lines else []


def _stop_reason_lines(evals: Sequence[Entry]) -> list[str]:
    lines = []
    for entry in evals:
        reasons = entry.breakdowns.get("stop_reason")
        if reasons:
            ordered = sorted(reasons.items(), key=lambda item: (-item[1]["sum"], item[0]))
            parts = [f"{reason} {v['sum']:.0f} ({v['mean']:.0%})" for reason, v in ordered]
            lines += _wrapped(parts, f"  {entry.label}: ", "    ")
    return ["Stop reasons (rows, share):", *lines] if lines else []


def kinds(transformations: Transformations) -> list[tuple[str, list[str]]]:
    """The transformations' lists as the reports title them."""
    return [(title, list(ids)) for title, ids in transformations.kinds()]


def transformation_lines(evals: Sequence[Entry]) -> list[str]:
    """Per compared system: the ids that went IDK → supported, and the regressions."""
    lines = []
    for entry in evals:
        reference = entry.compare_to
        if reference is None:
            continue
        head = f"  {entry.label} vs {reference}:"
        found = entry.transformations
        if found is None:
            lines.append(f"{head} {entry.transformations_note}")
            continue
        lines.append(f"{head} {found.compared} ids compared")
        for title, ids in kinds(found):
            listed = ids or ["none"]
            lines += _wrapped(listed, f"    {title} ({len(ids)}): ", "      ")
    return ["Transformations (by row id):", *lines] if lines else []


def pairing_line(stored: BaselineView) -> str:
    """How a paired baseline's rows pair with this run's."""
    return describe_pairing(
        *(stored.count(what) for what in ("shared", "stored_rows", "removed", "added", "changed"))
    )


def stored_baseline_lines(evals: Sequence[Entry]) -> list[str]:
    """Per eval with a stored baseline: how its rows pair with this run's, the unpaired
    ids and the transformations; evals where nothing moved share one line."""
    lines, quiet = [], 0
    for entry in evals:
        stored = entry.baseline
        status = stored.status if stored else None
        if stored is None or status == "none stored":
            continue
        head = f"  {entry.label}:"
        if status == "not compared":
            first, listed = problem_listing(str(stored.problem))
            lines.append(f"{head} not compared: {first}")
            lines += [f"    {line}" for line in listed]
            continue
        versions = stored.not_compared
        if versions:
            lines.append(f"{head} {not_compared_title(list(versions))}:")
            lines += [f"    {line}" for differences in versions.values() for line in differences]
        if status == "not paired":
            lines.append(f"{head} rows not paired: {stored.note}")
            continue
        found = stored.transformations
        moved = found is not None and (found.idk_to_supported or found.regressions)
        exact = not any(stored.count(what) for what in ("added", "removed", "changed"))
        if exact and not moved and found is not None:  # unknown states are said below
            if versions:  # this eval has its own lines already
                lines.append("    every stored row paired, none changed state")
            else:
                quiet += 1
            continue
        lines.append(f"{head} {pairing_line(stored)}")
        for title, key in UNPAIRED:
            ids = stored.ids(key)
            if ids:
                lines += _wrapped(list(ids), f"    {title} ({len(ids)}): ", "      ")
        if found is not None:
            for title, ids in kinds(found):
                lines += _wrapped(ids or ["none"], f"    {title} ({len(ids)}): ", "      ")
        else:
            lines.append(f"    no transformations: {stored.transformations_note}")
    if quiet:
        other = "other " if lines else ""
        lines.append(f"  {quiet} {other}eval(s): every stored row paired, none changed state")
    return ["Stored baselines (rows paired by id):", *lines] if lines else []


def scale(suite: MetricInfo, dash: str = "-") -> str:
    """A suite's scale from its declared range: ``0-100``."""
    low, high = suite.range or (0.0, 1.0)
    return f"{low:g}{dash}{high:g}"


def _count(stats: Mapping[str, float], name: str | None) -> list[str]:
    return [] if name is None else [count(stats[name])]


def trust_lines(model: ReportModel) -> list[str]:
    """The table of each dataset-level suite (the Trust-Score, 0-100) of the evals that
    ran it: ``N`` is the suite's own count of rows (``Presentation.count``)."""
    lines = []
    for suite in suites():
        with_suite = [entry for entry in model.evals if suite.name in entry.metrics]
        if not with_suite:
            continue
        columns = suite_columns(suite)
        rows = [
            [
                str(entry.label),
                *_count(entry.metrics[suite.name], suite.presentation.count),
                *(c.cell(entry) for c in columns),
            ]
            for entry in with_suite
        ]
        lead = ["Eval", *(["N"] if suite.presentation.count else [])]
        table = render_table([*lead, *(c.heading for c in columns)], rows)
        warnings = [
            f"  {entry.label}: {message}"
            for entry in with_suite
            for message in entry.dataset_details.get("trust_warnings", ())
        ]
        judge = model.trust_judge.description if model.trust_judge else None
        lines += [f"{suite.label} ({scale(suite)}; judge: {judge}):", *table, *warnings]
    return lines


def row_summary(evals: Sequence[Entry]) -> str:
    """``Rows: 40 passed, 2 failed, 1 errored``: a failed row is one a test's assertion
    failed on, an errored one could not be evaluated."""
    counts = row_counts(evals)
    return f"Rows: {counts['passed']} passed, {counts['failed']} failed, {counts['error']} errored"


def _gate_lines(evals: Sequence[Entry]) -> list[str]:
    rows = [row_summary(evals)] if any(row_counts(evals).values()) else []
    if not gates(evals):
        return [*rows, "Gates: none configured for these evals"]
    lines = [*rows, gate_summary(evals)]
    for entry in evals:
        for gate in entry.gates:
            if gate.status != "passed":
                first_line = gate.message.splitlines()[0]
                status = gate.status.upper()
                lines.append(f"  {status:7} {gate_nodeid(entry, gate)}: {first_line}")
                stats = gate.stats
                if stats is not None and stats.verdict and gate.status == "failed":
                    lines.append(f"          evidence: {evidence_text(stats)}")
    return lines


def comparison_lines(evals: Sequence[Entry]) -> list[str]:
    """The comparison gates' evidence: the paired change over the rows both sides
    recorded, its interval, p-value, pairs, MDE and verdict; comparisons in which every
    pair is unchanged share one line."""
    rows, unchanged = comparison_table(evals)
    if not rows and not unchanged:
        return []
    lines = ["Comparisons (paired by row: the change, its interval, p of no change, MDE):"]
    if rows:
        headings = ["Gate", "Status", "Change [interval]", "p", "Pairs", "MDE", "Verdict"]
        lines += ["  " + line for line in render_table(headings, rows)]
    if unchanged:
        lines.append(f"  {unchanged} other comparison(s): every paired row unchanged")
    return lines


def regressed_lines(evals: Sequence[Entry]) -> list[str]:
    """Gates that pass although some paired rows break their rule on their own."""
    found = regressed_despite_passing(evals)
    lines = []
    for nodeid, count_, rows in found:
        more = [f"and {count_ - len(rows)} more"] if count_ > len(rows) else []
        lines += _wrapped([*rows, *more], f"  {nodeid} ({count_}): ", "    ")
    return ["Passing gates with rows that break the rule on their own:", *lines] if lines else []


def history_line(history: HistoryView | None) -> str | None:
    """Whether this run was appended to the run history, where, and how many runs it
    records; ``None`` when no history is kept."""
    if history is None:
        return None
    where, recorded = history.path, f"{history.recorded} run(s) recorded"
    if history.appended:
        return f"run history: this run appended to {where} ({recorded})"
    return f"run history: this run NOT appended to {where}: {history.note} ({recorded})"


def _citations(settings: Mapping[str, Any]) -> str:
    pattern = settings.get("citation_pattern")
    return str(settings["citation_format"]) + (f" and {pattern}" if pattern else "")


def terminal_lines(
    report: ReportModel | Mapping[str, Any],
    thresholds_path: str | None,
    notes: Iterable[str] = (),
) -> list[str]:
    """The ragmetrics section of the terminal summary of ``report`` (the model, or a
    report document read into it); ``notes`` (what the run did besides scoring) close
    it."""
    model = model_of(report)
    settings, evals, notes = model.settings, model.evals, list(notes)
    lines = [
        f"thresholds: {thresholds_path or 'none'} · citations: {_citations(settings)}"
        f" · IDK phrases: {len(settings['idk_patterns'])} · tau_sim: {settings['tau_sim']:g}",
        "",
        *_table(evals, main_columns(), ("Eval", "N")),
        "",
        "Appendix",
        *_table(evals, appendix_columns(), ("Eval",)),
    ]
    for block in (
        _stage_lines(evals),
        _stop_reason_lines(evals),
        transformation_lines(evals),
        stored_baseline_lines(evals),
        more_metric_lines(evals),
        note_lines(evals),
        signature_lines(evals),
        trust_lines(model),
    ):
        if block:
            lines += ["", *block]
    for block in (comparison_lines(evals), regressed_lines(evals)):
        if block:
            lines += ["", *block]
    lines += ["", f"{NOT_COMPUTED} = not computed by this eval", "", *_gate_lines(evals)]
    warnings = [f"  {warning}" for entry in evals for warning in entry.warnings]
    warnings += [f"  {advice}" for advice in advice_lines(evals)]
    if warnings:
        lines += ["", "Warnings:", *warnings]
    history = history_line(model.history)
    if history is not None:
        notes.append(history)
    if notes:
        lines += ["", *notes]
    return lines
