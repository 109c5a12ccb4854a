"""The layout of the test suite: what lets its modules import one another by basename."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).parents[1]
PACKAGE = TESTS.parent / "pytest_ragmetrics"


def test_every_module_basename_is_unique_across_tests() -> None:
    # With no __init__.py, pytest imports each test module under its basename: a second
    # file of the same name fails collection with "import file mismatch", and
    # conftest.py's sys.path entries would let an import find either.
    folders: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name != "conftest.py" and "__pycache__" not in path.parts:
            folders[path.name].append(str(path.parent.relative_to(TESTS)))
    duplicates = {name: sorted(where) for name, where in folders.items() if len(where) > 1}
    assert not duplicates, f"tests/: module names used more than once: {duplicates}; rename one"


def test_no_init_files_under_tests() -> None:
    # helpers/ is the one package: the helpers the tests import by name, with no test in it
    found = sorted(str(path.relative_to(TESTS)) for path in TESTS.rglob("__init__.py"))
    assert found == ["helpers/__init__.py"], (
        f"tests/: {found} would change how pytest names the modules; remove"
    )
    assert sorted((TESTS / "helpers").glob("test_*.py")) == [], "tests/helpers/ holds no test"


def test_unit_folders_mirror_the_package() -> None:
    subpackages = {path.parent.relative_to(PACKAGE) for path in PACKAGE.rglob("__init__.py")}
    folders = {
        path.relative_to(TESTS / "unit")
        for path in (TESTS / "unit").rglob("*")
        if path.is_dir() and path.name != "__pycache__"
    }
    stray = sorted(str(folder) for folder in folders - subpackages)
    assert stray == [], f"tests/unit/: {stray} name no subpackage of pytest_ragmetrics"
