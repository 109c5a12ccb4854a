"""The files a run reads and leaves behind: baselines, reports, caches, settings paths.

Every helper here is shared by several layers, so it imports nothing of the package.

* **Atomic writes.** Every file is written through a temporary file in the same folder
  and an atomic rename, so a reader (or a run killed half-way) sees the old file or the
  new one, never half of one. A temporary file left by a run that was killed before its
  rename is removed by the next write of the same file once it is older than
  ``STALE_AFTER`` seconds. New files get the permissions an ordinary ``open`` would give
  them (0666 less the umask), not the private 0600 of a temporary file; a replaced file
  keeps its own. Text that cannot be encoded as UTF-8 (a lone surrogate that reached a
  report) is written with a backslash escape (``\\udc80``), which in a JSON string is the
  same character, so a report is never lost to one bad character.
* **Canonical JSON and its digest**, for content addresses and fingerprints. Each caller
  states its canonical form (ASCII-escaped or not, how many hex digits), because the
  digests already stored in users' caches and baselines must not change.
* **Strict JSON reading**: NaN, Infinity and -Infinity are refused, since JSON has no
  such numbers and a mean over one would be silently poisoned.
* **``JsonEntryCache``**: a directory of JSON entries, one file and one lock file per entry.
* **Paths**: as users read them in messages, and settings paths resolved with a usage
  error instead of a traceback.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Generic, NoReturn, TypeVar

_Value = TypeVar("_Value")

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


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never half.

    ``text`` may come in pieces (any iterable of strings), written as they are made, so a
    large file is never held whole in memory.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            if isinstance(text, str):
                stream.write(text)
            else:
                stream.writelines(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# -- canonical JSON -----------------------------------------------------------------------


def canonical_json(value: Any, *, ascii_only: bool) -> str:
    """``value`` as compact JSON with sorted keys: equal values give equal text.

    ``ascii_only`` escapes every non-ASCII character (``\\u00e9``); without it the text
    keeps them as they are. The two forms hash differently, so each content address keeps
    the form it was first written with.
    """
    return _CANONICAL[ascii_only].encode(value)


# ``json.dumps`` with these options, built once: dumps builds an encoder on every call.
_CANONICAL = {
    ascii_only: json.JSONEncoder(sort_keys=True, ensure_ascii=ascii_only, separators=(",", ":"))
    for ascii_only in (False, True)
}


def json_digest(value: Any, *, ascii_only: bool, hex_digits: int = 64) -> str:
    """The first ``hex_digits`` hex digits of the sha256 of ``canonical_json(value)``
    encoded as UTF-8 (a lone surrogate in the value is a ``UnicodeEncodeError``)."""
    text = canonical_json(value, ascii_only=ascii_only)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:hex_digits]


# -- strict JSON reading ------------------------------------------------------------------


def loads_finite(
    text: str | bytes,
    *,
    refusal: str = "is not JSON",
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads`` that refuses NaN, Infinity and -Infinity (which Python's parser
    accepts though JSON has no such numbers) with ``ValueError("<constant> <refusal>")``;
    ``refusal`` words it for the file being read."""
    if isinstance(text, str) and not text.startswith("\ufeff"):
        # What json.loads does with a str, with a decoder built once, not per call.
        return finite_decoder(refusal, object_pairs_hook).decode(text)
    decoder = finite_decoder(refusal, object_pairs_hook)
    return json.loads(
        text, parse_constant=decoder.parse_constant, object_pairs_hook=object_pairs_hook
    )


@functools.lru_cache(maxsize=32)
def finite_decoder(
    refusal: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None
) -> json.JSONDecoder:
    """The decoder of ``loads_finite``: datasets are read a line at a time, and building a
    decoder (and its scanner) for each line was most of parsing it."""

    def refuse(constant: str) -> NoReturn:
        raise ValueError(f"{constant} {refusal}")

    return json.JSONDecoder(parse_constant=refuse, object_pairs_hook=object_pairs_hook)


# -- a cache of JSON entries --------------------------------------------------------------


class CacheEntryError(OSError):
    """A cache entry exists but cannot be read."""


class JsonEntryCache(Generic[_Value]):
    """JSON entries under ``directory``, one file per entry at a path the caller derives
    from a content address, each guarded by its own lock file (``<entry>.lock``).

    ``fetch`` reads an entry and asks ``accept`` what it holds; a missing entry, or one
    that is not UTF-8 JSON (torn by a killed run, or tampered with), or one ``accept``
    refuses (None: another format, another request, another run) is a miss. On a miss the
    entry's lock is taken and the entry read again, so of several processes needing the
    same entry one computes it and the others read it; the computed entry is then written
    atomically (``render`` gives its exact text), replacing whatever was there. An entry
    that exists but cannot be read (no permission, a directory in its place) is a
    ``CacheEntryError``: something other than a run of ours made it so, and replacing it
    unasked would hide that.
    """

    def __init__(self, directory: Path, render: Callable[[Any], str]) -> None:
        self.directory = directory
        self._render = render

    def fetch(
        self,
        relative: str,
        accept: Callable[[Any], _Value | None],
        compute: Callable[[], tuple[_Value, Any]],
    ) -> _Value:
        """The value held by entry ``relative`` (a path under ``directory``), or the value
        of ``compute()``, which returns it with the entry to store for it."""
        from filelock import FileLock

        path = self.directory / relative
        found = self._read(path, accept)
        if found is not None:
            return found
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{path}.lock"):
            found = self._read(path, accept)  # another process may have computed it
            if found is not None:
                return found
            value, entry = compute()
            write_atomic(path, self._render(entry))
            return value

    def _read(self, path: Path, accept: Callable[[Any], _Value | None]) -> _Value | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            return None  # not text: a damaged entry, overwritten by the fresh one
        except OSError as error:
            raise CacheEntryError(
                f"{path}: cannot read this cache entry ({error.strerror or error}); "
                "remove it, or give the cache directory back to the user running the tests"
            ) from error
        try:
            entry = json.loads(text)
        except (ValueError, RecursionError):
            return None
        return accept(entry)


# -- paths --------------------------------------------------------------------------------


THRESHOLDS_NAME = "thresholds.toml"  # the file whose folder is the project root
# The embedding cache's folder in the project root, and the variable that moves it
# (``embeddings/cache.py``; the options name both in their help).
CACHE_DIR_NAME = ".ragmetrics_cache"
CACHE_DIR_ENV = "RAGMETRICS_CACHE_DIR"
# The file GitHub Actions shows as a job's summary (``reports/write.py`` appends the
# Markdown report to it).
GITHUB_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def nearest_thresholds(start: Path, boundary: Path | None = None) -> Path | None:
    """The thresholds file at or above ``start``, looking no higher than the project: the
    walk stops at ``boundary`` (the ini file's folder), a repository root (``.git``,
    ``.hg``) or the file system's root."""
    for folder in (start, *start.parents):
        candidate = folder / THRESHOLDS_NAME
        if candidate.is_file():
            return candidate
        if folder == boundary or any((folder / vcs).exists() for vcs in (".git", ".hg")):
            return None
    return None


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


def resolve_setting(path: Path, usage_error: Callable[[str], Exception]) -> Path:
    """``path`` (a path a user gave in a setting) absolute with symlinks resolved, or
    ``usage_error("cannot resolve <path>: <why>")`` raised when it cannot be (a symlink
    loop, a NUL character), so the user reads which setting to fix, not a traceback."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError) as error:
        raise usage_error(f"cannot resolve {path}: {_unresolvable(error)}") from None


def _unresolvable(error: BaseException) -> str:
    # Python before 3.13 raises RuntimeError("Symlink loop from ..."); later, OSError ELOOP.
    looped = isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP
    if looped:
        return "symlink loop"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return str(error)
