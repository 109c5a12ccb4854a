"""The metric fixtures, one per catalog metric, in a module that holds nothing else.

pytest finds a plugin's fixtures among its module's attributes, and a module's attributes
are its globals: a fixture named like a builtin (``map``, trec_eval's name) would shadow
that builtin for every function of the module it is defined in. Here there is no function
to shadow it for. The fixtures themselves are built by ``plugin.fixtures``.
"""

from __future__ import annotations

from pytest_ragmetrics.metrics.catalog import FIXTURES
from pytest_ragmetrics.plugin.fixtures import define_metric_fixture

for _spec in FIXTURES.values():
    if _spec.fixture in globals():
        raise RuntimeError(f"metric fixture {_spec.fixture!r} clashes with a name in {__name__}")
    globals()[_spec.fixture] = define_metric_fixture(_spec)
del _spec
