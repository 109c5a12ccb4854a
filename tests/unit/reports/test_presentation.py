"""The reports show what the metrics declare (``MetricInfo.presentation``): the tables'
columns, the plots, the ``vs_baseline`` statistics and the transformations' metrics.
Expected headings and orders are those docs/reports.md shows for the bundled run."""

from __future__ import annotations

from pytest_ragmetrics.metrics import catalog
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Column,
    MetricInfo,
    Presentation,
)
from pytest_ragmetrics.reports.columns import (
    appendix_columns,
    main_columns,
    suite_columns,
    system_columns,
    vs_columns,
)
from pytest_ragmetrics.reports.html.numbers import formatted, metric_kind
from pytest_ragmetrics.reports.model import EvalView
from pytest_ragmetrics.reports.presentation import (
    bar_metrics,
    distribution_metrics,
    not_row_values,
    pareto_axes,
    suites,
)
from pytest_ragmetrics.results.compare import TRANSFORMATION_METRICS


def _view(metrics: dict[str, dict[str, float]]) -> EvalView:
    return EvalView.from_dict({"name": "e", "label": "e", "n": 1, "metrics": metrics})


def test_the_main_table_is_the_documented_one() -> None:
    # docs/reports.md: "Eval  N  Faithfulness  Overlap  F1  Tokens  P50 ms  Abstain"
    shown = [(c.heading, c.metric, c.stat) for c in main_columns()]
    assert shown == [
        ("Faithfulness", "faithfulness", "mean"),
        ("Overlap", "overlap", "mean"),
        ("F1", "f1", "mean"),
        ("Tokens", "tokens", "mean"),
        ("P50 ms", "latency_ms", "p50"),
        ("Abstain", "abstain", "mean"),
    ]


def test_the_appendix_is_em_p95_idk_citations_and_errors() -> None:
    # docs/reports.md: "an appendix (EM, P95 latency, IDK+Cit, errors)"
    assert [c.heading for c in appendix_columns()] == ["EM", "P95 ms", "IDK+Cit", "Errors"]
    errors = appendix_columns()[-1]
    assert errors.cell(_view({"errors": {"sum": 2.0}})) == "2"


def test_the_systems_table_puts_f1_short_beside_f1_and_the_counts_after() -> None:
    headings = [c.heading for c in system_columns()]
    assert headings == [
        "Faithfulness",
        "Overlap",
        "F1",
        "F1 short",
        "Tokens",
        "Cost $",
        "P50 ms",
        "Abstain",
        "Wrong on answerable (sum)",
        "IDK on answerable (sum)",
        "Rounds",
        "Rounds > 1",
    ]


def test_a_compared_system_gets_the_declared_ratios_and_deltas() -> None:
    shown = [(c.heading, c.metric, c.stat, c.fmt(1.1)) for c in vs_columns()]
    assert shown == [
        ("Tokens mean ×", "vs_baseline", "tokens_mean_ratio", "1.10×"),
        ("Tokens p50 ×", "vs_baseline", "tokens_p50_ratio", "1.10×"),
        ("Cost $ mean ×", "vs_baseline", "cost_usd_mean_ratio", "1.10×"),
        ("Δ Overlap", "vs_baseline", "overlap_mean_delta", "+1.100"),
        ("Δ F1", "vs_baseline", "f1_mean_delta", "+1.100"),
        ("Δ F1 short", "vs_baseline", "f1_short_mean_delta", "+1.100"),
    ]
    assert tuple(c.stat for c in vs_columns()) == catalog.VS_BASELINE_STATS
    assert metric_kind("vs_baseline", "tokens_p50_ratio") == "ratio"
    assert metric_kind("vs_baseline", "f1_mean_delta") == "delta"


def test_the_trust_score_suite_table() -> None:
    (suite,) = suites()
    assert (suite.name, suite.label, suite.presentation.count) == (
        "trust",
        "Trust-Score",
        "num_samples",
    )
    assert [c.heading for c in suite_columns(suite)] == [
        "Answered",
        "Refusal F1",
        "Answerable F1",
        "Macro F1",
        "Calib EM F1",
        "Citation F1",
        "Trust",
    ]


def test_the_plots_and_the_rows_table() -> None:
    assert distribution_metrics() == (
        "overlap",
        "faithfulness",
        "f1",
        "f1_short",
        "em",
        "tokens",
        "latency_ms",
    )
    assert bar_metrics() == (
        "overlap",
        "faithfulness",
        "f1",
        "f1_short",
        "em",
        "abstain",
        "anchor_coverage",
        "determinism",
    )
    assert not_row_values() == {"errors"}
    axes = pareto_axes()
    assert axes is not None
    assert [info.name for info in axes] == ["overlap", "tokens"]


def test_the_transformations_read_the_metrics_declared_with_their_roles() -> None:
    assert TRANSFORMATION_METRICS == ("abstain", "f1", "overlap")


def test_declared_formats_of_dataset_statistics() -> None:
    assert formatted(559.4, "judge", "avg_latency_ms") == "559"
    assert formatted(12.25, "judge", "tokens") == "12.2"  # 1 decimal, as a token mean
    assert formatted(12.0, "sources", "used_chunks") == "12"  # no format: a number


def test_a_metric_declared_with_a_presentation_is_shown() -> None:
    """A metric the reports have never heard of gets its column and its bar from its
    declaration alone."""
    info = MetricInfo(
        "answer_length",
        "words in the answer",
        range=UNIT,
        presentation=Presentation(
            label="Length", columns=(Column("main", 45, format="amount"),), bar=100
        ),
    )
    run = catalog.Catalog([catalog.Declared(info, None, "conftest.py:1")])
    with catalog.catalog_in_force(run):
        headings = [c.heading for c in main_columns()]
        (length,) = [c for c in main_columns() if c.metric == "answer_length"]
        last_bar = bar_metrics()[-1]
    assert headings == ["Faithfulness", "Overlap", "F1", "Tokens", "Length", "P50 ms", "Abstain"]
    assert length.cell(_view({"answer_length": {"mean": 2.666}})) == "2.7"
    assert last_bar == "answer_length"


def test_a_metric_that_declares_nothing_gets_the_defaults() -> None:
    info = MetricInfo("plain", "a metric", range=UNIT)
    assert info.label == "plain"
    assert info.presentation == Presentation()
    assert (info.presentation.columns, info.presentation.listed) == ((), True)
