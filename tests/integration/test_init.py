"""``pytest --ragmetrics-init=DIR``: the starter passes at once, fails on an edited row,
never overwrites a file, and respects a pytest configuration already there.

The starter's numbers, by hand from pytest_ragmetrics/plugin/starter/answers.jsonl
(SQuAD token F1 after dropping the citation marker, articles and punctuation):
  q1 "canberra is capital of australia" vs "canberra": P 1/5, R 1 -> F1 1/3
  q2 "hamlet was written by william shakespeare" vs "william shakespeare": 2/6, 1 -> 1/2
  q3 "water boils at 100 degrees celsius at sea level" vs "100 degrees celsius": 3/9, 1 -> 1/2
  q4 "i dont know" vs "it does not run on sundays": no token shared -> 0
  q5 "mercury" vs "mercury" -> 1
  f1.mean = (1/3 + 1/2 + 1/2 + 0 + 1) / 5; tokens: 412, 388, 405, 351, 296 -> mean 370.4
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragmetrics.plugin.init import BASELINE, InitError, accept_first_baseline, write
from pytest_ragmetrics.plugin.init import STARTER as FILES

F1_MEAN = (1 / 3 + 1 / 2 + 1 / 2 + 0 + 1) / 5
TOKENS_MEAN = (412 + 388 + 405 + 351 + 296) / 5
WRITTEN = [
    "pytest.ini",
    "thresholds.toml",
    "evals/test_first.py",
    "evals/data/answers.jsonl",
    "evals/__baselines__/test_first.json",
]


def _files(folder: Path) -> list[str]:
    """The files under ``folder``, but bytecode: running the starter eval to store its
    baseline imports it, and Python writes its bytecode unless PYTHONDONTWRITEBYTECODE is
    set, which is the environment's choice, not the plugin's."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def _gates(report: Path) -> dict[str, dict[str, object]]:
    (entry,) = json.loads(report.read_text(encoding="utf-8"))["evals"]
    return {gate["name"]: gate for gate in entry["gates"]}


@pytest.mark.parametrize("spelling", ["equals", "space"])
def test_the_starter_passes_then_fails_on_an_edited_row(
    pytester: pytest.Pytester, spelling: str
) -> None:
    args = (
        ["--ragmetrics-init=starter"] if spelling == "equals" else ["--ragmetrics-init", "starter"]
    )
    done = pytester.runpytest(*args)
    assert done.ret == 0
    folder = pytester.path / "starter"
    assert _files(folder) == sorted(WRITTEN)
    done.stdout.fnmatch_lines(
        [
            "ragmetrics: wrote a starter eval in starter",
            "*evals/__baselines__/test_first.json*the first baseline*",
            "*cd starter && pytest evals/*",
            "*pytest --ragmetrics-update-baseline*",
        ]
    )

    # A newcomer's next step: run it, from the folder and from a subfolder.
    report = pytester.path / "first.json"
    pytester.chdir()
    first = pytester.runpytest_subprocess(str(folder / "evals"), f"--ragmetrics-json={report}")
    first.assert_outcomes(passed=5 + 3)
    gates = _gates(report)
    assert gates["f1.mean"]["value"] == pytest.approx(F1_MEAN, abs=1e-12)
    assert gates["tokens.mean"]["baseline"] == pytest.approx(TOKENS_MEAN)
    assert {name: gate["status"] for name, gate in gates.items()} == {
        "idk_citation.sum": "passed",
        "f1.mean": "passed",
        "tokens.mean": "passed",
    }

    # Edit a row: q2 spends 2000 tokens; the mean leaves 1.2x the baseline and the gate
    # names the row. Run from the evals/ subfolder: pytest.ini pins the rootdir.
    data = folder / "evals" / "data" / "answers.jsonl"
    data.write_text(data.read_text().replace('"tokens": 388', '"tokens": 2000'))
    monkey = pytest.MonkeyPatch()
    monkey.chdir(folder / "evals")
    try:
        second = pytester.runpytest_subprocess()
    finally:
        monkey.undo()
    second.assert_outcomes(passed=5 + 2, failed=1)
    mean = (412 + 2000 + 405 + 351 + 296) / 5
    second.stdout.fnmatch_lines(
        [
            f"tokens.mean <= 1.2x baseline FAILS: tokens mean is {mean:g}, outside "
            f"<= {1.2 * TOKENS_MEAN:g} (1.2 × baseline {TOKENS_MEAN:g})",
            "*q2 388 → 2000*",
        ]
    )


def test_nothing_is_overwritten(pytester: pytest.Pytester) -> None:
    folder = pytester.mkdir("mine")
    (folder / "thresholds.toml").write_text('[gates]\n"f1.mean" = ">= 0.9"\n')
    (folder / "evals").mkdir()
    (folder / "evals" / "test_first.py").write_text("def test_mine():\n    pass\n")
    done = pytester.runpytest("--ragmetrics-init", "mine")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(
        [
            "ERROR: --ragmetrics-init *mine: would overwrite thresholds.toml, "
            "evals/test_first.py; nothing was written*"
        ]
    )
    assert _files(folder) == ["evals/test_first.py", "thresholds.toml"]
    assert (folder / "thresholds.toml").read_text() == '[gates]\n"f1.mean" = ">= 0.9"\n'


def test_a_folder_whose_pytest_config_pins_the_rootdir_gets_no_pytest_ini(
    pytester: pytest.Pytester,
) -> None:
    folder = pytester.mkdir("project")
    pyproject = '[tool.pytest.ini_options]\naddopts = "-ra"\n'
    (folder / "pyproject.toml").write_text(pyproject)
    done = pytester.runpytest("--ragmetrics-init=project")
    assert done.ret == 0
    assert "pytest.ini" not in _files(folder)
    assert (folder / "pyproject.toml").read_text() == pyproject
    done.stdout.fnmatch_lines(["*(no pytest.ini: *pyproject.toml already sets the rootdir)"])
    pytester.chdir()
    run = pytester.runpytest_subprocess(str(folder / "evals"))
    run.assert_outcomes(passed=5 + 3)


def test_a_pyproject_without_pytest_config_gets_a_pytest_ini(pytester: pytest.Pytester) -> None:
    folder = pytester.mkdir("project")
    (folder / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    assert pytester.runpytest("--ragmetrics-init=project").ret == 0
    assert (folder / "pytest.ini").is_file()


def test_init_into_a_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".txt", notes="mine")
    done = pytester.runpytest("--ragmetrics-init=notes.txt")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["ERROR: --ragmetrics-init notes.txt: is a file, not a folder"])
    assert (pytester.path / "notes.txt").read_text() == "mine"


def test_init_is_relative_to_the_invocation_directory(pytester: pytest.Pytester) -> None:
    sub = pytester.mkdir("sub")
    monkey = pytest.MonkeyPatch()
    monkey.chdir(sub)
    try:
        done = pytester.runpytest("--ragmetrics-init", "../elsewhere")
    finally:
        monkey.undo()
    assert done.ret == 0
    assert _files(pytester.path / "elsewhere") == sorted(WRITTEN)
    assert not (sub / "elsewhere").exists()


def test_a_failed_first_run_shows_its_output(tmp_path: Path) -> None:
    write(tmp_path, list(FILES))
    (tmp_path / "evals" / "data" / "answers.jsonl").write_text('{"id": "q1", "answer": \n')
    with pytest.raises(InitError) as caught:
        accept_first_baseline(tmp_path)
    message = str(caught.value)
    assert "the starter's files are written, but its first run" in message
    assert "answers.jsonl:1" in message  # the child's own error, naming file:line
    assert not (tmp_path / BASELINE).exists()
