"""Every report renders the one report document: the terminal and Markdown need nothing
the JSON file lacks, and the gate summary line is the same everywhere."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.gates.stored import RowChange
from pytest_ragmetrics.reports.document import (
    HISTORY_WINDOW,
    entries,
    gate_summary,
    history_document,
    report_document,
)
from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.markdown import markdown_summary
from pytest_ragmetrics.reports.model import HistoryView, ReportModel
from pytest_ragmetrics.reports.terminal import terminal_lines
from pytest_ragmetrics.reports.write import json_chunks, json_text, write_reports
from pytest_ragmetrics.results.baseline import Baseline
from pytest_ragmetrics.results.baseline_rows import StoredRow
from pytest_ragmetrics.results.history import RunRecord
from pytest_ragmetrics.results.pairing import BaselineState, Pairing
from pytest_ragmetrics.results.summary import EvalInfo, EvalSummary, RowPayload, summarize
from pytest_ragmetrics.results.transformations import Transformations

TABLE_ROW = re.compile(r"<tr[ >].*?</tr>", re.DOTALL)
INFO = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 3)


def _summary() -> EvalSummary:
    (summary,) = summarize(
        [
            RowPayload(INFO, row, i, {"overlap": value, "f1": value}, {}, None)
            for i, (row, value) in enumerate([("r1", 1.0), ("r2", 0.5), ("r3", 0.0)])
        ],
        Settings(),
    )
    pairing = Pairing(
        stored_rows=3,
        shared=("r1", "r2"),
        added=("r3",),
        removed=("r0",),
        changed=(),
        current={},
        stored={},
        transformations=Transformations(("r2",), ("r1",), 2),
    )
    baseline = Baseline(Path("b.json"), {}, 3, {})
    stored = BaselineState("evals/baselines/a.json", baseline, pairing=pairing)
    return replace(summary, stored=stored, warnings=("no answer holds a citation marker",))


RESULTS = [
    GateResult(
        "evals/test_a.py",
        "overlap.mean",
        ">= baseline",
        "failed",
        "overlap.mean 0.75 < 0.8\nmore",
        0.75,
        0.8,
        0.8,
        (RowChange("r1", 1.0, 0.5),),
        ("compared on the 2 shared rows",),
    ),
    GateResult("evals/test_a.py", "f1.mean", ">= 0.1", "passed", "ok", 0.5, 0.1),
]


def test_the_json_file_written_in_pieces_is_json_dumps_text(tmp_path: Path) -> None:
    """The report is streamed to its file; ``json.dumps`` with the file's settings (sorted
    keys, two-space indent, UTF-8 as it is) is the reference for its bytes."""
    document = report_document([_summary()], RESULTS, Settings(), "9.9")
    document["evals"][0]["rows"][0]["answer"] = "Zürich — 10 km"
    reference = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "".join(json_chunks(document)) == reference
    write_reports(document, tmp_path / "report.json", None, None)
    assert (tmp_path / "report.json").read_bytes() == reference.encode("utf-8")


def test_renderers_need_only_what_the_json_file_holds() -> None:
    """A JSON file read back (``ReportModel.from_document``) is the run's model again: it
    writes the same file, and the terminal and Markdown show what the run showed. The HTML
    page shows the same table rows, some in another order: the file's keys are sorted, and
    the settings and the aggregates are listed in the order of their keys."""
    history = HistoryView.of("h/history.jsonl", _records(2), appended=True)
    model = ReportModel.build([_summary()], RESULTS, Settings(), "9.9").with_history(history)
    from_file = ReportModel.from_document(json.loads(json_text(model.as_dict())))
    assert json_text(from_file.as_dict()) == json_text(model.as_dict())
    assert terminal_lines(from_file, "thresholds.toml", ["a note"]) == terminal_lines(
        model, "thresholds.toml", ["a note"]
    )
    assert markdown_summary(from_file) == markdown_summary(model)
    page, page_from_file = render_html(model), render_html(from_file)
    assert sorted(TABLE_ROW.findall(page_from_file)) == sorted(TABLE_ROW.findall(page))
    assert len(TABLE_ROW.findall(page)) > 20  # the settings, aggregates, rows, ...


def test_a_document_without_rows_renders_the_same_terminal_and_markdown() -> None:
    """Without a JSON or HTML report the run's document leaves out its rows: it is the
    full document less each entry's ``rows``, and what the terminal and the Markdown
    summary show from it is the same."""
    full = report_document([_summary()], RESULTS, Settings(), "9.9")
    lean = report_document([_summary()], RESULTS, Settings(), "9.9", rows=False)
    assert [row["id"] for row in full["evals"][0]["rows"]] == ["r1", "r2", "r3"]
    assert "rows" not in lean["evals"][0]
    assert lean["evals"][0] == {k: v for k, v in full["evals"][0].items() if k != "rows"}
    assert {k: v for k, v in lean.items() if k != "evals"} == {
        k: v for k, v in full.items() if k != "evals"
    }
    assert terminal_lines(lean, "thresholds.toml", ["a note"]) == terminal_lines(
        full, "thresholds.toml", ["a note"]
    )
    assert markdown_summary(lean) == markdown_summary(full)


def test_the_stored_baseline_is_rendered_from_the_document() -> None:
    lines = terminal_lines(report_document([_summary()], RESULTS, Settings(), "9.9"), None)
    start = lines.index("Stored baselines (rows paired by id):")
    assert lines[start : start + 6] == [
        "Stored baselines (rows paired by id):",
        "  evals/test_a.py: 2 of 3 stored rows paired (coverage 0.667): 1 removed, 1 added",
        "    removed (stored, not in this run) (1): r0",
        "    added (not in the baseline) (1): r3",
        "    IDK → supported (1): r2",
        "    supported → unsupported (1): r1",
    ]


def test_gate_notes_reach_the_markdown_through_the_document() -> None:
    document = report_document([_summary()], RESULTS, Settings(), "9.9")
    (failed, passed) = document["evals"][0]["gates"]
    assert failed["notes"] == ["compared on the 2 shared rows"]
    assert "notes" not in passed  # the key appears only when there are notes
    assert (
        "overlap.mean 0.75 \\< 0.8 · compared on the 2 shared rows · regressed (1): r1"
        in markdown_summary(document)
    )


def test_one_gate_summary_line_for_every_report() -> None:
    document = report_document([_summary()], RESULTS, Settings(), "9.9")
    line = gate_summary(entries(document))
    assert line == "Gates: 1 passed, 1 failed, 0 skipped"
    assert line in terminal_lines(document, None)
    assert line in markdown_summary(document).splitlines()


def test_reports_are_written_from_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    document = report_document([_summary()], RESULTS, Settings(), "9.9")
    out = tmp_path / "out"
    out.mkdir()
    write_reports(document, out / "r.json", None, out / "r.md")
    assert json.loads((out / "r.json").read_text(encoding="utf-8")) == json.loads(
        json_text(document)
    )
    assert (out / "r.md").read_text(encoding="utf-8") == markdown_summary(document)
    assert sorted(p.name for p in out.iterdir()) == ["r.json", "r.md"]  # no temporary files


def test_a_paired_baseline_carries_its_stored_row_values() -> None:
    summary = _summary()
    assert summary.stored is not None
    rows = {
        "r1": StoredRow("i1", {"overlap": 0.5, "f1": 1.0}, {}),
        "r0": StoredRow("i0", {"overlap": 0.0}, {}),
    }
    paired = replace(summary.stored, baseline=Baseline(Path("b.json"), {}, 2, {}, rows))
    document = report_document([replace(summary, stored=paired)], [], Settings(), "9.9")
    entry = document["evals"][0]["baseline"]
    assert entry["status"] == "paired"
    assert entry["row_values"] == {"r0": {"overlap": 0.0}, "r1": {"overlap": 0.5, "f1": 1.0}}
    refused = replace(paired, problem="signature differs")
    document = report_document([replace(summary, stored=refused)], [], Settings(), "9.9")
    assert "row_values" not in document["evals"][0]["baseline"]  # not comparable: not shown
    # Stored under another version of f1: f1's stored values are not drawn beside this
    # run's, overlap's still are.
    versioned = replace(paired, not_compared={"f1": ('f1.version: stored "1", now "2"',)})
    document = report_document([replace(summary, stored=versioned)], [], Settings(), "9.9")
    assert document["evals"][0]["baseline"]["row_values"] == {
        "r0": {"overlap": 0.0},
        "r1": {"overlap": 0.5},
    }
    schema_1 = report_document([summary], [], Settings(), "9.9")  # rows=None: none to show
    assert "row_values" not in schema_1["evals"][0]["baseline"]


def _records(count: int) -> list[RunRecord]:
    return [
        RunRecord(f"2026-11-24T12:{i // 60:02}:{i % 60:02}+00:00", None, "9.9", ())
        for i in range(count)
    ]


def test_the_history_key_holds_the_last_runs_and_counts_them_all() -> None:
    records = _records(HISTORY_WINDOW + 2)
    history = history_document("hist/history.jsonl", records, appended=True)
    assert (history["path"], history["recorded"], history["appended"]) == (
        "hist/history.jsonl",
        HISTORY_WINDOW + 2,
        True,
    )
    assert [run["time"] for run in history["runs"]] == [r.time for r in records[2:]]


def test_every_report_says_whether_the_run_was_appended_to_the_history() -> None:
    document = report_document([_summary()], RESULTS, Settings(), "9.9")
    assert not any("run history" in line for line in terminal_lines(document, None))
    document["history"] = history_document("h/history.jsonl", _records(3), appended=True)
    appended = "run history: this run appended to h/history.jsonl (3 run(s) recorded)"
    assert terminal_lines(document, None)[-1] == appended
    assert appended in markdown_summary(document)
    document["history"] = history_document(
        "h/history.jsonl", _records(2), appended=False, note="no eval ran"
    )
    assert terminal_lines(document, None)[-1] == (
        "run history: this run NOT appended to h/history.jsonl: no eval ran (2 run(s) recorded)"
    )
