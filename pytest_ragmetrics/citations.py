"""Citation markers in answers: ``[CIT:<doc_id>]`` and ``[n]``.

Two formats are recognised (METRICS.md §0):

* ``[CIT:<doc_id>]`` names a document by id; the id is everything up to the closing
  bracket, surrounding spaces removed. It is valid when a context with that ``doc_id``
  exists.
* ``[n]`` is a 1-based index into the row's contexts (ALCE / Trust-Score style).
  ``[1][2]`` are two citations, and so is ``[1, 2]`` (a comma list inside one bracket).
  It is valid when ``1 <= n <= len(contexts)``.

An invalid citation is data, never an error: it is returned with ``doc_id=None``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CitationFormat = Literal["auto", "cit", "numeric"]
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

    ``target`` is the doc id of a ``[CIT:..]`` marker or the 1-based index of ``[n]``;
    ``doc_id`` is the context it resolves to, ``None`` when it names nothing in CTX.
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
            index = int(part)
            resolved = ids[index - 1] if 1 <= index <= len(ids) else None
            found.append(Citation(marker, match.start(), match.end(), index, resolved))
    return found


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?…])")
_SPACES = re.compile(r"[ \t]+")


def strip_citations(text: str, fmt: CitationFormat = "auto") -> str:
    """``text`` without citation markers: "Paris [1]." becomes "Paris."."""
    stripped = marker_pattern(fmt).sub(" ", text)
    stripped = _SPACE_BEFORE_PUNCT.sub(r"\1", stripped)
    return _SPACES.sub(" ", stripped).strip()
