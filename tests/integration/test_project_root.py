"""The thresholds file and the project root are found the same way from anywhere, and
configuration that would silence a gate is a usage error (exit code 4), never exit 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.project import ROWS, jsonl

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, em, f1, tokens, latency):
    em(row); f1(row); tokens(row); latency(row)
"""

THRESHOLDS = """
[gates]
"f1.mean" = ">= baseline"
"tokens.mean" = "<= 1.2x baseline"

[gates."evals/test_eval.py"]
"latency_ms.p50" = "<= 250"
"""


def _project(root: Path, thresholds: str | None = THRESHOLDS) -> None:
    """A project with no pytest ini file: evals/test_eval.py over four rows."""
    (root / "evals" / "data").mkdir(parents=True)
    (root / "evals" / "data" / "rows.jsonl").write_text(jsonl(ROWS))
    (root / "evals" / "test_eval.py").write_text(EVAL)
    if thresholds is not None:
        (root / "thresholds.toml").write_text(thresholds)


def _regress(root: Path) -> None:
    """Every row's tokens grow by half: tokens.mean breaks 1.2x its baseline."""
    rows = [{**row, "tokens": 450} for row in ROWS]
    (root / "evals" / "data" / "rows.jsonl").write_text(jsonl(rows))


def _gates(path: Path) -> str:
    document: dict[str, Any] = json.loads(path.read_text())
    gates = {entry["label"]: entry["gates"] for entry in document["evals"]}
    return json.dumps(gates, sort_keys=True)


def test_the_same_gates_from_the_root_a_subfolder_with_spaced_options_and_elsewhere(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, monkeypatch: Any
) -> None:
    root = pytester.path
    _project(root)
    assert pytester.runpytest("evals", "--ragmetrics-update-baseline").ret == 0
    _regress(root)
    out = tmp_path_factory.mktemp("out")
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "gates.toml"
    shutil.copy(root / "thresholds.toml", elsewhere)
    cache = out / "cache"

    from_root = pytester.runpytest("evals", f"--ragmetrics-json={out / 'root.json'}")
    spaced = pytester.runpytest(
        "evals", "--ragmetrics-cache-dir", str(cache), "--ragmetrics-json", str(out / "sp.json")
    )
    outside = pytester.runpytest(
        "evals", "--ragmetrics-thresholds", str(elsewhere), f"--ragmetrics-json={out / 'el.json'}"
    )
    monkeypatch.chdir(root / "evals")
    from_evals = pytester.runpytest(".", "--ragmetrics-json", str(out / "sub.json"))

    for result in (from_root, spaced, outside, from_evals):
        assert result.ret == 1
        result.stdout.fnmatch_lines(["*_ gate tokens.mean of evals/test_eval.py _*"])
    # pytest's own rootdir did move; the plugin's names did not
    spaced.stdout.fnmatch_lines([f"rootdir: {root.parent}*"])
    from_evals.stdout.fnmatch_lines([f"rootdir: {root / 'evals'}"])
    expected = _gates(out / "root.json")
    assert "latency_ms.p50" in expected  # the eval's own table matched
    for name in ("sp.json", "el.json", "sub.json"):
        assert _gates(out / name) == expected


def test_the_header_names_the_thresholds_file_in_force(pytester: pytest.Pytester) -> None:
    _project(pytester.path)
    result = pytester.runpytest("evals", "--collect-only")
    result.stdout.fnmatch_lines(
        [
            f"ragmetrics: *, thresholds {pytester.path / 'thresholds.toml'} (found above the "
            f"test paths); eval names relative to {pytester.path}"
        ]
    )


def test_test_paths_under_two_thresholds_files_are_refused(pytester: pytest.Pytester) -> None:
    for name in ("one", "two"):
        _project(pytester.path / name)
    result = pytester.runpytest("one/evals", "two/evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the test paths lie under different thresholds.toml files*"])


# -- configuration that would silence a gate ---------------------------------------------


def test_stored_baselines_without_a_thresholds_file_are_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path)
    assert pytester.runpytest("evals", "--ragmetrics-update-baseline").ret == 0
    (pytester.path / "thresholds.toml").rename(pytester.path / "gates.toml")
    _regress(pytester.path)
    result = pytester.runpytest("evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: no thresholds file is in force, but */evals/__baselines__ holds stored *"]
    )


def test_under_xdist_the_same_configuration_is_refused_when_the_rows_are_back(
    pytester: pytest.Pytester,
) -> None:
    # Under xdist the controller collects nothing, so it checks the evals that reported.
    _project(pytester.path, THRESHOLDS + '\n[gates."evals/test_evl.py"]\n"f1.mean" = ">= 0"\n')
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*names no eval: there is no */evals/test_evl.py*"])
    result.stdout.no_fnmatch_line("*::gate::*")  # no gate verdict is shown for such a run


SYSTEMS = [
    {**row, "system": system, "id": f"q{i}"}
    for system in ("base", "new")
    for i, row in enumerate(ROWS)
]


def test_comparing_systems_without_a_thresholds_file_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path, thresholds=None)
    (pytester.path / "evals" / "data" / "rows.jsonl").write_text(jsonl(SYSTEMS))
    eval_file = pytester.path / "evals" / "test_eval.py"
    eval_file.write_text(EVAL.replace('"data/rows.jsonl"', '"data/rows.jsonl", compare_to="base"'))
    result = pytester.runpytest("evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evals/test_eval.py[[]new[]] compares systems*"])
    assert sum("compares systems" in line for line in result.stderr.lines) == 1  # once


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "evals/test_evl.py",
            '*names no eval: there is no */evals/test_evl.py (did you mean "evals/test_eval.py"?)*',
        ),
        ("evals/test_eval.py[nope]", "*names system 'nope', but evals/test_eval.py runs as one*"),
        ("my-eval", '*[[]gates."my-eval"[]] names no eval that ran*'),
    ],
)
def test_a_gate_table_that_names_no_eval_is_a_usage_error(
    pytester: pytest.Pytester, table: str, message: str
) -> None:
    _project(pytester.path, THRESHOLDS + f'\n[gates."{table}"]\n"f1.mean" = ">= 0.9"\n')
    result = pytester.runpytest()  # no test path: the whole project
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_table_naming_a_system_the_dataset_lacks_is_an_error_on_any_selection(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path, THRESHOLDS + '\n[gates."evals/test_eval.py[nwe]"]\n')
    (pytester.path / "evals" / "data" / "rows.jsonl").write_text(jsonl(SYSTEMS))
    for selection in (["evals"], ["evals", "-k", "new"]):
        result = pytester.runpytest(*selection)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(
            ["*names system 'nwe', which evals/test_eval.py does not have; its systems: base, new"]
        )


def test_tables_of_evals_this_run_did_not_select_are_a_note(pytester: pytest.Pytester) -> None:
    tables = '[gates."my-eval"]\n"f1.mean" = ">= 0.9"\n[gates."evals/test_other.py"]\n'
    _project(pytester.path, THRESHOLDS + tables)
    (pytester.path / "evals" / "test_other.py").write_text(EVAL)
    assert pytester.runpytest("evals", "--ragmetrics-update-baseline").ret == 0
    result = pytester.runpytest("evals/test_eval.py")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            '*[[]gates."my-eval"[]]: no eval of that name was selected in this run',
            "*gate tables of evals this run did not select: evals/test_other.py",
        ]
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[gates]\n"f1.mean" = ">= 0.5"\n# caf\xe9\n', "*thresholds.toml: not UTF-8 text*"),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "*thresholds.toml: not valid TOML*"),
        (b'[gates]\n"f1.mean" = ">= 1e999"\n', "*1e999 is not a finite number*"),
    ],
)
def test_a_broken_thresholds_file_is_a_usage_error_not_a_crash(
    pytester: pytest.Pytester, content: bytes, message: str
) -> None:
    _project(pytester.path)
    (pytester.path / "thresholds.toml").write_bytes(content)
    result = pytester.runpytest("evals")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_run_from_a_subfolder_imports_the_root_conftest_and_its_metrics(
    pytester: pytest.Pytester, monkeypatch: Any
) -> None:
    """With no ini file, pytest run inside ``evals/`` stops looking for conftest files
    there; the metric the project's root conftest.py declares must still be known to the
    gate that names it, as it is from the root."""
    root = pytester.path
    _project(root, '[gates."evals/test_eval.py"]\n"words.mean" = ">= 2"\n')
    (root / "conftest.py").write_text(
        "from pytest_ragmetrics import metric\n\n\n"
        '@metric(requires=("answer",))\n'
        "def words(row):\n"
        '    """Words in the answer."""\n'
        '    return len(row["answer"].split())\n'
    )
    (root / "evals" / "test_eval.py").write_text(
        EVAL.replace(
            "def test_answers(row, em, f1, tokens, latency):",
            "def test_answers(row, em, f1, tokens, latency, words):",
        ).replace("latency(row)", "latency(row); words(row)")
    )
    from_root = pytester.runpytest("evals")
    monkeypatch.chdir(root / "evals")
    for result in (from_root, pytester.runpytest("."), pytester.runpytest()):
        assert result.ret == 0, result.stdout.str()
        result.assert_outcomes(passed=len(ROWS) + 1)
    given = pytester.runpytest(".", f"--confcutdir={root / 'evals'}")  # as the user said
    assert given.ret == pytest.ExitCode.USAGE_ERROR
    given.stderr.fnmatch_lines(["*unknown metric 'words'*"])


def test_a_metric_s_place_is_named_the_same_from_any_folder(
    pytester: pytest.Pytester, monkeypatch: Any
) -> None:
    """Where a metric was declared is shown relative to the project root, so a run from
    ``evals/`` reports the same text as one from the root."""
    root = pytester.path
    _project(root, "")
    (root / "conftest.py").write_text(
        "from pytest_ragmetrics import metric\n\n\n"
        "@metric()\n"
        "def broken(row):\n"
        '    """Always fails."""\n'
        "    return 1 / 0\n"
    )
    (root / "evals" / "test_eval.py").write_text(
        EVAL.replace("latency):", "latency, broken):").replace("latency(row)", "broken(row)")
    )
    from_root = pytester.runpytest("evals")
    monkeypatch.chdir(root / "evals")
    from_evals = pytester.runpytest(".")
    for result in (from_root, from_evals):
        result.assert_outcomes(passed=0, errors=len(ROWS))
        result.stdout.fnmatch_lines(["*broken (conftest.py:4) raised ZeroDivisionError*"])
