"""Citation markers in answers: ``[CIT:<doc_id>]``, ``[n]``, and a project's own.

Two formats are built in (docs/metrics.md#citations):

* ``[CIT:<doc_id>]`` names a document by id; the id is everything up to the closing
  bracket, surrounding spaces removed. It is valid when a context with that ``doc_id``
  exists.
* ``[n]`` is a 1-based index into the row's contexts (ALCE / Trust-Score style).
  ``[1][2]`` are two citations, and so is ``[1, 2]`` (a comma list inside one bracket).
  It is valid when ``1 <= n <= len(contexts)``. A numeral of more than
  ``MAX_INDEX_DIGITS`` significant digits is no index any list can have: its target stays
  the digits as written (a string), since converting them would cost quadratic time.

A project whose answers cite another way (``[wifi-1]``, ``(source: wifi-1)``) adds its own
marker with ``citation_pattern`` in ``[settings]``: a regular expression with exactly one
group, the cited doc id, matched after the built-in formats. It must not match an empty
text (a marker is never empty); it resolves like ``[CIT:<doc_id>]``. A format together
with such a pattern is a ``CitationSyntax``; every function here takes either.

An invalid citation is data, never an error: it is returned with ``doc_id=None``.
Stripping removes markers until none is left, so ``"[[1]2]"`` leaves no ``"[ 2]"`` behind.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

BuiltinFormat = Literal["auto", "cit", "numeric"]
# Python's int() refuses numerals longer than its conversion limit, which can be lowered
# to 640 digits but no further: a numeral this long always converts, and quickly.
MAX_INDEX_DIGITS = 640
CITATION_FORMATS: tuple[str, ...] = ("auto", "cit", "numeric")

_CIT = r"\[CIT:\s*(?P<cit>[^\]\s][^\]]*?)\s*\]"
_NUMERIC = r"\[(?P<num>\s*\d+(?:\s*,\s*\d+)*\s*)\]"
_BUILTIN = {"auto": f"{_CIT}|{_NUMERIC}", "cit": _CIT, "numeric": _NUMERIC}
_SHOWN = {"auto": "[CIT:<doc_id>] and [n]", "cit": "[CIT:<doc_id>]", "numeric": "[n]"}


class CitationPatternError(ValueError):
    """A ``citation_pattern`` that cannot describe a marker; the message says why."""


@dataclass(frozen=True)
class CitationSyntax:
    """A built-in format plus a project's own marker: a regex whose one group is the
    cited doc id."""

    format: BuiltinFormat
    pattern: str

    def __post_init__(self) -> None:
        problem = _pattern_problem(self.format, self.pattern)
        if problem:
            raise CitationPatternError(problem)


CitationFormat = BuiltinFormat | CitationSyntax


def _pattern_problem(fmt: BuiltinFormat, pattern: str) -> str | None:
    try:
        own = re.compile(pattern)
        re.compile(f"{_BUILTIN[fmt]}|(?:{pattern})")
    except (re.error, RecursionError, OverflowError) as error:
        return f"not a regular expression: {error}"
    if own.groups != 1:
        return f"needs exactly one group, the cited doc id; it has {own.groups}"
    if own.search("") is not None:
        return "matches the empty text; a marker is never empty"
    if own.search(" \t\n") is not None:
        return "matches white space alone; a marker is never blank"
    return None


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation: the marker text it came from and what it points at.

    ``target`` is the doc id of a ``[CIT:..]`` marker or the 1-based index of ``[n]`` (its
    digits, a string, when they are too many to be any index); ``doc_id`` is the context it
    resolves to, ``None`` when it names nothing in CTX.
    """

    marker: str
    start: int
    end: int
    target: str | int
    doc_id: str | None = None

    @property
    def valid(self) -> bool:
        return self.doc_id is not None


@functools.lru_cache(maxsize=32)
def _compiled(fmt: CitationFormat) -> tuple[re.Pattern[str], int]:
    """The regex of every marker of ``fmt`` and the number of the project's own group
    (0 when there is none)."""
    if isinstance(fmt, CitationSyntax):
        builtin = re.compile(_BUILTIN[fmt.format])
        combined = re.compile(f"{_BUILTIN[fmt.format]}|(?:{fmt.pattern})")
        return combined, builtin.groups + 1
    if fmt not in _BUILTIN:
        raise ValueError(
            f"unknown citation format {fmt!r}; expected one of {', '.join(CITATION_FORMATS)}"
        )
    return re.compile(_BUILTIN[fmt]), 0


def marker_pattern(fmt: CitationFormat = "auto") -> re.Pattern[str]:
    """The compiled regex matching one marker of ``fmt`` (a ``[1, 2]`` list is one match)."""
    return _compiled(fmt)[0]


def describe_citations(fmt: CitationFormat) -> str:
    """The markers ``fmt`` recognises, in words for messages."""
    if isinstance(fmt, CitationSyntax):
        return (
            f"{_SHOWN[fmt.format]}, citation_format = {fmt.format!r}, and "
            f"citation_pattern = {fmt.pattern!r}"
        )
    return f"{_SHOWN[fmt]}, citation_format = {fmt!r}"


def find_citations(
    text: str,
    context_ids: Sequence[str] | None = None,
    fmt: CitationFormat = "auto",
) -> list[Citation]:
    """All citations in ``text``, in order, resolved against ``context_ids``.

    ``context_ids`` are the ``doc_id`` of each context in prompt order; ``None`` or empty
    means no context, so every citation is invalid. A ``[1, 2]`` marker yields two
    citations that share the marker's span.
    """
    ids = list(context_ids or ())
    known = set(ids)
    found: list[Citation] = []
    pattern, own = _compiled(fmt)
    for match in pattern.finditer(text):
        marker, groups = match.group(0), match.groupdict()
        if not marker:
            continue  # a project's pattern that matches nothing here is no marker
        if groups.get("cit") is not None or (own and groups.get("num") is None):
            doc_id = groups["cit"] if groups.get("cit") is not None else match.group(own) or ""
            doc_id = doc_id.strip()
            resolved = doc_id if doc_id in known else None
            found.append(Citation(marker, match.start(), match.end(), doc_id, resolved))
            continue
        for part in groups["num"].split(","):
            index = _index(part)
            in_range = isinstance(index, int) and 1 <= index <= len(ids)
            resolved = ids[index - 1] if in_range and isinstance(index, int) else None
            found.append(Citation(marker, match.start(), match.end(), index, resolved))
    return found


def holds_citation(text: str, fmt: CitationFormat = "auto") -> bool:
    """Whether ``text`` holds a citation marker of ``fmt``: whether ``find_citations``
    finds any (whatever the contexts), without building them, for a row's citation
    census. A built-in marker starts with "[": no pattern runs on a text without one."""
    pattern = marker_pattern(fmt)
    if isinstance(fmt, CitationSyntax):
        return _any_marker(pattern, text)
    return "[" in text and pattern.search(text) is not None


def may_cite(text: str, fmt: CitationFormat = "auto") -> bool:
    """False only when no part of ``text`` holds a marker of ``fmt``: a built-in marker is
    found wherever it stands, so none in ``text`` means none in any sentence of it. A
    project's own pattern may look around its marker, so with one this is always True."""
    if isinstance(fmt, CitationSyntax):
        return True
    return marker_pattern(fmt).search(text) is not None


def _index(numeral: str) -> int | str:
    """The number a ``[n]`` numeral writes, or its digits when no index can be that long."""
    digits = numeral.strip()
    significant = digits.lstrip("0") or "0"
    return digits if len(significant) > MAX_INDEX_DIGITS else int(significant)


# White space before punctuation, removed (a lookahead: no template to expand per match).
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[.,;:!?…])")
# Runs of spaces and tabs, made one space: a lone space already is one, so only longer
# runs and tabs are matched (a match per space made most of the stripping's time).
_SPACES = re.compile(r"[ \t]{2,}|\t")


def strip_citations(text: str, fmt: CitationFormat = "auto") -> str:
    """``text`` without citation markers: "Paris [1]." becomes "Paris.".

    Removing a marker can join the text around it into a new one ("[[1]2]" leaves "[ 2]",
    "[CIT :x]" loses its space), so markers are removed until none is left. Every pass
    shortens the text, which bounds the passes by its length. Results are cached per
    text: a sentence is stripped once for its claim and again when it is tested for IDK.
    """
    return _strip(text, fmt)


@functools.lru_cache(maxsize=16384)
def _strip(text: str, fmt: CitationFormat) -> str:
    pattern = marker_pattern(fmt)
    # A built-in marker is never empty: it is replaced by a space, and any match is one.
    # A project's pattern may match empty where its marker is not (_blank, _any_marker).
    own = isinstance(fmt, CitationSyntax)
    blank = _blank if own else " "
    stripped = text
    for _ in range(len(text) + 1):
        # Substring tests before the patterns, which scan the text: a built-in marker
        # starts with "[", and a run _SPACES matches holds two spaces or a tab.
        if own or "[" in stripped:
            stripped = pattern.sub(blank, stripped)
        stripped = _SPACE_BEFORE_PUNCT.sub("", stripped)
        if "  " in stripped or "\t" in stripped:
            stripped = _SPACES.sub(" ", stripped)
        stripped = stripped.strip()
        if own:
            if not _any_marker(pattern, stripped):
                break
        elif "[" not in stripped or not pattern.search(stripped):
            break
    return stripped


def _blank(match: re.Match[str]) -> str:
    """A space for a marker; nothing for an empty match of a project's pattern."""
    return " " if match.group(0) else ""


def _any_marker(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` holds a marker: a non-empty match of ``pattern``."""
    return any(match.group(0) for match in pattern.finditer(text))
