"""Each answer's sentence analysis, kept in the embedding cache next to its vectors.

Splitting an answer into sentences (Punkt, ``pytest_ragmetrics.text.sentences``) is most
of what a fully cached run of the grounding metrics spends before its rows run. Its
result, the sentences' spans, depends only on the answer, the citation format and the
analysing code, so the run keeps it in the cache under ``analysis_key`` (a hash of all
three) and a later run hands the spans to the splitter instead of analysing again
(``prepare_sentences``). An entry that is missing, damaged (checksum) or does not fit its
answer is a miss: the answer is analysed as if no cache existed, and stored again.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterable

from pytest_ragmetrics import __version__
from pytest_ragmetrics.embeddings.cache import EmbeddingCache
from pytest_ragmetrics.text.citations import CitationFormat, CitationSyntax, marker_pattern
from pytest_ragmetrics.text.sentences import (
    Spans,
    analysis_version,
    remember_spans,
    sentence_spans,
    spans_fit,
)


def analysis_key(text: str, fmt: CitationFormat) -> bytes:
    """The address of ``text``'s sentence spans under ``fmt`` and this analysing code.

    It names everything a boundary depends on: the splitter's and Punkt's versions, this
    package's (which ships the built-in marker regexes), the format and a project's own
    pattern, and the marker regex the splitter masks. The fields are a JSON list, so no
    text can pass for another field (as it could if they were joined by a separator).
    """
    fmt_name, project_pattern = (
        (fmt.format, fmt.pattern) if isinstance(fmt, CitationSyntax) else (fmt, None)
    )
    fields = [
        "sentence analysis",
        analysis_version(),
        __version__,
        fmt_name,
        project_pattern,
        marker_pattern(fmt).pattern,
        text,
    ]
    return hashlib.sha256(json.dumps(fields).encode()).digest()


def encode_spans(spans: Spans) -> bytes:
    """Spans as little-endian unsigned 32-bit integers, start and end of each in turn."""
    flat = [offset for span in spans for offset in span]
    return struct.pack(f"<{len(flat)}I", *flat)


def decode_spans(blob: bytes) -> Spans | None:
    """The spans ``encode_spans`` wrote; ``None`` for a blob no spans could have given."""
    if len(blob) % 8:
        return None
    flat = struct.unpack(f"<{len(blob) // 4}I", blob)
    return tuple(zip(flat[::2], flat[1::2], strict=True))


def prepare_sentences(cache: EmbeddingCache, texts: Iterable[str], fmt: CitationFormat) -> int:
    """Have the analysis of every one of ``texts`` ready for the sentence splitter: read
    from the cache, or analysed now and stored; either way the splits that follow run no
    Punkt. Returns how many texts were analysed (not found intact)."""
    keys = {analysis_key(text, fmt): text for text in dict.fromkeys(texts)}
    stored = cache.get_analyses(keys)
    ready: dict[str, Spans] = {}
    fresh: dict[bytes, bytes] = {}
    for key, text in keys.items():
        spans = decode_spans(stored[key]) if key in stored else None
        if spans is None or not spans_fit(text, spans):
            spans = sentence_spans(text, fmt)
            fresh[key] = encode_spans(spans)
        ready[text] = spans
    remember_spans(ready, fmt)
    if fresh:
        cache.put_analyses(fresh)
    return len(fresh)
