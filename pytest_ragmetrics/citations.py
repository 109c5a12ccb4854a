"""Citation markers in answers: ``[CIT:<doc_id>]`` and ``[n]``.

Two formats are recognised (METRICS.md §0):

* ``[CIT:<doc_id>]`` names a document by id; the id is everything up to the closing
  bracket, surrounding spaces removed. It is valid when a context with that ``doc_id``
  exists.
* ``[n]`` is a 1-based index into the row's contexts (ALCE / Trust-Score style).
  ``[1][2]`` are two citations, and so is ``[1, 2]`` (a comma list inside one bracket).
  It is valid when ``1 <= n <= len(contexts)``. A numeral of more than
  ``MAX_INDEX_DIGITS`` significant digits is no index any list can have: its target stays
  the digits as written (a string), since converting them would cost quadratic time.

An invalid citation is data, never an error: it is returned with ``doc_id=None``.
Stripping removes markers until none is left, so ``"[[1]2]"`` leaves no ``"[ 2]"`` behind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CitationFormat = Literal["auto", "cit", "numeric"]
# Python's int() refuses numerals longer than its conversion limit, which can be lowered
# to 640 digits but no further: a numeral this long always converts, and quickly.
MAX_INDEX_DIGITS = 640
CITATION_FORMATS: tuple[str, ...] = ("auto", "cit", "numeric")

_CIT = r"\[CIT:\s*(?P<cit>[^\]\s][^\]]*?)\s*\]"
_NUMERIC = r"\[(?P<num>\s*\d+(?:\s*,\s*\d+)*\s*)\]"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "auto": re.compile(f"{_CIT}|{_NUMERIC}"),
    "cit": re.compile(_CIT),
    "numeric": re.compile(_NUMERIC),
}


@dataclass(frozen=True)
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


def marker_pattern(fmt: CitationFormat = "auto") -> re.Pattern[str]:
    """The compiled regex matching one marker of ``fmt`` (a ``[1, 2]`` list is one match)."""
    try:
        return _PATTERNS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown citation format {fmt!r}; expected one of {', '.join(CITATION_FORMATS)}"
        ) from None


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
    for match in marker_pattern(fmt).finditer(text):
        marker, groups = match.group(0), match.groupdict()
        if groups.get("cit") is not None:
            doc_id = groups["cit"]
            resolved = doc_id if doc_id in known else None
            found.append(Citation(marker, match.start(), match.end(), doc_id, resolved))
            continue
        for part in groups["num"].split(","):
            index = _index(part)
            in_range = isinstance(index, int) and 1 <= index <= len(ids)
            resolved = ids[index - 1] if in_range and isinstance(index, int) else None
            found.append(Citation(marker, match.start(), match.end(), index, resolved))
    return found


def _index(numeral: str) -> int | str:
    """The number a ``[n]`` numeral writes, or its digits when no index can be that long."""
    digits = numeral.strip()
    significant = digits.lstrip("0") or "0"
    return digits if len(significant) > MAX_INDEX_DIGITS else int(significant)


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?…])")
_SPACES = re.compile(r"[ \t]+")


def strip_citations(text: str, fmt: CitationFormat = "auto") -> str:
    """``text`` without citation markers: "Paris [1]." becomes "Paris.".

    Removing a marker can join the text around it into a new one ("[[1]2]" leaves "[ 2]",
    "[CIT :x]" loses its space), so markers are removed until none is left. Every pass
    shortens the text, which bounds the passes by its length.
    """
    pattern = marker_pattern(fmt)
    stripped = text
    for _ in range(len(text) + 1):
        stripped = pattern.sub(" ", stripped)
        stripped = _SPACE_BEFORE_PUNCT.sub(r"\1", stripped)
        stripped = _SPACES.sub(" ", stripped).strip()
        if not pattern.search(stripped):
            break
    return stripped
