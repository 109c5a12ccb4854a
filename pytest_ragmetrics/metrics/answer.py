"""Exact match and token F1 against gold answers (SQuAD v1.1 rule).

Normalisation, in this order: lowercase; delete punctuation (ASCII ``string.punctuation``
and every Unicode character of category P — deleted, not replaced by a space, so
"New-York" becomes "newyork"); remove the whole words a/an/the; collapse white space.
Letters of every script are kept. On ASCII text this is the SQuAD v1.1 evaluation
script exactly, its edge cases included.

Two options, keyword arguments of every function here and settings of the ``em`` and ``f1``
fixtures: ``ascii_punctuation=True`` deletes ``string.punctuation`` only, as the v1.1
script does, for parity with it on non-ASCII text; ``version="2.0"`` applies the SQuAD v2.0
script's no-answer rule: gold answers that normalise to nothing are dropped, a question
left with none has the one gold "" (no answer), and when the prediction or the gold has no
token, F1 and EM are 1 when both have none, else 0 (v1.1 gives F1 0 when both are empty).
``squad_scores`` aggregates as that script does, with its HasAns / NoAns splits.
"""

from __future__ import annotations

import functools
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.abstention import answerable, row_abstention
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Column,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    Presentation,
    Versus,
    claim_text,
    golds,
)
from pytest_ragmetrics.metrics.setting import SettingError, SettingsTable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


class _PunctuationDeletion(dict[int, "int | None"]):
    """A ``str.translate`` table deleting punctuation (``None``) and keeping the rest.

    Filled lazily: ``str.translate`` looks each code point up, and a code point not yet in
    the table is classified once by :func:`_is_punctuation` and remembered. The table so
    holds only the characters seen, and each is classified once per process instead of once
    per occurrence, which made the per-character test most of the normaliser's time.
    """

    def __missing__(self, code_point: int) -> int | None:
        kept = None if _is_punctuation(chr(code_point)) else code_point
        self[code_point] = kept
        return kept


_DELETE_PUNCTUATION = _PunctuationDeletion()
_DELETE_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)

SquadVersion = Literal["1.1", "2.0"]
SQUAD_VERSIONS: tuple[SquadVersion, ...] = ("1.1", "2.0")


@dataclass(frozen=True)
class SquadSettings:
    """How ``em`` and ``f1`` read answers and golds: ``squad_version`` ``"1.1"`` (the
    default) or ``"2.0"`` (its no-answer rule: a question without a gold is answered by an
    empty answer, and the HasAns / NoAns splits are recorded); ``squad_ascii_punctuation``:
    delete only ``string.punctuation``, as the v1.1 script does (default: every Unicode
    punctuation character)."""

    squad_version: SquadVersion = "1.1"
    squad_ascii_punctuation: bool = False

    def __post_init__(self) -> None:
        if self.squad_version not in SQUAD_VERSIONS:
            raise SettingError("SQuAD", "squad_version", 'expected "1.1" or "2.0" (a string)')
        if not isinstance(self.squad_ascii_punctuation, bool):
            raise SettingError("SQuAD", "squad_ascii_punctuation", "expected true or false")


# em and f1 read theirs from [settings] itself (squad_version = "2.0"), as they always did;
# both settings change their values, so both enter the signature when changed.
SQUAD_SETTINGS = SettingsTable("squad", SquadSettings, flat=True)


def normalize_answer(text: str, *, ascii_punctuation: bool = False) -> str:
    """Normalise ``text`` for EM/F1 as described in the module docstring; with
    ``ascii_punctuation`` only ``string.punctuation`` is deleted (SQuAD v1.1's script)."""
    return _normalized(text, ascii_punctuation)


# EM and F1 of one row normalise the same answer and golds: the second finds them here.
@functools.lru_cache(maxsize=256)
def _normalized(text: str, ascii_punctuation: bool = False) -> str:
    table = _DELETE_ASCII_PUNCTUATION if ascii_punctuation else _DELETE_PUNCTUATION
    without_punctuation = text.lower().translate(table)
    tokens = without_punctuation.split()
    # When every token is a run of word characters (what \w matches: str.isalnum, or "_",
    # which is punctuation and gone), \b stands only at a token's ends, and the articles
    # the pattern removes are exactly the tokens equal to one: no regular expression needed.
    if "".join(tokens).isalnum():
        return " ".join([token for token in tokens if token not in _ARTICLE_WORDS])
    return " ".join(_ARTICLES.sub(" ", without_punctuation).split())


def _gold_list(golds: str | Iterable[str]) -> list[str]:
    gold_list = [golds] if isinstance(golds, str) else list(golds)
    if not gold_list:
        raise ValueError("no gold answer given: EM and F1 need at least one")
    for gold in gold_list:
        if not isinstance(gold, str):
            raise TypeError(f"gold answers must be strings, got {type(gold).__name__}")
    return gold_list


def _check_version(version: str) -> None:
    if version not in SQUAD_VERSIONS:
        raise ValueError(f"SQuAD version {version!r} is unknown; use '1.1' or '2.0'")


def _scored_golds(
    golds: str | Iterable[str], version: SquadVersion, ascii_punctuation: bool
) -> list[tuple[str, str]]:
    """Each gold with its normal form: every gold for v1.1; for v2.0 those that normalise
    to something, or the one gold "" (no answer) when none does."""
    _check_version(version)
    pairs = [
        (gold, normalize_answer(gold, ascii_punctuation=ascii_punctuation))
        for gold in _gold_list(golds)
    ]
    if version == "1.1":
        return pairs
    return [pair for pair in pairs if pair[1]] or [("", "")]


def exact_match(
    prediction: str,
    golds: str | Iterable[str],
    *,
    version: SquadVersion = "1.1",
    ascii_punctuation: bool = False,
) -> float:
    """1.0 if the normalised prediction equals any normalised gold, else 0.0.

    Two texts that both normalise to nothing match (EM 1), as in SQuAD v1.1 and v2.0;
    v2.0 first drops the golds that normalise to nothing, unless all do.
    Raises ``ValueError`` on an empty gold list or an unknown version.
    """
    normalized = normalize_answer(prediction, ascii_punctuation=ascii_punctuation)
    scored = _scored_golds(golds, version, ascii_punctuation)
    return float(any(normalized == gold for _, gold in scored))


@dataclass(frozen=True, slots=True)
class F1Match:
    """Token F1 against the best gold, with the counts that produced it."""

    score: float
    gold: str
    precision: float
    recall: float
    common: int
    prediction_tokens: int
    gold_tokens: int


def _f1(common: int, predicted: int, gold_tokens: int) -> tuple[float, float, float]:
    """F1, precision and recall of ``common`` tokens shared by ``predicted`` prediction
    tokens and ``gold_tokens`` gold tokens: P = common / |prediction|, R = common / |gold|,
    F1 = 2PR / (P + R); no common token gives 0."""
    if common == 0:
        return 0.0, 0.0, 0.0
    precision = common / predicted
    recall = common / gold_tokens
    return 2 * precision * recall / (precision + recall), precision, recall


def _common_tokens(predicted: Counter[str], gold_tokens: list[str]) -> int:
    """The size of the multiset intersection of ``predicted`` and ``gold_tokens``: the
    sum of ``(predicted & Counter(gold_tokens)).values()``, counted by matching each gold
    token with a prediction token not matched yet."""
    unmatched = dict(predicted)
    common = 0
    for token in gold_tokens:
        left = unmatched.get(token)
        if left:
            unmatched[token] = left - 1
            common += 1
    return common


def best_f1(
    prediction: str,
    golds: str | Iterable[str],
    *,
    version: SquadVersion = "1.1",
    ascii_punctuation: bool = False,
) -> F1Match:
    """The gold with the highest token F1 (the first one on ties) and its counts. With
    ``version="2.0"``, when the prediction or the gold has no token the F1 (and its
    precision and recall) is 1 if neither has one, else 0."""
    predicted_tokens = normalize_answer(prediction, ascii_punctuation=ascii_punctuation).split()
    predicted = Counter(predicted_tokens)
    best: F1Match | None = None
    for gold, normalized_gold in _scored_golds(golds, version, ascii_punctuation):
        gold_tokens = normalized_gold.split()
        common = _common_tokens(predicted, gold_tokens)
        if version == "2.0" and not (gold_tokens and predicted_tokens):
            agree = float(gold_tokens == predicted_tokens)  # the v2.0 script's no-answer rule
            score, precision, recall = agree, agree, agree
        else:
            score, precision, recall = _f1(common, len(predicted_tokens), len(gold_tokens))
        if best is None or score > best.score:
            best = F1Match(
                score, gold, precision, recall, common, len(predicted_tokens), len(gold_tokens)
            )
    assert best is not None  # _gold_list refuses an empty list
    return best


def token_f1(
    prediction: str,
    golds: str | Iterable[str],
    *,
    version: SquadVersion = "1.1",
    ascii_punctuation: bool = False,
) -> float:
    """SQuAD token F1: harmonic mean of token precision and recall, max over golds.

    Tokens are the white-space split of the normalised texts; the overlap is the multiset
    intersection. No common token gives 0.0, both sides empty included (v1.1); with
    ``version="2.0"`` both sides empty give 1.0 (a no-answer question left unanswered).
    Raises ``ValueError`` on an empty gold list or an unknown version.
    """
    return best_f1(prediction, golds, version=version, ascii_punctuation=ascii_punctuation).score


def has_answer(
    golds: str | Iterable[str], *, version: SquadVersion = "1.1", ascii_punctuation: bool = False
) -> bool:
    """Whether a question with ``golds`` has an answer: some gold is not empty, as the
    SQuAD v2.0 script splits HasAns from NoAns (``bool(qa["answers"])``, on the raw
    answers: a gold such as "The", which normalises to nothing, is still an answer, scored
    against ""). ``version`` and ``ascii_punctuation`` are checked as the scores check
    them; they do not change the split."""
    _check_version(version)
    del ascii_punctuation  # the split reads the raw golds
    return any(gold for gold in _gold_list(golds))


@dataclass(frozen=True)
class SquadScores:
    """EM and F1 means over ``total`` questions, as the SQuAD v2.0 script reports them
    (0-1 here, where the script prints percentages), with the HasAns and NoAns splits; a
    split without a question has ``None``, not 0."""

    exact: float
    f1: float
    total: int
    has_ans_exact: float | None
    has_ans_f1: float | None
    has_ans_total: int
    no_ans_exact: float | None
    no_ans_f1: float | None
    no_ans_total: int


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def squad_scores(
    predictions: Sequence[str],
    golds: Sequence[str | Iterable[str]],
    *,
    version: SquadVersion = "2.0",
    ascii_punctuation: bool = False,
) -> SquadScores:
    """EM and F1 of each prediction against its golds (``version``'s rules), averaged over
    every question and over the questions with an answer (HasAns) and without (NoAns).
    Raises ``ValueError`` when the two lists differ in length or are empty."""
    if len(predictions) != len(golds):
        raise ValueError(
            f"{len(predictions)} predictions but {len(golds)} gold lists: give one per question"
        )
    if not predictions:
        raise ValueError("no question given: SQuAD scores need at least one")
    split: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    for prediction, gold in zip(predictions, golds, strict=True):
        gold_list = _gold_list(gold)
        answered = has_answer(gold_list, version=version, ascii_punctuation=ascii_punctuation)
        exact, f1 = split[answered]
        exact.append(
            exact_match(prediction, gold_list, version=version, ascii_punctuation=ascii_punctuation)
        )
        f1.append(
            token_f1(prediction, gold_list, version=version, ascii_punctuation=ascii_punctuation)
        )
    every_exact, every_f1 = split[True][0] + split[False][0], split[True][1] + split[False][1]
    return SquadScores(
        _mean(every_exact) or 0.0,
        _mean(every_f1) or 0.0,
        len(predictions),
        _mean(split[True][0]),
        _mean(split[True][1]),
        len(split[True][0]),
        _mean(split[False][0]),
        _mean(split[False][1]),
        len(split[False][0]),
    )


# -- the metric fixtures ----------------------------------------------------------------


def _with_split(
    metric: str, value: float, references: list[str], ctx: MetricContext
) -> dict[str, float]:
    """``metric``'s value, and under ``squad_version = "2.0"`` the same value as its
    HasAns or NoAns split (``f1_has_ans``, ``f1_no_ans``), as the v2.0 script reports."""
    settings = ctx.settings
    if settings.squad_version != "2.0":
        return {metric: value}
    answered = has_answer(
        references, version="2.0", ascii_punctuation=settings.squad_ascii_punctuation
    )
    return {metric: value, f"{metric}_{'has_ans' if answered else 'no_ans'}": value}


def measure_em(row: Row, ctx: MetricContext) -> Measured:
    answer, references = claim_text(row, "em", ctx.settings), golds(row, "em")
    settings = ctx.settings
    value = exact_match(
        answer,
        references,
        version=settings.squad_version,
        ascii_punctuation=settings.squad_ascii_punctuation,
    )
    evidence = (
        "answer matches a gold after normalisation"
        if value
        else Evidence("answer matches none of {} gold(s) after normalisation", len(references))
    )
    return Measured(_with_split("em", value, references, ctx), evidence)


def measure_f1(row: Row, ctx: MetricContext) -> Measured:
    references, settings = golds(row, "f1"), ctx.settings
    match = best_f1(
        claim_text(row, "f1", settings),
        references,
        version=settings.squad_version,
        ascii_punctuation=settings.squad_ascii_punctuation,
    )
    evidence = Evidence(
        "best gold {!r}: {} common token(s), precision {:.3g}, recall {:.3g}",
        match.gold,
        match.common,
        match.precision,
        match.recall,
    )
    return Measured(_with_split("f1", match.score, references, ctx), evidence)


def measure_wrong_on_answerable(row: Row, ctx: MetricContext) -> Measured:
    """1 when the question is answerable, the answer does not abstain and its F1 (on the
    full answer) is 0; else 0."""
    metric = "wrong_on_answerable"
    if not answerable(row, metric):
        return Measured({metric: 0.0}, "not answerable: cannot be wrong-on-answerable")
    result = row_abstention(row, metric, ctx.settings)
    if result.abstains:
        return Measured({metric: 0.0}, f"abstains ({result.reason}); counted by idk_on_answerable")
    references = golds(row, metric)
    match = best_f1(claim_text(row, metric, ctx.settings), references)
    if match.score > 0:
        return Measured({metric: 0.0}, Evidence("answered with F1 {:.3g} > 0", match.score))
    evidence = Evidence("answerable, answered, F1 0 against all {} gold(s)", len(references))
    return Measured({metric: 1.0}, evidence)


SPECS = (
    MetricSpec(
        "em",
        "SQuAD exact match: 1 when the answer (citation markers stripped) equals any gold "
        "alias after SQuAD normalisation, else 0.",
        (
            MetricInfo(
                "em",
                "exact match with any gold after SQuAD normalisation",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    label="EM", columns=(Column("appendix", 10),), distribution=5, bar=5
                ),
            ),
            MetricInfo(
                "em_has_ans",
                'em of the questions with an answer (squad_version = "2.0": HasAns)',
                kind="binary",
                range=UNIT,
            ),
            MetricInfo(
                "em_no_ans",
                'em of the questions without an answer (squad_version = "2.0": NoAns)',
                kind="binary",
                range=UNIT,
            ),
        ),
        ("answer", "gold"),
        measure_em,
        settings=SQUAD_SETTINGS,
    ),
    MetricSpec(
        "f1",
        "SQuAD token F1 of the answer (citation markers stripped) against the best gold "
        "alias, 0-1.",
        (
            MetricInfo(
                "f1",
                "SQuAD token F1, max over golds",
                range=UNIT,
                presentation=Presentation(
                    label="F1",
                    columns=(Column("main", 30),),
                    distribution=3,
                    bar=3,
                    versus=(Versus("mean", "delta", 4),),
                    role="correct",
                ),
            ),
            MetricInfo(
                "f1_has_ans",
                'f1 of the questions with an answer (squad_version = "2.0": HasAns)',
                range=UNIT,
            ),
            MetricInfo(
                "f1_no_ans",
                'f1 of the questions without an answer (squad_version = "2.0": NoAns)',
                range=UNIT,
            ),
        ),
        ("answer", "gold"),
        measure_f1,
        settings=SQUAD_SETTINGS,
    ),
    MetricSpec(
        "wrong_on_answerable",
        "1 when the question is answerable, the answer does not abstain and its F1 against "
        "every gold is 0, else 0.",
        (
            MetricInfo(
                "wrong_on_answerable",
                "answerable, not abstained, F1 = 0 on the full answer",
                kind="binary",
                range=UNIT,
                presentation=Presentation(
                    columns=(Column("systems", 70, "sum", "Wrong on answerable (sum)", "count"),)
                ),
            ),
        ),
        ("answer", "gold", "answerable"),
        measure_wrong_on_answerable,
    ),
)
