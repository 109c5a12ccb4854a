"""Anchor coverage: anchor extraction, matching rules, score and evidence.

Every expected value is worked out by hand from the docstring of
``pytest_ragmetrics.metrics.anchors``; the comment on a case says which rule decides it.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.metrics.anchors import AnchorCoverage, anchor_coverage, question_anchors


@pytest.mark.parametrize(
    ("question", "anchors"),
    [
        # "What" is a stop word: the run What-Lumen-Cloud keeps "Lumen Cloud"; "$5" gives "5"
        ("What Lumen Cloud plan costs $5 per month in 2017?", ("Lumen Cloud", "5", "2017")),
        # a single word left after the stop word is still an entity
        ("Is Lumen available in Jakarta?", ("Lumen", "Jakarta")),
        # possessive "'s" is no quote and not part of the word; the title is one anchor
        ("Who wrote Lumen's 'Green Book' in 2017?", ("Lumen", "Green Book", "2017")),
        ("Why doesn't Lumen's plan work?", ("Lumen",)),
        ("Siapa pemenang Best Animated Feature 2004?", ("Best Animated Feature", "2004")),
        ("Кто основал компанию «Лунный свет» в 2017 году?", ("Лунный свет", "2017")),
        ("Сколько пользователей у Yandex Cloud?", ("Yandex Cloud",)),
        # the number in "GPT-4" belongs to the entity; "of" connects Bank and America
        ("How does GPT-4 compare with Bank of America?", ("GPT-4", "Bank of America")),
        ("Who ran Lumen in Q3 2023?", ("Lumen", "Q3", "2023")),
        # nothing inside a title is a separate anchor
        ("Who won the “Best Film 2020” award?", ("Best Film 2020",)),
        ('Who wrote "Green Book"?', ("Green Book",)),
        ("Who wrote ‘Green Book’?", ("Green Book",)),
        ("Что такое «Лунный свет»?", ("Лунный свет",)),
        # deduplicated case-insensitively, the first spelling kept
        ("Did 'Lumen' beat LUMEN in 2017 and 2017?", ("Lumen", "2017")),
        # "GB" is a unit abbreviation, not an entity; "How" is a stop word
        ("How many GB does the 5 GB plan offer?", ("5",)),
        # grouped and decimal numbers are single anchors
        ("Which of the 1,200 users used version 5.5?", ("1,200", "5.5")),
        ("Can I use Lumen on 2024-03-12?", ("Lumen", "2024-03-12")),
        # stop words are removed from the start of every run: "Will Smith" keeps "Smith"
        ("Will Smith star in Lumen?", ("Smith", "Lumen")),
        # NFKC turns full-width letters and digits into ASCII
        ("Who founded Ｌｕｍｅｎ in ２０１７?", ("Lumen", "2017")),
        ("Who is the CEO of Lumen?", ("Lumen",)),  # CEO is in the stop list
        ("what is the weather like?", ()),
        ("", ()),
    ],
)
def test_question_anchors(question: str, anchors: tuple[str, ...]) -> None:
    assert question_anchors(question) == anchors


@pytest.mark.parametrize(
    ("context", "found"),
    [
        ("The plan has 5 seats.", True),
        ("5GB and 5 seats", True),  # a letter may follow a number
        ("costs $5", True),
        ("a 5-day trial", True),
        ("(5)", True),
        ("The plan has 50 seats.", False),
        ("Version 5.5 only.", False),
        ("5,000 seats", False),
        ("Version 1.5 only.", False),
        ("Model v5", False),  # a letter before it
    ],
)
def test_numbers_match_on_token_boundaries(context: str, found: bool) -> None:
    coverage = anchor_coverage("Does the plan include 5 seats?", [context])
    assert coverage.anchors == ("5",)
    assert coverage.found == (("5",) if found else ())


def test_a_year_is_not_found_inside_a_longer_number() -> None:
    coverage = anchor_coverage("Was Lumen launched in 2017?", ["Lumen launched in 20170."])
    assert coverage == AnchorCoverage(0.5, ("Lumen", "2017"), ("Lumen",), ("2017",), 1)


@pytest.mark.parametrize(
    ("context", "found"),
    [
        ("lumen cloud is fast", True),  # case-insensitive
        ("LUMEN's cloud", False),  # "LUMEN" then "'s": "Lumen Cloud" needs both words
        ("ＬＵＭＥＮ ＣＬＯＵＤ", True),  # NFKC
        ("Lumen\n   Cloud", True),  # white space collapsed
        ("LumenCloud", False),
        ("Lumen Cloudy", False),  # no letter may follow the entity
        ("XLumen Cloud", False),  # nor precede it
    ],
)
def test_entities_match_whole_words_after_normalisation(context: str, found: bool) -> None:
    coverage = anchor_coverage("What does Lumen Cloud cost?", [context])
    assert coverage.anchors == ("Lumen Cloud",)
    assert coverage.score == (1.0 if found else 0.0)


def test_curly_and_straight_apostrophes_match() -> None:
    coverage = anchor_coverage("Who wrote 'Lumen's Guide'?", ["Lumen’s Guide was written by Ada."])
    assert coverage.anchors == ("Lumen's Guide",)
    assert coverage.score == 1.0


def test_cyrillic_anchors() -> None:
    coverage = anchor_coverage(
        "Кто основал Яндекс в 1997 году?", ["Яндекс был основан в 1997 году."]
    )
    assert coverage.anchors == ("Яндекс", "1997")
    assert coverage.score == 1.0
    assert coverage.evidence() == "2 of 2 anchors in the cited contexts"


def test_anchors_are_found_in_any_cited_text() -> None:
    coverage = anchor_coverage(
        "Did Lumen Cloud launch the 'Green Book' in 2017?",
        ["Lumen Cloud announced it.", "The Green Book came out in 2018."],
    )
    assert coverage.anchors == ("Lumen Cloud", "Green Book", "2017")
    assert coverage.found == ("Lumen Cloud", "Green Book")
    assert coverage.missing == ("2017",)
    assert coverage.score == 2 / 3
    assert coverage.evidence() == "2 of 3 anchors in the cited contexts; missing: '2017'"


def test_a_question_without_anchors_scores_one() -> None:
    coverage = anchor_coverage("what is the weather like?", [])
    assert coverage == AnchorCoverage(1.0, (), (), (), 0)
    assert coverage.evidence() == (
        "the question has no anchors (years, numbers, capitalised names, quoted titles), "
        "so nothing can be missing"
    )


@pytest.mark.parametrize("cited", [[], [""], ["   "]])
def test_anchors_without_cited_text_score_zero(cited: list[str]) -> None:
    coverage = anchor_coverage("Was Lumen launched in 2017?", cited)
    assert coverage.score == 0.0
    assert coverage.missing == ("Lumen", "2017")


def test_evidence_lines() -> None:
    nothing_cited = anchor_coverage("Was Lumen launched in 2017?", [])
    assert nothing_cited.evidence() == (
        "0 of 2 anchors in the cited contexts (nothing was cited); missing: 'Lumen', '2017'"
    )
    one = anchor_coverage("Is Lumen fast?", ["Lumen is fast."])
    assert one.evidence() == "1 of 1 anchor in the cited contexts"


def test_a_single_string_is_refused() -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        anchor_coverage("Is Lumen fast?", "Lumen is fast.")


def test_results_are_frozen_and_deterministic() -> None:
    question, cited = "Did Lumen launch in 2017?", ["Lumen launched in 2017."]
    first = anchor_coverage(question, cited)
    assert all(anchor_coverage(question, cited) == first for _ in range(5))
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.score = 0.0  # type: ignore[misc]


PIECES = [
    "Lumen",
    "Lumen Cloud",
    "Bank of America",
    "Яндекс",
    "2017",
    "5",
    "5.5",
    "1,200",
    "'Green Book'",
    "«Лунный свет»",
    "what",
    "Who",
    "is",
    "the",
    "in",
    "?",
]
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=10).map(" ".join),
    st.text(max_size=50),
)


@given(question=texts, cited=st.lists(texts, max_size=3))
def test_coverage_properties(question: str, cited: list[str]) -> None:
    coverage = anchor_coverage(question, cited)
    assert 0.0 <= coverage.score <= 1.0
    assert coverage.anchors == question_anchors(question)
    assert len(set(coverage.anchors)) == len(coverage.anchors)
    assert set(coverage.found).isdisjoint(coverage.missing)
    assert sorted(coverage.found + coverage.missing, key=coverage.anchors.index) == list(
        coverage.anchors
    )
    if coverage.anchors:
        assert coverage.score == len(coverage.found) / len(coverage.anchors)
    else:
        assert coverage.score == 1.0


@given(question=texts)
def test_the_question_covers_its_own_anchors(question: str) -> None:
    assert anchor_coverage(question, [question]).missing == ()
