"""The row strategies give rows a dataset could hold, and the cases they promise: IDK
sentences the default phrases match in each language, answers citing in the style asked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.data.dataset import Row, validate_fields
from pytest_ragmetrics.testing import strategies
from pytest_ragmetrics.text.citations import find_citations
from pytest_ragmetrics.text.idk import IdkMatcher
from pytest_ragmetrics.text.sentences import split_sentences

FEW = settings(max_examples=40, deadline=None, database=None)
MATCHER = IdkMatcher()


@FEW
@given(strategies.rows())
def test_rows_are_well_formed(row: Row) -> None:
    assert validate_fields(row.data) == []
    assert {"answer", "gold", "contexts", "relevant", "tokens", "latency_ms"} <= set(row.data)


@FEW
@given(strategies.rows(requires=strategies.OPTIONAL))
def test_required_fields_are_always_there(row: Row) -> None:
    assert set(strategies.OPTIONAL) <= set(row.data)


@pytest.mark.parametrize("language", strategies.LANGUAGES)
def test_every_idk_sentence_is_matched_by_the_default_phrases(language: str) -> None:
    for sentence in strategies.IDK_SENTENCES[language]:  # type: ignore[index]
        assert MATCHER.match(sentence) is not None, sentence


@FEW
@given(st.data())
def test_answers_cite_in_the_style_asked(data: st.DataObject) -> None:
    contexts = data.draw(strategies.contexts())
    ids = [context["doc_id"] for context in contexts]
    style = data.draw(st.sampled_from(strategies.STYLES))
    answer = data.draw(strategies.answers(contexts, style))
    other = "numeric" if style == "cit" else "cit"
    assert find_citations(answer, ids, other) == []  # no marker of the other format
    assert split_sentences(answer)  # at least one sentence


def test_answers_refuse_an_unknown_style() -> None:
    with pytest.raises(ValueError, match="the style is one of cit, numbered"):
        strategies.answers([], "ieee")  # type: ignore[arg-type]


def test_a_malformed_row_of_ones_own_is_refused() -> None:
    with pytest.raises(ValueError, match="not a well-formed row: latency_ms"):
        strategies.as_row({"answer": "x", "latency_ms": -1})
