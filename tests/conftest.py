"""The tests' fixtures and setup; the helpers they share are in tests/helpers/."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.project import MODES, Project
from hypothesis import settings

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
