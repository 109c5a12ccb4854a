"""Directories a run cannot write: read-only ones, and files in a directory's place."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest


def make_read_only(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``directory`` refuse new files and writes, for whoever runs the tests.

    ``chmod`` binds every user but root, who writes anywhere: for root, opening a file
    in the directory for writing fails instead as it does on a read-only file system
    (EROFS), in both calls Python opens files with (``os.open``, under ``tempfile`` and
    the file locks, and ``io.open``, under ``pathlib``)."""
    directory.chmod(0o555)
    if os.geteuid() != 0:
        return
    inside = directory.resolve()

    def refused(path: object) -> bool:
        if not isinstance(path, str | bytes | os.PathLike):
            return False  # a file descriptor
        return Path(os.fsdecode(path)).resolve().parent == inside

    def read_only_error(path: object) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))  # type: ignore[call-overload]

    real_os_open, real_io_open = os.open, io.open
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & writing and dir_fd is None and refused(path):
            raise read_only_error(path)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def io_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if set(mode) & set("wax+") and refused(file):
            raise read_only_error(file)
        return real_io_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)


def block_directory(target: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put in ``target``'s place what a run cannot use as a directory: ``"a file"``, or
    (anything else) a directory that cannot be written (``make_read_only``)."""
    if how == "a file":
        target.write_text("not a directory", encoding="utf-8")
    else:
        target.mkdir()
        make_read_only(target, monkeypatch)
