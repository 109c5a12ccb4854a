"""The metric fixtures live in a module of their own, so none shadows a builtin for code."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import pytest_ragmetrics.plugin
from pytest_ragmetrics.metrics.catalog import FIXTURES
from pytest_ragmetrics.plugin import metric_fixtures


def test_every_metric_fixture_is_in_metric_fixtures() -> None:
    names = {name for name in vars(metric_fixtures) if not name.startswith("_")}
    imported = {"annotations", "FIXTURES", "define_metric_fixture"}
    assert names - imported == set(FIXTURES)
    assert "map" in FIXTURES  # trec_eval's name, a builtin's too: why the module exists


def test_no_other_plugin_module_binds_a_builtin_name() -> None:
    """A module-level ``map`` would turn every ``map(...)`` of that module into a call of
    something else (a pytest fixture refuses to be called)."""
    shadowed = {}
    for module_info in pkgutil.iter_modules(pytest_ragmetrics.plugin.__path__):
        if module_info.name == "metric_fixtures":
            continue
        module = importlib.import_module(f"pytest_ragmetrics.plugin.{module_info.name}")
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and hasattr(builtins, name)
            and value is not getattr(builtins, name)
        ]
        if names:
            shadowed[module_info.name] = names
    assert shadowed == {}
