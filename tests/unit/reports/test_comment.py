"""The pull-request comment: golden output, escaping, the budget, the link."""

from __future__ import annotations

import re
from typing import Any

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.gates.evidence import GateEvidence
from pytest_ragmetrics.reports.comment import (
    COMMENT_BUDGET,
    COMMENT_MARKER,
    GITHUB_COMMENT_LIMIT,
    pr_comment,
    run_page_link,
)
from pytest_ragmetrics.reports.document import report_document
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 3)


def _evidence(estimate: float, low: float, high: float, verdict: str) -> dict[str, Any]:
    """A comparison's evidence as a report document holds it (numbers made up here)."""
    return GateEvidence(
        scale="difference",
        estimate=estimate,
        interval=(low, high),
        delta=estimate,
        ci=(low, high),
        confidence=0.95,
        p_value=0.02,
        p_bound=None,
        p_floor=None,
        method="t",
        n_pairs=3,
        n_shared=3,
        n=3,
        units=3,
        clustered=False,
        mde=None,
        bound=-0.01,
        margin=0.01,
        verdict=verdict,  # type: ignore[arg-type]
        reading="plain",
        p_gate=None,
        p_adjusted=None,
        correction="none",
        rows_to_detect=None,
        advice=None,
    ).as_dict()


def _document(answer: str = "Madrid", row_id: str = "r2") -> dict[str, Any]:
    payloads = [
        RowPayload(INFO, "r1", 0, {"f1": 1.0, "tokens": 100.0}, {}, None, fields={"answer": "a"}),
        RowPayload(
            INFO,
            row_id,
            1,
            {"f1": 0.0, "tokens": 300.0},
            {},
            None,
            evidence={"f1": "0 common token(s)"},
            fields={"question": "Capital of Germany?", "answer": answer},
        ),
        RowPayload(INFO, "r3", 2, {}, {}, "evals/data/a.jsonl:3: field 'gold': missing"),
    ]
    results = [
        GateResult(
            "evals/test_a.py",
            "f1.mean",
            ">= baseline - 0.01",
            "failed",
            "f1.mean FAILS\nmore",
            0.5,
            0.99,
            1.0,
        ),
        GateResult("evals/test_a.py", "tokens.mean", "<= 1000", "passed", "ok", 200.0, 1000.0),
    ]
    document = report_document(summarize(payloads, Settings()), results, Settings(), "9.9")
    (entry,) = document["evals"]
    entry["gates"][0]["stats"] = _evidence(-0.5, -1.0, -0.1, "regressed")
    entry["gates"][0]["regressed"] = [{"id": row_id, "before": 1.0, "after": 0.0}]
    entry["baseline"] = {"path": "b.json", "status": "paired", "metrics": {"tokens": {"mean": 160}}}
    return document


def test_pr_comment_golden() -> None:
    text = pr_comment(_document(), link="https://x.test/runs/1")
    assert text.splitlines() == [
        "### ❌ pytest-ragmetrics: 1 error(s), 1 gate(s) failed",
        "",
        "Rows: 2 passed, 0 failed, 1 errored · Gates: 1 passed, 1 failed, 0 skipped",
        "",
        "[HTML report and the run's artifacts](https://x.test/runs/1)",
        "",
        "#### Gates that failed or moved",
        "",
        "| Status | Gate | Rule | Value | Bound | Baseline | Change and evidence |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
        "| **FAIL** | evals/test\\_a.py::gate::f1.mean | \\>= baseline - 0.01 | 0.5 | 0.99 | 1 "
        "| -0.5 \\[95% CI -1, -0.1\\] · p 0.02 · 3 pairs · regressed |",
        "",
        "#### Rows that regressed or recovered",
        "",
        "<details><summary>regressed · evals/test_a.py · <code>r2</code> · f1.mean 1 → 0</summary>",
        "",
        "- question: Capital of Germany?",
        "- answer: Madrid",
        "- f1: 0 — 0 common token(s)",
        "",
        "</details>",
        "",
        "",
        "#### Rows that failed or errored",
        "",
        "<details><summary>errored · evals/test_a.py · <code>r3</code></summary>",
        "",
        "- error: evals/data/a.jsonl:3: field 'gold': missing",
        "",
        "</details>",
        "",
        "",
        "#### Spent per query, before → after",
        "",
        "Before: the eval's reference system, or its stored baseline; each side's own "
        "aggregate, not paired rows.",
        "",
        "| Eval | Before | tokens.mean |",
        "| --- | ---: | ---: |",
        # (100 + 300) / 2 = 200 against the stored 160: +25%
        "| evals/test\\_a.py | stored baseline | 160.0 → 200.0 (+25.0%) |",
        "",
        COMMENT_MARKER,
    ]


def test_data_text_cannot_break_out_or_run_a_command() -> None:
    hostile = "x</details><script>alert(1)</script>|\n::error::owned\x1b[31m"
    text = pr_comment(_document(answer=hostile, row_id="</summary><b>r2"))
    # a tag is written escaped (\\< in Markdown, &lt; in a summary): shown, never obeyed
    assert re.search(r"(?<!\\)<(script|b>|/summary)", text.replace("</summary>\n", "")) is None
    assert text.count("<details>") == text.count("</details>")
    assert text.count("<summary>") == text.count("</summary>")
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert "\x1b" not in text


def test_a_clean_verdict_never_hides_a_failed_run() -> None:
    document = _document()
    (entry,) = document["evals"]
    entry["gates"] = [entry["gates"][1]]  # the one that passed
    entry["row_statuses"] = {"passed": 3, "failed": 0, "error": 0}
    entry["errors"] = 0
    entry["rows"] = [row for row in entry["rows"] if not row["errors"]]
    assert pr_comment(document).splitlines()[0] == "### ✅ pytest-ragmetrics: all gates hold"
    assert pr_comment(document, run_failed=True).splitlines()[0] == (
        "### ❌ pytest-ragmetrics: all gates hold, but the run failed: see the job's log"
    )


def test_no_link_line_without_a_link() -> None:
    assert "HTML report and the run's artifacts" not in pr_comment(_document())


def test_the_run_page_needs_all_three_variables() -> None:
    environ = {
        "GITHUB_SERVER_URL": "https://github.com/",
        "GITHUB_REPOSITORY": "acme/rag",
        "GITHUB_RUN_ID": "7",
    }
    assert run_page_link(environ) == "https://github.com/acme/rag/actions/runs/7"
    assert run_page_link({**environ, "GITHUB_RUN_ID": ""}) is None
    assert run_page_link({}) is None


def _huge() -> dict[str, Any]:
    """2,000 failed gates, each with 20 regressed rows, every row failed with a long
    answer: far beyond any budget."""
    document = _document()
    (entry,) = document["evals"]
    template = entry["gates"][0]
    rows = [
        {**entry["rows"][1], "id": f"q{i}", "answer": "long " * 200, "status": "failed"}
        for i in range(3_000)
    ]
    entry["rows"] = rows
    entry["row_statuses"] = {"passed": 0, "failed": 3_000, "error": 0}
    entry["gates"] = [
        {
            **template,
            "name": f"m{i}.mean",
            "regressed": [{"id": f"q{j}", "before": 1, "after": 0} for j in range(20)],
        }
        for i in range(2_000)
    ]
    return document


def test_a_huge_run_stays_within_the_budget_and_says_what_it_left_out() -> None:
    text = pr_comment(_huge())
    assert len(text) <= COMMENT_BUDGET < GITHUB_COMMENT_LIMIT
    assert "more gates: see the HTML report" in text
    assert text.rstrip("\n").endswith(COMMENT_MARKER)
    # 2,000 gates x 20 regressed rows, and 3,000 failed rows: each count said whole
    for count in ("40,000", "3,000"):
        said = (f"… {count} more rows: see the HTML report", f"… {count} rows left out")
        assert any(line in text for line in said), count


def test_the_least_important_sections_go_first() -> None:
    text = pr_comment(_document(), budget=900)
    assert len(text) <= 900
    assert "| **FAIL** | evals/test\\_a.py::gate::f1.mean" in text  # the gates stay
    assert "- answer: Madrid" not in text  # the rows' evidence goes
    assert "rows left out: see the HTML report" in text or "more rows" in text


def test_money_spent_reads_before_and_after_when_the_eval_records_it() -> None:
    """Whatever metric of what a query spends an eval recorded is shown, cost in money
    included; the others' columns are left out."""
    document = _document()
    (entry,) = document["evals"]
    entry["metrics"]["cost_usd"] = {"mean": 0.003, "sum": 0.009}
    entry["baseline"]["metrics"]["cost_usd"] = {"mean": 0.002, "sum": 0.006}
    lines = pr_comment(document).splitlines()
    heading = next(line for line in lines if line.startswith("| Eval | Before"))
    assert heading == "| Eval | Before | tokens.mean | cost_usd.mean | cost_usd.sum |"
    row = lines[lines.index(heading) + 2]
    # 0.002 → 0.003 is +50%, and so is the sum's 0.006 → 0.009
    assert row.startswith("| evals/test\\_a.py | stored baseline | 160.0 → 200.0 (+25.0%) | ")
    assert row.count("(+50.0%)") == 2


def test_failed_rows_listed_errored_first_over_evals_and_capped_in_one_pass() -> None:
    """Two evals of 12 failed rows and 3 errored each: the three errored rows of each,
    then the first four failed rows of the first eval make ``ROWS_SHOWN`` (10); the
    other 30 - 10 = 20 are counted."""
    from pytest_ragmetrics.reports.comment import ROWS_SHOWN, failed_section
    from pytest_ragmetrics.reports.model import ReportModel, RowViews

    other = EvalInfo("evals/test_b.py", "evals/test_b.py", "evals/data/b.jsonl", "1" * 64, 15)
    payloads = [
        RowPayload(info, f"{prefix}{i}", i, {"f1": 0.0}, {}, error, failed=error is None)
        for info, prefix in ((INFO, "a"), (other, "b"))
        for i in range(15)
        for error in ["boom" if i >= 12 else None]
    ]
    model = ReportModel.build(summarize(payloads, Settings()), [], Settings(), "9.9")
    assert all(isinstance(view.rows, RowViews) for view in model.evals)
    section = failed_section(model.evals)
    listed = [re.search(r"(errored|failed) · \S+ · <code>(\w+)</code>", i) for i in section.items]
    assert [(m.group(1), m.group(2)) for m in listed if m] == [
        *(("errored", f"a{i}") for i in (12, 13, 14)),
        *(("errored", f"b{i}") for i in (12, 13, 14)),
        *(("failed", f"a{i}") for i in range(4)),
    ]
    assert len(section.items) == ROWS_SHOWN == 10
    assert section.capped == 20
