"""pytest-ragmetrics: RAG evaluation metrics as pytest assertion fixtures and CI gates.

The names users write, in one place (the pure metric functions are in
``pytest_ragmetrics.metrics``, the property checks for metric authors in
``pytest_ragmetrics.testing``)::

    from pytest_ragmetrics import Row, RowValue, metric

Every name but ``__version__`` is imported on first use (PEP 562): ``metric``,
``dataset_metric`` and ``Score`` import pytest and the plugin, which neither
``import pytest_ragmetrics`` nor any module below it (each imports this package first)
should pay for. ``__all__`` is the public API; everything else is internal and may move.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics._version import __version__

if TYPE_CHECKING:
    from pytest_ragmetrics.data.row import Row, RowError
    from pytest_ragmetrics.data.sql import SqlDataset
    from pytest_ragmetrics.embeddings.model import embedder_for
    from pytest_ragmetrics.live.system import LiveSystem, LiveSystemError
    from pytest_ragmetrics.metrics.base import Column, Evidence, Presentation
    from pytest_ragmetrics.metrics.custom import RowValue
    from pytest_ragmetrics.plugin.custom import dataset_metric, metric
    from pytest_ragmetrics.plugin.fixtures import Score
    from pytest_ragmetrics.text.citations import strip_citations

# Public name -> the module defining it.
_PUBLIC = {
    # declaring a metric in a conftest.py (docs/custom-metrics.md)
    "metric": "pytest_ragmetrics.plugin.custom",
    "dataset_metric": "pytest_ragmetrics.plugin.custom",
    "RowValue": "pytest_ragmetrics.metrics.custom",
    "Evidence": "pytest_ragmetrics.metrics.base",
    # how the reports show a metric of one's own (its presentation=)
    "Presentation": "pytest_ragmetrics.metrics.base",
    "Column": "pytest_ragmetrics.metrics.base",
    # what a metric reads and what its fixture returns
    "Row": "pytest_ragmetrics.data.row",
    "RowError": "pytest_ragmetrics.data.row",
    "Score": "pytest_ragmetrics.plugin.fixtures",
    "strip_citations": "pytest_ragmetrics.text.citations",
    "embedder_for": "pytest_ragmetrics.embeddings.model",
    # where an eval's rows come from (docs/datasets.md, docs/live.md)
    "SqlDataset": "pytest_ragmetrics.data.sql",
    "LiveSystem": "pytest_ragmetrics.live.system",
    "LiveSystemError": "pytest_ragmetrics.live.system",
}

__all__ = [
    "Column",
    "Evidence",
    "LiveSystem",
    "LiveSystemError",
    "Presentation",
    "Row",
    "RowError",
    "RowValue",
    "Score",
    "SqlDataset",
    "__version__",
    "dataset_metric",
    "embedder_for",
    "metric",
    "strip_citations",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept here after."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
