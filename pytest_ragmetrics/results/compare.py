"""Comparing the systems of one eval with its reference system
(docs/metrics.md#3-comparing-systems).

For every system other than the marker's ``compare_to``, on the controller after the rows
were merged:

* ``vs_baseline``: ratios and differences of its aggregates to the reference system's,
  those each metric declares (``Presentation.versus``: ``tokens_mean_ratio``,
  ``tokens_p50_ratio``, ``overlap_mean_delta``, ``f1_mean_delta``,
  ``f1_short_mean_delta``), each present when both systems recorded the metric (and, for a
  ratio, the reference's value is not 0). It is an aggregate like any other, so a gate may
  use it: ``"vs_baseline.tokens_mean_ratio" = "<= 1.2"``.
* **Transformations**, matched by row id. A row is *supported* when it does not abstain,
  its F1 is above 0 and at least one of its sentences is supported by what it cites.
  ``idk_to_supported``: the reference abstained, the system's row is supported.
  ``regressions``: the reference's row is supported, the system's is not (it abstained,
  answered wrongly, or cites nothing that supports it). The metrics read are those
  declared with each role (``Presentation.role``: ``abstains`` is ``abstain``, ``correct``
  ``f1``, ``supported`` ``overlap``, whose rows carry the ``sentences`` detail); they need
  all three recorded for both systems; otherwise the summary says which are missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pytest_ragmetrics.metrics.base import Role
from pytest_ragmetrics.metrics.catalog import SPECS, VERSUS, VS_BASELINE
from pytest_ragmetrics.results.summary import EvalSummary, RowResult
from pytest_ragmetrics.results.transformations import Transformations

# The row detail of the ``supported`` metric: its sentences, each supported or not.
SENTENCES = "sentences"


def role_metric(role: Role) -> str:
    """The built-in metric declared with the transformations' ``role``; a ``LookupError``
    naming the role when none or several are."""
    found = [info.name for spec in SPECS for info in spec.records if info.presentation.role == role]
    if len(found) != 1:
        raise LookupError(
            f"the transformations read one metric with the role {role!r}; the metric "
            f"declarations give {len(found)} ({', '.join(found) or 'none'}): declare it on "
            "one metric's Presentation(role=...)"
        )
    return found[0]


ABSTAINS = role_metric("abstains")
CORRECT = role_metric("correct")
SUPPORTED = role_metric("supported")
TRANSFORMATION_METRICS = (ABSTAINS, CORRECT, SUPPORTED)


def _value(summary: EvalSummary, metric: str, stat: str) -> float | None:
    return summary.metrics.get(metric, {}).get(stat)


def vs_baseline(system: EvalSummary, reference: EvalSummary) -> dict[str, float]:
    """The ratios and differences of ``system``'s aggregates to ``reference``'s."""
    stats: dict[str, float] = {}
    for name, metric, versus in VERSUS:
        ours, theirs = _value(system, metric, versus.stat), _value(reference, metric, versus.stat)
        if versus.how == "ratio" and ours is not None and theirs:
            stats[name] = ours / theirs
        elif versus.how == "delta" and ours is not None and theirs is not None:
            stats[name] = ours - theirs
    return stats


def row_state(row: RowResult) -> str | None:
    """``"idk"``, ``"supported"`` or ``"other"``; ``None`` when a needed value is missing."""
    values = row.values
    if any(m not in values for m in (ABSTAINS, CORRECT)) or SENTENCES not in row.details:
        return None
    if values[ABSTAINS]:
        return "idk"
    supported = any(s.get("supported") for s in row.details[SENTENCES])
    return "supported" if values[CORRECT] > 0 and supported else "other"


def missing_metrics(metrics: Mapping[str, object]) -> list[str]:
    """The metrics the transformations need that ``metrics`` lacks."""
    return [m for m in TRANSFORMATION_METRICS if m not in metrics]


def transitions(
    before: Mapping[str, str | None], after: Sequence[tuple[str, str | None]]
) -> Transformations:
    """The transformations from the ``before`` states (by row id) to the ``after`` ones,
    over the ids whose state is known on both sides."""
    up, down, compared = [], [], 0
    for row_id, new in after:
        old = before.get(row_id)
        if old is None or new is None:
            continue
        compared += 1
        if old == "idk" and new == "supported":
            up.append(row_id)
        elif old == "supported" and new != "supported":
            down.append(row_id)
    return Transformations(tuple(up), tuple(down), compared)


def transformations(
    system: EvalSummary, reference: EvalSummary
) -> tuple[Transformations | None, str | None]:
    """The transformations from ``reference`` to ``system``, or why there are none."""
    missing = sorted(set(missing_metrics(system.metrics)) | set(missing_metrics(reference.metrics)))
    if missing:
        return None, (
            f"transformations need {', '.join(TRANSFORMATION_METRICS)} recorded for both "
            f"systems; missing: {', '.join(missing)}"
        )
    before = {row.id: row_state(row) for row in reference.rows}
    return transitions(before, [(row.id, row_state(row)) for row in system.rows]), None


def references(summaries: Sequence[EvalSummary]) -> dict[str, EvalSummary]:
    """The reference system's summary of each eval that compares systems, by eval name."""
    return {
        s.info.name: s
        for s in summaries
        if s.info.compare_to is not None and s.info.system == s.info.compare_to
    }


def compare_systems(summaries: Sequence[EvalSummary]) -> list[EvalSummary]:
    """``summaries`` with every compared system's ``vs_baseline`` and transformations."""
    reference_of = references(summaries)
    result = []
    for summary in summaries:
        if not summary.info.compared:
            result.append(summary)
            continue
        reference = reference_of.get(summary.info.name)
        if reference is None:
            note = f"the reference system {summary.info.compare_to!r} did not run"
            result.append(replace(summary, transformations_note=note))
            continue
        metrics = dict(summary.metrics)
        stats = vs_baseline(summary, reference)
        if stats:
            metrics[VS_BASELINE] = stats
        found, why = transformations(summary, reference)
        result.append(
            replace(summary, metrics=metrics, transformations=found, transformations_note=why)
        )
    return result
