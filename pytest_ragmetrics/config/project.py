"""Where a project's thresholds file and root are, found the same way from anywhere.

pytest's rootdir moves with the invocation: run from a subfolder with no ini file, or with
a plugin option written ``--opt value`` (pytest reads its ini files before plugins declare
their options, so it takes ``value`` for a test path), and it lands elsewhere. Eval names,
baseline files and the gate tables that name evals must not move with it, so the plugin
anchors on files instead:

1. ``--ragmetrics-thresholds PATH`` (relative to the invocation directory) is the
   thresholds file;
2. else the ``ragmetrics_thresholds`` ini key, relative to the ini file's directory;
3. else the nearest ``thresholds.toml`` found walking up from each test path of the run
   (a file or node id counts as its folder; with no path, the invocation directory),
   no higher than the project: the walk stops at the ini file's folder or a repository
   root (``.git``, ``.hg``). Paths under different thresholds files are a usage error.

The *project root*, which eval names and the default cache are relative to, is the
directory of the thresholds file found by that walk (case 3), else the ini file's
directory, else pytest's rootdir. An explicit thresholds file elsewhere (case 1) does not
move the root: the walk still finds the project's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_ragmetrics.files import THRESHOLDS_NAME, nearest_thresholds

INI_KEY = "ragmetrics_thresholds"
OPTION = "--ragmetrics-thresholds"
# The run history's file in --ragmetrics-history's directory (``results.history``).
HISTORY_FILE = "history.jsonl"


class ProjectError(Exception):
    """The thresholds file named by an option or the ini file cannot be used."""


@dataclass(frozen=True)
class Project:
    """The thresholds file in force (if any), how it was found, and the project root."""

    root: Path
    thresholds: Path | None
    found_by: str  # for the report header: "--ragmetrics-thresholds", "ini ...", "search"

    def describe(self) -> str:
        """One header line: which thresholds file is in force, and what names are
        relative to."""
        if self.thresholds is None:
            where = f"none (no {THRESHOLDS_NAME} in the test paths' folders or above)"
        else:
            where = f"{self.thresholds} ({self.found_by})"
        return f"thresholds {where}; eval names relative to {self.root}"


def _start_dirs(invocation_dir: Path, args: Iterable[str]) -> list[Path]:
    """The folders the walk starts from: each existing test path's (a file or node id
    counts as its folder), or the invocation directory when no path exists."""
    starts = []
    for arg in args:
        path = (invocation_dir / arg.split("::", 1)[0]).resolve()
        if path.is_file():
            starts.append(path.parent)
        elif path.is_dir():
            starts.append(path)
    return starts or [invocation_dir.resolve()]


def search_thresholds(
    invocation_dir: Path, args: Iterable[str], boundary: Path | None = None
) -> Path | None:
    """The nearest thresholds.toml at or above the test paths, within the project;
    ``ProjectError`` when they lie under different ones."""
    found: dict[Path, Path] = {}
    for start in _start_dirs(invocation_dir, args):
        nearest = nearest_thresholds(start, boundary)
        if nearest is not None:
            found.setdefault(nearest, start)
    if len(found) > 1:
        listed = ", ".join(f"{path} (for {start})" for path, start in found.items())
        raise ProjectError(
            f"the test paths lie under different {THRESHOLDS_NAME} files: {listed}; run "
            f"each project on its own, or choose one with {OPTION} PATH"
        )
    return next(iter(found), None)


def locate_project(
    *,
    invocation_dir: Path,
    args: Iterable[str],
    option: str | None,
    ini_value: str,
    inipath: Path | None,
    rootpath: Path,
) -> Project:
    """Find the thresholds file and the project root as the module docstring says."""
    boundary = inipath.parent.resolve() if inipath is not None else None
    searched = search_thresholds(invocation_dir, args, boundary)
    fallback_root = inipath.parent if inipath is not None else rootpath
    if option is not None:
        path = invocation_dir / option
        if not path.is_file():
            raise ProjectError(f"{OPTION} {option}: no such file")
        root = searched.parent if searched is not None else fallback_root
        return Project(root, path.resolve(), OPTION)
    if ini_value:
        if inipath is None:  # set with -o, without an ini file
            base, where = invocation_dir, f"-o {INI_KEY}"
        else:
            base, where = inipath.parent, f"{inipath.name} {INI_KEY}"
        path = base / ini_value
        if not path.is_file():
            raise ProjectError(f"{where} = {ini_value!r}: no such file {path}")
        return Project(base.resolve(), path.resolve(), where)
    if searched is not None:
        return Project(searched.parent, searched, "found above the test paths")
    return Project(fallback_root, None, "")
