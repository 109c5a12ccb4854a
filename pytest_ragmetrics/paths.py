"""Paths as users read them in messages and reports."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path, rootpath: Path) -> str:
    """``path`` relative to the rootdir in POSIX form, or absolute when outside it."""
    try:
        return path.relative_to(rootpath).as_posix()
    except ValueError:
        return str(path)


def resolved(path: Path) -> Path:
    """``path`` absolute, with symlinks resolved; only absolute when they cannot be (a
    symlink loop), so that reading it then fails as plainly as reading a missing file."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a loop, before Python 3.13
        return Path(os.path.abspath(path))
