"""Regular expressions compiled the first time they are used.

Every pytest run imports the plugin, and with it every metric module; a module-level
``re.compile`` runs then, in runs that never compute the metric. Most patterns compile in
microseconds, but the short-answer finalizer's (``metrics.short``: alternations of cue,
unit, magnitude and month words in three languages) took longer to compile than the rest
of the plugin took to import. A ``LazyPattern`` is declared where ``re.compile`` was, is
used the same way, and compiles on its first use.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled on the first search, match or substitution.
    The methods are ``re.Pattern``'s, for ``str``."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (``re.compile`` keeps a cache too, but a small one)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)
