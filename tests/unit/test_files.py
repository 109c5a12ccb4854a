"""Files a run leaves behind are written atomically, with ordinary permissions."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ragmetrics.files import STALE_AFTER, write_atomic


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "x.json"
    write_atomic(path, "old\n")
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]  # no temporary left


def test_a_new_file_gets_ordinary_permissions_and_a_replaced_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o644
    kept = tmp_path / "kept.json"
    kept.write_text("{}\n")
    kept.chmod(0o640)
    write_atomic(kept, "[]\n")
    assert (kept.stat().st_mode & 0o777, kept.read_text()) == (0o640, "[]\n")


def test_a_write_removes_temporary_files_a_killed_run_left_behind(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    stale = tmp_path / ".x.json.abc123.tmp"
    fresh = tmp_path / ".x.json.def456.tmp"  # another process may be writing it now
    other = tmp_path / ".y.json.abc123.tmp"  # another file's
    for leftover in (stale, fresh, other):
        leftover.write_text("half")
    long_ago = time.time() - STALE_AFTER - 60
    os.utime(stale, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    write_atomic(target, "{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".x.json.def456.tmp", ".y.json.abc123.tmp", "x.json"]
    )


def test_text_that_is_not_valid_unicode_is_written_escaped(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    write_atomic(path, json.dumps({"id": "a\udc80"}, ensure_ascii=False))
    assert json.loads(path.read_text(encoding="utf-8")) == {"id": "a\udc80"}


def test_a_write_in_pieces_is_the_text_they_join(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_atomic(path, "old\n")
    write_atomic(path, (piece for piece in ["{", '"a": "é"', "}\n"]))
    assert path.read_text(encoding="utf-8") == '{"a": "é"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_write_in_pieces_that_fails_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_atomic(path, "old\n")

    def pieces() -> Iterator[str]:
        yield "half"
        raise ValueError("the document cannot be encoded")

    with pytest.raises(ValueError, match="cannot be encoded"):
        write_atomic(path, pieces())
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]
