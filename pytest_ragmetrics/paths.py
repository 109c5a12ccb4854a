"""Paths as users read them in messages and reports."""

from __future__ import annotations

from pathlib import Path


def display_path(path: Path, rootpath: Path) -> str:
    """``path`` relative to the rootdir in POSIX form, or absolute when outside it."""
    try:
        return path.relative_to(rootpath).as_posix()
    except ValueError:
        return str(path)
