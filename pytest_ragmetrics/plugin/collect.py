"""Collection: a test that takes ``row`` and carries the ragmetrics marker runs per row;
one that takes ``rows`` runs once over all of them (a dataset-level test).

Rows are parametrized in file order with the row ids as test ids, from a dataset loaded
once per run and process, so every pytest-xdist worker collects the same items in the
same order. Rows are validated here, against the fields that the test's metric
fixtures need, so a bad row is known before anything runs and errors alone.

A dataset whose rows name their ``system`` is one eval per system (test ids
``<system>/<id>``); the marker's ``compare_to`` names the reference system, and ``rerun``
a second output file of the same rows for the ``determinism`` metric.

A marker that names ``systems`` makes a live eval: the dataset holds questions, and each
named system (a ``LiveSystem`` from the ``ragmetrics_system`` fixture) is called per row
when the row's test sets up (``pytest_ragmetrics.live.system``).
"""

from __future__ import annotations

import difflib
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from pytest_ragmetrics.data.dataset import (
    Dataset,
    DatasetError,
    DatasetReader,
    LoadedRow,
    Location,
    Problem,
    Row,
    load_dataset,
    scan_dataset,
)
from pytest_ragmetrics.data.sql import SqlConfigError, SqlDataset
from pytest_ragmetrics.files import display_path, resolved
from pytest_ragmetrics.live.system import OUTPUT_FIELDS
from pytest_ragmetrics.metrics.catalog import close_fixtures
from pytest_ragmetrics.plugin.catalog import run_catalog
from pytest_ragmetrics.plugin.fixtures import (
    DETERMINISM,
    late_metrics,
    missing_fields,
    plugin_metrics,
    ragmetrics_system,
)
from pytest_ragmetrics.plugin.options import DEFAULT_BATCH_SIZE, MODES
from pytest_ragmetrics.plugin.state import BatchParam, DatasetParam, RowParam, RunState
from pytest_ragmetrics.results.summary import EvalInfo

MARKER = "ragmetrics"
MARKER_HELP = (
    "ragmetrics(dataset, name=None, format=None, compare_to=None, rerun=None, systems=None, "
    f'mode="row", batch_size={DEFAULT_BATCH_SIZE}): '
    "run the test once per row of `dataset` (a .jsonl, .csv, .parquet, .jsonl.gz or "
    ".jsonl.zst path relative to the test file, or a pytest_ragmetrics.SqlDataset query) "
    "when it takes `row`, or once over all rows "
    "when it takes `rows`; `name` names the eval (default: the module path), `format` "
    "overrides the file extension, `compare_to` names the system that `baseline` in gate "
    "rules means, `rerun` is a second output file of the same rows for `determinism`, "
    "`systems` names the live systems (from the `ragmetrics_system` fixture) that answer "
    "the dataset's questions, `mode` is row (one test item per row) or bulk (one item per "
    "`batch_size` rows, the test still called once per row)"
)
MARKER_ARGS = (
    "dataset",
    "name",
    "format",
    "compare_to",
    "rerun",
    "systems",
    "mode",
    "batch_size",
)
ROWS_ID = "all-rows"


@dataclass(frozen=True)
class MarkerSpec:
    """The arguments of a ``@pytest.mark.ragmetrics(...)`` marker."""

    dataset: str | SqlDataset
    name: str | None = None
    format: str | None = None
    compare_to: str | None = None
    rerun: str | None = None
    systems: tuple[str, ...] | None = None
    mode: str = "row"
    batch_size: int = DEFAULT_BATCH_SIZE


def _mode(kwargs: Mapping[str, Any], where: str) -> tuple[str, int]:
    """The marker's ``mode`` and ``batch_size``, checked."""
    mode = kwargs.get("mode", "row")
    if mode not in MODES:
        pytest.fail(
            f"{where}: ragmetrics marker mode must be {' or '.join(map(repr, MODES))}, "
            f"got {mode!r}",
            pytrace=False,
        )
    size = kwargs.get("batch_size", DEFAULT_BATCH_SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        pytest.fail(
            f"{where}: ragmetrics marker batch_size must be a positive whole number of rows, "
            f"got {size!r}",
            pytrace=False,
        )
    return mode, size


def _systems(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, list | tuple)
        or not names
        or not all(isinstance(n, str) and n.strip() for n in names)
    ):
        pytest.fail(
            f"{where}: ragmetrics marker systems must name the live systems, e.g. "
            'systems=["topk", "mmr"]',
            pytrace=False,
        )
    if len(set(names)) != len(names):
        pytest.fail(f"{where}: ragmetrics marker systems names a system twice", pytrace=False)
    return tuple(names)


def marker_spec(marker: pytest.Mark, where: str) -> MarkerSpec:
    """Read the marker's arguments; a usage mistake fails the module's collection."""
    kwargs: dict[str, Any] = dict(marker.kwargs)
    if marker.args:
        if len(marker.args) > 1 or "dataset" in kwargs:
            pytest.fail(f"{where}: ragmetrics marker takes one dataset path", pytrace=False)
        kwargs["dataset"] = marker.args[0]
    unknown = sorted(set(kwargs) - set(MARKER_ARGS))
    if unknown:
        pytest.fail(
            f"{where}: unknown ragmetrics marker argument(s) {', '.join(unknown)}; "
            f"expected {', '.join(MARKER_ARGS)}",
            pytrace=False,
        )
    dataset = kwargs.get("dataset")
    if not isinstance(dataset, str | Path | SqlDataset):
        pytest.fail(
            f'{where}: ragmetrics marker needs dataset="path/to/rows.jsonl" or '
            "dataset=pytest_ragmetrics.SqlDataset(...)",
            pytrace=False,
        )
    for key in ("dataset", "rerun"):
        if isinstance(kwargs.get(key), str) and "://" in kwargs[key]:
            # Not echoed: a database URL carries the password.
            pytest.fail(
                f"{where}: ragmetrics marker's {key}= is a file's path, never a URL: a URL "
                "carries the password; read a database with "
                "dataset=pytest_ragmetrics.SqlDataset(query, url_env=...) naming the "
                "environment variable that holds its URL",
                pytrace=False,
            )
    if isinstance(dataset, SqlDataset) and kwargs.get("format") is not None:
        pytest.fail(
            f"{where}: format= names a file's format; a SqlDataset's rows are a query's",
            pytrace=False,
        )
    for key in ("name", "compare_to"):
        value = kwargs.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            pytest.fail(
                f"{where}: ragmetrics marker {key} must be a non-empty string", pytrace=False
            )
    rerun = kwargs.get("rerun")
    if rerun is not None and not isinstance(rerun, str | Path):
        pytest.fail(f'{where}: ragmetrics marker needs rerun="path/to/rows.jsonl"', pytrace=False)
    systems = _systems(kwargs.get("systems"), where)
    if systems is not None and rerun is not None:
        pytest.fail(
            f"{where}: a live eval (systems=...) measures determinism by calling each system "
            "twice; rerun= is for recorded outputs",
            pytrace=False,
        )
    mode, batch_size = _mode(kwargs, where)
    return MarkerSpec(
        dataset if isinstance(dataset, SqlDataset) else str(dataset),
        kwargs.get("name"),
        kwargs.get("format"),
        kwargs.get("compare_to"),
        None if rerun is None else str(rerun),
        systems,
        mode,
        batch_size,
    )


class RowTable(Protocol):
    """What collection reads of a dataset before its rows: a loaded ``Dataset``, or the
    ``DatasetIndex`` of one whose rows a bulk eval reads a batch at a time."""

    @property
    def display(self) -> str: ...

    @property
    def sha256(self) -> str: ...

    @property
    def systems(self) -> tuple[str, ...]: ...

    def __len__(self) -> int: ...

    def row_keys(self) -> Iterator[tuple[str | None, str]]: ...


def _display(path: Location, root: Path) -> str:
    """How reports and messages name a dataset: a file's path from the project root, a
    query by its ``SqlDataset.display`` (never its URL)."""
    return path.display if isinstance(path, SqlDataset) else display_path(path, root)


def _location(spec: MarkerSpec, module_path: Path, root: Path) -> Location:
    """Where the marker's dataset is: a file, relative to the eval file, or a query whose
    SQLite paths are."""
    if isinstance(spec.dataset, SqlDataset):
        return spec.dataset.at(module_path.parent, root)
    return resolved(module_path.parent / spec.dataset)


def _dataset(state: RunState, path: Location, fmt: str | None) -> Dataset:
    key = (path, fmt)
    if key not in state.datasets:
        state.datasets[key] = load_dataset(path, _display(path, state.project_root), fmt)
    return state.datasets[key]


def _reader(state: RunState, path: Location, fmt: str | None) -> DatasetReader:
    """The reader of ``path`` for this process's bulk evals, made by scanning it once."""
    key = (path, fmt)
    if key not in state.readers:
        index = scan_dataset(path, _display(path, state.project_root), fmt)
        state.readers[key] = DatasetReader(index)
    return state.readers[key]


Key = tuple[str | None, str]


def _param(
    info: EvalInfo,
    loaded: LoadedRow,
    metrics: Sequence[str],
    rerun: Mapping[Key, LoadedRow],
    unpaired: list[Problem],
    live: str | None = None,
) -> RowParam:
    parsed = not any(p.field.startswith("<") for p in loaded.problems)
    if live is not None:
        missing = _question_problems(loaded.row, metrics) if parsed else []
        return RowParam(info, loaded.row, (*loaded.problems, *missing), live=live)
    missing = [*unpaired, *_missing(loaded.row, metrics)] if parsed else []
    again = rerun.get(_key(loaded.row))
    if parsed and DETERMINISM in metrics:
        missing += _rerun_problems(info, loaded.row, again)
    problems = (*loaded.problems, *missing)
    return RowParam(info, loaded.row, problems, again.row if again else None)


def _missing(row: Row, metrics: Sequence[str]) -> list[Problem]:
    """The fields the row lacks that its metrics need; an unjudged row (its proxy
    relevance label NULL) is skipped for that, not failed (``fixtures.check_row``)."""
    missing = missing_fields(row, metrics)
    return [p for p in missing if p.field != "relevant"] if row.unjudged else missing


def _question_problems(row: Row, metrics: Sequence[str]) -> list[Problem]:
    """What is wrong with a row of a live eval's question set, before any system runs:
    it needs a question, must leave the output fields to the system, and must have every
    other field its metrics need."""
    problems = [
        Problem(name, "is produced by the live system; a question set must not carry it")
        for name in OUTPUT_FIELDS
        if name in row.data
    ]
    if not isinstance(row.question, str):
        problems.append(Problem("question", "the live system needs the question, as a string"))
    problems += [p for p in missing_fields(row, metrics) if p.field not in OUTPUT_FIELDS]
    return problems


def _key(row: Row) -> Key:
    return (row.system, row.id)


def _rerun_problems(info: EvalInfo, row: Row, again: LoadedRow | None) -> list[Problem]:
    """Why ``determinism`` cannot compare this row with its second run."""
    if info.rerun is None:
        message = (
            "determinism compares two runs: name the second output file in the marker, "
            'ragmetrics(..., rerun="path/to/second_run.jsonl")'
        )
        return [Problem("rerun", message)]
    of_system = f" of system {row.system!r}" if row.system is not None else ""
    if again is None:
        return [Problem("rerun", f"{info.rerun} has no row {row.id!r}{of_system}")]
    if again.problems:
        where = "; ".join(f"{again.row.where(p.field)}: {p.message}" for p in again.problems)
        return [Problem("rerun", f"its second run is a bad row: {where}")]
    return []


def _pairing(
    compare_to: str | None, keys: Iterable[tuple[str | None, str]]
) -> Callable[[Row], list[Problem]]:
    """With ``compare_to``, every system must answer the same questions: a row whose id the
    reference system lacks, or a reference row that some system lacks, is a bad row, so
    that means over different questions are never compared. ``keys`` are the rows'
    (system, id)."""
    ids: dict[str, set[str]] = {}
    if compare_to is not None:
        for system, row_id in keys:
            if system is not None:
                ids.setdefault(system, set()).add(row_id)

    def problems(row: Row) -> list[Problem]:
        system = row.system
        if compare_to is None or not isinstance(system, str):
            return []
        if system != compare_to:
            if row.id in ids[compare_to]:
                return []
            message = f"the reference system {compare_to!r} has no row {row.id!r}"
        else:
            lacking = [repr(s) for s in ids if s != compare_to and row.id not in ids[s]]
            if not lacking:
                return []
            message = f"system(s) {', '.join(lacking)} have no row {row.id!r}"
        return [Problem("id", f"{message}; compared systems must answer the same questions")]

    return problems


_Found = TypeVar("_Found", Dataset, DatasetReader)


def _load(
    state: RunState, where: str, path: Location, fmt: str | None, written: tuple[str, Path]
) -> Dataset:
    return _read(where, lambda: _dataset(state, path, fmt), path, written)


def _scan(
    state: RunState, where: str, path: Location, fmt: str | None, written: tuple[str, Path]
) -> DatasetReader:
    return _read(where, lambda: _reader(state, path, fmt), path, written)


def _read(
    where: str, read: Callable[[], _Found], path: Location, written: tuple[str, Path]
) -> _Found:
    """What ``read`` gives; a dataset that cannot be read, or has no rows, fails the
    collection of the test at ``where``. ``written``: the marker argument that named
    ``path`` and the folder it is relative to, for a guess when no such file exists."""
    problem: str | None = None
    try:
        found = read()
    except DatasetError as error:
        problem = str(error) + _near_miss(path, *written)
    if problem is not None:  # failed outside the except block: no chained traceback
        pytest.fail(f"{where}: {problem}", pytrace=False)
    table = found if isinstance(found, Dataset) else found.index
    if not len(table):
        pytest.fail(f"{where}: {table.display} has no rows", pytrace=False)
    return found


def _near_miss(path: Location, argument: str, folder: Path) -> str:
    """`` (did you mean dataset="data/rows.jsonl"?)`` when ``path`` does not exist but a
    file one slip from it does (its name's, its folder's or its extension's); ``""``
    otherwise. The guess is written as the marker's argument is: from ``folder``."""
    if isinstance(path, SqlDataset) or path.exists():
        return ""
    parent = path.parent
    if not parent.is_dir():
        folders = _closest(parent.name, parent.parent, directories=True)
        if folders is None:
            return ""
        parent = parent.parent / folders
    found = _closest(path.name, parent, directories=False)
    if found is None:
        return ""
    guess = Path(os.path.relpath(parent / found, folder)).as_posix()
    return f' (did you mean {argument}="{guess}"?)'


def _closest(name: str, folder: Path, *, directories: bool) -> str | None:
    """The entry of ``folder`` (a folder, or a file) whose name is closest to ``name``."""
    try:
        names = [entry.name for entry in folder.iterdir() if entry.is_dir() == directories]
    except OSError:
        return None
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.8)
    return close[0] if close else None


def _infos(
    spec: MarkerSpec, base: EvalInfo, dataset: RowTable, where: str
) -> dict[str | None, EvalInfo]:
    """One ``EvalInfo`` per system of the dataset; one in all when rows name no system, or
    all the same one and nothing is compared (a run's rows that log their system)."""
    systems = dataset.systems
    if spec.systems is not None:
        if systems:
            pytest.fail(
                f"{where}: a live eval's dataset holds questions, but rows of "
                f"{dataset.display} name the system(s) {', '.join(map(repr, systems))}",
                pytrace=False,
            )
        systems = spec.systems
    if spec.compare_to is not None and spec.compare_to not in systems:
        named = (
            f"its systems are {', '.join(map(repr, systems))}"
            if systems
            else "no row names a system"
        )
        pytest.fail(
            f"{where}: compare_to={spec.compare_to!r} is not a system of "
            f"{dataset.display} ({named})",
            pytrace=False,
        )
    base = replace(base, systems=tuple(systems))
    if not systems or (len(systems) == 1 and spec.compare_to is None):
        return {None: base}
    counts = Counter(system for system, _ in dataset.row_keys())
    return {
        system: replace(
            base,
            dataset_rows=len(dataset) if spec.systems else counts[system],
            system=system,
            system_index=index,
            compare_to=spec.compare_to,
        )
        for index, system in enumerate(systems)
    }


def _limited(dataset: RowTable, limit: int | None) -> Sequence[int]:
    """The positions of the first ``limit`` rows of each system (all rows without a
    limit)."""
    if limit is None:
        return range(len(dataset))
    seen: Counter[str | None] = Counter()
    kept = array("q")
    for position, (system, _) in enumerate(dataset.row_keys()):
        seen[system] += 1
        if seen[system] <= limit:
            kept.append(position)
    return kept


def _parametrized_names(metafunc: pytest.Metafunc) -> set[str]:
    """The argument names the test's ``parametrize`` marks give directly."""
    names: set[str] = set()
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(str(name).strip() for name in argnames)
    return names


def _metric_names(metafunc: pytest.Metafunc) -> tuple[str, ...]:
    """The plugin's metric fixtures the test takes (``plugin_metrics``): what its rows
    must have fields for. A project's fixture or a parametrized argument by a metric's
    name is not that metric."""
    # pytest's own map of the fixtures it found for this test (no public accessor).
    defined: Mapping[str, Any] = getattr(metafunc, "_arg2fixturedefs", None) or {}
    direct = _parametrized_names(metafunc)
    taken = (n for n in metafunc.fixturenames if n not in direct)
    return tuple(plugin_metrics(defined, taken, run_catalog(metafunc.config)))


def _refuse_misspelled_fixtures(metafunc: pytest.Metafunc, where: str) -> None:
    """A requested name that no fixture provides but that is one edit from a metric
    fixture is a typo: one collection error for the test function, naming the fixture
    meant, instead of pytest's "fixture not found" once for every row."""
    # pytest's own map of the fixtures it found for this test (no public accessor).
    defined = getattr(metafunc, "_arg2fixturedefs", None)
    if defined is None:
        return
    given = _parametrized_names(metafunc) | {"request"}
    typos = [
        (name, close)
        for name in metafunc.fixturenames
        if name not in defined
        and name not in given
        and (close := close_fixtures(name, run_catalog(metafunc.config)))
    ]
    if typos:
        meant = "; ".join(
            f"`{name}` is no fixture: did you mean "
            + " or ".join(f"`{known}`" for known in close)
            + "?"
            for name, close in typos
        )
        pytest.fail(f"{where}: {meant}", pytrace=False)


def _refuse_unseen_systems(metafunc: pytest.Metafunc, where: str) -> None:
    """A live eval whose test cannot see a ``ragmetrics_system`` of the project's (none,
    or one in another test module or a conftest.py the test is not under) fails to
    collect once, rather than every row of every system erroring alike."""
    definition = metafunc.definition
    # pytest's own fixture lookup for the test's node (no public accessor).
    manager = definition.session._fixturemanager
    found = manager.getfixturedefs("ragmetrics_system", definition) or ()
    if found and getattr(found[-1].func, "__module__", None) != ragmetrics_system.__module__:
        return
    module = definition.path.name
    pytest.fail(
        f"{where}: this eval names live systems (ragmetrics marker systems=...), but {module} "
        "sees no `ragmetrics_system` fixture of the project's: define a `ragmetrics_system` "
        "fixture that returns them as pytest_ragmetrics.LiveSystem, in the eval file or in "
        "a conftest.py of its folder or of one above it (docs/live.md)",
        pytrace=False,
    )


def _refuse_late_metrics(metafunc: pytest.Metafunc, where: str) -> None:
    """A metric declared after this run read thresholds.toml is refused (``late_metrics``):
    one collection error for the test function that takes it, not one per row."""
    # pytest's own map of the fixtures it found for this test (no public accessor).
    defined: Mapping[str, Any] = getattr(metafunc, "_arg2fixturedefs", None) or {}
    direct = _parametrized_names(metafunc)
    taken = [name for name in metafunc.fixturenames if name not in direct]
    refused = late_metrics(metafunc.config, defined, taken)
    if refused:
        pytest.fail(f"{where}: " + "; ".join(refused), pytrace=False)


def _refuse_misspelled_marker(metafunc: pytest.Metafunc, takes: str) -> None:
    """A test that takes ``row`` or ``rows`` with no ragmetrics marker but one a slip
    from it (``ragmetric``) is a typo: fail its collection naming the marker meant,
    rather than each run saying it has no dataset."""
    if takes in _parametrized_names(metafunc):
        return  # the test gives itself its rows
    names = {mark.name for mark in metafunc.definition.iter_markers()}
    typos = sorted(
        name for name in names if difflib.get_close_matches(name.lower(), [MARKER], cutoff=0.8)
    )
    if typos:
        marked = " and ".join(f"`{name}`" for name in typos)
        pytest.fail(
            f"{metafunc.definition.nodeid} takes `{takes}` and is marked {marked}, which is "
            f"no marker of pytest-ragmetrics: did you mean `{MARKER}`?",
            pytrace=False,
        )


def parametrize_rows(metafunc: pytest.Metafunc, state: RunState) -> bool:
    """Parametrize ``row`` over the marker's dataset, or give ``rows`` all of it; leave
    other tests alone. Whether the test was given rows."""
    marker = metafunc.definition.get_closest_marker(MARKER)
    takes_row, takes_rows = "row" in metafunc.fixturenames, "rows" in metafunc.fixturenames
    if marker is None and (takes_row or takes_rows):
        _refuse_misspelled_marker(metafunc, "row" if takes_row else "rows")
    if marker is None or not (takes_row or takes_rows):
        return False
    where = metafunc.definition.nodeid
    _refuse_misspelled_fixtures(metafunc, where)
    _refuse_late_metrics(metafunc, where)
    if takes_row and takes_rows:
        pytest.fail(
            f"{where}: a test takes either `row` (once per row) or `rows` (once over all "
            "rows), not both",
            pytrace=False,
        )
    spec = marker_spec(marker, where)
    if spec.systems is not None:
        _refuse_unseen_systems(metafunc, where)
    options = state.options
    bulk = takes_row and (state.engine == "ray" or (options.mode or spec.mode) == "bulk")
    if takes_row and state.engine == "ray" and options.mode == "row":
        pytest.fail(
            f"{where}: --ragmetrics-mode=row asks for one test item per row, but the Ray "
            "engine runs every eval in bulk mode; drop one of the two",
            pytrace=False,
        )
    if bulk:
        _refuse_row_fixtures(metafunc, where)
    module_path = metafunc.definition.path
    dataset_path = _location(spec, module_path, state.project_root)
    # A bulk eval reads its rows a batch at a time: collection keeps only their index.
    written = ("dataset", module_path.parent)
    reader = _scan(state, where, dataset_path, spec.format, written) if bulk else None
    dataset: RowTable = (
        reader.index if reader else _load(state, where, dataset_path, spec.format, written)
    )
    rerun = None
    if spec.rerun is not None:
        rerun_path = resolved(module_path.parent / spec.rerun)
        rerun = _load(
            state, f"{where}: rerun", rerun_path, spec.format, ("rerun", module_path.parent)
        )
    module = display_path(module_path, state.project_root)
    name = spec.name or module
    first = state.eval_datasets.setdefault(name, dataset_path)
    if first != dataset_path:
        pytest.fail(
            f"{where}: eval {name!r} already runs over {_display(first, state.project_root)}; "
            f"give each dataset its own eval with ragmetrics(..., name=...)",
            pytrace=False,
        )
    state.eval_tests.setdefault(name, set()).add(metafunc.definition.nodeid)
    base = EvalInfo(
        name,
        module,
        dataset.display,
        dataset.sha256,
        len(dataset),
        rerun=rerun.display if rerun else None,
        rerun_sha256=rerun.sha256 if rerun else None,
        test_path=metafunc.definition.nodeid.split("::", 1)[0],
    )
    infos = _infos(spec, base, dataset, where)
    positions = _limited(dataset, options.limit)
    source = RowSource(
        _metric_names(metafunc),
        {_key(r.row): r for r in rerun.rows} if rerun else {},
        _pairing(spec.compare_to, dataset.row_keys()),
        spec.systems or (),
    )
    if reader is not None:
        batches = _batches(
            BatchRows(source, reader), infos, positions, options.batch_size or spec.batch_size
        )
        metafunc.parametrize("row", batches, ids=[b.label for b in batches], indirect=True)
        return True
    assert isinstance(dataset, Dataset)
    rows = [dataset.rows[position] for position in positions]
    if takes_rows:
        _parametrize_rows_test(metafunc, spec, infos, rows, where)
        return True
    params = [
        source.param(info, loaded)
        for loaded in rows
        # A row that names no system in a dataset of systems is a bad row of every system.
        for info in _evals_of(loaded.row.system, infos)
    ]
    metafunc.parametrize("row", params, ids=[_id(p.info, p.row.id) for p in params], indirect=True)
    return True


def _evals_of(system: str | None, infos: Mapping[str | None, EvalInfo]) -> Iterable[EvalInfo]:
    """The evals a row with ``system`` belongs to: its system's, or every one of a
    dataset of systems when it names none (it is a bad row of each)."""
    return [infos[system]] if system in infos else infos.values()


def _parametrize_rows_test(
    metafunc: pytest.Metafunc,
    spec: MarkerSpec,
    infos: Mapping[str | None, EvalInfo],
    rows: list[LoadedRow],
    where: str,
) -> None:
    """Give a dataset-level test (one that takes ``rows``) every row of each eval."""
    if spec.systems is not None:
        pytest.fail(
            f"{where}: a dataset-level test (one that takes `rows`) runs over recorded "
            "outputs; save the live outputs with --ragmetrics-save-outputs and give them "
            "an eval of their own",
            pytrace=False,
        )
    # A row that names no system in a dataset of systems goes to every system's test,
    # which then errors on it (it is a bad row) instead of leaving it out.
    sets = [
        DatasetParam(
            info,
            tuple(r for r in rows if info.system is None or r.row.system in (info.system, None)),
        )
        for info in infos.values()
    ]
    ids = [ROWS_ID if s.info.system is None else f"{s.info.system}/{ROWS_ID}" for s in sets]
    metafunc.parametrize("rows", sets, ids=ids, indirect=True)


@dataclass(frozen=True)
class RowSource:
    """How a row test's parameter is made from a loaded row: what its metrics need, its
    second run, whether its system's reference answers it, and its live systems."""

    metrics: tuple[str, ...]
    rerun: Mapping[Key, LoadedRow]
    pairing: Callable[[Row], list[Problem]]
    live: tuple[str, ...]

    def param(self, info: EvalInfo, loaded: LoadedRow) -> RowParam:
        live = (info.system or self.live[0]) if self.live else None
        return _param(info, loaded, self.metrics, self.rerun, self.pairing(loaded.row), live)


@dataclass(frozen=True, eq=False)
class BatchRows:
    """Where a bulk eval's batches get their rows: read from the dataset when a batch
    runs (``plugin.state.BatchParam.read``), each made into the parameter its own row
    test would have had."""

    source: RowSource
    reader: DatasetReader

    @property
    def live(self) -> bool:
        return bool(self.source.live)

    def params(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]:
        return [self.source.param(info, loaded) for loaded in self.reader.rows(positions)]

    def unread(self, info: EvalInfo, positions: Sequence[int]) -> list[RowParam]:
        index = self.reader.index
        keyed = index.format == "sql"
        return [
            RowParam(info, Row(index.ids[p], index.display, index.lines[p], p, {}, keyed), ())
            for p in positions
        ]


def _id(info: EvalInfo, name: str) -> str:
    """A test id, after its system's name in a dataset of systems."""
    return name if info.system is None else f"{info.system}/{name}"


def _batches(
    rows: BatchRows,
    infos: Mapping[str | None, EvalInfo],
    positions: Sequence[int],
    size: int,
) -> list[BatchParam]:
    """The rows at ``positions`` of each eval (each system) in runs of ``size``, in
    dataset order; a system's batches follow its first row's position, so every process
    builds the same. A batch holds only its rows' positions."""
    index = rows.reader.index
    by_eval: dict[str, tuple[EvalInfo, array[int]]] = {}
    for position in positions:
        for info in _evals_of(index.system_at(position), infos):
            by_eval.setdefault(info.label, (info, array("q")))[1].append(position)
    return [
        BatchParam(info, rows, eval_positions[start : start + size], start + 1)
        for info, eval_positions in by_eval.values()
        for start in range(0, len(eval_positions), size)
    ]


def _refuse_row_fixtures(metafunc: pytest.Metafunc, where: str) -> None:
    """In bulk mode pytest sets fixtures up once per batch, so a fixture of the project's
    that takes ``row`` (or a metric fixture) would see no row at all: a collection error
    naming it, never a value computed for the wrong row."""
    defined: Mapping[str, Any] = getattr(metafunc, "_arg2fixturedefs", None) or {}
    per_row = {"row", *run_catalog(metafunc.config).fixtures}
    plugins = {"row", *_metric_names(metafunc)}  # not a project's fixture by their names
    dependent = sorted(
        name
        for name in metafunc.fixturenames
        if name not in plugins
        and any(per_row & set(fixturedef.argnames) for fixturedef in defined.get(name, ()))
    )
    if dependent:
        names = ", ".join(f"`{name}`" for name in dependent)
        pytest.fail(
            f"{where}: in bulk mode fixtures are set up once per batch of rows, but {names} "
            "takes `row` (or a metric fixture); compute it inside the test from `row`, or "
            'run this eval with mode="row"',
            pytrace=False,
        )


def sql_refusal(error: BaseException, where: str) -> str | None:
    """The refusal alone when ``error`` is a ``SqlDataset`` refused as written
    (``SqlConfigError``), raised in ``where`` or in a conftest.py that pytest failed to
    import (its ``ConftestImportFailure``, which names the file); ``None`` otherwise.

    The refusal says how to fix the dataset, and a traceback would only show the source
    line, which may hold a URL pasted where its variable's name belongs, password and all
    (``--showlocals`` the dataset's fields too)."""
    cause = getattr(error, "cause", None)  # a conftest.py's import failure
    if isinstance(cause, SqlConfigError):
        return f"{getattr(error, 'path', where)}: SqlDataset: {cause}"
    if isinstance(error, SqlConfigError):
        return f"{where}: SqlDataset: {error}"
    return None


def without_traceback(report: pytest.CollectReport) -> pytest.CollectReport:
    """The failed collection ``report``, its traceback replaced by the refusal alone when
    a ``SqlDataset`` was refused (``sql_refusal``). pytest hands the collection's
    ``CallInfo`` on as the report's ``call``."""
    excinfo = getattr(getattr(report, "call", None), "excinfo", None)
    refusal = None if excinfo is None else sql_refusal(excinfo.value, report.nodeid)
    if refusal is not None:
        report.longrepr = refusal
    return report
