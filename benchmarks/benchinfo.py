"""What the benchmark scripts say about the machine: package versions and its load."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Mapping, Sequence
from typing import Any


def version(distribution: str) -> str:
    """The installed version of ``distribution``, or "not installed"."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> float | None:
    """The one-minute load average, where the platform has one."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def machine_info(
    details: Mapping[str, Any], packages: Sequence[str], **threads: int | None
) -> dict[str, Any]:
    """Where the numbers come from and how busy the machine was around them:
    ``details`` holds ``load_before``/``load_after``; ``threads`` names thread pools."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        **threads,
        "load_average": {"before": details.get("load_before"), "after": details.get("load_after")},
        "versions": {name: version(name) for name in packages},
    }
