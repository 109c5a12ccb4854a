"""The ``--ragmetrics-*`` options and ``ragmetrics_*`` ini keys: declared in one group,
parsed once at configure time into a frozen ``Options``.

Every help text ends with the default. Parsing validates what can be known before
anything runs (a limit below 1, an output path that cannot be written, the thresholds
file in force) and says what is wrong as a ``pytest.UsageError``.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.config.project import (
    HISTORY_FILE,
    INI_KEY,
    Project,
    ProjectError,
    locate_project,
)
from pytest_ragmetrics.files import (
    CACHE_DIR_ENV,
    CACHE_DIR_NAME,
    GITHUB_SUMMARY_ENV,
    THRESHOLDS_NAME,
    resolve_setting,
)
from pytest_ragmetrics.judge import MAX_REPEATS as MAX_JUDGE_REPEATS
from pytest_ragmetrics.metrics.space.points import (
    DEFAULT_LIMIT,
    MAX_SEED,
    MIN_POINTS,
    umap_version,
)

# What the controller hands every xdist worker (``workerinput``): the run's id, and with
# --ragmetrics-no-cache, its private cache directory.
RUN_ID_KEY = "ragmetrics_run_id"
RUN_CACHE_KEY = "ragmetrics_run_cache"
HISTORY_INI_KEY = "ragmetrics_history"
# How an eval's rows become test items: one per row, or one per batch of rows.
MODES = ("row", "bulk")
# Rows per item of a bulk eval: large enough that pytest's per-item cost (about 1 ms and
# 18 KB on the controller) vanishes, small enough that a failing batch reruns quickly.
DEFAULT_BATCH_SIZE = 5000
# Seconds the Ray engine waits for the cluster RAY_ADDRESS names to answer before the run
# stops, naming the address: a cluster that is down must not hang the run.
DEFAULT_RAY_TIMEOUT = 30


@dataclass(frozen=True)
class Options:
    """The ``--ragmetrics-*`` command-line options, parsed; paths are absolute (relative
    ones are taken from the invocation directory)."""

    project: Project  # the thresholds file in force and the project root
    limit: int | None
    json_path: Path | None
    md_path: Path | None
    html_path: Path | None
    update_baseline: bool
    force_gates: bool
    cache_dir: Path
    refresh: bool = False  # --ragmetrics-refresh: call live systems and the judge anew
    save_outputs: Path | None = None  # --ragmetrics-save-outputs
    run_id: str = "run"  # shared by the controller and every xdist worker of the run
    no_cache: bool = False  # --ragmetrics-no-cache: cache_dir is the run's, removed at the end
    # --ragmetrics-history, or the ini key ragmetrics_history taken from the ini file
    history_dir: Path | None = None
    # --ragmetrics-mode and --ragmetrics-batch-size: override every eval's marker
    mode: str | None = None
    batch_size: int | None = None
    # --ragmetrics-engine: overrides [settings] engine
    engine: str | None = None
    ray_timeout: int = DEFAULT_RAY_TIMEOUT  # --ragmetrics-ray-timeout, in seconds
    # The picture of each dataset-level eval's embedding space (HTML and JSON reports):
    # at most this many points, sampled with this seed, by PCA and, if asked, UMAP.
    projection_limit: int = DEFAULT_LIMIT
    projection_seed: int = 0
    projection_umap: bool = False
    judge_repeats: int | None = None  # --ragmetrics-judge-repeats: overrides [judge] repeats
    judge_compare: bool = False  # --ragmetrics-judge-compare: ask [judge.previous] too
    # --ragmetrics-pr-comment and -pr-comment-link: the pull-request comment, and the page
    # it links to (None: the GitHub run's page, when GitHub's variables name one)
    pr_comment_path: Path | None = None
    pr_comment_link: str | None = None
    annotations: bool = True  # --ragmetrics-annotations: "auto" (True) or "off"

    @property
    def thresholds(self) -> Path | None:
        return self.project.thresholds

    @property
    def rows_shown(self) -> bool:
        """Whether a report of the run shows each row (JSON, HTML): only then is a row's
        evidence built (in the process that runs the row) and kept (by the controller).
        Read alike by the controller and every worker, which parse the same options."""
        return self.json_path is not None or self.html_path is not None


def add_options(parser: pytest.Parser) -> None:
    """Declare every ``--ragmetrics-*`` option and the ``ragmetrics_*`` ini keys."""
    group = parser.getgroup("ragmetrics", "RAG evaluation metrics and gates")
    group.addoption(
        "--ragmetrics-thresholds",
        metavar="PATH",
        default=None,
        help=f"the {THRESHOLDS_NAME} with settings and gates (default: ini {INI_KEY}, else "
        f"the nearest {THRESHOLDS_NAME} at or above the test paths)",
    )
    group.addoption(
        "--ragmetrics-limit",
        metavar="N",
        type=int,
        default=None,
        help="run only the first N rows of each dataset (of each system of a dataset of "
        "systems); gates are then skipped (default: all rows)",
    )
    group.addoption(
        "--ragmetrics-mode",
        metavar="MODE",
        default=None,
        help="run every eval's rows one test item per row (row) or in batches of rows "
        "inside one item each (bulk), whatever its marker's mode says (default: each "
        "marker's mode, else row)",
    )
    group.addoption(
        "--ragmetrics-batch-size",
        metavar="N",
        type=int,
        default=None,
        help="rows per test item of a bulk eval, whatever its marker's batch_size says "
        f"(default: each marker's batch_size, else {DEFAULT_BATCH_SIZE})",
    )
    group.addoption(
        "--ragmetrics-engine",
        metavar="ENGINE",
        default=None,
        help="where bulk evals' rows are scored: local (this pytest process) or ray (Ray "
        "Data on the cluster RAY_ADDRESS names, else a local Ray started for the run; "
        "every eval then runs in bulk mode) (default: [settings] engine, else local)",
    )
    group.addoption(
        "--ragmetrics-ray-timeout",
        metavar="SECONDS",
        default=None,
        help="how long the Ray engine waits for the cluster RAY_ADDRESS names to accept a "
        "connection before the run stops with a usage error naming the address "
        f"(default: {DEFAULT_RAY_TIMEOUT})",
    )
    group.addoption(
        "--ragmetrics-json",
        metavar="PATH",
        default=None,
        help="write the aggregates, gates and per-row values as JSON to PATH (default: off)",
    )
    group.addoption(
        "--ragmetrics-md",
        metavar="PATH",
        default=None,
        help="write a Markdown summary (tables and gates) to PATH; it is also appended to "
        f"${GITHUB_SUMMARY_ENV} when that variable is set (default: off)",
    )
    group.addoption(
        "--ragmetrics-html",
        metavar="PATH",
        default=None,
        help="write one self-contained HTML report (tables, gates, plots, transformations, "
        "per-row drill-down) to PATH (default: off)",
    )
    group.addoption(
        "--ragmetrics-pr-comment",
        metavar="PATH",
        default=None,
        help="write a Markdown comment for a pull request to PATH: the verdict, the gates "
        "that failed or moved, the rows that regressed or recovered, tokens, latency and "
        "cost before and after, a link to the run's page; under 65,536 characters "
        "(default: off)",
    )
    group.addoption(
        "--ragmetrics-pr-comment-link",
        metavar="URL",
        default=None,
        help="the page the comment links to for the HTML report (default: the GitHub "
        "Actions run's page from $GITHUB_SERVER_URL, $GITHUB_REPOSITORY and "
        "$GITHUB_RUN_ID, else no link)",
    )
    group.addoption(
        "--ragmetrics-annotations",
        metavar="WHEN",
        default="auto",
        choices=("auto", "off"),
        help="annotate failed gates at their line of thresholds.toml and errored or "
        "failing rows at their dataset line, as GitHub workflow commands: auto (only when "
        "$GITHUB_ACTIONS is true) or off (default: auto)",
    )
    group.addoption(
        "--ragmetrics-projection-limit",
        metavar="N",
        default=None,
        help="draw at most N points (questions, answers, chunks) in the picture of each "
        "dataset-level eval's embedding space in the HTML and JSON reports: beyond that, a "
        "seeded sample shared equally between the kinds; at least "
        f"{MIN_POINTS} (default: {DEFAULT_LIMIT})",
    )
    group.addoption(
        "--ragmetrics-projection-seed",
        metavar="SEED",
        default=None,
        help="seed of the projection's sample and of UMAP, an integer from 0 to "
        f"{MAX_SEED}; the same seed draws the same picture (default: 0)",
    )
    group.addoption(
        "--ragmetrics-projection-umap",
        action="store_true",
        default=False,
        help="draw a UMAP projection beside the PCA one every picture has; needs "
        "umap-learn: pip install 'pytest-ragmetrics[umap]' (default: off)",
    )
    group.addoption(
        "--ragmetrics-update-baseline",
        action="store_true",
        default=False,
        help="store this run's aggregates and row values as each eval's baseline; this "
        "accepts them as the reference (default: off)",
    )
    group.addoption(
        "--ragmetrics-force-gates",
        action="store_true",
        default=False,
        help="check gates on partial runs, and allow baseline updates on partial runs or "
        "with errored rows (default: off)",
    )
    group.addoption(
        "--ragmetrics-cache-dir",
        metavar="DIR",
        default=None,
        help=f"directory of the embedding cache (default: ${CACHE_DIR_ENV} if set, "
        f"else {CACHE_DIR_NAME}/ in the project root, the thresholds file's folder)",
    )
    group.addoption(
        "--ragmetrics-no-cache",
        action="store_true",
        default=False,
        help="neither read nor write the embedding cache; texts are still encoded only once "
        "per run (default: off)",
    )
    group.addoption(
        "--ragmetrics-judge-repeats",
        metavar="K",
        default=None,
        help="ask the LLM judge K times for each judged row, each verdict cached under its "
        "own index; the row's value is their mean, and the report gives the judge's spread "
        f"and flip rate, 1 to {MAX_JUDGE_REPEATS} (default: [judge] repeats, else 1)",
    )
    group.addoption(
        "--ragmetrics-judge-compare",
        action="store_true",
        default=False,
        help="judge every judged row with [judge] and with the judge it replaces, "
        "[judge.previous] (both cached), and report their agreement, the shift of each "
        "judge metric's mean with its interval, and the rows whose verdict changed "
        "(default: off)",
    )
    group.addoption(
        "--ragmetrics-refresh",
        action="store_true",
        default=False,
        help="ignore cached live-system outputs and LLM-judge verdicts: call them anew "
        "and cache the new answers (default: off)",
    )
    group.addoption(
        "--ragmetrics-save-outputs",
        metavar="PATH",
        default=None,
        help="write the live systems' outputs as a JSON Lines dataset to PATH, loadable as "
        "a recorded eval (default: off)",
    )
    group.addoption(
        "--ragmetrics-init",
        metavar="DIR",
        default=None,
        help="write a starter eval into DIR (a 5-row dataset, an eval, thresholds.toml with "
        "an absolute and a baseline gate, pytest.ini, the first baseline) instead of "
        "running tests; never overwrites a file (default: off)",
    )
    group.addoption(
        "--ragmetrics-history",
        metavar="DIR",
        default=None,
        help=f"append this run's summary (time, git commit, aggregates, gates) as one JSON "
        f"line to DIR/{HISTORY_FILE}; the HTML report plots each gate over the recorded "
        f"runs (default: ini {HISTORY_INI_KEY}, else off)",
    )
    parser.addini(
        HISTORY_INI_KEY,
        f"directory of the run history (DIR/{HISTORY_FILE}), relative to the ini file "
        "(default: off)",
        default="",
    )
    parser.addini(
        INI_KEY,
        "path of the thresholds file, relative to the ini file (default: the nearest "
        f"{THRESHOLDS_NAME} at or above the test paths)",
        default="",
    )


def workerinput(config: pytest.Config) -> dict[str, Any] | None:
    """What the controller handed this xdist worker; ``None`` on the controller."""
    return getattr(config, "workerinput", None)


def widen_conftest_reach(early_config: pytest.Config) -> None:
    """Let the run import the project root's conftest.py (and those between it and the
    test paths) when pytest's rootdir lies below the root: run from ``evals/`` with no ini
    file, pytest would stop looking for conftest files at ``evals/``, and the metrics the
    root conftest.py declares would be unknown to the gates that name them. The root is
    the folder of the thresholds file found above the test paths (``locate_project``);
    a ``--confcutdir`` given on the command line is left as given. A project that cannot
    be located is left alone here: ``locate`` refuses it with its reason when the run is
    configured."""
    namespace = early_config.known_args_namespace
    given = namespace.confcutdir
    if given is None or any(
        arg == "--confcutdir" or arg.startswith("--confcutdir=")
        for arg in early_config.invocation_params.args
    ):
        return
    try:
        project = locate_project(
            invocation_dir=early_config.invocation_params.dir,
            args=[str(arg) for arg in namespace.file_or_dir or ()],
            option=getattr(namespace, "ragmetrics_thresholds", None),
            ini_value=str(early_config.getini(INI_KEY) or ""),
            inipath=early_config.inipath,
            rootpath=early_config.rootpath,
        )
    except ProjectError:
        return  # refused with its reason by ``locate`` when the run is configured
    cut = (early_config.invocation_params.dir / given).resolve()
    root = project.root.resolve()
    if root in cut.parents:
        namespace.confcutdir = str(root)


def locate(config: pytest.Config) -> Project:
    """The thresholds file in force and the project root (``config.project``)."""
    try:
        return locate_project(
            invocation_dir=config.invocation_params.dir,
            args=config.args,
            option=config.getoption("ragmetrics_thresholds"),
            ini_value=str(config.getini(INI_KEY) or ""),
            inipath=config.inipath,
            rootpath=config.rootpath,
        )
    except ProjectError as error:
        raise pytest.UsageError(str(error)) from None


def cache_dir(config: pytest.Config, root: Path) -> Path:
    """Where this process's embedding cache lives; ``--ragmetrics-no-cache`` gives the run
    a private directory (shared with xdist workers, removed at the end)."""
    given = workerinput(config)
    if given is not None and RUN_CACHE_KEY in given:
        return Path(given[RUN_CACHE_KEY])
    if config.getoption("ragmetrics_no_cache"):
        return Path(tempfile.mkdtemp(prefix="ragmetrics-run-cache-"))
    chosen = config.getoption("ragmetrics_cache_dir") or os.environ.get(CACHE_DIR_ENV)
    if chosen:
        return config.invocation_params.dir / chosen
    return root / CACHE_DIR_NAME


def check_writable(option: str, path: Path) -> None:
    """Refuse, before anything runs, an output path that cannot be written."""
    if path.is_dir():
        raise pytest.UsageError(f"{option} {path}: is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise pytest.UsageError(f"{option} {path}: cannot create {path.parent}: {error}") from None


def _path(config: pytest.Config, name: str) -> Path | None:
    """An output path option, relative to the invocation directory; ``None`` when unset."""
    value = config.getoption(name)
    return config.invocation_params.dir / value if value else None


def history_dir(config: pytest.Config) -> Path | None:
    """The run history's directory: ``--ragmetrics-history`` relative to the invocation
    directory, else the ini key relative to the ini file (so a run from a subfolder finds
    the same one), else ``None``. A path that exists and is not a directory is refused."""
    option = config.getoption("ragmetrics_history")
    ini_value = str(config.getini(HISTORY_INI_KEY) or "")
    if option:
        base, where, value = config.invocation_params.dir, "--ragmetrics-history", option
    elif ini_value:
        inipath = config.inipath
        base = inipath.parent if inipath is not None else config.invocation_params.dir
        where = f"{inipath.name if inipath else '-o'} {HISTORY_INI_KEY}"
        value = ini_value
    else:
        return None
    path = resolve_setting(base / value, lambda why: pytest.UsageError(f"{where}: {why}"))
    if path.exists() and not path.is_dir():
        raise pytest.UsageError(f"{where} {value}: {path} is not a directory; name a directory")
    return path


def whole_number(option: str, value: str | None, default: int, low: int, high: int | None) -> int:
    """An option's whole number, between ``low`` and ``high`` (inclusive, no upper bound
    when ``None``); ``default`` when the option is not given. ``--opt=abc``, ``--opt 0``
    and ``--opt -5`` are usage errors saying what the option takes."""
    if value is None:
        return default
    takes = f"a whole number >= {low}" if high is None else f"a whole number from {low} to {high}"
    try:
        number = int(value.strip())
    except ValueError:
        raise pytest.UsageError(f"{option} takes {takes}, got {value!r}") from None
    if number < low or (high is not None and number > high):
        raise pytest.UsageError(f"{option} takes {takes}, got {value!r}")
    return number


def umap_installed() -> bool:
    """Whether umap-learn is installed, found without importing it (it brings numba): a
    run that never draws a picture does not pay for it. The distribution is asked for by
    name, since another package can be importable as ``umap``."""
    return umap_version() is not None and importlib.util.find_spec("umap") is not None


def umap_wanted(config: pytest.Config) -> bool:
    """``--ragmetrics-projection-umap``, refused at once when umap-learn is not installed."""
    if not config.getoption("ragmetrics_projection_umap"):
        return False
    if not umap_installed():
        raise pytest.UsageError(
            "--ragmetrics-projection-umap needs umap-learn, which is not installed: "
            "pip install 'pytest-ragmetrics[umap]' (or leave the option out: every "
            "picture has its PCA projection)"
        )
    return True


def parse_options(config: pytest.Config) -> Options:
    """The run's options, validated (any process; a worker takes the run's id, and its
    private cache, from the controller)."""
    limit = config.getoption("ragmetrics_limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--ragmetrics-limit must be at least 1, got {limit}")
    mode = config.getoption("ragmetrics_mode")
    if mode is not None and mode not in MODES:
        raise pytest.UsageError(
            f"--ragmetrics-mode: unknown mode {mode!r}; use {' or '.join(MODES)}"
        )
    engine = config.getoption("ragmetrics_engine")
    from pytest_ragmetrics.config.thresholds import ENGINES  # read with thresholds.toml

    if engine is not None and engine not in ENGINES:
        raise pytest.UsageError(
            f"--ragmetrics-engine: unknown engine {engine!r}; use {' or '.join(ENGINES)}"
        )
    batch_size = config.getoption("ragmetrics_batch_size")
    if batch_size is not None and batch_size < 1:
        raise pytest.UsageError(f"--ragmetrics-batch-size must be at least 1, got {batch_size}")
    given = workerinput(config)
    run_id = given[RUN_ID_KEY] if given else uuid.uuid4().hex
    save_outputs = _path(config, "ragmetrics_save_outputs")
    if save_outputs is not None and given is None:
        check_writable("--ragmetrics-save-outputs", save_outputs)
    project = locate(config)
    projection_limit = whole_number(
        "--ragmetrics-projection-limit",
        config.getoption("ragmetrics_projection_limit"),
        DEFAULT_LIMIT,
        MIN_POINTS,
        None,
    )
    projection_seed = whole_number(
        "--ragmetrics-projection-seed",
        config.getoption("ragmetrics_projection_seed"),
        0,
        0,
        MAX_SEED,
    )
    repeats = config.getoption("ragmetrics_judge_repeats")
    judge_repeats = (
        None
        if repeats is None
        else whole_number("--ragmetrics-judge-repeats", repeats, 1, 1, MAX_JUDGE_REPEATS)
    )
    ray_timeout = whole_number(
        "--ragmetrics-ray-timeout",
        config.getoption("ragmetrics_ray_timeout"),
        DEFAULT_RAY_TIMEOUT,
        1,
        None,
    )
    return Options(
        cache_dir=cache_dir(config, project.root),
        project=project,
        limit=limit,
        json_path=_path(config, "ragmetrics_json"),
        md_path=_path(config, "ragmetrics_md"),
        html_path=_path(config, "ragmetrics_html"),
        update_baseline=config.getoption("ragmetrics_update_baseline"),
        force_gates=config.getoption("ragmetrics_force_gates"),
        refresh=config.getoption("ragmetrics_refresh"),
        save_outputs=save_outputs,
        run_id=run_id,
        no_cache=config.getoption("ragmetrics_no_cache"),
        history_dir=history_dir(config),
        mode=mode,
        batch_size=batch_size,
        engine=engine,
        ray_timeout=ray_timeout,
        projection_limit=projection_limit,
        projection_seed=projection_seed,
        projection_umap=umap_wanted(config),
        judge_repeats=judge_repeats,
        judge_compare=config.getoption("ragmetrics_judge_compare"),
        pr_comment_path=_path(config, "ragmetrics_pr_comment"),
        pr_comment_link=config.getoption("ragmetrics_pr_comment_link") or None,
        annotations=config.getoption("ragmetrics_annotations") != "off",
    )
