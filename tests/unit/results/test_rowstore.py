"""The controller's packed store of gathered rows gives the summaries merging whole
``RowResult`` objects gives: the same rows, values, aggregates and breakdowns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics.catalog import ERRORS, UNJUDGED
from pytest_ragmetrics.results.rowstore import RowStore
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    Gathered,
    RowPayload,
    RowResult,
    aggregate_rows,
    all_digested,
    citation_censuses,
    status_counts,
)

INFO = EvalInfo("evals/test_x.py", "evals/test_x.py", "evals/data/x.jsonl", "0" * 64, 6)
TESTS = ("t1", "t2", "t3")
IDS = ("a", "b", "c", "d", "é", "r\udcff")  # a lone surrogate, as JSON can hold


def reference(payloads: Sequence[RowPayload], shown: bool) -> dict[str, Any]:
    """What the controller made before the store: one ``RowResult`` per row id, merged in
    arrival order, the ran ones sorted by index, their errors sorted and flagged, and the
    aggregates of that tuple of rows."""
    by_id: dict[str, RowResult] = {}
    for payload in payloads:
        row = by_id.get(payload.row)
        if row is None:
            row = by_id[payload.row] = RowResult(payload.row, payload.index)
        row.merge(payload, shown)
    rows = sorted((row for row in by_id.values() if row.ran), key=lambda row: row.index)
    for row in rows:
        row.errors = tuple(sorted(row.errors))
        row.values[ERRORS] = 1.0 if row.errors else 0.0
    metrics, breakdowns = aggregate_rows(tuple(rows), Settings())
    tests = sorted({test for payload in payloads for test in payload.eval_tests})
    return {
        "rows": [repr(row) for row in rows],
        "metrics": repr(metrics),
        "breakdowns": repr(breakdowns),
        "coverage": {test: sum(test in row.tests for row in rows) for test in tests},
        "skipped": len(by_id) - len(rows),
        "errors": sum(1 for row in rows if row.errors),
        "statuses": dict(Counter(row.status for row in rows)),
        "digested": all(row.inputs for row in rows),
        "censuses": Counter(
            tuple(row.citations.items()) for row in rows if row.citations is not None
        ),
    }


def found(summary: EvalSummary) -> dict[str, Any]:
    """The same figures of a summary, ``repr`` telling 1 from 1.0 and -0.0 from 0.0."""
    return {
        "rows": [repr(row) for row in summary.rows],
        "metrics": repr(summary.metrics),
        "breakdowns": repr(summary.breakdowns),
        "coverage": summary.coverage,
        "skipped": summary.skipped,
        "errors": summary.errors,
        # What the end of the run counts without making a row each (the layouts counted).
        "statuses": status_counts(summary.rows),
        "digested": all_digested(summary.rows),
        "censuses": sum(
            (
                Counter({tuple(census.items()): rows})
                for census, rows in citation_censuses(summary.rows)
            ),
            Counter(),
        ),
    }


numbers = st.floats(-1e6, 1e6, allow_nan=False) | st.just(-0.0) | st.integers(0, 3)


@st.composite
def payloads(draw: st.DrawFn) -> RowPayload:
    """A row payload of one of a few rows and tests: values that may conflict with
    another test's, breakdowns, errors, skips, unjudged rows, failed verdicts, evidence,
    shown fields, details, sessions, inputs digests and citation censuses."""
    values = draw(st.dictionaries(st.sampled_from(["em", "f1", "tokens"]), numbers, max_size=3))
    if draw(st.booleans()) and draw(st.booleans()):
        values[UNJUDGED] = 1.0
    breakdowns = draw(
        st.dictionaries(
            st.just("tokens_by_stage"),
            st.dictionaries(st.sampled_from(["gen", "rw"]), numbers, max_size=2),
            max_size=1,
        )
    )
    census = {"cites": draw(st.integers(0, 1)), "contexts": 1}
    rare = st.booleans().map(lambda b: b and draw(st.booleans()))
    return RowPayload(
        INFO,
        draw(st.sampled_from(IDS)),
        draw(st.integers(0, 5)),
        values,
        breakdowns,
        draw(st.sampled_from(["boom", "bang"])) if draw(rare) else None,
        test=draw(st.sampled_from(TESTS)),
        eval_tests=TESTS,
        skipped=draw(rare),
        evidence={"em": "why"} if draw(rare) else {},
        details={"note": draw(st.integers(0, 2))} if draw(rare) else {},
        fields={"question": "?"} if draw(rare) else {},
        inputs=draw(st.sampled_from(["", "", "00ff00ff00ff00ff", "0123456789abcdef", "x"])),
        citations=census if draw(st.booleans()) else None,
        failed=draw(rare),
        session="s1" if draw(rare) else None,
    )


@settings(max_examples=300)
@given(st.lists(payloads(), max_size=25), st.booleans())
def test_the_store_summarizes_as_whole_rows_did(sent: list[RowPayload], shown: bool) -> None:
    gathered = Gathered(shown)
    for payload in sent:
        gathered.add(payload)
    summaries = gathered.summaries(Settings())
    if not sent:
        assert summaries == []
        return
    (summary,) = summaries
    assert found(summary) == reference(sent, shown)


def test_plain_rows_are_packed_and_the_others_kept_whole() -> None:
    """Rows of floats, shared test names and a digest are packed; an errored row, a row
    with an int value and a row with evidence are kept as they came."""
    store = RowStore()
    digest = "00000000000000ff"
    plain = {"em": 1.0, "f1": 0.5}
    for index, (row_id, values, error, evidence) in enumerate(
        [
            ("a", plain, None, {}),
            ("b", plain, "b.jsonl:2: field 'gold': missing", {}),
            ("c", {"tokens": 12}, None, {}),
            ("d", plain, None, {"em": "the answer is the gold"}),
        ]
    ):
        sent = RowPayload(INFO, row_id, index, values, {}, error, inputs=digest, evidence=evidence)
        store.add(sent, shown=True)
    assert store.whole_positions() == [1, 2, 3]
    assert len(store.numbers) == 2  # a's em and f1
    a = store.row(0)
    assert (a.id, a.index, a.values, a.inputs) == ("a", 0, {"em": 1.0, "f1": 0.5}, digest)
    a.values["em"] = 0.0  # a row made on access is its reader's own
    assert store.row(0).values["em"] == 1.0
    assert store.row(2).values == {"tokens": 12}
    assert type(store.row(2).values["tokens"]) is int


def test_a_second_test_of_a_packed_row_merges_into_it() -> None:
    """A further payload of a packed row merges as ``RowResult.merge`` does: new values
    join (the row packed again, wider), a different value for a metric is the row's
    error (the row then kept whole), over enough rows that the table of ids grows."""
    store = RowStore()
    count = 1000
    for index in range(count):
        store.add(RowPayload(INFO, f"q{index}", index, {"em": 1.0}, {}, None, test="t1"), False)
    for index in range(count):
        second = {"em": 0.0 if index == 7 else 1.0, "f1": index / 4}
        store.add(RowPayload(INFO, f"q{index}", index, second, {}, None, test="t2"), False)
    assert len(store) == count
    assert store.whole_positions() == [7]
    row = store.row(5)
    assert (row.id, row.values, row.tests) == ("q5", {"em": 1.0, "f1": 1.25}, {"t1", "t2"})
    assert store.row(7).errors == ("em recorded twice with different values (1.0 and 0.0)",)
    rows = store.summary_rows()
    assert [row.id for row in rows[:3]] == ["q0", "q1", "q2"]
    assert rows.column("f1")[:3] == [0.0, 0.25, 0.5]
    assert rows.column(ERRORS)[6:9] == [0.0, 1.0, 0.0]
