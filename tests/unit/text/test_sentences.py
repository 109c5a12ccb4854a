"""The project's sentence splitter: Punkt, citation-aware."""

from __future__ import annotations

import pytest

from pytest_ragmetrics.text.sentences import split_sentences


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
