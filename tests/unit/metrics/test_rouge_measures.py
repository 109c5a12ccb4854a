"""The ROUGE fixtures' ``measure=`` option: precision and recall recorded as metrics of their
own (``rouge1_recall``), equal to rouge-score's ``Score`` fields, from one scoring per row."""

from __future__ import annotations

import pytest
from rouge_score import rouge_scorer  # type: ignore[import-untyped]

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.catalog import FIXTURES, METRICS
from pytest_ragmetrics.metrics.text import RougeScore, measure_rouge

TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
MEASURES = ("fmeasure", "precision", "recall")
# ASCII, so rouge-score's own tokenizer splits as ours does; several golds, and lines for
# rougeLsum. Answers carry citation markers, which the fixtures strip first.
ROWS = [
    ("The cat sat on the mat [1].", ["the cat is on the mat", "a cat sat"]),
    ("Dogs were running fast [CIT:d2].\nCats sat.", ["cats sat\nthe dog is running", "dogs ran"]),
    ("nothing in common", ["completely different words here"]),
    ("", ["an empty answer"]),
    ("one two three four five six", ["six five four three two one", "one two"]),
]
STRIPPED = [
    "The cat sat on the mat.",
    "Dogs were running fast.\nCats sat.",
    "nothing in common",
    "",
    "one two three four five six",
]


def _no_embed(texts: object) -> object:
    raise AssertionError("ROUGE embeds nothing")


def _row(answer: str, gold: list[str]) -> Row:
    return Row("r1", "rows.jsonl", 1, 0, {"answer": answer, "gold": gold})


@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize("rouge_type", TYPES)
def test_every_measure_equals_rouge_scores_field(rouge_type: str, use_stemmer: bool) -> None:
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=use_stemmer)
    measure = measure_rouge(rouge_type)
    for (answer, golds), stripped in zip(ROWS, STRIPPED, strict=True):
        expected = scorer.score_multi(golds, stripped)[rouge_type]
        ctx = MetricContext(Settings(rouge_use_stemmer=use_stemmer), _no_embed)
        for field in MEASURES:
            measured = measure(_row(answer, golds), ctx, measure=field)
            name = rouge_type if field == "fmeasure" else f"{rouge_type}_{field}"
            assert measured.primary == name
            assert list(measured.values) == [name]
            value = measured.values[name]
            assert value == pytest.approx(getattr(expected, field), rel=0, abs=1e-12), (
                answer,
                field,
            )


def test_the_default_records_the_f_measure_under_the_types_own_name() -> None:
    # "a b" vs "a c": unigrams 1 of 2 matched -> P = R = F = 1/2
    measured = measure_rouge("rouge1")(_row("a b", ["a c"]), MetricContext(Settings(), _no_embed))
    assert measured.values == {"rouge1": 0.5}


def test_precision_and_recall_by_hand() -> None:
    # answer "a b c d", gold "a b": rouge1 2 matched of 4 answer / 2 gold tokens:
    # precision 1/2, recall 1, F 2/3.
    ctx = MetricContext(Settings(), _no_embed)
    row = _row("a b c d", ["a b"])
    assert measure_rouge("rouge1")(row, ctx, measure="precision").values == {
        "rouge1_precision": 0.5
    }
    assert measure_rouge("rouge1")(row, ctx, measure="recall").values == {"rouge1_recall": 1.0}
    assert measure_rouge("rouge1")(row, ctx).values["rouge1"] == pytest.approx(2 / 3)


def test_precision_and_recall_are_those_of_the_gold_with_the_best_f() -> None:
    # answer "a b": gold "a" has P 1/2, R 1, F 2/3; gold "a b x y z" has P 1, R 2/5,
    # F 4/7 < 2/3. The first wins: precision 1/2, not the best precision 1.
    ctx = MetricContext(Settings(), _no_embed)
    row = _row("a b", ["a", "a b x y z"])
    assert measure_rouge("rouge1")(row, ctx, measure="precision").values["rouge1_precision"] == 0.5


def test_one_scoring_per_row_serves_every_type_and_measure() -> None:
    ctx = MetricContext(Settings(), _no_embed)
    row = _row("a b", ["a c"])
    measure_rouge("rouge1")(row, ctx)
    (key,) = ctx.memo
    # Replace the stored scores: later calls must read them instead of scoring again.
    planted = {name: RougeScore(0.25, 0.75, 0.375) for name in ("rouge1", "rouge2", "rougeL")}
    ctx.memo[key] = planted
    assert measure_rouge("rouge2")(row, ctx, measure="recall").values == {"rouge2_recall": 0.75}
    assert measure_rouge("rougeL")(row, ctx, measure="precision").values["rougeL_precision"] == 0.25
    assert measure_rouge("rouge1")(row, ctx).values == {"rouge1": 0.375}
    # rougeLsum is scored apart (its sentence split is not paid by rouge1/2/L alone).
    measure_rouge("rougeLsum")(row, ctx)
    assert len(ctx.memo) == 2


def test_an_unknown_measure_is_refused_naming_the_choices() -> None:
    ctx = MetricContext(Settings(), _no_embed)
    with pytest.raises(ValueError, match="unknown measure") as error:
        measure_rouge("rougeL")(_row("a", ["a"]), ctx, measure="f1")
    assert str(error.value) == (
        "rougeL(row, measure='f1'): unknown measure; use one of 'fmeasure', 'precision', "
        "'recall' (records rougeL, rougeL_precision, rougeL_recall)"
    )


@pytest.mark.parametrize("rouge_type", TYPES)
def test_each_measure_is_a_gateable_metric_of_the_fixture(rouge_type: str) -> None:
    spec = FIXTURES[rouge_type]
    assert spec.options == ("measure",)
    names = [info.name for info in spec.records]
    assert names == [rouge_type, f"{rouge_type}_precision", f"{rouge_type}_recall"]
    assert all(name in METRICS for name in names)
    assert spec.primary == rouge_type
