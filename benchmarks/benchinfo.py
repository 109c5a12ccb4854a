"""What the benchmark scripts say about the machine: package versions and its load."""

from __future__ import annotations

import importlib.metadata
import os


def version(distribution: str) -> str:
    """The installed version of ``distribution``, or "not installed"."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> float | None:
    """The one-minute load average, where the platform has one."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None
