"""Aggregation: statistics, merging row payloads, order independence."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics.base import MetricInfo
from pytest_ragmetrics.metrics.catalog import Catalog, Declared, catalog_in_force
from pytest_ragmetrics.metrics.hooks import Aggregated
from pytest_ragmetrics.results.stats import aggregate
from pytest_ragmetrics.results.summary import EvalInfo, Gathered, RowPayload, summarize

INFO = EvalInfo("evals/test_x.py", "evals/test_x.py", "evals/data/x.jsonl", "0" * 64, 4)


def test_aggregate_hand_computed() -> None:
    stats = aggregate([100.0, 200.0, 300.0, 400.0])
    assert stats["count"] == 4
    assert stats["sum"] == 1000.0
    assert stats["mean"] == 250.0
    assert stats["p50"] == 250.0  # halfway between the 2nd and 3rd value
    assert stats["p95"] == pytest.approx(385.0)  # rank 0.95 * 3 = 2.85: 300 + 0.85 * 100
    assert "rate" not in stats
    assert aggregate([0.0, 1.0], binary=True)["rate"] == 0.5


def test_no_values_has_a_count_and_nothing_else() -> None:
    assert aggregate([]) == {"count": 0}


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=50))
def test_percentiles_match_numpy_linear(values: list[float]) -> None:
    stats = aggregate(values)
    assert stats["p50"] == np.percentile(values, 50)
    assert stats["p95"] == np.percentile(values, 95)
    assert min(values) <= stats["mean"] <= max(values) or np.isclose(stats["mean"], min(values))


@given(
    st.lists(
        st.floats(-1e12, 1e12, allow_nan=False) | st.integers(-1000, 1000) | st.just(-0.0),
        min_size=1,
        max_size=300,
    )
)
def test_percentiles_are_numpys_to_the_last_bit(values: list[float]) -> None:
    """p50 and p95 are computed without numpy; numpy's linear method is the reference,
    bit for bit (``repr`` tells -0.0 from 0.0), for values of either sign and any count."""
    stats = aggregate(values)
    reference = np.percentile(np.asarray(values, dtype=float), [50, 95])
    assert (repr(stats["p50"]), repr(stats["p95"])) == tuple(repr(float(v)) for v in reference)
    assert type(stats["p50"]) is float
    assert type(stats["p95"]) is float


def test_percentiles_by_hand() -> None:
    """Four values: p50 sits halfway between the 2nd and 3rd, (2 + 4) / 2 = 3; p95 at
    position 3 * 0.95 = 2.85, 0.85 of the way from 4 to 10: 10 - 6 * 0.15 = 9.1."""
    stats = aggregate([10.0, 2.0, 4.0, 1.0])
    assert stats["p50"] == 3.0
    assert stats["p95"] == pytest.approx(9.1, abs=1e-12)
    assert aggregate([7.0])["p95"] == 7.0  # one value is every percentile


def test_a_zero_percentile_among_signed_zeros_is_numpys() -> None:
    """-0.0 and 0.0 are equal: which one a percentile picks is the order numpy's partition
    leaves them in, so such a percentile is numpy's own (the case Hypothesis found)."""
    values = [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0, -0.0, -0.0, -0.0]
    stats = aggregate(values)
    reference = np.percentile(np.asarray(values, dtype=float), [50, 95])
    assert (repr(stats["p50"]), repr(stats["p95"])) == tuple(repr(float(v)) for v in reference)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_values_that_are_not_all_finite_get_numpys_percentiles() -> None:
    """numpy itself, the reference, computes them: an infinite value makes both NaN."""
    stats = aggregate([1.0, float("inf"), 3.0])
    reference = np.percentile([1.0, float("inf"), 3.0], [50, 95])
    assert (repr(stats["p50"]), repr(stats["p95"])) == tuple(repr(float(v)) for v in reference)
    assert repr(stats["p50"]) == "nan"


def payload(row: str, index: int, values: dict[str, float], error: str | None = None) -> RowPayload:
    return RowPayload(INFO, row, index, values, {}, error)


def test_payloads_of_several_tests_merge_per_row() -> None:
    (summary,) = summarize(
        [
            payload("b", 1, {"f1": 0.5}),
            payload("a", 0, {"f1": 1.0}),
            payload("a", 0, {"tokens": 10.0}),  # a second test over row a
            payload("c", 2, {}, error="d.jsonl:3: field 'gold': missing"),
        ],
        Settings(),
    )
    assert [row.id for row in summary.rows] == ["a", "b", "c"]
    assert summary.n == 3
    assert summary.errors == 1
    assert summary.metrics["f1"]["mean"] == 0.75
    assert summary.metrics["f1"]["count"] == 2
    assert summary.metrics["tokens"]["count"] == 1
    assert summary.metrics["errors"]["sum"] == 1.0


def test_conflicting_values_for_one_row_are_an_error_not_a_silent_overwrite() -> None:
    (summary,) = summarize([payload("a", 0, {"f1": 1.0}), payload("a", 0, {"f1": 0.0})], Settings())
    assert summary.errors == 1
    assert "recorded twice" in summary.rows[0].errors[0]


def test_breakdowns_add_up_to_the_whole() -> None:
    payloads = [
        RowPayload(
            INFO, "a", 0, {"tokens": 30.0}, {"tokens_by_stage": {"gen": 20.0, "rw": 10.0}}, None
        ),
        RowPayload(INFO, "b", 1, {"tokens": 50.0}, {"tokens_by_stage": {"gen": 50.0}}, None),
    ]
    (summary,) = summarize(payloads, Settings())
    stages = summary.breakdowns["tokens_by_stage"]
    assert stages == {"gen": {"sum": 70.0, "mean": 35.0}, "rw": {"sum": 10.0, "mean": 5.0}}
    assert stages["gen"]["mean"] + stages["rw"]["mean"] == summary.metrics["tokens"]["mean"]


rows = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40)


@given(rows, st.randoms(use_true_random=False))
def test_merge_of_split_equals_aggregate(values: list[float], rnd: random.Random) -> None:
    """However rows are split across workers and interleaved, the aggregate is identical."""
    payloads = [payload(f"r{i}", i, {"f1": v}) for i, v in enumerate(values)]
    shuffled = list(payloads)
    rnd.shuffle(shuffled)
    (whole,) = summarize(payloads, Settings())
    (merged,) = summarize(shuffled, Settings())
    assert merged.metrics == whole.metrics
    assert whole.metrics["f1"] == aggregate(values)


def test_a_row_is_failed_when_one_test_failed_it_and_an_error_outranks_that() -> None:
    def sent(row: str, index: int, test: str, failed: bool, error: str | None = None) -> RowPayload:
        return RowPayload(INFO, row, index, {}, {}, error, test=test, failed=failed)

    (summary,) = summarize(
        [
            sent("a", 0, "t1", False),
            sent("a", 0, "t2", False),
            sent("b", 1, "t1", True),
            sent("b", 1, "t2", False),
            sent("c", 2, "t1", True),
            sent("c", 2, "t2", False, error="x.jsonl:3: field 'gold': missing"),
        ],
        Settings(),
    )
    assert [(row.id, row.status) for row in summary.rows] == [
        ("a", "passed"),
        ("b", "failed"),
        ("c", "error"),
    ]
    assert summary.rows[1].failed == {"t1"}


def test_payloads_gathered_as_they_arrive_summarize_as_a_list_of_them() -> None:
    """The controller merges each payload when its report arrives (``Gathered.add``):
    two evals interleaved, a row sent by two tests, and an error give the summaries that
    merging the same list at the end gives, and the values worked out by hand."""
    other = EvalInfo("evals/test_y.py", "evals/test_y.py", "evals/data/y.jsonl", "1" * 64, 2)
    payloads = [
        RowPayload(INFO, "b", 1, {"f1": 0.25}, {}, None, test="t1"),
        RowPayload(other, "q", 0, {"em": 1.0}, {}, None, test="t1"),
        RowPayload(INFO, "a", 0, {"f1": 0.75}, {}, None, test="t1"),
        RowPayload(INFO, "a", 0, {"tokens": 12.0}, {}, None, test="t2"),
        RowPayload(other, "r", 1, {}, {}, "y.jsonl:2: field 'gold': missing", test="t1"),
    ]
    gathered = Gathered()
    for one in payloads:
        gathered.add(one)
    x, y = gathered.summaries(Settings())
    assert [row.id for row in x.rows] == ["a", "b"]
    assert x.metrics["f1"]["mean"] == 0.5  # (0.75 + 0.25) / 2
    assert x.rows[0].values == {"f1": 0.75, "tokens": 12.0, "errors": 0.0}
    assert x.rows[0].tests == {"t1", "t2"}
    assert (y.n, y.errors, y.metrics["em"]["sum"]) == (2, 1, 1.0)
    at_the_end = summarize(payloads, Settings())
    assert [(s.info, s.metrics, s.coverage) for s in at_the_end] == [
        (s.info, s.metrics, s.coverage) for s in (x, y)
    ]


def test_rows_no_report_shows_keep_no_evidence_nor_fields_and_the_same_numbers() -> None:
    """Without a JSON or HTML report (``Gathered(shown=False)``) a row keeps neither its
    evidence nor its shown fields; its values, errors and the aggregates are those of the
    rows that keep them."""
    payloads = [
        RowPayload(
            INFO,
            row_id,
            index,
            {"em": em, "tokens": tokens},
            {"tokens_by_stage": {"generate": tokens}},
            None,
            evidence={"em": f"evidence of {row_id}"},
            fields={"question": f"{row_id}?", "answer": "Paris"},
            details={"live": {"cached": True}},
        )
        for index, (row_id, em, tokens) in enumerate([("a", 1.0, 10.0), ("b", 0.0, 30.0)])
    ]
    kept, dropped = Gathered(), Gathered(shown=False)
    for one in payloads:
        kept.add(one)
        dropped.add(one)
    ((full,), (lean,)) = kept.summaries(Settings()), dropped.summaries(Settings())
    assert [(row.evidence, row.fields) for row in full.rows] == [
        ({"em": "evidence of a"}, {"question": "a?", "answer": "Paris"}),
        ({"em": "evidence of b"}, {"question": "b?", "answer": "Paris"}),
    ]
    assert [(row.evidence, row.fields) for row in lean.rows] == [({}, {}), ({}, {})]
    assert [(r.values, r.breakdowns, r.details, r.errors) for r in lean.rows] == [
        (r.values, r.breakdowns, r.details, r.errors) for r in full.rows
    ]
    assert lean.metrics == full.metrics
    assert lean.metrics["tokens"]["mean"] == 20.0  # (10 + 30) / 2
    assert lean.breakdowns == full.breakdowns


def test_a_rows_test_name_is_one_string_shared_by_every_row() -> None:
    """Every row of a bulk eval names the same test function: read back from the wire,
    the rows' names are one object, not a copy per row."""
    names = ["".join(["evals/test_x.py::", "test_rows"]) for _ in range(2)]
    assert names[0] is not names[1]
    sent = [RowPayload(INFO, f"r{i}", i, {}, {}, None, test=name) for i, name in enumerate(names)]
    read = [RowPayload.from_dict(one.to_dict()) for one in sent]
    assert read[0].test == "evals/test_x.py::test_rows"
    assert read[0].test is read[1].test


def test_rows_of_the_same_tests_share_their_set_of_tests_and_their_census() -> None:
    """A row's set of tests and its citation census are one object for every row with the
    same ones, and the census cannot be changed through a row."""
    sent = [
        RowPayload(INFO, row, i, {}, {}, None, test="t1", citations={"cites": 1, "contexts": 1})
        for i, row in enumerate(["a", "b"])
    ]
    sent.append(RowPayload(INFO, "b", 1, {}, {}, None, test="t2", failed=True))
    (summary,) = summarize(sent, Settings())
    a, b = summary.rows
    assert (a.tests, b.tests, b.failed) == ({"t1"}, {"t1", "t2"}, {"t2"})
    assert a.citations == {"cites": 1, "contexts": 1}
    assert a.citations is b.citations
    with pytest.raises(TypeError):
        a.citations["cites"] = 0  # type: ignore[index]
    (again,) = summarize([sent[0], RowPayload(INFO, "c", 2, {}, {}, None, test="t1")], Settings())
    assert again.rows[0].tests is again.rows[1].tests


# -- a declaration's dataset-level hooks: the summary calls them, it names no metric -----


def _detailed(
    row: str, index: int, details: dict[str, Any], values: dict[str, float]
) -> RowPayload:
    return RowPayload(INFO, row, index, values, {}, None, details=details)


def test_a_declared_aggregation_turns_the_rows_details_into_the_evals_statistics() -> None:
    """A metric the summary has never heard of: its hook is given the rows' details under
    its name in dataset order (b has none) and the per-row aggregates, and what it returns
    is the eval's statistics; by hand 2 + 5 = 7, with f1's mean (1 + 0 + 0.5) / 3 = 0.5."""
    seen: list[tuple[list[Any], float]] = []

    def total(
        details: Sequence[Any], metrics: Mapping[str, Mapping[str, float]], context: Any
    ) -> Aggregated:
        seen.append((list(details), metrics["f1"]["mean"]))
        return Aggregated({"total": float(sum(details))}, {"toy_note": "summed"})

    info = MetricInfo("toy", "a dataset-level sum", dataset=("total",), aggregate=total)
    with _declared(info):
        (summary,) = summarize(
            [
                _detailed("c", 2, {"toy": 5}, {"f1": 0.5}),
                _detailed("a", 0, {"toy": 2}, {"f1": 1.0}),
                _detailed("b", 1, {}, {"f1": 0.0}),
            ],
            Settings(),
        )
    assert seen == [([2, 5], 0.5)]
    assert summary.metrics["toy"] == {"total": 7.0}
    assert summary.dataset_details["toy_note"] == "summed"


def test_an_aggregation_without_details_is_not_called() -> None:
    def never(
        details: Sequence[Any], metrics: Mapping[str, Mapping[str, float]], context: Any
    ) -> Aggregated:
        raise AssertionError("called without details")

    with _declared(MetricInfo("toy", "-", dataset=("x",), aggregate=never)):
        (summary,) = summarize([payload("a", 0, {"f1": 1.0})], Settings())
    assert "toy" not in summary.metrics


def test_a_rows_details_from_two_tests_merge_as_their_metric_declares() -> None:
    """The toy metric's details merge by concatenation, in the order the hook is given
    them; a detail of no metric's name (``other``) is replaced by the later one."""
    info = MetricInfo("toy", "-", dataset=("x",), merge=lambda old, new: sorted([*old, *new]))
    with _declared(info):
        (summary,) = summarize(
            [
                _detailed("a", 0, {"toy": [3], "other": 1}, {}),
                _detailed("a", 0, {"toy": [1, 2], "other": 2}, {}),
            ],
            Settings(),
        )
    assert summary.rows[0].details == {"toy": [1, 2, 3], "other": 2}


def _declared(info: MetricInfo) -> contextlib.AbstractContextManager[None]:
    """The catalog of a run whose user code declared ``info``, in force for the block."""
    return catalog_in_force(Catalog([Declared(info, None, "conftest.py:1")]))


PAYLOAD_FIELDS = st.fixed_dictionaries(
    {
        "values": st.dictionaries(
            st.sampled_from(["em", "f1", "unjudged", "tokens"]),
            st.sampled_from([0.0, 1.0, 0.5]),
        ),
        "breakdowns": st.dictionaries(
            st.sampled_from(["tokens_by_stage"]),
            st.dictionaries(st.sampled_from(["(unstaged)", "gen"]), st.just(3.0)),
        ),
        "error": st.sampled_from([None, "", "rows.jsonl:3: bad row"]),
        "skipped": st.booleans(),
        "failed": st.booleans(),
        "evidence": st.dictionaries(st.sampled_from(["em", "f1"]), st.text(max_size=3)),
        "details": st.dictionaries(st.sampled_from(["live", "other"]), st.just({"cached": True})),
        "fields": st.dictionaries(st.sampled_from(["question", "answer"]), st.text(max_size=3)),
        "output": st.one_of(st.none(), st.just({"answer": "a"})),
        "inputs": st.sampled_from(["", "abc123"]),
        "citations": st.one_of(st.none(), st.just({"cites": 1, "contexts": 2})),
        "session": st.sampled_from([None, "", "s1"]),
    }
)


@given(PAYLOAD_FIELDS, st.booleans())
def test_a_rows_first_payload_makes_what_merging_it_into_a_new_row_makes(
    fields: dict[str, Any], shown: bool
) -> None:
    """``RowResult.first`` is a shortcut for the first payload of a row: it must build
    exactly what ``merge`` builds on an empty row, whatever the payload holds."""
    from pytest_ragmetrics.results.summary import RowResult

    payload = RowPayload(INFO, "r1", 0, **fields)
    merged = RowResult("r1", 0)
    merged.merge(payload, shown)
    assert RowResult.first(payload, shown) == merged
