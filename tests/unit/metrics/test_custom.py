"""A metric declared in user code (``metrics.custom``): the checks of its declaration and
of every value it returns. Which run's declarations a catalog holds: test_catalog.py."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import Column, MetricContext, Presentation
from pytest_ragmetrics.metrics.custom import (
    CorpusError,
    CustomMetric,
    CustomMetricError,
    DeclarationError,
    RowValue,
    declare,
    declare_dataset,
)

ROW = Row("r1", "rows.jsonl", 3, 0, {"answer": "Paris is the capital [CIT:d1]."})
SETTINGS = Settings()
CONTEXT = MetricContext(SETTINGS, embed=lambda texts: [])


def _declared(
    returns: Any, bounds: tuple[float, float] | None = (0, 10), binary: bool = False
) -> CustomMetric:
    def share(row: Row) -> Any:
        """A share."""
        return returns

    return declare(share, "share", ("answer",), bounds, binary)


def test_a_number_or_a_pair_is_recorded_with_its_evidence() -> None:
    assert _declared(4).measure(ROW, CONTEXT).values == {"share": 4.0}
    measured = _declared((0.5, "1 of 2")).measure(ROW, CONTEXT)
    assert (measured.values, measured.evidence) == ({"share": 0.5}, "1 of 2")
    assert _declared(True, binary=True, bounds=None).measure(ROW, CONTEXT).values == {"share": 1}


@pytest.mark.parametrize(
    ("returns", "why"),
    [
        (math.nan, "not finite"),
        (-math.inf, "not finite"),
        (10.5, "outside its range [0, 10]"),
        (-1, "outside its range [0, 10]"),
        ("3", "not a real number"),
        (None, "not a real number"),
        ((1.0, 2.0), "a tuple must be (value, evidence string)"),
        ((1.0, "a", "b"), "a tuple must be (value, evidence string)"),
    ],
)
def test_a_value_that_is_no_usable_number_is_an_error_of_the_row(returns: Any, why: str) -> None:
    with pytest.raises(CustomMetricError, match=r"^share \(.*test_custom.py:\d+\) returned") as e:
        _declared(returns).measure(ROW, CONTEXT)
    assert why in str(e.value)
    assert isinstance(e.value, RowError)  # reported like a built-in metric's bad input


# 10**400 has 401 decimal digits; the largest float is about 1.8e308, so neither it nor
# 10**5000 (beyond Python's 4300 digits of int-to-str) converts to one.
@pytest.mark.parametrize(
    ("returns", "bounds", "shown"),
    [
        (10**400, None, "an integer of about 401 digits"),
        (10**400, (0, 10), "an integer of about 401 digits"),
        (-(10**400), None, "an integer of about 401 digits"),
        ((10**400, "huge"), None, "an integer of about 401 digits"),
        (RowValue(10**400), None, "an integer of about 401 digits"),
        (10**5000, None, "an integer of about 5001 digits"),
        (Fraction(10**400, 3), None, "a Fraction"),
    ],
    ids=["int", "int-in-range", "negative", "pair", "RowValue", "int-5001-digits", "Fraction"],
)
def test_a_number_too_large_for_a_float_is_an_error_naming_the_metric(
    returns: Any, bounds: tuple[float, float] | None, shown: str
) -> None:
    with pytest.raises(CustomMetricError, match=r"^share \(.*test_custom.py:\d+\) returned") as e:
        _declared(returns, bounds=bounds).measure(ROW, CONTEXT)
    assert f"returned {shown}" in str(e.value)
    assert "too large for a float" in str(e.value)


def test_a_binary_metric_takes_only_0_and_1() -> None:
    with pytest.raises(CustomMetricError, match="a binary metric returns 0 or 1"):
        _declared(0.5, bounds=None, binary=True).measure(ROW, CONTEXT)


def test_an_exception_is_an_error_of_the_row_chained_to_the_cause() -> None:
    def broken(row: Row) -> float:
        """Broken."""
        return 1 / 0

    with pytest.raises(CustomMetricError, match="raised ZeroDivisionError") as e:
        declare(broken, None, (), None, False).measure(ROW, CONTEXT)
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_a_missing_field_is_the_rows_error() -> None:
    def needs_gold(row: Row) -> float:
        """Needs gold."""
        return 1.0

    with pytest.raises(RowError, match="gold"):
        declare(needs_gold, None, ("gold",), None, False).measure(ROW, CONTEXT)


@pytest.mark.parametrize(
    ("name", "bounds", "binary", "message"),
    [
        ("a-b", None, False, "is not a Python identifier"),
        ("_private", None, False, "is not a Python identifier"),
        ("ok", (2, 1), False, "is empty; give low <= high"),
        ("ok", (0, 2), True, "a binary metric's range is (0, 1)"),
        ("ok", ("low", 1), False, "range is (low, high), two numbers"),
    ],
)
def test_a_malformed_declaration_is_refused(
    name: str, bounds: Any, binary: bool, message: str
) -> None:
    def function(row: Row) -> float:
        """Doc."""
        return 1.0

    with pytest.raises(DeclarationError, match=r"test_custom.py:\d+: ") as e:
        declare(function, name, (), bounds, binary)
    assert message in str(e.value)


def test_the_docstring_is_the_description_and_the_fixture_text() -> None:
    def numbers_cited(row: Row) -> float:
        """Share of the answer's numbers found in its contexts.

        Numbers are runs of digits."""
        return 1.0

    spec = declare(numbers_cited, None, ("answer",), (0, 1), False).spec()
    assert spec.records[0].description == "Share of the answer's numbers found in its contexts."
    assert spec.records[0].stats == ("mean", "sum", "count", "p50", "p95")
    assert spec.doc.startswith("Share of the answer's numbers found in its contexts.\n\n")
    assert "range [0, 1]; declared at " in spec.doc


def _dataset(returns: Any) -> Any:
    def answer_set(rows: Any) -> Any:
        """How the answers look as a set."""
        return returns

    return declare_dataset(answer_set, None, ("answer",), ("share", "count"))


def test_a_dataset_level_metric_records_exactly_its_declared_statistics() -> None:
    measured = _dataset({"share": 0.5, "count": 3}).measure([ROW], SETTINGS)
    assert measured.stats == {"share": 0.5, "count": 3.0}
    assert _dataset({}).info().stats == ("share", "count")


@pytest.mark.parametrize(
    ("returns", "why"),
    [
        ({"share": 0.5}, "(missing ['count'], undeclared [])"),
        ({"share": 0.5, "count": 3, "extra": 1}, "(missing [], undeclared ['extra'])"),
        ({"share": math.inf, "count": 3}, "returned share = inf: not a finite number"),
        ([0.5, 3], "not a mapping of statistic to number"),
    ],
)
def test_a_dataset_level_metric_with_other_statistics_errors(returns: Any, why: str) -> None:
    with pytest.raises(CustomMetricError, match=r"^answer_set \(.*test_custom.py:\d+\) ") as e:
        _dataset(returns).measure([ROW], SETTINGS)
    assert why in str(e.value)


def test_a_dataset_level_statistic_too_large_for_a_float_errors_naming_it() -> None:
    with pytest.raises(CustomMetricError, match=r"^answer_set \(.*test_custom.py:\d+\) ") as e:
        _dataset({"share": 0.5, "count": 10**400}).measure([ROW], SETTINGS)
    assert "returned count = an integer of about 401 digits: too large for a float" in str(e.value)


@pytest.mark.parametrize("stats", [(), "share", ("share", "p-95")])
def test_a_dataset_level_metric_names_its_statistics(stats: Any) -> None:
    def answer_set(rows: Any) -> Any:
        """Doc."""
        return {}

    with pytest.raises(DeclarationError, match="stats is a tuple of the statistics it returns"):
        declare_dataset(answer_set, None, (), stats)


@dataclass(frozen=True)
class CitedSettings:
    marker: str = "["  # what counts as a citation: signed
    note: str = "cited"  # words only: not signed


def _cited_share(rows: Any, settings: CitedSettings) -> Any:
    """Share of the answers holding the marker."""
    cited = sum(settings.marker in row.answer for row in rows)
    return {"share": cited / len(rows), "count": len(rows)}


ROWS = [
    Row("r1", "rows.jsonl", 1, 0, {"answer": "Paris [CIT:d1]."}),
    Row("r2", "rows.jsonl", 2, 1, {"answer": "Berlin (d2)."}),
]


def test_a_dataset_level_metric_reads_its_own_settings_table() -> None:
    """r1 holds "[", r2 does not: 1/2; r2 holds "(", r1 does not: 1/2 again, so the marker
    "CIT" (r1 only) and "." (both: 2/2) tell the table was read."""
    metric = declare_dataset(
        _cited_share, "cited", ("answer",), ("share", "count"), CitedSettings, ("marker",)
    )
    assert metric.measure(ROWS, SETTINGS).stats == {"share": 0.5, "count": 2.0}
    dotted = Settings(tables={"cited": CitedSettings(marker=".")})
    assert metric.measure(ROWS, dotted).stats == {"share": 1.0, "count": 2.0}
    assert metric.settings is not None
    assert metric.settings.signed_fields == ("marker",)
    assert metric.doc.endswith("Settings: [settings.cited] (marker, note).")


def test_a_dataset_level_metric_carries_its_presentation() -> None:
    shown = Presentation(label="Cited", columns=(Column("main", 45, stat="share"),))
    metric = declare_dataset(_cited_share, "cited", (), ("share",), CitedSettings, None, shown)
    assert metric.info().presentation == shown
    assert metric.info().label == "Cited"
    assert _dataset({}).info().presentation == Presentation()  # the default


@dataclass
class Mutable:
    marker: str = "["


def _uses_no_settings(rows: Any) -> Any:
    """Takes no settings."""
    return {}


@pytest.mark.parametrize(
    ("function", "settings", "signed", "presentation", "message"),
    [
        (
            _cited_share,
            None,
            ("marker",),
            None,
            "signed names fields of its settings, and it has none",
        ),
        (_cited_share, Mutable, None, None, "cited: [settings.cited]: Mutable is not frozen"),
        (_cited_share, CitedSettings, ("other",), None, "signed names 'other', not a field"),
        (
            _uses_no_settings,
            CitedSettings,
            None,
            None,
            "cited is declared with settings=, so it is called as cited({argument}, settings): "
            "give the function a second parameter named settings",
        ),
        (
            _cited_share,
            CitedSettings,
            None,
            {"label": "Cited"},
            "cited: presentation is dict, not a Presentation: give presentation=",
        ),
    ],
)
@pytest.mark.parametrize("argument", ["row", "rows"])
def test_a_dataset_level_declaration_is_checked_as_a_per_row_one(
    function: Any, settings: Any, signed: Any, presentation: Any, message: str, argument: str
) -> None:
    """``settings``, ``signed`` and ``presentation`` are refused in the same words for a
    per-row metric (``row``) and a dataset-level one (``rows``)."""
    if argument == "row":
        declaring = functools.partial(declare, function, "cited", (), None, False, None)
    else:
        declaring = functools.partial(declare_dataset, function, "cited", (), ("share",))
    with pytest.raises(DeclarationError, match=r"test_custom.py:\d+: ") as raised:
        declaring(settings, signed, presentation)
    assert message.format(argument=argument) in str(raised.value)


# -- corpus statistics: sufficient statistics per row, reduced from their sums -----------


def _pooled(returns: Any) -> CustomMetric:
    """``pooled = markers / words`` over the summed row statistics."""

    def marker_words(row: Row) -> Any:
        """Share of the answer's words that are citation markers."""
        return returns

    def pooled(sums: Any) -> float:
        return float(sums["markers"] / sums["words"])

    return declare(marker_words, None, ("answer",), (0, 1), False, {"pooled": pooled})


def test_a_rows_sufficient_statistics_are_recorded_as_its_breakdown() -> None:
    measured = _pooled(RowValue(0.2, "1 of 5", {"markers": 1, "words": 5})).measure(ROW, CONTEXT)
    assert measured.values == {"marker_words": 0.2}
    assert measured.evidence == "1 of 5"
    assert measured.breakdowns == {"marker_words_stats": {"markers": 1.0, "words": 5.0}}


def test_the_corpus_statistic_is_its_function_of_the_sums() -> None:
    """3 markers in 14 words: 3/14, not the mean of the rows' shares."""
    metric = _pooled(RowValue(0.0))
    assert metric.reduce({"markers": 3.0, "words": 14.0}, Settings()) == {"pooled": 3 / 14}
    info = metric.spec().records[0]
    assert info.corpus == ("pooled",)
    assert "pooled" in info.stats


@pytest.mark.parametrize(
    ("returns", "why"),
    [
        (0.2, "a metric declared with corpus= returns RowValue(value, stats={...})"),
        (RowValue(0.2), "a metric declared with corpus= returns RowValue(value, stats={...})"),
        (RowValue(0.2, stats={}), "stats is a non-empty mapping of name to number"),
        (RowValue(0.2, stats={"words": "5"}), "stats['words'] = '5' is not a number by name"),
        (RowValue(0.2, stats={"words": math.inf}), "stats['words'] is not finite"),
        (RowValue(0.2, 5, {"words": 1}), "evidence must be a string"),  # type: ignore[arg-type]
        (RowValue(math.nan, stats={"words": 1}), "not finite"),
        (RowValue(2.0, stats={"words": 1}), "outside its range [0, 1]"),
    ],
)
def test_a_corpus_metric_without_usable_statistics_errors_the_row(returns: Any, why: str) -> None:
    with pytest.raises(CustomMetricError, match=r"^marker_words \(\S*test_custom.py:\d+\)") as e:
        _pooled(returns).measure(ROW, CONTEXT)
    assert why in str(e.value)


def test_statistics_from_a_metric_without_corpus_statistics_are_refused() -> None:
    with pytest.raises(CustomMetricError, match="summed only for a metric declared with corpus="):
        _declared(RowValue(1.0, stats={"words": 5})).measure(ROW, CONTEXT)
    assert _declared(RowValue(1.0, "one")).measure(ROW, CONTEXT).evidence == "one"


def test_row_statistics_too_large_for_a_float_error_the_row_naming_them() -> None:
    returns = RowValue(0.2, stats={"words": 10**400})
    with pytest.raises(CustomMetricError, match=r"^marker_words \(\S*test_custom.py:\d+\)") as e:
        _pooled(returns).measure(ROW, CONTEXT)
    assert "stats['words'] is an integer of about 401 digits: too large for a float" in str(e.value)


def test_a_corpus_function_returning_a_number_too_large_for_a_float_is_refused() -> None:
    def marker_words(row: Row) -> float:
        """Doc."""
        return 0.0

    metric = declare(marker_words, None, (), None, False, {"huge": lambda sums: 10**400})
    with pytest.raises(CorpusError, match=r"^marker_words.huge \(") as e:
        metric.reduce({"words": 1.0}, Settings())
    assert "returned an integer of about 401 digits, too large for a float" in str(e.value)


@pytest.mark.parametrize(
    ("sums", "why"),
    [
        ({"markers": 0.0, "words": 0.0}, "raised ZeroDivisionError: float division by zero (at "),
        ({"markers": 1.0}, "raised KeyError: 'words' (at "),
    ],
)
def test_a_corpus_function_that_raises_names_the_statistic_and_the_sums(
    sums: dict[str, float], why: str
) -> None:
    with pytest.raises(CorpusError) as e:
        _pooled(RowValue(0.0)).reduce(sums, Settings())
    message = str(e.value)
    assert message.startswith("marker_words.pooled (tests/unit/metrics/test_custom.py:")
    assert why in message
    assert "test_custom.py:" in message.split("(at ")[1]  # the line in pooled that raised
    summed = ", ".join(f"{part}={total:g}" for part, total in sorted(sums.items()))
    assert f"given the summed statistics {{{summed}}}" in message


def test_a_corpus_function_returning_no_finite_number_is_refused() -> None:
    def marker_words(row: Row) -> float:
        """Doc."""
        return 0.0

    metric = declare(marker_words, None, (), None, False, {"odd": lambda sums: math.nan})
    with pytest.raises(CorpusError, match=r"marker_words.odd .* returned nan, not a finite"):
        metric.reduce({"words": 1.0}, Settings())


@pytest.mark.parametrize(
    ("corpus", "binary", "message"),
    [
        ({}, False, "corpus maps each corpus statistic's name to its function"),
        ({"mean": len}, False, "corpus statistic 'mean' must be a Python identifier other"),
        ({"rate": len}, True, "corpus statistic 'rate' must be a Python identifier other"),
        ({"p-95": len}, False, "corpus statistic 'p-95' must be a Python identifier"),
        ({"pooled": 3}, False, "corpus statistic 'pooled' maps to 3, not a function"),
    ],
)
def test_a_malformed_corpus_declaration_is_refused(corpus: Any, binary: bool, message: str) -> None:
    def function(row: Row) -> float:
        """Doc."""
        return 1.0

    with pytest.raises(DeclarationError, match=r"test_custom.py:\d+: ok: ") as e:
        declare(function, "ok", (), None, binary, corpus)
    assert message in str(e.value)


def _appending(rows_or_row: Any) -> Any:
    """Appends to the gold answers of the row(s) it is given."""
    for row in rows_or_row if isinstance(rows_or_row, list) else [rows_or_row]:
        row.gold.append("x")
    return {"share": 1.0, "count": 1} if isinstance(rows_or_row, list) else 1.0


def test_a_metric_changing_its_row_errors_naming_it_and_the_row_is_unchanged() -> None:
    row = Row("r1", "rows.jsonl", 3, 0, {"answer": "Paris.", "gold": ["Paris"]})
    metric = declare(_appending, "appends", (), None, False)
    with pytest.raises(CustomMetricError) as raised:
        metric.measure(row, MetricContext(Settings(), embed=lambda texts: []))
    assert str(raised.value).startswith(
        "appends (" + metric.origin + ") raised ReadOnlyRowError: row['gold'].append() would "
        "change the row"
    )
    assert row.data == {"answer": "Paris.", "gold": ["Paris"]}


def test_the_metrics_of_a_row_share_its_read_only_view() -> None:
    """Built once per row: a second metric of the row is given the same view."""
    seen: list[Row] = []

    def first(row: Row) -> float:
        """Keeps the row it was given."""
        seen.append(row)
        return 1.0

    row = Row("r1", "rows.jsonl", 3, 0, {"gold": ["Paris"]})
    ctx = MetricContext(Settings(), embed=lambda texts: [])  # one row's, its memo fresh
    declare(first, "one", (), None, False).measure(row, ctx)
    declare(first, "two", (), None, False).measure(row, ctx)
    assert seen[0] is seen[1]
    assert seen[0] is not row
    assert seen[0].data == row.data


def test_a_dataset_level_metric_changing_its_rows_errors_and_the_rows_are_unchanged() -> None:
    row = Row("r1", "rows.jsonl", 3, 0, {"answer": "Paris.", "gold": ["Paris"]})
    metric = declare_dataset(_appending, "appends", (), ("share", "count"))
    with pytest.raises(CustomMetricError, match=r"raised ReadOnlyRowError: row\['gold'\]\.append"):
        metric.measure([row], SETTINGS)
    assert row.data == {"answer": "Paris.", "gold": ["Paris"]}
