"""The package's layers, read from its imports: only ``plugin/`` imports pytest, imports
run one way (from a higher layer to a lower one), and no module imports itself back.

The layers, top to bottom, are those of docs/development.md. An import counts wherever it
is written (module level, inside a function, under ``TYPE_CHECKING``): each is a
dependency a reader has to follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ragmetrics"
NAME = "pytest_ragmetrics"

# Higher number = higher layer. A module may import its own layer or lower ones.
LAYERS = {
    "plugin": 9,
    "reports": 8,
    "gates": 7,
    "results": 6,
    "testing": 6,  # property checks for metric authors: settings and the catalog below
    "config": 5,
    "metrics": 4,
    "judge": 3,
    "live": 3,
    "embeddings": 3,
    "text": 2,
    "data": 2,
    "inference": 2,  # statistics of comparisons: numpy and the standard library only
    "files": 1,
    "progress": 1,
    "collector": 1,
    "printable": 1,  # text from the data made safe for a terminal or a CI log
    "_version": 0,  # the version string, importing nothing
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = _module_name(path).split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            # `from pytest_ragmetrics.x import y` may name a submodule y
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _own(imported: str) -> str | None:
    """The package module an import names (longest known prefix), or None."""
    parts = imported.split(".")
    for end in range(len(parts), 1, -1):
        candidate = ".".join(parts[:end])
        if candidate in MODULES:
            return candidate
    return None


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


GRAPH = {
    module: {own for name in _imports(path) if (own := _own(name)) and own != module}
    for module, path in MODULES.items()
}


def test_every_subpackage_and_top_module_has_a_layer() -> None:
    unplaced = sorted({_layer(m) for m in MODULES if _layer(m)} - set(LAYERS))
    assert not unplaced, f"give these a layer in LAYERS and docs/development.md: {unplaced}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_plugin_layer_imports_pytest(module: str) -> None:
    if _layer(module) == "plugin":
        return
    pytest_imports = {
        name
        for name in _imports(MODULES[module])
        if name.split(".")[0] in {"pytest", "_pytest", "pluggy", "xdist"}
    }
    assert not pytest_imports, f"{module} imports {sorted(pytest_imports)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_down_the_layers(module: str) -> None:
    if module == NAME:  # the package's face re-exports the public API
        return
    rank = LAYERS[_layer(module)]
    upward = sorted(
        target for target in GRAPH[module] if target != NAME and LAYERS[_layer(target)] > rank
    )
    assert not upward, f"{module} (layer {_layer(module)}) imports higher layers: {upward}"


def test_nothing_imports_the_testing_package() -> None:
    """pytest_ragmetrics.testing needs Hypothesis, an optional extra: the plugin and the
    metrics never import it, so a run without Hypothesis installed never needs it."""
    importers = sorted(
        module
        for module, targets in GRAPH.items()
        if _layer(module) != "testing"
        and any(_layer(target) == "testing" for target in targets if target != NAME)
    )
    assert not importers, f"these import pytest_ragmetrics.testing: {importers}"


def test_no_import_cycle() -> None:
    """Depth-first search for a back edge; the message shows one cycle."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(GRAPH[module]):
            if target == NAME or target.endswith("__init__"):
                continue
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (cycle := visit(module)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_checks_see_real_imports() -> None:
    """Guard against a parser that finds nothing (every check above would then pass)."""
    assert "pytest_ragmetrics.results.summary" in GRAPH["pytest_ragmetrics.results.compare"]
    assert any("pytest" in name.split(".")[0] for name in _imports(MODULES[f"{NAME}.plugin.hooks"]))
