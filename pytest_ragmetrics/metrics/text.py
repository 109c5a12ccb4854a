"""ROUGE with a Unicode tokenizer (BLEU, the other surface-overlap metric, is
``metrics.bleu``; chrF is ``metrics.chrf``).

ROUGE is computed here with the exact arithmetic of ``rouge_score`` (the Google
re-implementation of ROUGE-1.5.5), and so gives the same floats, but counts faster: the
longest common subsequence and the n-gram overlaps of ROUGE-1, -2 and -L by rapidfuzz's
``LCSseq`` in C, and ROUGE-Lsum's subsequences with a bit-parallel table instead of
rouge-score's table of Python lists.

Tokenizer. rouge-score's default tokenizer lowercases, turns everything outside ``[a-z0-9]``
into a separator and so drops Cyrillic, Greek, accented Latin, etc. :func:`tokenize` (in
``metrics.rouge_tokenizer``) keeps the letters and digits of every script instead:

1. Unicode NFC normalisation (a decomposed ``"e" + U+0301`` becomes the single letter "é"),
   then ``str.lower()``;
2. a token is a maximal run of letters and digits — characters for which ``str.isalnum()`` is
   true, i.e. general categories L* and N*. Combining marks (category M) left after NFC (e.g.
   Devanagari vowel signs, or the dot of ``"İ".lower()``) stay attached to the letter or digit
   they follow, so they never split a word; a mark with nothing before it is a separator.
   Everything else — white space, punctuation, symbols, the underscore — separates tokens.
   Chinese, Japanese (kana and kanji), Thai, Lao, Khmer and Myanmar are written without
   spaces between words, so there each letter (with its combining marks) is a token of its
   own, as multilingual ROUGE implementations split them; a run of digits or Latin letters
   beside them stays one token ("2024年" is "2024", "年"). Korean, written with spaces,
   keeps its words;
3. with ``use_stemmer=True``, NLTK's Porter stemmer (the one rouge-score uses, default
   ``NLTK_EXTENSIONS`` mode) is applied to ASCII tokens longer than 3 characters, as rouge-score
   does. Tokens of other scripts (or mixing in any non-ASCII character) are never stemmed: the
   Porter algorithm is for English only.

On ASCII input the tokens are exactly those of ``rouge_score.tokenize.tokenize``, with and
without the stemmer.

"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Compute,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    claim_text,
    golds,
    reference_list,
)
from pytest_ragmetrics.metrics.setting import SettingsTable

# rapidfuzz and NLTK are imported where a score is first computed: loading the
# plugin (which reads this module's declarations) must not take their seconds of start-up.
# ROUGE imports NLTK only to stem, and rouge-score never (the tests compare with it).
_ROUGE_TYPES: Final = ("rouge1", "rouge2", "rougeL")
_ROUGE_DETAIL_TYPES: Final = (*_ROUGE_TYPES, "rougeLsum")

# --------------------------------------------------------------------------- ROUGE


@dataclass(frozen=True)
class RougeSettings:
    """How the ROUGE fixtures tokenize: ``rouge_use_stemmer`` Porter-stems ASCII tokens of
    more than 3 characters, as rouge-score's ``use_stemmer`` (off by default, as there)."""

    rouge_use_stemmer: bool = False


# The ROUGE fixtures read theirs from [settings] itself (rouge_use_stemmer = true), as they
# always did; stemming changes their values, so it enters the signature when on.
ROUGE_SETTINGS = SettingsTable("rouge", RougeSettings, flat=True)


@dataclass(frozen=True)
class RougeScores:
    """ROUGE F-measures in [0, 1], each the best over the references."""

    rouge1: float
    rouge2: float
    rougeL: float


@dataclass(frozen=True)
class RougeScore:
    """Precision, recall and F-measure of one ROUGE type, as rouge-score's ``Score``.

    ``precision`` is matches / prediction units, ``recall`` matches / reference units and
    ``fmeasure`` their harmonic mean (0 when both are 0); all in [0, 1].
    """

    precision: float
    recall: float
    fmeasure: float


@dataclass(frozen=True)
class RougeDetail:
    """Every ROUGE type with its precision, recall and F-measure, best reference by F."""

    rouge1: RougeScore
    rouge2: RougeScore
    rougeL: RougeScore
    rougeLsum: RougeScore


# Precision, recall and F-measure: tuples while the references are compared, and a
# RougeScore for the best one only.
_Scores = tuple[float, float, float]


@dataclass(frozen=True)
class _Tokens:
    """One text's tokens as small integers (equal tokens, equal integers, within one row).

    ``unigrams`` and ``bigrams`` are its n-grams, sorted; a bigram ``(a, b)`` is the integer
    ``a * vocabulary + b``. The longest common subsequence of two sorted sequences is the
    size of their multiset intersection (each value matched min(count, count) times, in
    order), so rapidfuzz's LCS gives ROUGE-n's clipped matches as well as ROUGE-L's.
    """

    ids: list[int]
    unigrams: list[int]
    bigrams: list[int]

    @classmethod
    def of(cls, ids: list[int], vocabulary: int) -> _Tokens:
        bigrams = [a * vocabulary + b for a, b in itertools.pairwise(ids)]
        return cls(ids, sorted(ids), sorted(bigrams))


def _row_tokens(texts: Sequence[str], use_stemmer: bool) -> list[_Tokens]:
    """The tokens of ``texts`` (a row's prediction and references), numbered together.

    Numbers rather than strings go to rapidfuzz: it compares list items by their ``hash``,
    and a non-negative integer below 2**61 - 1 (a bigram's too, for fewer than a billion
    distinct tokens in a row) is its own hash, so equal hashes mean equal tokens: no
    collision can change a count.
    """
    from pytest_ragmetrics.metrics.rouge_tokenizer import tokenize

    token_lists = [tokenize(text, use_stemmer) for text in texts]
    distinct = dict.fromkeys(itertools.chain.from_iterable(token_lists))
    numbers = {token: number for number, token in enumerate(distinct)}
    return [
        _Tokens.of(list(map(numbers.__getitem__, tokens)), len(numbers)) for tokens in token_lists
    ]


def _with_fmeasure(precision: float, recall: float) -> _Scores:
    """Precision, recall and their harmonic mean, 0 when both are 0 (rouge-score's
    ``scoring.fmeasure``, the same operations in the same order)."""
    if precision + recall > 0:
        return precision, recall, 2 * precision * recall / (precision + recall)
    return precision, recall, 0.0


def _overlap(matches: int, prediction_units: int, reference_units: int) -> _Scores:
    """Precision matches / prediction units and recall matches / reference units, each 0
    when there are no units, as rouge-score divides (by ``max(units, 1)``)."""
    return _with_fmeasure(matches / max(prediction_units, 1), matches / max(reference_units, 1))


def _pair_scores(prediction: _Tokens, reference: _Tokens) -> dict[str, _Scores]:
    """ROUGE-1, -2 and -L of one prediction against one reference, as rouge-score's
    ``RougeScorer.score``: ROUGE-n's matches are the n-grams in common, each counted at most
    as often as in either text (the multiset intersection), ROUGE-L's the length of the
    longest common subsequence of the tokens; both from rapidfuzz's ``LCSseq`` in C."""
    from rapidfuzz.distance import LCSseq

    length, reference_length = len(prediction.ids), len(reference.ids)
    unigrams = LCSseq.similarity(prediction.unigrams, reference.unigrams)
    bigrams = LCSseq.similarity(prediction.bigrams, reference.bigrams)
    common = LCSseq.similarity(prediction.ids, reference.ids)
    return {
        "rouge1": _overlap(unigrams, length, reference_length),
        "rouge2": _overlap(bigrams, max(length - 1, 0), max(reference_length - 1, 0)),
        "rougeL": _overlap(common, length, reference_length),
    }


def _line_tokens(text: str, use_stemmer: bool) -> list[list[str]]:
    """The tokens of each line of ``text``: rouge-score's sentences with
    ``split_summaries=False`` (split on ``"\\n"`` only; empty lines dropped, blank ones kept)."""
    from pytest_ragmetrics.metrics.rouge_tokenizer import tokenize

    return [tokenize(line, use_stemmer) for line in text.split("\n") if line]


def _lcs_positions(reference: list[str], candidate: list[str], masks: dict[str, int]) -> list[int]:
    """Positions in ``reference`` of the one longest common subsequence with ``candidate``
    that rouge-score's ``lcs_ind`` reads out of its table, found without the table.

    The table's rows come from the bit-parallel LCS of Hyyrö (2004): after ``i`` reference
    tokens, the vector ``rows[i]`` has a 0 bit for each step up of the row, so the LCS of
    ``reference[:i]`` and ``candidate[:j]`` is ``j`` minus the 1 bits among its low ``j``
    bits. ``masks[token]`` has bit ``j`` set where ``candidate[j]`` is ``token``. The walk
    back is rouge-score's ``_backtrack_norec``: diagonal on equal tokens, else left when the
    cell to the left is strictly larger than the one above, else up.
    """
    width = len(candidate)
    full = (1 << width) - 1
    vector = full
    rows = [vector]
    for token in reference:
        matched = vector & masks.get(token, 0)
        vector = ((vector + matched) | (vector - matched)) & full
        rows.append(vector)

    def table(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    positions: list[int] = []
    i, j = len(reference), width
    while i > 0 and j > 0:
        if reference[i - 1] == candidate[j - 1]:
            positions.append(i - 1)
            i, j = i - 1, j - 1
        elif table(i, j - 1) > table(i - 1, j):
            j -= 1
        else:
            i -= 1
    return positions


def _token_masks(tokens: list[str]) -> dict[str, int]:
    masks: dict[str, int] = {}
    for position, token in enumerate(tokens):
        masks[token] = masks.get(token, 0) | (1 << position)
    return masks


def _summary_lcs(reference: list[list[str]], prediction: list[list[str]]) -> _Scores:
    """ROUGE-Lsum of lines of tokens, as rouge-score's ``_summary_level_lcs``.

    For each reference line, the union of the positions of its LCS with every prediction
    line; each token there counts as a hit while both texts still have an unmatched copy
    of it. Precision = hits / prediction tokens, recall = hits / reference tokens; 0 when
    either side has no line or no token.
    """
    reference_length = sum(map(len, reference))
    prediction_length = sum(map(len, prediction))
    if not reference_length or not prediction_length:
        return 0.0, 0.0, 0.0
    unmatched_reference = Counter(itertools.chain.from_iterable(reference))
    unmatched_prediction = Counter(itertools.chain.from_iterable(prediction))
    candidates = [(line, _token_masks(line)) for line in prediction]
    hits = 0
    for line in reference:
        union: set[int] = set()
        for candidate, masks in candidates:
            union.update(_lcs_positions(line, candidate, masks))
        for position in sorted(union):
            token = line[position]
            if unmatched_prediction[token] > 0 and unmatched_reference[token] > 0:
                hits += 1
                unmatched_prediction[token] -= 1
                unmatched_reference[token] -= 1
    return _with_fmeasure(hits / prediction_length, hits / reference_length)


def rouge(prediction: str, references: Sequence[str], use_stemmer: bool = False) -> RougeScores:
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures of ``prediction`` against ``references``.

    Definition (rouge-score): ROUGE-n F is the harmonic mean of n-gram precision (clipped
    matches / prediction n-grams) and recall (clipped matches / reference n-grams); ROUGE-L F
    uses the longest common subsequence of tokens instead of n-gram matches. Tokens come from
    ``rouge_tokenizer.tokenize`` (NFC, lowercase, letters/digits of every script, Porter
    stemming of ASCII tokens if ``use_stemmer``; off by default, as in rouge-score). With
    several references each ROUGE type takes its best F over the references independently
    (rouge-score's ``score_multi``). A prediction or reference without tokens (empty, white
    space, punctuation only) scores 0 against it, even when both are empty. An empty
    ``references`` raises ``ValueError``; a bare string, ``TypeError``. :func:`rouge_detail`
    gives precision and recall too, and ``rougeLsum``.
    """
    best = _best_rouge(prediction, references, use_stemmer, _ROUGE_TYPES)
    return RougeScores(
        rouge1=best["rouge1"].fmeasure,
        rouge2=best["rouge2"].fmeasure,
        rougeL=best["rougeL"].fmeasure,
    )


def _best_rouge(
    prediction: str, references: Sequence[str], use_stemmer: bool, types: tuple[str, ...]
) -> dict[str, RougeScore]:
    """Each of ``types`` scored against the reference with the best F-measure (the first
    on a tie): rouge-score's ``score_multi``. ROUGE-1/2/L come from :func:`_pair_scores`,
    ``rougeLsum`` from :func:`_summary_lcs`; the prediction is tokenized once for all the
    references."""
    listed = reference_list(references)
    scores: list[dict[str, _Scores]] = [{} for _ in listed]
    if any(rouge_type in _ROUGE_TYPES for rouge_type in types):
        tokens, *reference_tokens = _row_tokens([prediction, *listed], use_stemmer)
        for score, reference in zip(scores, reference_tokens, strict=True):
            score.update(_pair_scores(tokens, reference))
    if "rougeLsum" in types:
        lines = _line_tokens(prediction, use_stemmer)
        for score, reference_text in zip(scores, listed, strict=True):
            score["rougeLsum"] = _summary_lcs(_line_tokens(reference_text, use_stemmer), lines)
    return {rouge_type: _first_best([s[rouge_type] for s in scores]) for rouge_type in types}


def _first_best(scores: list[_Scores]) -> RougeScore:
    """The scores with the highest F-measure, the first of equal ones (``numpy.argmax``)."""
    best = scores[0]
    for score in scores[1:]:
        if score[2] > best[2]:
            best = score
    return RougeScore(*best)


def rouge_detail(
    prediction: str, references: Sequence[str], *, use_stemmer: bool = False
) -> RougeDetail:
    """Precision, recall and F-measure of ROUGE-1, -2, -L and -Lsum, as rouge-score's.

    ``rouge1``, ``rouge2`` and ``rougeL`` are defined as in :func:`rouge` (whose F-measures
    equal these). ``rougeLsum`` is rouge-score's summary-level LCS with
    ``split_summaries=False``: both texts are split into sentences on ``"\\n"`` (empty lines
    dropped; nothing else, not even ``"\\r"``, splits), and for each reference sentence the
    union of its LCS with every prediction sentence counts as matched, each token counted at
    most as often as it occurs in both texts; precision = matched / prediction tokens, recall
    = matched / reference tokens. On a single line it equals ``rougeL``.

    With several references, each type keeps the whole ``RougeScore`` of the reference with
    the best F-measure (the first on a tie), exactly as rouge-score's ``score_multi``: the
    precision and recall are that reference's, not separate maxima. ``use_stemmer`` (off by
    default, as in rouge-score) Porter-stems ASCII tokens of more than 3 characters. Errors as
    :func:`rouge`.
    """
    return RougeDetail(**_best_rouge(prediction, references, use_stemmer, _ROUGE_DETAIL_TYPES))


# --------------------------------------------------------------------------- the metric fixtures

# The fixtures' ``measure=`` option: which field of the best gold's score is recorded, and the
# suffix of the name it is recorded under (rouge1, rouge1_precision, rouge1_recall).
ROUGE_MEASURES: Final = {"fmeasure": "", "precision": "_precision", "recall": "_recall"}


def _rouge_types_of(metric: str) -> tuple[str, ...]:
    """The ROUGE types scored together for ``metric``: rouge1/2/L share one scoring per row;
    ``rougeLsum`` is scored apart, so rouge1/2/L alone never pay for its sentence split."""
    return ("rougeLsum",) if metric == "rougeLsum" else _ROUGE_TYPES


def _best_scores(row: Row, ctx: MetricContext, metric: str) -> dict[str, RougeScore]:
    """The row's ROUGE scores (best gold by F-measure, as ``score_multi``), computed once per
    test for every fixture and ``measure`` that needs them."""
    types = _rouge_types_of(metric)
    key = f"rouge:{'/'.join(types)}"
    if key not in ctx.memo:
        answer = claim_text(row, metric, ctx.settings)
        stemmer = ctx.settings.rouge_use_stemmer
        ctx.memo[key] = _best_rouge(answer, golds(row, metric), stemmer, types)
    scores: dict[str, RougeScore] = ctx.memo[key]
    return scores


def _rouge_evidence(metric: str, measure: str, best: RougeScore) -> str:
    """A ROUGE fixture's evidence: the best gold's precision, recall and F-measure."""
    lines = " (sentences are the lines)" if metric == "rougeLsum" else ""
    return (
        f"{metric} {measure}, best of the gold(s) by F-measure: precision "
        f"{best.precision:.4f}, recall {best.recall:.4f}, F {best.fmeasure:.4f}{lines}"
    )


def measure_rouge(metric: str) -> Compute:
    """The computation of a ROUGE fixture: ``measure`` = ``"fmeasure"`` (the default)
    records ``metric``, ``"precision"`` and ``"recall"`` record ``<metric>_precision`` and
    ``<metric>_recall``; all are fields of the same best gold's score."""

    def measure(row: Row, ctx: MetricContext, measure: str = "fmeasure") -> Measured:
        if measure not in ROUGE_MEASURES:
            raise ValueError(
                f"{metric}(row, measure={measure!r}): unknown measure; use one of "
                f"{', '.join(map(repr, ROUGE_MEASURES))} (records {metric}, "
                f"{metric}_precision, {metric}_recall)"
            )
        best = _best_scores(row, ctx, metric)[metric]
        name = metric + ROUGE_MEASURES[measure]
        evidence = Evidence(_rouge_evidence, metric, measure, best)
        return Measured({name: float(getattr(best, measure))}, evidence, primary=name)

    return measure


def _rouge(name: str, doc: str) -> MetricSpec:
    label = f"{name[:5].upper()}-{name[5:]}"
    return MetricSpec(
        name,
        doc + " measure='precision' or 'recall' records and returns "
        f"{name}_precision or {name}_recall instead (the same gold's). Tokens: NFC, "
        "lowercase, letters and digits of every script (Porter stemming of ASCII tokens "
        "with rouge_use_stemmer).",
        (
            MetricInfo(name, f"{label} F-measure, best gold", range=UNIT),
            MetricInfo(
                f"{name}_precision", f"{label} precision, of the best gold by F", range=UNIT
            ),
            MetricInfo(f"{name}_recall", f"{label} recall, of the best gold by F", range=UNIT),
        ),
        ("answer", "gold"),
        measure_rouge(name),
        options=("measure",),
        # 2: scripts written without spaces (Han, kana, Thai, ...) count per character
        version=2,
        settings=ROUGE_SETTINGS,
    )


SPECS = (
    _rouge("rouge1", "ROUGE-1 F-measure of the answer (markers stripped), best gold, 0-1."),
    _rouge("rouge2", "ROUGE-2 F-measure of the answer (markers stripped), best gold, 0-1."),
    _rouge(
        "rougeL",
        "ROUGE-L (longest common subsequence) F-measure of the answer (markers stripped), "
        "best gold, 0-1.",
    ),
    _rouge(
        "rougeLsum",
        "ROUGE-Lsum (summary-level LCS, sentences are the lines) F-measure of the answer "
        "(markers stripped), best gold, 0-1.",
    ),
)
