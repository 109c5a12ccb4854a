"""The HTML report's trends: each gate of this run over the recorded runs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any

import pytest

from pytest_ragmetrics.reports.document import model_of
from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.html.trends import (
    TrendPoint,
    gate_trend,
    run_label,
    tick_positions,
    trends_section,
)

SVG = "{http://www.w3.org/2000/svg}"
LABEL = "evals/test_a.py"


def _gate(name: str, status: str, value: float | None, bound: float | None) -> dict[str, Any]:
    rule = ">= 0.5" if name == "f1.mean" else "<= 1.2x baseline"
    return {"name": name, "rule": rule, "status": status, "value": value, "bound": bound}


def _run(time: str, commit: str | None, gates: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "time": time,
        "commit": commit,
        "dirty": False if commit else None,
        "plugin_version": "9.9",
        "evals": [{"label": LABEL, "name": LABEL, "gates": gates}],
    }


# Three runs: f1.mean against a fixed bound (0.5), tokens.mean against a bound that moves
# with the baseline (1.2 x 200, then 1.2 x 250, 1.2 x 250); the second run fails f1 and the
# third has no tokens value (the gate was skipped).
RUNS = [
    _run(
        "2026-11-20T09:05:00+00:00",
        "aaaaaaa1111",
        [_gate("f1.mean", "passed", 0.75, 0.5), _gate("tokens.mean", "passed", 230.0, 240.0)],
    ),
    _run(
        "2026-11-21T10:15:00+00:00",
        None,
        [_gate("f1.mean", "failed", 0.25, 0.5), _gate("tokens.mean", "passed", 290.0, 300.0)],
    ),
    _run(
        "2026-11-22T11:25:00+00:00",
        "ccccccc3333",
        [_gate("f1.mean", "passed", 0.5, 0.5), _gate("tokens.mean", "skipped", None, None)],
    ),
]


def _document(runs: list[dict[str, Any]], appended: bool = True) -> dict[str, Any]:
    entry = {
        "name": LABEL,
        "label": LABEL,
        "n": 4,
        "gates": [
            {"name": "f1.mean", "rule": ">= 0.5", "status": "passed"},
            {"name": "tokens.mean", "rule": "<= x", "status": "passed"},
        ],
    }
    history = {
        "path": "history/history.jsonl",
        "recorded": len(runs),
        "appended": appended,
        "note": None if appended else "no eval ran",
        "runs": runs,
    }
    return {"schema_version": 1, "plugin_version": "9.9", "evals": [entry], "history": history}


def trend_svgs(page: str) -> dict[str, ElementTree.Element]:
    """Each trend figure's SVG, parsed, by its figure id."""
    found = re.findall(r'<figure class="plot" id="(trend-[^"]+)">(<svg.*?</svg>)', page, re.S)
    return {figure_id: ElementTree.fromstring(svg) for figure_id, svg in found}


def markers(svg: ElementTree.Element, group_id: str) -> list[tuple[float, float]]:
    """The (x, y) of every marker drawn in a line's group (SVG y grows downwards)."""
    group = svg.find(f".//{SVG}g[@id='{group_id}']")
    assert group is not None, f"no group {group_id}"
    return [
        (float(use.get("x", "nan")), float(use.get("y", "nan"))) for use in group.iter(f"{SVG}use")
    ]


def test_run_labels_give_the_time_and_the_short_commit() -> None:
    assert run_label(RUNS[0]) == "11-20 09:05\naaaaaaa"
    assert run_label(RUNS[1]) == "11-21 10:15"
    assert run_label({**RUNS[2], "dirty": True}) == "11-22 11:25\nccccccc*"


def test_tick_positions_keep_the_first_and_the_last() -> None:
    assert tick_positions(3) == [0, 1, 2]
    assert tick_positions(8) == list(range(8))
    assert tick_positions(15) == [0, 2, 4, 6, 8, 10, 12, 14]  # round(i * 14 / 7)
    assert tick_positions(0) == []


def test_a_gate_trend_follows_the_runs_that_had_it() -> None:
    runs = [RUNS[0], _run("2026-11-21T00:00:00+00:00", None, []), RUNS[2]]
    assert gate_trend(runs, LABEL, "tokens.mean") == [
        TrendPoint(0, 230.0, 240.0, "passed"),
        TrendPoint(2, None, None, "skipped"),
    ]
    assert gate_trend(runs, "evals/other.py", "f1.mean") == []


def test_no_history_no_section() -> None:
    document = _document(RUNS)
    del document["history"]
    assert trends_section(model_of(document)) == ""
    page = render_html(document)
    assert 'id="trends"' not in page
    assert 'href="#trends"' not in page


def test_one_run_gives_a_note_instead_of_a_plot() -> None:
    section = trends_section(model_of(_document(RUNS[:1])))
    assert "Trends need two recorded runs" in section
    assert "<svg" not in section
    assert "1 run(s) recorded in history/history.jsonl" in section


def test_each_gate_is_drawn_over_the_runs_with_its_bound() -> None:
    page = render_html(_document(RUNS))
    assert '<li><a href="#trends">Trends</a>' in page
    svgs = trend_svgs(page)
    assert set(svgs) == {"trend-0-0", "trend-0-1"}

    f1 = svgs["trend-0-0"]
    values = markers(f1, "trend-0-0-values")
    assert len(values) == 3
    xs, ys = [x for x, _ in values], [y for _, y in values]
    assert xs == sorted(xs)  # one run after the other
    assert ys[1] > ys[2] > ys[0]  # 0.25 is lowest on the page, then 0.5, then 0.75
    assert markers(f1, "trend-0-0-failed") == [values[1]]  # the second run, in red
    # A fixed bound is one horizontal line through the value 0.5 (the third run's value).
    bound = f1.find(f".//{SVG}g[@id='trend-0-0-bound']/{SVG}path")
    assert bound is not None
    coordinates = [float(n) for n in re.findall(r"[-\d.]+", bound.get("d", ""))]
    assert coordinates[1] == coordinates[3] == pytest.approx(ys[2], abs=0.01)

    tokens = svgs["trend-0-1"]
    assert len(markers(tokens, "trend-0-1-values")) == 2  # the skipped run has no value
    assert tokens.find(f".//{SVG}g[@id='trend-0-1-failed']") is None
    steps = tokens.find(f".//{SVG}g[@id='trend-0-1-bound']/{SVG}path")
    assert steps is not None  # the bound moved with the baseline: drawn per run, in steps
    heights = {round(float(y), 3) for y in re.findall(r"[-\d.]+ ([-\d.]+)", steps.get("d", ""))}
    assert len(heights) == 2  # 240, then 300


def test_captions_and_numbers_say_what_is_drawn_and_what_is_not() -> None:
    section = trends_section(model_of(_document(RUNS)))
    assert "value in 3 run(s), 1 failed (red)" in section
    assert "value in 2 run(s), 0 failed (red); 1 run(s) without a value" in section
    numbers = section[section.index("<details><summary>Numbers (3 runs)") :]
    assert "<td>0.25 (failed)</td>" in numbers
    assert "<td>— (skipped)</td>" in numbers
    assert "<td>aaaaaaa</td>" in numbers


def test_a_gate_with_one_value_so_far_gets_a_note() -> None:
    runs = [RUNS[0], _run("2026-11-21T00:00:00+00:00", None, [RUNS[0]["evals"][0]["gates"][0]])]
    section = trends_section(model_of(_document(runs)))
    assert "no trend yet, 1 recorded run(s) have a value for this gate" in section
    assert 'id="trend-0-0"' in section


def test_a_run_not_recorded_is_said_so() -> None:
    section = trends_section(model_of(_document(RUNS, appended=False)))
    assert "this run was not recorded: no eval ran" in section


def test_only_the_last_runs_are_drawn_when_the_history_is_longer() -> None:
    document = _document(RUNS)
    document["history"]["recorded"] = 120
    assert "120 run(s) recorded in history/history.jsonl; the last 3 are drawn" in (
        trends_section(model_of(document))
    )


def test_text_from_the_history_is_escaped() -> None:
    runs = [dict(run) for run in RUNS]
    runs[0]["commit"] = "<script>"
    document = _document(runs)
    document["evals"][0]["label"] = "<b>x</b>"
    for run in runs:
        run["evals"] = [{**run["evals"][0], "label": "<b>x</b>"}]
    section = trends_section(model_of(document))
    assert "<script" not in section
    assert "<b>x</b>" not in section
    assert "&lt;b&gt;x&lt;/b&gt;" in section


def test_the_same_history_draws_the_same_bytes() -> None:
    assert trends_section(model_of(_document(RUNS))) == trends_section(model_of(_document(RUNS)))
