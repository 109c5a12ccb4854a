"""Metric fixtures are bound under private names, so none shadows a builtin for code; the
``Score`` they return builds its evidence when read."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import pytest_ragmetrics.plugin
from pytest_ragmetrics import Evidence
from pytest_ragmetrics.metrics.catalog import FIXTURES
from pytest_ragmetrics.plugin.fixtures import Score


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


def test_a_score_builds_its_evidence_when_read_and_shows_it_in_its_repr() -> None:
    built: list[str] = []

    def said(text: str) -> str:
        built.append(text)
        return text

    score = Score(0.5, "f1", "r1", Evidence(said, "best gold 'Paris'"))
    assert score == 0.5
    assert score + 1 == 1.5
    assert built == []
    assert repr(score) == "f1=0.5 (row 'r1': best gold 'Paris')"
    assert score.evidence == "best gold 'Paris'"
    assert built == ["best gold 'Paris'"]  # built once, kept
    assert Score(1.0, "em", "r2", "matches a gold").evidence == "matches a gold"
