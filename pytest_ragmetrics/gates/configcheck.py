"""Configuration that would make a gate go quiet, found before the verdict is trusted.

A gate that never runs passes nothing and fails nothing: the run exits 0 while a
regression goes through. These mistakes are usage errors (exit code 4), not notes:

* no thresholds file is in force, yet an eval has stored baselines (``__baselines__/``
  beside its module) or compares systems (``compare_to``): the gates that would use them
  were not loaded, typically because the thresholds file was not found;
* a ``[gates."<eval>"]`` table names no eval that ran, and the run did not select a subset
  of the evals (a module path that does not exist is always an error; a table of an
  existing module that this run did not select is a note);
* a ``[gates."<eval>[<system>]"]`` table names a system that eval's dataset does not have.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ragmetrics.config.project import INI_KEY, OPTION
from pytest_ragmetrics.config.thresholds import Thresholds
from pytest_ragmetrics.files import THRESHOLDS_NAME
from pytest_ragmetrics.results.baseline import BASELINE_DIR
from pytest_ragmetrics.results.summary import EvalInfo


@dataclass
class Findings:
    """What the check found: usage errors, and notes for the terminal summary."""

    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _split_label(name: str) -> tuple[str, str | None]:
    """``"evals/x.py[config_a]"`` → ``("evals/x.py", "config_a")``."""
    if name.endswith("]") and "[" in name:
        base, _, system = name[:-1].rpartition("[")
        return base, system
    return name, None


def _without_thresholds(infos: Iterable[EvalInfo], root: Path) -> list[str]:
    errors = []
    how = (
        f"put {THRESHOLDS_NAME} in the project (it is searched at and above the test paths, "
        f"up to the ini file's folder or the repository root), or name it with {OPTION} "
        f"PATH or the ini key {INI_KEY}"
    )
    seen: set[Path] = set()
    for info in infos:
        stored = (root / info.module).parent / BASELINE_DIR
        if stored not in seen and stored.is_dir():
            seen.add(stored)
            errors.append(
                f"no thresholds file is in force, but {stored} holds stored baselines: the "
                f"gates that use them would not run; {how}"
            )
        if info.compared:
            errors.append(
                f"no thresholds file is in force, but {info.label} compares systems "
                f"(compare_to={info.compare_to!r}): no gate would compare them; {how}"
            )
    return errors


def check_configuration(
    infos: Iterable[EvalInfo], thresholds: Thresholds, root: Path, narrowed: bool
) -> Findings:
    """Check the evals that run against the thresholds in force.

    ``narrowed`` is True when the run selected a subset of the tests (-k, -m, --deselect,
    --lf, or test paths on the command line), so a table of a custom-named eval that did
    not run may be for one that was not selected.
    """
    infos = list({info.label: info for info in infos}.values())  # one per eval and system
    findings = Findings()
    if thresholds.path is None:
        findings.errors += _without_thresholds(infos, root)
        return findings
    systems = {info.name: info.systems for info in infos}  # every system of each dataset
    plain = {info.name for info in infos if info.system is None}
    labels = {info.label for info in infos}
    unselected: list[str] = []
    for name in thresholds.overrides:
        if name in systems or name in labels:
            continue
        table = f'{thresholds.path}: [gates."{name}"]'
        base, system = _split_label(name)
        if system is not None and base in plain:
            findings.errors.append(
                f"{table} names system {system!r}, but {base} runs as one eval (its rows name "
                f'at most one system and nothing is compared): use [gates."{base}"]'
            )
        elif system is not None and base in systems:
            if system in systems[base]:
                unselected.append(name)  # a system this run left out (-k)
                continue
            known = ", ".join(systems[base]) or "none (its rows name no system)"
            findings.errors.append(
                f"{table} names system {system!r}, which {base} does not have; its systems: {known}"
            )
        elif (root / base).is_file():
            unselected.append(name)
        elif "/" in base or base.endswith(".py"):
            meant = _close_eval(base, root, systems)
            findings.errors.append(
                f"{table} names no eval: there is no {root / base}{meant}; "
                f"an eval's name is its module's path relative to the project root {root} (or "
                "the marker's name=)"
            )
        elif narrowed:
            findings.notes.append(f"{table}: no eval of that name was selected in this run")
        else:
            ran = ", ".join(sorted(systems)) or "none"
            findings.errors.append(f"{table} names no eval that ran; the evals of this run: {ran}")
    if unselected:
        findings.notes.append(
            f"{thresholds.path}: gate tables of evals this run did not select: "
            + ", ".join(unselected)
        )
    return findings


def _close_eval(base: str, root: Path, ran: Iterable[str]) -> str:
    """`` (did you mean "<eval>"?)`` for a table name one slip from an eval that ran or a
    module beside the one it names, else nothing."""
    folder = (root / base).parent
    beside = (
        [path.relative_to(root).as_posix() for path in folder.glob("*.py")]
        if folder.is_dir() and folder.is_relative_to(root)
        else []
    )
    close = difflib.get_close_matches(base, sorted({*ran, *beside}), n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""
