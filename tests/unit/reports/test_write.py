"""Why a report could not be written, in the system's words and with what to do."""

from __future__ import annotations

import errno
import os

import pytest

from pytest_ragmetrics.reports.write import os_cause


@pytest.mark.parametrize(
    ("code", "advice"),
    [
        (errno.EISDIR, "name a file"),
        (errno.ENOSPC, "free some space"),
        (errno.EACCES, "make its folder writable"),
        (errno.EROFS, "writable file system"),
        (errno.ENOTDIR, "a folder on its path is a file"),
        (errno.ENOENT, "a folder on its path does not exist"),
        (errno.EINVAL, "name a regular file elsewhere"),
    ],
)
def test_each_cause_says_what_to_do(code: int, advice: str) -> None:
    cause = os_cause(OSError(code, os.strerror(code), "r.md"))
    words, _, told = cause.partition("; ")
    assert words == os.strerror(code).lower()
    assert advice in told
