r"""Reading a dataset file as a stream: its bytes in chunks, decompressed, split into lines.

Nothing here holds the whole file: ``raw_chunks`` reads ``CHUNK`` bytes at a time and
feeds the file's SHA-256 as it goes, ``decompressed`` inflates gzip and Zstandard streams
chunk by chunk, and ``lines`` cuts the text into physical lines with the rules of
``bytes.splitlines`` (``\r\n``, ``\n`` and ``\r`` end a line, nothing else does), keeping
the line numbers and byte offsets of the decompressed text.

A compressed file that is corrupt, or ends before its compressed data does, raises
``DatasetError`` naming the file: a dataset is read whole or not at all, never as the rows
before the damage. (Both libraries report a truncated stream only through ``eof``, so it
is checked after the last chunk; ``zstandard``'s own ``stream_reader`` would end silently.)

``zstandard`` is an optional extra, imported only when a ``.jsonl.zst`` file is read.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

CHUNK = 1 << 20  # bytes read, or handed on, at a time
COMPRESSIONS = {"gz": "gzip", "zst": "Zstandard"}


class DatasetError(Exception):
    """The dataset file as a whole cannot be read."""


@dataclass(frozen=True)
class Problem:
    """What is wrong with one field of one row."""

    field: str
    message: str


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


def raw_chunks(
    path: Path, source: str, digest: Digest | None = None, start: int = 0
) -> Iterator[bytes]:
    """The bytes of ``path`` from byte ``start`` on, ``CHUNK`` at a time, each also fed to
    ``digest`` if given."""
    try:
        with path.open("rb") as stream:
            stream.seek(start)
            while chunk := stream.read(CHUNK):
                if digest is not None:
                    digest.update(chunk)
                yield chunk
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        reason = getattr(error, "strerror", None) or str(error)
        raise DatasetError(f"{source}: cannot read the dataset: {reason}") from None


class _Decompressor(Protocol):
    """What ``zlib.decompressobj`` and ``zstandard``'s ``decompressobj`` share."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes, /) -> bytes: ...


def _gzip() -> tuple[Callable[[], _Decompressor], type[Exception]]:
    return lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), zlib.error  # gzip header


def _zstd(source: str) -> tuple[Callable[[], _Decompressor], type[Exception]]:
    try:
        import zstandard
    except ImportError:
        raise DatasetError(
            f"{source}: reading .zst needs the zstandard package; "
            "pip install 'pytest-ragmetrics[zstd]'"
        ) from None
    decompressor: Any = zstandard.ZstdDecompressor()
    return decompressor.decompressobj, zstandard.ZstdError


def decompressed(chunks: Iterable[bytes], compression: str, source: str) -> Iterator[bytes]:
    """The decompressed bytes of ``chunks`` (``compression`` is ``gz`` or ``zst``).

    A file may hold several members (gzip) or frames (Zstandard) one after another, as
    ``cat a.gz b.gz`` makes; their texts follow each other. An empty file is empty text.
    """
    start, failure = _gzip() if compression == "gz" else _zstd(source)
    name = COMPRESSIONS[compression]
    decompressor, begun = start(), False
    try:
        for chunk in chunks:
            while chunk:
                begun = True
                if text := decompressor.decompress(chunk):
                    yield text
                if not decompressor.eof:
                    break
                chunk, decompressor, begun = decompressor.unused_data, start(), False
    except failure as error:
        raise DatasetError(
            f"{source}: not valid {name} data ({error}); the file is damaged or not "
            f"{name}-compressed: compress the dataset again"
        ) from None
    if begun and not decompressor.eof:
        raise DatasetError(
            f"{source}: the {name} data ends early (the file is truncated); "
            "copy or compress the dataset again"
        )


_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-32 LE starts like UTF-16 LE


# Not frozen: one is made for every line read (a bulk eval reads each twice), and a
# frozen dataclass's ``__init__`` costs about five times as much. Nothing changes a line.
@dataclass(slots=True)
class Line:
    """One physical line of the file, its line end included.

    ``text`` holds bytes that are not UTF-8 as surrogate escapes; ``bad_byte`` is the
    offset in the line of the first of them (``None`` when the line is UTF-8), ``byte``
    its value.
    """

    number: int
    offset: int
    text: str
    bad_byte: int | None = None
    byte: int = 0

    def not_utf8(self) -> Problem:
        at = self.bad_byte or 0
        return Problem(
            "<utf-8>",
            f"not UTF-8 text: byte 0x{self.byte:02x} at line {self.number}, byte {at} of the "
            f"line ({self.offset + at} of the file); save the file as UTF-8",
        )


def _physical_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    r"""The lines of the concatenated ``chunks``, ends kept, exactly as
    ``b"".join(chunks).splitlines(keepends=True)`` cuts them. A line is handed on once
    its end is seen; a ``\r`` at the end of a chunk waits, as a ``\n`` may follow it."""
    pending: list[bytes] = []
    for chunk in chunks:
        pending.append(chunk)
        if b"\n" not in chunk and b"\r" not in chunk:
            continue  # still inside one line: join its pieces once, when it ends
        lines = b"".join(pending).splitlines(keepends=True)
        last = lines[-1]
        pending = [] if last.endswith(b"\n") else [lines.pop()]
        yield from lines
    yield from b"".join(pending).splitlines(keepends=True)


def lines(chunks: Iterable[bytes], source: str, number: int = 1, offset: int = 0) -> Iterator[Line]:
    r"""The text's lines, each decoded on its own, so one bad byte spoils one line only.

    ``\r\n``, ``\n`` and ``\r`` end lines, and nothing else: U+2028, U+0085 and the like
    are valid inside JSON strings and CSV cells. A UTF-8 byte-order mark is skipped; a
    UTF-16 one fails the dataset. ``chunks`` may start at the beginning of a later line:
    ``number`` and ``offset`` are that line's.
    """
    first = number
    for number, raw in enumerate(_physical_lines(chunks), start=first):
        if number == 1:
            if raw.startswith(_UTF16_BOMS):
                raise DatasetError(
                    f"{source}: UTF-16 text (it starts with a UTF-16 byte-order mark); "
                    "save the dataset as UTF-8"
                )
            if raw.startswith(_UTF8_BOM):
                raw, offset = raw[len(_UTF8_BOM) :], len(_UTF8_BOM)
                if not raw:
                    return  # the mark was the whole file
        try:
            yield Line(number, offset, raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            text = raw.decode("utf-8", "surrogateescape")
            yield Line(number, offset, text, error.start, raw[error.start])
        offset += len(raw)
