"""A stored baseline's rows, read an entry at a time into packed columns: every reader
sees what ``json`` reads of the file, and what ``json`` refuses is refused."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.results.baseline import (
    STATES,
    BaselineError,
    read_baseline,
    render_baseline,
)
from pytest_ragmetrics.results.baseline_rows import BaselineRows, StoredRow

NAMES = st.sampled_from(["f1", "em", "tokens", "overlap", "ndcg@10", "bleu"])
NUMBERS = st.floats(allow_nan=False, allow_infinity=False, width=64)
DIGESTS = st.one_of(
    st.text("0123456789abcdef", min_size=16, max_size=16),  # what input_digest writes
    st.text(max_size=20),  # a hand-written one: kept as it is
)
STORED = st.builds(
    StoredRow,
    DIGESTS,
    st.dictionaries(NAMES, NUMBERS, max_size=4),
    st.dictionaries(
        st.sampled_from(["bleu_stats", "chrf_stats"]),
        st.dictionaries(st.sampled_from(["len", "ref", "m1", "m2"]), NUMBERS, max_size=3),
        max_size=2,
    ),
    st.one_of(st.none(), st.sampled_from(STATES)),
)
ROWS = st.dictionaries(st.text(min_size=1, max_size=8), STORED, max_size=30)


def _as_json_reads(text: str) -> dict[str, StoredRow]:
    """The reference: the file read whole by ``json``, each entry a ``StoredRow``."""
    entries = json.loads(text)["rows"]
    return {
        row_id: StoredRow(
            entry["inputs"], entry["values"], entry.get("breakdowns", {}), entry.get("state")
        )
        for row_id, entry in entries.items()
    }


def _file(rows: dict[str, StoredRow]) -> str:
    return render_baseline("x", {"a": 1}, len(rows), {"f1": {"mean": 0.5}}, rows, "d.jsonl")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, absent=st.text(max_size=8), seed=st.integers(0, 2**32 - 1))
def test_the_packed_rows_are_what_json_reads(
    tmp_path: Path, rows: dict[str, StoredRow], absent: str, seed: int
) -> None:
    path = tmp_path / "b.json"
    text = _file(rows)
    path.write_text(text, encoding="utf-8")
    baseline = read_baseline(path)
    assert baseline is not None
    assert isinstance(baseline.rows, BaselineRows)
    expected = _as_json_reads(text)
    assert dict(baseline.rows) == expected == rows
    assert list(baseline.rows) == sorted(rows)  # in id order, as the file writes them
    assert list(baseline.rows.in_order()) == sorted(rows.items())
    assert len(baseline.rows) == len(rows)
    assert (absent in baseline.rows) == (absent in rows)
    if absent not in rows:
        with pytest.raises(KeyError):
            baseline.rows[absent]
    ids = list(rows)
    random.Random(seed).shuffle(ids)
    assert list(baseline.rows.select(ids)) == [rows[i] for i in ids]
    assert baseline.rows.select(ids)[1:] == [rows[i] for i in ids[1:]]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, seed=st.integers(0, 2**32 - 1))
def test_a_file_whose_rows_are_out_of_order_reads_the_same(
    tmp_path: Path, rows: dict[str, StoredRow], seed: int
) -> None:
    """A hand-edited file: rows in any order, another layout of whitespace."""
    ids = list(rows)
    random.Random(seed).shuffle(ids)
    document = {
        "schema_version": 2,
        "signature": {},
        "n": len(rows),
        "metrics": {},
        "rows": {row_id: rows[row_id].as_dict() for row_id in ids},
    }
    path = tmp_path / "b.json"
    path.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    baseline = read_baseline(path)
    assert baseline is not None
    assert baseline.rows is not None
    assert dict(baseline.rows) == rows
    assert list(baseline.rows) == sorted(rows)
    assert list(baseline.rows.in_order()) == sorted(rows.items())
    assert all(baseline.rows[row_id] == rows[row_id] for row_id in ids)


VALID = (
    '{"schema_version": 2, "signature": {"a": [1, {"b": null}]}, "n": 2,\n'
    ' "metrics": {"f1": {"mean": 0.5}},\n'
    ' "rows": {"q1": {"inputs": "0123456789abcdef", "values": {"f1": 1.0}},'
    ' "q\\u00e9": {"inputs": "x", "values": {}, "state": "idk"}}}\n'
)


def _json_refuses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("at", range(len(VALID)))
def test_a_file_json_cannot_read_is_not_json(tmp_path: Path, at: int) -> None:
    """Each character of a valid file taken out in turn: the file is refused as not JSON
    exactly when ``json`` cannot read it (else it reads, or is refused for its content)."""
    text = VALID[:at] + VALID[at + 1 :]
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    try:
        read_baseline(path)
    except BaselineError as error:
        refused_as_json = "not JSON" in str(error)
    else:
        refused_as_json = False
    assert refused_as_json == _json_refuses(text)


def test_extra_data_after_the_document_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(VALID + "{}", encoding="utf-8")
    with pytest.raises(BaselineError, match="not JSON: Extra data"):
        read_baseline(path)


def test_a_row_problem_is_reported_after_the_documents_other_keys(tmp_path: Path) -> None:
    """The rows come first in the file, yet a wrong ``schema_version`` is what is said,
    as when the document was checked whole."""
    path = tmp_path / "b.json"
    document: dict[str, Any] = {
        "rows": {"q1": {"values": {}}},
        "schema_version": 99,
        "signature": {},
        "n": 1,
        "metrics": {},
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(BaselineError, match="schema_version 99"):
        read_baseline(path)
    document["schema_version"] = 2
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(BaselineError, match=r"rows\['q1'\]\.inputs"):
        read_baseline(path)


def test_rows_that_are_not_an_object_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(
        '{"schema_version": 2, "signature": {}, "n": 0, "metrics": {}, "rows": []}',
        encoding="utf-8",
    )
    with pytest.raises(BaselineError, match="rows: expected an object"):
        read_baseline(path)


def test_a_byte_order_mark_is_refused_as_json_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text("\ufeff" + VALID, encoding="utf-8")
    with pytest.raises(BaselineError, match="not JSON: Unexpected UTF-8 BOM"):
        read_baseline(path)
