"""chrF and chrF++: parity with sacrebleu's CHRF, hand-computed cases, settings errors.

Expected values come from sacrebleu 2.x (``sacrebleu.metrics.chrf.CHRF``, the reference) or
from hand computation shown in the comments.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.chrf import CHRF

from pytest_ragmetrics.metrics.chrf import (
    ChrfSettings,
    ChrfStats,
    NgramCounts,
    chrf_signature,
    corpus_chrf_from_stats,
    sentence_chrf,
    sum_stats,
)

# Russian, Indonesian, Chinese and Japanese, English with case variants, punctuation glued to
# words at either end (chrF++ splits one character off), digits and lone punctuation.
_WORDS = [
    "Кот", "кот", "сидит", "на", "ковре.", "(ковре)", "Москва,", "rumah", "Rumah", "besar",
    "makan", "nasi!", "sudah", "belum?", "北京", "是", "中国的", "首都。", "東京", "です",
    "The", "the", "cat", "sat", "on", "mat.", "\"quoted\"", "it's", "e-mail", "3.14", "42",
    ",", ".", "-", "(", "Ünïcödé", "straße", "İstanbul",
]  # fmt: skip
_SEPARATORS = [" ", " ", " ", "  ", "\t", "\n"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(["", " ", "\n"])
    words = rng.choices(_WORDS, k=rng.randint(1, 9))
    return "".join(word + rng.choice(_SEPARATORS) for word in words).strip(rng.choice([" ", ""]))


def _corpus(seed: int, rows: int = 10) -> list[tuple[str, list[str]]]:
    """Rows of (hypothesis, references) with 1 to 3 references; a reference often shares
    words with the hypothesis so that the scores are not all near 0."""
    rng = random.Random(seed)
    corpus = []
    for _ in range(rows):
        hypothesis = _text(rng)
        references = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5 and hypothesis.split():
                words = hypothesis.split()
                rng.shuffle(words)
                references.append(" ".join(words[: rng.randint(1, len(words))]) + _text(rng))
            else:
                references.append(_text(rng))
        corpus.append((hypothesis, references))
    return corpus


def _streams(corpus: list[tuple[str, list[str]]]) -> list[list[str | None]]:
    """sacrebleu's reference streams, rows with fewer references padded with None."""
    width = max(len(references) for _, references in corpus)
    return [
        [references[i] if i < len(references) else None for _, references in corpus]
        for i in range(width)
    ]


GRID = list(
    itertools.product(
        (0, 2),  # word_order: chrF, chrF++
        range(1, 7),  # char_order
        (1, 2, 3),  # beta
        (False, True),  # lowercase
        (False, True),  # whitespace
        (False, True),  # eps_smoothing
    )
)


@pytest.mark.parametrize(
    ("word_order", "char_order", "beta", "lowercase", "whitespace", "eps_smoothing"), GRID
)
def test_sentence_and_corpus_scores_equal_sacrebleu(
    word_order: int,
    char_order: int,
    beta: int,
    lowercase: bool,
    whitespace: bool,
    eps_smoothing: bool,
) -> None:
    options = {
        "char_order": char_order,
        "word_order": word_order,
        "beta": beta,
        "lowercase": lowercase,
        "whitespace": whitespace,
        "eps_smoothing": eps_smoothing,
    }
    reference = CHRF(**options)  # type: ignore[arg-type]
    corpus = _corpus(seed=hash(tuple(options.values())) % 1000)
    results = [sentence_chrf(hyp, references, **options) for hyp, references in corpus]
    for (hyp, references), result in zip(corpus, results, strict=True):
        expected = reference.sentence_score(hyp, references).score
        assert result.score == pytest.approx(expected, abs=1e-9), (hyp, references)
    hypotheses = [hyp for hyp, _ in corpus]
    expected_corpus = reference.corpus_score(hypotheses, _streams(corpus)).score
    total = sum_stats(result.stats for result in results)
    reduction = {key: options[key] for key in ("char_order", "word_order", "beta", "eps_smoothing")}
    assert corpus_chrf_from_stats(total, **reduction) == pytest.approx(expected_corpus, abs=1e-9)


def test_corpus_statistics_equal_sacrebleus_per_segment_statistics() -> None:
    # sacrebleu keeps, per segment, the [hyp, ref, match] triples of the best reference;
    # ours must be the very same integers, not only give the same score.
    corpus = _corpus(seed=7, rows=30)
    reference = CHRF(word_order=2)
    segments = reference._extract_corpus_statistics(  # the reference's own per-segment lists
        [hyp for hyp, _ in corpus], _streams(corpus)
    )
    for (hyp, references), expected in zip(corpus, segments, strict=True):
        stats = sentence_chrf(hyp, references, word_order=2).stats
        ours = [value for order in stats.orders for value in (order.hyp, order.ref, order.match)]
        assert ours == expected


_hypothesis_text = st.text(st.sampled_from([*"abcАБВабв北京 .,!?()'\t\n", "ẞ", "İ"]), max_size=25)


@settings(max_examples=300, deadline=None)
@given(
    hypothesis=_hypothesis_text,
    references=st.lists(_hypothesis_text, min_size=1, max_size=3),
    word_order=st.sampled_from([0, 1, 2]),
    lowercase=st.booleans(),
    eps_smoothing=st.booleans(),
)
def test_any_text_scores_as_sacrebleu(
    hypothesis: str,
    references: list[str],
    word_order: int,
    lowercase: bool,
    eps_smoothing: bool,
) -> None:
    options = {"word_order": word_order, "lowercase": lowercase, "eps_smoothing": eps_smoothing}
    expected = CHRF(**options).sentence_score(hypothesis, references).score  # type: ignore[arg-type]
    result = sentence_chrf(hypothesis, references, **options)  # type: ignore[arg-type]
    assert result.score == pytest.approx(expected, abs=1e-9)
    assert 0.0 <= result.score <= 100.0


# ----------------------------------------------------------------------------- by hand


def test_identical_texts_score_100() -> None:
    # "ab": 2 unigrams and 1 bigram on both sides, all matched; orders 3..6 have no n-gram
    # on either side and are left out (effective order): P = R = 1.
    result = sentence_chrf("ab", ["ab"])
    assert result.score == 100.0
    assert result.stats.chars[:2] == (NgramCounts(2, 2, 2), NgramCounts(1, 1, 1))
    assert result.stats.chars[2:] == (NgramCounts(0, 0, 0),) * 4


def test_precision_and_recall_are_averaged_over_the_orders_before_the_f_score() -> None:
    # "ab" vs "ac", orders 1-2, beta 1: unigrams 1 of 2 matched (P = R = 1/2), bigrams 0 of 1
    # (P = R = 0): mean P = mean R = 1/4, F1 = 1/4 -> 25.
    assert sentence_chrf("ab", ["ac"], char_order=2, beta=1).score == pytest.approx(25.0)
    # "abc" vs "ab", orders 1-2, beta 2: unigrams P 2/3 R 1, bigrams P 1/2 R 1.
    # Effective order: P = 7/12, R = 1, F2 = 5 * 7/12 / (4 * 7/12 + 1) = 35/40 -> 87.5.
    # eps smoothing averages the per-order F2 instead: 5*(2/3) / (8/3 + 1) = 10/11 and
    # 5*(1/2) / (2 + 1) = 5/6, mean -> 87.12.
    assert sentence_chrf("abc", ["ab"], char_order=2).score == pytest.approx(87.5)
    eps = sentence_chrf("abc", ["ab"], char_order=2, eps_smoothing=True).score
    assert eps == pytest.approx(100 * (10 / 11 + 5 / 6) / 2)


def test_beta_weighs_recall() -> None:
    # "abc" vs "ab", unigrams only: P = 2/3, R = 1. F2 = 5PR / (4P + R) = 10/11;
    # F1 = 2PR / (P + R) = 4/5; F3 = 10PR / (9P + R) = 20/21.
    assert sentence_chrf("abc", ["ab"], char_order=1).score == pytest.approx(100 * 10 / 11)
    assert sentence_chrf("abc", ["ab"], char_order=1, beta=1).score == pytest.approx(80.0)
    assert sentence_chrf("abc", ["ab"], char_order=1, beta=3).score == pytest.approx(100 * 20 / 21)


def test_an_order_the_reference_lacks_counts_no_hypothesis_ngram() -> None:
    # "abc" vs "a", orders 1-2: the reference has no bigram, so the hypothesis' 2 bigrams are
    # recorded as 0 (sacrebleu), and only unigrams count: P = 1/3, R = 1, F1 = 1/2.
    result = sentence_chrf("abc", ["a"], char_order=2, beta=1)
    assert result.stats.chars == (NgramCounts(3, 1, 1), NgramCounts(0, 0, 0))
    assert result.score == pytest.approx(50.0)


def test_chrf_pp_adds_word_ngrams_with_punctuation_split_off() -> None:
    # "Hi, there." -> words Hi , there . (4); "Hi there" -> Hi there (2), both matched.
    # Characters without white space: "Hi,there." (9) vs "Hithere" (7), 7 matched.
    # beta 1, orders char 1 + word 1: P = (7/9 + 2/4) / 2 = 23/36, R = 1,
    # F1 = 2 * 23/36 / (23/36 + 1) = 46/59.
    result = sentence_chrf("Hi, there.", ["Hi there"], char_order=1, word_order=1, beta=1)
    assert result.stats == ChrfStats((NgramCounts(9, 7, 7),), (NgramCounts(4, 2, 2),))
    assert result.score == pytest.approx(100 * 46 / 59)


def test_lowercase_and_whitespace() -> None:
    # "Ab" vs "ab", unigrams: 1 of 2 matched with case, 2 of 2 without.
    assert sentence_chrf("Ab", ["ab"], char_order=1).score == pytest.approx(50.0)
    assert sentence_chrf("Ab", ["ab"], char_order=1, lowercase=True).score == 100.0
    # "a b" vs "ab", bigrams only matter: without white space both are "ab" (100); with it,
    # "a b" has bigrams "a ", " b", none in "ab": unigrams P 2/3 R 1, bigrams P 0 R 0:
    # P = 1/3, R = 1/2, F2 = 5 * 1/6 / (4/3 + 1/2) = (5/6) / (11/6) = 5/11.
    assert sentence_chrf("a b", ["ab"], char_order=2).score == 100.0
    spaced = sentence_chrf("a b", ["ab"], char_order=2, whitespace=True).score
    assert spaced == pytest.approx(100 * 5 / 11)


def test_the_best_reference_is_kept_and_the_first_wins_a_tie() -> None:
    # "ab" vs "a": P 1/2 R 1; vs "abcd": P 1 R 1/2. With beta 1 both score 2/3 exactly.
    first = sentence_chrf("ab", ["a", "abcd"], char_order=1, beta=1)
    assert first.stats.chars == (NgramCounts(2, 1, 1),)
    second = sentence_chrf("ab", ["abcd", "a"], char_order=1, beta=1)
    assert second.stats.chars == (NgramCounts(2, 4, 2),)
    assert first.score == second.score == pytest.approx(100 * 2 / 3)
    # With beta 2 recall weighs more: "abcd" (F2 = 5*1*(1/2) / (4 + 1/2) = 5/9) loses to
    # "a" (F2 = 5*(1/2)*1 / (2 + 1) = 5/6).
    assert sentence_chrf("ab", ["abcd", "a"], char_order=1).stats.chars == (NgramCounts(2, 1, 1),)


def test_empty_texts_score_0_or_the_smoothing_epsilon() -> None:
    # No n-gram anywhere: no effective order, 0. With eps smoothing every order counts the
    # epsilon 1e-16 as its F, so the score is 100 * 1e-16 = 1e-14 (sacrebleu's too).
    assert sentence_chrf("", [""]).score == 0.0
    assert sentence_chrf("abc", [" "]).score == 0.0
    assert sentence_chrf("", [""], eps_smoothing=True).score == pytest.approx(1e-14, rel=1e-6)
    assert sentence_chrf("ab", ["cd"], eps_smoothing=True).score == pytest.approx(1e-14, rel=1e-6)


def test_corpus_score_pools_counts_rather_than_averaging_sentences() -> None:
    # Unigrams, beta 1. Row 1 "a" vs "a": (1, 1, 1), score 100. Row 2 "bcd" vs "b":
    # (3, 1, 1), P 1/3 R 1, F1 1/2 -> 50. Pooled (4, 2, 2): P 1/2, R 1, F1 2/3 -> 66.67,
    # not the mean 75.
    rows = [sentence_chrf(h, [r], char_order=1, beta=1) for h, r in (("a", "a"), ("bcd", "b"))]
    total = sum_stats(row.stats for row in rows)
    assert total.chars == (NgramCounts(4, 2, 2),)
    assert corpus_chrf_from_stats(total, char_order=1, beta=1) == pytest.approx(100 * 2 / 3)


# ----------------------------------------------------------------------------- statistics


def test_statistics_round_trip_through_a_flat_mapping() -> None:
    stats = sentence_chrf("Hi, there.", ["Hi there"], char_order=2, word_order=2).stats
    flat = stats.as_dict()
    assert list(flat)[:3] == ["char_1_hyp", "char_1_ref", "char_1_match"]
    assert "word_2_match" in flat
    assert len(flat) == 3 * (2 + 2)
    assert ChrfStats.from_dict(flat) == stats


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"char_1_hyp": 1.0, "char_1_ref": 1.0}, "char_1 lacks match"),
        ({f"char_2_{p}": 1.0 for p in ("hyp", "ref", "match")}, r"char orders \[2\] are not 1..n"),
        ({"char_1_hyp": 1.5, "char_1_ref": 1.0, "char_1_match": 1.0}, "whole number"),
        ({"char_1_hyp": -1.0, "char_1_ref": 1.0, "char_1_match": 0.0}, "negative"),
        ({"bleu_len": 1.0}, "unexpected key 'bleu_len'"),
        ({}, "at least one character order"),
    ],
)
def test_malformed_statistics_are_refused(mapping: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChrfStats.from_dict(mapping)


def test_statistics_of_other_orders_are_refused_by_the_corpus_score() -> None:
    stats = sentence_chrf("ab", ["ab"], char_order=2).stats
    with pytest.raises(ValueError, match="2 character and 0 word orders, the settings 6 and 0"):
        corpus_chrf_from_stats(stats)
    with pytest.raises(ValueError, match="different orders cannot be added"):
        _ = stats + sentence_chrf("ab", ["ab"]).stats
    with pytest.raises(ValueError, match="nothing to sum"):
        sum_stats([])


# ----------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"char_order": 0}, r"char_order: expected a whole number >= 1, got 0"),
        ({"char_order": True}, r"char_order: expected a whole number >= 1, got True"),
        ({"char_order": "6"}, r"char_order: expected a whole number >= 1, got '6'"),
        ({"beta": 0}, r"beta: expected a whole number >= 1, got 0"),
        ({"beta": 1.5}, r"beta: expected a whole number >= 1, got 1.5"),
        ({"lowercase": "yes"}, r"lowercase: expected true or false, got 'yes'"),
        ({"eps_smoothing": 1}, r"eps_smoothing: expected true or false, got 1"),
        ({"word_order": -1}, r"word_order: expected a whole number >= 0, got -1; 0 is chrF"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sentence_chrf("a", ["a"], **options)  # type: ignore[arg-type]


def test_references_must_be_a_non_empty_sequence() -> None:
    with pytest.raises(ValueError, match="no reference given"):
        sentence_chrf("a", [])
    with pytest.raises(TypeError, match="not a single string"):
        sentence_chrf("a", "a")


# ----------------------------------------------------------------------------- signature


@pytest.mark.parametrize(
    ("word_order", "chrf_settings"),
    [
        (0, ChrfSettings()),
        (2, ChrfSettings()),
        (2, ChrfSettings(char_order=4, beta=3, lowercase=True, whitespace=True)),
        (0, ChrfSettings(eps_smoothing=True)),
    ],
)
def test_signature_is_what_sacrebleu_prints(word_order: int, chrf_settings: ChrfSettings) -> None:
    reference = CHRF(
        char_order=chrf_settings.char_order,
        word_order=word_order,
        beta=chrf_settings.beta,
        lowercase=chrf_settings.lowercase,
        whitespace=chrf_settings.whitespace,
        eps_smoothing=chrf_settings.eps_smoothing,
    )
    reference.corpus_score(["a b", "c"], [["a b", "c"], ["a", None]])  # 2 refs, then 1
    assert chrf_signature(chrf_settings, word_order, "var") == reference.get_signature().format()
    reference.corpus_score(["a b", "c"], [["a b", "c"]])
    assert chrf_signature(chrf_settings, word_order) == reference.get_signature().format()


def test_default_signature_reads_as_documented() -> None:
    import sacrebleu

    expected = f"nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{sacrebleu.__version__}"
    assert chrf_signature(ChrfSettings(), 2) == expected
