"""pytest-ragmetrics: RAG evaluation metrics as pytest assertion fixtures and CI gates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.live.system import LiveSystem, LiveSystemError

if TYPE_CHECKING:
    from pytest_ragmetrics.plugin.custom import metric

__version__ = "0.1.0"
__all__ = ["LiveSystem", "LiveSystemError", "__version__", "metric"]


def __getattr__(name: str) -> Any:
    """``metric`` is imported on first use: it imports pytest and the plugin, which
    ``import pytest_ragmetrics`` (and every metric module below it) does not need."""
    if name == "metric":
        from pytest_ragmetrics.plugin.custom import metric

        return metric
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
