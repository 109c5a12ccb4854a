"""The ``trust`` metric fixture: one row's Trust-Score statistics, recorded for the
eval's suite numbers (``pytest_ragmetrics.metrics.trust.suite``), which exist only for the
whole eval; the fixture returns the row's calibrated STR-EM."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    PERCENT,
    AggregateContext,
    Column,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Presentation,
)
from pytest_ragmetrics.metrics.trust import TRUST_KEYS

# The suite and its judges are imported when a row is scored: the declaration below,
# which every pytest run imports with the plugin, needs neither.
if TYPE_CHECKING:
    from pytest_ragmetrics.metrics.hooks import Aggregated
    from pytest_ragmetrics.metrics.trust.judges import Judge
    from pytest_ragmetrics.metrics.trust.suite import RowTrust, TrustItem


def _trust_item(row: Row) -> TrustItem:
    from pytest_ragmetrics.metrics.trust.suite import TrustInputError, trust_item

    try:
        return trust_item(row.data, row.where())
    except TrustInputError as error:
        raise RowError(str(error)) from None


def trust_texts(row: Row, settings: MetricSettings) -> list[str]:
    """What the embedding judge will embed for the row (nothing for a table judge)."""
    if settings.trust_judge != "embedding":
        return []
    from pytest_ragmetrics.metrics.trust.suite import judge_texts

    return judge_texts(_trust_item(row))


def measure_trust(row: Row, ctx: MetricContext) -> Measured:
    """The row's Trust-Score statistics, recorded for the eval's numbers; the fixture
    returns the row's calibrated STR-EM (0-100) with the rest as evidence."""
    from pytest_ragmetrics.metrics.judge import TalliedEntailment
    from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE, judge_for
    from pytest_ragmetrics.metrics.trust.suite import row_trust

    settings = ctx.settings
    tallied = None
    if settings.trust_judge == LLM_TRUST_JUDGE:
        tallied = TalliedEntailment(ctx.judge(), row)
        judge: Judge = tallied
    else:
        judge = judge_for(
            settings.trust_judge, settings.base_dir, ctx.embed, settings.trust_judge_tau
        )
    stats = row_trust(_trust_item(row), judge, settings.refusal_flag, settings.refusal_threshold)
    details = {TRUST: stats.as_dict(), **(tallied.details() if tallied else {})}
    evidence = Evidence(_trust_evidence, stats)
    return Measured({}, evidence, details=details, score=100 * stats.calib_str_em)


def _trust_evidence(stats: RowTrust) -> str:
    """``trust``'s evidence: refused or not, answerable or not, STR-EM, citations."""
    citation = (
        "no sentence to cite from"
        if stats.citation is None
        else f"citation recall {stats.citation.recall:.3g}, precision "
        f"{stats.citation.precision:.3g} over {stats.citation.sentences} sentence(s)"
    )
    return (
        f"{'refused' if stats.refused else 'answered'}, "
        f"{'answerable' if stats.answerable else 'unanswerable'}; STR-EM {stats.str_em:.3g}, "
        f"calibrated {stats.calib_str_em:.3g}; {citation}"
    )


def trust_asks_judge(settings: MetricSettings) -> bool:
    """Whether ``trust`` asks the LLM judge for verdicts: with ``trust_judge = "llm"``."""
    from pytest_ragmetrics.metrics.trust.judges import LLM_TRUST_JUDGE

    return settings.trust_judge == LLM_TRUST_JUDGE


def aggregate_trust_rows(
    recorded: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Mapping[str, float]],
    context: AggregateContext,
) -> Aggregated:
    """The eval's Trust-Score numbers from its rows' recorded statistics, in dataset order
    (the reference averages in row order), with the suite's warnings for the report
    (``trust_warnings``)."""
    from pytest_ragmetrics.metrics.trust.suite import RowTrust, TrustWarning, aggregate_trust

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrustWarning)
        stats = aggregate_trust([RowTrust.from_dict(row) for row in recorded])
    messages = [str(w.message) for w in caught if issubclass(w.category, TrustWarning)]
    from pytest_ragmetrics.metrics.hooks import Aggregated

    return Aggregated(stats, {"trust_warnings": messages} if messages else {})


TRUST = "trust"


SPECS = (
    MetricSpec(
        TRUST,
        "The Trust-Score suite (refusal groundedness, calibrated STR-EM, citation "
        "groundedness): records the row's statistics for the eval's trust.<number> "
        "(trust_score, 0-100, and the rest) and returns the row's calibrated STR-EM, 0-100.",
        (
            MetricInfo(
                TRUST,
                "the Trust-Score suite over the eval's rows",
                range=PERCENT,
                dataset=TRUST_KEYS,
                presentation=Presentation(
                    label="Trust-Score",
                    columns=(
                        Column("suite", 10, "answered_num", "Answered", "count"),
                        Column("suite", 20, "refusal_f1", "Refusal F1", "amount"),
                        Column("suite", 30, "answerable_f1", "Answerable F1", "amount"),
                        Column("suite", 40, "macro_f1", "Macro F1", "amount"),
                        Column("suite", 50, "calib_str_em_f1", "Calib EM F1", "amount"),
                        Column("suite", 60, "answered_citation_f1", "Citation F1", "amount"),
                        Column("suite", 70, "trust_score", "Trust", "amount"),
                    ),
                    count="num_samples",
                ),
                aggregate=aggregate_trust_rows,
            ),
        ),
        ("answer", "gold", "contexts"),
        measure_trust,
        trust_texts,
        untested={
            "citation-format invariant": "its citations are the Trust-Score reference's [n] "
            "by definition (docs/metrics.md#2-trust-score)"
        },
        asks_judge=trust_asks_judge,
        reads_citations=True,
    ),
)
