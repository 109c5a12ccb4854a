"""ROUGE, BLEU and exact-match rate: parity with rouge-score/sacrebleu, hand cases, properties.

Expected values come from hand computation (shown in comments) or from the reference
libraries themselves (rouge-score's default tokenizer and scorer, sacrebleu).
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections.abc import Sequence

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.stem.porter import PorterStemmer  # type: ignore[import-untyped]
from rouge_score import rouge_scorer, tokenizers  # type: ignore[import-untyped]

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import MetricContext
from pytest_ragmetrics.metrics.bleu import (
    BleuStats,
    SentenceBleu,
    corpus_bleu_from_stats,
    sentence_bleu,
    sum_stats,
)
from pytest_ragmetrics.metrics.repeats import response_exact_match_rate
from pytest_ragmetrics.metrics.rouge_tokenizer import tokenize
from pytest_ragmetrics.metrics.text import (
    RougeDetail,
    RougeScore,
    RougeScores,
    measure_rouge,
    rouge,
    rouge_detail,
)

FAST = settings(max_examples=60, deadline=None)

# ----------------------------------------------------------------------------- strategies

# Words that exercise the Porter stemmer (NLTK extensions included), the "more than 3
# characters" rule (was, has, its) and rouge-score's separators (_ - . ').
_ASCII_WORDS = [
    "running", "runs", "flies", "caresses", "ponies", "generously", "agreed", "dying",
    "ties", "sky", "news", "was", "has", "its", "it's", "U.S.A.", "e-mail", "snake_case",
    "CamelCase", "3.14", "x2", "1234", "a", "The", "cat", "sat", "on", "mat", "relational",
]  # fmt: skip
_ASCII_SEPARATORS = [" ", "  ", "\n", "\t", "-", "_", ".", ", ", "!"]

_ascii_word_text = st.lists(
    st.tuples(st.sampled_from(_ASCII_WORDS), st.sampled_from(_ASCII_SEPARATORS)), max_size=12
).map(lambda pairs: "".join(word + sep for word, sep in pairs))
ascii_text = st.one_of(st.text(st.characters(max_codepoint=127), max_size=60), _ascii_word_text)

_BLEU_WORDS = [
    "the", "cat", "sat", "on", "mat", "a", "dog", ".", ",", "!", "кот", "сидит", "на",
    "ковре", "café", "Кот",
]  # fmt: skip
bleu_text = st.lists(st.sampled_from(_BLEU_WORDS), max_size=10).map(" ".join)
bleu_references = st.lists(bleu_text, min_size=1, max_size=3)

# ----------------------------------------------------------------------------- tokenizer


@FAST
@given(text=ascii_text, use_stemmer=st.booleans())
def test_tokenize_matches_rouge_score_on_ascii(text: str, use_stemmer: bool) -> None:
    expected = tokenizers.DefaultTokenizer(use_stemmer).tokenize(text)
    assert tokenize(text, use_stemmer) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Кошка сидит на ковре.", ["кошка", "сидит", "на", "ковре"]),
        ("Café crème, BRÛLÉE!", ["café", "crème", "brûlée"]),
        ("Αθήνα 2004", ["αθήνα", "2004"]),
        ("snake_case—em-dash…", ["snake", "case", "em", "dash"]),  # underscore separates
        ("٣ apples", ["٣", "apples"]),  # Arabic-Indic digit three is a digit
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and virama stay in the word
        ("", []),
        ("  \n\t ", []),
        ("?!… — «»", []),
    ],
)
def test_tokenize_keeps_letters_and_digits_of_every_script(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Chinese, Japanese and Thai are written without spaces: one token per character.
        ("我爱北京", ["我", "爱", "北", "京"]),
        ("東京タワーへ行く", ["東", "京", "タ", "ワ", "ー", "へ", "行", "く"]),
        ("ｶﾀｶﾅ", ["ｶ", "ﾀ", "ｶ", "ﾅ"]),  # half-width katakana (NFC keeps it)
        # Thai: a tone mark (U+0E48, U+0E49: category Mn) stays with its letter; the vowel
        # sara am (U+0E33) is a letter (Lo) of its own.
        ("แม่น้ำ", ["แ", "ม่", "น้", "ำ"]),
        # Digits and Latin runs around them stay words; Korean is written with spaces.
        ("2024年GPT模型", ["2024", "年", "gpt", "模", "型"]),
        ("한국어 문장", ["한국어", "문장"]),
    ],
)
def test_tokenize_splits_scripts_written_without_spaces_per_character(
    text: str, expected: list[str]
) -> None:
    assert tokenize(text) == expected


def test_rouge_hand_computed_chinese() -> None:
    # reference 我爱北京 (4 characters), prediction 我爱上海 (4): 2 unigrams shared,
    # rouge1 P = R = 2/4; bigrams 我爱 shared of 3 each -> 1/3; LCS 我爱 = 2 -> 2/4.
    scores = rouge("我爱上海", ["我爱北京"])
    assert scores.rouge1 == pytest.approx(0.5)
    assert scores.rouge2 == pytest.approx(1 / 3)
    assert scores.rougeL == pytest.approx(0.5)


def test_rouge_score_default_tokenizer_drops_non_ascii_letters() -> None:
    # Why this module exists: "Кошка" has no [a-z0-9] character, "Café" loses its "é".
    assert tokenizers.DefaultTokenizer().tokenize("Кошка Café") == ["caf"]
    assert tokenize("Кошка Café") == ["кошка", "café"]


def test_decomposed_accent_is_one_letter_after_nfc() -> None:
    decomposed = "Cafe\u0301"  # "e" + COMBINING ACUTE ACCENT
    assert tokenize(decomposed) == ["caf\u00e9"]  # precomposed "é"
    assert tokenize(decomposed) == tokenize("Caf\u00e9")


def test_stemmer_applies_to_ascii_tokens_only() -> None:
    reference = tokenizers.DefaultTokenizer(use_stemmer=True)
    # ASCII tokens are stemmed exactly as rouge-score does; Cyrillic and accented ones are not.
    assert tokenize("Running reflexions", use_stemmer=True) == reference.tokenize(
        "Running reflexions"
    )
    assert tokenize("бегущие réflexions", use_stemmer=True) == ["бегущие", "réflexions"]
    assert tokenize("Running бегущие", use_stemmer=True) == [
        *reference.tokenize("Running"),
        "бегущие",
    ]


# ----------------------------------------------------------------------------- ROUGE


def _reference_rouge(prediction: str, references: Sequence[str], use_stemmer: bool) -> RougeScores:
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=use_stemmer)
    best = scorer.score_multi(list(references), prediction)
    return RougeScores(
        rouge1=float(best["rouge1"].fmeasure),
        rouge2=float(best["rouge2"].fmeasure),
        rougeL=float(best["rougeL"].fmeasure),
    )


@FAST
@given(
    prediction=ascii_text,
    references=st.lists(ascii_text, min_size=1, max_size=3),
    use_stemmer=st.booleans(),
)
def test_rouge_matches_rouge_score_on_ascii(
    prediction: str, references: list[str], use_stemmer: bool
) -> None:
    assert rouge(prediction, references, use_stemmer) == _reference_rouge(
        prediction, references, use_stemmer
    )


def test_rouge_hand_computed_russian_reordering() -> None:
    # reference  кошка сидит на ковре   prediction  на ковре сидит кошка   (4 tokens each)
    # rouge1: all 4 unigrams match -> P = R = 4/4 -> F = 1
    # rouge2: ref {кошка сидит, сидит на, на ковре}, pred {на ковре, ковре сидит, сидит кошка}
    #         1 common (на ковре) -> P = R = 1/3 -> F = 1/3
    # rougeL: pred in reference positions = [2, 3, 1, 0]; longest increasing run (2, 3) -> LCS 2
    #         P = R = 2/4 -> F = 1/2
    scores = rouge("На ковре сидит кошка!", ["Кошка сидит на ковре."])
    assert scores.rouge1 == pytest.approx(1.0)
    assert scores.rouge2 == pytest.approx(1 / 3)
    assert scores.rougeL == pytest.approx(1 / 2)
    # rouge-score's own tokenizer sees no token at all here.
    assert _reference_rouge("На ковре сидит кошка!", ["Кошка сидит на ковре."], False) == (
        RougeScores(0.0, 0.0, 0.0)
    )


def test_rouge_hand_computed_accented_latin() -> None:
    # reference  café crème brûlée   prediction  café creme brûlée   ("creme" != "crème")
    # rouge1: 2 of 3 match -> F = 2/3; rouge2: bigrams all contain crème/creme -> F = 0
    # rougeL: LCS (café, brûlée) = 2 -> P = R = 2/3 -> F = 2/3
    scores = rouge("café creme brûlée", ["Café crème brûlée"])
    assert scores.rouge1 == pytest.approx(2 / 3)
    assert scores.rouge2 == 0.0
    assert scores.rougeL == pytest.approx(2 / 3)


def test_rouge_decomposed_equals_composed() -> None:
    scores = rouge("Cafe\u0301 cre\u0300me", ["Caf\u00e9 cr\u00e8me"])
    assert scores == RougeScores(1.0, 1.0, 1.0)


def test_rouge_stemmer_leaves_cyrillic_alone() -> None:
    # "бегущие" vs "бегущий" differ in the ending; no stemming -> only "кот" matches
    # rouge1: P = R = 1/2 -> F = 1/2 with and without the stemmer.
    for use_stemmer in (False, True):
        assert rouge("кот бегущие", ["кот бегущий"], use_stemmer).rouge1 == pytest.approx(0.5)


def test_rouge_multi_reference_takes_best_per_type() -> None:
    prediction = "red green blue black"
    # vs "black blue green red": rouge1 4/4 -> F 1; rouge2 no common bigram -> 0;
    #    rougeL LCS 1 -> P = R = 1/4 -> F 1/4
    # vs "red green": rouge1 P = 2/4, R = 2/2 -> F = 2/3; rouge2 "red green" P = 1/3, R = 1/1
    #    -> F = 1/2; rougeL LCS 2 -> P = 1/2, R = 1 -> F = 2/3
    # best per type: rouge1 1 (first), rouge2 1/2 (second), rougeL 2/3 (second)
    scores = rouge(prediction, ["black blue green red", "red green"])
    assert scores.rouge1 == pytest.approx(1.0)
    assert scores.rouge2 == pytest.approx(1 / 2)
    assert scores.rougeL == pytest.approx(2 / 3)


@FAST
@given(prediction=bleu_text, references=bleu_references)
def test_rouge_multi_reference_is_max_of_single_references(
    prediction: str, references: list[str]
) -> None:
    singles = [rouge(prediction, [reference]) for reference in references]
    scores = rouge(prediction, references)
    assert scores.rouge1 == max(s.rouge1 for s in singles)
    assert scores.rouge2 == max(s.rouge2 for s in singles)
    assert scores.rougeL == max(s.rougeL for s in singles)


@FAST
@given(prediction=st.text(max_size=40), references=st.lists(st.text(max_size=40), min_size=1))
def test_rouge_is_bounded(prediction: str, references: list[str]) -> None:
    scores = rouge(prediction, references)
    for value in (scores.rouge1, scores.rouge2, scores.rougeL):
        assert 0.0 <= value <= 1.0


@FAST
@given(text=st.text(max_size=40), use_stemmer=st.booleans())
def test_rouge_of_identical_texts(text: str, use_stemmer: bool) -> None:
    n_tokens = len(tokenize(text, use_stemmer))
    scores = rouge(text, [text], use_stemmer)
    # Any token -> unigram and LCS match fully; bigrams need two tokens; no token -> 0.
    assert scores.rouge1 == scores.rougeL == (1.0 if n_tokens >= 1 else 0.0)
    assert scores.rouge2 == (1.0 if n_tokens >= 2 else 0.0)


@pytest.mark.parametrize(("prediction", "reference"), [("", ""), ("   ", "a b"), ("a b", " \n")])
def test_rouge_empty_or_whitespace_is_zero(prediction: str, reference: str) -> None:
    assert rouge(prediction, [reference]) == RougeScores(0.0, 0.0, 0.0)


# ----------------------------------------------------------------------------- ROUGE P/R/F, Lsum

_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
_DETAIL_TYPES = (*_ROUGE_TYPES, "rougeLsum")
# Summaries of several lines (rougeLsum splits on "\n" only), some lines empty or blank.
multiline_text = st.lists(st.one_of(ascii_text, st.just(""), st.just(" ")), max_size=4).map(
    "\n".join
)
any_summary = st.one_of(ascii_text, multiline_text)


def _prf(score: RougeScore) -> tuple[float, float, float]:
    return (score.precision, score.recall, score.fmeasure)


def _assert_matches_rouge_score(prediction: str, references: list[str], use_stemmer: bool) -> None:
    scorer = rouge_scorer.RougeScorer(list(_DETAIL_TYPES), use_stemmer=use_stemmer)
    expected = scorer.score_multi(references, prediction)
    detail = rouge_detail(prediction, references, use_stemmer=use_stemmer)
    for rouge_type in _DETAIL_TYPES:
        got: RougeScore = getattr(detail, rouge_type)
        want = expected[rouge_type]
        assert _prf(got) == (want.precision, want.recall, want.fmeasure), rouge_type


@FAST
@given(
    prediction=any_summary,
    references=st.lists(any_summary, min_size=1, max_size=3),
    use_stemmer=st.booleans(),
)
def test_rouge_detail_matches_rouge_score_on_ascii(
    prediction: str, references: list[str], use_stemmer: bool
) -> None:
    _assert_matches_rouge_score(prediction, references, use_stemmer)


@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize(
    ("prediction", "references"),
    [
        ("", [""]),
        ("", ["a b"]),
        ("a b", [""]),
        ("\n\n", ["a\n\nb"]),
        ("Running 42 dogs!\nThe dogs ran.", ["the DOGS were running\n42, 42, 42", "dogs"]),
        ("U.S.A. e-mail\r\nsnake_case", ["usa email\nsnake case"]),
    ],
)
def test_rouge_detail_matches_rouge_score_on_edge_cases(
    prediction: str, references: list[str], use_stemmer: bool
) -> None:
    _assert_matches_rouge_score(prediction, references, use_stemmer)


@FAST
@given(prediction=any_summary, references=st.lists(any_summary, min_size=1, max_size=3))
def test_rouge_detail_fmeasures_equal_rouge(prediction: str, references: list[str]) -> None:
    detail = rouge_detail(prediction, references)
    scores = rouge(prediction, references)
    assert (detail.rouge1.fmeasure, detail.rouge2.fmeasure, detail.rougeL.fmeasure) == (
        scores.rouge1,
        scores.rouge2,
        scores.rougeL,
    )


def test_rouge_detail_hand_computed_precision_recall() -> None:
    # prediction  the cat sat (3 tokens)   reference  the cat sat on the mat (6 tokens)
    # rouge1: 3 matched -> P = 3/3, R = 3/6, F = 2 * 1 * 1/2 / (3/2) = 2/3
    # rouge2: pred bigrams (the cat, cat sat) both in ref; ref has 5 bigrams
    #         -> P = 2/2, R = 2/5, F = 2 * 2/5 / (7/5) = 4/7
    # rougeL: LCS 3 -> as rouge1; rougeLsum: one line each -> as rougeL
    detail = rouge_detail("The cat sat.", ["the cat sat on the mat"])
    half = pytest.approx((1.0, 1 / 2, 2 / 3))
    assert _prf(detail.rouge1) == half
    assert _prf(detail.rouge2) == pytest.approx((1.0, 2 / 5, 4 / 7))
    assert _prf(detail.rougeL) == half
    assert _prf(detail.rougeLsum) == half


def test_rouge_lsum_hand_computed_union_of_lcs() -> None:
    # reference lines r1 = a b c, r2 = d e; prediction lines c1 = a c e, c2 = d b (5 tokens each)
    # r1: LCS(r1, c1) = a c, LCS(r1, c2) = b -> union a b c -> 3 hits
    # r2: LCS(r2, c1) = e,   LCS(r2, c2) = d -> union d e   -> 2 hits
    # rougeLsum: P = 5/5, R = 5/5, F = 1
    # rougeL over the whole texts a b c d e / a c e d b: LCS 3 (a c e) -> P = R = F = 3/5
    detail = rouge_detail("a c e\nd b", ["a b c\nd e"])
    assert detail.rougeLsum == RougeScore(1.0, 1.0, 1.0)
    assert _prf(detail.rougeL) == pytest.approx((3 / 5, 3 / 5, 3 / 5))


def test_rouge_lsum_hand_computed_token_counted_once() -> None:
    # reference lines "the cat", "the dog" (4 tokens); prediction one line of 5 tokens
    # r1: LCS = the cat -> 2 hits (prediction counts: the 2 -> 1, cat 1 -> 0)
    # r2: LCS = the dog -> 2 hits (the 1 -> 0, dog 1 -> 0)
    # P = 4/5, R = 4/4, F = 2 * 4/5 / (9/5) = 8/9
    detail = rouge_detail("the cat the dog sat", ["the cat\nthe dog"])
    assert _prf(detail.rougeLsum) == pytest.approx((4 / 5, 1.0, 8 / 9))
    # reference lines "a", "a"; prediction "a": the prediction's one "a" is matched once
    # P = 1/1, R = 1/2, F = 2/3
    assert _prf(rouge_detail("a", ["a\na"]).rougeLsum) == pytest.approx((1.0, 1 / 2, 2 / 3))


def test_rouge_detail_multi_reference_keeps_the_best_references_score() -> None:
    # prediction a b vs "a":       rouge1 P = 1/2, R = 1/1, F = 2/3
    # prediction a b vs "a b c d": rouge1 P = 2/2, R = 2/4, F = 2/3
    # F ties: the first reference's whole score is kept (not P = 1 and R = 1 from each).
    detail = rouge_detail("a b", ["a", "a b c d"])
    assert detail.rouge1 == RougeScore(1 / 2, 1.0, 2 / 3)


def test_rouge_detail_stemmer_is_explicit_and_off_by_default() -> None:
    # "running" vs "runs": different unstemmed; Porter stems both to "run".
    # off: rouge1 P = R = F = 0; on: P = R = F = 1
    assert rouge_detail("running", ["runs"]).rouge1 == RougeScore(0.0, 0.0, 0.0)
    assert rouge_detail("running", ["runs"], use_stemmer=True).rouge1 == RougeScore(1.0, 1.0, 1.0)


def test_rouge_detail_is_a_frozen_record() -> None:
    detail = rouge_detail("a", ["a"])
    assert isinstance(detail, RougeDetail)
    assert detail.rougeLsum == RougeScore(1.0, 1.0, 1.0)


def test_rouge_detail_rejects_missing_or_bare_references() -> None:
    with pytest.raises(ValueError, match="reference"):
        rouge_detail("a", [])
    with pytest.raises(TypeError, match="single string"):
        rouge_detail("a", "a")


# ----------------------------------------------------------------------------- parity, any text


# The scripts written without spaces, by the names Unicode gives their letters.
_UNSPACED_NAMES = (
    "CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA",
    "HALFWIDTH KATAKANA", "THAI", "LAO", "MYANMAR", "KHMER",
)  # fmt: skip


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(_UNSPACED_NAMES)


class _ReferenceTokenizer:
    """The tokenizer's rules (module docstring of ``metrics.text``) spelled out one
    character at a time, with NLTK's Porter stemmer called on every token: the reference
    for texts outside ASCII, where rouge-score's own tokenizer drops letters."""

    def __init__(self, use_stemmer: bool) -> None:
        self._stemmer = PorterStemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        words: list[str] = []
        current = ""
        for char in unicodedata.normalize("NFC", text).lower():
            if current and unicodedata.category(char).startswith("M"):
                current += char
            elif char.isalnum():
                if current and (_unspaced(char) or _unspaced(current[0])):
                    words.append(current)  # a letter of an unspaced script is a token
                    current = ""
                current += char
            elif current:
                words.append(current)
                current = ""
        words += [current] if current else []
        if self._stemmer is not None:
            words = [
                self._stemmer.stem(word) if word.isascii() and len(word) > 3 else word
                for word in words
            ]
        return [word for word in words if word]


# Few words, so tokens repeat; ASCII words the stemmer changes, Cyrillic, Greek, accented
# and decomposed Latin, Devanagari with its marks; separators of every kind, lines included.
_ANY_WORDS = [
    *_ASCII_WORDS, "кошка", "Кошки", "сидит", "αθήνα", "Café", "cafe\u0301", "crème",
    "हिन्दी", "٣", "İstanbul", "STRASSE", "straße", "x", "北京", "東京タワー", "ｶﾀｶﾅ",
    "แม่น้ำ", "2024年", "한국어", "ສະບາຍດີ", "မြန်မာ", "ខ្មែរ",
]  # fmt: skip
_ANY_SEPARATORS = [*_ASCII_SEPARATORS, "—", "«", "»", "…", "\u00a0", "\u3000", "。", "\r\n"]
_any_word_text = st.lists(
    st.tuples(st.sampled_from(_ANY_WORDS), st.sampled_from(_ANY_SEPARATORS)), max_size=16
).map(lambda pairs: "".join(word + sep for word, sep in pairs))
any_text = st.one_of(st.just(""), st.text(max_size=40), _any_word_text)
# Several lines (rougeLsum's sentences), some empty or blank.
any_summary_text = st.one_of(
    any_text, st.lists(st.one_of(any_text, st.just(" ")), max_size=4).map("\n".join)
)


@settings(max_examples=300, deadline=None)
@given(text=any_text, use_stemmer=st.booleans())
def test_tokenize_follows_its_rules_on_any_text(text: str, use_stemmer: bool) -> None:
    assert tokenize(text, use_stemmer) == _ReferenceTokenizer(use_stemmer).tokenize(text)


@settings(max_examples=300, deadline=None)
@given(
    prediction=any_summary_text,
    references=st.lists(any_summary_text, min_size=1, max_size=3),
    use_stemmer=st.booleans(),
)
def test_rouge_is_rouge_scores_on_any_text(
    prediction: str, references: list[str], use_stemmer: bool
) -> None:
    # rouge-score itself, given the reference tokenizer: every value equal, not just close.
    tokenizer = _ReferenceTokenizer(use_stemmer)
    scorer = rouge_scorer.RougeScorer(list(_DETAIL_TYPES), tokenizer=tokenizer)
    expected = scorer.score_multi(references, prediction)
    detail = rouge_detail(prediction, references, use_stemmer=use_stemmer)
    for rouge_type in _DETAIL_TYPES:
        want = expected[rouge_type]
        assert _prf(getattr(detail, rouge_type)) == (want.precision, want.recall, want.fmeasure)
    scores = rouge(prediction, references, use_stemmer)
    assert (scores.rouge1, scores.rouge2, scores.rougeL) == tuple(
        expected[rouge_type].fmeasure for rouge_type in _ROUGE_TYPES
    )


@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize(
    ("length", "vocabulary"), [(63, 5), (64, 40), (65, 3), (300, 50), (1000, 8)]
)
def test_rouge_is_rouge_scores_on_long_texts(
    length: int, vocabulary: int, use_stemmer: bool
) -> None:
    # Past 64 tokens rapidfuzz's LCS works on several machine words: compare it there too,
    # and rougeLsum on long lines (a line break after 1 word in 60, on average).
    rng = random.Random(length * vocabulary)
    words = [*_ASCII_WORDS[:vocabulary], *(f"w{i}" for i in range(vocabulary - len(_ASCII_WORDS)))]

    def text(tokens: int) -> str:
        return "".join(rng.choice(words) + rng.choice(" " * 59 + "\n") for _ in range(tokens))

    prediction = text(length)
    references = [text(rng.randint(length // 2, 2 * length)) for _ in range(2)]
    scorer = rouge_scorer.RougeScorer(list(_DETAIL_TYPES), use_stemmer=use_stemmer)
    expected = scorer.score_multi(references, prediction)
    detail = rouge_detail(prediction, references, use_stemmer=use_stemmer)
    for rouge_type in _DETAIL_TYPES:
        want = expected[rouge_type]
        assert _prf(getattr(detail, rouge_type)) == (want.precision, want.recall, want.fmeasure)


def _no_embed(texts: object) -> object:
    raise AssertionError("ROUGE embeds nothing")


def _measure_row(answer: str, gold: object, use_stemmer: bool = False) -> tuple[float, float]:
    """(rougeL, rougeLsum) as the fixtures record them for one row."""
    row = Row("r1", "rows.jsonl", 1, 0, {"answer": answer, "gold": gold})
    ctx = MetricContext(Settings(rouge_use_stemmer=use_stemmer), _no_embed)
    rouge_l = measure_rouge("rougeL")(row, ctx).values["rougeL"]
    return rouge_l, measure_rouge("rougeLsum")(row, ctx).values["rougeLsum"]


def test_recorded_rouge_lsum_keeps_the_answers_lines() -> None:
    # answer "b a [1].\nc d" -> markers stripped, line break kept: lines (b a), (c d)
    # gold lines (c d), (b a): each gold line is the LCS of one answer line
    # rougeLsum: 4 hits of 4 -> P = R = F = 1
    # rougeL over b a c d / c d b a: LCS 2 -> P = R = F = 1/2
    rouge_l, rouge_lsum = _measure_row("b a [1].\nc d", "c d\nb a")
    assert rouge_lsum == 1.0
    assert rouge_l == pytest.approx(1 / 2)


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_recorded_rouge_lsum_matches_rouge_score(use_stemmer: bool) -> None:
    answer = "The dogs were running [1].\nCats sat [2]."
    golds = ["cats sat\nthe dog is running", "a dog ran"]
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=use_stemmer)
    stripped = "The dogs were running.\nCats sat."
    expected = scorer.score_multi(golds, stripped)["rougeLsum"].fmeasure
    assert _measure_row(answer, golds, use_stemmer)[1] == pytest.approx(expected, rel=0, abs=1e-12)


def test_rouge_rejects_missing_references() -> None:
    with pytest.raises(ValueError, match="reference"):
        rouge("a", [])
    with pytest.raises(TypeError):
        rouge("a", "a")


# ----------------------------------------------------------------------------- sentence BLEU


def test_sentence_bleu_hand_computed() -> None:
    # hyp: the cat sat on the mat   ref: the cat is on the mat   (6 tokens each, BP = 1)
    # 1-grams: the x2, cat, on, mat match, sat not -> 5/6
    # 2-grams: the cat, on the, the mat of 5 -> 3/5; 3-grams: on the mat of 4 -> 1/4
    # 4-grams: 0 of 3 -> exp smoothing 1 / (2 * 3) = 1/6
    # BLEU = 100 * (5/6 * 3/5 * 1/4 * 1/6) ** (1/4) = 100 * 48 ** (-1/4)
    result = sentence_bleu("the cat sat on the mat", ["the cat is on the mat"])
    assert result.stats == BleuStats(6, 6, (5, 3, 1, 0), (6, 5, 4, 3))
    assert result.score == pytest.approx(100 * 48 ** (-1 / 4))


SENTENCE_CASES = [
    ("the cat sat on the mat", ["the cat is on the mat"]),
    ("the cat sat on the mat", ["the cat is on the mat", "a cat sat on a mat"]),
    ("Кошка сидит на ковре.", ["На ковре сидит кошка!"]),
    ("Кот сидит на ковре, а пёс — нет.", ["Кот сидит на ковре.", "Пёс не сидит на ковре."]),
    ("Le café est très chaud.", ["Le café est chaud.", "Ce café est très chaud !"]),
    ("short", ["a much longer reference sentence here"]),
    ("", ["a reference"]),
    ("a hypothesis", [""]),
]


@pytest.mark.parametrize(("hypothesis", "references"), SENTENCE_CASES)
def test_sentence_bleu_matches_sacrebleu(hypothesis: str, references: list[str]) -> None:
    expected = sacrebleu.sentence_bleu(hypothesis, references)
    result = sentence_bleu(hypothesis, references)
    # The only deviation: sacrebleu's exp(mean(log p)) can overshoot 100 by rounding.
    assert result.score == min(expected.score, 100.0)
    assert (result.stats.sys_len, result.stats.ref_len) == (expected.sys_len, expected.ref_len)
    assert list(result.stats.correct) == expected.counts
    assert list(result.stats.total) == expected.totals


@FAST
@given(hypothesis=bleu_text, references=bleu_references)
def test_sentence_bleu_matches_sacrebleu_property(hypothesis: str, references: list[str]) -> None:
    expected = sacrebleu.sentence_bleu(hypothesis, references).score
    assert sentence_bleu(hypothesis, references).score == min(expected, 100.0)


def test_sentence_bleu_reference_length_is_closest_then_shortest() -> None:
    # hyp has 3 tokens; refs have 5 and 1: both 2 away -> the shorter (1) is used.
    assert sentence_bleu("x y z", ["x y z w v", "x"]).stats.ref_len == 1
    # refs of 5 and 2 tokens: 2 is closer (1 away) than 5 (2 away).
    assert sentence_bleu("x y z", ["x y z w v", "x y"]).stats.ref_len == 2


@FAST
@given(words=st.lists(st.sampled_from(_BLEU_WORDS), min_size=1, max_size=10))
def test_sentence_bleu_of_identical_texts_is_100(words: list[str]) -> None:
    text = " ".join(words)
    assert sentence_bleu(text, [text]).score == 100.0


@FAST
@given(hypothesis=st.text(max_size=40), references=st.lists(st.text(max_size=40), min_size=1))
def test_sentence_bleu_is_bounded(hypothesis: str, references: list[str]) -> None:
    assert 0.0 <= sentence_bleu(hypothesis, references).score <= 100.0


@pytest.mark.parametrize(
    ("hypothesis", "reference"), [("", ""), ("   ", "the cat"), ("", "the cat"), (" \t", "\n")]
)
def test_sentence_bleu_empty_or_whitespace_is_zero(hypothesis: str, reference: str) -> None:
    result = sentence_bleu(hypothesis, [reference])
    assert result.score == 0.0
    assert result.stats.sys_len == 0
    assert result.stats.total == (0, 0, 0, 0)


def test_sentence_bleu_rejects_missing_references() -> None:
    with pytest.raises(ValueError, match="reference"):
        sentence_bleu("a", [])
    with pytest.raises(TypeError):
        sentence_bleu("a", "a")


# ----------------------------------------------------------------------------- corpus BLEU


def _streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu's reference streams, rows with fewer references padded with None."""
    width = max(len(row) for row in references)
    return [[row[k] if k < len(row) else None for row in references] for k in range(width)]


def _corpus_from_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    rows = [sentence_bleu(h, r) for h, r in zip(hypotheses, references, strict=True)]
    return corpus_bleu_from_stats(sum_stats(row.stats for row in rows))


CORPORA = [
    pytest.param(
        ["the cat sat on the mat", "hello there world", "a dog barks loudly at night"],
        [["the cat is on the mat"], ["hello world"], ["the dog barks at night"]],
        id="single-reference",
    ),
    pytest.param(
        ["the cat sat on the mat", "hello there world", "кот сидел на ковре"],
        [["the cat is on the mat", "a cat sat on a mat"], ["hello world"], ["кот сидит на ковре"]],
        id="variable-references",
    ),
    pytest.param(
        ["Кошка сидит на ковре.", "Пёс спит у двери, а кот — нет.", "Café très chaud."],
        [
            ["На ковре сидит кошка!", "Кошка на ковре."],
            ["Пёс спит у двери.", "Кот не спит.", "У двери спит пёс, кот не спит."],
            ["Le café est très chaud."],
        ],
        id="cyrillic-and-accents",
    ),
    pytest.param(["", "   "], [["a b"], [""]], id="empty-rows"),
]


@pytest.mark.parametrize(("hypotheses", "references"), CORPORA)
def test_corpus_bleu_from_summed_stats_matches_sacrebleu(
    hypotheses: list[str], references: list[list[str]]
) -> None:
    expected = sacrebleu.corpus_bleu(hypotheses, _streams(references))  # type: ignore[arg-type]
    assert _corpus_from_stats(hypotheses, references) == min(expected.score, 100.0)


@FAST
@given(
    rows=st.lists(st.tuples(bleu_text, bleu_references), min_size=1, max_size=6),
)
def test_corpus_bleu_from_summed_stats_matches_sacrebleu_property(
    rows: list[tuple[str, list[str]]],
) -> None:
    hypotheses = [h for h, _ in rows]
    references = [r for _, r in rows]
    expected = sacrebleu.corpus_bleu(hypotheses, _streams(references))  # type: ignore[arg-type]
    result = _corpus_from_stats(hypotheses, references)
    assert result == min(expected.score, 100.0)
    assert 0.0 <= result <= 100.0


def test_corpus_bleu_uses_all_orders_unlike_sentence_bleu() -> None:
    # 2 identical tokens: no 3-/4-grams. Sentence BLEU uses the effective order (100);
    # the corpus default does not, and with no 3-gram at all it stops at total 0 -> score
    # exp((log 100 + log 100 + log 0 + log 0) / 4) = 0 (sacrebleu's log(0) is -9999999999).
    row = sentence_bleu("a b", ["a b"])
    assert row.score == 100.0
    assert corpus_bleu_from_stats(row.stats) == sacrebleu.corpus_bleu(["a b"], [["a b"]]).score
    assert corpus_bleu_from_stats(row.stats) == 0.0


def test_corpus_bleu_of_identical_long_texts_is_100() -> None:
    texts = ["the cat sat on the mat", "кот сидит на ковре", "one two three four"]
    assert _corpus_from_stats(texts, [[t] for t in texts]) == 100.0


def test_empty_string_padding_is_not_reproducible() -> None:
    # Documented limit: "" is a real reference of length 0 in sacrebleu. hyp "hello" (1 token)
    # is 1 away from "hello world" (2) and from "" (0); the tie goes to the shorter, 0.
    padded_with_empty = sacrebleu.corpus_bleu(["hello"], [["hello world"], [""]])
    padded_with_none = sacrebleu.corpus_bleu(["hello"], [["hello world"], [None]])  # type: ignore[list-item]
    assert padded_with_empty.ref_len == 0
    assert padded_with_none.ref_len == 2
    assert sentence_bleu("hello", ["hello world"]).stats.ref_len == 2


def test_corpus_bleu_of_no_rows_is_zero() -> None:
    assert corpus_bleu_from_stats(sum_stats([])) == 0.0


# ----------------------------------------------------------------------------- BleuStats


def test_bleu_stats_addition_and_sum() -> None:
    a = BleuStats(6, 6, (5, 3, 1, 0), (6, 5, 4, 3))
    b = BleuStats(2, 3, (1, 0, 0, 0), (2, 1, 0, 0))
    assert a + b == BleuStats(8, 9, (6, 3, 1, 0), (8, 6, 4, 3))
    assert sum_stats([a, b, b]) == BleuStats(10, 12, (7, 3, 1, 0), (10, 7, 4, 3))
    assert sum_stats([]) == BleuStats.zero() == BleuStats(0, 0, (0, 0, 0, 0), (0, 0, 0, 0))


def test_bleu_stats_dict_round_trip() -> None:
    stats = BleuStats(6, 7, (5, 3, 1, 0), (6, 5, 4, 3))
    flat = stats.as_dict()
    assert flat == {
        "sys_len": 6.0,
        "ref_len": 7.0,
        "correct_1": 5.0,
        "correct_2": 3.0,
        "correct_3": 1.0,
        "correct_4": 0.0,
        "total_1": 6.0,
        "total_2": 5.0,
        "total_3": 4.0,
        "total_4": 3.0,
    }
    assert BleuStats.from_dict(flat) == stats
    assert BleuStats.from_dict({**flat, "score": 37.9}) == stats  # other keys ignored


def test_bleu_stats_from_dict_rejects_bad_values() -> None:
    flat = BleuStats(6, 7, (5, 3, 1, 0), (6, 5, 4, 3)).as_dict()
    with pytest.raises(ValueError, match="whole number"):
        BleuStats.from_dict({**flat, "correct_2": 2.5})
    with pytest.raises(ValueError, match="negative"):
        BleuStats.from_dict({**flat, "sys_len": -1.0})
    with pytest.raises(KeyError):
        BleuStats.from_dict({k: v for k, v in flat.items() if k != "total_4"})


def test_bleu_stats_validation() -> None:
    with pytest.raises(ValueError, match="more matched"):
        BleuStats(1, 1, (2, 0, 0, 0), (1, 0, 0, 0))
    with pytest.raises(ValueError, match="as many matched as total"):
        BleuStats(1, 1, (1, 0, 0), (1, 0, 0, 0))  # type: ignore[arg-type]


def test_sentence_bleu_result_is_frozen() -> None:
    result = sentence_bleu("a b", ["a b"])
    assert isinstance(result, SentenceBleu)
    with pytest.raises(AttributeError):
        result.score = 0.0  # type: ignore[misc]


# ----------------------------------------------------------------------------- exact match


def test_response_exact_match_rate_hand_cases() -> None:
    # 4 repeats: " Paris\n" and "Paris" match after strip; "paris" (case) and "Paris." do not.
    assert response_exact_match_rate("Paris", [" Paris\n", "Paris", "paris", "Paris."]) == 0.5
    assert response_exact_match_rate("  Paris ", ["Paris"]) == 1.0
    assert response_exact_match_rate("Paris", ["Lyon", "Nice", "Lille"]) == 0.0
    assert response_exact_match_rate("a  b", ["a b"]) == 0.0  # inner white space counts
    assert response_exact_match_rate("", ["  ", "x"]) == 0.5


def test_response_exact_match_rate_rejects_missing_repeats() -> None:
    with pytest.raises(ValueError, match="repeat"):
        response_exact_match_rate("a", [])
    with pytest.raises(TypeError):
        response_exact_match_rate("a", "a")


@FAST
@given(answer=st.text(max_size=10), repeats=st.lists(st.text(max_size=10), min_size=1))
def test_response_exact_match_rate_is_a_share(answer: str, repeats: list[str]) -> None:
    rate = response_exact_match_rate(answer, repeats)
    assert 0.0 <= rate <= 1.0
    assert math.isclose(rate * len(repeats), round(rate * len(repeats)))
    assert response_exact_match_rate(answer, [*repeats, answer]) >= rate
