"""Run history (``--ragmetrics-history DIR``): one JSON line per run in ``DIR/history.jsonl``.

Each line is one run's record (schema: docs/reports.md#run-history): when it was
recorded (UTC, ISO 8601), the git commit of the project and whether tracked files had
changes (``null`` for both outside a git checkout), the plugin version, and per eval its
rows, every aggregate and every gate's rule, status, value, bound and baseline: the same
numbers as the report document (``reports.document``), which the record is built from.

The file is only ever appended to, by the controller, once at the end of a completed run.
A line is written with one ``write`` call on a descriptor opened with ``O_APPEND``, so a
run killed before that call leaves nothing behind, and while holding the lock file
``history.jsonl.lock`` beside it, so runs appending at the same time never interleave.
Reading is strict: a line that is not a record is an error naming ``file:line``, since a
log that skipped what it could not read would draw trends through runs that silently went
missing. Blank lines are allowed.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_ragmetrics.config.project import HISTORY_FILE as HISTORY_FILE
from pytest_ragmetrics.files import loads_finite
from pytest_ragmetrics.metrics.catalog import ERRORS

HISTORY_SCHEMA_VERSION = 1
GIT_TIMEOUT = 5.0  # seconds for each git command; git that hangs must not hang the run
GATE_STATUSES = ("passed", "failed", "skipped")


class HistoryError(Exception):
    """A history file that cannot be read or appended to; the message says where."""


class _Invalid(Exception):
    """A line that is not a history record; the message names the faulty key."""


@dataclass(frozen=True)
class GitState:
    """The project's checkout: the commit ``HEAD`` names, and whether tracked files
    differ from it (untracked files, such as the reports a run writes, do not count)."""

    commit: str
    dirty: bool

    @property
    def short(self) -> str:
        """Seven hex digits, with ``*`` when the checkout had changes."""
        return self.commit[:7] + ("*" if self.dirty else "")


@dataclass(frozen=True)
class GateRecord:
    """One gate of one eval in one run. ``value``, ``bound`` and ``baseline`` are ``None``
    when the gate had none (skipped, or not checkable), as in the report document."""

    name: str
    rule: str
    status: str
    value: float | None
    bound: float | None
    baseline: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rule": self.rule,
            "status": self.status,
            "value": self.value,
            "bound": self.bound,
            "baseline": self.baseline,
        }


@dataclass(frozen=True)
class EvalRecord:
    """One eval (or one system of an eval) in one run: its rows and aggregates."""

    name: str
    label: str
    system: str | None
    n: int
    dataset_rows: int
    errors: int
    metrics: Mapping[str, Mapping[str, float | None]]
    gates: tuple[GateRecord, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "system": self.system,
            "n": self.n,
            "dataset_rows": self.dataset_rows,
            ERRORS: self.errors,
            "metrics": {name: dict(stats) for name, stats in self.metrics.items()},
            "gates": [gate.as_dict() for gate in self.gates],
        }


@dataclass(frozen=True)
class RunRecord:
    """One line of the history: one run."""

    time: str  # UTC, ISO 8601, when the run was recorded
    git: GitState | None
    plugin_version: str
    evals: tuple[EvalRecord, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": HISTORY_SCHEMA_VERSION,
            "time": self.time,
            "commit": self.git.commit if self.git else None,
            "dirty": self.git.dirty if self.git else None,
            "plugin_version": self.plugin_version,
            "evals": [entry.as_dict() for entry in self.evals],
        }


@dataclass(frozen=True)
class History:
    """A run history as this run found it when it started: the file, the records already
    in it, and the checkout the run's code came from."""

    path: Path
    prior: tuple[RunRecord, ...]
    git: GitState | None


def open_history(directory: Path, project_root: Path) -> History:
    """The history in ``directory``, read (``HistoryError`` on a line that is not a
    record), with the git state of ``project_root``'s checkout."""
    path = history_file(directory)
    return History(path, tuple(read_history(path)), git_state(project_root))


# -- building a record --------------------------------------------------------------------


def _git(folder: Path, *args: str) -> str | None:
    """The output of ``git args`` run in ``folder``; ``None`` when git is not installed,
    fails (not a checkout), or does not answer within ``GIT_TIMEOUT``."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(folder: Path) -> GitState | None:
    """The commit checked out at ``folder`` and whether tracked files changed; ``None``
    when ``folder`` is not in a git checkout or git cannot say."""
    commit = _git(folder, "rev-parse", "--verify", "HEAD")
    if commit is None or not commit.strip():
        return None
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    if status is None:
        return None
    return GitState(commit.strip(), bool(status.strip()))


def utc_now() -> str:
    """The current time in UTC, ISO 8601 to the second: ``2026-11-24T12:30:38+00:00``."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _finite(value: Any) -> float | None:
    """A number for the record: JSON has no NaN or infinity, so those are written as
    ``null`` (the gate's status, ``failed``, says its value was not finite)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _eval_record(entry: Mapping[str, Any]) -> EvalRecord:
    gates = tuple(
        GateRecord(
            str(gate["name"]),
            str(gate["rule"]),
            str(gate["status"]),
            _finite(gate.get("value")),
            _finite(gate.get("bound")),
            _finite(gate.get("baseline")),
        )
        for gate in entry.get("gates") or ()
    )
    metrics = {
        name: {stat: _finite(value) for stat, value in stats.items()}
        for name, stats in (entry.get("metrics") or {}).items()
    }
    return EvalRecord(
        str(entry["name"]),
        str(entry["label"]),
        entry.get("system"),
        int(entry["n"]),
        int(entry["dataset_rows"]),
        int(entry[ERRORS]),
        metrics,
        gates,
    )


def run_record(document: Mapping[str, Any], time: str, git: GitState | None) -> RunRecord:
    """The record of the run whose report document is ``document``."""
    evals = tuple(_eval_record(entry) for entry in document.get("evals") or ())
    return RunRecord(time, git, str(document["plugin_version"]), evals)


# -- writing ------------------------------------------------------------------------------


def history_file(directory: Path) -> Path:
    """The history file of a ``--ragmetrics-history`` directory."""
    return directory / HISTORY_FILE


def record_line(record: RunRecord) -> str:
    """The record as one line: compact JSON with sorted keys, UTF-8 as it is."""
    text = json.dumps(
        record.as_dict(),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    return text + "\n"


def append_record(path: Path, record: RunRecord) -> None:
    """Append ``record`` to the history file at ``path`` as one line, in one write.

    If the file does not end with a newline (a line torn by something other than this
    function), the line starts with one, so the record stays whole on its own line and
    reading names the torn line.
    """
    from filelock import FileLock  # when a run is recorded, not with the plugin

    data = record_line(record).encode("utf-8", errors="backslashreplace")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{path}.lock"):
            _append(path, data)
    except OSError as error:
        raise HistoryError(f"{path}: cannot append to the run history: {_why(error)}") from None


def _ends_a_line(path: Path) -> bool:
    """True when the file is missing, empty, or its last byte ends a line."""
    try:
        with path.open("rb") as stream:
            if stream.seek(0, os.SEEK_END) == 0:
                return True
            stream.seek(-1, os.SEEK_END)
            return stream.read(1) == b"\n"
    except FileNotFoundError:
        return True


def _append(path: Path, data: bytes) -> None:
    """``data`` at the end of ``path`` in one write (the caller holds the lock)."""
    if not _ends_a_line(path):
        data = b"\n" + data
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        written = os.write(descriptor, data)
    finally:
        os.close(descriptor)
    if written != len(data):
        raise HistoryError(
            f"{path}: the run history took {written} of {len(data)} bytes of this run's "
            "record (is the disk full?); remove the torn last line"
        )


def _why(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


# -- reading ------------------------------------------------------------------------------


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where}: expected an object")
    return value


def _text(value: Any, where: str, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Invalid(f"{where}: expected a string")
    return value


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Invalid(f"{where}: expected a count")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"{where}: expected a number or null")
    return float(value)


def _gate(value: Any, where: str) -> GateRecord:
    gate = _object(value, where)
    status = gate.get("status")
    if status not in GATE_STATUSES:
        raise _Invalid(f"{where}.status: expected one of {', '.join(GATE_STATUSES)}")
    return GateRecord(
        _text(gate.get("name"), f"{where}.name"),
        _text(gate.get("rule"), f"{where}.rule"),
        status,
        *(_number(gate.get(key), f"{where}.{key}") for key in ("value", "bound", "baseline")),
    )


def _metrics(value: Any, where: str) -> dict[str, dict[str, float | None]]:
    return {
        name: {
            stat: _number(number, f"{where}.{name}.{stat}")
            for stat, number in _object(stats, f"{where}.{name}").items()
        }
        for name, stats in _object(value, where).items()
    }


def _eval(value: Any, where: str) -> EvalRecord:
    entry = _object(value, where)
    gates = entry.get("gates")
    if not isinstance(gates, list):
        raise _Invalid(f"{where}.gates: expected a list")
    return EvalRecord(
        _text(entry.get("name"), f"{where}.name"),
        _text(entry.get("label"), f"{where}.label"),
        _text(entry.get("system"), f"{where}.system", optional=True),
        _count(entry.get("n"), f"{where}.n"),
        _count(entry.get("dataset_rows"), f"{where}.dataset_rows"),
        _count(entry.get(ERRORS), f"{where}.{ERRORS}"),
        _metrics(entry.get("metrics"), f"{where}.metrics"),
        tuple(_gate(gate, f"{where}.gates[{i}]") for i, gate in enumerate(gates)),
    )


def _git_of(line: Mapping[str, Any]) -> GitState | None:
    commit = _text(line.get("commit"), "commit", optional=True)
    dirty = line.get("dirty")
    if commit is None:
        if dirty is not None:
            raise _Invalid("dirty: expected null when commit is null")
        return None
    if not isinstance(dirty, bool):
        raise _Invalid("dirty: expected true or false")
    return GitState(commit, dirty)


def parse_record(value: Any) -> RunRecord:
    """A record from one parsed line; ``ValueError`` naming the faulty key."""
    try:
        line = _object(value, "the line")
        version = line.get("schema_version")
        if version != HISTORY_SCHEMA_VERSION:
            raise _Invalid(
                f"schema_version {json.dumps(version)} is not {HISTORY_SCHEMA_VERSION} "
                "(written by another version of pytest-ragmetrics?)"
            )
        time = _text(line.get("time"), "time")
        try:
            datetime.fromisoformat(time)
        except ValueError:
            raise _Invalid(f"time: {time!r} is not an ISO 8601 time") from None
        evals = line.get("evals")
        if not isinstance(evals, list):
            raise _Invalid("evals: expected a list")
        return RunRecord(
            time,
            _git_of(line),
            _text(line.get("plugin_version"), "plugin_version"),
            tuple(_eval(entry, f"evals[{i}]") for i, entry in enumerate(evals)),
        )
    except _Invalid as error:
        raise ValueError(str(error)) from None


def read_history(path: Path) -> list[RunRecord]:
    """Every record of the history file at ``path``, in the order they were appended;
    none if there is no file. A line that is not a record is a ``HistoryError`` naming
    ``path:line`` and what is wrong with it."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise HistoryError(f"{path}: cannot read the run history: {_why(error)}") from None
    records = []
    for number, raw in enumerate(content.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            records.append(_line_record(raw))
        except _Invalid as error:
            raise HistoryError(
                f"{path}:{number}: not a run record ({error}); each line is one run's "
                "record as written by --ragmetrics-history: repair or delete this line"
            ) from None
    return records


def _line_record(raw: bytes) -> RunRecord:
    """The record one line holds; ``_Invalid`` saying why it holds none."""
    try:
        value = loads_finite(raw.decode("utf-8"), refusal="is not a JSON number")
    except UnicodeDecodeError as error:
        raise _Invalid(f"not UTF-8 text: {error}") from None
    except RecursionError:
        raise _Invalid("not JSON: nested too deeply") from None
    except ValueError as error:
        raise _Invalid(f"not JSON: {error}") from None
    try:
        return parse_record(value)
    except ValueError as error:
        raise _Invalid(str(error)) from None
