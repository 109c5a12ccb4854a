"""pytest_ragmetrics.testing is the testing extra's: without Hypothesis it says what to
install; with it, importing imports neither pytest nor the embedding model's torch."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


def test_without_hypothesis_the_import_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [name for name in sys.modules if name.startswith("pytest_ragmetrics.testing")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # `import hypothesis` fails
    with pytest.raises(ImportError, match=r"pip install 'pytest-ragmetrics\[testing\]'"):
        importlib.import_module("pytest_ragmetrics.testing")


def test_importing_it_imports_no_pytest_and_no_torch() -> None:
    code = (
        "import sys, pytest_ragmetrics.testing; "
        "print(sorted({'pytest', '_pytest', 'torch'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
