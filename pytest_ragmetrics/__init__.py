"""pytest-ragmetrics: RAG evaluation metrics as pytest assertion fixtures and CI gates."""

from __future__ import annotations

__version__ = "0.1.0"
