"""Benchmark of the text-overlap metrics of pytest-ragmetrics against rouge-score and
sacrebleu.

Run it from the repository root with the project's virtualenv::

    .venv/bin/pytest benchmarks/bench_text.py --benchmark-only [--bench-size large]

What is measured
----------------
A deterministic synthetic corpus (``random.Random(0)``): 500 rows (5,000 with
``--bench-size large``) of a 12-to-30-word prediction and two references, each a noisy
copy of the prediction (words dropped, replaced or swapped) over a 400-word ASCII
vocabulary, so ROUGE and BLEU take every kind of value and rouge-score's tokenizer and ours
give the same tokens (they differ only outside ASCII).

Eight cases, each from Python strings to the scores of every row:

``rouge``
    ours: ``pytest_ragmetrics.metrics.text.rouge(prediction, references)`` per row;
    reference: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])``
    built once, ``score_multi(references, prediction)`` per row.
``rouge stemmed``
    as ``rouge``, with the Porter stemmer on both sides (``use_stemmer=True``). Stems are
    memoised per token, and the corpus has 400 distinct words, so after the first round
    every stem is remembered (docs/performance.md gives the profile and the time with the
    memo emptied before each run).
``rouge detail``
    ours: ``rouge_detail(prediction, references)`` per row (precision, recall and F of
    rouge1, rouge2, rougeL and rougeLsum); reference: ``RougeScorer`` with the four types,
    ``score_multi`` per row. Each row's prediction is three lines, for rougeLsum.
``normalize answer``
    ours: ``pytest_ragmetrics.metrics.answer.normalize_answer`` (EM and F1's SQuAD
    normaliser) of every prediction and reference; reference: the SQuAD v1.1 evaluation
    script's ``normalize_answer``, written out below (equal on ASCII text).
``chrf``, ``chrf++``
    ours: ``pytest_ragmetrics.metrics.chrf.sentence_chrf(hypothesis, references,
    word_order=0 | 2)`` per row (the score and its statistics); reference:
    ``sacrebleu.metrics.chrf.CHRF(word_order=...)`` built once, ``sentence_score`` per row.
``sentence bleu``
    ours: ``sentence_bleu(hypothesis, references)`` per row (the score and its
    statistics); reference: ``sacrebleu.sentence_bleu`` per row.
``corpus bleu``
    ours: the per-row statistics summed and scored (``corpus_bleu_from_stats``), what the
    plugin does at the end of a run; reference: ``sacrebleu.corpus_bleu`` on the whole
    corpus at once.

Before any timing, ours must equal the reference on every row, or the case fails without
timing anything: exactly for ROUGE and the normaliser (the same floats, the same strings),
to 1e-9 for chrF and BLEU.
"""

from __future__ import annotations

import math
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import sacrebleu
from rouge_score import rouge_scorer
from sacrebleu.metrics.chrf import CHRF

from pytest_ragmetrics.metrics.answer import normalize_answer
from pytest_ragmetrics.metrics.bleu import corpus_bleu_from_stats, sentence_bleu, sum_stats
from pytest_ragmetrics.metrics.chrf import sentence_chrf
from pytest_ragmetrics.metrics.text import rouge, rouge_detail

from conftest import SIDES, Side, Timer

ROWS = {"small": 500, "large": 5_000}
VOCABULARY = 400
TOLERANCE = 1e-9
EXACT = {"rouge", "rouge stemmed", "rouge detail", "normalize answer"}
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL"]
DETAIL_TYPES = [*ROUGE_TYPES, "rougeLsum"]


@dataclass(frozen=True)
class Corpus:
    predictions: list[str]
    references: list[list[str]]  # two per row


def _noisy_copy(words: list[str], vocabulary: list[str], rng: random.Random) -> str:
    copy: list[str] = []
    for word in words:
        roll = rng.random()
        if roll < 0.1:
            continue  # dropped
        copy.append(rng.choice(vocabulary) if roll < 0.25 else word)
    if len(copy) > 2 and rng.random() < 0.5:
        i = rng.randrange(len(copy) - 1)
        copy[i], copy[i + 1] = copy[i + 1], copy[i]
    return " ".join(copy) + "."


def make_corpus(rows: int) -> Corpus:
    rng = random.Random(0)
    vocabulary = [f"w{number}" for number in range(VOCABULARY)]
    predictions, references = [], []
    for _ in range(rows):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(12, 30))]
        predictions.append(" ".join(words) + ".")
        references.append([_noisy_copy(words, vocabulary, rng) for _ in range(2)])
    return Corpus(predictions, references)


# ---------------------------------------------------------------------------------------
# Each side of each case, from the strings to the scores
# ---------------------------------------------------------------------------------------


def ours_rouge(corpus: Corpus) -> list[tuple[float, float, float]]:
    return [
        (scores.rouge1, scores.rouge2, scores.rougeL)
        for scores in (
            rouge(prediction, refs)
            for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
        )
    ]


def reference_rouge(corpus: Corpus) -> list[tuple[float, float, float]]:
    return _reference_rouge(corpus, use_stemmer=False)


def ours_rouge_stemmed(corpus: Corpus) -> list[tuple[float, float, float]]:
    return [
        (scores.rouge1, scores.rouge2, scores.rougeL)
        for scores in (
            rouge(prediction, refs, use_stemmer=True)
            for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
        )
    ]


def reference_rouge_stemmed(corpus: Corpus) -> list[tuple[float, float, float]]:
    return _reference_rouge(corpus, use_stemmer=True)


def _reference_rouge(corpus: Corpus, use_stemmer: bool) -> list[tuple[float, float, float]]:
    scorer = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=use_stemmer)
    scores = []
    for prediction, refs in zip(corpus.predictions, corpus.references, strict=True):
        best = scorer.score_multi(refs, prediction)
        scores.append(tuple(float(best[name].fmeasure) for name in ROUGE_TYPES))
    return scores


def _all_texts(corpus: Corpus) -> list[str]:
    return [*corpus.predictions, *(text for refs in corpus.references for text in refs)]


def ours_normalize(corpus: Corpus) -> list[str]:
    return [normalize_answer(text) for text in _all_texts(corpus)]


def squad_v11_normalize_answer(s: str) -> str:
    """The SQuAD v1.1 evaluation script's ``normalize_answer``, as published."""

    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def reference_normalize(corpus: Corpus) -> list[str]:
    return [squad_v11_normalize_answer(text) for text in _all_texts(corpus)]


def ours_sentence_bleu(corpus: Corpus) -> list[float]:
    return [
        sentence_bleu(prediction, refs).score
        for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
    ]


def reference_sentence_bleu(corpus: Corpus) -> list[float]:
    return [
        min(float(sacrebleu.sentence_bleu(prediction, refs).score), 100.0)
        for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
    ]


def ours_corpus_bleu(corpus: Corpus) -> list[float]:
    stats = (
        sentence_bleu(prediction, refs).stats
        for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
    )
    return [corpus_bleu_from_stats(sum_stats(stats))]


def reference_corpus_bleu(corpus: Corpus) -> list[float]:
    streams = [list(stream) for stream in zip(*corpus.references, strict=True)]
    return [min(float(sacrebleu.corpus_bleu(corpus.predictions, streams).score), 100.0)]


def _lines(text: str) -> str:
    """The text as three lines (rougeLsum's sentences)."""
    words = text.split()
    third = max(1, len(words) // 3)
    return "\n".join(" ".join(words[i : i + third]) for i in range(0, len(words), third))


def ours_rouge_detail(corpus: Corpus) -> list[tuple[float, ...]]:
    rows = []
    for prediction, refs in zip(corpus.predictions, corpus.references, strict=True):
        detail = rouge_detail(_lines(prediction), refs)
        rows.append(
            tuple(
                value
                for name in DETAIL_TYPES
                for value in (
                    getattr(detail, name).precision,
                    getattr(detail, name).recall,
                    getattr(detail, name).fmeasure,
                )
            )
        )
    return rows


def reference_rouge_detail(corpus: Corpus) -> list[tuple[float, ...]]:
    scorer = rouge_scorer.RougeScorer(DETAIL_TYPES)
    rows = []
    for prediction, refs in zip(corpus.predictions, corpus.references, strict=True):
        best = scorer.score_multi(refs, _lines(prediction))
        rows.append(tuple(float(value) for name in DETAIL_TYPES for value in best[name]))
    return rows


def ours_chrf(word_order: int) -> Callable[[Corpus], list[float]]:
    def run(corpus: Corpus) -> list[float]:
        return [
            sentence_chrf(prediction, refs, word_order=word_order).score
            for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
        ]

    return run


def reference_chrf(word_order: int) -> Callable[[Corpus], list[float]]:
    def run(corpus: Corpus) -> list[float]:
        metric = CHRF(word_order=word_order)
        return [
            float(metric.sentence_score(prediction, refs).score)
            for prediction, refs in zip(corpus.predictions, corpus.references, strict=True)
        ]

    return run


CASES: dict[str, dict[Side, Callable[[Corpus], list[Any]]]] = {
    "rouge": {"ours": ours_rouge, "reference": reference_rouge},
    "rouge stemmed": {"ours": ours_rouge_stemmed, "reference": reference_rouge_stemmed},
    "rouge detail": {"ours": ours_rouge_detail, "reference": reference_rouge_detail},
    "normalize answer": {"ours": ours_normalize, "reference": reference_normalize},
    "chrf": {"ours": ours_chrf(0), "reference": reference_chrf(0)},
    "chrf++": {"ours": ours_chrf(2), "reference": reference_chrf(2)},
    "sentence bleu": {"ours": ours_sentence_bleu, "reference": reference_sentence_bleu},
    "corpus bleu": {"ours": ours_corpus_bleu, "reference": reference_corpus_bleu},
}


def differences(ours: list[Any], reference: list[Any], tolerance: float) -> list[str]:
    """Rows where ours and the reference differ by more than ``tolerance`` (0: unequal)."""
    if len(ours) != len(reference):
        return [f"ours scored {len(ours)} rows, the reference {len(reference)}"]
    problems = []
    for row, (mine, theirs) in enumerate(zip(ours, reference, strict=True)):
        if tolerance == 0:
            same = mine == theirs
        else:
            pairs = zip(mine, theirs, strict=True) if isinstance(mine, tuple) else [(mine, theirs)]
            same = all(math.isclose(a, b, rel_tol=0, abs_tol=tolerance) for a, b in pairs)
        if not same:
            problems.append(f"row {row}: ours {mine!r}, reference {theirs!r}")
    return problems


@pytest.fixture(scope="module")
def corpus(size: str) -> Corpus:
    return make_corpus(ROWS[size])


@pytest.fixture(scope="module")
def checked() -> set[str]:
    """The cases whose numbers were checked against the reference."""
    return set()


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("case", list(CASES))
def test_text(compare: Timer, corpus: Corpus, checked: set[str], case: str, side: Side) -> None:
    sides = CASES[case]
    if case not in checked:
        tolerance = 0.0 if case in EXACT else TOLERANCE
        problems = differences(sides["ours"](corpus), sides["reference"](corpus), tolerance)
        assert not problems, "\n".join(problems[:10])
        checked.add(case)
    scores = compare(case, side, lambda: sides[side](corpus))
    assert scores
