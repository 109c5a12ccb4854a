"""The public API: what users import, where they import it from, and what importing costs.

Users import from three modules: ``pytest_ragmetrics`` (declaring metrics, rows, scores,
datasets, live systems), ``pytest_ragmetrics.metrics`` (the pure metric functions) and
``pytest_ragmetrics.testing`` (property checks for metric authors; the optional
Hypothesis extra, so it stays a module of its own: the package face never imports it,
tests/unit/test_layers.py). Every other module is internal and may move, so the docs'
code imports from these three only. The two package faces import their names on first
use: the plugin imports both in every pytest run.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import pytest_ragmetrics
import pytest_ragmetrics.metrics

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_MODULES = ("pytest_ragmetrics", "pytest_ragmetrics.metrics", "pytest_ragmetrics.testing")

# Pages whose subject is the package's own code, which imports from the modules that
# define things: their code blocks may import internal modules.
INTERNALS_PAGES = {
    "docs/adding-a-metric.md": "adds a built-in metric: its code is the family module's "
    "own (metrics/answer.py) and its tests import the module they test",
    "docs/development.md": "the layout of the package for its developers",
}

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
IMPORT_LINE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+([\w.]+))", re.M)


def _public_names() -> list[tuple[str, str]]:
    return [
        (module, name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    ]


# -- every public name resolves and says what it is ---------------------------------------


@pytest.mark.parametrize(("module", "name"), _public_names(), ids=lambda x: str(x))
def test_every_public_name_resolves_with_a_docstring(module: str, name: str) -> None:
    value = getattr(importlib.import_module(module), name)
    if name == "__version__" or not callable(value):
        return  # a constant: its module's docstring and the docs describe it
    doc = inspect.getdoc(value) or ""
    # A dataclass without a docstring gets its signature as one: ``Name(field: type, ...)``.
    generated = doc.startswith(f"{getattr(value, '__name__', name)}(")
    assert doc, f"{module}.{name} has no docstring; write one"
    assert not generated, f"{module}.{name} has only its dataclass signature; write a docstring"


@pytest.mark.parametrize("module", ["pytest_ragmetrics", "pytest_ragmetrics.metrics"])
def test_all_is_the_table_of_lazy_names(module: str) -> None:
    face = importlib.import_module(module)
    lazy = set(face._PUBLIC)
    assert sorted(set(face.__all__) - {"__version__"}) == sorted(lazy)
    assert set(face.__all__) <= set(dir(face))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        face.no_such_name  # noqa: B018


def test_a_public_name_its_submodule_shares_is_the_function() -> None:
    """``abstention`` is a function of ``metrics.abstention``, which the plugin imported
    long before this test: importing a submodule binds it on its package."""
    importlib.import_module("pytest_ragmetrics.metrics.abstention")
    from pytest_ragmetrics.metrics import abstention

    assert inspect.isfunction(abstention)
    assert pytest_ragmetrics.metrics.abstention is abstention
    assert abstention("I don't know.").abstains is True


def test_the_public_names_are_the_defining_modules_objects() -> None:
    from pytest_ragmetrics.data.dataset import Row
    from pytest_ragmetrics.metrics.bleu import sum_stats as bleu_sums
    from pytest_ragmetrics.metrics.chrf import sum_stats as chrf_sums
    from pytest_ragmetrics.metrics.retrieval import evaluate

    assert pytest_ragmetrics.Row is Row
    assert pytest_ragmetrics.metrics.evaluate is evaluate
    assert pytest_ragmetrics.metrics.sum_bleu_stats is bleu_sums
    assert pytest_ragmetrics.metrics.sum_chrf_stats is chrf_sums


# -- importing is light --------------------------------------------------------------------


def _fresh(script: str) -> str:
    """``script``'s output in a new interpreter (the test process imported everything)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_importing_the_faces_imports_nothing_else() -> None:
    script = (
        "import sys\nimport pytest_ragmetrics, pytest_ragmetrics.metrics\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pytest_ragmetrics', 'pytest', '_pytest', 'numpy', 'hypothesis')))"
    )
    assert _fresh(script) == str(
        ["pytest_ragmetrics", "pytest_ragmetrics._version", "pytest_ragmetrics.metrics"]
    )


def test_a_submodule_first_leaves_the_function_its_name() -> None:
    script = (
        "import pytest_ragmetrics.metrics.abstention\n"
        "from pytest_ragmetrics.metrics import abstention\n"
        "print(type(abstention).__name__)"
    )
    assert _fresh(script) == "function"


# -- the version is written once -----------------------------------------------------------


def test_the_version_module_imports_nothing_and_is_the_packages() -> None:
    path = ROOT / "pytest_ragmetrics" / "_version.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert imports == []
    from pytest_ragmetrics._version import __version__

    assert pytest_ragmetrics.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)


def test_pyproject_reads_the_version_from_the_version_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"], "the version is written in _version.py only"
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "pytest_ragmetrics._version.__version__"}


# -- the docs import from the public modules only ------------------------------------------


def python_blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown page marked ``python``."""
    return [body for lang, body in FENCE.findall(text) if lang in ("python", "py")]


def imports_of(block: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` of every import in ``block``; ``names`` is ``()`` for ``import
    module``. A block that is not whole Python (a signature) is read line by line, and of a
    parenthesised import only its module is read."""
    try:
        tree = ast.parse(block)
    except SyntaxError:
        found = []
        for match in IMPORT_LINE.finditer(block):
            module, names, plain = match.groups()
            listed = (n.strip(" ()").split(" as ")[0] for n in (names or "").split(","))
            found.append((module, tuple(filter(None, listed))) if module else (plain, ()))
        return found
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
    return found


def import_problems(block: str) -> list[str]:
    """Why each import of the package in ``block`` is not from the public API."""
    problems = []
    for module, names in imports_of(block):
        if module.split(".")[0] != "pytest_ragmetrics":
            continue
        if module not in PUBLIC_MODULES:
            problems.append(f"imports {module}, an internal module; import from {PUBLIC_MODULES}")
            continue
        public = set(importlib.import_module(module).__all__)
        problems += [f"imports {module}.{n}, not in its __all__" for n in names if n not in public]
    return problems


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_import_check_reports_internal_modules_and_unknown_names() -> None:
    block = (
        "from pytest_ragmetrics import metric, Secret\n"
        "from pytest_ragmetrics.metrics import evaluate\n"
        "from pytest_ragmetrics.data.dataset import Row\n"
        "import pytest_ragmetrics.metrics.text\n"
        "import json\n"
    )
    assert import_problems(block) == [
        "imports pytest_ragmetrics.Secret, not in its __all__",
        f"imports pytest_ragmetrics.data.dataset, an internal module; import from {PUBLIC_MODULES}",
        f"imports pytest_ragmetrics.metrics.text, an internal module; import from {PUBLIC_MODULES}",
    ]
    # a block that is not whole Python is still read
    assert imports_of("from pytest_ragmetrics.files import (\n    x,\n)\nf(a, *, b)\n") == [
        ("pytest_ragmetrics.files", ())
    ]
    assert python_blocks("text\n```python\nimport a\n```\n```bash\nimport b\n```\n") == [
        "import a\n"
    ]


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_docs_import_only_public_names(page: Path) -> None:
    where = str(page.relative_to(ROOT))
    if where in INTERNALS_PAGES:
        pytest.skip(f"{where}: {INTERNALS_PAGES[where]}")
    problems = [
        f"{where}, block {number}: {problem}"
        for number, block in enumerate(python_blocks(page.read_text(encoding="utf-8")), 1)
        for problem in import_problems(block)
    ]
    assert not problems, "\n".join(problems)


def test_the_docs_have_code_that_imports_the_package() -> None:
    """Guard against a reader that finds nothing (the check above would then pass)."""
    modules = {
        module
        for page in doc_pages()
        for block in python_blocks(page.read_text(encoding="utf-8"))
        for module, _ in imports_of(block)
    }
    assert set(PUBLIC_MODULES) <= modules
