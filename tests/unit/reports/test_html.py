"""The HTML report: content, escaping, determinism, links, on a hand-built JSON document.

``study_document()`` is a realistic report of a three-system comparison (baseline,
config_a, config_b, four questions each) plus a second eval whose rows carry no system.
Every expected value below is read off the rows in ``SYSTEM_ROWS`` by hand.
"""

from __future__ import annotations

import copy
import html
import re
import statistics
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest

from pytest_ragmetrics.reports.html import CSP, pareto_optimal, render_html

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
            }
        ]
    first = {
        "sentence": "The answer is in the first document [1].",
        "citations": ["1"],
        "similarity": 0.82,
        "supported": True,
        "claim": True,
        "reason": "similarity 0.82 >= 0.65",
    }
    second = {
        "sentence": "It is also widely known.",
        "citations": ["2"],
        "similarity": 0.41,
        "supported": False,
        "claim": True,
        "reason": "similarity 0.41 < 0.65",
    }
    return [first] if overlap == 1.0 else [first, second]


def _row(system: str, index: int, values: tuple[float, float, int, int, bool]) -> dict[str, Any]:
    overlap, f1, tokens, latency, abstained = values
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
        "errors": [],
        "evidence": {"overlap": f"{overlap:g} of the claims supported"},
        "sentences": _sentences(overlap, abstained),
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
    """The text of every table cell, per table class: {class: [[cell, ...], ...]}."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._current: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._current = self.tables.setdefault(dict(attrs).get("class") or "", [])
        elif tag == "tr" and self._current is not None:
            self._current.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._current is not None:
            self._current[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._current = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


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


def test_page_header_and_csp(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert "<h1>pytest-ragmetrics: " in page
    assert "2 gate(s) failed" in page.split("</h1>")[0]  # config_b's two failures
    assert "tau_sim 0.65 · citations: auto" in page
    study, single = section(page, 0), section(page, 1)
    assert "2 gate(s) failed" in study.split("</h2>")[0]
    assert "all gates hold" in single.split("</h2>")[0]


def test_no_javascript_anywhere(page: str, planted: tuple[str, str]) -> None:
    payload, planted_page = planted
    for text in (page, planted_page.replace(html.escape(payload, quote=True), "")):
        assert "<script" not in text.lower()
        assert not re.search(r"\son\w+\s*=", text)  # no event handler attribute
        assert "javascript:" not in text.lower()


def test_document_text_is_escaped(planted: tuple[str, str]) -> None:
    payload, planted_page = planted
    assert payload not in planted_page
    escaped = html.escape(payload, quote=True)
    for text in ("Question ", "Answer ", "Sentence ", "Evidence ", "Error ", "st-03", "Gate "):
        assert f"{text}{escaped}" in planted_page, text
    assert f"<th>{escaped}</th>" in planted_page  # the metric name, in the row's metrics


def test_a_system_name_cannot_break_out_of_the_plot() -> None:
    name = "</svg><script>alert(1)</script>$x$"
    page = render_html(rename_system(study_document(), "config_b", name))
    study = section(page, 0)
    assert "<script" not in page.lower()
    assert study.count("<svg") == study.count("</svg>") == 2
    assert "<!--" not in page  # matplotlib's text comments are dropped
    assert html.escape(name, quote=True) in study


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
    assert column(main, "Faithfulness")["config_b vs baseline"] == "—"
    assert column(main, "F1 short")["config_b vs baseline"] == "—"
    assert column(main, "Wrong on answerable (sum)")["baseline"] == "1"
    assert column(main, "IDK on answerable (sum)")["config_b vs baseline"] == "2"
    assert column(main, "Rounds")["config_a vs baseline"] == "1.25"  # rounds 1, 2, 1, 1
    assert column(main, "Rounds > 1")["baseline"] == "—"  # no multi_round recorded
    assert column(main, "Tokens mean ×")["config_a vs baseline"] == "1.10×"
    assert column(main, "Δ Overlap")["config_b vs baseline"] == "-0.250"
    assert column(main, "Δ F1")["config_a vs baseline"] == "+0.250"
    assert column(main, "Δ F1 short")["config_b vs baseline"] == "—"
    assert column(main, "Tokens mean ×")["baseline"] == "—"  # the reference itself


def test_single_system_eval_has_no_comparison_columns(page: str) -> None:
    main = tables(section(page, 1))["main num"]
    assert "Tokens mean ×" not in main[0]
    assert main[1][:3] == ["all rows", "2", "0"]
    assert column(main, "Overlap")["all rows"] == "—"


def test_gates_failed_first_with_first_message_line(page: str) -> None:
    gates = tables(section(page, 0))["gates"]
    assert gates[0] == ["Status", "System", "Gate", "Rule", "Value", "Bound", "Baseline", "Message"]
    assert [row[0] for row in gates[1:]] == ["failed", "failed", "skipped", "passed", "passed"]
    assert [row[1] for row in gates[1:3]] == ["config_b", "config_b"]
    assert gates[1][2:] == ["overlap.mean", ">= baseline", "0.25", "0.5", "0.5", gates[1][7]]
    # the first line shows; the whole message of a gate that did not pass is collapsed
    assert gates[1][7].startswith("overlap.mean = 0.25, rule >= baseline")
    assert (
        "<details><summary>details</summary><pre>overlap.mean = 0.25, rule &gt;= baseline\n"
        "second line of the message</pre></details>"
    ) in page
    assert gates[3][5] == "—"  # the skipped gate has no bound


def test_both_plots_are_inline_svg(page: str) -> None:
    study = section(page, 0)
    for figure_id in ("pareto-0", "bars-0"):
        match = re.search(
            rf'<figure class="plot" id="{figure_id}">(.*?)</figure>', study, re.DOTALL
        )
        assert match, figure_id
        assert match.group(1).startswith("<svg")
        assert "<figcaption>" in match.group(1)
    assert "<?xml" not in page
    assert "<!DOCTYPE svg" not in page
    assert "Pareto-optimal (higher overlap, fewer tokens): baseline, config_a." in study


def test_ids_are_unique(page: str) -> None:
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_skipped_plots_say_why(page: str) -> None:
    single = section(page, 1)
    assert "<svg" not in single
    assert '<p class="note">Pareto plot skipped: one system only.</p>' in single
    assert "Metric bars skipped: one system only" in single
    document = study_document()
    for entry in document["evals"][1:3]:
        del entry["metrics"]["overlap"]
    study = section(render_html(document), 0)
    skipped = "Pareto plot skipped: fewer than two systems have overlap.mean and tokens.mean."
    assert skipped in study
    assert 'id="bars-0"' in study


def test_render_is_deterministic() -> None:
    assert render_html(study_document()) == render_html(study_document())


def _drill_down_ids(page: str) -> dict[str, str]:
    """Anchor of each drill-down -> its summary line."""
    found = re.findall(r'<details class="row" id="([^"]+)"><summary>(.*?)</summary>', page)
    return dict(found)


def test_transformation_ids_link_to_their_drill_down(page: str) -> None:
    study = section(page, 0)
    transformations = study.split("<h3>Transformations</h3>")[1].split("</ul>")[0]
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', transformations)
    assert [text for _, text in links] == ["st-03", "st-01"]
    drill_down = _drill_down_ids(study)
    for anchor, row_id in links:
        assert drill_down[anchor].startswith(row_id + " · ")
    (config_a_anchor, _), (config_b_anchor, _) = links
    # each links to the compared system's row, config_a's st-03 and config_b's st-01
    rows = study.split("<h4>")
    assert f'id="{config_a_anchor}"' in next(r for r in rows if r.startswith("config_a"))
    assert f'id="{config_b_anchor}"' in next(r for r in rows if r.startswith("config_b"))
    assert "<b>config_a</b> vs baseline (4 ids compared): IDK → supported (1) " in transformations
    assert "regressions (0) none" in transformations


def test_transformations_note_when_not_computed() -> None:
    document = study_document()
    note = "the baseline rows carry no <answerable>"
    document["evals"][2]["transformations"] = None
    document["evals"][2]["transformations_note"] = note
    study = section(render_html(document), 0)
    assert f"<b>config_b</b> vs baseline: {html.escape(note)}</li>" in study


def test_drill_down_shows_sentences_metrics_and_evidence(page: str) -> None:
    study = section(page, 0)
    details = re.findall(r'<details class="row".*?</details>', study, re.DOTALL)
    assert len(details) == 12  # 3 systems x 4 rows
    baseline_st02 = details[1]
    assert "st-02 · overlap 0.5 · f1 0.5 · tokens 1100" in baseline_st02
    assert QUESTIONS[1] in baseline_st02
    cells = tables(baseline_st02)
    verdicts = [row[0] for row in cells["sentences"][1:]]
    assert verdicts == ["supported", "unsupported"]
    assert cells["sentences"][1][2:4] == ["0.82", "1"]
    metrics = cells["row-metrics"]
    assert dict(zip(metrics[0], metrics[1], strict=True))["latency_ms"] == "950"
    assert "<dt>overlap</dt><dd>0.5 of the claims supported</dd>" in baseline_st02
    idk = tables(details[2])["sentences"]  # baseline st-03 abstains
    assert idk[1][0] == "not a claim"
    assert idk[1][2] == "—"  # no similarity


def test_breakdowns_and_all_aggregates(page: str) -> None:
    study = tables(section(page, 0))
    stages = study["tokens_by_stage num"]
    assert stages[0] == ["tokens_by_stage", "baseline", "config_a", "config_b"]
    assert stages[2] == ["generate", "900.0", "900.0", "900.0"]
    assert study["stop_reason num"][2] == ["budget", "1 (25%)", "1 (25%)", "1 (25%)"]
    aggregates = column(study["aggregates num"], "config_a")
    assert aggregates["rounds.mean"] == "1.25"
    assert aggregates["vs_baseline.tokens_mean_ratio"] == "1.1"
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
    details = re.findall(
        r'<details class="row".*?</details>', section(render_html(document), 0), re.DOTALL
    )
    first = details[0]
    assert "<b>Gold</b> $9.99 | 9.99 &lt;b&gt;dollars&lt;/b&gt; | monthly (not answerable)" in first
    assert "<b>Short answer</b> $9.99 &lt;i&gt; " in first
    assert "(finalizer rule number)" in first
    assert "<b>Gold</b>" not in details[1]  # a row without gold shows none


def test_drill_down_says_where_a_live_output_came_from() -> None:
    document = study_document()
    rows = document["evals"][0]["rows"]
    rows[0]["live"] = {"system": "topk", "fingerprint": "0123abcd", "cached": True}
    rows[1]["live"] = {"system": "topk", "fingerprint": "0123abcd", "cached": False}
    details = re.findall(
        r'<details class="row".*?</details>', section(render_html(document), 0), re.DOTALL
    )
    assert "(fingerprint 0123abcd; output from the cache, as measured then)" in details[0]
    assert "(fingerprint 0123abcd; output called in this run)" in details[1]
    assert "Live system" not in details[2]  # a recorded row says nothing
