"""The Markdown summary: golden output, escaping, and how pytest writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.project import Project

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.reports.document import report_document
from pytest_ragmetrics.reports.markdown import cell, markdown_summary
from pytest_ragmetrics.results.summary import EvalInfo, RowPayload, summarize

INFO = EvalInfo("evals/test_a.py", "evals/test_a.py", "evals/data/a.jsonl", "0" * 64, 2)


def test_markdown_summary_golden() -> None:
    payloads = [
        RowPayload(INFO, "r1", 0, {"f1": 1.0, "tokens": 100.0, "mrr": 1.0}, {}, None),
        RowPayload(INFO, "r2", 1, {"f1": 0.5, "tokens": 300.0, "mrr": 0.5}, {}, None),
    ]
    results = [
        GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "passed", "ok", 0.75, 0.5),
        GateResult(
            "evals/test_a.py",
            "tokens.mean",
            "<= 1.2x baseline",
            "failed",
            "too many\nmore",
            200.0,
            120.0,
            100.0,
        ),
    ]
    text = markdown_summary(
        report_document(summarize(payloads, Settings()), results, Settings(), "9.9")
    )
    assert text.splitlines() == [
        "## pytest-ragmetrics: 1 gate(s) failed",
        "",
        "pytest-ragmetrics 9.9 · tau_sim 0.65 · citations: auto",
        "",
        "| Eval | N | Faithfulness | Overlap | F1 | Tokens | P50 ms | Abstain |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| evals/test\\_a.py | 2 | — | — | 0.750 | 200.0 | — | — |",
        "",
        "<details><summary>More metrics (mean over rows unless named):</summary>",
        "",
        "```",
        "  evals/test_a.py (2 rows):",
        "    mrr 0.75",
        "```",
        "",
        "</details>",
        "",
        "### Gates",
        "",
        "Gates: 1 passed, 1 failed, 0 skipped",
        "",
        "| Status | Gate | Rule | Value | Bound | Baseline | Why |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
        "| **FAIL** | evals/test\\_a.py::gate::tokens.mean | \\<= 1.2x baseline | 200 | 120 "
        "| 100 | too many |",
        "",
        "<details><summary>Passed gates (1)</summary>",
        "",
        "| Status | Gate | Rule | Value | Bound | Baseline | Why |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
        "| pass | evals/test\\_a.py::gate::f1.mean | \\>= 0.5 | 0.75 | 0.5 | — |  |",
        "",
        "</details>",
    ]


def test_bleu_numbers_carry_their_signatures() -> None:
    # One row, one gold, sacrebleu's defaults: sentence BLEU has effective order, the
    # corpus score not, as sacrebleu's sentence_bleu and corpus_bleu (signatures by the
    # format of sacrebleu's BLEU.get_signature()).
    import sacrebleu

    from pytest_ragmetrics.metrics.bleu import sentence_bleu

    result = sentence_bleu("the cat sat on the mat", ["the cat sat on a mat"])
    stats = {**result.stats.as_dict(), "nrefs_1": 1.0}
    payloads = [RowPayload(INFO, "r1", 0, {"bleu": result.score}, {"bleu_stats": stats}, None)]
    text = markdown_summary(report_document(summarize(payloads, Settings()), [], Settings(), "9.9"))
    version = sacrebleu.__version__
    assert "<details><summary>Signatures (sacrebleu's; numbers signed differently are not " in (
        text
    )
    assert (
        f"  evals/test_a.py: bleu nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version}"
        in text.splitlines()
    )
    assert (
        f"  evals/test_a.py: bleu.corpus nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|"
        f"version:{version}" in text.splitlines()
    )


def test_cells_cannot_break_the_table_or_inject_markup() -> None:
    assert cell("a | b\nc") == "a \\| b c"
    assert cell("<script>alert(1)</script>") == "\\<script\\>alert(1)\\</script\\>"
    assert cell("`code` *bold* [link](x)") == "\\`code\\` \\*bold\\* \\[link\\](x)"


def test_the_option_writes_the_summary(project: Project) -> None:
    result = project.run("--ragmetrics-md", "out/summary.md")
    result.assert_outcomes(passed=4 + 4)
    text = (project.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("## pytest-ragmetrics: all gates hold\n")
    assert "| test\\_eval.py | 4 | — | — | 0.500 | 250.0 | 250 | 0.250 |" in text


def test_github_step_summary_is_appended_to(
    make_project: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project("n2")
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))  # the subprocess inherits it
    project.run().assert_outcomes(passed=4 + 4)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## pytest-ragmetrics: all gates hold\n")
    assert text.count("## pytest-ragmetrics") == 1  # written once, by the controller


@pytest.mark.parametrize("flag", [[], ["--ragmetrics-md", "s.md"]])
def test_nothing_is_written_without_evals(pytester: pytest.Pytester, flag: list[str]) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider", *flag).assert_outcomes(passed=1)
    assert not (pytester.path / "s.md").exists()


def _gate_lines(results: list[GateResult]) -> list[str]:
    payloads = [RowPayload(INFO, "r1", 0, {"f1": 1.0, "tokens": 100.0}, {}, None)]
    text = markdown_summary(
        report_document(summarize(payloads, Settings()), results, Settings(), "9.9")
    )
    lines = text.splitlines()
    return lines[lines.index("### Gates") + 2 :]


def test_gates_that_did_not_pass_come_first_and_open_failed_before_skipped() -> None:
    lines = _gate_lines(
        [
            GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "passed", "ok", 1.0, 0.5),
            GateResult("evals/test_a.py", "mrr.mean", ">= 0.5", "skipped", "partial run"),
            GateResult("evals/test_a.py", "tokens.mean", "<= 50", "failed", "too many", 100, 50),
        ]
    )
    statuses = [line.split(" | ")[0] for line in lines if line.startswith("| ")]
    # the open table (failed, then skipped), then the collapsed passed gates
    assert statuses == ["| Status", "| ---", "| **FAIL**", "| skip", "| Status", "| ---", "| pass"]
    assert lines.index("<details><summary>Passed gates (1)</summary>") > lines.index(
        next(line for line in lines if line.startswith("| skip"))
    )


def test_when_every_gate_passes_only_the_collapsed_table_remains() -> None:
    lines = _gate_lines(
        [GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "passed", "ok", 1.0, 0.5)]
    )
    assert lines[:3] == [
        "Gates: 1 passed, 0 failed, 0 skipped",
        "",
        "<details><summary>Passed gates (1)</summary>",
    ]


def test_the_headline_counts_failed_and_errored_rows_when_every_gate_holds() -> None:
    payloads = [
        RowPayload(INFO, "r1", 0, {"f1": 1.0}, {}, None),
        RowPayload(INFO, "r2", 1, {"f1": 0.5}, {}, None, failed=True),
        RowPayload(INFO, "r3", 2, {}, {}, "ValueError: no answer"),
    ]
    results = [GateResult("evals/test_a.py", "f1.mean", ">= 0.5", "passed", "ok", 0.75, 0.5)]
    text = markdown_summary(
        report_document(summarize(payloads, Settings()), results, Settings(), "9.9")
    )
    assert text.splitlines()[0] == "## pytest-ragmetrics: 1 row(s) failed, 1 error(s)"
