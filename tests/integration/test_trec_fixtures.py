"""trec_eval's measures as fixtures, with ``[settings.retrieval]``, through pytest.

The reference is pytrec_eval (trec_eval 9.x compiled in): the same rows as its qrels and
run, each per-row value and each mean equal to 1e-9, ``gm_map.gmean`` equal to trec_eval's
geometric summary, and the settings equal to the trec_eval options they name (``-l`` as
pytrec_eval's ``relevance_level``; ``-M`` as the run cut to its first N documents, which is
what trec_eval's -M does). The options pytrec_eval cannot express (nDCG gains) are checked
against a hand computation.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import pytrec_eval
from helpers.project import Project, jsonl
from test_trec_measures import nan_free

from pytest_ragmetrics.metrics.retrieval import RECALL_LEVELS

TOLERANCE = 1e-9
# Our recorded name -> pytrec_eval's per-query key.
TREC_KEYS = {
    "map": "map",
    "map@5": "map_cut_5",
    "gm_map": "map",  # per row, gm_map records the average precision
    "rprec": "Rprec",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "ndcg": "ndcg",
    **{
        f"iprec_at_recall@{level}": f"iprec_at_recall_{float(level):.2f}" for level in RECALL_LEVELS
    },
}
TREC_MEASURES = {"map", "map_cut.5", "gm_map", "Rprec", "bpref", "num_ret", "num_rel"}
TREC_MEASURES |= {"num_rel_ret", "ndcg", "iprec_at_recall"}

EVAL = """
import pytest

from pytest_ragmetrics.metrics.retrieval import RECALL_LEVELS

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_trec(row, map, gm_map, rprec, bpref, num_ret, num_rel, num_rel_ret, iprec_at_recall, ndcg):
    assert map(row) == map(row, k=None)
    map(row, k=5)
    gm_map(row)
    rprec(row)
    bpref(row)
    num_ret(row)
    num_rel(row)
    num_rel_ret(row)
    ndcg(row)
    for level in RECALL_LEVELS:
        iprec_at_recall(row, level=float(level))
"""


def _rows(seed: int) -> list[dict[str, Any]]:
    """Graded judgements 0..3 (some rows with no relevant document, every row judged),
    rankings with unjudged documents, some empty."""
    rng = random.Random(seed)
    pool = [f"d{i:02d}" for i in range(30)]
    rows = []
    for q in range(25):
        judged = rng.sample(pool, rng.randint(1, 12))
        retrieved = [] if rng.random() < 0.1 else rng.sample(pool, rng.randint(1, 20))
        relevant = {doc: rng.choice([0, 0, 1, 1, 2, 3]) for doc in judged}
        rows.append({"id": f"q{q}", "retrieved": retrieved, "relevant": relevant})
    return rows


def _reference(
    rows: list[dict[str, Any]], relevance_level: int = 1, cutoff: int | None = None
) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values; a ranked list becomes descending scores, and -M is
    the list cut to its first ``cutoff`` documents."""
    qrels = {row["id"]: row["relevant"] for row in rows}
    run = {
        row["id"]: {doc: float(100 - i) for i, doc in enumerate(row["retrieved"][:cutoff])}
        for row in rows
    }
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, TREC_MEASURES, relevance_level=relevance_level
    )
    # The documented difference: for an empty ranking trec_eval's iprec_at_recall at a
    # level asking for no relevant document is 0 / 0; ours is 0.
    return nan_free(evaluator.evaluate(run))


def _project(project: Project, rows: list[dict[str, Any]], settings: str = "") -> Project:
    project.write("data/rows.jsonl", jsonl(rows))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", settings)
    return project


def _values(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    (evaluation,) = report["evals"]
    return {row["id"]: row["metrics"] for row in evaluation["rows"]}


@pytest.mark.parametrize(
    ("settings", "relevance_level", "cutoff"),
    [
        ("", 1, None),
        ("[settings.retrieval]\nrelevance_level = 2\n", 2, None),
        ("[settings.retrieval]\ncutoff = 4\n", 1, 4),
        ('[settings.retrieval]\nrelevance_level = 3\ncutoff = 6\nties = "double"\n', 3, 6),
    ],
    ids=["defaults", "level-2", "cutoff-4", "level-3-cutoff-6-double"],
)
def test_every_row_and_mean_equals_trec_eval(
    project: Project, settings: str, relevance_level: int, cutoff: int | None
) -> None:
    rows = _rows(seed=relevance_level * 10 + (cutoff or 0))
    result, report = _project(project, rows, settings).run_json()
    result.assert_outcomes(passed=len(rows))
    reference = _reference(rows, relevance_level, cutoff)
    ours = _values(report)
    for row in rows:
        for name, key in TREC_KEYS.items():
            expected = reference[row["id"]][key]
            assert ours[row["id"]][name] == pytest.approx(expected, abs=TOLERANCE), (row, name)
    metrics = report["evals"][0]["metrics"]
    for name, key in TREC_KEYS.items():
        mean = math.fsum(reference[qid][key] for qid in reference) / len(reference)
        assert metrics[name]["mean"] == pytest.approx(mean, abs=TOLERANCE), name
    # trec_eval's per-query gm_map is log(max(AP, 0.00001)); its summary is exp of the mean.
    logs = [reference[qid]["gm_map"] for qid in reference]
    assert metrics["gm_map"]["gmean"] == pytest.approx(math.exp(math.fsum(logs) / len(logs)))
    sums = {key: math.fsum(reference[qid][key] for qid in reference) for key in ("num_rel",)}
    assert metrics["num_rel"]["sum"] == sums["num_rel"]  # trec_eval's summary line


def test_gm_map_gmean_by_hand_and_gated(project: Project) -> None:
    # a: relevant d1, d2; retrieved d1, x, d2 -> AP (1/1 + 2/3) / 2 = 5/6
    # b: relevant d5, retrieved nothing -> AP 0, floored at 0.00001
    # gm_map.gmean = sqrt(5/6 * 0.00001) = 0.0028867..; map.mean = 5/12
    rows = [
        {"id": "a", "retrieved": ["d1", "x", "d2"], "relevant": ["d1", "d2"]},
        {"id": "b", "retrieved": [], "relevant": ["d5"]},
    ]
    gates = '[gates]\n"gm_map.gmean" = ">= 0.0029"\n"map.mean" = ">= 0.41"\n'
    proj = _project(project, rows, gates)
    proj.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        "def test_x(row, map, gm_map):\n    map(row); gm_map(row)\n",
    )
    result, report = proj.run_json()
    metrics = report["evals"][0]["metrics"]
    assert metrics["gm_map"]["gmean"] == pytest.approx(math.sqrt(5 / 6 * 0.00001), rel=1e-12)
    assert metrics["map"]["mean"] == pytest.approx(5 / 12, rel=1e-12)
    assert metrics["gm_map"]["mean"] == metrics["map"]["mean"]
    result.assert_outcomes(passed=2 + 1, failed=1)  # 0.002887 < 0.0029 fails its gate
    result.stdout.fnmatch_lines(["*FAILED*gm_map.gmean*"])


def test_gains_setting_maps_grades_for_ndcg(project: Project) -> None:
    # relevant a (grade 1, gain 1 as not listed), b (grade 2, gain 5); retrieved b, x, a.
    # DCG = 5/log2(2) + 1/log2(4) = 5.5; ideal b, a: 5 + 1/log2(3) = 5.63093; ndcg 0.97674
    # ndcg_exp keeps 2^grade - 1: DCG 3 + 1/2 = 3.5, ideal 3 + 1/log2(3); 0.95168
    rows = [{"id": "r", "retrieved": ["b", "x", "a"], "relevant": {"a": 1, "b": 2}}]
    settings = '[settings.retrieval]\ngains = { "2" = 5 }\n'
    proj = _project(project, rows, settings)
    proj.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        "def test_x(row, ndcg):\n    ndcg(row); ndcg(row, gain='exponential')\n",
    )
    result, report = proj.run_json()
    result.assert_outcomes(passed=1)
    values = _values(report)["r"]
    assert values["ndcg"] == pytest.approx(5.5 / (5 + 1 / math.log2(3)), abs=1e-12)
    assert values["ndcg_exp"] == pytest.approx(3.5 / (3 + 1 / math.log2(3)), abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("iprec_at_recall(row)", "*iprec_at_recall(row, level=...) needs a recall level*"),
        ("iprec_at_recall(row, level=0.55)", "*0.55 is not a level; use one of 0.0, 0.1,*"),
        ("iprec_at_recall(row, level='0.5')", "*'0.5' is not a number*"),
        ("iprec_at_recall(row, k=5)", "*iprec_at_recall(row, ...) takes level; got k*"),
        ("rprec(row, k=5)", "*rprec(row, ...) takes no options; got k*"),
        ("map(row, k=0)", "*k must be an integer >= 1, got 0*"),
    ],
)
def test_fixture_options_are_checked(project: Project, call: str, message: str) -> None:
    rows = [{"id": "r", "retrieved": ["a"], "relevant": ["a"]}]
    proj = _project(project, rows)
    proj.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        f"def test_x(row, map, rprec, iprec_at_recall):\n    {call}\n",
    )
    result = proj.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])
