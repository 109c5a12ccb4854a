"""Text from the data (ids, questions, answers, messages that quote them) made safe to
print: a terminal obeys control characters (ESC starts a colour or moves the cursor, BEL
rings, CR overwrites the line) and GitHub Actions runs a log line that starts with ``::``
as a workflow command (``::error::``, ``::add-mask::``). Every line the plugin writes to
the terminal, to a CI log or to GitHub's job summary goes through here.

A C0 or C1 control character (and DEL) is written as its escape, ``\\x1b``, ``\\x07``; a
line whose first characters, after blanks, are ``::`` has its first colon written as
``\\x3a``. A newline is kept only where the text is several lines by design.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# C0 controls but newline, DEL and C1 controls.
_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_CONTROLS_AND_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f]")
_COMMAND = re.compile(r"^(\s*):(?=:)")
# What a page shows as layout (tab, newline) is kept; every other control is escaped.
_CONTROLS_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def printable_line(text: str) -> str:
    """``text`` as one safe line: every control character escaped, a newline too, and a
    leading ``::`` defused."""
    return _COMMAND.sub(r"\1\\x3a", _CONTROLS_AND_NEWLINE.sub(_escape, text))


def printable_text(text: str) -> str:
    """``text`` of several lines, each made safe as ``printable_line`` makes one; its
    newlines are kept."""
    return "\n".join(printable_line(line) for line in _CONTROLS.sub(_escape, text).split("\n"))


def printable_lines(lines: Iterable[str]) -> list[str]:
    """Each of ``lines`` made safe; a line that holds newlines stays several lines."""
    return [printable_text(line) for line in lines]


def visible_controls(text: str) -> str:
    """``text`` with every control character but tab and newline written as its escape,
    for a report page: a browser shows nothing for ESC or BEL, so the text a reader sees
    would differ from the data's without a trace."""
    return _CONTROLS_BUT_LAYOUT.sub(_escape, text)
