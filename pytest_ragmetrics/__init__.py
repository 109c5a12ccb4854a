"""pytest-ragmetrics: RAG evaluation metrics as pytest assertion fixtures and CI gates."""

from __future__ import annotations

from pytest_ragmetrics.live.system import LiveSystem, LiveSystemError

__version__ = "0.1.0"
__all__ = ["LiveSystem", "LiveSystemError", "__version__"]
