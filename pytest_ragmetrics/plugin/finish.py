"""The end of a run, on the controller: aggregate the payloads, compare systems, update
baselines, evaluate the gates. What it finds is returned as a ``Finished``; the run
session keeps it (``plugin.session``), and ``plugin.gate_reports`` reports the gates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.files import display_path, write_atomic
from pytest_ragmetrics.gates.evaluate import GateResult, Reference, correct, evaluate_gates
from pytest_ragmetrics.gates.stored import pair_rows
from pytest_ragmetrics.inference import release_draws
from pytest_ragmetrics.judge.config import JUDGE_TABLE
from pytest_ragmetrics.live.outputs import write_outputs
from pytest_ragmetrics.metrics.catalog import SPECS, in_force
from pytest_ragmetrics.metrics.cost import COST_BY_MODEL, price_signature
from pytest_ragmetrics.plugin.state import RunState
from pytest_ragmetrics.reports.write import Unwritten, os_cause
from pytest_ragmetrics.results.baseline import (
    BaselineError,
    baseline_path,
    check_signature,
    read_baseline,
    render_baseline,
)
from pytest_ragmetrics.results.baseline_rows import StoredRow
from pytest_ragmetrics.results.compare import compare_systems, references, row_state
from pytest_ragmetrics.results.pairing import BaselineState, accepting
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    all_digested,
    citation_censuses,
    whole_rows,
)
from pytest_ragmetrics.text.citations import describe_citations


@dataclass(frozen=True)
class Finished:
    """What the end of a run found: each eval's summary (with its stored baseline and
    warnings), every gate's result, the notes for the terminal, and the files asked for
    that could not be written (baselines, saved outputs), which fail the run."""

    summaries: tuple[EvalSummary, ...]
    gate_results: tuple[GateResult, ...]
    notes: tuple[str, ...]
    unwritten: tuple[Unwritten, ...] = ()


def current_signature(summary: EvalSummary, state: RunState) -> dict[str, Any]:
    """What makes this run's numbers comparable with a baseline's: the metric settings
    (and the system and judge they are of, and the version of each metric of the user's
    that has one), never the system's outputs."""
    info = summary.info
    signature: dict[str, Any] = dict(state.thresholds.settings.signature())
    # Present only when used, so baselines of plain evals stay as they were.
    if info.system is not None:
        signature["system"] = info.system
    # what a metric declares of the run (the judge's model and prompts)
    for metric in in_force().metrics.values():
        if metric.signature is not None and metric.name in summary.metrics:
            signed = metric.signature(state.thresholds)
            if signed is not None:
                signature[metric.name] = signed
    # the price of each model cost_usd priced the rows with: only its numbers are refused
    priced = sorted(summary.breakdowns.get(COST_BY_MODEL, {}))
    signature.update(price_signature(priced, state.thresholds.settings.prices))
    for spec in SPECS:  # a built-in metric redefined: only its own numbers are refused
        for record in spec.records if spec.version is not None else ():
            if record.name in summary.metrics:
                signature[f"{record.name}.version"] = str(spec.version)
    for name, declared in in_force().declared.items():  # a metric of the user's, rewritten
        if declared.version is not None and name in summary.metrics:
            signature[f"{name}.version"] = declared.version
    return signature


def partial_reason(summary: EvalSummary, state: RunState, stopped: str | None) -> str | None:
    """Why this eval's rows are not all there, or ``None`` for a complete run.

    Complete means every test function of the eval ran every row of the dataset; a test
    deselected with -k, a row skipped, a --ragmetrics-limit or an early stop all make the
    run partial.
    """
    info = summary.info
    of = f"{info.dataset} (system {info.system!r})" if info.system is not None else info.dataset
    ran = f"{summary.n} of {info.dataset_rows} rows of {of} ran"
    if stopped:
        return f"the run stopped early ({stopped}); {ran}"
    incomplete = summary.incomplete_tests()
    if not incomplete:
        return None
    limit = state.options.limit
    if limit is not None and limit < info.dataset_rows:
        cause = f"--ragmetrics-limit {limit}"
    else:
        cause = "partial run (-k, -m, --lf, skips, ...)"
    parts = [ran] if summary.n < info.dataset_rows else []
    if len(summary.coverage) > 1 or not parts:
        parts += [f"{test} ran {count}" for test, count in incomplete.items()]
    if summary.skipped:
        parts.append(f"{summary.skipped} row(s) skipped")
    detail = "; ".join(parts)
    return f"{cause}: {detail}; gates need every row (--ragmetrics-force-gates checks anyway)"


def _update_command(summary: EvalSummary) -> str:
    return f"pytest {summary.info.module} --ragmetrics-update-baseline"


def _path(summary: EvalSummary, state: RunState) -> Path:
    info = summary.info
    return baseline_path(state.project_root, info.module, info.name, info.system)


def _accepting(command: str) -> str:
    return (
        f"store this run's values as the baseline (this accepts them as the reference): {command}"
    )


def _load_state(summary: EvalSummary, state: RunState) -> BaselineState:
    path = _path(summary, state)
    shown = display_path(path, state.project_root)
    command = _update_command(summary)
    try:
        baseline = read_baseline(path)
    except BaselineError as error:
        problem = f"{error}\nrepair the file from version control, or {accepting(command)}"
        return BaselineState(shown, problem=problem, update_command=command)
    if baseline is None:
        return BaselineState(shown, update_command=command)
    if not all_digested(summary.rows):
        # The file was not there when the rows reported (plugin.recording.eval_digests):
        # their inputs were not digested, and rows cannot be paired without them.
        problem = (
            f"the baseline {shown} appeared while the rows ran, so this run cannot pair its "
            "rows with it: run again"
        )
        return BaselineState(shown, baseline, problem, command)
    check = check_signature(baseline.settings_signature(), current_signature(summary, state))
    if check.settings:
        differences = [
            *check.settings,
            *(line for lines in check.metrics.values() for line in lines),
        ]
        problem = (
            f"the baseline {shown} was made with other metric settings, so it is not "
            "compared; the settings that differ:\n  "
            + "\n  ".join(differences)
            + "\nrestore the settings; or, if the new settings are meant to stay, "
            + accepting(command)
        )
        if any(line.startswith(f"{JUDGE_TABLE}:") for line in check.settings):
            problem += (
                "\nfor a new judge, see what changes first: name the old one in "
                "[judge.previous] and run with --ragmetrics-judge-compare (docs/judge.md"
                "#comparing-two-judges)"
            )
        return BaselineState(shown, baseline, problem, command)
    pairing = pair_rows(summary, baseline, state.thresholds.settings)
    note = None
    if pairing is None:
        note = (
            f"the baseline {shown} is of schema {baseline.schema_version}: it holds "
            "aggregates only, so rows are not paired by id; to pair them, " + accepting(command)
        )
    return BaselineState(shown, baseline, None, command, pairing, note, not_compared=check.metrics)


def stored_rows(summary: EvalSummary) -> dict[str, StoredRow]:
    """Each row as a baseline stores it: values, sufficient statistics, state."""
    kept = {breakdown for breakdown, _ in in_force().corpus_stats.values()}
    return {
        row.id: StoredRow(
            row.inputs,
            dict(row.values),
            {name: parts for name, parts in row.breakdowns.items() if name in kept},
            row_state(row),
        )
        for row in summary.rows
    }


def _update_baseline(
    summary: EvalSummary, state: RunState, partial: str | None
) -> tuple[str, Unwritten | None]:
    """Store the eval's values as its baseline, unless the run cannot vouch for them;
    the note that says which, and the baseline that could not be written, if any."""
    path = _path(summary, state)
    refuse = partial or (f"{summary.errors} row(s) errored" if summary.errors else None)
    if refuse and not state.options.force_gates:
        return f"baseline of {summary.info.label} NOT updated: {refuse}", None
    # Per-row metrics with no value have nothing to store; dataset-level ones have no count.
    metrics = {name: stats for name, stats in summary.metrics.items() if stats.get("count", 1)}
    text = render_baseline(
        summary.info.label,
        current_signature(summary, state),
        summary.rows_used,
        metrics,
        stored_rows(summary),
        summary.info.dataset,
    )
    shown = display_path(path, state.project_root)
    try:
        write_atomic(path, text)
    except OSError as error:
        note = f"baseline of {summary.info.label} NOT written to {shown}: {os_cause(error)}"
        return note, Unwritten("--ragmetrics-update-baseline", note)
    return f"baseline of {summary.info.label} written to {shown}", None


def accepted_failures(before: Sequence[GateResult], after: Sequence[GateResult]) -> list[str]:
    """The gates that failed against the baseline an update replaced and pass against the
    one it wrote: what the update accepts, each with its first line (its change), so an
    update never hides a regression it makes the new reference."""
    passing = {result.name for result in after if result.status == "passed"}
    return [
        result.message.splitlines()[0]
        for result in before
        if result.status == "failed" and result.name in passing
    ]


def citation_warning(summary: EvalSummary, settings: Settings) -> str | None:
    """A warning when the eval read citations, its rows carry contexts, and no answer holds
    a marker the plugin recognises: answers citing in another format score as uncited."""
    census = citation_censuses(summary.rows)  # counted by the store's layouts, no row made
    with_contexts = sum(rows for counts, rows in census if counts["contexts"])
    if not with_contexts or any(counts["cites"] for counts, _ in census):
        return None
    return (
        f"no answer of {summary.info.label} holds a citation marker the plugin reads "
        f"({describe_citations(settings.citations)}), though {with_contexts} of its "
        "rows carry contexts: every sentence counts as uncited, so overlap, faithfulness "
        "and idk_citation say nothing; if the answers cite another way, describe it with "
        "citation_pattern in [settings]"
    )


def uncalled_warnings(summary: EvalSummary) -> list[str]:
    """One warning per metric fixture a test takes but called on none of the rows it ran:
    nothing of it was recorded, most often a forgotten call, and a gate on it cannot be
    checked."""
    return [
        f"{test} takes the metric fixture `{fixture}` but called it on none of the "
        f"{rows} row{'s' if rows != 1 else ''} it ran: nothing of it was recorded; call "
        f"{fixture}(row) in the test, or take the argument out"
        for test, fixture, rows in summary.uncalled
    ]


def finish_run(state: RunState, summaries: Sequence[EvalSummary], stopped: str | None) -> Finished:
    """Compare the systems of the aggregated evals (``results.summary.summarize``), update
    baselines if asked, and evaluate every gate; ``stopped`` says why the run stopped
    early, if it did."""
    compared = compare_systems(summaries)
    notes = live_notes(compared)
    unwritten: list[Unwritten] = []
    if state.options.save_outputs is not None:
        note, failed = save_outputs(state.options.save_outputs, compared, state)
        notes.append(note)
        unwritten += [failed] if failed else []
    partials = {s.info.label: partial_reason(s, state, stopped) for s in compared}
    reference_of = references(compared)
    results: list[GateResult] = []
    summaries = []
    for summary in compared:
        info = summary.info
        partial = partials[info.label]
        skip = None if state.options.force_gates else partial
        reference = _reference(info, reference_of.get(info.name), partials, state)
        gates = state.thresholds.gates_for(info.name, info.system)
        settings = state.thresholds.settings
        before: list[GateResult] = []
        if state.options.update_baseline:
            earlier = _load_state(summary, state)  # what the update replaces
            if earlier.baseline is not None and not earlier.problem:
                before = evaluate_gates(summary, gates, earlier, skip, reference, settings=settings)
            note, failed = _update_baseline(summary, state, partial)
            notes.append(note)
            unwritten += [failed] if failed else []
        stored = _load_state(summary, state)
        evaluated = evaluate_gates(summary, gates, stored, skip, reference, settings=settings)
        if accepted := accepted_failures(before, evaluated):
            notes.append(
                f"the baseline of {info.label} replaced by this run failed "
                f"{len(accepted)} gate(s) against the earlier one, which it now accepts: "
                + "; ".join(accepted)
            )
        results += evaluated
        warning = citation_warning(summary, state.thresholds.settings)
        warnings = (*uncalled_warnings(summary), *((warning,) if warning else ()))
        summaries.append(replace(summary, stored=stored, warnings=warnings))
    correction = state.thresholds.settings.stats.correction
    results = correct(results, correction)
    if correction != "none" and not any(r.gate and r.gate.rule.statistical for r in results):
        notes.append(
            f'[settings.stats] correction = "{correction}" adjusted nothing: no gate of this '
            "run is read on an interval (a rule with '@ 95%'; docs/statistics.md)"
        )
    release_draws()
    return Finished(tuple(summaries), tuple(results), tuple(notes), tuple(unwritten))


def live_notes(summaries: Sequence[EvalSummary]) -> list[str]:
    """One line per live system: how many outputs were called and how many came from the
    cache (with the latency and tokens they were measured with)."""
    notes = []
    for summary in summaries:
        having = whole_rows(summary.rows, "details")
        live = [row.details["live"] for row in having if "live" in row.details]
        if not live:
            continue
        cached = sum(1 for entry in live if entry["cached"])
        notes.append(
            f"live system {live[0]['system']!r} of {summary.info.label} (fingerprint "
            f"{live[0]['fingerprint']}): {len(live)} output(s), {len(live) - cached} called "
            f"now, {cached} from the cache (keeping their measured latency and tokens)"
        )
    return notes


def save_outputs(
    path: Path, summaries: Sequence[EvalSummary], state: RunState
) -> tuple[str, Unwritten | None]:
    """Write the live rows' outputs as one dataset; the note that says what was written,
    and the file if it could not be written."""
    shown = display_path(path, state.project_root)
    live = [s for s in summaries if any(row.output for row in whole_rows(s.rows, "output"))]
    evals = sorted({s.info.name for s in live})
    if len(evals) > 1:
        note = (
            f"--ragmetrics-save-outputs {shown}: not written: {len(evals)} live evals ran "
            f"({', '.join(evals)}) and one file holds one dataset: run them one at a time"
        )
        return note, Unwritten("--ragmetrics-save-outputs", note)
    rows = [row.output for s in live for row in s.rows if row.output is not None]
    try:
        written = write_outputs(path, rows)
    except OSError as error:
        failed = Unwritten.report("--ragmetrics-save-outputs", shown, error)
        return failed.message, failed
    missing = [f"{s.info.label}: {row.id}" for s in live for row in s.rows if row.output is None]
    note = f"--ragmetrics-save-outputs: {written} output(s) written to {shown}"
    if missing:
        note += f"; {len(missing)} row(s) have no output (they errored): {', '.join(missing)}"
    partial = [s.info.label for s in live if s.n < s.info.dataset_rows]
    if partial:
        note += f"; partial run, not every question was answered ({', '.join(partial)})"
    return note, None


def _reference(
    info: EvalInfo,
    summary: EvalSummary | None,
    partials: Mapping[str, str | None],
    state: RunState,
) -> Reference | None:
    """The reference system a compared system's gates use, with why its numbers cannot be
    compared: it did not run (``-k`` left it out), ran partially, or had errored rows (its
    means are then over fewer rows); ``--ragmetrics-force-gates`` compares the last two."""
    if not info.compared:
        return None
    name = repr(info.compare_to)
    if summary is None:
        return Reference(None, f"the reference system {name} did not run")
    if state.options.force_gates:
        return Reference(summary)
    partial = partials[summary.info.label]
    if partial:
        return Reference(summary, f"the reference system {name} is partial: {partial}")
    if summary.errors:
        return Reference(
            summary,
            f"the reference system {name} had {summary.errors} errored row(s); fix them, or "
            "compare anyway with --ragmetrics-force-gates",
        )
    return Reference(summary)
