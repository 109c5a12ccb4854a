"""The HTML report: content, escaping, determinism, links, on a hand-built JSON document.

``study_document()`` is a realistic report of a three-system comparison (baseline,
config_a, config_b, four questions each; baseline with a stored baseline's rows) plus a
second eval whose rows carry no system. Every expected value below is read off the rows
in ``SYSTEM_ROWS``, ``STATUSES`` and ``STORED`` by hand.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import random
import re
import statistics
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest

from pytest_ragmetrics.reports.columns import ms
from pytest_ragmetrics.reports.document import entries, model_of
from pytest_ragmetrics.reports.html import pareto_optimal, render_html
from pytest_ragmetrics.reports.html.markup import without_empty_columns
from pytest_ragmetrics.reports.html.numbers import formatted, metric_kind
from pytest_ragmetrics.reports.html.plots import (
    Series,
    distribution_metrics,
    distribution_series,
    ecdf,
)
from pytest_ragmetrics.reports.html.rows import SAMPLE_SEED, SHOWN_PROBLEMS, SHOWN_ROWS, anchors
from pytest_ragmetrics.reports.html.script import SCRIPT as PAGE_SCRIPT
from pytest_ragmetrics.reports.html.tables import link

STUDY = "evals/test_study.py"
SINGLE = "evals/test_single.py"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"

# Per system, per question (all answerable): overlap, f1, tokens, latency_ms, abstained.
#   baseline: overlap 1, .5, 0, .5 -> .5     f1 1, .5, 0, 0 -> .375   tokens mean 1000
#   config_a: overlap 1, .5, 1, .5 -> .75    f1 1, .5, 1, 0 -> .625   tokens mean 1100
#   config_b: overlap 0, .5, 0, .5 -> .25    f1 0, .5, 0, 0 -> .125   tokens mean 1300
# Pareto (higher overlap, fewer tokens): baseline and config_a; config_b is dominated.
# st-03: baseline abstains, config_a answers supported (IDK -> supported).
# st-01: baseline answers supported, config_b abstains (a regression).
SYSTEM_ROWS: dict[str, list[tuple[float, float, int, int, bool]]] = {
    "baseline": [
        (1.0, 1.0, 900, 800, False),
        (0.5, 0.5, 1100, 950, False),
        (0.0, 0.0, 700, 600, True),
        (0.5, 0.0, 1300, 1200, False),
    ],
    "config_a": [
        (1.0, 1.0, 1000, 900, False),
        (0.5, 0.5, 1200, 1000, False),
        (1.0, 1.0, 900, 700, False),
        (0.5, 0.0, 1300, 1300, False),
    ],
    "config_b": [
        (0.0, 0.0, 1400, 1000, True),
        (0.5, 0.5, 1200, 1100, False),
        (0.0, 0.0, 1000, 900, True),
        (0.5, 0.0, 1600, 1500, False),
    ],
}
# Rows that did not pass: baseline's st-03 failed a test's verdict, config_b's st-01 errored.
STATUSES = {("baseline", 2): "failed", ("config_b", 0): "error"}
ERROR = "evals/data/study.jsonl:1: call raised KeyError: 'context'"
# The baseline system's stored baseline: each row's overlap and tokens when it was accepted.
STORED = {
    "st-01": {"overlap": 0.5, "tokens": 800.0},
    "st-02": {"overlap": 0.5, "tokens": 1000.0},
    "st-03": {"overlap": 0.0, "tokens": 700.0},
    "st-04": {"overlap": 0.0, "tokens": 1100.0},
}
PARIS = "Paris is the capital and largest city of France."
TOWER = "The Eiffel Tower was finished in March 1889."
QUESTIONS = [
    "What is the capital of France?",
    "When was the Eiffel Tower finished?",
    "Who designed the Louvre pyramid?",
    "How tall is Mont Blanc?",
]


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "sum": sum(values),
        "p50": statistics.median(values),
        "p95": ordered[-1],
    }


def _sentences(overlap: float, abstained: bool) -> list[dict[str, Any]]:
    if abstained:
        return [
            {
                "sentence": "I don't know.",
                "citations": [],
                "similarity": None,
                "supported": False,
                "claim": False,
                "reason": "IDK sentence",
                "context": None,
            }
        ]
    first = {
        "sentence": "The answer is in the first document [1].",
        "citations": ["1"],
        "similarity": 0.82,
        "supported": True,
        "claim": True,
        "reason": "similarity 0.82 >= 0.65",
        "context": {"doc_id": "d1", "text": PARIS},
    }
    second = {
        "sentence": "It is also widely known.",
        "citations": ["2"],
        "similarity": 0.41,
        "supported": False,
        "claim": True,
        "reason": "similarity 0.41 < 0.65",
        "context": {"doc_id": "d2", "text": TOWER},
    }
    return [first] if overlap == 1.0 else [first, second]


def _row(system: str, index: int, values: tuple[float, float, int, int, bool]) -> dict[str, Any]:
    overlap, f1, tokens, latency, abstained = values
    status = STATUSES.get((system, index), "passed")
    return {
        "id": f"st-0{index + 1}",
        "system": system,
        "question": QUESTIONS[index],
        "answer": "I don't know." if abstained else "The answer is in the first document [1].",
        "metrics": {
            "overlap": overlap,
            "f1": f1,
            "tokens": float(tokens),
            "latency_ms": float(latency),
            "abstain": float(abstained),
        },
        "errors": [ERROR] if status == "error" else [],
        "evidence": {"overlap": f"{overlap:g} of the claims supported"},
        "sentences": _sentences(overlap, abstained),
        "status": status,
        "failed_tests": ["evals/test_study.py::test_grounded"] if status == "failed" else [],
    }


def _gate(name: str, rule: str, status: str, value: float, bound: float | None) -> dict[str, Any]:
    return {
        "name": name,
        "rule": rule,
        "status": status,
        "passed": {"passed": True, "failed": False}.get(status),
        "value": value,
        "bound": bound,
        "baseline": bound,
        "message": f"{name} = {value:g}, rule {rule}\nsecond line of the message",
    }


def _system_entry(system: str) -> dict[str, Any]:
    rows = [_row(system, i, values) for i, values in enumerate(SYSTEM_ROWS[system])]
    columns = {m: [r["metrics"][m] for r in rows] for m in rows[0]["metrics"]}
    metrics: dict[str, Any] = {m: _stats(v) for m, v in columns.items()}
    metrics["abstain"]["rate"] = metrics["abstain"]["mean"]
    wrong = [not a and f == 0.0 for _, f, _, _, a in SYSTEM_ROWS[system]]
    metrics["wrong_on_answerable"] = _stats([float(w) for w in wrong])
    metrics["idk_on_answerable"] = _stats([float(a) for *_, a in SYSTEM_ROWS[system]])
    if system != "config_b":  # config_b ran without the judge: no faithfulness, no F1 short
        metrics["faithfulness"] = _stats([0.8, 0.7, 0.9, 0.6])
        metrics["f1_short"] = _stats([1.0, 1.0, 0.0, 0.5])
    metrics["rounds"] = _stats([1.0, 2.0, 1.0, 1.0])
    return {
        "name": STUDY,
        "system": system,
        "label": f"{STUDY}[{system}]",
        "compare_to": None if system == "baseline" else "baseline",
        "module": STUDY,
        "dataset": "evals/data/study.jsonl",
        "dataset_sha256": "ab" * 32,
        "dataset_rows": 12,
        "n": len(rows),
        "errors": 0,
        "metrics": metrics,
        "breakdowns": {
            "tokens_by_stage": {
                "rewrite": {"sum": 400.0, "mean": 100.0},
                "generate": {"sum": 3600.0, "mean": 900.0},
            },
            "stop_reason": {"answer": {"sum": 3, "mean": 0.75}, "budget": {"sum": 1, "mean": 0.25}},
        },
        "dataset_level": {"details": {}, "errors": []},
        "gates": [],
        "rows": rows,
    }


def _compare(entry: dict[str, Any], baseline: dict[str, Any]) -> None:
    mine, base = entry["metrics"], baseline["metrics"]
    entry["metrics"]["vs_baseline"] = {
        "tokens_mean_ratio": mine["tokens"]["mean"] / base["tokens"]["mean"],
        "tokens_p50_ratio": mine["tokens"]["p50"] / base["tokens"]["p50"],
        "overlap_mean_delta": mine["overlap"]["mean"] - base["overlap"]["mean"],
        "f1_mean_delta": mine["f1"]["mean"] - base["f1"]["mean"],
    }
    if "f1_short" in mine:
        delta = mine["f1_short"]["mean"] - base["f1_short"]["mean"]
        entry["metrics"]["vs_baseline"]["f1_short_mean_delta"] = delta


def _single_entry() -> dict[str, Any]:
    rows = [
        {"id": "q1", "system": None, "question": "Q one?", "answer": "A one.", "metrics": {}},
        {"id": "q2", "system": None, "question": "Q two?", "answer": "A two.", "metrics": {}},
    ]
    for row, (f1, tokens) in zip(rows, [(1.0, 200.0), (0.5, 300.0)], strict=True):
        row.update(metrics={"f1": f1, "tokens": tokens}, errors=[], evidence={})
    return {
        "name": SINGLE,
        "system": None,
        "label": SINGLE,
        "compare_to": None,
        "module": SINGLE,
        "dataset": "evals/data/single.jsonl",
        "dataset_sha256": "cd" * 32,
        "dataset_rows": 2,
        "n": 2,
        "errors": 0,
        "metrics": {"f1": _stats([1.0, 0.5]), "tokens": _stats([200.0, 300.0])},
        "breakdowns": {},
        "dataset_level": {"details": {}, "errors": []},
        "gates": [_gate("f1.mean", ">= 0.5", "passed", 0.75, 0.5)],
        "rows": rows,
    }


def study_document() -> dict[str, Any]:
    """A JSON report: the three-system study, then a single-system eval."""
    baseline, config_a, config_b = (_system_entry(s) for s in SYSTEM_ROWS)
    for entry in (config_a, config_b):
        _compare(entry, baseline)
    config_a["gates"] = [
        _gate("overlap.mean", ">= baseline", "passed", 0.75, 0.5),
        _gate("tokens.mean", "<= 1.2x baseline", "passed", 1100.0, 1200.0),
    ]
    config_b["gates"] = [
        _gate("overlap.mean", ">= baseline", "failed", 0.25, 0.5),
        _gate("f1_short.mean", ">= baseline", "skipped", 0.0, None),
        _gate("tokens.mean", "<= 1.2x baseline", "failed", 1300.0, 1200.0),
    ]
    config_a["transformations"] = {"idk_to_supported": ["st-03"], "regressions": [], "compared": 4}
    config_b["transformations"] = {"idk_to_supported": [], "regressions": ["st-01"], "compared": 4}
    baseline["baseline"] = {
        "path": "evals/__baselines__/test_study[baseline].json",
        "status": "paired",
        "coverage": 1.0,
        "shared": 4,
        "added": 0,
        "removed": 0,
        "changed": 0,
        "stored_rows": 4,
        "added_ids": [],
        "removed_ids": [],
        "changed_ids": [],
        "transformations": None,
        "row_values": STORED,
    }
    return {
        "schema_version": 1,
        "plugin_version": "0.1.0",
        "settings": {
            "citation_format": "auto",
            "idk_patterns": ["i don't know", "tidak tahu"],
            "metrics_version": 1,
            "tau_sim": 0.65,
            "embedding_model": "all-MiniLM-L6-v2",
        },
        "evals": [baseline, config_a, config_b, _single_entry()],
    }


def plant(document: dict[str, Any], payload: str) -> dict[str, Any]:
    """A copy of the study with ``payload`` in a question, an answer, a sentence, a row id
    (also listed as a transformation), a gate message, a metric name, evidence and an
    error."""
    document = copy.deepcopy(document)
    baseline, config_a, config_b = document["evals"][:3]
    row = baseline["rows"][0]
    row["question"] = f"Question {payload}"
    row["answer"] = f"Answer {payload}"
    row["sentences"][0]["sentence"] = f"Sentence {payload}"
    row["evidence"]["overlap"] = f"Evidence {payload}"
    row["errors"] = [f"Error {payload}"]
    row["metrics"][payload] = 1.0
    baseline["metrics"][payload] = {"mean": 1.0}
    config_a["rows"][2]["id"] = f"st-03{payload}"
    config_a["transformations"]["idk_to_supported"] = [f"st-03{payload}"]
    config_b["gates"][0]["message"] = f"Gate {payload}\nsecond line"
    return document


def rename_system(document: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A copy of the document with system ``old`` called ``new`` everywhere."""
    document = copy.deepcopy(document)
    for entry in document["evals"]:
        if entry["system"] == old:
            entry["system"], entry["label"] = new, f"{entry['name']}[{new}]"
            for row in entry["rows"]:
                row["system"] = new
        if entry["compare_to"] == old:
            entry["compare_to"] = new
    return document


class _Tables(HTMLParser):
    """The text of every table cell, per table class: {class: [[cell, ...], ...]}. A table
    inside a cell (a drill-down's sentences) is a table of its own; its text is also part
    of the outer cell's."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._open: list[list[list[str]]] = []  # the tables being read, innermost last
        self._cells: list[list[str] | None] = []  # per open table: its open cell's text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._open.append(self.tables.setdefault(dict(attrs).get("class") or "", []))
            self._cells.append(None)
        elif tag == "tr" and self._open:
            self._open[-1].append([])
        elif tag in ("td", "th") and self._open:
            self._cells[-1] = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._open and self._cells[-1] is not None:
            self._open[-1][-1].append("".join(self._cells[-1]).strip())
            self._cells[-1] = None
        elif tag == "table" and self._open:
            self._open.pop()
            self._cells.pop()

    def handle_data(self, data: str) -> None:
        for cell in self._cells:
            if cell is not None:
                cell.append(data)


def tables(page: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def column(table: list[list[str]], heading: str) -> dict[str, str]:
    """First cell of each row -> that row's cell under ``heading``."""
    index = table[0].index(heading)
    return {row[0]: row[index] for row in table[1:]}


def section(page: str, index: int) -> str:
    match = re.search(rf'<section id="eval-{index}">.*?</section>', page, re.DOTALL)
    assert match
    return match.group(0)


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(study_document())


@pytest.fixture(scope="module", params=[SCRIPT, IMG], ids=["script", "img-onerror"])
def planted(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A payload, and the page of the study with that payload planted."""
    payload: str = request.param
    return payload, render_html(plant(study_document(), payload))


def test_pareto_optimal_by_hand() -> None:
    assert pareto_optimal([]) == []
    assert pareto_optimal([(0.5, 1000), (0.75, 1100), (0.25, 1300)]) == [True, True, False]
    assert pareto_optimal([(0.5, 100), (0.5, 100)]) == [True, True]  # equal: both optimal
    assert pareto_optimal([(0.5, 100), (0.5, 120)]) == [True, False]  # same overlap, dearer


def scripts(page: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", page, re.DOTALL)


def test_page_header_and_csp(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    (script,) = scripts(page)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    assert f'<meta http-equiv="Content-Security-Policy" content="{csp}">' in page
    assert "<h1>pytest-ragmetrics: " in page
    assert "2 gate(s) failed" in page.split("</h1>")[0]  # config_b's two failures
    assert "tau_sim 0.65 · citations: auto" in page
    study, single = section(page, 0), section(page, 1)
    assert "2 gate(s) failed" in study.split("</h2>")[0]
    assert "all gates hold" in single.split("</h2>")[0]


def test_the_only_script_is_the_page_own(page: str, planted: tuple[str, str]) -> None:
    payload, planted_page = planted
    for text in (page, planted_page.replace(html.escape(payload, quote=True), "")):
        assert text.lower().count("<script") == 1
        assert scripts(text) == [PAGE_SCRIPT]
        assert not re.search(r"\son\w+\s*=", text)  # no event handler attribute
        assert "javascript:" not in text.lower()
    # The script never turns text into markup: it moves nodes and reads textContent.
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in PAGE_SCRIPT
    assert "</script" not in PAGE_SCRIPT.lower()


def test_document_text_is_escaped(planted: tuple[str, str]) -> None:
    payload, planted_page = planted
    assert payload not in planted_page
    escaped = html.escape(payload, quote=True)
    for text in ("Question ", "Answer ", "Sentence ", "Evidence ", "Error ", "st-03", "Gate "):
        assert f"{text}{escaped}" in planted_page, text
    # the metric name, a column of the rows (sortable: the script moves its text node)
    assert f'<th data-sort="number">{escaped}</th>' in planted_page


def test_a_system_name_cannot_break_out_of_the_plot() -> None:
    name = "</svg><script>alert(1)</script>$x$"
    page = render_html(rename_system(study_document(), "config_b", name))
    study = section(page, 0)
    assert page.lower().count("<script") == 1  # the page's own, after every section
    assert study.count("<svg") == study.count("</svg>") == 3  # distributions, Pareto, bars
    assert "<!--" not in page  # matplotlib's text comments are dropped
    assert html.escape(name, quote=True) in study


@pytest.mark.parametrize(
    ("value", "metric", "stat", "expected"),
    [
        (0.47619, "f1", "mean", "0.476"),  # a 0-1 metric: 3 decimals
        (1.0, "f1", "p50", "1.000"),
        (0.1875, "abstain", "rate", "0.188"),
        (3.0, "idk_citation", "sum", "3"),  # the sum of a yes/no metric counts rows
        (1.0, "em", None, "1"),  # one row's yes/no value
        (48, "f1", "count", "48"),
        (961.643, "tokens", "mean", "961.6"),  # token counts: 1 decimal
        (1100.0, "prompt_tokens", None, "1100"),  # one row's count: an integer
        (1352.5, "latency_ms", "p50", "1352"),  # ms: integers (round half to even)
        (1352.6, "latency_ms", "p50", "1353"),
        (0.27, "latency_ms", "p50", "0.27"),  # below 1 ms: two decimals, as in the terminal
        (0.004, "latency_ms", "mean", "<0.01"),
        (0.0, "latency_ms", "p50", "0"),
        (0.5, "judge", "avg_latency_ms", "0.50"),  # a dataset-level statistic names its unit
        (1234.0, "judge", "tokens", "1234.0"),
        (20.0, "trust", "answered_num", "20"),
        (0.625, "trust", "answered_ratio", "0.625"),
        (1.0794, "vs_baseline", "tokens_mean_ratio", "1.08×"),
        (-0.25, "vs_baseline", "overlap_mean_delta", "-0.250"),
        (0.8, "ndcg@10", "mean", "0.800"),
        (0.5, "my_own_metric", "mean", "0.500"),  # recorded by a user's code: a number
        (2.0, "my_own_metric", "mean", "2"),
        (None, "f1", "mean", "—"),
    ],
)
def test_numbers_to_their_metric_precision(
    value: float | None, metric: str, stat: str | None, expected: str
) -> None:
    assert formatted(value, metric, stat) == expected


def test_metric_kinds_come_from_the_catalog_and_the_unit_in_the_name() -> None:
    assert metric_kind("em", "mean") == "score"  # binary: its rate
    assert metric_kind("em", "sum") == "count"
    assert metric_kind("f1", "sum") == "number"  # a sum of scores is no count
    assert metric_kind("completion_tokens") == "number"  # one row's count
    assert metric_kind("completion_tokens", "mean") == "integer"
    assert metric_kind("latency_ms", "p95") == "ms"
    assert metric_kind("sources", "total_chunks") == "number"
    assert ms(999.5) == "1000"  # not "1e+03"


def test_main_table_values_and_not_computed(page: str) -> None:
    main = tables(section(page, 0))["main num"]
    assert main[0][:3] == ["System", "N", "Errors"]
    assert [row[0] for row in main[1:]] == [
        "baseline",
        "config_a vs baseline",
        "config_b vs baseline",
    ]
    overlap, f1 = column(main, "Overlap"), column(main, "F1")
    assert (overlap["baseline"], overlap["config_a vs baseline"]) == ("0.500", "0.750")
    assert f1["config_b vs baseline"] == "0.125"
    assert column(main, "Tokens")["config_b vs baseline"] == "1300.0"
    assert column(main, "P50 ms")["baseline"] == "875"  # latencies 600, 800, 950, 1200
    assert column(main, "Abstain")["baseline"] == "0.250"
    assert column(main, "Faithfulness")["config_b vs baseline"] == "—"
    assert column(main, "F1 short")["config_b vs baseline"] == "—"
    assert column(main, "Wrong on answerable (sum)")["baseline"] == "1"
    assert column(main, "IDK on answerable (sum)")["config_b vs baseline"] == "2"
    assert column(main, "Rounds")["config_a vs baseline"] == "1.250"  # rounds 1, 2, 1, 1
    assert column(main, "Tokens mean ×")["config_a vs baseline"] == "1.10×"
    assert column(main, "Δ Overlap")["config_b vs baseline"] == "-0.250"
    assert column(main, "Δ F1")["config_a vs baseline"] == "+0.250"
    assert column(main, "Δ F1 short")["config_b vs baseline"] == "—"
    assert column(main, "Tokens mean ×")["baseline"] == "—"  # the reference itself


def test_columns_no_system_has_are_not_emitted(page: str) -> None:
    study = tables(section(page, 0))["main num"][0]
    assert "Rounds > 1" not in study  # no system recorded multi_round
    assert "Faithfulness" in study  # two of three systems have it
    single = tables(section(page, 1))["main num"]
    assert single[0] == ["System", "N", "Errors", "F1", "Tokens"]
    assert single[1] == ["all rows", "2", "0", "0.750", "250.0"]
    headings, rows = without_empty_columns(["a", "b", "c"], [["—", "—", "1"], ["—", "—", "—"]], 1)
    assert (headings, rows) == (["a", "c"], [["—", "1"], ["—", "—"]])  # kept: the first


def test_wide_tables_scroll_in_their_own_box(page: str) -> None:
    opened = page.count("<table")
    assert opened == page.count('<div class="scroll"><table')
    assert ".scroll{overflow-x:auto" in page


def test_gates_failed_first_with_first_message_line(page: str) -> None:
    gates = tables(section(page, 0))["gates"]
    assert gates[0] == ["Status", "System", "Gate", "Rule", "Value", "Bound", "Baseline", "Message"]
    assert [row[0] for row in gates[1:]] == ["failed", "failed", "skipped", "passed", "passed"]
    assert [row[1] for row in gates[1:3]] == ["config_b", "config_b"]
    assert gates[1][2:7] == ["overlap.mean", ">= baseline", "0.250", "0.500", "0.500"]
    assert gates[2][2:7] == ["tokens.mean", "<= 1.2x baseline", "1300.0", "1200.0", "1200.0"]
    # the first line shows; the whole message of a gate that did not pass is collapsed
    assert gates[1][7].startswith("overlap.mean = 0.25, rule >= baseline")
    assert (
        "<details><summary>details</summary><pre>overlap.mean = 0.25, rule &gt;= baseline\n"
        "second line of the message</pre></details>"
    ) in page
    assert gates[3][5] == "—"  # the skipped gate has no bound


def _figure(text: str, figure_id: str) -> str:
    match = re.search(rf'<figure class="plot" id="{figure_id}">(.*?)</figure>', text, re.DOTALL)
    assert match, figure_id
    return match.group(1)


def test_every_plot_is_inline_svg(page: str) -> None:
    study = section(page, 0)
    for figure_id in ("dist-0", "pareto-0", "bars-0"):
        figure = _figure(study, figure_id)
        assert figure.startswith("<svg")
        assert "<figcaption>" in figure
    assert "<?xml" not in page
    assert "<!DOCTYPE svg" not in page
    assert "Pareto-optimal (higher overlap, fewer tokens): baseline, config_a." in study


def test_a_one_system_eval_gets_distribution_plots(page: str) -> None:
    single = section(page, 1)
    assert _figure(single, "dist-1").startswith("<svg")
    assert single.count("<svg") == 1
    assert "Pareto" not in single  # nothing to set side by side
    assert "skipped" not in single
    assert distribution_metrics(entries(study_document())[3:]) == ["f1", "tokens"]
    # the main metrics some row recorded, in their order; abstain is not one of them
    assert distribution_metrics(entries(study_document())[:3]) == [
        "overlap",
        "f1",
        "tokens",
        "latency_ms",
    ]


def test_ecdf_by_hand() -> None:
    assert ecdf([0.5, 0.0, 1.0, 0.5]) == ([0.0, 0.5, 0.5, 1.0], [0.25, 0.5, 0.75, 1.0])
    assert ecdf([]) == ([], [])


def test_baseline_against_now_when_a_stored_baseline_pairs() -> None:
    systems = entries(study_document())[:3]
    assert distribution_series(systems, "overlap") == [
        Series(0, "baseline", False, (1.0, 0.5, 0.0, 0.5)),
        Series(0, "baseline", True, (0.5, 0.5, 0.0, 0.0)),  # STORED, by row id
        Series(1, "config_a", False, (1.0, 0.5, 1.0, 0.5)),
        Series(2, "config_b", False, (0.0, 0.5, 0.0, 0.5)),
    ]
    assert [s.stored for s in distribution_series(systems, "f1")] == [False] * 3  # none stored
    with_baseline = _figure(section(render_html(study_document()), 0), "dist-0")
    assert "stroke-dasharray" in with_baseline  # the stored rows are dashed
    assert "Dashed: the rows of the stored baseline (baseline)" in with_baseline
    document = study_document()
    del document["evals"][0]["baseline"]["row_values"]
    without = _figure(section(render_html(document), 0), "dist-0")
    assert "stroke-dasharray" not in without
    assert "Dashed" not in without
    single = document["evals"][3]  # one system: no name to tell the stored rows by
    single["baseline"] = {"status": "paired", "row_values": {"q1": {"f1": 0.5}}}
    one = _figure(section(render_html(document), 1), "dist-1")
    assert "Dashed: the rows of the stored baseline, as accepted" in one


def test_plots_skipped_say_why() -> None:
    document = study_document()
    for entry in document["evals"][1:3]:
        del entry["metrics"]["overlap"]
    study = section(render_html(document), 0)
    skipped = "Pareto plot skipped: fewer than two systems have overlap.mean and tokens.mean."
    assert skipped in study
    assert 'id="bars-0"' in study
    document["evals"][3]["rows"] = []
    single = section(render_html(document), 1)
    assert "Distribution plot skipped: no row recorded a per-row value." in single


def test_render_is_deterministic() -> None:
    assert render_html(study_document()) == render_html(study_document())


def test_ids_are_unique(page: str) -> None:
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


ROW_BODY = re.compile(
    r'<tbody class="row-(\w+)" data-status="(\w+)" data-index="(\d+)"><tr class="line">'
    r"<td>([^<]*)</td>(.*?)</tr>.*?"
    r'<details class="row" id="([^"]+)">',
    re.DOTALL,
)


def _drill_down_ids(page: str) -> dict[str, str]:
    """Anchor of each drill-down -> its row's id."""
    return {anchor: row_id for *_, row_id, _, anchor in ROW_BODY.findall(page)}


def test_rows_have_their_status_class_and_sort_values(page: str) -> None:
    study = section(page, 0)
    found = ROW_BODY.findall(study)
    assert len(found) == 12  # 3 systems x 4 rows
    statuses = {
        (anchor.split("-")[2], row_id): (css, status) for css, status, _, row_id, _, anchor in found
    }
    assert statuses[("0", "st-03")] == ("failed", "failed")  # baseline
    assert statuses[("2", "st-01")] == ("error", "error")  # config_b
    assert sum(css == "passed" for css, *_ in found) == 10
    for s, system in enumerate(SYSTEM_ROWS):
        for r, (overlap, f1, tokens, latency, abstained) in enumerate(SYSTEM_ROWS[system]):
            cells = found[4 * s + r][4]
            values = re.findall(r'data-value="([^"]+)"', cells)
            # columns: overlap, f1, tokens, latency_ms (the main ones), then abstain
            assert [float(v) for v in values] == [overlap, f1, tokens, latency, abstained]
    assert '<option value="failed">failed (1)</option>' in study  # the baseline's list
    assert '<option value="error">error (1)</option>' in study  # config_b's
    assert '<div class="controls" hidden>' in study  # until the script shows them


def test_transformation_ids_link_to_their_drill_down(page: str) -> None:
    study = section(page, 0)
    transformations = study.split("<h3>Transformations</h3>")[1].split("</ul>")[0]
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', transformations)
    assert [text for _, text in links] == ["st-03", "st-01"]
    drill_down = _drill_down_ids(study)
    for anchor, row_id in links:
        assert drill_down[anchor] == row_id
    (config_a_anchor, _), (config_b_anchor, _) = links
    # each links to the compared system's row, config_a's st-03 and config_b's st-01
    rows = study.split("<h4>")
    assert f'id="{config_a_anchor}"' in next(r for r in rows if r.startswith("config_a"))
    assert f'id="{config_b_anchor}"' in next(r for r in rows if r.startswith("config_b"))
    assert "<b>config_a</b> vs baseline (4 ids compared): IDK → supported (1) " in transformations
    assert "supported → unsupported (0) none" in transformations


def test_a_stored_baseline_not_compared_says_what_differs() -> None:
    """The stored baseline's line lists what it is not compared on, not only the heading
    of that list."""
    document = study_document()
    stored = document["evals"][0]["baseline"]
    stored["not_compared"] = {"words": ['words.version: stored "1", now "2"']}
    listed = section(render_html(document), 0).split("<h3>Stored baseline</h3>")[1]
    assert (
        "gates of words not compared, the baseline holds another version: "
        "words.version: stored &quot;1&quot;, now &quot;2&quot;</li>"
    ) in listed
    document["evals"][0]["baseline"] = {
        "path": stored["path"],
        "status": "not compared",
        "problem": "the baseline x.json was made with other metric settings, so it is not "
        "compared; the settings that differ:\n  tau_sim: stored 0.65, now 0.7\n"
        "  rouge_use_stemmer: stored default, now true\nrestore the settings; or ...",
    }
    listed = section(render_html(document), 0).split("<h3>Stored baseline</h3>")[1]
    assert (
        "not compared: the baseline x.json was made with other metric settings, so it is not "
        "compared; the settings that differ: tau_sim: stored 0.65, now 0.7; "
        "rouge_use_stemmer: stored default, now true</li>"
    ) in listed


def test_transformations_note_when_not_computed() -> None:
    document = study_document()
    note = "the baseline rows carry no <answerable>"
    document["evals"][2]["transformations"] = None
    document["evals"][2]["transformations_note"] = note
    study = section(render_html(document), 0)
    assert f"<b>config_b</b> vs baseline: {html.escape(note)}</li>" in study


def _details(text: str) -> list[str]:
    return re.findall(r'<details class="row".*?</details>', text, re.DOTALL)


def test_row_line_and_drill_down(page: str) -> None:
    study = section(page, 0)
    rows = tables(study)["rows num"]
    assert rows[0] == ["ID", "Status", "overlap", "f1", "tokens", "latency_ms", "abstain"]
    lines = [row for row in rows[1:] if len(row) == len(rows[0])]
    assert lines[1] == ["st-02", "passed", "0.500", "0.500", "1100", "950", "0"]
    details = _details(study)
    assert len(details) == 12
    baseline_st02 = details[1]
    assert f"<summary>{QUESTIONS[1]}</summary>" in baseline_st02
    cells = tables(baseline_st02)
    verdicts = [row[0] for row in cells["sentences"][1:]]
    assert verdicts == ["supported", "unsupported"]
    assert cells["sentences"][1][2] == "0.820"
    assert "<dt>overlap</dt><dd>0.5 of the claims supported</dd>" in baseline_st02
    idk = tables(details[2])["sentences"]  # baseline st-03 abstains
    assert idk[1][0] == "not a claim"
    assert idk[1][2:4] == ["—", "—"]  # no similarity, no context
    assert "<b>Failed</b> <span>evals/test_study.py::test_grounded</span>" in details[2]


def test_each_sentence_shows_the_context_it_was_measured_against(page: str) -> None:
    baseline_st02 = _details(section(page, 0))[1]
    sentences = tables(baseline_st02)["sentences"]
    assert sentences[0] == ["Verdict", "Sentence", "Similarity", "Cited context", "Reason"]
    assert sentences[1][1:4] == ["The answer is in the first document [1].", "0.820", f"d1 {PARIS}"]
    assert sentences[2][1:4] == ["It is also widely known.", "0.410", f"d2 {TOWER}"]
    # a document written before sentences carried their context shows what they cite
    document = study_document()
    for sentence in document["evals"][0]["rows"][1]["sentences"]:
        del sentence["context"]
    older = tables(_details(section(render_html(document), 0))[1])["sentences"]
    assert [row[3] for row in older[1:]] == ["1", "2"]


def test_breakdowns_and_all_aggregates(page: str) -> None:
    study = tables(section(page, 0))
    stages = study["tokens_by_stage num"]
    assert stages[0] == ["tokens_by_stage", "baseline", "config_a", "config_b"]
    assert stages[2] == ["generate", "900.0", "900.0", "900.0"]
    assert study["stop_reason num"][2] == ["budget", "1 (25%)", "1 (25%)", "1 (25%)"]
    aggregates = column(study["aggregates num"], "config_a")
    assert aggregates["rounds.mean"] == "1.250"
    assert aggregates["vs_baseline.tokens_mean_ratio"] == "1.10×"
    assert aggregates["f1.count"] == "4"
    assert column(study["aggregates num"], "config_b")["abstain.sum"] == "2"
    assert column(study["aggregates num"], "baseline")["latency_ms.p95"] == "1200"
    assert column(study["aggregates num"], "config_b")["faithfulness.mean"] == "—"


def test_importing_the_module_does_not_import_matplotlib() -> None:
    code = (
        "import sys, pytest_ragmetrics.reports.html\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_drill_down_shows_gold_answerability_and_the_short_answer() -> None:
    document = study_document()
    row = document["evals"][0]["rows"][0]
    row["gold"] = [["$9.99", "9.99 <b>dollars</b>"], ["monthly"]]
    row["answerable"] = False
    row["short_answer"] = {"text": "$9.99 <i>", "rule": "number"}
    details = _details(section(render_html(document), 0))
    first = details[0]
    assert (
        "<b>Gold</b> <span>$9.99 | 9.99 &lt;b&gt;dollars&lt;/b&gt; | monthly</span> "
        "(not answerable)"
    ) in first
    assert "<b>Short answer</b> <span>$9.99 &lt;i&gt;</span> " in first
    assert "(finalizer rule number)" in first
    assert "<b>Gold</b>" not in details[1]  # a row without gold shows none


def test_drill_down_says_where_a_live_output_came_from() -> None:
    document = study_document()
    rows = document["evals"][0]["rows"]
    rows[0]["live"] = {"system": "topk", "fingerprint": "0123abcd", "cached": True}
    rows[1]["live"] = {"system": "topk", "fingerprint": "0123abcd", "cached": False}
    details = _details(section(render_html(document), 0))
    assert "(fingerprint 0123abcd; output from the cache, as measured then)" in details[0]
    assert "(fingerprint 0123abcd; output called in this run)" in details[1]
    assert "Live system" not in details[2]  # a recorded row says nothing


def test_a_document_without_row_status_still_colours_errors() -> None:
    document = study_document()
    for entry in document["evals"]:
        for row in entry["rows"]:
            row.pop("status", None)
            row.pop("failed_tests", None)
    statuses = [status for _, status, *_ in ROW_BODY.findall(section(render_html(document), 0))]
    assert statuses.count("error") == 1  # config_b's st-01 has an error
    assert statuses.count("failed") == 0  # nothing says a test failed


# -- the table of a large system: problem rows and a seeded sample ------------------------


def large_document(total: int, errored: set[int], failed: set[int]) -> dict[str, Any]:
    """The study's report with its single-system eval grown to ``total`` rows; the rows at
    ``errored`` and ``failed`` ended so."""
    study = study_document()
    entry = _single_entry()
    rows = []
    for i in range(total):
        status = "error" if i in errored else "failed" if i in failed else "passed"
        rows.append(
            {
                "id": f"q{i}",
                "system": None,
                "question": f"Question {i}?",
                "answer": f"Answer {i}.",
                "metrics": {"f1": 1.0 if status == "passed" else 0.0},
                "errors": [f"rows.jsonl:{i + 1}: bad row"] if status == "error" else [],
                "evidence": {},
                "status": status,
                "failed_tests": ["evals/test_single.py::test_x"] if status == "failed" else [],
            }
        )
    entry.update(rows=rows, n=total, dataset_rows=total)
    # A gate whose message names a row that may or may not be on the page.
    entry["gates"] = [_gate("f1.mean", ">= 0.5", "passed", 0.9, 0.5)]
    study["evals"] = [*study["evals"][:3], entry]
    return study


def shown_ids(page: str) -> list[int]:
    """The ids of the rows the single-system eval's table shows, in page order."""
    table = page.split('<section id="eval-1">')[1]
    return [int(found) for found in re.findall(r"<tr class=\"line\"><td>q(\d+)</td>", table)]


def test_a_table_of_at_most_the_limit_shows_every_row_and_no_note() -> None:
    page = render_html(large_document(SHOWN_ROWS, {3}, {5}), "report.json")
    assert shown_ids(page) == list(range(SHOWN_ROWS))
    assert "Showing" not in page


def test_a_larger_table_shows_every_problem_row_and_a_seeded_sample_of_the_others() -> None:
    total, errored, failed = 5000, {10, 4000}, {7, 11, 4999}
    page = render_html(large_document(total, errored, failed), "out/report.json")
    shown = shown_ids(page)
    assert len(shown) == SHOWN_ROWS
    assert shown == sorted(shown)  # in dataset order
    assert errored | failed <= set(shown)
    others = [i for i in range(total) if i not in errored | failed]
    sample = random.Random(SAMPLE_SEED).sample(others, SHOWN_ROWS - 5)
    assert set(shown) == errored | failed | set(sample)
    assert (
        "Showing 1,000 of 5,000 rows: all 5 errored and failed rows, and a random sample "
        "of 995 of the 4,995 other rows (seed 0). Every row is in "
        '<a href="out/report.json">the JSON report</a>.'
    ) in page
    assert page == render_html(large_document(total, errored, failed), "out/report.json")


def test_problem_rows_beyond_their_share_are_cut_errored_first() -> None:
    total = 3000
    errored = set(range(2000, 2000 + 500))
    failed = set(range(0, 400))
    page = render_html(large_document(total, errored, failed))
    shown = set(shown_ids(page))
    assert errored <= shown  # every errored row, then the first failed ones
    assert set(range(SHOWN_PROBLEMS - len(errored))) <= shown
    assert not shown & set(range(SHOWN_PROBLEMS - len(errored), 400))
    assert len(shown) == SHOWN_ROWS
    assert (
        "the first 750 of the 900 errored and failed rows (errored first), and a random "
        "sample of 250 of the 2,100 other rows (seed 0). Every row is in the JSON report "
        "(--ragmetrics-json=FILE)."
    ) in page


def test_a_large_table_with_no_problem_row_says_so() -> None:
    page = render_html(large_document(1500, set(), set()))
    assert "Showing 1,000 of 1,500 rows: no row errored or failed; a random sample" in page


def test_only_the_rows_on_the_page_have_an_anchor_and_a_link_to_another_is_its_id() -> None:
    study = large_document(5000, {4000}, set())
    on_page = shown_ids(render_html(study))
    (entry,) = [e for e in model_of(study).evals if e.name == SINGLE]
    found = anchors(1, 0, entry)
    assert set(found) == {f"q{i}" for i in on_page}
    assert link("q4000", found).startswith('<a href="#row-1-0-4000">')  # errored: shown
    off = next(i for i in range(5000) if i not in on_page)
    assert link(f"q{off}", found) == f"q{off}"
