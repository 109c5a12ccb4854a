"""A user's run pays for no test tool: hypothesis and pytest-benchmark are dev-only, and
so are the reference implementations the parity tests compare with.

Installed, either plugin acts on every pytest run of the user's project (pytest-benchmark
prints its header line and fills ``pytest --help``; a collection creates ``.hypothesis/``
and ``.benchmarks/``), so neither may be a runtime requirement of the package.

The requirements are read from this checkout's pyproject.toml, not from the installed
distribution's metadata (``importlib.metadata.requires``): a development environment's
metadata comes from whichever checkout was installed last, so it says nothing about this
one until it is reinstalled.
"""

from __future__ import annotations

import ast
import gzip
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers.project import EVAL, ROWS, jsonl

ROOT = Path(__file__).parents[2]
DEV_ONLY = {"hypothesis": "hypothesis", "pytest-benchmark": "pytest_benchmark"}
# The reference implementations the parity tests and benchmarks compare with: the plugin
# computes every number itself, so a user installs none of them.
REFERENCES = {"rouge-score": "rouge_score", "pytrec-eval-terrier": "pytrec_eval", "ranx": "ranx"}


def _name(requirement: str) -> str:
    """The distribution name of a requirement string, normalised (PEP 503)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"pyproject.toml: cannot read the requirement {requirement!r}"
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def test_test_tools_are_dev_requirements_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {_name(requirement) for requirement in project["dependencies"]}
    dev = {_name(requirement) for requirement in project["optional-dependencies"]["dev"]}
    assert runtime.isdisjoint(DEV_ONLY), f"runtime requirements: {sorted(runtime)}"
    assert set(DEV_ONLY) <= dev


def test_xdist_has_an_extra_of_its_own() -> None:
    """`-n 2`, which the docs show for evals, works after `pip install '...[xdist]'`."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert {_name(requirement) for requirement in extras["xdist"]} == {"pytest-xdist"}


def test_the_testing_extra_is_hypothesis() -> None:
    """pytest_ragmetrics.testing, which metric authors import in their own tests, needs
    Hypothesis: `pip install 'pytest-ragmetrics[testing]'`."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert {_name(requirement) for requirement in extras["testing"]} == {"hypothesis"}


def test_the_package_never_imports_them() -> None:
    """Outside pytest_ragmetrics.testing (the testing extra's, which the plugin never
    imports: tests/unit/test_layers.py checks that nothing else imports it)."""
    imported: set[str] = set()
    testing = ROOT / "pytest_ragmetrics" / "testing"
    for path in (ROOT / "pytest_ragmetrics").rglob("*.py"):
        if testing in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert imported  # the walk read the package
    assert imported.isdisjoint(DEV_ONLY.values())
    assert imported.isdisjoint(REFERENCES.values())


def test_reference_implementations_are_dev_requirements_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {_name(requirement) for requirement in project["dependencies"]}
    dev = {_name(requirement) for requirement in project["optional-dependencies"]["dev"]}
    assert runtime.isdisjoint(REFERENCES), f"runtime requirements: {sorted(runtime)}"
    assert set(REFERENCES) <= dev


def test_collecting_an_eval_leaves_no_tool_directory(pytester: pytest.Pytester) -> None:
    # With the two plugins off, what is left is pytest and ours: this shows that our
    # plugin itself creates neither directory (the dev environment has both plugins, so
    # a run with them on would show nothing about a user's environment without them).
    pytester.makeini("[pytest]\n")
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "rows.jsonl").write_text(jsonl(ROWS), encoding="utf-8")
    pytester.makepyfile(test_eval=EVAL)
    result = pytester.runpytest(
        "-p", "no:benchmark", "-p", "no:hypothesispytest", "-p", "no:cacheprovider",
        "--collect-only",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*4 tests collected*"])
    result.stdout.no_fnmatch_line("benchmark: *")
    assert not (pytester.path / ".hypothesis").exists()
    assert not (pytester.path / ".benchmarks").exists()


# The dataset formats that need a library of their own: the extra that installs it, and
# the module the plugin imports to read such a file (and only then).
FORMAT_EXTRAS = {"parquet": ("pyarrow", "pyarrow"), "zstd": ("zstandard", "zstandard")}


def test_each_optional_format_has_an_extra_that_dev_installs_too() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    runtime = {_name(requirement) for requirement in project["dependencies"]}
    dev = {_name(requirement) for requirement in extras["dev"]}
    for extra, (distribution, _) in FORMAT_EXTRAS.items():
        assert {_name(requirement) for requirement in extras[extra]} == {distribution}
        assert distribution in dev  # so CI runs the format's tests
        assert distribution not in runtime


def test_the_plugin_imports_a_format_library_only_to_read_that_format(tmp_path: Path) -> None:
    """Importing the plugin, and loading JSONL, gzip'd JSONL and CSV, imports neither."""
    (tmp_path / "d.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    (tmp_path / "d.csv").write_text("id\na\n", encoding="utf-8")
    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(b'{"id": "a"}\n'))
    modules = sorted(module for _, module in FORMAT_EXTRAS.values())
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "import pytest_ragmetrics.plugin.hooks, pytest_ragmetrics.plugin.fixtures\n"
        "import pytest_ragmetrics.plugin.dataset_fixtures\n"
        "from pytest_ragmetrics.data.dataset import load_dataset\n"
        f"folder = Path({str(tmp_path)!r})\n"
        "for name in ('d.jsonl', 'd.csv', 'd.jsonl.gz'):\n"
        "    assert [r.row.id for r in load_dataset(folder / name).rows] == ['a'], name\n"
        f"found = [m for m in sys.modules if m.split('.')[0] in {modules!r}]\n"
        "assert not found, found\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_the_ray_extra_is_optional_and_the_local_engine_never_imports_ray(
    pytester: pytest.Pytester,
) -> None:
    """Ray is the `ray` extra, not a requirement; a bulk run on the local engine (the
    default) never imports it, even where it is installed."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "ray" not in {_name(requirement) for requirement in project["dependencies"]}
    assert {_name(r) for r in project["optional-dependencies"]["ray"]} == {"ray"}
    pytester.makefile(".jsonl", **{"data/rows": jsonl(ROWS).rstrip("\n")})
    pytester.makepyfile(test_eval=EVAL)
    code = (
        "import sys, pytest\n"
        "code = pytest.main(['-q', '-p', 'no:cacheprovider', '-p', 'no:xdist', "
        "'--ragmetrics-mode=bulk'])\n"
        "assert code == 0, code\n"
        "found = [m for m in sys.modules if m.split('.')[0] == 'ray']\n"
        "assert not found, found\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=pytester.path, check=True)
