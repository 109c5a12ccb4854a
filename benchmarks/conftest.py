"""pytest-benchmark suites: each times pytest-ragmetrics and a reference in the same run.

Run them from the repository root with the project's virtualenv (the ``dev`` extra)::

    .venv/bin/pytest benchmarks/ --benchmark-only [--bench-size large]

They are not collected by the README's test command (``testpaths`` is ``tests``), and no
benchmark asserts on a time: the numbers are for reading, not for passing.

Every case is parametrized over ``side`` (``reference`` first, then ``ours``) and put in one
pytest-benchmark group, so pytest-benchmark's own table shows both. When both sides of a
case have run, the ratio of their medians (ours / reference: below 1 means ours is faster)
is stored in both sides' ``benchmark.extra_info["ours/reference"]`` (and so in
``--benchmark-json``) and printed in a table at the end of the run.

Timings on a small shared machine are noisy: the table prints the one-minute load average
at the start and end of the session; well above 0 means other processes competed for the
cores. Ratios of medians taken in the same run are far steadier than absolute times.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import pytest

Side = Literal["reference", "ours"]
SIDES: tuple[Side, ...] = ("reference", "ours")
SIZES = ("small", "large")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragmetrics benchmarks")
    group.addoption(
        "--bench-size",
        choices=SIZES,
        default="small",
        help="input size of the benchmarks: small (each suite a minute or less) or large. "
        "Default: small.",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect ``bench_*.py`` as test modules, without changing ``python_files`` for the
    project's tests."""
    if parent.session.isinitpath(file_path):
        return None  # named on the command line: pytest collects it already
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        module: pytest.Module = pytest.Module.from_parent(parent, path=file_path)
        return module
    return None


@dataclass
class Case:
    """One benchmark case: each side's median seconds and benchmark fixture."""

    medians: dict[str, float] = field(default_factory=dict)
    fixtures: dict[str, Any] = field(default_factory=dict)

    def ratio(self) -> float | None:
        if set(self.medians) != set(SIDES) or self.medians["reference"] == 0:
            return None
        return self.medians["ours"] / self.medians["reference"]


@dataclass
class Session:
    cases: dict[str, Case] = field(default_factory=dict)
    load_before: float | None = None


SESSION = pytest.StashKey[Session]()


def _load_average() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SESSION] = Session(load_before=_load_average())


@pytest.fixture(scope="session")
def size(pytestconfig: pytest.Config) -> str:
    """``small`` or ``large`` (``--bench-size``)."""
    value: str = pytestconfig.getoption("--bench-size")
    return value


class Timer(Protocol):
    def __call__(
        self,
        case_name: str,
        side: Side,
        call: Callable[..., Any],
        *,
        rounds: int | None = None,
        setup: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
    ) -> Any: ...


@pytest.fixture
def compare(benchmark: Any, pytestconfig: pytest.Config) -> Timer:
    """``compare(case, side, call)`` times ``call`` with pytest-benchmark and records its
    median under ``case``; once both sides of ``case`` ran, their ratio goes into both
    sides' ``extra_info``. Returns what ``call`` returned.

    With ``rounds`` (for calls of seconds: subprocesses), exactly that many rounds of one
    call each, after ``setup`` if given (pytest-benchmark's ``pedantic``); otherwise
    pytest-benchmark calibrates the rounds itself."""

    def timed(
        case_name: str,
        side: Side,
        call: Callable[..., Any],
        *,
        rounds: int | None = None,
        setup: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
    ) -> Any:
        benchmark.group = case_name  # both sides in one table of pytest-benchmark's
        if rounds is None and setup is None:
            result = benchmark(call)
        else:
            result = benchmark.pedantic(call, setup=setup, rounds=rounds or 1, iterations=1)
        case = pytestconfig.stash[SESSION].cases.setdefault(case_name, Case())
        benchmark.extra_info["case"] = case_name
        benchmark.extra_info["side"] = side
        stats = getattr(benchmark, "stats", None)
        if stats is not None:  # None under --benchmark-disable: nothing was timed
            case.medians[side] = stats.stats.median
            case.fixtures[side] = benchmark
            ratio = case.ratio()
            if ratio is not None:
                for fixture in case.fixtures.values():
                    fixture.extra_info["ours/reference"] = ratio
        return result

    return timed


def summary_lines(session: Session, load_after: float | None) -> list[str]:
    """The ratio table: one line per case with both sides timed."""
    rows = [(name, case) for name, case in session.cases.items() if case.ratio() is not None]
    if not rows:
        return ["no case has both sides timed (run with --benchmark-only to time them)"]
    width = max(len("case"), *(len(name) for name, _ in rows))
    lines = [
        f"{'case':<{width}}  {'reference s':>12}  {'ours s':>12}  {'ours/reference':>14}",
    ]
    for name, case in rows:
        ratio = case.ratio()
        assert ratio is not None
        lines.append(
            f"{name:<{width}}  {case.medians['reference']:>12.6f}  "
            f"{case.medians['ours']:>12.6f}  {ratio:>14.3f}"
        )
    lines.append(f"medians; load average before {session.load_before}, after {load_after}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = config.stash.get(SESSION, None)
    if session is None or not session.cases:
        return
    terminalreporter.section("ours / reference (ratio of medians; below 1: ours is faster)")
    for line in summary_lines(session, _load_average()):
        terminalreporter.write_line(line)
