"""pytest-ragmetrics hooks. Hooks only: each hands off to the run's ``RunSession``.

"Controller" is the process that reports (the only process without pytest-xdist, the
coordinating one with it); "worker" is an xdist worker.

This module is the plugin's one entry point (``ragmetrics`` in pyproject.toml's
``pytest11``): it registers the modules of the plugin's fixtures itself
(``FIXTURE_MODULES``), so ``pytest -p no:ragmetrics`` turns off every hook, option, marker
and fixture of the plugin at once.

pytest imports this module in every run of every project the plugin is installed in, so it
imports what declaring the options needs and little else: the fixtures' modules when the
run is configured; the run's session (and through it the datasets, the gates, the
reports) when a hook first needs it; numpy, torch, sentence-transformers and faiss when
something is computed (``tests/integration/test_plugin_import.py``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragmetrics.collector import Freezer
from pytest_ragmetrics.plugin.options import add_options
from pytest_ragmetrics.plugin.running import running

if TYPE_CHECKING:
    from pytest_ragmetrics.plugin.session import RunSession


# The run's session, made when the run is configured. ``plugin.session`` (and through it
# what runs, gates and reports rows) is imported then: importing the plugin, which every
# pytest run does, needs none of it.
SESSION_KEY = pytest.StashKey["RunSession"]()


# The run's freezes of what it holds (``collector.Freezer``), made when its conftest files
# are loaded and given back as the config's last cleanup.
FREEZER_KEY = pytest.StashKey[Freezer]()
# The modules of the plugin's fixtures, by the name ``pytest_configure`` registers each
# under (``-p no:ragmetrics`` keeps this module, and so them, from loading).
FIXTURE_MODULES = {
    "ragmetrics-fixtures": "pytest_ragmetrics.plugin.fixtures",
    "ragmetrics-dataset-fixtures": "pytest_ragmetrics.plugin.dataset_fixtures",
}


def run_session(config: pytest.Config) -> RunSession:
    """The run's session (``pytest_configure`` made it)."""
    return config.stash[SESSION_KEY]


def freezer(config: pytest.Config) -> Freezer:
    """The run's ``Freezer`` (``pytest_load_initial_conftests`` made it)."""
    return config.stash[FREEZER_KEY]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare every --ragmetrics-* option and ini key (all processes, at start-up)."""
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """--ragmetrics-init=DIR: write a starter project instead of running tests (the process
    pytest was started in, before anything is configured or collected)."""
    if config.getoption("ragmetrics_init"):
        from pytest_ragmetrics.plugin.init import run_init  # this option only

        return run_init(config, sys.stdout.write)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, object, object]:
    """Let pytest import the run's conftest files from the folders the plugin reads; a
    ``SqlDataset`` refused in one is a usage error saying so, with no traceback (the
    process pytest was started in, and each xdist worker).

    The objects the run will freeze for the garbage collector are given back as the
    config's first cleanup, which pytest runs last however the run ends: also for a
    config that was parsed and never configured (a failed start,
    ``pytester.parseconfig``), where no ``pytest_unconfigure`` follows."""
    from pytest_ragmetrics.plugin.options import widen_conftest_reach

    widen_conftest_reach(early_config)
    # Cleanups run last-in first-out: the collector gets its frozen objects back last,
    # after pytest's own final collection (``collector.Freezer``).
    frozen = early_config.stash[FREEZER_KEY] = Freezer()
    early_config.add_cleanup(frozen.release)
    try:
        return (yield)
    except Exception as error:
        # A conftest.py's SqlDataset refused as written: the refusal alone, no traceback.
        from pytest_ragmetrics.plugin.collect import sql_refusal

        refusal = sql_refusal(error, "conftest.py")
        if refusal is None:
            raise
        raise pytest.UsageError(refusal) from None


def pytest_configure(config: pytest.Config) -> None:
    """Register the fixtures and the marker, build the run's metric catalog from the
    modules loaded so far, parse the options, read thresholds.toml (all processes)."""
    from pytest_ragmetrics.plugin import catalog
    from pytest_ragmetrics.plugin.collect import MARKER_HELP
    from pytest_ragmetrics.plugin.session import RunSession

    manager = config.pluginmanager
    for name, module in FIXTURE_MODULES.items():
        plugin = importlib.import_module(module)
        if not manager.is_registered(plugin):
            manager.register(plugin, name)
    config.addinivalue_line("markers", MARKER_HELP)
    catalog.begin(config)  # before thresholds.toml: its gates may name the user's metrics
    session = config.stash[SESSION_KEY] = RunSession.configure(config, freezer(config))
    if session.controller:
        config.pluginmanager.register(ControllerHooks(session), "ragmetrics-controller")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the cache; remove the run's private cache (all processes)."""
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.close()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the thresholds file, project root, embedding model and cache (controller)."""
    return run_session(config).header_lines()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize tests that take `row` over their dataset (collecting process)."""
    run_session(metafunc.config).parametrize(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """An eval file's ``SqlDataset`` refused as written fails its collection with the
    refusal alone, no traceback (the collecting process)."""
    report = yield
    if not report.failed:
        return report
    from pytest_ragmetrics.plugin.collect import without_traceback

    return without_traceback(report)


# tryfirst: the outermost wrapper, so the texts are embedded before anything else runs.
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Embed every text the selected rows need, then run them, then end the progress lines
    of live calls and judge verdicts (each process that runs rows; under xdist the first
    worker encodes while the others wait for the cache)."""
    run = run_session(session.config)
    run.prepare(session)
    try:
        return (yield)
    finally:
        run.end_progress()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Record the item as the running one (for the ``row`` fixture); after the test and
    its outcome are reported, write the progress of live-system calls and judge verdicts
    (the process that runs the test)."""
    with running(item):
        result = yield
    run_session(item.config).test_done(item)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a bulk eval's test once per row of the item's batch; leave other tests to
    pytest (the process that runs the test)."""
    return run_session(pyfuncitem.config).run_batch(pyfuncitem)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Hand this process's embedding statistics to the report (xdist: to the controller)."""
    run_session(session.config).hand_over_stats()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach what a row or dataset-level test recorded to its final report (the process
    that runs the test)."""
    report = yield
    run_session(item.config).attach_payload(item, call, report)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(
    report: pytest.CollectReport | pytest.TestReport, config: pytest.Config
) -> tuple[str, str, str] | None:
    """A row whose live-system or judge call failed is an ERROR, in the call phase too
    (the process that reports: the controller under xdist)."""
    if report.when != "call" or not report.failed:
        return None  # most reports: nothing to import for them
    from pytest_ragmetrics.plugin.recording import is_row_error

    return ("error", "E", "ERROR") if is_row_error(report) else None


class ControllerHooks:
    """Hooks of the controller only: registered in pytest_configure when no
    ``workerinput`` says this is an xdist worker."""

    def __init__(self, session: RunSession) -> None:
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Share the run's id, and its private cache, with every xdist worker."""
        self.session.configure_node(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Keep what preparing cost on each xdist worker, for the summary."""
        self.session.node_down(node)

    # tryfirst: the payload is read and taken off the report before any other plugin
    # sees it (one that writes reports out as JSON could not write a typed payload).
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the payload of every report, local or from a worker."""
        self.session.receive(report)

    # trylast: the innermost wrapper, so the gates are reported before the terminal
    # reporter's own wrapper prints the final progress.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Before any row runs, refuse configuration that would silence a gate; after
        every row ran (or the run stopped), gate and report the gates as tests."""
        self.session.start_loop(session)
        stopped: str | None = None
        try:
            return (yield)
        except (session.Failed, session.Interrupted) as stop:
            stopped = str(stop)
            raise
        finally:
            self.session.end_loop(session, stopped)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the main table, the appendix and the gate summary; under GitHub Actions,
        the annotations of the failed gates and rows."""
        from pytest_ragmetrics.printable import printable_lines

        lines = self.session.terminal_lines()
        if lines:
            terminalreporter.section("ragmetrics")
        for line in printable_lines(lines):  # ids, answers and messages from the data
            terminalreporter.write_line(line)
        # GitHub reads workflow commands from the step's output: the terminal's stream.
        # Made safe by reports.annotations, so not defused here.
        for command in self.session.annotation_lines():
            terminalreporter.write_line(command)

    @pytest.hookimpl(trylast=True)  # after the module-level hook stored local statistics
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Append the run to --ragmetrics-history; write the --ragmetrics-json, -html and
        -md reports (and GitHub's summary); fail the run for a file not written."""
        self.session.write_reports(session)
