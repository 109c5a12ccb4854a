"""Golden tests of the pure terminal rendering."""

from __future__ import annotations

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.reports.document import report_document
from pytest_ragmetrics.reports.model import EvalView
from pytest_ragmetrics.reports.terminal import render_table, terminal_lines
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 2)


def test_render_table_aligns_columns() -> None:
    assert render_table(["Eval", "N"], [["a", "10"], ["long name", "2"]]) == [
        "Eval        N",
        "---------  --",
        "a          10",
        "long name   2",
    ]


def test_terminal_lines_golden() -> None:
    payloads = [
        RowPayload(INFO, "r1", 0, {"f1": 1.0, "tokens": 100.0, "latency_ms": 100.0}, {}, None),
        RowPayload(INFO, "r2", 1, {"f1": 0.5, "tokens": 300.0, "latency_ms": 300.0}, {}, None),
    ]
    summaries = summarize(payloads, Settings())
    results = [
        GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "passed", "ok", 0.75, 0.5),
        GateResult("evals/test_a.py", "tokens.mean", "<= 150", "failed", "too many\nmore", 200.0),
    ]
    document = report_document(summaries, results, Settings(), "9.9")
    lines = terminal_lines(document, "thresholds.toml", ["a note"])
    assert lines == [
        "thresholds: thresholds.toml · citations: auto · IDK phrases: 11 · tau_sim: 0.65",
        "",
        "Eval             N  Faithfulness  Overlap     F1  Tokens  P50 ms  Abstain",
        "---------------  -  ------------  -------  -----  ------  ------  -------",
        "evals/test_a.py  2             —        —  0.750   200.0     200        —",
        "",
        "Appendix",
        "Eval             EM  P95 ms  IDK+Cit  Errors",
        "---------------  --  ------  -------  ------",
        "evals/test_a.py   —     290        —       0",  # p95 of 100, 300: 100 + 0.95 * 200
        "",
        "— = not computed by this eval",
        "",
        "Rows: 2 passed, 0 failed, 0 errored",
        "Gates: 1 passed, 1 failed, 0 skipped",
        "  FAILED  evals/test_a.py::gate::tokens.mean: too many",
        "",
        "a note",
    ]


def _stored(label: str, transformations: object, note: str | None = None) -> EvalView:
    """An eval whose every stored row paired (3 of 3)."""
    baseline = {
        "status": "paired",
        "shared": 3,
        "stored_rows": 3,
        "added": 0,
        "removed": 0,
        "changed": 0,
        "added_ids": [],
        "removed_ids": [],
        "changed_ids": [],
        "transformations": transformations,
    }
    if note is not None:
        baseline["transformations_note"] = note
    return EvalView.from_dict({"name": label, "label": label, "n": 3, "baseline": baseline})


def test_a_baseline_whose_states_were_not_computed_never_reads_none_changed() -> None:
    """Without abstain, f1 and overlap recorded, nothing says whether a row's grounding
    state changed: the section says why, instead of 'none changed state'; the one eval
    whose states are known and unchanged is not called an 'other' eval."""
    from pytest_ragmetrics.reports.terminal import stored_baseline_lines

    unknown = _stored("a.py", None, "transformations need abstain, f1, overlap recorded")
    unchanged = _stored("b.py", {"idk_to_supported": [], "regressions": []})
    assert stored_baseline_lines([unknown]) == [
        "Stored baselines (rows paired by id):",
        "  a.py: 3 of 3 stored rows paired",
        "    no transformations: transformations need abstain, f1, overlap recorded",
    ]
    assert stored_baseline_lines([unchanged]) == [
        "Stored baselines (rows paired by id):",
        "  1 eval(s): every stored row paired, none changed state",
    ]
    assert stored_baseline_lines([unknown, unchanged])[-1] == (
        "  1 other eval(s): every stored row paired, none changed state"
    )
