"""The aggregation side of the tiered metrics: metric names with @k, corpus statistics from
summed sufficient statistics, dataset-level payloads, their rendering and their setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings, ThresholdsError, load_thresholds
from pytest_ragmetrics.metrics.classification import JUDGE_PIPELINE_COUNTS, Confusion
from pytest_ragmetrics.metrics.registry import UnknownAggregate, metric_info, split_aggregate
from pytest_ragmetrics.reports.document import entries, report_document
from pytest_ragmetrics.reports.terminal import more_metric_lines
from pytest_ragmetrics.results.summary import DatasetPayload, EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_x.py", "evals/test_x.py", "evals/data/x.jsonl", "0" * 64, 3)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ndcg@10.mean", ("ndcg@10", "mean")),
        ("ndcg.mean", ("ndcg", "mean")),
        ("hit_rate@5.rate", ("hit_rate@5", "rate")),
        ("mrr@3.p50", ("mrr@3", "p50")),
        ("bleu.corpus", ("bleu", "corpus")),
        ("judge_pipeline.f1", ("judge_pipeline", "f1")),
        ("embedding_space.avg_nn_distance", ("embedding_space", "avg_nn_distance")),
        ("sources.chunk_utilization", ("sources", "chunk_utilization")),
        ("retrieval_consistency@5.mean", ("retrieval_consistency@5", "mean")),
    ],
)
def test_aggregate_names_of_the_tiers(name: str, expected: tuple[str, str]) -> None:
    assert split_aggregate(name) == expected


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("hit_rate.rate", "needs a cutoff"),
        ("ndcg@0.mean", "integer >= 1"),
        ("ndcg@ten.mean", "integer >= 1"),
        ("f1@5.mean", "unknown metric"),
        ("bleu.f1", "unknown statistic"),
        ("embedding_space.mean", "unknown statistic"),  # one value set, no per-row mean
        ("hit_rate@5.corpus", "unknown statistic"),
    ],
)
def test_bad_tier_names_are_refused(name: str, fragment: str) -> None:
    with pytest.raises(UnknownAggregate, match=fragment):
        split_aggregate(name)


def test_cutoff_names_share_their_family() -> None:
    assert metric_info("precision@3") is metric_info("precision@10")
    assert metric_info("hit_rate@1").binary


def test_confusion_scores_by_hand() -> None:
    # TP 30, FP 4, FN 6, TN 20 (the bundled judge pipeline): accuracy 50/60, precision
    # 30/34, recall 30/36, f1 = 2PR/(P+R) = 60/70.
    counts = Confusion(tp=30, fp=4, fn=6, tn=20)
    assert counts.accuracy == 50 / 60
    assert counts.precision == 30 / 34
    assert counts.recall == 30 / 36
    assert counts.f1 == pytest.approx(60 / 70, abs=1e-15)


def test_confusion_zero_denominators_give_zero() -> None:
    nothing_shown = Confusion(fn=2, tn=1)
    assert (nothing_shown.precision, nothing_shown.recall, nothing_shown.f1) == (0.0, 0.0, 0.0)
    assert Confusion().accuracy == 0.0


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_confusion_of_rows_adds_up(decisions: list[tuple[bool, bool]]) -> None:
    total = Confusion()
    for predicted, actual in decisions:
        total = total + Confusion.of(predicted, actual)
    assert total.total == len(decisions)
    assert total.accuracy == sum(p == a for p, a in decisions) / len(decisions)
    for score in (total.accuracy, total.precision, total.recall, total.f1):
        assert 0.0 <= score <= 1.0


def _judge_row(row_id: str, index: int, show: bool, gold: bool) -> RowPayload:
    cell = Confusion.of(show, gold)
    return RowPayload(
        INFO,
        row_id,
        index,
        {"judge_pipeline": float(show == gold)},
        {JUDGE_PIPELINE_COUNTS: cell.counts()},
        None,
    )


def test_corpus_statistics_come_from_summed_counts() -> None:
    payloads = [
        _judge_row("a", 0, True, True),
        _judge_row("b", 1, True, False),
        _judge_row("c", 2, False, True),
    ]
    (summary,) = summarize(payloads, Settings())
    stats = summary.metrics["judge_pipeline"]
    # TP 1, FP 1, FN 1: precision 1/2, recall 1/2, f1 1/2, accuracy 1/3.
    assert (stats["tp"], stats["fp"], stats["fn"], stats["tn"]) == (1, 1, 1, 0)
    assert stats["precision"] == 0.5
    assert stats["recall"] == 0.5
    assert stats["accuracy"] == stats["mean"] == pytest.approx(1 / 3)


def test_dataset_payloads_merge_into_the_eval() -> None:
    rows = [
        RowPayload(INFO, "a", 0, {"mrr": 1.0}, {}, None),
        RowPayload(INFO, "b", 1, {"mrr": 0.5}, {}, None),
    ]
    space = DatasetPayload(
        INFO,
        "evals/test_x.py::test_space",
        ["evals/test_x.py::test_space", "test"],
        3,
        {"sources": {"chunk_utilization": 0.5, "used_chunks": 2}},
        {"sources": {"unknown_chunks": []}},
        None,
        False,
    )
    (summary,) = summarize([*rows, space], Settings())
    assert summary.metrics["sources"] == {"chunk_utilization": 0.5, "used_chunks": 2}
    assert summary.metrics["mrr"]["mean"] == 0.75
    assert summary.coverage["evals/test_x.py::test_space"] == 3
    assert summary.dataset_details == {"sources": {"unknown_chunks": []}}
    assert summary.errors == 0


def test_a_failed_dataset_test_counts_as_an_error() -> None:
    failed = DatasetPayload(INFO, "t::test_space", ["t::test_space"], 3, {}, {}, "boom", False)
    (summary,) = summarize([failed], Settings())
    assert summary.errors == 1
    assert summary.dataset_errors == ("boom",)
    assert "sources" not in summary.metrics
    assert summary.rows_used == 3


def test_more_metrics_golden() -> None:
    rows = [
        RowPayload(
            INFO,
            "a",
            0,
            {
                "hit_rate@10": 1.0,
                "hit_rate@5": 0.0,
                "f1": 1.0,
                "iprec_at_recall@1.0": 0.25,
                "iprec_at_recall@0.2": 0.5,
                "iprec_at_recall@0.0": 1.0,
            },
            {},
            None,
        ),
    ]
    space = DatasetPayload(
        INFO,
        "t::s",
        ["t::s", "test"],
        3,
        {"ux": {"questions": 3, "cache_hit_rate": 0.5}},
        {},
        None,
        False,
    )
    (summary,) = summarize([*rows, space], Settings())
    document = report_document([summary], [], Settings(), "9.9")
    assert more_metric_lines(entries(document)) == [
        "More metrics (mean over rows unless named):",
        "  evals/test_x.py (1 rows):",
        # natural order of k and of recall levels; f1 is in the main table
        "    hit_rate@5 0 · hit_rate@10 1 · iprec_at_recall@0.0 1 · iprec_at_recall@0.2 0.5",
        "    iprec_at_recall@1.0 0.25",
        "    ux: questions 3 · cache_hit_rate 0.5",
    ]


def test_rouge_use_stemmer_setting(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text("[settings]\nrouge_use_stemmer = true\n", encoding="utf-8")
    settings = load_thresholds(path).settings
    assert settings.rouge_use_stemmer is True
    assert settings.signature()["rouge_use_stemmer"] is True
    path.write_text("[settings]\n", encoding="utf-8")
    # At its default it stays out of the signature: older baselines remain comparable.
    assert "rouge_use_stemmer" not in load_thresholds(path).settings.signature()
    path.write_text('[settings]\nrouge_use_stemmer = "yes"\n', encoding="utf-8")
    with pytest.raises(ThresholdsError, match="rouge_use_stemmer: expected true or false"):
        load_thresholds(path)


def test_trust_numbers_are_gated_by_their_own_names() -> None:
    assert split_aggregate("trust_score") == ("trust", "trust_score")
    assert split_aggregate("refusal_f1") == ("trust", "refusal_f1")
    assert split_aggregate("trust.calib_str_em_f1") == ("trust", "calib_str_em_f1")
    with pytest.raises(UnknownAggregate, match="unknown statistic"):
        split_aggregate("trust.mean")
