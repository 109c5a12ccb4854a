"""IDK detection, abstention and the idk_citation contract check."""

from __future__ import annotations

import pytest

from pytest_ragmetrics.metrics import abstention, idk_citation
from pytest_ragmetrics.text.idk import IdkMatcher

MATCHER = IdkMatcher()


@pytest.mark.parametrize(
    "sentence",
    [
        "I don't know.",
        "I don’t know.",  # curly apostrophe
        "i DO NOT   know the answer.",
        "I apologize, but I couldn't find an answer.",
        "Sorry, I could not find an answer in the documents.",
        "Saya tidak tahu.",
        "Maaf, saya tidak tahu jawabannya.",
        "Я не знаю.",
        "Не знаю [1].",  # markers are ignored for matching
    ],
)
def test_default_patterns_match_english_indonesian_russian(sentence: str) -> None:
    assert MATCHER.match(sentence) is not None


@pytest.mark.parametrize(
    "sentence",
    ["Paris is the capital.", "Knowledge is power.", "I know the answer: 42.", "Itidak tahu"],
)
def test_ordinary_sentences_are_not_idk(sentence: str) -> None:
    assert MATCHER.match(sentence) is None


def test_custom_patterns_replace_the_defaults() -> None:
    matcher = IdkMatcher(("no idea",))
    assert matcher.match("No idea, sorry.") == "no idea"
    assert matcher.match("I don't know.") is None


def test_empty_pattern_lists_are_rejected() -> None:
    with pytest.raises(ValueError, match="empty"):
        IdkMatcher(())
    with pytest.raises(ValueError, match="non-empty"):
        IdkMatcher(("  ",))


def test_an_answer_abstains_when_every_sentence_is_idk() -> None:
    assert abstention("I don't know. Saya tidak tahu.").abstains
    assert not abstention("I don't know the year. It was built in Paris [1].").abstains


def test_empty_answer_and_telemetry_abstain() -> None:
    assert abstention("").reason == "the answer is empty"
    result = abstention("Paris [1].", telemetry={"action": "ABSTAIN"})
    assert result.abstains
    assert "telemetry" in result.reason
    assert not abstention("Paris [1].", telemetry={"action": "ANSWER"}).abstains


def test_idk_citation_names_the_sentence_and_the_marker() -> None:
    result = idk_citation("Paris is big [CIT:d1]. I don't know the rest [CIT:d2].", ["d1"])
    assert result.score == 1.0
    (cited,) = result.cited
    assert cited.sentence == "I don't know the rest [CIT:d2]."
    assert cited.markers == ("[CIT:d2]",)  # invalid citations count too


def test_idk_citation_is_zero_for_clean_answers() -> None:
    assert idk_citation("I don't know.", ["d1"]).score == 0.0
    assert idk_citation("Paris [CIT:d1].", ["d1"]).score == 0.0


def test_a_glued_marker_does_not_merge_an_idk_with_an_answer() -> None:
    result = abstention("I don't know.[1] Paris is the capital [CIT:d1].")
    assert not result.abstains
