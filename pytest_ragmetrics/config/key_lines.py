"""The line of every key of a TOML file, for pointing at it (a failed gate's line of
thresholds.toml, annotated in GitHub's pull-request view). ``tomllib`` gives values, never
positions, so the file is scanned once more here, by the grammar's shape: table headers
(``[gates."evals/x.py"]``, spaced or quoted any way TOML allows), dotted and quoted keys,
inline tables, arrays over several lines, strings of every kind (a ``#`` or a ``[`` inside
one is no comment and no table), and comments.

Only a file ``tomllib`` has read already is scanned, so it is valid TOML; a key is named
by its whole path, the table's keys and its own (``("gates", "evals/x.py", "f1.mean")``).
"""

from __future__ import annotations

import tomllib

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# What ends a plain value (a number, a date, true): its delimiters, blanks and comments.
_VALUE_ENDS = frozenset(",]}#\n\r")

KeyPath = tuple[str, ...]


class _Scanner:
    """One pass over the text, keeping the 1-based line of each key where it is set."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lines: dict[KeyPath, int] = {}

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.pos) + 1

    def peek(self, length: int = 1) -> str:
        return self.text[self.pos : self.pos + length]

    def blanks(self, newlines: bool = False) -> None:
        """Skip spaces and tabs (and comments and newlines, when ``newlines``)."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t" or (newlines and char in "\r\n"):
                self.pos += 1
            elif newlines and char == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def scan(self) -> dict[KeyPath, int]:
        table: KeyPath = ()
        while True:
            self.blanks(newlines=True)
            if self.pos >= len(self.text):
                return self.lines
            if self.peek() == "[":
                table = self.header()
            else:
                self.key_value(table)

    def header(self) -> KeyPath:
        """``[a."b"]`` or ``[[a.b]]``: the table's path; its line is kept as its key's."""
        line = self.line
        double = self.peek(2) == "[["
        self.pos += 2 if double else 1
        self.blanks()
        path = self.keys()
        self.blanks()
        self.pos += 2 if double else 1
        self.lines.setdefault(path, line)
        return path

    def key_value(self, table: KeyPath) -> None:
        line = self.line
        path = (*table, *self.keys())
        self.blanks()
        self.pos += 1  # "="
        self.blanks()
        self.lines[path] = line
        self.value(path)

    def keys(self) -> KeyPath:
        """A dotted key: ``a``, ``"a.b"``, ``'a'``, ``a . "b"``."""
        found = [self.key()]
        self.blanks()
        while self.peek() == ".":
            self.pos += 1
            self.blanks()
            found.append(self.key())
            self.blanks()
        return tuple(found)

    def key(self) -> str:
        if self.peek() in ('"', "'"):
            return self.string()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _BARE:
            self.pos += 1
        return self.text[start : self.pos]

    def string(self) -> str:
        """A string of any of TOML's four kinds, its value decoded by ``tomllib``."""
        quote = self.peek()
        delimiter = quote * 3 if self.peek(3) == quote * 3 else quote
        start = self.pos
        self.pos += len(delimiter)
        while True:
            if quote == '"' and self.peek() == "\\":
                self.pos += 2
                continue
            if self.text.startswith(delimiter, self.pos):
                self.pos += len(delimiter)
                # a closing """ may be followed by up to two more quotes of the value
                while len(delimiter) == 3 and self.peek() == quote:
                    self.pos += 1
                return str(tomllib.loads(f"k = {self.text[start : self.pos]}")["k"])
            self.pos += 1

    def value(self, path: KeyPath) -> None:
        char = self.peek()
        if char in ('"', "'"):
            self.string()
        elif char == "[":
            self.array(path)
        elif char == "{":
            self.inline_table(path)
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in _VALUE_ENDS:
                self.pos += 1

    def array(self, path: KeyPath) -> None:
        self.pos += 1
        while True:
            self.blanks(newlines=True)
            if self.peek() == "]":
                self.pos += 1
                return
            self.value(path)
            self.blanks(newlines=True)
            if self.peek() == ",":
                self.pos += 1

    def inline_table(self, path: KeyPath) -> None:
        self.pos += 1
        while True:
            self.blanks()
            if self.peek() == "}":
                self.pos += 1
                return
            self.key_value(path)
            self.blanks()
            if self.peek() == ",":
                self.pos += 1


def key_lines(text: str) -> dict[KeyPath, int]:
    """The 1-based line where each key of the TOML ``text`` is set (a table's, where its
    header is), by its whole path; ``text`` must be valid TOML (``tomllib.loads``)."""
    return _Scanner(text).scan()
