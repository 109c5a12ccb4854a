"""The typed report model: each view writes the part of the report document it holds
(docs/reports.md#json), with the keys and the optional ones as documented."""

from __future__ import annotations

from dataclasses import replace

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.gates.stored import RowChange
from pytest_ragmetrics.reports.model import GateView, ReportModel, RowView
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 2)


def test_a_gate_view_writes_its_gate() -> None:
    result = GateResult(
        "evals/test_a.py",
        "f1.mean",
        ">= baseline",
        "failed",
        "f1 mean 0.5 < 0.75",
        0.5,
        0.75,
        0.75,
        (RowChange("r1", 1.0, 0.0),),
    )
    assert GateView.of(result).as_dict() == {
        "name": "f1.mean",
        "rule": ">= baseline",
        "status": "failed",
        "passed": False,
        "value": 0.5,
        "bound": 0.75,
        "baseline": 0.75,
        "message": "f1 mean 0.5 < 0.75",
        "regressed": [{"id": "r1", "before": 1.0, "after": 0.0}],
        "stats": None,
    }  # no notes, no stats_note: written only when there are some


def test_a_skipped_gate_has_no_verdict_and_keeps_its_notes() -> None:
    result = GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "skipped", "no rows", notes=("n1",))
    written = GateView.of(result).as_dict()
    assert (written["passed"], written["notes"], written["regressed"]) == (None, ["n1"], [])


def test_the_model_is_built_once_and_writes_the_document() -> None:
    (summary,) = summarize(
        [
            RowPayload(INFO, row, i, {"f1": value}, {}, None)
            for i, (row, value) in enumerate([("r1", 1.0), ("r2", 0.0)])
        ],
        Settings(),
    )
    gate = GateResult("evals/test_a.py", "f1.mean", ">= 0.1", "passed", "ok", 0.5, 0.1)
    model = ReportModel.build([summary], [gate], Settings(), "9.9")
    (view,) = model.evals
    assert [g.name for g in view.gates] == ["f1.mean"]
    assert view.rows is not None
    assert [r.id for r in view.rows] == ["r1", "r2"]
    assert view.row_statuses == {"passed": 2, "failed": 0, "error": 0}
    assert model.trust_judge is None  # no eval ran the Trust-Score
    document = model.as_dict()
    assert document["schema_version"] == 1
    assert document["evals"][0]["metrics"]["f1"]["mean"] == 0.5  # (1 + 0) / 2
    assert "trust_judge" not in document
    lean = ReportModel.build([summary], [gate], Settings(), "9.9", rows=False)
    assert lean.evals[0].rows is None
    assert "rows" not in lean.as_dict()["evals"][0]


def test_a_row_views_fixed_keys_win_over_its_details() -> None:
    (summary,) = summarize([RowPayload(INFO, "r1", 0, {"f1": 1.0}, {}, None)], Settings())
    row = summary.rows[0]
    written = RowView.of(replace(row, details={"id": "x"}), None)
    assert written.as_dict()["id"] == "r1"
