"""The chrf and chrf_pp fixtures through pytest: per-row scores, `.corpus` under the run's
`[settings.chrf]`, gates on them, equal to sacrebleu's CHRF over the same rows."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.project import Project, jsonl
from sacrebleu.metrics.chrf import CHRF

ROWS: list[dict[str, Any]] = [
    {
        "id": "ru",
        "question": "Где кот?",
        "answer": "Кот сидит на ковре [CIT:d1].",
        "gold": "кот сидит на ковре.",
        "contexts": [{"doc_id": "d1", "text": "Кот сидит на ковре."}],
    },
    {
        "id": "id",
        "question": "Rumahnya bagaimana?",
        "answer": "Rumah itu besar sekali!",
        # two answer groups (lists of aliases): three references in all
        "gold": [["rumah besar", "Rumah yang besar"], ["gedung besar"]],
    },
    {"id": "zh", "question": "首都？", "answer": "北京是中国的首都。", "gold": "首都是北京。"},
]
# What the answers compare with the golds: the citation marker removed.
HYPOTHESES = ["Кот сидит на ковре.", "Rumah itu besar sekali!", "北京是中国的首都。"]
REFERENCES = [
    ["кот сидит на ковре."],
    ["rumah besar", "Rumah yang besar", "gedung besar"],
    ["首都是北京。"],
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_chrf(row, chrf, chrf_pp):
    score = chrf(row)
    assert 0 <= score <= 100
    chrf_pp(row)
"""

SETTINGS = """
[settings.chrf]
beta = 3
lowercase = true
"""


def _streams() -> list[list[str | None]]:
    """sacrebleu's reference streams, rows with fewer references padded with None."""
    return [[refs[i] if i < len(refs) else None for refs in REFERENCES] for i in range(3)]


def _project(project: Project, thresholds: str) -> Project:
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", thresholds)
    return project


@pytest.mark.parametrize(("word_order", "metric"), [(0, "chrf"), (2, "chrf_pp")])
def test_scores_and_corpus_equal_sacrebleu_under_the_runs_settings(
    project: Project, word_order: int, metric: str
) -> None:
    result, report = _project(project, SETTINGS).run_json()
    result.assert_outcomes(passed=3)
    stats = report["evals"][0]["metrics"][metric]
    reference = CHRF(word_order=word_order, beta=3, lowercase=True)
    sentences = [
        reference.sentence_score(hyp, refs).score
        for hyp, refs in zip(HYPOTHESES, REFERENCES, strict=True)
    ]
    assert stats["mean"] == pytest.approx(sum(sentences) / 3, abs=1e-9)
    corpus = reference.corpus_score(HYPOTHESES, _streams()).score
    assert stats["corpus"] == pytest.approx(corpus, abs=1e-9)
    # Both numbers carry what sacrebleu's own signature says after that corpus score
    # (rows with 1 and 3 golds: nrefs:var).
    signature = reference.get_signature().format()
    assert "nrefs:var" in signature
    signatures = report["evals"][0]["signatures"]
    assert signatures[metric] == signatures[f"{metric}.corpus"] == signature
    # The settings matter: with sacrebleu's defaults the corpus score is another number.
    default = CHRF(word_order=word_order).corpus_score(HYPOTHESES, _streams()).score
    assert stats["corpus"] != pytest.approx(default, abs=1e-6)


def test_gates_read_the_corpus_scores(project: Project) -> None:
    corpus = CHRF(beta=3, lowercase=True).corpus_score(HYPOTHESES, _streams()).score
    gates = f'[gates]\n"chrf.corpus" = ">= {corpus - 0.01:.4f}"\n"chrf_pp.corpus" = "> 100"\n'
    result = _project(project, SETTINGS + gates).run()
    result.assert_outcomes(passed=3 + 1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED*chrf_pp.corpus*"])


def test_a_baseline_stored_with_other_chrf_settings_is_not_compared(project: Project) -> None:
    gate = '[gates]\n"chrf.corpus" = ">= baseline"\n'
    _project(project, gate)
    assert project.run("--ragmetrics-update-baseline").ret == 0  # sacrebleu's defaults
    assert project.run().ret == 0  # the same settings: compared, and equal
    project.write("thresholds.toml", SETTINGS + gate)
    result = project.run()
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "chrf.corpus >= baseline: cannot be checked",
            "*was made with other metric settings, so it is not compared; "
            "the settings that differ:",
            '  chrf: stored default, now {"beta": 3, "lowercase": true}',
        ]
    )
