"""The ``--ragmetrics-json`` file of a run is written a row at a time from the model's
lazy rows, and is byte for byte the text ``json.dumps`` makes of the whole document."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.files import write_atomic
from pytest_ragmetrics.metrics.catalog import BASELINE
from pytest_ragmetrics.reports.model import (
    ROW_VALUES,
    BaselineView,
    HistoryView,
    ReportModel,
    RowView,
    RowViews,
    StoredValues,
)
from pytest_ragmetrics.reports.write import (
    _spliced,
    _splices,
    json_text,
    report_chunks,
    write_reports,
)
from pytest_ragmetrics.results.baseline import read_baseline, render_baseline
from pytest_ragmetrics.results.baseline_rows import StoredRow
from pytest_ragmetrics.results.history import RunRecord
from pytest_ragmetrics.results.summary import EvalInfo, EvalSummary, RowPayload, summarize

A = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 3)
B = EvalInfo("evals/test_b.py", "evals/test_b.py", "evals/data/b.jsonl", "1" * 64, 2)
C = EvalInfo("evals/test_c.py", "evals/test_c.py", "evals/data/c.jsonl", "2" * 64, 1)
D = EvalInfo("evals/test_d.py", "evals/test_d.py", "evals/data/d.jsonl", "3" * 64, 1)


def _summaries() -> list[EvalSummary]:
    sentence = {
        "sentence": "Zürich\nis 10 km away",
        "supported": True,
        "similarity": 0.5,
        "context": {"doc_id": "d1", "text": '東京 — «quoted» "text"', "tags": [[1, 2], []]},
    }
    return summarize(
        [
            RowPayload(
                A,
                "r1",
                0,
                {"f1": 1.0, "overlap": 0.25},
                {},
                None,
                evidence={"f1": 'tokens "a b" ∩ "a"\tshared', "overlap": "½ of it"},
                details={"sentences": [sentence], "live": {"cached": False, "system": "s"}},
                fields={"question": "Où est-ce ?", "answer": "Zürich", "gold": [["Zürich", "ZH"]]},
            ),
            RowPayload(A, "r2", 1, {"f1": 0.5}, {}, "no answer \u2028 line separator"),
            RowPayload(A, "r3", 2, {"f1": 0.0}, {}, None, failed=True),
            RowPayload(B, "s1", 0, {"f1": 0.125}, {}, None, fields={"question": "?"}),
            RowPayload(C, "t1", 0, {"f1": 0.0}, {}, None),
            RowPayload(D, "u1", 0, {"f1": 1.0}, {}, None),
        ],
        Settings(),
    )


def _model() -> ReportModel:
    """Four evals: rows with evidence, unicode and nested details; one row; an empty rows
    list; rows left out (``None``); and a history."""
    model = ReportModel.build(_summaries(), [], Settings(), "9.9")
    a, b, c, d = model.evals
    evals = (a, b, replace(c, rows=()), replace(d, rows=None))
    record = RunRecord("2026-11-24T12:00:00+00:00", None, "9.9", ())
    history = HistoryView.of("h/history.jsonl", [record], appended=True)
    return replace(model, evals=evals).with_history(history)


def test_the_streamed_file_is_the_json_text_of_the_whole_document(tmp_path: Path) -> None:
    model = _model()
    document = model.as_dict()
    assert [len(entry.get("rows", "-")) for entry in document["evals"]] == [3, 1, 0, 1]
    reference = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert json_text(document) == reference
    assert "".join(report_chunks(model)) == reference
    write_reports(model, tmp_path / "report.json", None, None)
    assert (tmp_path / "report.json").read_bytes() == reference.encode("utf-8")


def test_a_model_without_evals_or_rows_streams_the_same_text() -> None:
    model = _model()
    for changed in (replace(model, evals=()), model.without_rows()):
        assert "".join(report_chunks(changed)) == json_text(changed.as_dict())


def test_a_marker_split_between_the_encoders_pieces_is_still_replaced() -> None:
    """However the encoder cuts its text, every marker is found: here one character a
    piece."""
    model = _model()
    encoder = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False)
    marker = "pytest-ragmetrics-rows-test-"
    text = encoder.encode(model.as_dict(marker))
    pieces = "".join(_spliced(iter(text), _splices(model, marker, encoder)))
    assert pieces + "\n" == json_text(model.as_dict())


class _Watched(Sequence[RowView]):
    """Rows that check, as each is read, that the previous one was let go."""

    def __init__(self, rows: Sequence[RowView]) -> None:
        self._rows = rows
        self.read = 0

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> RowView:  # type: ignore[override]
        raise AssertionError("the writer goes over the rows in order")

    def __iter__(self) -> Iterator[RowView]:
        previous = None
        for row in self._rows:
            assert previous is None or previous() is None, "a row read earlier is still held"
            fresh = replace(row)  # a view of its own, as RowViews makes
            previous = weakref.ref(fresh)
            self.read += 1
            yield fresh
            del fresh


def test_the_writer_holds_one_row_at_a_time() -> None:
    model = _model()
    first = model.evals[0]
    assert first.rows is not None
    watched = _Watched(tuple(first.rows))
    streamed = replace(model, evals=(replace(first, rows=watched), *model.evals[1:]))
    assert "".join(report_chunks(streamed)) == json_text(model.as_dict())
    assert watched.read == 3


def test_a_runs_rows_are_views_made_when_read_equal_to_the_tuple_of_them() -> None:
    (summary, *_) = _summaries()
    views = RowViews(summary.rows, "sys")
    made = tuple(RowView.of(row, "sys") for row in summary.rows)
    assert len(views) == 3
    assert views == made
    assert made == views  # either way round
    assert tuple(views) == made
    assert views[1] == made[1]
    assert views[-1] == made[-1]
    assert views[1:] == made[1:]
    assert views[0] is not views[0]  # made on each read, not kept
    assert views != made[:2]
    assert [row.id for row in views] == ["r1", "r2", "r3"]
    view = ReportModel.build([summary], [], Settings(), "9.9").evals[0]
    assert isinstance(view.rows, RowViews)
    assert view.rows == tuple(RowView.of(row, None) for row in summary.rows)


def _paired_baseline(tmp_path: Path, ids: Sequence[str]) -> StoredValues:
    """A paired baseline's row values, made when read from a baseline file's rows (ids
    written out of order, one unicode; ``em`` not compared)."""
    rows = {
        row_id: StoredRow(f"{i:016x}", {"em": float(i % 2), "f1": i / 8}, {}, None)
        for i, row_id in enumerate(ids)
    }
    path = tmp_path / "b.json"
    write_atomic(path, render_baseline("x", {}, len(rows), {}, rows, "d.jsonl"))
    baseline = read_baseline(path)
    assert baseline is not None
    assert baseline.rows is not None
    return StoredValues(baseline.rows, frozenset({"em"}))


def test_a_paired_baselines_row_values_are_written_a_row_at_a_time(tmp_path: Path) -> None:
    """The writer puts the stored rows' values in the place of their marker, as the whole
    dict would be written; in an eval with rows and in one without; none is the empty
    object; a marker split between pieces is still found."""
    model = _model()
    a, b, c, d = model.evals
    values = _paired_baseline(tmp_path, ["q2", "q10", "é1", "q1"])
    assert list(values) == ["q1", "q10", "q2", "é1"]
    assert values["q10"] == {"f1": 0.125}
    empty = _paired_baseline(tmp_path, [])
    paired = replace(
        model,
        evals=(
            replace(a, baseline=BaselineView({"status": "paired", ROW_VALUES: values})),
            b,
            replace(c, baseline=BaselineView({"status": "paired", ROW_VALUES: empty})),
            replace(d, baseline=BaselineView({"status": "paired", ROW_VALUES: values})),
        ),
    )
    document = paired.as_dict()
    assert document["evals"][0][BASELINE][ROW_VALUES] == {
        "q1": {"f1": 0.375},
        "q10": {"f1": 0.125},
        "q2": {"f1": 0.0},
        "é1": {"f1": 0.25},
    }
    reference = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "".join(report_chunks(paired)) == reference
    encoder = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False)
    marker = "pytest-ragmetrics-rows-test-"
    text = encoder.encode(paired.as_dict(marker))
    assert "".join(_spliced(iter(text), _splices(paired, marker, encoder))) + "\n" == reference
