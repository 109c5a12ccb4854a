"""The project's sentence splitter: Punkt, citation-aware."""

from __future__ import annotations

import pytest

from pytest_ragmetrics.text import sentences
from pytest_ragmetrics.text.sentences import (
    Sentence,
    remember_spans,
    sentence_spans,
    spans_fit,
    split_sentences,
)


def texts(answer: str) -> list[str]:
    return [s.text for s in split_sentences(answer)]


def test_splits_sentences_and_keeps_markers_before_the_stop() -> None:
    assert texts("Paris is the capital [CIT:d1]. It has 2.1 million people [CIT:d2].") == [
        "Paris is the capital [CIT:d1].",
        "It has 2.1 million people [CIT:d2].",
    ]


def test_a_marker_after_the_stop_belongs_to_the_sentence_before() -> None:
    assert texts("Paris is the capital. [1][2] It is large. [3]") == [
        "Paris is the capital. [1][2]",
        "It is large. [3]",
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "The rate rose by 3.5 percent in 2020 [1].",
        "Rivers such as the Rhine, e.g. in Germany, flow north [1].",
        "It was measured by Dr. Smith at No. 5 Main Street [1].",
        "The report cites [CIT:gov.us.v2] for the figure.",
    ],
)
def test_does_not_split_on_decimals_abbreviations_or_inside_markers(answer: str) -> None:
    assert texts(answer) == [answer]


def test_line_breaks_end_sentences() -> None:
    assert texts("The capitals are:\n- Paris [1]\n- Rome [2]") == [
        "The capitals are:",
        "- Paris [1]",
        "- Rome [2]",
    ]


def test_spans_point_into_the_answer() -> None:
    answer = "  First one [1].  Second one [2]. "
    for sentence in split_sentences(answer):
        assert answer[sentence.start : sentence.end] == sentence.text


@pytest.mark.parametrize("answer", ["", "   ", "\n\n"])
def test_empty_answers_have_no_sentences(answer: str) -> None:
    assert split_sentences(answer) == []


def test_non_english_text_splits_on_full_stops() -> None:
    assert texts("Saya tidak tahu. Я не знаю.") == ["Saya tidak tahu.", "Я не знаю."]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Paris is in France.[1] It is big.", ["Paris is in France.[1]", "It is big."]),
        ("Paris is old.[1][2] Rome is older.", ["Paris is old.[1][2]", "Rome is older."]),
        ('He said "yes."[CIT:d1] Then he left.', ['He said "yes."[CIT:d1]', "Then he left."]),
    ],
)
def test_a_marker_glued_to_the_stop_still_ends_the_sentence(
    answer: str, expected: list[str]
) -> None:
    assert texts(answer) == expected


def test_sentence_spans_are_the_sentences_offsets() -> None:
    # by hand: "Paris is in France." is 19 characters, then a space, then 10 more
    assert sentence_spans("Paris is in France. It is big.") == ((0, 19), (20, 30))
    assert sentence_spans("  ") == ()


@pytest.mark.parametrize(
    ("text", "spans", "fit"),
    [
        ("Paris is in France. It is big.", ((0, 19), (20, 30)), True),
        ("Paris is in France. It is big.", ((0, 30),), True),  # another split, still pieces
        ("Paris is in France. It is big.", ((0, 20), (20, 30)), False),  # a trailing space
        ("Paris is in France. It is big.", ((20, 30), (0, 19)), False),  # out of order
        ("Paris is in France. It is big.", ((0, 19), (20, 31)), False),  # past the end
        ("Paris is in France. It is big.", ((5, 5),), False),  # empty
        ("Paris is in France. It is big.", (), False),  # a text with no sentence
        ("   ", (), True),
    ],
)
def test_spans_fit_only_stripped_ordered_pieces_of_their_text(
    text: str, spans: tuple[tuple[int, int], ...], fit: bool
) -> None:
    assert spans_fit(text, spans) is fit


def test_remembered_spans_are_used_instead_of_punkt(monkeypatch: pytest.MonkeyPatch) -> None:
    # A text no other test splits, so no earlier split is cached; spans Punkt would not
    # give (one sentence), so only the remembered analysis can explain the result.
    text = "Remembered one. Remembered two."
    remember_spans({text: ((0, len(text)),)}, "auto")

    def no_punkt(text: str, fmt: object = "auto") -> object:
        raise AssertionError("Punkt ran on a remembered text")

    monkeypatch.setattr(sentences, "sentence_spans", no_punkt)
    try:
        assert split_sentences(text) == [Sentence(text, 0, len(text))]
    finally:  # no analysis, nor split made of one, left to the tests that follow
        sentences.forget_spans()
