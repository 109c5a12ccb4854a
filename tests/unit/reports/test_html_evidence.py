"""The HTML report's evidence of the gates: the forest plot of the comparisons, the
gate table's Evidence column and rows of passing gates that regressed, the bars' error
bars and the aggregates' intervals, on the study document of ``test_html`` with
hand-written ``gates[].stats`` and ``intervals``.

The stats below (``evidence_document``):

* config_a: ``overlap.mean >= baseline`` improved (+0.25 [+0.1, +0.4]), passing, with no
  regressed row; ``tokens.mean <= 1.2x baseline`` a ratio that regressed (1.10x [1.05x,
  1.15x]) but passes, two of its rows breaking the rule on their own;
* config_b: ``overlap.mean >= baseline`` regressed (-0.25 [-0.4, -0.1]) and failed;
  ``f1_short.mean`` skipped, with a note instead of stats; ``tokens.mean`` unchanged
  but failed (drawn all the same: only passing unchanged comparisons are left out);
* the single-system eval: a fixed-bound gate read on the interval of its value (scale
  ``value``: not a comparison, not drawn).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from pytest_ragmetrics.gates.evidence import GateEvidence, evidence_text
from pytest_ragmetrics.reports.document import entries
from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.html.forest import (
    OTHER_DIFFERENCES,
    RATIO_PANEL,
    Comparison,
    comparisons,
    forest,
    limits,
    panel_title,
    panels,
)
from pytest_ragmetrics.reports.html.plots import bars, mean_interval

from test_html import column, section, study_document, tables

SCORES = "Change of a score (this run − baseline)"
NOTE = "f1_short.mean: no row recorded f1_short on both sides"
METHOD = "BCa bootstrap (2,000 resamples of 4 pairs)"
ADVICE = "the margin 0 is below what 4 paired rows can detect (0.31)"


def stats(
    scale: str,
    estimate: float,
    interval: tuple[float, float],
    verdict: str,
    confidence: float = 0.95,
    advice: str | None = None,
) -> dict[str, Any]:
    """A gate's ``stats`` as ``GateStats.as_dict`` writes it; the rule's bound on the
    scale is the study's: ``>= baseline`` (0), ``<= 1.2x baseline``, ``>= 0.5``."""
    return {
        "bound": {"difference": 0.0, "ratio": 1.2, "value": 0.5}[scale],
        "scale": scale,
        "estimate": estimate,
        "interval": list(interval),
        "delta": estimate if scale == "difference" else None,
        "ci": list(interval) if scale == "difference" else None,
        "confidence": confidence,
        "p_value": None if scale == "value" else 0.03,
        "method": METHOD,
        "n_pairs": None if scale == "value" else 4,
        "n": 4,
        "units": 4,
        "clustered": False,
        "mde": 0.31,
        "margin": 0.0,
        "verdict": verdict,
        "reading": "plain",
        "p_gate": None,
        "p_adjusted": None,
        "correction": "none",
        "rows_to_detect": None,
        "advice": advice,
    }


def interval(estimate: float, low: float, high: float) -> dict[str, Any]:
    """One entry of an eval's ``intervals``."""
    return {
        "estimate": estimate,
        "low": low,
        "high": high,
        "confidence": 0.95,
        "method": "BCa bootstrap (2,000 resamples of 4 rows)",
        "n": 4,
        "units": 4,
    }


def evidence_document() -> dict[str, Any]:
    """The study with the stats of the module docstring, and intervals of overlap.mean
    for every system."""
    document = study_document()
    baseline, config_a, config_b, single = document["evals"]
    overlap_a, tokens_a = config_a["gates"]
    overlap_a["stats"] = stats("difference", 0.25, (0.1, 0.4), "improved", advice=ADVICE)
    tokens_a["stats"] = stats("ratio", 1.1, (1.05, 1.15), "regressed")
    tokens_a["regressed"] = [
        {"id": "st-01", "before": 900.0, "after": 1000.0},
        {"id": "st-03", "before": 700.0, "after": 900.0},
    ]
    overlap_b, f1_short_b, tokens_b = config_b["gates"]
    overlap_b["stats"] = stats("difference", -0.25, (-0.4, -0.1), "regressed")
    f1_short_b["stats"], f1_short_b["stats_note"] = None, NOTE
    tokens_b["stats"] = stats("ratio", 1.3, (1.3, 1.3), "unchanged")
    single["gates"][0]["rule"] = ">= 0.5 @ 95%"
    single["gates"][0]["stats"] = stats("value", 0.75, (0.5, 1.0), "improved")
    for entry, (mean, low, high) in zip(
        (baseline, config_a, config_b),
        [(0.5, 0.25, 0.75), (0.75, 0.5, 1.0), (0.25, 0.0, 0.5)],
        strict=True,
    ):
        entry["intervals"] = {"overlap": {"mean": interval(mean, low, high)}}
    return document


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(evidence_document())


def _figure(text: str, figure_id: str) -> str:
    match = re.search(rf'<figure class="plot" id="{figure_id}">(.*?)</figure>', text, re.DOTALL)
    assert match, figure_id
    return match.group(1)


def test_comparisons_that_moved_one_line_each() -> None:
    systems = entries(evidence_document())
    found, unchanged = comparisons(systems[:3])
    assert unchanged == 0  # config_b's tokens.mean is unchanged, but it failed
    assert [(c.label, c.panel, c.scale, c.bound, c.verdict, c.failed) for c in found] == [
        ("overlap.mean · config_a", SCORES, "difference", 0.0, "improved", False),
        ("tokens.mean · config_a", RATIO_PANEL, "ratio", 1.2, "regressed", False),
        ("overlap.mean · config_b", SCORES, "difference", 0.0, "regressed", True),
        ("tokens.mean · config_b", RATIO_PANEL, "ratio", 1.2, "unchanged", True),
    ]
    assert found[1] == Comparison(
        "tokens.mean · config_a",
        RATIO_PANEL,
        "ratio",
        1.1,
        1.05,
        1.15,
        1.2,
        "regressed",
        False,
        0.95,
    )
    # differences first, one panel per kind of number, then the ratios
    assert [(title, len(rows)) for title, rows in panels(found)] == [(SCORES, 2), (RATIO_PANEL, 2)]
    assert comparisons(systems[3:]) == ([], 0)  # a value read on its interval: no comparison
    assert panel_title("difference", "wrong_on_answerable.sum").startswith("Change of a count")
    assert panel_title("difference", "trust_score") == OTHER_DIFFERENCES
    assert limits(found[:1], 0.0) == pytest.approx((-0.032, 0.432))  # 0 to 0.4, 8% more


def test_the_forest_plot_shows_the_comparisons(page: str) -> None:
    figure = _figure(section(page, 0), "forest-0")
    assert figure.startswith("<svg")
    caption = figure.split("<figcaption>")[1]
    assert caption.startswith("Comparisons (4): the point is the paired change")
    assert "the line the 95% confidence interval of that change" in caption
    assert "dashed: the rule's bound" in caption
    assert "unchanged are not drawn" not in caption  # the unchanged one failed: drawn
    assert "stroke-dasharray" in figure  # the bounds
    assert "#a40e26" in figure  # the failed gate's label
    # placed with the gates, before the other plots
    study = section(page, 0)
    assert study.index('id="forest-0"') < study.index("<h3>Plots</h3>")
    assert "forest-1" not in page  # the single eval compares nothing


def test_no_forest_plot_when_nothing_moved_or_nothing_compares() -> None:
    document = evidence_document()
    for entry in document["evals"][:3]:
        for gate in entry["gates"]:
            if gate.get("stats"):
                gate["stats"]["verdict"], gate["status"] = "unchanged", "passed"
    assert forest(0, entries(document)[:3]) == (
        '<p class="note">Comparisons: every paired row of the 4 comparison(s) is unchanged; '
        "nothing to draw.</p>"
    )
    assert forest(0, entries(study_document())[:3]) == ""  # no stats at all
    assert forest(1, entries(document)[3:]) == ""  # a value, not a comparison


def test_a_failed_gate_stands_out_and_levels_show_when_they_differ() -> None:
    document = evidence_document()
    passed = forest(0, entries(document)[:2])  # config_a: nothing failed
    assert "#a40e26" not in passed  # no failed label
    assert "#ffebe9" not in passed  # no band, nor its legend entry
    document["evals"][1]["gates"][1]["stats"]["confidence"] = 0.9
    levels = forest(0, entries(document)[:2])
    assert "the gate's own (in its label) confidence interval" in levels


def test_the_gate_table_shows_the_evidence(page: str) -> None:
    gates = tables(section(page, 0))["gates"]
    assert gates[0] == [
        "Status",
        "System",
        "Gate",
        "Rule",
        "Value",
        "Bound",
        "Baseline",
        "Evidence",
        "Message",
    ]
    evidence = {(row[1], row[2]): row[7] for row in gates[1:]}
    document = evidence_document()
    overlap_b = document["evals"][2]["gates"][0]
    written = GateEvidence.from_dict(overlap_b["stats"])
    assert evidence[("config_b", "overlap.mean")] == evidence_text(written) + METHOD
    assert evidence[("config_b", "overlap.mean")].startswith(
        "-0.25 [95% CI -0.4, -0.1] · p 0.03 · 4 pairs · MDE 0.31 · regressed"
    )
    assert evidence[("config_b", "f1_short.mean")] == NOTE
    assert evidence[("config_a", "overlap.mean")].endswith(f"Advice: {ADVICE}")
    assert evidence[("config_a", "tokens.mean")].startswith("1.1x [95% CI 1.05x, 1.15x]")
    single = tables(section(page, 1))["gates"]
    assert single[1][7].startswith("0.75 [95% CI 0.5, 1]")  # a value's own interval


def test_a_passing_gate_with_regressed_rows_shows_them_first(page: str) -> None:
    study = section(page, 0)
    gates = tables(study)["gates"]
    order = [(row[0], row[1], row[2]) for row in gates[1:]]
    assert order[3:] == [  # after the two failed and the skipped one
        ("passed", "config_a", "tokens.mean"),  # its rows regressed
        ("passed", "config_a", "overlap.mean"),
    ]
    message = gates[4][8]
    assert message.endswith(
        "passes, but 2 paired row(s) break the rule on their own: st-01 900 → 1000, st-03 700 → 900"
    )
    (row,) = [row for row in study.split("<tr>") if "passes, but" in row]
    linked = re.findall(r'<a href="#([^"]+)">(st-0\d)</a>', row)
    assert [row_id for _, row_id in linked] == ["st-01", "st-03"]
    for anchor, _ in linked:
        assert anchor.startswith("row-0-1-")  # config_a's rows
        assert f'id="{anchor}"' in study


def test_bars_have_error_bars_when_the_eval_has_intervals() -> None:
    systems = entries(evidence_document())[:3]
    assert mean_interval(systems[1], "overlap") == (0.5, 1.0)
    assert mean_interval(systems[1], "f1") is None
    with_intervals = bars(0, systems)
    caption = "Whiskers: the 95% confidence interval of the mean over the system's rows."
    assert caption in with_intervals
    without = bars(0, [replace(system, intervals=None) for system in systems])
    assert "Whiskers" not in without
    # the whiskers are three more paths (one per system) with their caps
    assert with_intervals.count("<path") > without.count("<path")


def test_aggregates_show_their_interval(page: str) -> None:
    study = section(page, 0)
    aggregates = tables(study)["aggregates num"]
    assert column(aggregates, "config_a")["overlap.mean"] == "0.750 (0.500–1.000)"
    assert column(aggregates, "config_b")["overlap.mean"] == "0.250 (0.000–0.500)"
    assert column(aggregates, "config_a")["overlap.p50"] == "0.750"  # no interval drawn
    assert column(aggregates, "config_a")["f1.mean"] == "0.625"
    note = "In brackets: the 95% confidence interval of the statistic over this run's rows."
    assert note in study
    assert "In brackets" not in section(page, 1)  # the single eval has no intervals


def test_the_page_with_evidence_is_deterministic_with_unique_ids(page: str) -> None:
    assert render_html(evidence_document()) == page
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert page.lower().count("<script") == 1
