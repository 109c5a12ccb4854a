"""Stored baselines through pytest: a changed log is compared row by row, never refused;
only changed metric settings refuse it. In-process runs (``pytester.runpytest``)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers.project import jsonl, terminal_section

from pytest_ragmetrics.files import CACHE_DIR_ENV

FACTS = [
    ("The Eiffel Tower is in Paris.", "Paris"),
    ("The Colosseum is in Rome.", "Rome"),
    ("The Brandenburg Gate is in Berlin.", "Berlin"),
    ("The Acropolis is in Athens.", "Athens"),
    ("The Alhambra is in Granada.", "Granada"),
    ("The Little Mermaid statue is in Copenhagen.", "Copenhagen"),
    ("The Atomium is in Brussels.", "Brussels"),
    ("The Charles Bridge is in Prague.", "Prague"),
]


def _row(i: int, cited: str | None = None, tokens: int = 100) -> dict[str, Any]:
    """Row ``q<i>``: an answer that repeats its one context, citing ``cited`` (its own
    context by default, so the sentence is supported)."""
    fact, city = FACTS[i]
    return {
        "id": f"q{i}",
        "question": f"Where is it? ({i})",
        "answer": f"{fact[:-1]} [CIT:{cited or f'd{i}'}].",
        "gold": city,
        "contexts": [{"doc_id": f"d{i}", "text": fact}],
        "tokens": tokens,
    }


EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_answers(row, overlap, f1, tokens):
    overlap(row); f1(row); tokens(row)
"""

GATES = """
[gates]
"tokens.mean" = "<= 1.2x baseline"
"overlap.mean" = ">= baseline"
"""


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for the module's runs: they embed the same texts, so only the
    first run loads the model."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture
def project(
    shared_cache: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> pytest.Pytester:
    """Eight supported answers of 100 tokens each, with their baseline stored."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(shared_cache))
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl([_row(i) for i in range(8)]))
    (pytester.path / "thresholds.toml").write_text(GATES)
    stored = pytester.runpytest("--ragmetrics-update-baseline")
    assert stored.ret == 0
    baseline = json.loads((pytester.path / "__baselines__" / "test_eval.json").read_text())
    assert baseline["metrics"]["overlap"]["mean"] == 1.0  # every answer repeats its context
    return pytester


def _report(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest(
        "--ragmetrics-json=r.json", "--ragmetrics-md=r.md", "--ragmetrics-html=r.html", *args
    )
    document = json.loads((pytester.path / "r.json").read_text())
    return result, document["evals"][0]


def test_a_changed_log_is_compared_and_names_the_rows_that_regressed(
    project: pytest.Pytester,
) -> None:
    # Tokens rise by half on every row; q0..q2 now cite a document they were not given.
    rows = [_row(i, cited="zz" if i < 3 else None, tokens=150) for i in range(8)]
    (project.path / "rows.jsonl").write_text(jsonl(rows))
    result, entry = _report(project)
    assert result.ret == 1
    gates = {gate["name"]: gate for gate in entry["gates"]}
    tokens, overlap = gates["tokens.mean"], gates["overlap.mean"]
    assert (tokens["status"], tokens["value"], tokens["bound"], tokens["baseline"]) == (
        "failed",
        150.0,
        120.0,
        100.0,
    )
    assert [row["id"] for row in tokens["regressed"]] == [f"q{i}" for i in range(8)]
    # five answers still supported, three not: 5 / 8
    assert (overlap["status"], overlap["value"], overlap["baseline"]) == ("failed", 0.625, 1.0)
    assert overlap["regressed"] == [{"id": f"q{i}", "before": 1.0, "after": 0.0} for i in range(3)]
    result.stdout.fnmatch_lines(
        [
            "tokens.mean <= 1.2x baseline FAILS: tokens mean is 150, outside <= 120 "
            "(1.2 × baseline 100)",
            "*",
            "overlap.mean >= baseline FAILS: overlap mean is 0.625, outside >= 1 (baseline)",
            "*",
            "baseline  1 from __baselines__/test_eval.json",
            "regressed 3 of 8 paired rows break the rule on their own: q0 1 → 0, q1 1 → 0, "
            "q2 1 → 0",
        ]
    )
    assert entry["baseline"]["coverage"] == 1.0
    # the reports a CI reviewer opens name the rows too
    markdown = (project.path / "r.md").read_text()
    assert "regressed (3): q0, q1, q2" in markdown
    assert "| **FAIL** | test\\_eval.py::gate::overlap.mean | \\>= baseline | 0.625 | 1 | 1 |" in (
        markdown
    )
    html = (project.path / "r.html").read_text()
    assert '<span class="regressed">regressed (3)</span>: <a href="#row-0-0-0">q0</a>' in html


def test_an_update_says_which_failing_gates_it_accepts(project: pytest.Pytester) -> None:
    """Updating compares the new values with the baseline it replaces first: tokens rose
    from 100 to 150 a row, beyond 1.2x; the update is written, its gates then pass against
    it, and the run says what it accepted. An update that changes nothing says nothing."""
    rows = [_row(i, tokens=150) for i in range(8)]
    (project.path / "rows.jsonl").write_text(jsonl(rows))
    result = project.runpytest("--ragmetrics-update-baseline")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*the baseline of test_eval.py replaced by this run failed 1 gate(s) against the "
            "earlier one, which it now accepts: tokens.mean <= 1.2x baseline FAILS*",
        ]
    )
    again = project.runpytest("--ragmetrics-update-baseline")
    assert again.ret == 0
    assert "which it now accepts" not in again.stdout.str()


def test_removed_rows_are_listed_and_the_rest_is_compared(project: pytest.Pytester) -> None:
    (project.path / "rows.jsonl").write_text(jsonl([_row(i) for i in range(5)]))
    result, entry = _report(project)
    assert result.ret == 0
    stored = entry["baseline"]
    assert (stored["status"], stored["shared"], stored["coverage"]) == ("paired", 5, 5 / 8)
    assert all(isinstance(stored[count], int) for count in ("shared", "added", "removed"))
    assert stored["removed_ids"] == ["q5", "q6", "q7"]
    assert (stored["added_ids"], stored["changed_ids"]) == ([], [])
    gates = {gate["name"]: gate for gate in entry["gates"]}
    assert gates["tokens.mean"]["status"] == "passed"
    assert (
        "on the rows both share: 5 of 8 stored rows paired (coverage 0.625): 3 removed"
        in (gates["tokens.mean"]["message"])
    )
    result.stdout.fnmatch_lines(
        [
            "Stored baselines (rows paired by id):",
            "  test_eval.py: 5 of 8 stored rows paired (coverage 0.625): 3 removed",
            "    removed (stored, not in this run) (3): q5 · q6 · q7",
        ]
    )
    assert "removed (stored, not in this run) (3): q5 · q6 · q7" in (
        (project.path / "r.md").read_text()
    )
    html = (project.path / "r.html").read_text()
    assert "5 of 8 stored rows paired (coverage 0.625) · removed (3) q5, q6, q7" in html

    (project.path / "thresholds.toml").write_text(GATES + '"baseline.coverage" = ">= 0.9"\n')
    gated = project.runpytest()
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["*baseline.coverage >= 0.9 FAILS: baseline coverage is 0.625*"])


def test_a_row_whose_question_changed_is_not_paired(project: pytest.Pytester) -> None:
    rows = [_row(i) for i in range(8)]
    rows[4] = {**rows[4], "question": "Which city is it in?"}
    rows.append({**_row(0), "id": "q8"})
    (project.path / "rows.jsonl").write_text(jsonl(rows))
    _, entry = _report(project)
    stored = entry["baseline"]
    assert (stored["changed_ids"], stored["added_ids"], stored["shared"]) == (["q4"], ["q8"], 7)


def test_changed_metric_settings_refuse_the_comparison(project: pytest.Pytester) -> None:
    (project.path / "thresholds.toml").write_text("[settings]\ntau_sim = 0.7\n" + GATES)
    result, entry = _report(project)
    assert result.ret == 1
    assert entry["baseline"]["status"] == "not compared"
    result.stdout.fnmatch_lines(
        [
            "overlap.mean >= baseline: cannot be checked",
            "the baseline __baselines__/test_eval.json was made with other metric settings, "
            "so it is not compared; the settings that differ:",
            "  tau_sim: stored 0.65, now 0.7",
        ]
    )
    # The terminal's summary of the stored baselines says what its list is, and lists it.
    section = terminal_section(result, "ragmetrics")
    start = section.index("Stored baselines (rows paired by id):")
    assert section[start + 1 : start + 3] == [
        "  test_eval.py: not compared: the baseline __baselines__/test_eval.json was made "
        "with other metric settings, so it is not compared; the settings that differ:",
        "    tau_sim: stored 0.65, now 0.7",
    ]


def test_changed_retrieval_options_refuse_the_comparison(project: pytest.Pytester) -> None:
    # A relevance level changes what every binary retrieval measure means.
    settings = "[settings.retrieval]\nrelevance_level = 2\n"
    (project.path / "thresholds.toml").write_text(settings + GATES)
    result, entry = _report(project)
    assert result.ret == 1
    assert entry["baseline"]["status"] == "not compared"
    result.stdout.fnmatch_lines(['  retrieval: stored default, now {"relevance_level": 2}'])


def test_a_changed_bleu_tokenizer_refuses_the_comparison(project: pytest.Pytester) -> None:
    # BLEU settings enter the signature only when changed: the baseline stored with the
    # defaults has none, so a run with another tokenizer says what differs.
    (project.path / "thresholds.toml").write_text('[settings.bleu]\ntokenize = "intl"\n' + GATES)
    result, entry = _report(project)
    assert result.ret == 1
    assert entry["baseline"]["status"] == "not compared"
    result.stdout.fnmatch_lines(
        [
            "the baseline __baselines__/test_eval.json was made with other metric settings, "
            "so it is not compared; the settings that differ:",
            '  bleu: stored default, now {"tokenize": "intl"}',
        ]
    )
    stored = json.loads((project.path / "__baselines__" / "test_eval.json").read_text())
    assert "bleu" not in stored["signature"]


def test_a_schema_1_baseline_is_still_compared_with_a_note(project: pytest.Pytester) -> None:
    path = project.path / "__baselines__" / "test_eval.json"
    document = json.loads(path.read_text())
    old = {
        "eval": "test_eval.py",
        "schema_version": 1,
        "n": 8,
        "metrics": document["metrics"],
        "signature": {**document["signature"], "dataset": "rows.jsonl", "dataset_sha256": "00"},
    }
    path.write_text(json.dumps(old))
    result, entry = _report(project)
    assert result.ret == 0
    assert entry["baseline"]["status"] == "not paired"
    result.stdout.fnmatch_lines(
        [
            "  test_eval.py: rows not paired: the baseline __baselines__/test_eval.json is of "
            "schema 1*"
        ]
    )


def test_an_update_over_a_schema_1_baseline_says_what_it_accepts(
    project: pytest.Pytester,
) -> None:
    """A schema 1 file has no rows to pair, but its aggregates are compared: an update
    over it names the gate that failed against it too."""
    path = project.path / "__baselines__" / "test_eval.json"
    document = json.loads(path.read_text())
    old = {"eval": "test_eval.py", "schema_version": 1, "n": 8, "metrics": document["metrics"]}
    path.write_text(json.dumps({**old, "signature": document["signature"]}))
    (project.path / "rows.jsonl").write_text(jsonl([_row(i, tokens=150) for i in range(8)]))
    result = project.runpytest("--ragmetrics-update-baseline")
    result.stdout.fnmatch_lines(["*which it now accepts: tokens.mean <= 1.2x baseline FAILS*"])


APPEARING = """
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_answers(row, overlap, f1, tokens):
    overlap(row); f1(row); tokens(row)
    if row.id == "q3":  # long after the first row reported, without a baseline to pair with
        here = Path(__file__).parent
        shutil.copy(here / "kept.json", here / "__baselines__" / "test_eval.json")
"""


def test_a_baseline_that_appears_while_the_rows_run_is_refused(project: pytest.Pytester) -> None:
    """Rows digest their inputs only for an eval with a baseline to pair them with (or one
    to write): a baseline stored while the rows ran finds rows it cannot pair, and says so
    rather than comparing with none of them."""
    folder = project.path / "__baselines__"
    (folder / "test_eval.json").rename(project.path / "kept.json")
    project.makepyfile(test_eval=APPEARING)
    result = project.runpytest()
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "overlap.mean >= baseline: cannot be checked",
            "the baseline __baselines__/test_eval.json appeared while the rows ran, so this run "
            "cannot pair its rows with it: run again",
        ]
    )
    result = project.runpytest()  # the next run finds it before its rows report
    assert result.ret == 0
    result.assert_outcomes(passed=10)


def test_a_broken_baseline_fails_its_gates_and_nothing_else(project: pytest.Pytester) -> None:
    path = project.path / "__baselines__" / "test_eval.json"
    path.write_text(path.read_text().replace('"mean": 100.0', '"mean": "100"', 1))
    result = project.runpytest()
    assert result.ret == 1
    result.assert_outcomes(passed=8, failed=2)
    result.stdout.fnmatch_lines(['*metrics.tokens.mean: expected a number, got "100"*'])
    path.write_bytes(b"\xff" + path.read_bytes())
    assert project.runpytest().ret == 1


def test_a_baseline_with_a_row_twice_is_refused_until_rewritten(
    project: pytest.Pytester,
) -> None:
    """A merge that leaves a row id twice is not read as "the later entry wins": the
    file's gates fail naming the id and the file, with the command that rewrites it."""
    path = project.path / "__baselines__" / "test_eval.json"
    lines = path.read_text().splitlines(keepends=True)
    q1 = next(i for i, line in enumerate(lines) if line.startswith('    "q1": '))
    lines.insert(q1 + 1, lines[q1])
    path.write_text("".join(lines))
    result = project.runpytest()
    result.assert_outcomes(passed=8, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*__baselines__/test_eval.json: not a pytest-ragmetrics baseline: rows: row ids "
            "stored more than once: 'q1' (2 times)*",
            "*this accepts them as the reference): "
            "pytest test_eval.py --ragmetrics-update-baseline",
        ]
    )
    assert project.runpytest("--ragmetrics-update-baseline").ret == 0
    assert path.read_text().count('"q1": ') == 1
    project.runpytest().assert_outcomes(passed=10)


def test_an_update_writes_an_ordinary_file_and_cleans_up_after_a_killed_one(
    project: pytest.Pytester,
) -> None:
    folder = project.path / "__baselines__"
    leftover = folder / ".test_eval.json.k1ll3d.tmp"
    leftover.write_text("{")
    stale = 1_000_000_000  # 2001: long before any write in progress
    os.utime(leftover, (stale, stale))
    old = os.umask(0o022)
    try:
        assert project.runpytest("--ragmetrics-update-baseline").ret == 0
    finally:
        os.umask(old)
    assert [p.name for p in folder.iterdir()] == ["test_eval.json"]
    assert (folder / "test_eval.json").stat().st_mode & 0o777 == 0o644


def test_no_baseline_yet_fails_saying_that_storing_one_accepts_this_run(
    shared_cache: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(shared_cache))
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=EVAL)
    (pytester.path / "rows.jsonl").write_text(jsonl([_row(0)]))
    (pytester.path / "thresholds.toml").write_text(GATES)
    result = pytester.runpytest()
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "no baseline is stored at __baselines__/test_eval.json",
            "store this run's values as the baseline (this accepts them as the reference): "
            "pytest test_eval.py --ragmetrics-update-baseline",
        ]
    )


REPOSITORY = Path(__file__).resolve().parents[2]


def _thresholds_of(eval_name: str) -> str:
    """The project's thresholds.toml with the gate tables of one eval only (the others'
    modules are not in the test's project, which would be a usage error)."""
    document = tomllib.loads((REPOSITORY / "thresholds.toml").read_text())
    settings = document["settings"]
    tables = {
        "settings": {k: v for k, v in settings.items() if not isinstance(v, dict)},
        # [settings.prices]: a table of tables, each model's price an inline table
        **{f"settings.{k}": v for k, v in settings.items() if isinstance(v, dict)},
        "gates": {k: v for k, v in document["gates"].items() if not isinstance(v, dict)},
        f'gates."{eval_name}"': document["gates"][eval_name],
    }
    return "".join(
        f"[{table}]\n" + "".join(f"{json.dumps(k)} = {_toml(v)}\n" for k, v in body.items())
        for table, body in tables.items()
    )


def _toml(value: object) -> str:
    """A value as TOML: JSON's spelling, but a table inline (``{ prompt = 0.15, ... }``)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def test_the_bundled_grounding_eval_catches_a_changed_log(pytester: pytest.Pytester) -> None:
    """The example eval, its committed baseline and the project's thresholds.toml, run on a
    log of the same questions whose prompts are half as long again, a quarter of which
    cite a document they were not given, and whose last three rows are gone."""
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_grounding.py").write_bytes(
        (REPOSITORY / "evals" / "test_grounding.py").read_bytes()
    )
    (pytester.path / "thresholds.toml").write_text(_thresholds_of("evals/test_grounding.py"))
    # The project's own metric numbers_cited, which the eval records and the gates name.
    (pytester.path / "conftest.py").write_bytes((REPOSITORY / "conftest.py").read_bytes())
    baseline = pytester.path / "evals" / "__baselines__" / "test_grounding.json"
    baseline.parent.mkdir()
    baseline.write_bytes((REPOSITORY / "evals/__baselines__/test_grounding.json").read_bytes())
    rows = [
        json.loads(line)
        for line in (REPOSITORY / "evals/data/grounded.jsonl").read_text().splitlines()
    ]
    changed = []
    for i, row in enumerate(rows[:-3]):
        row["tokens"] = [  # the bundled rows log each call: retrieve, then generate
            {**call, "prompt_tokens": call["prompt_tokens"] * 3 // 2} for call in row["tokens"]
        ]
        if i % 4 == 0:
            row["answer"] = row["answer"].replace("[CIT:", "[CIT:gone-")
        changed.append(row)
    (pytester.path / "evals" / "data").mkdir()
    (pytester.path / "evals" / "data" / "grounded.jsonl").write_text(jsonl(changed))
    # importlib: the copied module's name is that of tests/test_grounding.py
    result = pytester.runpytest("evals", "--import-mode=importlib", "--ragmetrics-json=r.json")
    assert result.ret == 1
    (entry,) = json.loads((pytester.path / "r.json").read_text())["evals"]
    gates = {gate["name"]: gate for gate in entry["gates"]}
    assert gates["tokens.mean"]["status"] == gates["overlap.mean"]["status"] == "failed"
    stored = json.loads(baseline.read_text())["rows"]
    dropped = {row["id"] for i, row in enumerate(rows[:-3]) if i % 4 == 0}
    for gate in ("tokens.mean", "overlap.mean"):
        regressed = {change["id"] for change in gates[gate]["regressed"]}
        assert regressed, gate
        assert all(
            change["after"] > 1.2 * change["before"]
            if gate == "tokens.mean"
            else change["after"] < change["before"]
            for change in gates[gate]["regressed"]
        )
        assert all(row_id in stored for row_id in regressed)
    # only answers that lost their citations can have lost support
    assert {change["id"] for change in gates["overlap.mean"]["regressed"]} <= dropped
    # nor their numbers' sources: a citation to a missing document supports no number
    assert gates["numbers_cited.pooled"]["status"] == "failed"
    assert {change["id"] for change in gates["numbers_cited.pooled"]["regressed"]} <= dropped
    assert entry["baseline"]["removed_ids"] == [row["id"] for row in rows[-3:]]


WITH_ABSTAIN = EVAL.replace("tokens):", "tokens, abstain):").replace(
    "tokens(row)", "tokens(row); abstain(row)"
)


def test_a_passing_gate_names_its_regressed_rows_and_grounding_counts_say_what_they_count(
    shared_cache: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(shared_cache))
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eval=WITH_ABSTAIN)
    (pytester.path / "rows.jsonl").write_text(jsonl([_row(i) for i in range(8)]))
    (pytester.path / "thresholds.toml").write_text('[gates]\n"tokens.mean" = "<= 1.2x baseline"\n')
    assert pytester.runpytest("--ragmetrics-update-baseline").ret == 0
    # q1's tokens rise by half: the mean, 106.25, stays within 1.2 x 100, but q1 on its own
    # breaks the rule; q9 is new, so the stored baseline's pairing is listed in full.
    rows = [_row(i, tokens=150 if i == 1 else 100) for i in range(8)] + [_row(7) | {"id": "q9"}]
    (pytester.path / "rows.jsonl").write_text(jsonl(rows))
    result, entry = _report(pytester)
    assert result.ret == 0
    (gate,) = entry["gates"]
    assert (gate["status"], gate["regressed"]) == (
        "passed",
        [{"id": "q1", "before": 100.0, "after": 150.0}],
    )
    # no answer lost its grounding, and the line says that is what it counts
    result.stdout.fnmatch_lines(
        [
            "Stored baselines (rows paired by id):",
            "  test_eval.py: 8 of 8 stored rows paired (coverage 1.000): 1 added",
            "    added (not in the baseline) (1): q9",
            "    IDK → supported (0): none",
            "    supported → unsupported (0): none",
            "*",
            "Passing gates with rows that break the rule on their own:",
            "  test_eval.py::gate::tokens.mean (1): q1 100 → 150",
        ]
    )
    result.stdout.no_fnmatch_line("*regressed (0)*")
    markdown = (pytester.path / "r.md").read_text()
    assert "regressed (0)" not in markdown
    assert "passes, but 1 paired row(s) break the rule on their own: q1 |" in markdown
    html = (pytester.path / "r.html").read_text()
    assert "passes, but 1 paired row(s) break the rule on their own</span>: " in html
