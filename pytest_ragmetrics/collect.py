"""Collection: a test that takes ``row`` and carries the ragmetrics marker runs per row;
one that takes ``rows`` runs once over all of them (a dataset-level test).

Rows are parametrized in file order with the row ids as test ids, from a dataset loaded
once per run and process, so every pytest-xdist worker collects the same items in the
same order. Rows are validated here, against the fields that the test's metric
fixtures need, so a bad row is known before anything runs and errors alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.dataset import Dataset, DatasetError, LoadedRow, load_dataset
from pytest_ragmetrics.fixtures import missing_fields
from pytest_ragmetrics.paths import display_path
from pytest_ragmetrics.state import RowParam, RowsParam, RunState
from pytest_ragmetrics.summary import EvalInfo

MARKER = "ragmetrics"
MARKER_HELP = (
    "ragmetrics(dataset, name=None, format=None): run the test once per row of `dataset` "
    "(a .jsonl or .csv path relative to the test file) when it takes `row`, or once over "
    "all rows when it takes `rows`; `name` names the eval (default: the module path), "
    "`format` overrides the file extension"
)
ROWS_ID = "all-rows"


@dataclass(frozen=True)
class MarkerSpec:
    """The arguments of a ``@pytest.mark.ragmetrics(...)`` marker."""

    dataset: str
    name: str | None = None
    format: str | None = None


def marker_spec(marker: pytest.Mark, where: str) -> MarkerSpec:
    """Read the marker's arguments; a usage mistake fails the module's collection."""
    kwargs: dict[str, Any] = dict(marker.kwargs)
    if marker.args:
        if len(marker.args) > 1 or "dataset" in kwargs:
            pytest.fail(f"{where}: ragmetrics marker takes one dataset path", pytrace=False)
        kwargs["dataset"] = marker.args[0]
    unknown = sorted(set(kwargs) - {"dataset", "name", "format"})
    if unknown:
        pytest.fail(
            f"{where}: unknown ragmetrics marker argument(s) {', '.join(unknown)}; "
            "expected dataset, name, format",
            pytrace=False,
        )
    if not isinstance(kwargs.get("dataset"), str | Path):
        pytest.fail(f'{where}: ragmetrics marker needs dataset="path/to/rows.jsonl"', pytrace=False)
    name = kwargs.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        pytest.fail(f"{where}: ragmetrics marker name must be a non-empty string", pytrace=False)
    return MarkerSpec(str(kwargs["dataset"]), name, kwargs.get("format"))


def _dataset(state: RunState, path: Path, fmt: str | None) -> Dataset:
    key = (path, fmt)
    if key not in state.datasets:
        state.datasets[key] = load_dataset(path, display_path(path, state.rootpath), fmt)
    return state.datasets[key]


def _param(info: EvalInfo, loaded: LoadedRow, fixture_names: list[str]) -> RowParam:
    parsed = not any(p.field.startswith("<") for p in loaded.problems)
    missing = missing_fields(loaded.row, fixture_names) if parsed else []
    return RowParam(info, loaded, (*loaded.problems, *missing))


def parametrize_rows(metafunc: pytest.Metafunc, state: RunState) -> None:
    """Parametrize ``row`` over the marker's dataset, or give ``rows`` all of it; leave
    other tests alone."""
    marker = metafunc.definition.get_closest_marker(MARKER)
    takes_row, takes_rows = "row" in metafunc.fixturenames, "rows" in metafunc.fixturenames
    if marker is None or not (takes_row or takes_rows):
        return
    where = metafunc.definition.nodeid
    if takes_row and takes_rows:
        pytest.fail(
            f"{where}: a test takes either `row` (once per row) or `rows` (once over all "
            "rows), not both",
            pytrace=False,
        )
    spec = marker_spec(marker, where)
    module_path = metafunc.definition.path
    dataset_path = (module_path.parent / spec.dataset).resolve()
    problem: str | None = None
    try:
        dataset = _dataset(state, dataset_path, spec.format)
    except DatasetError as error:
        problem = str(error)
    if problem is not None:  # failed outside the except block: no chained traceback
        pytest.fail(f"{where}: {problem}", pytrace=False)
    module = display_path(module_path, state.rootpath)
    name = spec.name or module
    first = state.eval_datasets.setdefault(name, dataset_path)
    if first != dataset_path:
        pytest.fail(
            f"{where}: eval {name!r} already runs over {display_path(first, state.rootpath)}; "
            f"give each dataset its own eval with ragmetrics(..., name=...)",
            pytrace=False,
        )
    if not dataset.rows:
        pytest.fail(f"{where}: {dataset.display} has no rows", pytrace=False)
    state.eval_tests.setdefault(name, set()).add(metafunc.definition.nodeid)
    info = EvalInfo(name, module, dataset.display, dataset.sha256, len(dataset.rows))
    rows = dataset.rows if state.options.limit is None else dataset.rows[: state.options.limit]
    if takes_rows:
        metafunc.parametrize("rows", [RowsParam(info, rows)], ids=[ROWS_ID], indirect=True)
        return
    params = [_param(info, loaded, list(metafunc.fixturenames)) for loaded in rows]
    metafunc.parametrize("row", params, ids=[p.row.id for p in params], indirect=True)
