"""EM and token F1: hand-computed cases, the SQuAD v1.1 edge cases, and properties."""

from __future__ import annotations

import re
import string
import sys
import unicodedata
from collections import Counter

import pytest
from hypothesis import given, settings
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


# ----------------------------------------------------------------------------- parity

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _reference_normalize(text: str) -> str:
    """The normaliser's definition as first written, one character at a time: lowercase,
    drop ASCII punctuation and every character of Unicode category P*, drop the whole words
    a/an/the, collapse white space (the SQuAD v1.1 script's steps, in its order)."""
    lowered = text.lower()
    kept = "".join(
        ch
        for ch in lowered
        if ch not in string.punctuation and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", kept).split())


def _squad_v11_normalize(text: str) -> str:
    """The SQuAD v1.1 evaluation script's ``normalize_answer``, step for step (ASCII
    punctuation only)."""
    no_punctuation = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", no_punctuation).split())


_PUNCTUATION_CATEGORIES = ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")
# Any character at all (lone surrogates too), every punctuation category, ASCII punctuation
# and symbols, the articles in both cases, and characters whose lowercase is longer
# ("İ" -> "i" + a combining dot) or is punctuation-adjacent.
_characters = st.one_of(
    st.characters(),
    st.characters(categories=_PUNCTUATION_CATEGORIES),
    st.characters(categories=("Cs",)),
    st.sampled_from(string.punctuation + string.whitespace + "İẞΣ\u0301\u00a0"),
)
unicode_text = st.one_of(
    st.text(_characters, max_size=60),
    st.lists(
        st.one_of(
            st.sampled_from(["a", "An", "THE", "the", "Anthem", "a.", "an—"]),
            st.text(_characters, max_size=6),
        ),
        max_size=12,
    ).map(" ".join),
)


@settings(max_examples=400, deadline=None)
@given(unicode_text)
def test_normalize_answer_equals_its_character_by_character_definition(text: str) -> None:
    assert normalize_answer(text) == _reference_normalize(text)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=60))
def test_normalize_answer_equals_squad_v11_on_ascii(text: str) -> None:
    assert normalize_answer(text) == _squad_v11_normalize(text)


def test_normalize_answer_deletes_every_punctuation_character() -> None:
    # Every code point of category P*, and ASCII's symbols that string.punctuation counts
    # ($ + < = > ^ ` | ~), is deleted; letters around them are kept.
    punctuation = [
        chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp))[0] == "P"
    ]
    text = "x".join([*punctuation, *string.punctuation])
    assert normalize_answer(text) == "x" * (len(punctuation) + len(string.punctuation) - 1)


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


def test_em_and_f1_of_one_answer_normalise_each_text_once() -> None:
    """EM then F1 of the same answer and golds: three texts, each normalised once; F1
    finds all three already done. The values are the hand-computed ones: "paris" matches
    the second gold exactly; F1's best gold is that one too (1 common token of 1 and 1)."""
    from pytest_ragmetrics.metrics.answer import _normalized

    _normalized.cache_clear()
    golds = ["Lyon, France!", "PARIS."]
    assert exact_match("Paris", golds) == 1.0
    assert _normalized.cache_info().misses == 3
    match = best_f1("Paris", golds)
    assert (match.score, match.gold, match.common) == (1.0, "PARIS.", 1)
    info = _normalized.cache_info()
    assert (info.misses, info.hits) == (3, 3)


def _squad_v11_f1(prediction: str, ground_truth: str) -> float:
    """The SQuAD v1.1 evaluation script's ``f1_score``, step for step: the multiset
    intersection of the normalised tokens as ``Counter`` computes it."""
    prediction_tokens = _squad_v11_normalize(prediction).split()
    ground_truth_tokens = _squad_v11_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


ascii_words = st.lists(
    st.one_of(
        st.sampled_from(["paris", "Paris", "the", "a", "capital", "is", "is.", "x", "x,", "y"]),
        st.text(st.characters(max_codepoint=127), max_size=4),
    ),
    max_size=12,
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(ascii_words, ascii_words)
def test_f1_equals_the_squad_v11_script_on_ascii(prediction: str, gold: str) -> None:
    """The same float as the script's, bit for bit: the common tokens are counted without
    building the intersection, then divided in the script's order."""
    assert token_f1(prediction, [gold]) == _squad_v11_f1(prediction, gold)
