"""Shared helpers for the plugin's integration tests (pytester)."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import settings

from pytest_ragmetrics.plugin.fixtures import METRIC_FIXTURE_MARK

TESTS = Path(__file__).parent

# Hypothesis fails an example that takes longer than 200 ms by default: a timed assertion,
# which on a loaded 2-core machine (xdist workers, a CI neighbour) fails tests whose code
# is right. Speed is measured by the benchmarks, never asserted here.
settings.register_profile("ragmetrics", deadline=None)
settings.load_profile("ragmetrics")

# A test module may import another's helpers by basename (``from test_suite import ...``).
# pytest's default prepend import mode puts a test file's folder on sys.path only when it
# collects that file, so such an import would depend on the order of collection: every
# folder under tests/ goes on sys.path here, once. Basenames are unique across tests/
# (tests/unit/test_layout.py), so a basename names one file.
for _folder in sorted({path.parent for path in TESTS.rglob("test_*.py")}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# Four rows whose metrics are computed by hand in test_plugin.py:
#   f1: 0.5, 1, 0, 0.5 -> mean 0.5      em: 0, 1, 0, 0 -> mean 0.25
#   tokens: 100, 200, 300, 400 -> mean 250; latency_ms 100..400 -> p50 250, p95 385
#   abstain: 0, 0, 1, 0 -> mean 0.25    idk_citation: all 0
ROWS: list[dict[str, Any]] = [
    {
        "id": "r1",
        "answer": "Paris is the capital [CIT:d1].",
        "gold": ["Paris"],
        "contexts": [{"doc_id": "d1", "text": "Paris is the capital of France."}],
        "tokens": 100,
        "latency_ms": 100,
    },
    {
        "id": "r2",
        "answer": "Berlin [1].",
        "gold": "Berlin",
        "contexts": [{"doc_id": "d2", "text": "Berlin is the capital of Germany."}],
        "tokens": [
            {"stage": "rewrite", "prompt_tokens": 50, "completion_tokens": 10},
            {"stage": "generate", "prompt_tokens": 120, "completion_tokens": 20},
        ],
        "latency_ms": 200,
    },
    {
        "id": "r3",
        "answer": "I don't know.",
        "gold": ["Ljubljana"],
        "contexts": [],
        "answerable": False,
        "tokens": 300,
        "latency_ms": 300,
    },
    {
        "id": "r4",
        "answer": "Rome is old [CIT:d4].",
        "gold": ["Rome"],
        "contexts": [{"doc_id": "d4", "text": "Rome is the capital of Italy."}],
        "tokens": {"prompt": 300, "completion": 100},
        "latency_ms": 400,
    },
]

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row, em, f1, abstain, idk_citation, tokens, latency):
    assert idk_citation(row) == 0
    em(row); f1(row); abstain(row); tokens(row); latency(row)
"""

PASSING_GATES = """
[gates]
"idk_citation.sum" = "== 0"
"f1.mean" = ">= 0.5"
"tokens.mean" = "<= 250"
"latency_ms.p50" = "<= 250"
"""

# The three ways a run can go, each in its own process: merging across workers is the
# subject of the tests that use them (tests/integration/test_xdist.py and a few named
# "in every mode"); every other integration test runs in process (IN_PROCESS).
MODES = {"no-xdist": ["-p", "no:xdist"], "n0": ["-n", "0"], "n2": ["-n", "2"]}
IN_PROCESS = "in-process"


def terminal_section(result: pytest.RunResult, title: str) -> list[str]:
    """The lines of the terminal's ``=== title ===`` section, without its title (nor the
    ``- generated xml file -`` line that may follow it)."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(f"=+ {title} =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("==", "- ")))
    return lines[start + 1 : end]


def _plugin_metric() -> None:
    """Stands for a metric fixture the plugin generated, as pytest resolves it."""


setattr(_plugin_metric, METRIC_FIXTURE_MARK, True)


@dataclass
class FakeItem:
    """What the plugin reads of a pytest item, for unit tests: its node id, fixture
    names and parameters (``item.callspec.params``). Every fixture name that is a
    metric's resolves to the plugin's metric fixture, as when no project overrides it."""

    nodeid: str
    fixturenames: list[str]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def callspec(self) -> SimpleNamespace:
        return SimpleNamespace(params=self.params)

    @property
    def _fixtureinfo(self) -> SimpleNamespace:
        plugin = [SimpleNamespace(func=_plugin_metric)]
        return SimpleNamespace(name2fixturedefs=dict.fromkeys(self.fixturenames, plugin))


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


class Project:
    """A pytester project with an eval, its data and thresholds, run in one mode: in this
    process (``IN_PROCESS``, pytester's ``runpytest``) or in a subprocess of ``MODES``."""

    def __init__(self, pytester: pytest.Pytester, mode: str = IN_PROCESS) -> None:
        if mode != IN_PROCESS and mode not in MODES:
            raise ValueError(f"Project: unknown mode {mode!r}; use {IN_PROCESS!r} or {list(MODES)}")
        self.pytester = pytester
        self.mode = mode
        pytester.makeini("[pytest]\n")
        self.write("data/rows.jsonl", jsonl(ROWS))
        self.write("test_eval.py", EVAL)
        self.write("thresholds.toml", PASSING_GATES)

    @property
    def path(self) -> Path:
        return self.pytester.path

    def write(self, name: str, text: str) -> Path:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, *args: str) -> pytest.RunResult:
        if self.mode == IN_PROCESS:
            return self.pytester.runpytest("-p", "no:cacheprovider", *args)
        return self.pytester.runpytest_subprocess(
            *MODES[self.mode], "-p", "no:cacheprovider", *args
        )

    def run_json(self, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        result = self.run("--ragmetrics-json", "report.json", *args)
        return result, json.loads((self.path / "report.json").read_text(encoding="utf-8"))


@pytest.fixture
def project(pytester: pytest.Pytester) -> Project:
    """A fresh project run in this process."""
    return Project(pytester)


@pytest.fixture(params=list(MODES))
def project_in_every_mode(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> Project:
    """A fresh project, once per mode, each run a subprocess: no xdist, -n 0, -n 2.

    Only for tests whose subject is what the controller merges from the workers."""
    return Project(pytester, request.param)


@pytest.fixture(scope="session")
def inprocess_modules() -> None:
    """Import what an in-process run imports lazily, once per test process."""
    import faiss  # noqa: F401
    import hypothesis  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import sentence_transformers  # noqa: F401


@pytest.fixture
def pytester(
    inprocess_modules: None, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """pytest's ``pytester``, created after the heavy modules are imported.

    ``pytester`` snapshots ``sys.modules`` when it is created and restores it afterwards,
    dropping what an in-process run imported. Torch cannot be imported twice into one
    process (the second import crashes it), nor can faiss (after a second import, a later
    search, e.g. ``embedding_space``'s, can die of a segmentation fault), and hypothesis
    costs 2 s a run, so they are imported before the snapshot is taken.

    An xdist worker imports the plugin before pytest's assertion rewriter is installed,
    so every run inside it would warn that the plugin "cannot be rewritten": an artifact
    of testing in one process, not of the plugin, kept out of the runs' output.
    """
    monkeypatch.setenv("PYTEST_ADDOPTS", "-W ignore::pytest.PytestAssertRewriteWarning")
    return pytester


@pytest.fixture
def make_project(pytester: pytest.Pytester) -> Callable[[str], Project]:
    """A project in a mode of the test's choosing (``IN_PROCESS`` or a key of ``MODES``)."""
    return lambda mode: Project(pytester, mode)


def make_read_only(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``directory`` refuse new files and writes, for whoever runs the tests.

    ``chmod`` binds every user but root, who writes anywhere: for root, opening a file
    in the directory for writing fails instead as it does on a read-only file system
    (EROFS), in both calls Python opens files with (``os.open``, under ``tempfile`` and
    the file locks, and ``io.open``, under ``pathlib``)."""
    directory.chmod(0o555)
    if os.geteuid() != 0:
        return
    inside = directory.resolve()

    def refused(path: object) -> bool:
        if not isinstance(path, str | bytes | os.PathLike):
            return False  # a file descriptor
        return Path(os.fsdecode(path)).resolve().parent == inside

    def read_only_error(path: object) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))  # type: ignore[call-overload]

    real_os_open, real_io_open = os.open, io.open
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & writing and dir_fd is None and refused(path):
            raise read_only_error(path)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def io_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if set(mode) & set("wax+") and refused(file):
            raise read_only_error(file)
        return real_io_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)


def block_directory(target: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put in ``target``'s place what a run cannot use as a directory: ``"a file"``, or
    (anything else) a directory that cannot be written (``make_read_only``)."""
    if how == "a file":
        target.write_text("not a directory", encoding="utf-8")
    else:
        target.mkdir()
        make_read_only(target, monkeypatch)
