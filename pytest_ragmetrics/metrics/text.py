"""Surface-overlap metrics: ROUGE with a Unicode tokenizer, BLEU with summable statistics.

ROUGE is computed here with the exact arithmetic of ``rouge_score`` (the Google
re-implementation of ROUGE-1.5.5), and so gives the same floats, but counts faster: the
longest common subsequence and the n-gram overlaps of ROUGE-1, -2 and -L by rapidfuzz's
``LCSseq`` in C, and ROUGE-Lsum's subsequences with a bit-parallel table instead of
rouge-score's table of Python lists. BLEU is ``sacrebleu``'s; this module chooses its
settings and keeps its sufficient statistics so a corpus score can be rebuilt from per-row
results.

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

BLEU. Sentence BLEU is sacrebleu's ``BLEU(...).sentence_score`` and corpus BLEU its
``corpus_score``, with every option of sacrebleu's ``BLEU`` under sacrebleu's names and
defaults (:class:`BleuSettings`: ``tokenize``, ``smooth_method``, ``smooth_value``,
``lowercase``, ``max_ngram_order``, ``effective_order``; by default tokenizer 13a, ``exp``
smoothing, 4-grams, case kept, effective order on for a sentence and off for a corpus, as
``sacrebleu.sentence_bleu`` and ``sacrebleu.corpus_bleu``). sacrebleu counts the statistics;
the score, of a sentence or of summed statistics, is sacrebleu's public ``BLEU.compute_bleu``.
How sacrebleu treats several references, per segment:
reference n-gram counts are the maximum count over the references (clipping), and the reference
length is the one closest to the hypothesis length, the shorter one on a tie. These choices are
made inside each segment's statistics, so summing per-row statistics reproduces
``sacrebleu.corpus_bleu`` exactly, also with a different number of references per row —
provided the reference streams given to ``corpus_bleu`` are padded with ``None``, which sacrebleu
drops. Padding with ``""`` instead makes the empty string a real reference of length 0 that can
be chosen as the closest length, and streams of unequal length are silently truncated by
sacrebleu to the shortest one; neither can be reproduced row by row.

The one deliberate difference from sacrebleu: its score is ``exp`` of a mean of logarithms, so
identical texts score ``100.00000000000004``; scores here are clamped to at most 100.0.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    PERCENT,
    UNIT,
    Compute,
    CorpusReduction,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    claim_text,
    golds,
    nrefs,
    reference_count,
    reference_list,
)
from pytest_ragmetrics.metrics.bleu_settings import DEFAULT_BLEU, BleuSettings

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU

# rapidfuzz, NLTK and sacrebleu are imported where a score is first computed: loading the
# plugin (which reads this module's declarations) must not take their seconds of start-up.
# ROUGE imports NLTK only to stem, and rouge-score never (the tests compare with it).
_ROUGE_TYPES: Final = ("rouge1", "rouge2", "rougeL")
_ROUGE_DETAIL_TYPES: Final = (*_ROUGE_TYPES, "rougeLsum")
_MAX_BLEU: Final = 100.0

# --------------------------------------------------------------------------- ROUGE


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


# --------------------------------------------------------------------------- BLEU


def _stat_keys(order: int) -> tuple[str, ...]:
    orders = range(1, order + 1)
    return (
        "sys_len",
        "ref_len",
        *(f"correct_{n}" for n in orders),
        *(f"total_{n}" for n in orders),
    )


def _count(mapping: Mapping[str, float], key: str) -> int:
    value = float(mapping[key])
    if not value.is_integer():
        raise ValueError(f"BLEU statistic {key!r} must be a whole number, got {value}")
    return int(value)


def _recorded_order(mapping: Mapping[str, float]) -> int:
    """The n-gram order statistics were recorded with: the largest n of their
    ``correct_n``/``total_n`` keys (0 when there are none)."""
    orders = [
        int(suffix)
        for key in mapping
        for prefix in ("correct_", "total_")
        if key.startswith(prefix) and (suffix := key[len(prefix) :]).isdigit()
    ]
    return max(orders, default=0)


@dataclass(frozen=True)
class BleuStats:
    """Sufficient statistics of BLEU (sacrebleu's), summable over rows.

    ``sys_len``: hypothesis tokens; ``ref_len``: length of the reference closest to it;
    ``correct[n-1]``: n-grams of the hypothesis matched in the references, clipped by the
    maximum count in any one reference; ``total[n-1]``: n-grams of the hypothesis, for n = 1
    up to the order (``max_ngram_order``, 4 by default), which is ``len(correct)``.
    """

    sys_len: int
    ref_len: int
    correct: tuple[int, ...]
    total: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.correct or len(self.correct) != len(self.total):
            raise ValueError(
                f"BLEU needs as many matched as total n-gram counts, at least one each: {self}"
            )
        if min(self.sys_len, self.ref_len, *self.correct, *self.total) < 0:
            raise ValueError(f"BLEU statistics cannot be negative: {self}")
        if any(c > t for c, t in zip(self.correct, self.total, strict=True)):
            raise ValueError(f"more matched than hypothesis n-grams: {self}")

    @property
    def order(self) -> int:
        """The largest n-gram order counted."""
        return len(self.correct)

    @classmethod
    def zero(cls, order: int = 4) -> BleuStats:
        """Statistics of an empty corpus: every count 0 (the neutral element of ``+``)."""
        return cls(0, 0, (0,) * order, (0,) * order)

    def __add__(self, other: BleuStats) -> BleuStats:
        """Element-wise sum: the statistics of the two corpora together."""
        if other.order != self.order:
            raise ValueError(
                f"BLEU statistics of n-gram orders {self.order} and {other.order} cannot be "
                "added: compute every row with the same max_ngram_order"
            )
        return BleuStats(
            sys_len=self.sys_len + other.sys_len,
            ref_len=self.ref_len + other.ref_len,
            correct=tuple(a + b for a, b in zip(self.correct, other.correct, strict=True)),
            total=tuple(a + b for a, b in zip(self.total, other.total, strict=True)),
        )

    def as_dict(self) -> dict[str, float]:
        """Flat mapping ``sys_len, ref_len, correct_1..correct_n, total_1..total_n``."""
        values = (self.sys_len, self.ref_len, *self.correct, *self.total)
        return {key: float(v) for key, v in zip(_stat_keys(self.order), values, strict=True)}

    @classmethod
    def from_dict(cls, mapping: Mapping[str, float], order: int = 4) -> BleuStats:
        """Inverse of :meth:`as_dict` for statistics of n-gram order ``order``; keys other
        than the statistics' are ignored.

        Statistics recorded with another order raise ``ValueError`` (reducing them with this
        order would silently drop or invent n-gram counts); a missing key raises
        ``KeyError``, a non-whole or negative count ``ValueError``.
        """
        recorded = _recorded_order(mapping)
        if recorded != order:
            raise ValueError(
                f"BLEU statistics were recorded with max_ngram_order {recorded}, but are "
                f"reduced with {order}: statistics of one order cannot make a score of "
                "another; compute the rows and the corpus score with the same max_ngram_order"
            )
        counts = [_count(mapping, key) for key in _stat_keys(order)]
        return cls(counts[0], counts[1], tuple(counts[2 : 2 + order]), tuple(counts[2 + order :]))


def sum_stats(stats: Iterable[BleuStats], order: int = 4) -> BleuStats:
    """Sum of ``stats`` (each of n-gram order ``order``); :meth:`BleuStats.zero` when there
    are none."""
    return functools.reduce(BleuStats.__add__, stats, BleuStats.zero(order))


@dataclass(frozen=True)
class SentenceBleu:
    """Sentence BLEU in [0, 100] and the statistics to add into a corpus score."""

    score: float
    stats: BleuStats


@functools.lru_cache(maxsize=16)
def _bleu_metric(tokenize: str, lowercase: bool, max_ngram_order: int) -> BLEU:
    """A sacrebleu ``BLEU`` that extracts statistics (reused: ~3x faster than one per call).

    Its smoothing is ``exp`` and its effective order on: neither changes the statistics, and
    ``exp`` (unlike ``add-k``) never alters the counts it returns; scores are computed from
    the counts by :func:`_bleu_score`.
    """
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(
        tokenize=tokenize,
        lowercase=lowercase,
        max_ngram_order=max_ngram_order,
        smooth_method="exp",
        effective_order=True,
    )


def _bleu_score(stats: BleuStats, settings: BleuSettings) -> float:
    """BLEU of ``stats`` with ``settings``' smoothing and effective order, clamped to 100."""
    from sacrebleu.metrics.bleu import BLEU

    if stats.order != settings.max_ngram_order:
        raise ValueError(
            f"BLEU statistics of n-gram order {stats.order} cannot be scored with "
            f"max_ngram_order {settings.max_ngram_order}: use the order they were computed with"
        )
    score = BLEU.compute_bleu(
        correct=list(stats.correct),  # copies: add-k smoothing adds to them in place
        total=list(stats.total),
        sys_len=stats.sys_len,
        ref_len=stats.ref_len,
        smooth_method=settings.smooth_method,
        smooth_value=settings.smooth_value,
        effective_order=settings.effective_order,
        max_ngram_order=settings.max_ngram_order,
    )
    return min(float(score.score), _MAX_BLEU)


def sentence_stats(
    hypothesis: str, references: Sequence[str], settings: BleuSettings = DEFAULT_BLEU
) -> BleuStats:
    """The BLEU statistics of one hypothesis against its references, tokenized and cased
    as ``settings`` say (smoothing and effective order do not change them)."""
    metric = _bleu_metric(settings.tokenize, settings.lowercase, settings.max_ngram_order)
    score = metric.sentence_score(hypothesis, reference_list(references))
    return BleuStats(
        sys_len=int(score.sys_len),
        ref_len=int(score.ref_len),
        correct=tuple(int(c) for c in score.counts),
        total=tuple(int(t) for t in score.totals),
    )


def sentence_bleu_with(
    hypothesis: str, references: Sequence[str], settings: BleuSettings
) -> SentenceBleu:
    """:func:`sentence_bleu` with its options as one :class:`BleuSettings` (whose
    ``effective_order`` is the one used)."""
    stats = sentence_stats(hypothesis, references, settings)
    return SentenceBleu(score=_bleu_score(stats, settings), stats=stats)


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    *,
    tokenize: str = "13a",
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    max_ngram_order: int = 4,
    effective_order: bool = True,
) -> SentenceBleu:
    """BLEU of one hypothesis against one or more references, as ``sacrebleu.sentence_bleu``
    (and ``BLEU(...).sentence_score``) with the same options and defaults.

    Definition: ``BP * exp(mean over n of log p_n)`` in percent, n = 1..``max_ngram_order``,
    where ``p_n`` is the clipped n-gram precision (matched n-grams, each counted at most as
    often as in the one reference that has it most, over the hypothesis' n-grams) and ``BP =
    exp(1 - r / c)`` when the hypothesis length ``c`` is below the length ``r`` of the
    reference closest to it (the shorter on a tie), else 1. A zero precision is smoothed as
    ``smooth_method`` says (see :class:`BleuSettings`); with ``effective_order`` (on, as in
    sacrebleu's sentence BLEU) the orders from the first one the hypothesis has no n-gram of
    are left out, without it such an order makes the score 0. Normalisation: ``lowercase``,
    then the ``tokenize`` tokenizer (13a by default; trailing white space stripped first). An
    empty hypothesis or one without a matched unigram scores 0. The score is clamped to 100
    (see the module docstring). An empty ``references`` raises ``ValueError``; a bare string,
    ``TypeError``; a bad option, :class:`BleuSettingsError`.
    """
    settings = BleuSettings(
        tokenize, smooth_method, smooth_value, lowercase, max_ngram_order, effective_order
    )
    return sentence_bleu_with(hypothesis, references, settings)


def corpus_bleu_from_stats(
    stats: BleuStats,
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    max_ngram_order: int = 4,
    effective_order: bool = False,
) -> float:
    """Corpus BLEU in [0, 100] from summed statistics, as ``sacrebleu.corpus_bleu`` (and
    ``BLEU(...).corpus_score``) with the same options and defaults.

    Same definition as :func:`sentence_bleu` on the corpus totals, but with effective order
    off by default (sacrebleu's corpus default), so the corpus score of a single row is in
    general not its sentence score. Equal to ``BLEU(...).corpus_score(hyps, streams).score``
    when ``stats`` is the sum of the rows' :func:`sentence_bleu` statistics computed with the
    same ``tokenize``, ``lowercase`` and ``max_ngram_order`` (which must be the order of
    ``stats``, else ``ValueError``) and rows with fewer references are padded with ``None``
    in ``streams``. No matched unigram (an empty corpus included) gives 0. Clamped to 100 like
    :func:`sentence_bleu`.
    """
    settings = BleuSettings(
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        max_ngram_order=max_ngram_order,
        effective_order=effective_order,
    )
    return _bleu_score(stats, settings)


# --------------------------------------------------------------------------- the metric fixtures

BLEU_STATS = "bleu_stats"


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
        lines = " (sentences are the lines)" if metric == "rougeLsum" else ""
        evidence = (
            f"{metric} {measure}, best of the gold(s) by F-measure: precision "
            f"{best.precision:.4f}, recall {best.recall:.4f}, F {best.fmeasure:.4f}{lines}"
        )
        return Measured({name: float(getattr(best, measure))}, evidence, primary=name)

    return measure


def measure_bleu(row: Row, ctx: MetricContext) -> Measured:
    """``bleu``: sentence BLEU with ``[settings.bleu]``, effective order always on (as
    ``sacrebleu.sentence_bleu``; the setting is the corpus score's). The row's statistics
    and its number of references go in ``bleu_stats``."""
    references = golds(row, "bleu")
    settings = replace(ctx.settings.bleu, effective_order=True)
    result = sentence_bleu_with(claim_text(row, "bleu", ctx.settings), references, settings)
    stats = result.stats
    evidence = (
        f"sentence BLEU {result.score:.2f}: {stats.sys_len} hypothesis / {stats.ref_len} "
        f"reference tokens, matched n-grams {'/'.join(map(str, stats.correct))}"
    )
    recorded = {**stats.as_dict(), **reference_count(len(references))}
    return Measured({"bleu": result.score}, evidence, {BLEU_STATS: recorded})


def bleu_corpus(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``bleu.corpus``: corpus BLEU from the rows' summed ``bleu_stats``, with the run's
    ``[settings.bleu]`` smoothing, order and effective order."""
    stats = BleuStats.from_dict(sums, settings.bleu.max_ngram_order)
    return {"corpus": _bleu_score(stats, settings.bleu)}


def bleu_signature(settings: BleuSettings, references: str) -> str:
    """sacrebleu's signature of BLEU computed with ``settings`` (as ``BLEU.get_signature()``
    prints it): ``nrefs:<references>|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``.

    ``case`` is ``lc`` with ``lowercase``; ``eff`` says whether ``effective_order`` was on;
    ``tok`` is the tokenizer's own signature (``flores101`` for ``spm``, the MeCab version
    for ``ja-mecab``); ``smooth`` carries the value in effect for ``floor`` and ``add-k``
    (``floor[0.10]``); ``version`` is sacrebleu's. One addition: sacrebleu's signature does
    not show ``max_ngram_order``, so when it is not 4, ``ngram:<order>`` comes before
    ``version`` (at the default order the string is sacrebleu's exactly).
    """
    from sacrebleu.version import __version__

    metric = _bleu_metric(settings.tokenize, settings.lowercase, settings.max_ngram_order)
    smooth = settings.smooth_method
    if settings.smooth is not None:
        smooth += f"[{settings.smooth:.2f}]"
    fields = [
        f"nrefs:{references}",
        f"case:{'lc' if settings.lowercase else 'mixed'}",
        f"eff:{'yes' if settings.effective_order else 'no'}",
        f"tok:{metric.tokenizer_signature}",
        f"smooth:{smooth}",
    ]
    if settings.max_ngram_order != DEFAULT_BLEU.max_ngram_order:
        fields.append(f"ngram:{settings.max_ngram_order}")
    return "|".join([*fields, f"version:{__version__}"])


def bleu_signatures(settings: MetricSettings, sums: Mapping[str, float]) -> dict[str, str]:
    """The signatures of ``bleu`` (sentence scores: effective order on) and ``bleu.corpus``
    (the ``effective_order`` setting); ``nrefs`` is the rows' number of golds, or ``var``."""
    references = nrefs(sums)
    sentence = replace(settings.bleu, effective_order=True)
    return {
        "bleu": bleu_signature(sentence, references),
        "bleu.corpus": bleu_signature(settings.bleu, references),
    }


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
    MetricSpec(
        "bleu",
        "Sentence BLEU of the answer (markers stripped) against the golds, 0-100, as "
        "sacrebleu.sentence_bleu; bleu.corpus is corpus BLEU from the summed statistics.",
        (
            MetricInfo(
                "bleu",
                "sentence BLEU, 0-100 (corpus: from summed statistics)",
                kind="corpus",
                corpus=("corpus",),
                range=PERCENT,
            ),
        ),
        ("answer", "gold"),
        measure_bleu,
        corpus=CorpusReduction(BLEU_STATS, bleu_corpus),
        signatures=bleu_signatures,
    ),
)
