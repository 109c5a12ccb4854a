"""Refusal detection: Trust-Score's fuzzy "is this the refusal flag?" rule, reproduced exactly."""

from __future__ import annotations

import dataclasses
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.metrics.trust.refusal import (
    DEFAULT_REFUSAL_FLAG,
    DEFAULT_REFUSAL_THRESHOLD,
    RefusalVerdict,
    is_refusal,
    partial_ratio,
    refusal_verdict,
    trust_normalize,
)

NORMALIZED_FLAG = "i apologize but i couldnt find answer"

LONG_ANSWER = (
    "Paris is the capital of France [1]. The Eiffel Tower was completed in 1889 [2]. "
    "I apologize, but I couldn't find an answer to your second question in the documents."
)

# Expected scores of partial_ratio(trust_normalize(DEFAULT_REFUSAL_FLAG), trust_normalize(output)).
# They come from the reference implementation, NOT from this package: each number was produced by
# fuzzywuzzy 0.18.0 `fuzz.partial_ratio` running on python-Levenshtein 0.26.1 (rapidfuzz 3.14.6
# underneath), applied to the ALCE/SQuAD `normalize_answer` of both strings, in a scratch venv
# outside this repo. Neither library is a dependency, not even for tests (both are GPL).
# A refusal is score > 85, so 85 is the last "answered" score.
REFERENCE_SCORES: list[tuple[str, int]] = [
    # Normalises to "" -> 0 (the flag is not empty).
    ("", 0),
    ("   ", 0),
    (".", 0),
    ("?!...", 0),
    ("An", 0),
    ("the", 0),
    # Short outputs: word-level substrings of the flag score 100; 2-char ones may not.
    ("I", 100),
    ("Could", 100),
    ("The answer.", 100),
    ("The answer [12].", 80),
    ("in", 50),
    ("ou", 50),
    ("In.", 50),
    # From the research notes; rapidfuzz.fuzz.partial_ratio would call the "Sorry, ..." a refusal.
    ("Answers", 92),
    ("Apologies", 89),
    ("Sorry, I couldn't find an answer.", 81),
    ("I could not find an answer.", 95),
    ("I apologize but I cannot find the answer.", 89),
    ("I couldn't find an answer in the documents.", 76),
    ("I don't know.", 45),
    (LONG_ANSWER, 100),
    # Curly apostrophes survive normalisation; non-Latin text.
    ("I apologize, but I couldn’t find an answer.", 97),
    ("I couldn’t find an answer.", 98),
    ("Sorry, I couldn’t find an answer.", 80),
    ("Извините, но я не смог найти ответ.", 15),
    ("Извините, я не нашёл ответа.", 15),
    ("東京です。", 0),
    # Plainly refusals / plainly answers.
    ("I apologize, but I couldn't find an answer.", 100),
    ("I APOLOGIZE, BUT I COULDN'T FIND AN ANSWER", 100),
    ("I apologize, but I couldn't find an answer [1].", 100),
    ("Paris is the capital of France.", 42),
    ("The answer is Paris [1].", 35),
    ("No idea.", 29),
    ("I couldn't find an answer to your question.", 57),
    # Realistic outputs near the threshold (79-89); 85 is still "answered".
    ("I'm sorry, but I couldn't find an answer.", 79),
    ("Sorry, I could not find an answer.", 79),
    ("I'm sorry, I couldn't find an answer.", 80),
    ("Sorry, couldn't find an answer.", 80),
    ("I cannot find an answer.", 80),
    ("I am sorry, but I couldn't find an answer.", 81),
    ("I apologize, but I couldn't really find an answer.", 81),
    ("Sorry, I couldn't find the answer.", 81),
    ("I did not find an answer.", 81),
    ("I could find the answer: Paris.", 83),
    ("I apologize, but I couldn't locate an answer.", 84),
    ("I apologize, but sadly I couldn't find an answer.", 84),
    ("I regret, but I couldn't find an answer.", 84),
    ("I could not find an answer, sorry.", 84),
    ("I apologize, but I failed to find an answer.", 84),
    ("I apologize, but I didn't find any answer.", 84),
    ("Apologies; I could not find an answer.", 85),
    ("My apologies: I couldn't find an answer.", 85),
    ("Apologies; I couldn't find that answer.", 85),
    ("I apologize, but I couldn't find a definitive answer.", 86),
    ("I apologize, but I couldn't find a good answer.", 86),
    ("I apologize, but I couldn't find an exact answer.", 86),
    ("I apologize, but I just couldn't find an answer.", 86),
    ("My apologies, I could not find an answer.", 86),
    ("I apologize, but I couldn't find a direct answer.", 86),
    ("Sorry, but I couldn't find an answer.", 87),
    ("I apologize - I couldn't find an answer.", 88),
    ("I apologize, I couldn't find an answer.", 88),
    ("I apologize, but I can't find an answer.", 88),
    ("I couldn't find it.", 88),
    ("I could find no answer.", 88),
    ("I apologize, but I couldn't find a clear answer.", 89),
    ("I apologize, but I couldn't find any answer.", 89),
    ("I apologize, but I didn't find an answer.", 89),
    ("I apologize, but I cannot find an answer.", 89),
    ("I apologize, but I could not find it.", 89),
]


@pytest.mark.parametrize(("output", "expected"), REFERENCE_SCORES)
def test_scores_match_the_reference(output: str, expected: int) -> None:
    verdict = refusal_verdict(output)
    assert verdict.score == expected
    assert verdict.refusal is (expected > 85)
    assert is_refusal(output) is verdict.refusal


def test_the_table_straddles_the_threshold() -> None:
    near = [score for _, score in REFERENCE_SCORES if 80 <= score <= 90]
    assert len(near) >= 30
    assert {85, 86} <= set(near)


def test_defaults() -> None:
    assert DEFAULT_REFUSAL_FLAG == "I apologize, but I couldn't find an answer"
    assert DEFAULT_REFUSAL_THRESHOLD == 85
    assert trust_normalize(DEFAULT_REFUSAL_FLAG) == NORMALIZED_FLAG


def test_threshold_is_strict() -> None:
    # "Apologies; I could not find an answer." scores exactly 85 (table above).
    output = "Apologies; I could not find an answer."
    assert refusal_verdict(output) == RefusalVerdict(
        refusal=False, score=85, flag=DEFAULT_REFUSAL_FLAG, threshold=85
    )
    assert is_refusal(output, threshold=84.9)
    assert not is_refusal(output, threshold=85.0)


def test_custom_flag() -> None:
    flag = "No answer found"
    assert refusal_verdict("No answer was found.", flag=flag) == RefusalVerdict(
        # "no answer found" vs "no answer was found": the blocks anchor the windows
        # "no answer was f" and "nswer was found"; each shares an LCS of 11 characters with the
        # flag, 2*11/(15 + 15) = 0.733 -> 73.
        refusal=False,
        score=73,
        flag=flag,
        threshold=85,
    )
    assert is_refusal("No answer found.", flag=flag)


def test_empty_flag_and_empty_output_is_a_refusal() -> None:
    # Equality is checked before emptiness: "" == "" scores 100.
    assert refusal_verdict("...", flag="") == RefusalVerdict(True, 100, "", 85)
    assert refusal_verdict("Paris", flag="").score == 0


def test_verdict_is_frozen() -> None:
    verdict = refusal_verdict("I couldn't find an answer.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.score = 0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("s1", "s2", "expected"),
    [
        (None, "abc", 0),
        ("abc", None, 0),
        (None, None, 0),
        ("", "", 100),  # equality wins over emptiness
        ("", "abc", 0),
        ("abc", "", 0),
        ("abc", "abc", 100),
        ("abc", "xyz", 0),  # no block but the final (3, 3, 0): window "xyz", LCS 0
        ("answer", NORMALIZED_FLAG, 100),  # a contiguous block of size 6
        ("x", "abxcd", 100),  # a single contained character is always its own window
        ("cat", "concatenate", 100),  # blocks c@0, "at"@4 -> window "cat" at 3
        # Worked example. opcodes("abcd", "xxabxd"): insert "xx", keep "ab", replace c->x,
        # keep "d"; blocks (0, 2, 2), (3, 5, 1), (4, 6, 0). Every block anchors the window at
        # max(0, b - a) = 2, i.e. "abxd". Indel("abcd", "abxd") = 2 (delete c, insert x), so
        # the ratio is 1 - 2/(4 + 4) = 0.75 -> 75.
        ("abcd", "xxabxd", 75),
        # Only aligned blocks are tried. "ab" is aligned as a@0, b@2 (blocks (0,0,1), (1,2,1)),
        # windows "ax" and "xb"; the final block (2, 7, 0) gives "bx": 0.5 each, although "ab"
        # occurs in the longer string.
        ("ab", "axbxabx", 50),
        ("ab", "axbxab", 100),  # aligned as a@0, b@5: the window of (1, 5, 1) is "ab"
        # i@0 and the n of "couldnt" (block (1, 23, 1)): windows "i ", "dn", and "er" for the
        # final block: ratios 0.5, 0.5, 0.
        ("in", NORMALIZED_FLAG, 50),
        # The final zero-size block is iterated: the alignment of "ab" to "bx" is two
        # substitutions, so (2, 2, 0) is the only block; its window "bx" shares "b" -> 2/4 = 50.
        ("ab", "bx", 50),
        # Half to even: 8 vs 8 chars, LCS 5 -> 2*5/16 = 0.625 -> 62.5 -> 62 (half-up: 63).
        ("aaaaaaaa", "aaaaabbb", 62),
        ("aaaaaaaa", "abbbbbbb", 12),  # 0.125 -> 12.5 -> 12
        ("aaaaaaaa", "aaaaaaab", 88),  # 0.875 -> 87.5 -> 88
        # Equal lengths: the first argument is "shorter", so the order matters.
        ("ada ab", " a d b", 73),
        (" a d b", "ada ab", 67),
    ],
)
def test_partial_ratio_by_hand(s1: str | None, s2: str | None, expected: int) -> None:
    # These values were also checked against fuzzywuzzy 0.18.0 + python-Levenshtein 0.26.1.
    assert partial_ratio(s1, s2) == expected


def test_rapidfuzz_partial_ratio_is_a_different_definition() -> None:
    from rapidfuzz import fuzz

    assert fuzz.partial_ratio(NORMALIZED_FLAG, "in") == 100
    assert partial_ratio(NORMALIZED_FLAG, "in") == 50
    sorry = trust_normalize("Sorry, I couldn't find an answer.")
    assert fuzz.partial_ratio(NORMALIZED_FLAG, sorry) > 85
    assert partial_ratio(NORMALIZED_FLAG, sorry) == 81


_FLAG_WORDS = NORMALIZED_FLAG.split()


@pytest.mark.parametrize(
    "phrase",
    [
        " ".join(_FLAG_WORDS[i:j])
        for i in range(len(_FLAG_WORDS))
        for j in range(i + 1, len(_FLAG_WORDS) + 1)
    ],
)
def test_every_word_level_substring_of_the_flag_is_a_refusal(phrase: str) -> None:
    # Holds in the reference for all 28 phrases; it does not hold for every character-level
    # substring ("in", "ou" score 50).
    assert partial_ratio(NORMALIZED_FLAG, phrase) == 100
    assert partial_ratio(phrase, NORMALIZED_FLAG) == 100
    assert is_refusal(phrase)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("  \t\n ", ""),
        ("?!...", ""),
        ("The answer.", "answer"),
        ("An apple a day", "apple day"),
        ("I couldn't", "i couldnt"),  # ASCII apostrophe deleted, not replaced by a space
        ("I couldn’t", "i couldn’t"),  # the curly apostrophe is not ASCII punctuation
        ("don't-stop", "dontstop"),
        ("«Привет», мир!", "«привет» мир"),  # ASCII "," and "!" go, the guillemets stay
        ("Theatre, anthem; bathe", "theatre anthem bathe"),  # articles only as whole words
        ("the’s", "’s"),  # "the" is a whole word before the curly apostrophe
        ("a-an the", "aan"),  # punctuation is deleted first, so "a-an" becomes one word
        ("Answer [12].", "answer 12"),
        ("  Multiple   spaces\there ", "multiple spaces here"),
    ],
)
def test_trust_normalize(text: str, expected: str) -> None:
    assert trust_normalize(text) == expected


def _squad_normalize(text: str) -> str:
    """The ALCE/SQuAD definition spelled out step by step, for the property below."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


texts = st.text(st.sampled_from("aAbnt eh.,'’-_!Ж\t"), max_size=30) | st.text(max_size=30)
small = st.text(st.sampled_from("ab "), max_size=12)


@given(texts)
def test_trust_normalize_properties(text: str) -> None:
    out = trust_normalize(text)
    assert out == _squad_normalize(text)
    assert not set(out) & set(string.punctuation)
    assert out == " ".join(out.split())
    assert trust_normalize(out) == out


@given(texts | small, texts | small)
def test_partial_ratio_range_and_symmetry(s1: str, s2: str) -> None:
    score = partial_ratio(s1, s2)
    assert 0 <= score <= 100
    if len(s1) != len(s2):  # only equal lengths depend on the argument order
        assert partial_ratio(s2, s1) == score
    assert partial_ratio(s1, s1) == 100


@given(small | texts, st.data())
def test_prefix_suffix_and_single_char_score_100(longer: str, data: st.DataObject) -> None:
    """The exact "substring" property that holds (a middle substring can score less: "in").

    A suffix scores 100 because the final zero-size block anchors a window at the end; a single
    contained character is its own window. A prefix scoring 100 follows from the alignment
    rapidfuzz (and so python-Levenshtein) picks, not from the definition; it held in the
    reference for every one of ~31,000 random prefixes.
    """
    if not longer:
        return
    k = data.draw(st.integers(1, len(longer)))
    assert partial_ratio(longer[-k:], longer) == 100
    assert partial_ratio(longer, longer[:k]) == 100
    ch = data.draw(st.sampled_from(longer))
    assert partial_ratio(ch, longer) == 100
