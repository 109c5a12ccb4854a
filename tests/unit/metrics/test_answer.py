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

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics import best_f1, exact_match, normalize_answer, token_f1
from pytest_ragmetrics.metrics.answer import measure_em, measure_f1, squad_scores
from pytest_ragmetrics.metrics.base import MetricContext


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


# -- SQuAD v2.0's no-answer rule, and v1.1's ASCII-only punctuation ---------------------
# The v2.0 script (evaluate-v2.0.py): gold answers that normalise to nothing are dropped,
# and a question left with none has the one gold "" (no answer); compute_exact is
# int(normalize(gold) == normalize(pred)); compute_f1 returns int(gold_toks == pred_toks)
# when either side has no token, else v1.1's token F1.


def test_v2_scores_an_empty_prediction_against_no_answer_as_a_match() -> None:
    # v1.1: both empty -> EM 1, F1 0. v2.0: EM 1, F1 int([] == []) = 1.
    assert (exact_match("", [""]), token_f1("", [""])) == (1.0, 0.0)
    assert exact_match("", [""], version="2.0") == 1.0
    assert token_f1("", [""], version="2.0") == 1.0
    # "The." normalises to nothing: still no answer, on either side.
    assert token_f1("The.", ["", "a"], version="2.0") == 1.0


def test_v2_scores_an_answer_to_a_no_answer_question_zero() -> None:
    assert exact_match("Paris", [""], version="2.0") == 0.0
    assert token_f1("Paris", [""], version="2.0") == 0.0
    assert token_f1("", ["Paris"], version="2.0") == 0.0  # abstained on an answerable one


def test_v2_drops_golds_that_normalise_to_nothing() -> None:
    # Golds "the" and "Paris": v2.0 keeps "Paris" only, so the empty prediction misses
    # (EM 0, F1 0), where v1.1 matches "the" (EM 1).
    assert exact_match("", ["the", "Paris"]) == 1.0
    assert exact_match("", ["the", "Paris"], version="2.0") == 0.0
    assert token_f1("", ["the", "Paris"], version="2.0") == 0.0
    # On answers with tokens v2.0 is v1.1: "Paris France" vs "Paris": P 1/2, R 1, F1 2/3.
    assert token_f1("Paris France", ["the", "Paris"], version="2.0") == pytest.approx(2 / 3)


def test_ascii_punctuation_deletes_string_punctuation_only() -> None:
    # v1.1 strips string.punctuation only: "«" and "—" stay, as tokens or inside words.
    assert normalize_answer("«Москва» — столица.", ascii_punctuation=True) == "«москва» — столица"
    assert normalize_answer("«Москва» — столица.") == "москва столица"
    # hand: pred tokens «москва», столица; gold москва -> no common token, F1 0 (v1.1);
    # the Unicode rule deletes « » and matches: P 1/2, R 1 -> 2/3.
    assert token_f1("«Москва» столица", ["Москва"], ascii_punctuation=True) == 0.0
    assert token_f1("«Москва» столица", ["Москва"]) == pytest.approx(2 / 3)
    assert exact_match("«Москва»", ["Москва"], ascii_punctuation=True) == 0.0


def test_squad_scores_report_has_answer_and_no_answer_splits() -> None:
    # Four questions, the v2.0 script's aggregate and its HasAns / NoAns splits:
    #  1 "Paris" vs "Paris"            HasAns EM 1 F1 1
    #  2 "Paris France" vs "Paris"     HasAns EM 0 F1 2/3
    #  3 "" vs no answer ("")          NoAns  EM 1 F1 1
    #  4 "Lyon" vs no answer           NoAns  EM 0 F1 0
    scores = squad_scores(
        ["Paris", "Paris France", "", "Lyon"], [["Paris"], "Paris", [""], ""], version="2.0"
    )
    assert (scores.total, scores.has_ans_total, scores.no_ans_total) == (4, 2, 2)
    assert scores.exact == pytest.approx(2 / 4)
    assert scores.f1 == pytest.approx((1 + 2 / 3 + 1 + 0) / 4)
    assert (scores.has_ans_exact, scores.has_ans_f1) == pytest.approx((1 / 2, (1 + 2 / 3) / 2))
    assert (scores.no_ans_exact, scores.no_ans_f1) == pytest.approx((1 / 2, 1 / 2))


def test_a_gold_that_normalises_to_nothing_is_still_an_answer() -> None:
    # The v2.0 script splits on bool(qa["answers"]): the gold "The" is an answer (HasAns),
    # scored against "" since it normalises to nothing; the empty prediction matches it.
    scores = squad_scores(["", "Paris"], ["The", ""], version="2.0")
    assert (scores.has_ans_total, scores.no_ans_total) == (1, 1)
    assert (scores.has_ans_exact, scores.no_ans_exact) == (1.0, 0.0)


def test_squad_scores_without_no_answer_questions_has_no_split_value() -> None:
    scores = squad_scores(["Paris"], ["Paris"])
    assert scores.no_ans_total == 0
    assert (scores.no_ans_exact, scores.no_ans_f1) == (None, None)  # not 0/0, not 0


def test_squad_scores_refuse_unequal_lengths_and_unknown_versions() -> None:
    with pytest.raises(ValueError, match="2 predictions but 1 gold"):
        squad_scores(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="version"):
        exact_match("a", ["a"], version="3.0")  # type: ignore[arg-type]


def _squad_v20_exact_f1(prediction: str, golds: list[str]) -> tuple[float, float]:
    """The SQuAD v2.0 script's ``get_raw_scores`` for one question, step for step:
    golds normalising to nothing dropped (none left: ``[""]``), then the best
    ``compute_exact`` and ``compute_f1``."""

    def tokens(text: str) -> list[str]:
        return _squad_v11_normalize(text).split() if text else []

    def compute_f1(gold: str) -> float:
        gold_toks, pred_toks = tokens(gold), tokens(prediction)
        common = Counter(gold_toks) & Counter(pred_toks)
        num_same = sum(common.values())
        if len(gold_toks) == 0 or len(pred_toks) == 0:
            return int(gold_toks == pred_toks)
        if num_same == 0:
            return 0
        precision = 1.0 * num_same / len(pred_toks)
        recall = 1.0 * num_same / len(gold_toks)
        return (2 * precision * recall) / (precision + recall)

    kept = [gold for gold in golds if _squad_v11_normalize(gold)] or [""]
    exact = max(
        int(_squad_v11_normalize(gold) == _squad_v11_normalize(prediction)) for gold in kept
    )
    return exact, max(compute_f1(gold) for gold in kept)


any_words = st.lists(
    st.one_of(
        st.sampled_from(["paris", "the", "a", "«Москва»", "—", ".", "", "x,", "é"]),
        st.text(_characters, max_size=4),
    ),
    max_size=6,
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(any_words, st.lists(any_words, min_size=1, max_size=3))
def test_v2_with_ascii_punctuation_equals_the_squad_v20_script(
    prediction: str, golds: list[str]
) -> None:
    # Any text: the script deletes string.punctuation only, as ascii_punctuation does.
    ours = (
        exact_match(prediction, golds, version="2.0", ascii_punctuation=True),
        token_f1(prediction, golds, version="2.0", ascii_punctuation=True),
    )
    assert ours == _squad_v20_exact_f1(prediction, golds)


def _measured(answer: str, gold: object, settings: Settings) -> dict[str, float]:
    row = Row("r1", "rows.jsonl", 3, 0, {"answer": answer, "gold": gold})
    ctx = MetricContext(settings, embed=lambda texts: [])
    return {**measure_em(row, ctx).values, **measure_f1(row, ctx).values}


def test_the_fixtures_follow_the_squad_settings() -> None:
    v11, v20 = Settings(), Settings(squad_version="2.0")
    # An empty answer to a no-answer question: F1 0 under v1.1, 1 under v2.0, recorded
    # also as the NoAns split.
    assert _measured("", "", v11) == {"em": 1.0, "f1": 0.0}
    assert _measured("", "", v20) == {"em": 1.0, "f1": 1.0, "em_no_ans": 1.0, "f1_no_ans": 1.0}
    # Answered: P 1/2, R 1 -> F1 2/3, the HasAns split.
    assert _measured("Paris France", ["Paris"], v20) == pytest.approx(
        {"em": 0.0, "f1": 2 / 3, "em_has_ans": 0.0, "f1_has_ans": 2 / 3}
    )
    ascii_only = Settings(squad_ascii_punctuation=True)
    assert _measured("«Москва»", ["Москва"], ascii_only) == {"em": 0.0, "f1": 0.0}
    assert _measured("«Москва»", ["Москва"], v11) == {"em": 1.0, "f1": 1.0}


def test_the_squad_splits_are_gateable_metrics_of_em_and_f1() -> None:
    from pytest_ragmetrics.metrics.answer import SPECS

    names = {spec.fixture: [info.name for info in spec.records] for spec in SPECS}
    assert names["em"] == ["em", "em_has_ans", "em_no_ans"]
    assert names["f1"] == ["f1", "f1_has_ans", "f1_no_ans"]
