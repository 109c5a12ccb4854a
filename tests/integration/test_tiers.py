"""Retrieval, text, repeat and judge-pipeline fixtures, and dataset-level evals, through
pytest in every mode (no xdist, -n 0, -n 2).

Two rows, computed by hand:

    a  retrieved d1, d2, d3; relevant d2 (grade 1), d9 (grade 2, not retrieved)
         hit_rate@1 0; mrr 1/2; recall@2 1/2; precision@2 1/2
         ndcg@3: DCG 1/log2(3) = 0.63093, IDCG 2 + 1/log2(3) = 2.63093 -> 0.23981
         ndcg_exp: DCG (2^1-1)/log2(3) = 0.63093, IDCG 3 + 1/log2(3) = 3.63093 -> 0.17377
         repeats of the retrieval: top 1 d1 (equal), d2 (differs) -> 1/2
         repeats of the answer: one equal, one not -> 1/2; show true, gold true: TP
    b  retrieved nothing; relevant d5 -> every retrieval metric 0
         one retrieval repeat, also empty -> 1; one answer repeat, equal -> 1
         show true, gold false: FP

    means: mrr 0.25, recall@2 0.25, precision@2 0.25, ndcg@3 0.11991, ndcg_exp 0.08688,
    retrieval_consistency@1 0.75, response_exact_match_rate 0.75
    judge_pipeline: TP 1, FP 1 -> accuracy 0.5, precision 0.5, recall 1, f1 2/3
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import sacrebleu
from helpers.project import IN_PROCESS, Project, jsonl
from rouge_score import rouge_scorer

ROWS: list[dict[str, Any]] = [
    {
        "id": "a",
        "question": "Where is the cat?",
        "answer": "the cat sat on the mat",
        "gold": "the cat sat on the mat today",
        "retrieved": ["d1", "d2", "d3"],
        "relevant": {"d2": 1, "d9": 2},
        "retrieved_repeats": [["d1", "d2", "d3"], ["d2", "d1", "d3"]],
        "repeats": ["the cat sat on the mat", "a cat sat"],
        "show": True,
        "show_gold": True,
    },
    {
        "id": "b",
        "question": "Do dogs bark?",
        "answer": "dogs bark loudly at night",
        "gold": ["cats meow", "dogs bark at night"],
        "retrieved": [],
        "relevant": ["d5"],
        "retrieved_repeats": [[]],
        "repeats": ["dogs bark loudly at night"],
        "show": True,
        "show_gold": False,
    },
]

TIERS_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_retrieval(row, hit_rate, mrr, recall, precision, ndcg, retrieval_consistency):
    hit_rate(row, k=1)
    mrr(row)
    recall(row, k=2)
    precision(row, k=2)
    ndcg(row, k=3)
    ndcg(row, gain="exponential")
    retrieval_consistency(row, k=1)


def test_text(row, rouge1, rougeL, rougeLsum, bleu, response_exact_match_rate, judge_pipeline):
    rouge1(row)
    rougeL(row)
    rougeLsum(row)
    bleu(row)
    response_exact_match_rate(row)
    judge_pipeline(row)
"""

GATES = """
[gates]
"ndcg@3.mean" = ">= 0.1199"
"hit_rate@1.rate" = "== 0"
"judge_pipeline.f1" = ">= 0.66"
"judge_pipeline.precision" = "> 0.5"
"bleu.corpus" = ">= 0"
"""

NDCG3_A = (1 / math.log2(3)) / (2 + 1 / math.log2(3))
NDCG_EXP_A = (1 / math.log2(3)) / (3 + 1 / math.log2(3))


def _tiers_project(project: Project) -> Project:
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", TIERS_EVAL)
    project.write("thresholds.toml", GATES)
    return project


def test_tier_aggregates_equal_hand_computation_in_every_mode(
    project_in_every_mode: Project,
) -> None:
    project = project_in_every_mode
    result, report = _tiers_project(project).run_json()
    result.assert_outcomes(passed=4 + 4, failed=1)  # 4 row tests; 5 gates, 1 fails
    metrics = report["evals"][0]["metrics"]
    mean = {name: stats["mean"] for name, stats in metrics.items() if "mean" in stats}
    assert mean["mrr"] == pytest.approx(0.25)
    assert mean["recall@2"] == pytest.approx(0.25)
    assert mean["precision@2"] == pytest.approx(0.25)
    assert mean["hit_rate@1"] == 0.0
    assert mean["ndcg@3"] == pytest.approx(NDCG3_A / 2, abs=1e-12)
    assert mean["ndcg_exp"] == pytest.approx(NDCG_EXP_A / 2, abs=1e-12)
    assert mean["retrieval_consistency@1"] == pytest.approx(0.75)
    assert mean["response_exact_match_rate"] == pytest.approx(0.75)
    pipeline = metrics["judge_pipeline"]
    assert (pipeline["tp"], pipeline["fp"], pipeline["fn"], pipeline["tn"]) == (1, 1, 0, 0)
    assert pipeline["accuracy"] == 0.5
    assert pipeline["precision"] == 0.5
    assert pipeline["recall"] == 1.0
    assert pipeline["f1"] == pytest.approx(2 / 3)
    # The only failing gate: precision 0.5 is not > 0.5.
    result.stdout.fnmatch_lines(["*FAILED*judge_pipeline.precision*"])


def test_text_aggregates_equal_the_reference_libraries(make_project: Any) -> None:
    project = _tiers_project(make_project("n2"))
    _, report = project.run_json()
    metrics = report["evals"][0]["metrics"]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeLsum"])  # ASCII: the default tokenizer
    for rouge_type in ("rouge1", "rougeLsum"):
        best = [
            max(scorer.score(gold, row["answer"])[rouge_type].fmeasure for gold in _golds(row))
            for row in ROWS
        ]
        assert metrics[rouge_type]["mean"] == pytest.approx(sum(best) / 2, abs=1e-12)
    hypotheses = [row["answer"] for row in ROWS]
    # sacrebleu takes reference streams; the row with one gold is padded with None.
    streams = [[_golds(row)[0] for row in ROWS], [None, ROWS[1]["gold"][1]]]
    corpus = sacrebleu.corpus_bleu(hypotheses, streams).score
    assert metrics["bleu"]["corpus"] == pytest.approx(corpus, abs=1e-9)
    sentence = [sacrebleu.sentence_bleu(row["answer"], _golds(row)).score for row in ROWS]
    assert metrics["bleu"]["mean"] == pytest.approx(sum(sentence) / 2, abs=1e-9)
    assert metrics["bleu"]["corpus"] != pytest.approx(metrics["bleu"]["mean"])


def _golds(row: dict[str, Any]) -> list[str]:
    gold = row["gold"]
    return [gold] if isinstance(gold, str) else list(gold)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("precision(row)", "*precision(row, k=...) needs a cutoff*"),
        ("ndcg(row, k=0)", "*k must be an integer >= 1, got 0*"),
        ("hit_rate(row, depth=3)", "*hit_rate(row, ...) takes k; got depth*"),
        ("ndcg(row, gain='cubic')", "*use one of linear, exponential*"),
    ],
)
def test_fixture_options_are_checked(make_project: Any, call: str, message: str) -> None:
    project = _tiers_project(make_project(IN_PROCESS))
    project.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        f"def test_x(row, precision, ndcg, hit_rate):\n    {call}\n",
    )
    project.write("thresholds.toml", "")
    result = project.run()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([message])


# -- dataset-level evals ----------------------------------------------------------------

SOURCES_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_reach(rows, sources):
    result = sources(rows, corpus=["d1", "d2", "d3", "d4", "d5"])
    assert result.utilization.used_chunks == 3


def test_per_row(row, mrr):
    mrr(row)
"""
SOURCES_GATES = """
[gates]
"sources.chunk_utilization" = ">= 0.6"
"sources.unused_chunks" = "== 2"
"mrr.mean" = ">= 0.25"
"""


def _sources_project(project: Project) -> Project:
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", SOURCES_EVAL)
    project.write("thresholds.toml", SOURCES_GATES)
    return project


def test_dataset_level_test_runs_once_and_is_gated(project_in_every_mode: Project) -> None:
    project = project_in_every_mode
    result, report = _sources_project(project).run_json("-v")
    result.assert_outcomes(passed=1 + 2 + 3)
    assert "test_eval.py::test_reach[all-rows]" in result.stdout.str()
    sources = report["evals"][0]["metrics"]["sources"]
    # Rows retrieve d1, d2, d3 and nothing: 3 of 5 chunks used.
    assert sources["used_chunks"] == 3
    assert sources["unused_chunks"] == 2
    assert sources["chunk_utilization"] == 0.6
    assert report["evals"][0]["dataset_level"]["errors"] == []


def test_a_limited_run_skips_the_dataset_level_gates(make_project: Any) -> None:
    result = _sources_project(make_project("n2")).run("--ragmetrics-limit", "1")
    result.assert_outcomes(passed=2, skipped=3)


def test_a_bad_row_fails_the_dataset_level_test_with_its_problem(make_project: Any) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    bad = [*ROWS, {"id": "c", "retrieved": "d1"}]
    project.write("data/rows.jsonl", jsonl(bad))
    project.write("thresholds.toml", '[gates]\n"errors.sum" = "== 0"\n')
    result = project.run()
    result.stdout.fnmatch_lines(["*1 problem(s) in the dataset:*", "*rows.jsonl:3*'retrieved'*"])
    # The dataset-level test errors in its `rows` fixture; row c errors in test_per_row. The
    # run is complete, not partial: the errors gate is checked, and fails on both.
    result.assert_outcomes(passed=2, failed=1, errors=2)
    result.stdout.fnmatch_lines(["*errors.sum == 0 FAILS: errors sum is 2*"])


def test_a_dataset_level_metric_that_errors_fails_its_gates(make_project: Any) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    project.write(
        "test_eval.py",
        SOURCES_EVAL.replace('corpus=["d1", "d2", "d3", "d4", "d5"]', "corpus=[]"),
    )
    project.write("thresholds.toml", SOURCES_GATES + '"errors.sum" = "== 0"\n')
    result, report = project.run_json()
    result.stdout.fnmatch_lines(["*sources.chunk_utilization*cannot be checked*"])
    result.stdout.fnmatch_lines(["*errors.sum == 0 FAILS: errors sum is 1*"])
    assert report["evals"][0]["errors"] == 1
    assert "sources:" in report["evals"][0]["dataset_level"]["errors"][0]


def test_a_dataset_metric_is_recorded_once_per_eval(make_project: Any) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    project.write(
        "test_eval.py",
        SOURCES_EVAL.replace(
            "    assert result.utilization.used_chunks == 3",
            '    sources(rows, corpus=["d1"])',
        ),
    )
    result = project.run()
    result.stdout.fnmatch_lines(["*sources is recorded once per eval*"])
    # The test fails; the first call's statistics stand, so the gates pass on them.
    result.assert_outcomes(passed=2 + 3, failed=1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("sources(rows, corpus=['d1'], k=0)", "*k must be an integer >= 1, got 0*"),
        ("ux(rows, cache='How?')", "*cache is a list of past questions, not a string*"),
    ],
)
def test_dataset_fixture_arguments_are_checked(make_project: Any, call: str, message: str) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    project.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        f"def test_x(rows, sources, ux):\n    {call}\n",
    )
    project.write("thresholds.toml", "")
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])


def test_a_test_cannot_take_row_and_rows(make_project: Any) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    project.write(
        "test_eval.py",
        "import pytest\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n'
        "def test_x(row, rows):\n    pass\n",
    )
    result = project.run()
    result.stdout.fnmatch_lines(["*takes either `row`*or `rows`*not both*"])
    assert result.ret != 0


def test_the_baseline_stores_dataset_level_statistics(make_project: Any) -> None:
    project = _sources_project(make_project(IN_PROCESS))
    project.write("thresholds.toml", '[gates]\n"sources.used_chunks" = ">= baseline"\n')
    project.run("--ragmetrics-update-baseline").assert_outcomes(passed=4)
    result = project.run()
    result.assert_outcomes(passed=4)
    stored = (project.path / "__baselines__" / "test_eval.json").read_text(encoding="utf-8")
    assert '"used_chunks": 3' in stored


def test_embedding_space_and_ux_with_the_packaged_model(make_project: Any) -> None:
    project = make_project(IN_PROCESS)  # the modes are covered above, without the model
    project.write("data/rows.jsonl", jsonl(SESSION_ROWS))
    project.write("test_eval.py", SPACE_EVAL)
    project.write(
        "thresholds.toml",
        '[gates]\n"embedding_space.total_samples" = "== 4"\n"ux.sessions" = "== 2"\n',
    )
    result, report = project.run_json()
    result.assert_outcomes(passed=2 + 2)
    metrics = report["evals"][0]["metrics"]
    # Contexts are deduplicated by doc id: c1, c2, c3, c4.
    assert metrics["embedding_space"]["total_samples"] == 4
    assert metrics["embedding_space"]["pairwise_pairs"] == 6  # 4 choose 2, exact
    assert metrics["embedding_space"]["pairwise_exact"] == 1
    ux = metrics["ux"]
    assert (ux["questions"], ux["sessions"], ux["single_turn_sessions"]) == (3, 2, 1)
    # The cache holds the first question verbatim (cosine 1 > 0.85); the best cosines of the
    # other two with the packaged model are 0.52 and 0.03, far below tau.
    assert ux["cache_hits"] == 1
    assert ux["cache_hit_rate"] == pytest.approx(1 / 3)


SESSION_ROWS: list[dict[str, Any]] = [
    {
        "id": "s1-1",
        "session_id": "s1",
        "turn": 1,
        "question": "How do I reset my password?",
        "contexts": [
            {"doc_id": "c1", "text": "Reset a password from the sign-in page."},
            {"doc_id": "c2", "text": "Passwords need twelve characters."},
        ],
    },
    {
        "id": "s1-2",
        "session_id": "s1",
        "turn": 2,
        "question": "And how long must the new password be?",
        "contexts": [
            {"doc_id": "c2", "text": "Passwords need twelve characters."},
            {"doc_id": "c3", "text": "Two-factor codes expire after thirty seconds."},
        ],
    },
    {
        "id": "s2-1",
        "session_id": "s2",
        "turn": 1,
        "question": "Which file types can I upload?",
        "contexts": [{"doc_id": "c4", "text": "Any file type up to 50 GB can be uploaded."}],
    },
]
SPACE_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_space(rows, embedding_space):
    embedding_space(rows, field="contexts", k=2)


def test_ux(rows, ux):
    ux(rows, cache=["How do I reset my password?", "Where is the invoice?"])
"""
