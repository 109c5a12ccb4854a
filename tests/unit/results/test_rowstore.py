"""The controller's packed store of gathered rows gives the summaries merging whole
``RowResult`` objects gives: the same rows, values, aggregates and breakdowns, with the
rows' shown parts kept in memory or in the run's spool."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics.catalog import ERRORS, UNJUDGED
from pytest_ragmetrics.results.rowstore import RowsById, RowStore, StoredRows
from pytest_ragmetrics.results.spool import Spool, SpoolError
from pytest_ragmetrics.results.summary import (
    EvalInfo,
    EvalSummary,
    Gathered,
    RowPayload,
    RowResult,
    aggregate_rows,
    all_digested,
    citation_censuses,
    rows_by_id,
    status_counts,
)

INFO = EvalInfo("evals/test_x.py", "evals/test_x.py", "evals/data/x.jsonl", "0" * 64, 6)
TESTS = ("t1", "t2", "t3")
IDS = ("a", "b", "c", "d", "é", "r\udcff")  # a lone surrogate, as JSON can hold


def described(row: RowResult) -> str:
    """``repr(row)`` with its sets of test names sorted: two equal frozensets may list
    their items in different orders (the order a set was built in shows in its repr)."""
    text = repr(row)
    for names in (row.tests, row.failed):
        text = text.replace(repr(names), f"frozenset({sorted(names)!r})", 1)
    return text


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
        "rows": [described(row) for row in rows],
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
        "by_id": [row.id for row in sorted(rows, key=lambda row: row.id)],
        "sessions": {
            metric: [row.session for row in rows if metric in row.values] for metric in READ
        },
        "breakdown_sessions": [row.session for row in rows if "tokens_by_stage" in row.breakdowns],
        "by_id_map": {row.id: described(row) for row in rows},
        "selected": [described(row) for row in sorted(rows, key=lambda row: row.id, reverse=True)],
        "absent": False,
    }


def found(summary: EvalSummary) -> dict[str, Any]:
    """The same figures of a summary, ``repr`` telling 1 from 1.0 and -0.0 from 0.0."""
    stored = summary.rows
    assert isinstance(stored, StoredRows)
    by_id = rows_by_id(stored)
    assert isinstance(by_id, RowsById)
    return {
        "rows": [described(row) for row in summary.rows],
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
        # What the intervals of a report read: the rows in id order, each metric's rows'
        # sessions (no row made, the spool not read).
        "by_id": [row.id for row in stored.by_id()],
        "sessions": {metric: stored.sessions(metric=metric) for metric in READ},
        "breakdown_sessions": stored.sessions(breakdown="tokens_by_stage"),
        # What the paired gates read: the rows by id, made when read (``rows_by_id``).
        "by_id_map": {row_id: described(row) for row_id, row in by_id.items()},
        "selected": [described(row) for row in by_id.select(sorted(by_id, reverse=True))],
        "absent": "not-a-row" in by_id,
    }


# The metrics whose rows' sessions the property reads (``errors``: every row has it).
READ = ("em", "f1", "tokens", ERRORS)
numbers = st.floats(-1e6, 1e6, allow_nan=False) | st.just(-0.0) | st.integers(0, 3)
DETAILS = (
    {"note": 0},
    {"note": 2},
    {"trace": {"steps": [1, 2], "by": {"gen": 0.5}}, "note": None},
)
FIELDS = ({"question": "?"}, {"answer": "Paris", "gold": ["Paris"], "answerable": True})


@st.composite
def payloads(draw: st.DrawFn) -> RowPayload:
    """A row payload of one of a few rows and tests: values that may conflict with
    another test's, breakdowns, errors, skips, unjudged rows, failed verdicts, evidence,
    shown fields, details (nested), saved outputs, sessions, inputs digests and citation
    censuses."""
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
        details=draw(st.sampled_from(DETAILS)) if draw(rare) else {},
        fields=draw(st.sampled_from(FIELDS)) if draw(rare) else {},
        output={"answer": draw(st.sampled_from(["x", "y"]))} if draw(rare) else None,
        inputs=draw(st.sampled_from(["", "", "00ff00ff00ff00ff", "0123456789abcdef", "x"])),
        citations=census if draw(st.booleans()) else None,
        failed=draw(rare),
        session="s1" if draw(rare) else None,
    )


@contextmanager
def spool_or_none(spooling: bool) -> Iterator[Spool | None]:
    spool = Spool() if spooling else None
    try:
        yield spool
    finally:
        if spool is not None:
            spool.close()


@settings(max_examples=400)
@given(st.lists(payloads(), max_size=25), st.booleans(), st.booleans())
def test_the_store_summarizes_as_whole_rows_did(
    sent: list[RowPayload], shown: bool, spooling: bool
) -> None:
    """With a spool, the rows with shown parts are spooled, merged again when a further
    payload comes (into an error, kept whole), and read back as they were."""
    with spool_or_none(spooling) as spool:
        gathered = Gathered(shown, spool)
        for payload in sent:
            gathered.add(payload)
        summaries = gathered.summaries(Settings())
        if not sent:
            assert summaries == []
            return
        (summary,) = summaries
        assert found(summary) == reference(sent, shown)
        # A row the store holds that no test ran (a skipped row) is not among them by id.
        ran = {row.id for row in summary.rows}
        by_id = rows_by_id(summary.rows)
        assert {payload.row for payload in sent if payload.row in by_id} == ran


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


def test_a_row_with_shown_parts_is_spooled_and_read_back_as_merged() -> None:
    """A row with evidence, details, fields, an output and a session has its numbers
    packed and its shown parts in the spool; merged with further payloads it is what
    ``RowResult.merge`` makes of them (the reference), spooled again; an error makes it
    a row kept whole."""
    sent = [
        RowPayload(
            INFO,
            "a",
            0,
            {"em": 1.0},
            {"tokens_by_stage": {"gen": 3.0}},
            None,
            test="t1",
            evidence={"em": "exact"},
            details={"trace": {"steps": [1, 2]}},
            fields={"question": "Capital?", "answer": "Paris"},
            output={"answer": "Paris"},
            inputs="0123456789abcdef",
            session="s1",
        ),
        RowPayload(INFO, "a", 0, {"f1": 0.5}, {}, None, test="t2", evidence={"f1": "half"}),
        RowPayload(INFO, "a", 0, {"em": 0.0}, {}, None, test="t3"),  # conflicts: an error
    ]
    reference = RowResult("a", 0)
    with spool_or_none(True) as spool:
        store = RowStore(spool)
        for count, payload in enumerate(sent, 1):
            store.add(payload, shown=True)
            reference.merge(payload, shown=True)
            if count < 3:
                assert store.spooled(0)
                assert store.whole_positions() == []
            assert store.row(0) == reference
        assert store.whole_positions() == [0]
        assert store.row(0).errors == ("em recorded twice with different values (1.0 and 0.0)",)
        assert store.row(0).fields == {"question": "Capital?", "answer": "Paris"}


def test_the_column_readers_do_not_read_the_spool() -> None:
    """Aggregates, coverage, error counts and the plain view (statuses, sessions) read
    the packed numbers and layouts only; a reader of one shown part reads only the
    spooled rows that have it."""
    with spool_or_none(True) as spool:
        assert spool is not None
        store = RowStore(spool)
        for index in range(4):
            output = {"answer": "x"} if index == 2 else None
            store.add(
                RowPayload(
                    INFO,
                    f"q{index}",
                    index,
                    {"em": float(index % 2)},
                    {"tokens_by_stage": {"gen": 2.0}},
                    None,
                    test="t1",
                    eval_tests=TESTS,
                    fields={"question": f"{index}?"},
                    output=output,
                    session=f"s{index // 2}",
                ),
                shown=True,
            )
        read = []
        get = spool.get
        spool.get = lambda at, length: read.append(at) or get(at, length)  # type: ignore[method-assign]
        rows = store.summary_rows()
        assert rows.column("em") == [0.0, 1.0, 0.0, 1.0]
        assert rows.column(ERRORS) == [0.0] * 4
        assert rows.metric_names() == {"em", ERRORS}
        assert rows.breakdown_names() == {"tokens_by_stage"}
        assert list(rows.breakdowns_of("tokens_by_stage")) == [{"gen": 2.0}] * 4
        assert rows.coverage(["t1", "t2"]) == {"t1": 4, "t2": 0}
        assert rows.errored() == 0
        plain = [(row.id, row.session, row.status, row.fields, row.output) for row in rows.plain()]
        assert plain == [(f"q{i}", f"s{i // 2}", "passed", {}, None) for i in range(4)]
        assert read == []
        assert [row.id for row in rows.whole_rows("output")] == ["q2"]
        assert len(read) == 1
        assert [row.fields["question"] for row in rows.whole_rows()] == ["0?", "1?", "2?", "3?"]


def test_details_that_cannot_be_spooled_are_an_error_naming_the_row() -> None:
    """Not kept whole instead: the spool keeps what pytest-xdist can send, plain data."""
    with spool_or_none(True) as spool:
        store = RowStore(spool)
        sent = RowPayload(INFO, "q7", 0, {"em": 1.0}, {}, None, details={"f": lambda: 0})
        with pytest.raises(SpoolError) as raised:
            store.add(sent, shown=True)
    message = str(raised.value)
    assert message.startswith("pytest-ragmetrics: row 'q7': its evidence, fields, details")
    assert "record plain data there" in message
