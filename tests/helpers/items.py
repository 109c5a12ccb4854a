"""A stand-in for a pytest item, for unit tests of what the plugin reads of one."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pytest_ragmetrics.plugin.fixtures import METRIC_FIXTURE_MARK


def _plugin_metric() -> None:
    """Stands for a metric fixture the plugin generated, as pytest resolves it."""


setattr(_plugin_metric, METRIC_FIXTURE_MARK, True)


@dataclass
class FakeItem:
    """What the plugin reads of a pytest item, for unit tests: its node id, fixture
    names and parameters (``item.callspec.params``). Every fixture name that is a
    metric's resolves to the plugin's metric fixture, as when no project overrides it."""

    nodeid: str
    fixturenames: list[str]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def callspec(self) -> SimpleNamespace:
        return SimpleNamespace(params=self.params)

    @property
    def _fixtureinfo(self) -> SimpleNamespace:
        plugin = [SimpleNamespace(func=_plugin_metric)]
        return SimpleNamespace(name2fixturedefs=dict.fromkeys(self.fixturenames, plugin))
