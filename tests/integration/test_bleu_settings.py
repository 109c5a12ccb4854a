"""``[settings.bleu]`` through pytest: the ``bleu`` fixture and ``bleu.corpus`` computed
with sacrebleu's options, each number's sacrebleu signature in every report, and a bad
option refused when the run starts. In-process runs."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.project import Project, jsonl
from sacrebleu.metrics.bleu import BLEU

ROWS: list[dict[str, Any]] = [
    {"id": "a", "question": "Where?", "answer": "The Cat sat on the mat.", "gold": "the cat sat"},
    {
        "id": "b",
        "question": "Who?",
        "answer": "Dogs bark, loudly, at night",
        "gold": ["dogs bark at night", "A dog barks at night."],
    },
    {"id": "c", "question": "When?", "answer": "", "gold": "never"},
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_text(row, bleu):
    bleu(row)
"""

GATES = '\n[gates]\n"bleu.corpus" = ">= 0"\n'


def _golds(row: dict[str, Any]) -> list[str]:
    gold = row["gold"]
    return [gold] if isinstance(gold, str) else list(gold)


def _run(project: Project, bleu_table: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    project.write("rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", EVAL)
    project.write("thresholds.toml", bleu_table + GATES)
    return project.run_json("--ragmetrics-html", "report.html")


OPTIONS = [
    pytest.param({}, "", id="defaults"),
    pytest.param(
        {
            "tokenize": "char",
            "smooth_method": "floor",
            "smooth_value": 0.2,
            "lowercase": True,
            "effective_order": True,
        },
        '[settings.bleu]\ntokenize = "char"\nsmooth_method = "floor"\nsmooth_value = 0.2\n'
        "lowercase = true\neffective_order = true\n",
        id="char-floor-lowercase-effective",
    ),
    pytest.param(
        {"tokenize": "intl", "smooth_method": "add-k", "max_ngram_order": 2},
        '[settings.bleu]\ntokenize = "intl"\nsmooth_method = "add-k"\nmax_ngram_order = 2\n',
        id="intl-add-k-bigrams",
    ),
]


@pytest.mark.parametrize(("options", "table"), OPTIONS)
def test_bleu_and_its_corpus_score_follow_the_settings(
    project: Project, options: dict[str, Any], table: str
) -> None:
    result, report = _run(project, table)
    assert result.ret == 0
    (entry,) = report["evals"]
    metrics = entry["metrics"]
    # sacrebleu with the same options: sentence BLEU always with effective order (as
    # sacrebleu.sentence_bleu), the corpus score with the setting (off by default).
    sentence = BLEU(**{**options, "effective_order": True})
    scores = [sentence.sentence_score(row["answer"], _golds(row)).score for row in ROWS]
    assert metrics["bleu"]["mean"] == pytest.approx(sum(scores) / 3, abs=1e-9)
    corpus = BLEU(**options)
    streams = [[_golds(row)[0] for row in ROWS], [None, ROWS[1]["gold"][1], None]]
    expected = corpus.corpus_score([row["answer"] for row in ROWS], streams).score  # type: ignore[arg-type]
    assert metrics["bleu"]["corpus"] == pytest.approx(min(expected, 100.0), abs=1e-9)
    # Each number's signature is the one sacrebleu prints for it after scoring the same
    # rows (nrefs "var": the rows have 1, 2 and 1 golds), with the order named when not 4.
    sentence.corpus_score([row["answer"] for row in ROWS], streams)  # type: ignore[arg-type]
    order = options.get("max_ngram_order", 4)
    ngram = "|version:" if order == 4 else f"|ngram:{order}|version:"
    signatures = entry["signatures"]
    assert signatures == {
        "bleu": str(sentence.get_signature()).replace("|version:", ngram),
        "bleu.corpus": str(corpus.get_signature()).replace("|version:", ngram),
    }
    assert signatures["bleu"].startswith("nrefs:var|")
    assert "eff:yes" in signatures["bleu"]
    # The terminal and the HTML page show them.
    result.stdout.fnmatch_lines(
        [
            "Signatures (sacrebleu's; numbers signed differently are not comparable):",
            f"  test_eval.py: bleu {signatures['bleu']}",
            f"  test_eval.py: bleu.corpus {signatures['bleu.corpus']}",
        ]
    )
    html = (project.path / "report.html").read_text(encoding="utf-8")
    assert f"<td>{signatures['bleu.corpus']}</td>" in html


def test_an_eval_without_bleu_has_no_signatures(project: Project) -> None:
    project.write("rows.jsonl", jsonl(ROWS))
    project.write("test_eval.py", EVAL.replace("bleu", "rouge1"))
    project.write("thresholds.toml", "")
    result, report = project.run_json()
    assert result.ret == 0
    assert report["evals"][0]["signatures"] == {}
    assert "Signatures" not in result.stdout.str()


def test_the_corpus_score_reduces_statistics_of_the_configured_order(project: Project) -> None:
    result, report = _run(project, "[settings.bleu]\nmax_ngram_order = 6\neffective_order = true\n")
    assert result.ret == 0
    corpus = BLEU(max_ngram_order=6, effective_order=True)
    streams = [[_golds(row)[0] for row in ROWS], [None, ROWS[1]["gold"][1], None]]
    expected = corpus.corpus_score([row["answer"] for row in ROWS], streams).score  # type: ignore[arg-type]
    metrics = report["evals"][0]["metrics"]
    assert metrics["bleu"]["corpus"] == pytest.approx(min(expected, 100.0), abs=1e-9)
    stats = report["evals"][0]["breakdowns"]["bleu_stats"]
    assert "correct_6" in stats
    assert "correct_7" not in stats
    assert stats["nrefs_1"]["sum"] == 2
    assert stats["nrefs_2"]["sum"] == 1


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[settings.bleu]\ntokenize = "13b"\n', "[settings.bleu] tokenize: '13b' is not one of"),
        ("[settings.bleu]\nsmooth = 1\n", "[settings.bleu] smooth: unknown setting"),
    ],
)
def test_a_bad_bleu_setting_stops_the_run_before_any_row(
    project: Project, table: str, message: str
) -> None:
    project.write("thresholds.toml", table)
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "passed" not in result.stdout.str()
