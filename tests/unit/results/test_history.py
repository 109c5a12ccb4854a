"""The run history file: one JSON line per run, appended whole, read strictly."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.results.history import (
    HISTORY_FILE,
    EvalRecord,
    GateRecord,
    GitState,
    HistoryError,
    RunRecord,
    append_record,
    git_state,
    history_file,
    open_history,
    parse_record,
    read_history,
    record_line,
    run_record,
)

GATES = (
    GateRecord("f1.mean", ">= 0.5", "passed", 0.75, 0.5, None),
    GateRecord("tokens.mean", "<= 1.2x baseline", "failed", 300.0, 240.0, 200.0),
    GateRecord("em.mean", ">= baseline", "skipped", None, None, None),
)
RECORD = RunRecord(
    "2026-11-24T12:30:38+00:00",
    GitState("0123456789abcdef0123456789abcdef01234567", dirty=True),
    "9.9",
    (
        EvalRecord(
            "evals/test_a.py",
            "evals/test_a.py[sys é]",
            "sys é",
            4,
            5,
            1,
            {"f1": {"mean": 0.75, "count": 4.0}, "tokens": {"mean": 300.0}},
            GATES,
        ),
    ),
)


def test_a_record_is_one_line_and_reads_back_equal(tmp_path: Path) -> None:
    line = record_line(RECORD)
    assert line.endswith("\n")
    assert "\n" not in line[:-1]
    assert "sys é" in line  # UTF-8 as it is, not escaped
    assert parse_record(json.loads(line)) == RECORD
    path = tmp_path / HISTORY_FILE
    append_record(path, RECORD)
    append_record(path, RECORD)
    assert read_history(path) == [RECORD, RECORD]


def test_the_line_holds_the_documented_fields() -> None:
    line = json.loads(record_line(RECORD))
    assert set(line) == {"schema_version", "time", "commit", "dirty", "plugin_version", "evals"}
    assert (line["schema_version"], line["dirty"]) == (1, True)
    entry = line["evals"][0]
    assert set(entry) == {
        "name",
        "label",
        "system",
        "n",
        "dataset_rows",
        "errors",
        "metrics",
        "gates",
    }
    assert entry["gates"][1] == {
        "name": "tokens.mean",
        "rule": "<= 1.2x baseline",
        "status": "failed",
        "value": 300.0,
        "bound": 240.0,
        "baseline": 200.0,
    }


def test_outside_git_commit_and_dirty_are_null() -> None:
    record = RunRecord("2026-11-24T12:30:38+00:00", None, "9.9", ())
    line = json.loads(record_line(record))
    assert (line["commit"], line["dirty"]) == (None, None)
    assert parse_record(line) == record


def _document(value: float) -> dict[str, Any]:
    gate = {
        "name": "f1.mean",
        "rule": ">= 0.5",
        "status": "failed",
        "passed": False,
        "value": value,
        "bound": 0.5,
        "baseline": None,
        "message": "long message",
        "regressed": [{"id": "r1", "before": 1.0, "after": 0.0}],
    }
    entry = {
        "name": "evals/test_a.py",
        "label": "evals/test_a.py",
        "system": None,
        "n": 4,
        "dataset_rows": 4,
        "errors": 0,
        "metrics": {"f1": {"mean": value, "count": 4}},
        "rows": [{"id": "r1"}],
        "gates": [gate],
    }
    return {"schema_version": 1, "plugin_version": "9.9", "evals": [entry]}


def test_the_record_takes_the_documents_numbers_and_leaves_rows_and_messages() -> None:
    record = run_record(_document(0.25), "2026-11-24T12:30:38+00:00", None)
    (entry,) = record.evals
    assert entry.metrics == {"f1": {"mean": 0.25, "count": 4.0}}
    assert entry.gates == (GateRecord("f1.mean", ">= 0.5", "failed", 0.25, 0.5, None),)
    assert (entry.n, entry.dataset_rows, entry.errors, entry.system) == (4, 4, 0, None)
    assert "long message" not in record_line(record)
    assert '"r1"' not in record_line(record)


def test_a_number_that_is_not_finite_is_written_as_null() -> None:
    record = run_record(_document(math.nan), "2026-11-24T12:30:38+00:00", None)
    line = json.loads(record_line(record))
    assert line["evals"][0]["metrics"]["f1"]["mean"] is None
    assert line["evals"][0]["gates"][0]["value"] is None


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state_of_a_checkout(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    commit = _git(tmp_path, "log", "-1", "--format=%H")
    (tmp_path / "sub").mkdir()
    (tmp_path / "untracked.html").write_text("a report")
    assert git_state(tmp_path / "sub") == GitState(commit, dirty=False)
    (tmp_path / "a.txt").write_text("two\n")
    assert git_state(tmp_path) == GitState(commit, dirty=True)
    assert GitState(commit, dirty=True).short == commit[:7] + "*"


def test_no_git_state_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert git_state(tmp_path) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_no_git_state_in_a_checkout_without_commits(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    assert git_state(tmp_path) is None


def test_no_git_state_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert git_state(tmp_path) is None


def test_a_missing_file_is_an_empty_history(tmp_path: Path) -> None:
    assert read_history(tmp_path / "none" / HISTORY_FILE) == []
    assert history_file(tmp_path) == tmp_path / "history.jsonl"
    found = open_history(tmp_path / "new", tmp_path)
    assert (found.path, found.prior) == (tmp_path / "new" / HISTORY_FILE, ())


def test_blank_lines_are_allowed(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    path.write_text("\n" + record_line(RECORD) + "  \n\n" + record_line(RECORD))
    assert read_history(path) == [RECORD, RECORD]


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ('{"schema_version": 1, "time": "2026', "not JSON"),
        ("[1, 2]", "the line: expected an object"),
        ('{"schema_version": 2}', "schema_version 2 is not 1"),
        ("NaN", "not JSON: NaN is not a JSON number"),
        ("\udcff", "not UTF-8 text"),
    ],
)
def test_a_malformed_line_is_an_error_naming_file_and_line(
    tmp_path: Path, bad: str, said: str
) -> None:
    path = tmp_path / HISTORY_FILE
    content = record_line(RECORD) + "\n" + bad + "\n" + record_line(RECORD)
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    with pytest.raises(HistoryError) as raised:
        read_history(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:3: not a run record")
    assert said in message
    assert "repair or delete this line" in message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"time": "yesterday"}, "time: 'yesterday' is not an ISO 8601 time"),
        ({"commit": None, "dirty": True}, "dirty: expected null when commit is null"),
        ({"evals": {}}, "evals: expected a list"),
        ({"plugin_version": 1}, "plugin_version: expected a string"),
    ],
)
def test_a_record_with_a_wrong_key_names_it(change: dict[str, Any], said: str) -> None:
    line = {**json.loads(record_line(RECORD)), **change}
    with pytest.raises(ValueError, match=said):
        parse_record(line)


def test_a_wrong_gate_status_is_named_with_its_place() -> None:
    line = json.loads(record_line(RECORD))
    line["evals"][0]["gates"][2]["status"] = "maybe"
    with pytest.raises(ValueError, match=r"evals\[0\]\.gates\[2\]\.status: expected one of"):
        parse_record(line)


def test_a_torn_last_line_keeps_the_next_record_whole(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    path.write_text(record_line(RECORD) + record_line(RECORD)[:40])
    append_record(path, RECORD)
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    assert parse_record(json.loads(lines[2])) == RECORD
    with pytest.raises(HistoryError, match=r"history\.jsonl:2: not a run record"):
        read_history(path)


def test_a_history_that_cannot_be_appended_to_is_an_error(tmp_path: Path) -> None:
    (tmp_path / HISTORY_FILE).mkdir()
    with pytest.raises(HistoryError, match="cannot append to the run history"):
        append_record(tmp_path / HISTORY_FILE, RECORD)


_APPENDER = """
import sys
from pathlib import Path
from pytest_ragmetrics.results.history import EvalRecord, RunRecord, append_record

name, count, path = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
metrics = {f"metric_{i}": {"mean": float(i), "count": 1.0} for i in range(450)}
for i in range(count):
    entry = EvalRecord(f"{name}-{i}", name, None, i, count, 0, metrics, ())
    append_record(path, RunRecord("2026-11-24T12:30:38+00:00", None, "9.9", (entry,)))
"""


def test_runs_appending_at_once_never_interleave(tmp_path: Path) -> None:
    """Two processes append 150 lines of about 18 kB each at the same time: every line of
    the file is one whole record, and each process's records are all there, in order."""
    path = tmp_path / HISTORY_FILE
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, name, "150", str(path)], env=env)
        for name in ("a", "b")
    ]
    assert [writer.wait() for writer in writers] == [0, 0]
    assert len(record_line(read_history(path)[0]).encode()) > 16_000
    records = read_history(path)
    assert len(path.read_bytes().splitlines()) == len(records) == 300
    for name in ("a", "b"):
        ours = [r.evals[0].name for r in records if r.evals[0].label == name]
        assert ours == [f"{name}-{i}" for i in range(150)]
