"""``pytest --ragmetrics-init=DIR``: write a starter project that passes at once.

The starter is a 5-row dataset in the documented JSONL format, an eval over it, a
``thresholds.toml`` with an absolute gate and a baseline gate, and a ``pytest.ini`` that
makes ``DIR`` pytest's rootdir (so ``pytest`` finds them from any subfolder). A baseline
gate cannot be checked without a stored baseline, and a gate never switches itself off:
so the starter accepts its first baseline the way a user does, by running its own eval
once with ``--ragmetrics-update-baseline`` in a child pytest, and says so. Its output is
shown when that run fails.

Nothing is ever overwritten: when any file the starter would write already exists, it
writes nothing and names the files in the way. A ``DIR`` whose pytest configuration
already pins the rootdir (``pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``)
gets no ``pytest.ini``.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest

from pytest_ragmetrics.files import write_atomic

INIT_OPTION = "--ragmetrics-init"
EVAL = Path("evals/test_first.py")
BASELINE = Path("evals/__baselines__/test_first.json")
ACCEPT = "pytest --ragmetrics-update-baseline"
# A bound on the starter's own run: five rows of deterministic metrics take about a second.
RUN_TIMEOUT_S = 300


@dataclass(frozen=True)
class StarterFile:
    """One file of the starter: where it goes in ``DIR``, its template and what it is."""

    path: Path
    template: str
    about: str


STARTER = (
    StarterFile(Path("pytest.ini"), "pytest.ini", "makes this folder the rootdir"),
    StarterFile(
        Path("thresholds.toml"),
        "thresholds.toml",
        "3 gates: idk_citation.sum == 0, f1.mean >= 0.4, tokens.mean <= 1.2x baseline",
    ),
    StarterFile(EVAL, "test_first.py.tmpl", "the eval: one test, run once per row"),
    StarterFile(
        Path("evals/data/answers.jsonl"), "answers.jsonl", "5 logged questions and answers"
    ),
)


class InitError(Exception):
    """The starter cannot be written (a file in the way, a folder not writable) or its
    first run failed; the message says which and what to do."""


def _has_pytest_config(folder: Path) -> Path | None:
    """The file that already makes ``folder`` pytest's rootdir, if any (pytest's own
    rule: ``pytest.ini`` and ``.pytest.ini`` always; the others only with a pytest section).
    """
    for name in ("pytest.ini", ".pytest.ini"):
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise InitError(f"{pyproject}: cannot be read ({error})") from None
        if "ini_options" in data.get("tool", {}).get("pytest", {}):
            return pyproject
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = folder / name
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read(path, encoding="utf-8")
            except (configparser.Error, UnicodeDecodeError) as error:
                raise InitError(f"{path}: cannot be read ({error})") from None
            if parser.has_section(section):
                return path
    return None


def plan(folder: Path) -> list[StarterFile]:
    """The files to write into ``folder``, or an ``InitError`` naming every file in the way."""
    files = [f for f in STARTER if not (f.path.name == "pytest.ini" and _has_pytest_config(folder))]
    in_the_way = [f.path for f in files if (folder / f.path).exists()]
    if (folder / BASELINE).exists():
        in_the_way.append(BASELINE)
    if in_the_way:
        listed = ", ".join(str(path) for path in in_the_way)
        raise InitError(
            f"{INIT_OPTION} {folder}: would overwrite {listed}; nothing was written (it "
            "never overwrites a file). Choose an empty folder, or move those files away."
        )
    return files


def write(folder: Path, files: list[StarterFile]) -> None:
    """Write the starter's files (each atomically)."""
    templates = resources.files("pytest_ragmetrics.plugin") / "starter"
    for starter in files:
        target = folder / starter.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, (templates / starter.template).read_text(encoding="utf-8"))
        except OSError as error:
            raise InitError(f"{INIT_OPTION} {folder}: cannot write {target}: {error}") from None


def accept_first_baseline(folder: Path) -> None:
    """Run the starter's eval once with ``--ragmetrics-update-baseline`` in a child pytest,
    as a user would; its output is part of the error when it fails."""
    command = [sys.executable, "-m", "pytest", str(EVAL), "--ragmetrics-update-baseline"]
    command += ["-q", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTEST_ADDOPTS": ""}  # the user's addopts are for their tests
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InitError(
            f"{INIT_OPTION} {folder}: the starter's first run did not finish in "
            f"{RUN_TIMEOUT_S} s; its files are written: run `{ACCEPT}` there yourself"
        ) from None
    if done.returncode != 0 or not (folder / BASELINE).is_file():
        raise InitError(
            f"{INIT_OPTION} {folder}: the starter's files are written, but its first run "
            f"(`{' '.join(command[1:])}` in {folder}) exited with {done.returncode} and "
            f"stored no baseline:\n{done.stdout}{done.stderr}"
        )


def describe(folder: Path, shown: str, files: list[StarterFile]) -> list[str]:
    """What was written and what to do next."""
    written = [(str(f.path), f.about) for f in files]
    written.append((str(BASELINE), "the first baseline, accepted from the 5 rows"))
    width = max(len(path) for path, _ in written)
    lines = [f"ragmetrics: wrote a starter eval in {shown}"]
    lines += [f"  {path:<{width}}  {about}" for path, about in written]
    if not any(f.path.name == "pytest.ini" for f in files):
        lines.append(f"  (no pytest.ini: {_has_pytest_config(folder)} already sets the rootdir)")
    return [
        *lines,
        "next:",
        f"  cd {shown} && pytest evals/    # 5 rows and 3 gates: passes",
        "  edit a row of evals/data/answers.jsonl (say, tokens 2000), run again: the "
        "baseline gate fails and names the row",
        f"  {ACCEPT}    # accept a run's values as the new baseline; commit evals/__baselines__/",
    ]


def run_init(config: pytest.Config, out: Callable[[str], object]) -> int:
    """The ``--ragmetrics-init`` command: write the starter into the folder given
    (relative to the invocation directory), accept its first baseline, say what to do."""
    given = config.getoption("ragmetrics_init")
    folder = config.invocation_params.dir / given
    if folder.exists() and not folder.is_dir():
        raise pytest.UsageError(f"{INIT_OPTION} {given}: is a file, not a folder")
    try:
        files = plan(folder)
        write(folder, files)
        accept_first_baseline(folder)
    except InitError as error:
        raise pytest.UsageError(str(error)) from None
    for line in describe(folder, given, files):
        out(line + "\n")
    return 0
