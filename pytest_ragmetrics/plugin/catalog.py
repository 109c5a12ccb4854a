"""The run's metric catalog: built when the run is configured, kept in its config.

A run's ``Catalog`` (``pytest_ragmetrics.metrics.catalog``) holds the built-in metrics and
the metrics the user's code declared (``pytest_ragmetrics.metric``) in the modules pytest
registered as plugins before the run read thresholds.toml: the conftest.py files of the
command-line paths and their parents, ``-p`` plugins, installed plugins. The fixture a
declaration returns carries it (``metrics.catalog.DECLARATION_MARK``), so the catalog is
read from what those modules hold, as pytest reads their fixtures: declaring a metric
changes nothing module-global, and runs in one process (pytester's) each see their own.

A metric of a module pytest imports later (a conftest.py below the command-line path, a
test module) is not in the run's catalog: its gates could not be read, so a test taking it
is refused (``plugin.fixtures.late_metrics``).
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from pytest_ragmetrics.metrics.catalog import Catalog, catalog_in_force, declarations_in
from pytest_ragmetrics.metrics.custom import DeclarationError

CATALOG_KEY = pytest.StashKey[Catalog]()


def loaded_catalog(config: pytest.Config) -> Catalog:
    """The catalog of the modules registered with the run's plugin manager, in the order
    pytest registered them; a usage error naming both places when two declare one name
    (or one takes a built-in name)."""
    found = [
        declared
        for _, plugin in config.pluginmanager.list_name_plugin()
        if isinstance(getattr(plugin, "__dict__", None), dict)
        for declared in declarations_in(vars(plugin))
    ]
    try:
        return Catalog(found)
    except DeclarationError as error:
        raise pytest.UsageError(str(error)) from None


def begin(config: pytest.Config) -> Catalog:
    """Build the run's catalog, keep it in the config's stash, and put it in force (what a
    lookup not handed a catalog reads) until pytest cleans the config up."""
    catalog = config.stash[CATALOG_KEY] = loaded_catalog(config)
    in_force = ExitStack()
    in_force.enter_context(catalog_in_force(catalog))
    config.add_cleanup(in_force.close)
    return catalog


def run_catalog(config: pytest.Config) -> Catalog:
    """The run's catalog (``begin`` built it when the run was configured)."""
    return config.stash[CATALOG_KEY]
