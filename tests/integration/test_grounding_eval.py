"""Grounding metrics through pytest: the packaged model, the prepare step and the cache.

The rows are chosen so that every support decision is far from tau_sim 0.65 with the
packaged all-MiniLM-L6-v2 (test_embedding_model.py checks those cosines), which makes
the aggregates computable by hand:

    g1  "The Eiffel Tower is in Paris [CIT:e1]." supported; a second sentence has no
        citation                                  overlap 0.5, faithfulness 0.6 + 0.2 = 0.8
    g2  "I don't know.", unanswerable             overlap 0 (abstains), faithfulness 1.0
    g3  two sentences, each supported by [n]      overlap 1.0, faithfulness 1.0
    g4  one sentence citing an unrelated context  overlap 0.0, faithfulness 0.6

    overlap.mean 1.5 / 4 = 0.375; overlap_answered.mean (g1, g3, g4) 1.5 / 3 = 0.5;
    faithfulness.mean 3.4 / 4 = 0.85; texts to embed: 2 + 4 + 2, one shared (NILE): 7;
    sentences whose similarity decides, each with the context it cites: 1 + 2 + 1 = 4.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers.files import block_directory
from helpers.project import IN_PROCESS, Project, jsonl

from pytest_ragmetrics.metrics import grounding
from pytest_ragmetrics.text import sentences

EIFFEL = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."
NILE = "The Nile is the longest river in Africa, flowing north into the Mediterranean Sea."
GROUNDED_ROWS: list[dict[str, Any]] = [
    {
        "id": "g1",
        "answer": "The Eiffel Tower is in Paris [CIT:e1]. Bananas are rich in potassium.",
        "gold": ["Paris"],
        "contexts": [{"doc_id": "e1", "text": EIFFEL}],
        "answerable": True,
    },
    {"id": "g2", "answer": "I don't know.", "gold": ["?"], "contexts": [], "answerable": False},
    {
        "id": "g3",
        "answer": "Canberra is the capital of Australia [1]. "
        "The Nile is the longest river in Africa [2].",
        "gold": ["Canberra"],
        "contexts": [
            {"doc_id": "c1", "text": "Canberra is the capital city of Australia."},
            {"doc_id": "n1", "text": NILE},
        ],
    },
    {
        "id": "g4",
        "answer": "Mount Everest is the highest mountain on Earth [CIT:n1].",
        "gold": ["Everest"],
        "contexts": [{"doc_id": "n1", "text": NILE}],
        "answerable": True,
    },
]
UNIQUE_TEXTS = 7
SCORED_PAIRS = 4
# Each row's values by the module docstring's hand computation.
HAND_OVERLAP = {"g1": 0.5, "g2": 0.0, "g3": 1.0, "g4": 0.0}
HAND_FAITHFULNESS = {"g1": 0.8, "g2": 1.0, "g3": 1.0, "g4": 0.6}

GROUNDED_EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/grounded.jsonl")


def test_grounded(row, overlap, faithfulness):
    overlap(row)
    faithfulness(row)
"""

# Records, per process, which heavy modules were imported by the end of the run.
MODULE_PROBE = """
import os, sys


def pytest_unconfigure(config):
    names = ("numpy", "torch", "sentence_transformers", "transformers")
    heavy = sorted(name for name in names if name in sys.modules)
    with open(os.path.join(str(config.rootpath), "modules.log"), "a") as log:
        log.write(f"{os.getpid()} {' '.join(heavy) or '-'}\\n")
"""


def _grounded(project: Project) -> Project:
    project.write("data/grounded.jsonl", jsonl(GROUNDED_ROWS))
    project.write("test_eval.py", GROUNDED_EVAL)
    project.write("thresholds.toml", '[gates]\n"overlap.mean" = ">= 0.3"\n')
    return project


@pytest.fixture
def grounded(project: Project) -> Project:
    """The grounded eval, run in this process."""
    return _grounded(project)


@pytest.fixture(params=["no-xdist", "n2"])
def grounded_alone_and_distributed(request: pytest.FixtureRequest, make_project: Any) -> Project:
    """The grounded eval, run in a subprocess, alone and under two xdist workers: which
    process encodes, and which imports torch, is the subject. ``-n 0`` is not among the
    modes: it runs the rows in the one pytest process, as a run without xdist does (no
    worker, no ``workerinput``), and merging across workers is not what these tests
    check (tests/integration/test_xdist.py runs that matrix)."""
    return _grounded(make_project(request.param))


@pytest.fixture(params=[IN_PROCESS, "n2"])
def grounded_here_and_distributed(request: pytest.FixtureRequest, make_project: Any) -> Project:
    """The grounded eval, run in this process and under two xdist workers: what each
    process encodes, and what a run leaves behind, is the subject; which modules a
    process imports is not, so the one-process run need not be a subprocess of its own."""
    return _grounded(make_project(request.param))


def prepare_lines(output: str) -> list[tuple[int, int, int]]:
    """(unique texts, from cache, encoded) of each process that embedded anything."""
    pattern = r"embeddings \(\S+\): (\d+) unique text\(s\), (\d+) from cache, (\d+) encoded"
    return [(int(u), int(c), int(e)) for u, c, e in re.findall(pattern, output)]


def assert_encoded_once(output: str, encoded: int) -> None:
    """``encoded`` texts were encoded in all, by one process; every other process of the
    run (an xdist worker) found all of them in the cache."""
    lines = prepare_lines(output)
    assert lines
    assert sum(e for _, _, e in lines) == encoded
    for unique, cached, fresh in lines:
        assert unique == UNIQUE_TEXTS
        assert (cached, fresh) in ((0, encoded), (UNIQUE_TEXTS, 0))


def test_hand_computed_grounding_aggregates(grounded: Project) -> None:
    result, report = grounded.run_json()
    result.assert_outcomes(passed=5)  # 4 rows and the overlap.mean gate
    metrics = report["evals"][0]["metrics"]
    assert metrics["overlap"]["mean"] == pytest.approx(0.375)
    assert metrics["overlap_answered"]["mean"] == pytest.approx(0.5)
    assert metrics["overlap_answered"]["count"] == 3
    assert metrics["faithfulness"]["mean"] == pytest.approx(0.85)
    # Under -n 2 too: one process encodes, every text exactly once.
    assert_encoded_once(result.stdout.str(), UNIQUE_TEXTS)

    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    sentences = rows["g1"]["sentences"]
    assert [s["supported"] for s in sentences] == [True, False]
    assert sentences[0]["citations"] == ["e1"]
    assert sentences[0]["similarity"] > 0.65
    assert sentences[1]["reason"] == "no citation"
    assert "0.6 + 0.4 x overlap 0.5" in rows["g1"]["evidence"]["faithfulness"]
    assert rows["g2"]["sentences"][0]["reason"] == "IDK sentence, dropped"
    assert "unanswerable" in rows["g2"]["evidence"]["faithfulness"]


def test_a_failed_overlap_assertion_shows_each_sentence(grounded: Project) -> None:
    grounded.write(
        "test_eval.py",
        GROUNDED_EVAL.replace("    overlap(row)\n", "    assert overlap(row) >= 0.9\n"),
    )
    result = grounded.run("-k", "g1")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "E * overlap=0.5 (row 'g1': 1 of 2 claim sentence(s) supported at tau_sim 0.65; "
            "[[]supported] 'The Eiffel Tower is in Paris [[]CIT:e1].': cites e1, cosine 0.8* "
            ">= tau_sim 0.65; [[]UNSUPPORTED] 'Bananas are rich in potassium.': "
            "no citation) >= 0.9",
        ]
    )


def similarity_lines(output: str) -> list[int]:
    """The grounding pairs each process read from the cache's similarity set."""
    return [int(n) for n in re.findall(r"embeddings \(\S+\): (\d+) sentence similarit", output)]


def test_a_fully_cached_run_reads_no_vector_and_imports_neither_numpy_nor_torch(
    grounded_alone_and_distributed: Project,
) -> None:
    """A warm run of the grounding metrics reads each sentence's similarity to its cited
    context from the cache's similarity set: no vector, so no numpy, no model, no torch
    (numpy comes only with a written report's intervals, or a comparison's evidence)."""
    grounded = grounded_alone_and_distributed
    grounded.write("conftest.py", MODULE_PROBE)
    log = grounded.path / "modules.log"
    cold = grounded.run()
    cold.assert_outcomes(passed=5)
    # The probe can see the model being loaded: some process of the cold run imported it.
    assert any("torch" in line for line in log.read_text().splitlines())
    log.unlink()

    warm = grounded.run()
    warm.assert_outcomes(passed=5)
    assert prepare_lines(warm.stdout.str()) == []  # no text looked up in any process
    found = similarity_lines(warm.stdout.str())
    assert found
    assert set(found) == {SCORED_PAIRS}  # each process that ran rows read the whole set
    lines = log.read_text().splitlines()
    assert lines
    assert all(line.split(" ", 1)[1] == "-" for line in lines), lines
    log.unlink()
    # A written report gives each metric its confidence interval, which needs numpy, on
    # the controller; still no model and no torch anywhere.
    reported, report = grounded.run_json()
    reported.assert_outcomes(passed=5)
    lines = log.read_text().splitlines()
    assert all(line.split(" ", 1)[1] in ("-", "numpy") for line in lines), lines
    # Scored by the prepare step of whichever process ran each row: the values by hand.
    rows = {row["id"]: row["metrics"] for row in report["evals"][0]["rows"]}
    assert {name: values["overlap"] for name, values in rows.items()} == HAND_OVERLAP
    assert {name: values["faithfulness"] for name, values in rows.items()} == pytest.approx(
        HAND_FAITHFULNESS
    )


def test_no_cache_encodes_once_per_run_and_leaves_nothing(
    grounded_here_and_distributed: Project,
) -> None:
    grounded = grounded_here_and_distributed
    for _ in range(2):
        result = grounded.run("--ragmetrics-no-cache")
        result.assert_outcomes(passed=5)
        assert_encoded_once(result.stdout.str(), UNIQUE_TEXTS)
    assert not (grounded.path / ".ragmetrics_cache").exists()
    result.stdout.fnmatch_lines(["ragmetrics embeddings: *tau_sim 0.65, cache off*"])


def test_cache_location_from_option_or_environment(
    make_project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(IN_PROCESS)
    project.write("data/grounded.jsonl", jsonl(GROUNDED_ROWS))
    project.write("test_eval.py", GROUNDED_EVAL)
    project.write("thresholds.toml", "")
    project.run("--ragmetrics-cache-dir", "by-option").assert_outcomes(passed=4)
    assert (project.path / "by-option" / "embeddings.sqlite3").is_file()
    monkeypatch.setenv("RAGMETRICS_CACHE_DIR", str(project.path / "by-env"))
    result = project.run()
    assert_encoded_once(result.stdout.str(), UNIQUE_TEXTS)  # a new, empty cache
    assert (project.path / "by-env" / "embeddings.sqlite3").is_file()
    assert not (project.path / ".ragmetrics_cache").exists()


@pytest.mark.parametrize("blocked", ["a file", "read-only"])
def test_a_cache_directory_that_cannot_be_written_stops_the_run_naming_it(
    grounded: Project, monkeypatch: pytest.MonkeyPatch, blocked: str
) -> None:
    """A cache directory that is a file, or that cannot be written, is a usage error that
    names the directory and the way out, never an internal error; nothing is moved aside
    or overwritten."""
    target = grounded.path / "cache"
    block_directory(target, blocked, monkeypatch)
    result = grounded.run("--ragmetrics-cache-dir", "cache")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    why = "is a file, not a directory" if blocked == "a file" else "cannot write in it"
    result.stderr.fnmatch_lines(
        [f"ERROR: ragmetrics cache directory {target}: {why}*--ragmetrics-no-cache*"]
    )
    if blocked == "a file":
        assert target.read_text(encoding="utf-8") == "not a directory"
    else:
        assert sorted(target.iterdir()) == []


def test_a_cache_directory_that_is_a_file_stops_a_distributed_run_naming_it(
    make_project: Any,
) -> None:
    """Under xdist the workers find the directory unusable, each before running a row: the
    run stops with the reason, never an internal error of the controller."""
    project = _grounded(make_project("n2"))
    target = project.write("cache", "not a directory")
    result = project.run("--ragmetrics-cache-dir", "cache")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [f"*ragmetrics cache directory {target}: is a file, not a directory*"]
    )
    result.assert_outcomes()  # no row ran
    assert target.read_text(encoding="utf-8") == "not a directory"


def test_tau_sim_setting_changes_the_decision_and_the_header(grounded: Project) -> None:
    grounded.write("thresholds.toml", "[settings]\ntau_sim = 0.95\n")
    result, report = grounded.run_json()
    result.stdout.fnmatch_lines(["ragmetrics embeddings: all-MiniLM-L6-v2 (*), tau_sim 0.95, *"])
    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    assert rows["g1"]["metrics"]["overlap"] == 0.0  # its cosine 0.85 is now below tau
    assert rows["g3"]["metrics"]["overlap"] == 0.5  # cosines 0.98 and 0.91
    assert report["settings"]["tau_sim"] == 0.95


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('tau_sim = "high"', "*[[]settings] tau_sim: expected a number in (0, 1]*"),
        ("tau_sim = 1.5", "*[[]settings] tau_sim: expected a number in (0, 1]*"),
        (
            'embedding_model = "sentence-transformers/all-mpnet-base-v2"',
            "*[[]settings] embedding_model 'sentence-transformers/all-mpnet-base-v2': "
            "*not a model directory*never downloaded*",
        ),
    ],
)
def test_bad_embedding_settings_are_usage_errors(
    grounded: Project, settings: str, message: str
) -> None:
    grounded.write("thresholds.toml", f"[settings]\n{settings}\n")
    result = grounded.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_row_without_contexts_errors_naming_the_field(grounded: Project) -> None:
    rows = [dict(GROUNDED_ROWS[0]), *GROUNDED_ROWS[1:]]
    del rows[0]["contexts"]
    grounded.write("data/grounded.jsonl", jsonl(rows))
    result = grounded.run()
    result.assert_outcomes(passed=4, errors=1)  # errors are gated by errors.sum, not here
    result.stdout.fnmatch_lines(["*data/grounded.jsonl:1: field 'contexts': required by overlap*"])


# Each row test says whether the prepare step scored its row before it ran.
SCORED_EVAL = """
import pytest

from pytest_ragmetrics.plugin.state import RECORDER_KEY

pytestmark = pytest.mark.ragmetrics(dataset="data/grounded.jsonl")


def test_grounded(row, overlap, faithfulness, request):
    scored = "overlap" in request.node.stash[RECORDER_KEY].memo
    print(f"{row.id} scored before it ran: {scored}")
    overlap(row)
    faithfulness(row)
"""


def test_the_prepare_step_scores_every_row_and_the_fixtures_agree(grounded: Project) -> None:
    """The rows are scored before they run; the values and evidence are those of the
    per-row path (every row computing its own overlap, as with the prepare step's
    scores withheld) and, by the hand computation above, the aggregates."""
    grounded.write("test_eval.py", SCORED_EVAL)
    result, report = grounded.run_json("-s")
    result.assert_outcomes(passed=5)
    for row in GROUNDED_ROWS:
        result.stdout.fnmatch_lines([f"*{row['id']} scored before it ran: True*"])
    metrics = report["evals"][0]["metrics"]
    assert metrics["overlap"]["mean"] == pytest.approx(0.375)
    assert metrics["faithfulness"]["mean"] == pytest.approx(0.85)

    with pytest.MonkeyPatch.context() as patch:  # every row scores its own overlap
        patch.setattr(grounding, "scored_overlaps", lambda *args: {})
        alone, alone_report = grounded.run_json("-s")
    alone.assert_outcomes(passed=5)
    alone.stdout.fnmatch_lines(["*g1 scored before it ran: False*"])
    assert _without_latency(alone_report["evals"]) == _without_latency(report["evals"])


def _without_latency(evals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for evaluation in evals:
        for row in evaluation["rows"]:
            row.pop("latency_ms", None)
        evaluation["metrics"].pop("latency_ms", None)
    return evals


# Each row test scores its row with another answer: one sentence citing nothing.
EDITED_EVAL = """
import dataclasses

import pytest

from pytest_ragmetrics.plugin.state import RECORDER_KEY

pytestmark = pytest.mark.ragmetrics(dataset="data/grounded.jsonl")


def test_grounded(row, overlap, request):
    scored = "overlap" in request.node.stash[RECORDER_KEY].memo
    print(f"{row.id} scored before it ran: {scored}")
    edited = dataclasses.replace(
        row, data={**row.data, "answer": "Bananas are rich in potassium."}
    )
    overlap(edited)
"""


def test_an_edited_row_gets_its_own_overlap_not_the_prepared_ones(grounded: Project) -> None:
    """The prepare step scored each row's own answer; a test that hands ``overlap`` the
    row with another answer gets that answer's overlap: by hand, one claim sentence with
    no citation, 0 of 1 supported, 0.0 on every row (g3's own answer scores 1.0)."""
    grounded.write("test_eval.py", EDITED_EVAL)
    result, report = grounded.run_json("-s")
    result.stdout.fnmatch_lines(["*g3 scored before it ran: True*"])
    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    assert {key: row["metrics"]["overlap"] for key, row in rows.items()} == dict.fromkeys(
        HAND_OVERLAP, 0.0
    )
    assert "0 of 1 claim sentence(s) supported" in rows["g3"]["evidence"]["overlap"]


def test_a_row_whose_scoring_raises_fails_when_it_runs_and_only_it(
    grounded: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row the prepare step cannot score (here: judging g4's claims raises what a
    malformed row raises) keeps no other row from being scored, nor the run from
    starting: it fails when it runs, with its own error, as it would have without the
    prepare step's scores."""
    judge = grounding.judge_claims

    def failing_on_everest(claim_list: Any, *args: Any) -> Any:
        if any("Everest" in claim.sentence for claim in claim_list):
            raise ValueError("judging g4 failed")
        return judge(claim_list, *args)

    monkeypatch.setattr(grounding, "judge_claims", failing_on_everest)
    grounded.write("test_eval.py", SCORED_EVAL)
    result, report = grounded.run_json("-s")
    result.assert_outcomes(passed=4, failed=1)  # g1-g3 and the gate; g4
    result.stdout.fnmatch_lines(
        ["*g1 scored before it ran: True*", "*ValueError: judging g4 failed*"]
    )
    result.stdout.fnmatch_lines(["*g4 scored before it ran: False*"])
    rows = {row["id"]: row for row in report["evals"][0]["rows"]}
    assert rows["g1"]["metrics"]["overlap"] == 0.5
    assert rows["g3"]["metrics"]["overlap"] == 1.0


def test_bulk_mode_scores_as_row_mode(grounded: Project) -> None:
    _, row_report = grounded.run_json("--ragmetrics-mode=row")
    bulk_result, bulk_report = grounded.run_json("--ragmetrics-mode=bulk")
    bulk_result.assert_outcomes(passed=2)  # one batch of the 4 rows, the gate
    assert _without_latency(bulk_report["evals"]) == _without_latency(row_report["evals"])


def test_a_warm_run_reads_each_answers_sentences_from_the_cache(
    grounded: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, cold = grounded.run_json()
    sentences._split.cache_clear()  # as in a new process: no answer split yet,
    grounding._claims.cache_clear()  # nor analysed

    def no_punkt(text: str, fmt: Any = "auto") -> Any:
        raise AssertionError(f"Punkt ran on {text!r}")

    monkeypatch.setattr(sentences, "sentence_spans", no_punkt)
    result, warm = grounded.run_json()
    result.assert_outcomes(passed=5)
    assert _without_latency(warm["evals"]) == _without_latency(cold["evals"])
