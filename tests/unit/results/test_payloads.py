"""Typed payloads: what a test sends to the controller, and back from its wire form."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.results.summary import (
    BatchPayload,
    DatasetPayload,
    EvalInfo,
    PayloadError,
    RowPayload,
    carried_payloads,
    payload_from_dict,
    payloads_from_dict,
    summarize,
)

INFO = EvalInfo(
    "evals/test_x.py",
    "evals/test_x.py",
    "evals/data/x.jsonl",
    "0" * 64,
    4,
    system="b",
    system_index=1,
    compare_to="a",
    test_path="evals/test_x.py",
    systems=("a", "b"),
)
ROW = RowPayload(
    INFO,
    "r1",
    2,
    {"f1": 0.5, "tokens": 120.0},
    {"tokens_by_stage": {"generate": 100.0, "rewrite": 20.0}},
    "x.jsonl:3: field 'gold': missing",
    test="evals/test_x.py::test_correct",
    eval_tests=("evals/test_x.py::test_z", "evals/test_x.py::test_correct"),
    skipped=False,
    evidence={"f1": "gold 'Paris'"},
    details={"live": {"system": "b", "cached": True, "fingerprint": "abc"}},
    fields={"question": "Capital?", "answer": "Paris", "answerable": True},
    output={"id": "r1", "answer": "Paris"},
    inputs="d" * 64,
    citations={"cites": 1, "contexts": 2},
    failed=True,
    uncalled=("em",),
)
DATASET = DatasetPayload(
    INFO,
    "evals/test_x.py::test_space",
    ("evals/test_x.py::test_space",),
    4,
    {"embedding_space": {"avg_nn_distance": 0.25}},
    {"embedding_space": {"outliers": ["r2"]}},
    None,
    False,
)


@pytest.mark.parametrize("payload", [ROW, DATASET, RowPayload(INFO, "r2", 0, {}, {}, None)])
def test_round_trip(payload: RowPayload | DatasetPayload) -> None:
    assert type(payload).from_dict(payload.to_dict()) == payload
    assert payload_from_dict(payload.to_dict()) == payload


@pytest.mark.parametrize("payload", [ROW, DATASET])
def test_round_trip_through_json(payload: RowPayload | DatasetPayload) -> None:
    """xdist sends report attributes as JSON-like data: the wire form survives it."""
    assert payload_from_dict(json.loads(json.dumps(payload.to_dict()))) == payload


def test_the_wire_form_is_the_one_reports_always_carried() -> None:
    wire = ROW.to_dict()
    assert wire["eval"] == "evals/test_x.py"
    assert wire["system"] == "b"
    assert wire["systems"] == ["a", "b"]
    assert wire["row"] == "r1"
    assert wire["eval_tests"] == ["evals/test_x.py::test_correct", "evals/test_x.py::test_z"]
    assert "kind" not in wire
    assert DATASET.to_dict()["kind"] == "dataset"


def _without(payload: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != key}


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({**ROW.to_dict(), "kind": "corpus"}, "unknown kind 'corpus'"),
        (_without(ROW.to_dict(), "values"), "missing values"),
        (_without(DATASET.to_dict(), "rows"), "missing rows"),
        (_without(ROW.to_dict(), "eval"), "missing eval"),
        ({**ROW.to_dict(), "weight": 2}, "unknown weight"),
        ({**ROW.to_dict(), "index": "2"}, "index is str"),
        ({**ROW.to_dict(), "values": [0.5]}, "values is list"),
        ({**DATASET.to_dict(), "skipped": None}, "skipped is NoneType"),
    ],
)
def test_a_malformed_payload_is_an_error(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(PayloadError, match=message) as raised:
        payload_from_dict(wire)
    assert "same pytest-ragmetrics version" in str(raised.value)


def test_a_payload_that_is_not_a_mapping_is_an_error() -> None:
    with pytest.raises(PayloadError, match="expected a mapping, got list"):
        payload_from_dict([ROW.to_dict()])


def test_summarize_takes_typed_payloads() -> None:
    (summary,) = summarize([ROW, DATASET], Settings())
    assert summary.info == INFO
    assert [row.id for row in summary.rows] == ["r1"]
    assert summary.rows[0].errors == ("x.jsonl:3: field 'gold': missing",)
    assert summary.metrics["embedding_space"] == {"avg_nn_distance": 0.25}
    # Every test function the eval collected, from the row and the dataset payload.
    assert summary.coverage == {
        "evals/test_x.py::test_correct": 1,
        "evals/test_x.py::test_space": 4,
        "evals/test_x.py::test_z": 0,
    }


def _ran(row: str, test: str, uncalled: tuple[str, ...] | None) -> RowPayload:
    return RowPayload(INFO, row, int(row[1:]), {}, {}, None, test=test, uncalled=uncalled)


def test_a_metric_fixture_no_row_of_its_test_called_is_listed() -> None:
    """Rows arrive from any worker: a fixture is listed when every row whose body ran left
    it uncalled, counted over those rows (a bad row's, None, says nothing)."""
    t1, t2 = "evals/test_x.py::test_a", "evals/test_x.py::test_b"
    payloads = [
        _ran("r0", t1, ("em", "f1")),
        _ran("r1", t1, ("em",)),  # f1 called here, on another worker say
        _ran("r2", t1, None),
        _ran("r0", t2, ("tokens",)),
        _ran("r1", t2, ()),  # every fixture called
    ]
    (summary,) = summarize(payloads, Settings())
    assert summary.uncalled == ((t1, "em", 2),)


def test_a_batch_travels_as_its_rows_and_expands_into_them() -> None:
    other = RowPayload(INFO, "r2", 3, {"f1": 1.0}, {}, None, test=ROW.test)
    batch = BatchPayload(ROW.test, (ROW, other))
    wire = json.loads(json.dumps(batch.to_dict()))
    assert payload_from_dict(wire) == batch
    assert payloads_from_dict(wire) == (ROW, other)
    assert payloads_from_dict(DATASET.to_dict()) == (DATASET,)


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"kind": "batch", "test": "t", "rows": [], "n": 1}, "exactly the keys kind, rows, test"),
        ({"kind": "batch", "test": "t", "rows": {}}, "a test name and a list of rows"),
        ({"kind": "batch", "test": "t", "rows": [DATASET.to_dict()]}, "rows are row payloads"),
        ({"kind": "batch", "test": "t", "rows": [_without(ROW.to_dict(), "row")]}, "missing row"),
    ],
)
def test_a_malformed_batch_is_an_error(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(PayloadError, match=message):
        payloads_from_dict(wire)


def test_a_report_carries_a_payload_as_itself_or_as_its_wire_form() -> None:
    """In the process that ran the test the payload rides as itself; from an xdist
    worker as its wire form: either way the receiver gets the same payloads."""
    other = RowPayload(INFO, "r2", 3, {"f1": 1.0}, {}, None, test=ROW.test)
    batch = BatchPayload(ROW.test, (ROW, other))
    for payload, expected in [(ROW, (ROW,)), (DATASET, (DATASET,)), (batch, (ROW, other))]:
        carried = carried_payloads(payload)
        assert carried == expected
        assert all(a is b for a, b in zip(carried, expected, strict=True))  # not copied
        assert carried_payloads(json.loads(json.dumps(payload.to_dict()))) == expected
    with pytest.raises(PayloadError, match="expected a mapping, got list"):
        carried_payloads([ROW])
