"""Writing the files a run leaves behind: baselines, reports, caches.

Every file is written through a temporary file in the same folder and an atomic rename,
so a reader (or a run killed half-way) sees the old file or the new one, never half of
one. A temporary file left by a run that was killed before its rename is removed by the
next write of the same file once it is older than ``STALE_AFTER`` seconds. New files get
the permissions an ordinary ``open`` would give them (0666 less the umask), not the
private 0600 of a temporary file; a replaced file keeps its own.

Text that cannot be encoded as UTF-8 (a lone surrogate that reached a report) is written
with a backslash escape (``\\udc80``), which in a JSON string is the same character, so a
report is never lost to one bad character.
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile
import time
from pathlib import Path

STALE_AFTER = 600.0  # seconds: no write of ours takes that long


@functools.cache
def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _remove_stale(path: Path) -> None:
    """Remove temporary files of ``path`` left by a write that never finished."""
    cutoff = time.time() - STALE_AFTER
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except FileNotFoundError:
            continue  # another process cleaned it up first


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
