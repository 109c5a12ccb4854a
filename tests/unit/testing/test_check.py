"""check_metric fails, naming the metric, the property and the row, for a metric that
breaks each property; and the rewriting of one answer into the other citation format."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from hypothesis import Phase, settings

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    COUNT,
    UNIT,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
)
from pytest_ragmetrics.metrics.custom import declare
from pytest_ragmetrics.testing import (
    CITATION_FORMAT,
    DECLARED_VALUE,
    DETERMINISTIC,
    FINITE,
    IN_RANGE,
    NO_ERROR,
    PropertyFailure,
    check_metric,
    measure,
    metric_spec,
)
from pytest_ragmetrics.testing.check import _as_cit, _as_numbered, _both_formats, _rewrite

# Shrinking a row that fails whatever it holds only makes it smaller: time the test spends
# for nothing it checks (the shrunk row of a real failure is what a user reads).
FEW = settings(max_examples=25, deadline=None, database=None, phases=(Phase.generate,))


def _declared(function: Any, bounds: tuple[float, float] | None = (0, 1)) -> MetricSpec:
    return declare(function, None, ("answer",), bounds, False).spec()


def _failure(metric: Any, **kwargs: Any) -> PropertyFailure:
    with pytest.raises(PropertyFailure) as raised:
        check_metric(metric, settings=FEW, **kwargs)
    return raised.value


def out_of_range(row: Row) -> float:
    """Twice the answer's share of anything: 2."""
    return 2.0


def not_a_number(row: Row) -> float:
    """NaN on every row."""
    return math.nan


_calls = itertools.count()


def flip_flop(row: Row) -> float:
    """0 and 1 on alternate calls, whatever the row."""
    return float(next(_calls) % 2)


def cit_only(row: Row) -> float:
    """1 when the answer has a [CIT:..] marker: reads one citation format only."""
    return float("[CIT:" in (row.answer or ""))


def raises(row: Row) -> float:
    """Fails on every row."""
    raise KeyError("no such field")


def test_a_value_outside_the_declared_range_is_caught() -> None:
    failure = _failure(_declared(out_of_range))
    assert failure.property == DECLARED_VALUE
    message = str(failure)
    assert message.startswith(f"out_of_range: property {DECLARED_VALUE!r} failed")
    assert "outside its range [0, 1]" in message
    assert "\nrow: {" in message
    assert '"answer":' in message


def test_nan_is_caught() -> None:
    failure = _failure(_declared(not_a_number, bounds=None))
    assert failure.property == DECLARED_VALUE
    assert "not finite" in str(failure)


def test_a_nondeterministic_metric_is_caught() -> None:
    failure = _failure(_declared(flip_flop))
    assert failure.property == DETERMINISTIC
    assert f"flip_flop: property {DETERMINISTIC!r} failed" in str(failure)


def test_a_metric_reading_one_citation_format_is_caught() -> None:
    failure = _failure(_declared(cit_only))
    assert failure.property == CITATION_FORMAT
    message = str(failure)
    assert "with [CIT:id] markers" in message
    assert "with [n] markers" in message
    assert failure.row.answer is not None
    assert "[" in failure.row.answer


def test_a_metric_that_raises_is_caught() -> None:
    failure = _failure(_declared(raises))
    assert failure.property == NO_ERROR
    assert "raised KeyError" in str(failure)


def _builtin_like(values: dict[str, float], breakdowns: Any = None) -> MetricSpec:
    def compute(row: Row, ctx: MetricContext) -> Measured:
        return Measured(values, "fixed", breakdowns or {})

    # each declared with the range its definition gives it (docs/metrics.md)
    ranges = {"f1": UNIT, "em": UNIT, "tokens": COUNT}
    records = tuple(MetricInfo(name, "a test metric", range=ranges[name]) for name in values)
    return MetricSpec("fixed", "A fixed value.", records, ("answer",), compute)


def test_a_built_in_value_outside_its_documented_range_is_caught() -> None:
    failure = _failure(_builtin_like({"f1": 1.5}))
    assert failure.property == IN_RANGE
    assert "f1 = 1.5: outside its range [0, 1]" in str(failure)


def test_a_built_in_binary_value_must_be_0_or_1() -> None:
    spec = _builtin_like({"em": 0.5})
    spec = MetricSpec(spec.fixture, spec.doc, (MetricInfo("em", "0/1", kind="binary", range=UNIT),),
                      spec.requires, spec.compute)  # fmt: skip
    assert _failure(spec).property == IN_RANGE


def test_infinity_and_nan_statistics_are_caught() -> None:
    assert _failure(_builtin_like({"tokens": math.inf})).property == FINITE
    nan_statistic = _builtin_like({"f1": 0.5}, {"f1_stats": {"matches": math.nan}})
    failure = _failure(nan_statistic)
    assert failure.property == FINITE
    assert "f1_stats.matches = nan" in str(failure)


def test_a_declared_metric_is_found_by_what_metric_returned() -> None:
    from pytest_ragmetrics import metric

    @metric(requires=("answer",), range=(0, 1))
    def property_check_answer_length(row: Row) -> float:
        """1 when the answer has at most 40 words."""
        return float(len((row.answer or "").split()) <= 40)

    assert metric_spec(property_check_answer_length).fixture == "property_check_answer_length"
    check_metric(property_check_answer_length, settings=FEW)


def test_an_unknown_metric_names_the_close_ones() -> None:
    with pytest.raises(LookupError, match=r"'f2' is no per-row metric.*did you mean f1"):
        metric_spec("f2")


def test_unknown_properties_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown properties"):
        check_metric("f1", properties=("monotone",))


# -- one answer in both formats, by hand -------------------------------------------------


def test_cit_markers_become_indices_and_back() -> None:
    ids = ["x", "y"]
    assert _rewrite("A [CIT:y]. B.[CIT:x]", ids, _as_numbered) == "A [2]. B.[1]"
    assert _rewrite("A [2]. B [1, 2].", ids, _as_cit) == "A [CIT:y]. B [CIT:x][CIT:y]."


def test_invalid_citations_stay_invalid_and_distinct() -> None:
    ids = ["x"]
    assert _rewrite("A [CIT:p] [CIT:q] [CIT:p].", ids, _as_numbered) == "A [2] [3] [2]."
    assert _rewrite("A [5] [7].", ids, _as_cit) == "A [CIT:missing-1] [CIT:missing-2]."


def test_rows_with_a_doc_id_twice_are_left_out() -> None:
    contexts = [{"doc_id": "x", "text": "a"}, {"doc_id": "x", "text": "b"}]
    assert _both_formats(Row("r", "f", 1, 0, {"answer": "A [2].", "contexts": contexts})) is None


def test_the_repeats_are_rewritten_with_the_answer() -> None:
    contexts = [{"doc_id": "x", "text": "a"}]
    row = Row(
        "r", "f", 1, 0, {"answer": "A [1].", "repeats": ["A [1].", "B"], "contexts": contexts}
    )
    written = _both_formats(row)
    assert written is not None
    assert written[0].data["repeats"] == ["A [CIT:x].", "B"]
    assert written[1].data["answer"] == "A [1]."


def test_measure_computes_as_the_fixture_does() -> None:
    # By hand (SQuAD F1): "the tower [CIT:a]." is "tower" once stripped and normalised;
    # against "Eiffel tower": precision 1/1, recall 1/2, F1 2/3.
    contexts = [{"doc_id": "a", "text": "The tower."}]
    data = {"answer": "The tower [CIT:a].", "gold": "Eiffel tower", "contexts": contexts}
    row = Row("r", "f", 1, 0, {**data, "relevant": ["b"]})
    assert measure("f1", row).values["f1"] == pytest.approx(2 / 3)
    # The ranking is the contexts' order, ["a"]; "b" is the one relevant document.
    assert measure("hit_rate", row, options={"k": 1}).values == {"hit_rate@1": 0.0}


def test_each_metric_has_its_own_examples_in_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    from hypothesis.internal.reflection import function_digest

    from pytest_ragmetrics.testing import check as module

    seen: list[bytes] = []
    real_given = module.given

    def spying_given(*strategies: Any) -> Any:
        def wrap(test: Any) -> Any:
            seen.append(function_digest(test))
            return real_given(*strategies)(test)

        return wrap

    monkeypatch.setattr(module, "given", spying_given)
    check_metric("em", settings=FEW)
    check_metric("f1", settings=FEW)
    check_metric("hit_rate", options={"k": 1}, settings=FEW)
    check_metric("hit_rate", options={"k": 2}, settings=FEW)
    assert len(set(seen)) == 4
