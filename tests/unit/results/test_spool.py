"""The run's spool keeps records in a file of a folder of its own: read back as put,
from its buffer or from disk; the folder made on the first record and removed once the
file is open (POSIX) or on close; a folder that cannot be made, or a write that fails,
is an error naming the folder and TMPDIR, and stays one."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.results import spool as spool_module
from pytest_ragmetrics.results.spool import Spool, SpoolError


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def test_records_come_back_as_put_from_the_buffer_and_from_disk(
    tmpdir_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool_module, "BUFFER", 200)  # written out every few records
    spool = Spool()
    assert spool.folder is None  # nothing made before the first record
    records = [
        (None, {"judge": {"verdicts": [1, 0], "cost": 0.25}}, None, None, "s1"),
        ({"em": "no match"}, None, {"question": "é?", "gold": ["Paris"]}, {"a": 1}, None),
        *(({"f1": "x" * n}, None, None, None, None) for n in range(0, 400, 37)),
        (None, None, None, None, "last"),  # smaller than the buffer: stays in it
    ]
    places = [spool.put(record) for record in records]
    folder = spool.folder
    assert folder is not None
    assert folder.parent == tmpdir_env
    assert folder.name.startswith("ragmetrics-spool-")
    if os.name == "posix":  # gone already: the open handles keep the file
        assert not folder.exists()
    assert [spool.get(at, length) for at, length in places] == records
    assert places[1][0] == places[0][1]  # laid end to end
    spool.close()
    assert not folder.exists()
    assert list(tmpdir_env.iterdir()) == []


def test_closing_a_spool_that_kept_nothing_makes_and_removes_nothing(tmpdir_env: Path) -> None:
    spool = Spool()
    spool.close()
    assert list(tmpdir_env.iterdir()) == []


def test_an_unwritable_tmpdir_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMPDIR is taken as given: under a file, it cannot be a folder (for root as well)."""
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    unwritable = tmp_path / "a-file" / "tmp"
    monkeypatch.setenv("TMPDIR", str(unwritable))
    spool = Spool()
    with pytest.raises(SpoolError) as raised:
        spool.put(({"em": "why"}, None, None, None, None))
    message = str(raised.value)
    assert f"could not be kept in {unwritable} (TMPDIR={unwritable})" in message
    assert "point TMPDIR at a writable folder" in message
    with pytest.raises(SpoolError, match="could not be kept"):  # and stays an error
        spool.put(({"em": "why"}, None, None, None, None))
    spool.close()


class FullDisk:
    """A file whose writes fail as on a full disk."""

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_failed_write_is_an_error_for_every_later_use(
    tmpdir_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool_module, "BUFFER", 10)
    spool = Spool()
    at, length = spool.put("first")  # written out: the folder and file are made
    folder = spool.folder
    spool._writer = FullDisk()  # type: ignore[assignment]
    with pytest.raises(SpoolError) as raised:
        spool.put("second")
    assert f"could not be kept in {folder} (TMPDIR={tmpdir_env})" in str(raised.value)
    assert "No space left on device" in str(raised.value)
    with pytest.raises(SpoolError):  # what was put before may not all be there
        spool.get(at, length)
    spool.close()
    assert list(tmpdir_env.iterdir()) == []
