"""The spool of a run: the shown parts of gathered rows kept in a file, not in memory.

A report that shows rows (``--ragmetrics-json``, ``--ragmetrics-html``) needs each row's
evidence and shown fields, and a row may carry details and a saved output: about 3 KB a
row, 3 GB on the controller at a million rows if kept in memory. ``RowStore`` packs such
a row's numbers like a plain row's and puts its shown parts here (``Spool.put``), keeping
only where they are (an offset and a length); ``Spool.get`` reads them back when a
reader asks for the row.

The records are ``pickle`` records laid end to end, written and read by this process
only, in a folder of its own (``tempfile.mkdtemp``: readable by its user alone). Not
Arrow IPC or Parquet: pyarrow is an optional extra, not something every run has, and a
row's shown parts are nested mappings of free shape (a metric's details are whatever it
recorded), which a columnar schema would have to flatten or re-encode as text anyway.
Nothing else reads the file, and it is gone when the run ends (``close``), so it needs
no stable format. The store keeps each record's length, so records need no framing. On
POSIX systems the file and its folder are removed as soon as both handles are open: the
handles keep the file while the run lasts, and nothing is left behind even when the
process is killed (a SIGKILL, or a SIGTERM, which skips pytest's ending); elsewhere they
are removed in ``close``.

Writes are gathered in a buffer of ``BUFFER`` bytes and written out when it fills; a
record still in the buffer is read from it, one already written is read through a
second handle, so a read never has to write out the buffer first. The folder is created
on the first ``put``: a run whose rows have no shown parts, and an xdist worker (which
has no store), never makes one. A folder that cannot be made or a write that fails (a
full disk) raises ``SpoolError`` naming the folder and ``TMPDIR``: rows are never dropped
without a word, and after a failed write every later ``put`` and ``get`` raises it too,
since the records before it may not all be on disk.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

# Bytes gathered before they are written out: a few hundred rows' shown parts.
BUFFER = 1 << 20
_PREFIX = "ragmetrics-spool-"
_FILE = "rows.spool"


class SpoolError(Exception):
    """The spool of the run could not be kept: the run cannot report its rows."""


def spool_parent() -> str:
    """The folder the spool's own folder goes in: ``TMPDIR`` when set (taken as given,
    so a ``TMPDIR`` that cannot be written fails the run rather than the spool quietly
    going elsewhere), else ``tempfile``'s choice."""
    return os.environ.get("TMPDIR") or tempfile.gettempdir()


class Spool:
    """The records of one run's shown row parts, in a file of a folder of its own."""

    def __init__(self) -> None:
        self.folder: Path | None = None  # made on the first put
        self._on_disk = False  # whether the folder is still there to remove
        self._writer: IO[bytes] | None = None
        self._reader: IO[bytes] | None = None
        self._pending = bytearray()
        self._written = 0  # bytes on disk; the pending ones follow them
        self._failure: str | None = None

    @property
    def size(self) -> int:
        """Bytes put so far, written out or pending."""
        return self._written + len(self._pending)

    def put(self, record: Any) -> tuple[int, int]:
        """Keep ``record``; where it is: its offset and length."""
        self._check()
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        if self._writer is None:
            self._open()
        at = self.size
        self._pending += data
        if len(self._pending) >= BUFFER:
            self.flush()
        return at, len(data)

    def get(self, at: int, length: int) -> Any:
        """The record put at ``at`` (``put`` said where)."""
        self._check()
        if at >= self._written:  # still in the buffer
            start = at - self._written
            return pickle.loads(self._pending[start : start + length])
        reader = self._reader
        assert reader is not None, "a record on disk was written by this spool"
        reader.seek(at)
        data = reader.read(length)
        if len(data) != length:
            raise self._failed(f"record at byte {at} cut short ({len(data)} of {length} bytes)")
        return pickle.loads(data)

    def flush(self) -> None:
        """Write out the pending records (``SpoolError`` if the disk refuses them)."""
        self._check()
        if not self._pending or self._writer is None:
            return
        try:
            self._writer.write(self._pending)
            self._writer.flush()
        except OSError as error:
            raise self._failed(str(error)) from error
        self._written += len(self._pending)
        self._pending = bytearray()

    def close(self) -> None:
        """Close the file and remove the spool's folder (nothing if none was made)."""
        for handle in (self._writer, self._reader):
            if handle is not None:
                handle.close()
        self._writer = self._reader = None
        self._pending = bytearray()
        if self.folder is not None and self._on_disk:
            shutil.rmtree(self.folder)
        self.folder = None
        self._on_disk = False

    def _open(self) -> None:
        parent = spool_parent()
        try:
            self.folder = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=parent))
            self._on_disk = True
            path = self.folder / _FILE
            self._writer = path.open("xb")
            self._reader = path.open("rb")
            if os.name == "posix":  # the open handles keep the file to the end
                path.unlink()
                self.folder.rmdir()
                self._on_disk = False
        except OSError as error:
            raise self._failed(str(error), parent) from error

    def _check(self) -> None:
        if self._failure is not None:
            raise SpoolError(self._failure)

    def _failed(self, reason: str, parent: str | None = None) -> SpoolError:
        where = str(self.folder) if self.folder is not None else parent or spool_parent()
        tmpdir = os.environ.get("TMPDIR")
        told = f"TMPDIR={tmpdir}" if tmpdir else "TMPDIR is not set"
        self._failure = (
            f"pytest-ragmetrics: the rows' spool (their evidence, shown fields, details and "
            f"outputs) could not be kept in {where} ({told}): {reason}; point TMPDIR at a "
            "writable folder with room for a few KB a row"
        )
        return SpoolError(self._failure)
