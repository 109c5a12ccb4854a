"""EM and token F1: hand-computed cases, the SQuAD v1.1 edge cases, and properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.metrics import best_f1, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("New-York", "newyork"),  # punctuation is deleted, not replaced by a space
        ("  a  cat, an   apple and THE end ", "cat apple and end"),
        ("theory", "theory"),  # articles only as whole words
        ("Anatomy of an Apple", "anatomy of apple"),
        ("$5 + 3 = 8", "5 3 8"),  # ASCII punctuation includes $ + =
        ("«Москва» — столица.", "москва столица"),  # Unicode punctuation, Cyrillic kept
        ("Café São Paulo…", "café são paulo"),  # accented letters kept
        ("", ""),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_hand_cases() -> None:
    assert exact_match("The Eiffel Tower.", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel", ["eiffel tower"]) == 0.0
    assert exact_match("Paris", "paris") == 1.0  # a single gold string
    assert exact_match("Lyon", ["Paris", "Lyon"]) == 1.0  # any gold


def test_f1_hand_cases() -> None:
    # prediction {paris, is, capital}, gold {paris}: P = 1/3, R = 1, F1 = 2PR/(P+R) = 0.5
    assert token_f1("Paris is the capital.", ["Paris"]) == pytest.approx(0.5)
    # prediction {red, red, blue}, gold {red, blue, blue}: common = min counts = 1 + 1 = 2,
    # P = 2/3, R = 2/3, F1 = 2/3
    assert token_f1("red red blue", "red blue blue") == pytest.approx(2 / 3)
    assert token_f1("nothing shared", "other words") == 0.0


def test_f1_takes_the_best_gold() -> None:
    match = best_f1("the river Danube", ["Rhine", "Danube river", "Danube"])
    # "river danube" vs "danube river": two common tokens, P = R = 1
    assert match.score == pytest.approx(1.0)
    assert match.gold == "Danube river"


def test_both_empty_after_normalisation_follows_squad() -> None:
    # SQuAD v1.1: EM compares the normalised strings ("" == ""), F1 has no common token
    assert exact_match("The.", ["a"]) == 1.0
    assert token_f1("The.", ["a"]) == 0.0


def test_empty_gold_list_is_an_error() -> None:
    with pytest.raises(ValueError, match="no gold answer"):
        token_f1("x", [])
    with pytest.raises(ValueError, match="no gold answer"):
        exact_match("x", [])


def test_non_string_gold_is_an_error() -> None:
    with pytest.raises(TypeError, match="strings"):
        token_f1("x", [3])  # type: ignore[list-item]


words = st.lists(st.sampled_from(["paris", "the", "capital", "is", "москва", "café", "a"]))
texts = st.builds(" ".join, words)


@given(texts, st.lists(texts, min_size=1, max_size=3))
def test_scores_are_bounded(prediction: str, golds: list[str]) -> None:
    assert 0.0 <= token_f1(prediction, golds) <= 1.0
    assert exact_match(prediction, golds) in (0.0, 1.0)


@given(texts, st.lists(texts, min_size=1, max_size=3))
def test_exact_match_implies_full_f1(prediction: str, golds: list[str]) -> None:
    if exact_match(prediction, golds) == 1.0 and normalize_answer(prediction):
        assert token_f1(prediction, golds) == pytest.approx(1.0)


@given(texts, texts)
def test_f1_is_symmetric(a: str, b: str) -> None:
    assert token_f1(a, [b]) == pytest.approx(token_f1(b, [a]))


@given(words, st.randoms())
def test_f1_depends_only_on_token_multisets(tokens: list[str], rnd: object) -> None:
    shuffled = list(tokens)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    gold = "paris capital москва"
    assert token_f1(" ".join(tokens), gold) == pytest.approx(token_f1(" ".join(shuffled), gold))
    assert Counter(normalize_answer(" ".join(tokens)).split()) == Counter(
        normalize_answer(" ".join(shuffled)).split()
    )
