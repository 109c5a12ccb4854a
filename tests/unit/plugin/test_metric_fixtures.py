"""Metric fixtures are bound under private names, so none shadows a builtin for code."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import pytest_ragmetrics.plugin
from pytest_ragmetrics.metrics.catalog import FIXTURES


def test_no_plugin_module_binds_a_builtin_name() -> None:
    """A module-level ``map`` (trec_eval's fixture name) would turn every ``map(...)`` of
    that module into a call of the fixture, which pytest refuses."""
    assert "map" in FIXTURES
    shadowed = {}
    for module_info in pkgutil.iter_modules(pytest_ragmetrics.plugin.__path__):
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
