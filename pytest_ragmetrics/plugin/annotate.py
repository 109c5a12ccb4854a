"""GitHub annotations of a finished run (controller, once, at the end; printed on the
step's output by the terminal summary): each failed gate at the line of thresholds.toml
that sets it, each errored or failing row at its line of the dataset. What they say and
how they are escaped and capped is ``reports.annotations``'s; this module finds the
places.

A gate's line is that of its key in the table it comes from: the eval's system's table
(``[gates."evals/x.py[a]"]``), else the eval's, else ``[gates]``, as ``Thresholds.gates_for``
merges them. A row's line is the one the dataset's index gives its position; a dataset
without lines (Parquet, a compressed file, a SQL query) is annotated as a file, a query
through a variable's URL with no file at all. Paths are relative to the repository's
root (``$GITHUB_WORKSPACE``, else pytest's rootdir).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_ragmetrics.config.key_lines import key_lines
from pytest_ragmetrics.data.dataset import scan_dataset
from pytest_ragmetrics.data.formats import dataset_format
from pytest_ragmetrics.data.streams import DatasetError
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.reports.annotations import ANNOTATIONS_SHOWN, Annotation
from pytest_ragmetrics.results.records import first_failing
from pytest_ragmetrics.results.summary import EvalInfo, EvalSummary, RowResult

GITHUB_ACTIONS_ENV = "GITHUB_ACTIONS"
WORKSPACE_ENV = "GITHUB_WORKSPACE"
# Formats whose rows are lines of a text file, which GitHub can point at.
_LINED_FORMATS = ("jsonl", "csv")
# How SqlDataset.display names a query: ``sql(<origin>, <label>)``.
_SQL_PREFIX = "sql("


def under_github(environ: Mapping[str, str]) -> bool:
    """Whether the run is a step of a GitHub Actions job (``GITHUB_ACTIONS=true``)."""
    return environ.get(GITHUB_ACTIONS_ENV) == "true"


def repository_path(path: Path, repository: Path) -> str:
    """``path`` relative to the repository's root, in POSIX form; absolute when outside."""
    relative = os.path.relpath(path.resolve(), repository.resolve())
    return path.resolve().as_posix() if relative.startswith("..") else Path(relative).as_posix()


def gate_annotations(
    results: Sequence[GateResult],
    infos: Mapping[str, EvalInfo],
    thresholds: Path | None,
    repository: Path,
) -> list[Annotation]:
    """One error per failed gate, at its key's line of ``thresholds``."""
    failed = [result for result in results if result.status == "failed"]
    if not failed:
        return []
    lines: dict[tuple[str, ...], int] = {}
    unread = None
    if thresholds is not None:
        try:
            lines = key_lines(thresholds.read_text(encoding="utf-8"))
        except OSError as error:  # read at the start of the run, gone now: say so
            unread = f"(its line is not known: {thresholds} could not be read again: {error})"
    found = []
    for result in failed:
        info = infos.get(result.eval)
        tables = [] if info is None else [info.name]
        if info is not None and info.system is not None:
            tables.insert(0, f"{info.name}[{info.system}]")
        paths = [("gates", table, result.name) for table in tables] + [("gates", result.name)]
        line = next((lines[path] for path in paths if path in lines), None)
        message = result.message if unread is None else f"{result.message}\n{unread}"
        found.append(
            Annotation(
                "error",
                f"pytest-ragmetrics: gate {result.eval}::gate::{result.name} failed",
                message,
                None if thresholds is None else repository_path(thresholds, repository),
                line,
            )
        )
    return found


@dataclass(frozen=True)
class DatasetPlace:
    """Where a dataset is for GitHub: its file (``None`` for a query through a URL
    variable) and whether its rows are lines of it."""

    file: Path | None
    lined: bool


def dataset_place(display: str, project_root: Path) -> DatasetPlace:
    """The place of an eval's dataset from how the run names it (``EvalInfo.dataset``:
    a path from the project root, or ``SqlDataset.display`` for a query)."""
    if display.startswith(_SQL_PREFIX):
        origin = display[len(_SQL_PREFIX) :].split(", ", 1)[0]
        return DatasetPlace(None if origin.startswith("$") else project_root / origin, False)
    path = project_root / display
    try:
        lined = dataset_format(path) in _LINED_FORMATS
    except DatasetError:  # a format the marker declares: its rows are no known lines
        lined = False
    return DatasetPlace(path, lined)


def _row_lines(place: DatasetPlace, display: str, rows: Sequence[RowResult]) -> dict[str, int]:
    """The line of each of ``rows`` (by id) in the dataset; raises ``DatasetError`` or
    ``OSError`` when it cannot be read again."""
    if place.file is None or not place.lined:
        return {}
    index = scan_dataset(place.file, display)
    return {
        row.id: index.lines[row.index]
        for row in rows
        if row.index < len(index) and index.ids[row.index] == row.id
    }


def _row_message(row: RowResult) -> str:
    if row.errors:
        return "\n".join(row.errors)
    return "failed in " + ", ".join(sorted(row.failed))


def row_annotations(
    summaries: Sequence[EvalSummary], project_root: Path, repository: Path, room: int
) -> tuple[list[Annotation], int]:
    """One error per errored row, then per failing row, at most ``room``, at its line of
    its dataset; and how many such rows were left out (``first_failing``: one pass over
    the rows, only those annotated kept)."""
    shown, found = first_failing(((summary.info, summary.rows) for summary in summaries), room)
    by_dataset: dict[str, list[RowResult]] = {}
    for info, row in shown:
        by_dataset.setdefault(info.dataset, []).append(row)
    places = {display: dataset_place(display, project_root) for display in by_dataset}
    lines: dict[str, dict[str, int]] = {}
    unread: dict[str, str] = {}
    for display, rows in by_dataset.items():
        try:
            lines[display] = _row_lines(places[display], display, rows)
        except (DatasetError, OSError) as error:  # changed or gone since the run: say so
            lines[display] = {}
            unread[display] = f"(its line is not known: {display} could not be read again: {error})"
    annotations = []
    for info, row in shown:
        place = places[info.dataset]
        word = "errored" if row.status == "error" else "failed"
        note = unread.get(info.dataset)
        line = lines[info.dataset].get(row.id)
        if note is None and place.lined and line is None:
            note = f"(its line is not known: {info.dataset} changed since the run)"
        annotations.append(
            Annotation(
                "error",
                f"pytest-ragmetrics: row {row.id} of {info.label} {word}",
                _row_message(row) if note is None else f"{_row_message(row)}\n{note}",
                None if place.file is None else repository_path(place.file, repository),
                line,
            )
        )
    return annotations, found - len(shown)


def annotations_of(
    results: Sequence[GateResult],
    summaries: Sequence[EvalSummary],
    thresholds: Path | None,
    project_root: Path,
    repository: Path,
) -> tuple[list[Annotation], list[Annotation], int]:
    """The failed gates' annotations, the rows' (in the room the gates leave of
    ``ANNOTATIONS_SHOWN``), and how many rows were left out."""
    infos = {summary.info.label: summary.info for summary in summaries}
    gates = gate_annotations(results, infos, thresholds, repository)
    rows, left = row_annotations(
        summaries, project_root, repository, ANNOTATIONS_SHOWN - len(gates)
    )
    return gates, rows, left
