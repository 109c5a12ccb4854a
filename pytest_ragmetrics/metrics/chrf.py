"""chrF and chrF++: character (and word) n-gram F-scores with summable statistics.

Definitions (Popović 2015, "chrF: character n-gram F-score for automatic MT evaluation";
Popović 2017, "chrF++: words helping character n-grams"), as sacrebleu 2.x computes them
(``sacrebleu.metrics.chrf.CHRF``), which is the reference every number here equals:

* Character n-grams of orders 1..``char_order`` (default 6) are taken from the text with
  its white space removed (``"".join(text.split())``, so any Unicode white space); with
  ``whitespace=True`` from the text as it is, spaces included.
* chrF++ adds word n-grams of orders 1..``word_order`` (2 for chrF++, 0 for chrF). Words are
  the white-space separated tokens, with one ASCII punctuation character split off the end
  of a word, or else off its start (sacrebleu's reading of Popović's chrF++.py: ``"(hi)"``
  becomes ``"(hi"`` and ``")"``; a one-character word stays whole).
* ``lowercase=True`` applies ``str.lower()`` to hypothesis and references first.
* Per order n: ``hyp`` = n-grams of the hypothesis, ``ref`` = n-grams of the reference,
  ``match`` = n-grams in common, each counted at most as often as in either text. Those
  three counts per order are the sufficient statistics (:class:`ChrfStats`).
* The score (default, sacrebleu's "effective order"): the arithmetic means P and R of the
  per-order precisions ``match / hyp`` and recalls ``match / ref`` over the orders where both
  ``hyp`` and ``ref`` are non-zero, and ``100 * (1 + beta^2) P R / (beta^2 P + R)``; 0 when
  no order counts or ``P + R = 0``. ``beta`` (default 2) weighs recall ``beta`` times as
  much as precision.
* With ``eps_smoothing=True`` (the original chrF++.py, NLTK and Moses): the mean over all
  orders of the per-order F-beta, where a zero ``hyp`` or ``ref`` makes that precision or
  recall ``1e-16`` and an order whose F is undefined (``beta^2 P + R = 0``) counts ``1e-16``.

Several references: per segment, the statistics of the reference with the best score (under
the same settings, eps smoothing included) are kept, the first one on a tie. The choice is made
inside each row's statistics, so summing per-row statistics reproduces sacrebleu's
``corpus_score`` exactly, also with a different number of references per row, provided the
reference streams given to sacrebleu are padded with ``None`` (which it drops).

Where sacrebleu departs from the papers (and this module follows sacrebleu):

* an order the reference has no n-gram of counts no hypothesis n-gram either (``hyp`` is
  recorded as 0, sacrebleu's "don't count hits if no reference exists for that n-gram"): a
  short reference does not lower the corpus precision of the longer orders;
* an empty hypothesis or reference (nothing but white space) scores 0, also against an
  empty one; with ``eps_smoothing`` the epsilons make that ``1e-14`` (as small a number as
  ``100 * 1e-16``), and so do a hypothesis and reference without a common character;
* the default is the effective-order average of precisions and recalls, not chrF++.py's
  mean of per-order F-scores (that is ``eps_smoothing=True``).

Scores are not clamped: ``(1 + b) P R / (b P + R)`` never exceeds ``max(P, R) <= 1``.

The settings a run shares (:class:`ChrfSettings`, the ``[settings.chrf]`` table declared as
``CHRF_SETTINGS``), the signature and the ``chrf`` and ``chrf_pp`` fixtures' declarations
live here with the math.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    NREFS_PART,
    PERCENT,
    Compute,
    CorpusReduction,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Signatures,
    claim_text,
    golds,
    nrefs,
    reference_count,
    reference_list,
)
from pytest_ragmetrics.metrics.setting import (
    SettingError,
    SettingsTable,
    changed_fields,
    whole_number,
)

CHRF_PP_WORD_ORDER: Final = 2  # chrF++ (Popović 2017)
_EPS: Final = 1e-16  # sacrebleu's (and chrF++.py's) smoothing epsilon
_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # ASCII, as sacrebleu
_PARTS: Final = ("hyp", "ref", "match")
_STAT_KEY: Final = re.compile(r"(char|word)_([1-9][0-9]*)_(hyp|ref|match)")

Kind = Literal["char", "word"]


# --------------------------------------------------------------------------- the settings

DEFAULT_CHAR_ORDER: Final = 6
DEFAULT_BETA: Final = 2


def _order_error(key: str, value: object, least: int) -> SettingError:
    return SettingError(
        "chrF",
        key,
        f"expected a whole number >= {least}, got {value!r}; "
        f"the defaults are char_order={DEFAULT_CHAR_ORDER}, beta={DEFAULT_BETA}",
    )


@dataclass(frozen=True)
class ChrfSettings:
    """The chrF settings a run shares (``[settings.chrf]`` in thresholds.toml); the word
    order is not one of them: the ``chrf`` fixture uses 0, ``chrf_pp`` 2.

    ``char_order``: the longest character n-gram (>= 1, default 6); ``beta``: recall's weight
    relative to precision (a whole number >= 1, default 2: chrF2); ``lowercase``: compare
    ``str.lower()`` texts; ``whitespace``: keep white space inside character n-grams;
    ``eps_smoothing``: chrF++.py's mean of per-order F-scores instead of sacrebleu's default
    effective-order average (see ``metrics.chrf``).
    """

    char_order: int = DEFAULT_CHAR_ORDER
    beta: int = DEFAULT_BETA
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def __post_init__(self) -> None:
        if not whole_number(self.char_order, 1):
            raise _order_error("char_order", self.char_order, 1)
        if not whole_number(self.beta, 1):
            raise _order_error("beta", self.beta, 1)
        for name in ("lowercase", "whitespace", "eps_smoothing"):
            if not isinstance(getattr(self, name), bool):
                raise SettingError(
                    "chrF", name, f"expected true or false, got {getattr(self, name)!r}"
                )

    def changed(self) -> dict[str, Any]:
        """The settings that differ from sacrebleu's defaults (empty when none does): what a
        baseline's signature records, so baselines stored before the table existed stay
        comparable."""
        return changed_fields(self, ChrfSettings())


# [settings.chrf]: shared by chrf and chrf_pp; every setting changes their values, so every
# one enters the signature.
CHRF_SETTINGS = SettingsTable(
    "chrf", ChrfSettings, hints={"word_order": "the word order is the fixture's: chrf or chrf_pp"}
)


# --------------------------------------------------------------------------- the scores


def _check_word_order(word_order: object) -> int:
    if not whole_number(word_order, 0):
        raise ValueError(
            f"chrF word_order: expected a whole number >= 0, got {word_order!r}; "
            f"0 is chrF, {CHRF_PP_WORD_ORDER} is chrF++"
        )
    assert isinstance(word_order, int)
    return word_order


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class NgramCounts:
    """One n-gram order's counts: hypothesis n-grams, reference n-grams, common n-grams."""

    hyp: int
    ref: int
    match: int

    def __post_init__(self) -> None:
        if min(self.hyp, self.ref, self.match) < 0:
            raise ValueError(f"chrF statistics cannot be negative: {self}")

    def __add__(self, other: NgramCounts) -> NgramCounts:
        return NgramCounts(self.hyp + other.hyp, self.ref + other.ref, self.match + other.match)


@dataclass(frozen=True)
class ChrfStats:
    """Sufficient statistics of chrF / chrF++ (sacrebleu's), summable over rows.

    ``chars[n-1]`` and ``words[n-1]`` are the counts of the character and word n-grams of
    order n (``words`` is empty for chrF). Rows with the same orders add up element-wise.
    """

    chars: tuple[NgramCounts, ...]
    words: tuple[NgramCounts, ...] = ()

    def __post_init__(self) -> None:
        if not self.chars:
            raise ValueError("chrF statistics need at least one character order")

    @property
    def orders(self) -> tuple[NgramCounts, ...]:
        """Every order's counts, characters first (sacrebleu's order of statistics)."""
        return self.chars + self.words

    def __add__(self, other: ChrfStats) -> ChrfStats:
        """The statistics of the two corpora together; both must have the same orders."""
        if (len(self.chars), len(self.words)) != (len(other.chars), len(other.words)):
            raise ValueError(
                f"chrF statistics of different orders cannot be added: "
                f"{len(self.chars)}+{len(self.words)} and {len(other.chars)}+{len(other.words)}"
            )
        return ChrfStats(
            tuple(a + b for a, b in zip(self.chars, other.chars, strict=True)),
            tuple(a + b for a, b in zip(self.words, other.words, strict=True)),
        )

    def as_dict(self) -> dict[str, float]:
        """Flat mapping ``char_<n>_hyp``, ``char_<n>_ref``, ``char_<n>_match``, then the same
        for ``word_<n>``."""
        flat: dict[str, float] = {}
        for kind, counts in (("char", self.chars), ("word", self.words)):
            for n, order in enumerate(counts, start=1):
                for part in _PARTS:
                    flat[f"{kind}_{n}_{part}"] = float(getattr(order, part))
        return flat

    @classmethod
    def from_dict(cls, mapping: Mapping[str, float]) -> ChrfStats:
        """Inverse of :meth:`as_dict`; the orders are read from the keys.

        ``ValueError`` on a key of another shape, a gap in the orders, an order missing one
        of its three counts, or a count that is negative or not a whole number: statistics
        are refused rather than reduced into a wrong score.
        """
        found: dict[tuple[str, int, str], int] = {}
        for key, value in mapping.items():
            if key.startswith(NREFS_PART):  # the rows' reference counts, for the signature
                continue
            match = _STAT_KEY.fullmatch(key)
            if match is None:
                raise ValueError(f"chrF statistics: unexpected key {key!r}")
            if not float(value).is_integer():
                raise ValueError(f"chrF statistic {key!r} must be a whole number, got {value}")
            found[(match[1], int(match[2]), match[3])] = int(value)
        return cls(_counts(found, "char"), _counts(found, "word"))


def _counts(found: Mapping[tuple[str, int, str], int], kind: Kind) -> tuple[NgramCounts, ...]:
    orders = sorted({n for k, n, _ in found if k == kind})
    if orders != list(range(1, len(orders) + 1)):
        raise ValueError(f"chrF statistics: {kind} orders {orders} are not 1..n")
    counts = []
    for n in orders:
        missing = [part for part in _PARTS if (kind, n, part) not in found]
        if missing:
            raise ValueError(f"chrF statistics: {kind}_{n} lacks {', '.join(missing)}")
        counts.append(NgramCounts(*(found[(kind, n, part)] for part in _PARTS)))
    return tuple(counts)


def sum_stats(stats: Iterable[ChrfStats]) -> ChrfStats:
    """The sum of ``stats`` (which must not be empty: its orders say which zero to start
    from)."""
    items = list(stats)
    if not items:
        raise ValueError("chrF statistics: nothing to sum")
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


# --------------------------------------------------------------------------- the score


def _f_score(orders: Sequence[NgramCounts], beta: int, eps_smoothing: bool) -> float:
    """chrF in [0, 100] from per-order counts, sacrebleu's ``CHRF._compute_f_score``
    (the same operations in the same order, so the same floating-point result)."""
    factor = beta**2
    eps_total = 0.0
    mean_precision, mean_recall, effective = 0.0, 0.0, 0
    for counts in orders:
        precision = counts.match / counts.hyp if counts.hyp > 0 else _EPS
        recall = counts.match / counts.ref if counts.ref > 0 else _EPS
        denominator = factor * precision + recall
        eps_total += (1 + factor) * precision * recall / denominator if denominator > 0 else _EPS
        if counts.hyp > 0 and counts.ref > 0:
            mean_precision += precision
            mean_recall += recall
            effective += 1
    if eps_smoothing:
        return 100 * eps_total / len(orders)
    if effective == 0:
        return 0.0
    mean_precision /= effective
    mean_recall /= effective
    if not mean_precision + mean_recall:
        return 0.0
    score = (1 + factor) * mean_precision * mean_recall
    score /= factor * mean_precision + mean_recall
    return 100 * score


def _char_ngrams(text: str, order: int, whitespace: bool) -> list[Counter[str]]:
    line = text if whitespace else "".join(text.split())
    return [Counter(line[i : i + n] for i in range(len(line) - n + 1)) for n in range(1, order + 1)]


def _words(text: str) -> list[str]:
    """White-space tokens with one ASCII punctuation character split off the end, or else
    the start, of each word longer than one character (sacrebleu's ``_remove_punctuation``)."""
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in _PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in _PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def _word_ngrams(text: str, order: int) -> list[Counter[str]]:
    # Words hold no white space, so joining n of them with a space names the n-gram.
    words = _words(text)
    return [
        Counter(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
        for n in range(1, order + 1)
    ]


def _match(hyp: Counter[str], ref: Counter[str]) -> NgramCounts:
    common = sum(min(count, ref[ngram]) for ngram, count in hyp.items() if ngram in ref)
    # An order the reference lacks counts no hypothesis n-gram (sacrebleu).
    return NgramCounts(sum(hyp.values()) if ref else 0, sum(ref.values()), common)


class _Ngrams:
    """A text's character and word n-gram counters under one set of settings."""

    def __init__(self, text: str, settings: ChrfSettings, word_order: int) -> None:
        text = text.lower() if settings.lowercase else text
        self.chars = _char_ngrams(text, settings.char_order, settings.whitespace)
        self.words = _word_ngrams(text, word_order) if word_order else []

    def against(self, reference: _Ngrams) -> ChrfStats:
        return ChrfStats(
            tuple(_match(h, r) for h, r in zip(self.chars, reference.chars, strict=True)),
            tuple(_match(h, r) for h, r in zip(self.words, reference.words, strict=True)),
        )


@dataclass(frozen=True)
class SentenceChrf:
    """Sentence chrF (or chrF++) in [0, 100] and the statistics to add into a corpus score."""

    score: float
    stats: ChrfStats


def chrf_of(
    hypothesis: str, references: Sequence[str], settings: ChrfSettings, word_order: int
) -> SentenceChrf:
    """:func:`sentence_chrf` with its settings as one object (what the fixtures call)."""
    word_order = _check_word_order(word_order)
    hyp = _Ngrams(hypothesis, settings, word_order)
    best: SentenceChrf | None = None
    for reference in reference_list(references):
        stats = hyp.against(_Ngrams(reference, settings, word_order))
        score = _f_score(stats.orders, settings.beta, settings.eps_smoothing)
        if best is None or score > best.score:  # the first reference wins a tie
            best = SentenceChrf(score, stats)
    assert best is not None  # reference_list refuses an empty list
    return best


def sentence_chrf(
    hypothesis: str,
    references: Sequence[str],
    *,
    char_order: int = DEFAULT_CHAR_ORDER,
    word_order: int = 0,
    beta: int = DEFAULT_BETA,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> SentenceChrf:
    """chrF (``word_order=0``) or chrF++ (``word_order=2``) of one hypothesis against one or
    more references, as sacrebleu's ``CHRF(...).sentence_score``.

    Definition, options and corner cases: the module docstring. With several references the
    score and statistics are those of the best-scoring one (the first on a tie). An empty
    ``references`` raises ``ValueError``, a bare string ``TypeError``, a bad setting
    ``ValueError`` naming it.
    """
    settings = ChrfSettings(char_order, beta, lowercase, whitespace, eps_smoothing)
    return chrf_of(hypothesis, references, settings, word_order)


def corpus_chrf_from_stats(
    stats: ChrfStats,
    *,
    char_order: int = DEFAULT_CHAR_ORDER,
    word_order: int = 0,
    beta: int = DEFAULT_BETA,
    eps_smoothing: bool = False,
) -> float:
    """Corpus chrF (chrF++) in [0, 100] from summed statistics, as sacrebleu's
    ``CHRF(...).corpus_score``.

    The score of the module docstring applied to the corpus totals (a corpus of one row
    scores its sentence score). Equal to ``CHRF(...).corpus_score(hyps, streams).score`` when
    ``stats`` is the sum of the rows' :func:`sentence_chrf` statistics under the same settings
    and rows with fewer references are padded with ``None`` in ``streams``. ``lowercase``
    and ``whitespace`` are not options here: they shape the statistics, which are already
    counted. Statistics of other orders than ``char_order`` and ``word_order`` raise
    ``ValueError`` rather than give a wrong score.
    """
    settings = ChrfSettings(char_order, beta, eps_smoothing=eps_smoothing)
    return _corpus(stats, settings, _check_word_order(word_order))


def _corpus(stats: ChrfStats, settings: ChrfSettings, word_order: int) -> float:
    if (len(stats.chars), len(stats.words)) != (settings.char_order, word_order):
        raise ValueError(
            f"chrF statistics have {len(stats.chars)} character and {len(stats.words)} word "
            f"orders, the settings {settings.char_order} and {word_order}: they were computed "
            "with other settings; compute them again with these"
        )
    return _f_score(stats.orders, settings.beta, settings.eps_smoothing)


def chrf_signature(settings: ChrfSettings, word_order: int, nrefs: int | str = 1) -> str:
    """What sacrebleu's ``CHRF(...).get_signature().format()`` prints for these settings,
    e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0``.

    ``nrefs``: the references per row, ``"var"`` when rows have different numbers
    (``base.nrefs``), printed as given; ``eff`` is ``yes`` without eps smoothing
    (effective order); ``version`` is the installed sacrebleu's, whose chrF these numbers
    are tested to equal.
    """
    sacrebleu_version = importlib.metadata.version("sacrebleu")

    word_order = _check_word_order(word_order)
    fields = {
        "nrefs": nrefs,
        "case": "lc" if settings.lowercase else "mixed",
        "eff": "no" if settings.eps_smoothing else "yes",
        "nc": settings.char_order,
        "nw": word_order,
        "space": "yes" if settings.whitespace else "no",
        "version": sacrebleu_version,
    }
    return "|".join(f"{name}:{value}" for name, value in fields.items())


# --------------------------------------------------------------------------- the metric fixtures


def _chrf_evidence(result: SentenceChrf, beta: int, word_order: int) -> str:
    """A chrF fixture's evidence: the score, its beta and the matched characters."""
    chars = result.stats.chars[0]
    return (
        f"{'chrF++' if word_order else 'chrF'} {result.score:.2f} (beta {beta}, "
        f"best of the gold(s)): {chars.match} of {chars.hyp} answer / {chars.ref} gold "
        "characters matched"
    )


def measure_chrf(metric: str, word_order: int) -> Compute:
    """The computation of the ``chrf`` (word order 0) or ``chrf_pp`` (2) fixture: sentence
    chrF of the answer without citation markers against every gold alias, its statistics
    recorded as the breakdown ``<metric>_stats`` for the corpus score."""

    def measure(row: Row, ctx: MetricContext) -> Measured:
        settings = ctx.settings.table(CHRF_SETTINGS)
        answer = claim_text(row, metric, ctx.settings)
        references = golds(row, metric)
        result = chrf_of(answer, references, settings, word_order)
        evidence = Evidence(_chrf_evidence, result, settings.beta, word_order)
        counts = {**result.stats.as_dict(), **reference_count(len(references))}
        stats = {f"{metric}_stats": counts}
        return Measured({metric: result.score}, evidence, stats)

    return measure


def chrf_corpus(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``chrf.corpus`` / ``chrf_pp.corpus``: corpus chrF from the rows' summed statistics
    under the run's ``[settings.chrf]``; the word order is read from the statistics
    (``chrf_pp``'s have two word orders)."""
    stats = ChrfStats.from_dict(sums)
    return {"corpus": _corpus(stats, settings.table(CHRF_SETTINGS), len(stats.words))}


def _spec(metric: str, word_order: int, name: str) -> MetricSpec:
    return MetricSpec(
        metric,
        f"{name} (sacrebleu's, settings in [settings.chrf]) of the answer (markers stripped) "
        f"against the golds, best gold, 0-100; {metric}.corpus is corpus {name} from the "
        "summed statistics.",
        (
            MetricInfo(
                metric,
                f"sentence {name}, 0-100 (corpus: from summed statistics)",
                kind="corpus",
                range=PERCENT,
                corpus=("corpus",),
            ),
        ),
        ("answer", "gold"),
        measure_chrf(metric, word_order),
        corpus=CorpusReduction(f"{metric}_stats", chrf_corpus),
        signatures=_signatures(metric, word_order),
        settings=CHRF_SETTINGS,
    )


def _signatures(metric: str, word_order: int) -> Signatures:
    """sacrebleu's signature of a chrF metric and of its corpus score (the same string:
    chrF has no effective order to differ between them)."""

    def sign(settings: MetricSettings, sums: Mapping[str, float]) -> dict[str, str]:
        signature = chrf_signature(settings.table(CHRF_SETTINGS), word_order, nrefs(sums))
        return {metric: signature, f"{metric}.corpus": signature}

    return sign


SPECS = (
    _spec("chrf", 0, "chrF (character n-gram F-score)"),
    _spec("chrf_pp", CHRF_PP_WORD_ORDER, "chrF++ (character and word n-gram F-score)"),
)
