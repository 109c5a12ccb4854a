"""pytest-ragmetrics: RAG evaluation metrics as pytest assertion fixtures and CI gates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.data.sql import SqlDataset
from pytest_ragmetrics.live.system import LiveSystem, LiveSystemError

if TYPE_CHECKING:
    from pytest_ragmetrics.metrics.custom import RowValue
    from pytest_ragmetrics.plugin.custom import dataset_metric, metric

__version__ = "0.1.0"
__all__ = [
    "LiveSystem",
    "LiveSystemError",
    "RowValue",
    "SqlDataset",
    "__version__",
    "dataset_metric",
    "metric",
]


def __getattr__(name: str) -> Any:
    """``metric`` and ``dataset_metric`` are imported on first use: they import pytest and
    the plugin, which ``import pytest_ragmetrics`` (and every metric module below it) does
    not need; ``RowValue`` with them."""
    if name in ("metric", "dataset_metric"):
        from pytest_ragmetrics.plugin import custom

        return getattr(custom, name)
    if name == "RowValue":
        from pytest_ragmetrics.metrics.custom import RowValue

        return RowValue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
