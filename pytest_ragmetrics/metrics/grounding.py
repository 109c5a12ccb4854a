"""Grounding metrics (docs/metrics.md#1-grounding) and embedding similarity to gold (§4, Tier 3).

**Overlap** of an answer: split it into sentences; drop the IDK sentences; the rest are
claim sentences. A claim sentence is supported iff it carries exactly one citation, that
citation names a context, and the cosine between the embeddings of the sentence (markers
stripped) and of the cited context's text is at least ``tau_sim``. Overlap = supported /
claim sentences; with no claim sentence it is 0.0 and the answer counts as abstaining.

Decisions where the specification is silent, also in docs/metrics.md#1-grounding:

* the same target cited twice (``[CIT:d1] ... [CIT:d1]``) is one citation;
* a sentence made only of markers asserts nothing and is not a claim sentence;
* ``[n]`` resolves to the n-th context, ``[CIT:id]`` to the first context with that id.

Each metric works in two steps, so a caller can batch the expensive middle: the
``*_texts`` function lists the texts to embed, and the metric function takes an ``embed``
callable that maps texts to vectors (a prepared lookup in the plugin, a model here).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.abstention import row_abstention
from pytest_ragmetrics.metrics.base import (
    COSINE,
    COUNT,
    UNIT,
    Column,
    Compute,
    Embed,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Preparation,
    Presentation,
    Range,
    Versus,
    golds,
)
from pytest_ragmetrics.text.citations import (
    Citation,
    CitationFormat,
    find_citations,
    strip_citations,
)
from pytest_ragmetrics.text.idk import IdkMatcher
from pytest_ragmetrics.text.sentences import split_sentences

if TYPE_CHECKING:  # numpy is imported by the functions that compute, not with the plugin
    import numpy as np
    import numpy.typing as npt

    from pytest_ragmetrics.embeddings.model import Vectors

    # A sentence similarity decides (its text without markers) and the context it cites.
    from pytest_ragmetrics.embeddings.prepare import EmbeddingStore
    from pytest_ragmetrics.embeddings.similarities import Pair
    from pytest_ragmetrics.metrics.hooks import Prepared, PrepareRow, RowKey

Contexts = Sequence[Mapping[str, Any]]
DEFAULT_TAU_SIM = 0.65


def cosine(a: Vectors, b: Vectors) -> float:
    """Cosine similarity in float64, within [-1, 1]; a zero vector has no direction and is
    an error.

    Rounding puts the computed cosine of a vector with itself (or a parallel one) a few
    units in the last place above 1 for many vectors (1.0000000000000002); it is clamped
    to the [-1, 1] the definition states, so a text compared with itself scores 1.
    """
    import numpy as np

    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    norms = float(np.linalg.norm(x)) * float(np.linalg.norm(y))
    if norms == 0.0:
        raise ValueError("cosine similarity of a zero vector is undefined")
    return min(1.0, max(-1.0, float(np.dot(x, y) / norms)))


def _row_dots(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The dot product of each row of ``x`` with the same row of ``y``. A stack of
    vector-by-vector products is what ``np.matmul`` hands to the very BLAS dot that
    ``np.dot`` calls on one pair, so each float is ``np.dot``'s (an ``einsum`` or a
    ``sum`` of products adds in another order and differs in the last bits)."""
    import numpy as np

    dots: npt.NDArray[np.float64] = np.matmul(x[:, None, :], y[:, :, None])[:, 0, 0]
    return dots


def cosines(left: Vectors, right: Vectors) -> list[float]:
    """``cosine`` of each row of ``left`` with the same row of ``right``, all in one pass:
    the same floats, bit for bit, as ``cosine`` pair by pair (each norm is the square root
    of the vector's dot product with itself, as ``np.linalg.norm`` computes it), and the
    same error for a zero vector."""
    import numpy as np

    x = np.ascontiguousarray(left, np.float64)
    y = np.ascontiguousarray(right, np.float64)
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"cosines of rows need two stacks of one shape; got {x.shape}, {y.shape}")
    if not len(x):
        return []
    norms = np.sqrt(_row_dots(x, x)) * np.sqrt(_row_dots(y, y))
    if not norms.all():
        raise ValueError("cosine similarity of a zero vector is undefined")
    return [min(1.0, max(-1.0, value)) for value in (_row_dots(x, y) / norms).tolist()]


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence of an answer as the overlap rule sees it, before any embedding.

    ``text`` is the sentence without markers (what is embedded); ``context`` the cited
    context's text when the sentence carries exactly one valid citation, which is the
    only case where similarity decides. ``verdict`` is the reason it is settled without
    similarity (IDK, no citation, ...), or ``None`` when similarity decides.
    """

    sentence: str
    text: str
    citations: tuple[str, ...]
    doc_id: str | None
    context: str | None
    verdict: str | None
    idk: bool


def _resolve(citation: Citation, contexts: tuple[tuple[str, str], ...]) -> str | None:
    if not citation.valid:
        return None
    if isinstance(citation.target, int):
        return contexts[citation.target - 1][1]
    return next(text for doc_id, text in contexts if doc_id == citation.doc_id)


def claims(
    answer: str,
    contexts: Contexts | None,
    matcher: IdkMatcher | None = None,
    fmt: CitationFormat = "auto",
) -> list[Claim]:
    """Every sentence of ``answer`` with its citations and, if settled, its verdict.

    Results are cached per (answer, contexts, IDK phrases, format): the prepare step and
    several fixtures of one row all ask for the same answer's claims.
    """
    pairs = tuple((str(c["doc_id"]), str(c["text"])) for c in contexts or ())
    return list(_claims(answer, pairs, matcher or IdkMatcher(), fmt))


@functools.lru_cache(maxsize=8192)
def _claims(
    answer: str, contexts: tuple[tuple[str, str], ...], matcher: IdkMatcher, fmt: CitationFormat
) -> tuple[Claim, ...]:
    context_ids = [doc_id for doc_id, _ in contexts]
    result = []
    for sentence in split_sentences(answer, fmt):
        text = strip_citations(sentence.text, fmt)
        found = find_citations(sentence.text, context_ids, fmt)
        distinct: dict[str | int, Citation] = {}
        for citation in found:
            distinct.setdefault(citation.doc_id or citation.target, citation)
        cited = tuple(str(c.doc_id or c.marker) for c in distinct.values())
        only = next(iter(distinct.values())) if len(distinct) == 1 else None
        context = _resolve(only, contexts) if only is not None else None
        idk = matcher.match(sentence.text, fmt) is not None
        if idk:
            verdict: str | None = "IDK sentence, dropped"
        elif not text:
            verdict = "only citation markers, dropped"
        elif not distinct:
            verdict = "no citation"
        elif only is None:
            verdict = f"{len(distinct)} citations; a supported sentence carries exactly one"
        elif context is None:
            verdict = f"cites {only.marker}, which names no context"
        else:
            verdict = None
        result.append(
            Claim(sentence.text, text, cited, only.doc_id if only else None, context, verdict, idk)
        )
    return tuple(result)


def _is_claim(claim: Claim) -> bool:
    return not claim.idk and bool(claim.text)


def overlaps(
    answers: Sequence[tuple[str, Contexts | None]],
    embed: Embed,
    tau_sim: float = DEFAULT_TAU_SIM,
    matcher: IdkMatcher | None = None,
    fmt: CitationFormat = "auto",
) -> list[Overlap]:
    """The overlap of each ``(answer, contexts)``, all scored at once: one ``embed`` of
    every distinct text, one pass of ``cosines`` over every measured sentence. Each result
    equals ``overlap`` of its answer whenever ``embed`` gives a text the same vector in any
    batch, as the run's prepared vectors do; a model encoding its batch afresh may not."""
    claim_lists = [claims(answer, contexts, matcher, fmt) for answer, contexts in answers]
    return _judge_all(claim_lists, embed, tau_sim)


def _judge_all(
    claim_lists: Sequence[Sequence[Claim]], embed: Embed, tau_sim: float
) -> list[Overlap]:
    """``overlaps`` of answers analysed already: one embed, one pass of ``cosines``."""
    pairs = measured_pairs(claim_lists)
    similarities = pair_similarities(pairs, embed)
    if len(similarities) < len(pairs):
        raise ValueError("cosine similarity of a zero vector is undefined")
    return [_judged(claim_list, similarities, tau_sim) for claim_list in claim_lists]


def _pair(claim: Claim) -> Pair:
    return claim.text, str(claim.context)


def measured_pairs(claim_lists: Sequence[Sequence[Claim]]) -> list[Pair]:
    """The pair of every claim similarity decides, each distinct pair once, in order."""
    return list(
        dict.fromkeys(
            _pair(claim) for claim_list in claim_lists for claim in claim_list if _measured(claim)
        )
    )


def pair_similarities(pairs: Sequence[Pair], embed: Embed) -> dict[Pair, float]:
    """The cosine of each pair's two texts: one ``embed`` of every distinct text, one pass
    of ``cosines``, so each float is ``cosine``'s for that pair whatever the others are.
    A pair with a zero vector has no cosine (``cosine`` raises): it is left out."""
    import numpy as np

    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    if not texts:
        return {}
    vectors = np.asarray(embed(texts))
    row = {text: index for index, text in enumerate(texts)}
    directed = np.any(vectors != 0, axis=1).tolist()  # a zero vector has no direction
    kept = [pair for pair in pairs if directed[row[pair[0]]] and directed[row[pair[1]]]]
    values = cosines(
        vectors[[row[text] for text, _ in kept]], vectors[[row[context] for _, context in kept]]
    )
    return dict(zip(kept, values, strict=True))


def _judged(
    claim_list: Sequence[Claim], similarities: Mapping[Pair, float], tau_sim: float
) -> Overlap:
    """``judge_claims`` with each measured claim's similarity looked up by its pair."""
    pairs = [_pair(claim) for claim in claim_list if _measured(claim)]
    return judge_claims(claim_list, [similarities[pair] for pair in pairs], tau_sim)


def _measured(claim: Claim) -> bool:
    """Whether similarity decides the claim (``overlap_texts`` lists its two texts)."""
    return claim.verdict is None and claim.context is not None


def overlap_texts(claim_list: Sequence[Claim]) -> list[str]:
    """The texts overlap needs embedded: each scored sentence and its cited context."""
    texts: list[str] = []
    for claim in claim_list:
        if _measured(claim):
            texts += [claim.text, str(claim.context)]
    return texts


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    """Why one sentence of an answer is or is not supported.

    ``doc_id`` and ``context`` are the cited context the similarity was measured against;
    ``None`` for a sentence settled without similarity (IDK, no citation, ...).
    """

    sentence: str
    citations: tuple[str, ...]
    similarity: float | None
    supported: bool
    claim: bool
    reason: str
    doc_id: str | None = None
    context: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The sentence in the report document; ``context`` is ``{"doc_id", "text"}`` of
        the context it was measured against, or ``None``."""
        measured = None if self.context is None else {"doc_id": self.doc_id, "text": self.context}
        return {
            "sentence": self.sentence,
            "citations": list(self.citations),
            "similarity": self.similarity,
            "supported": self.supported,
            "claim": self.claim,
            "reason": self.reason,
            "context": measured,
        }

    def line(self) -> str:
        mark = "supported" if self.supported else "dropped" if not self.claim else "UNSUPPORTED"
        return f"[{mark}] {self.sentence!r}: {self.reason}"


@dataclass(frozen=True)
class Overlap:
    """Overlap of one answer, with a verdict for every sentence."""

    score: float
    supported: int
    claims: int
    tau_sim: float
    sentences: tuple[SentenceVerdict, ...]

    @property
    def abstains(self) -> bool:
        """No claim sentence: a pure IDK (or empty) answer, which scores 0.0."""
        return self.claims == 0

    def evidence(self) -> str:
        return self._evidence

    @functools.cached_property
    def _evidence(self) -> str:
        """Built once: overlap and faithfulness of a row both show it."""
        head = (
            "no claim sentence (pure IDK or empty): overlap 0 and abstaining"
            if self.abstains
            else f"{self.supported} of {self.claims} claim sentence(s) supported "
            f"at tau_sim {self.tau_sim:g}"
        )
        # One line: pytest escapes newlines in the repr of a failed assertion.
        return "; ".join([head, *(verdict.line() for verdict in self.sentences)])


def overlap(
    answer: str,
    contexts: Contexts | None,
    embed: Embed,
    tau_sim: float = DEFAULT_TAU_SIM,
    matcher: IdkMatcher | None = None,
    fmt: CitationFormat = "auto",
) -> Overlap:
    """The overlap of ``answer`` with the contexts it cites (module docstring)."""
    import numpy as np

    claim_list = claims(answer, contexts, matcher, fmt)
    texts = overlap_texts(claim_list)
    if not texts:
        return judge_claims(claim_list, [], tau_sim)
    vectors = np.asarray(embed(texts))
    row = {text: index for index, text in enumerate(texts)}  # a repeated text: its last
    measured = [claim for claim in claim_list if _measured(claim)]
    similarities = cosines(
        vectors[[row[claim.text] for claim in measured]],
        vectors[[row[str(claim.context)] for claim in measured]],
    )
    return judge_claims(claim_list, similarities, tau_sim)


def judge_claims(
    claim_list: Sequence[Claim], similarities: Sequence[float], tau_sim: float
) -> Overlap:
    """The overlap of an answer's claims, given the similarity of each claim that
    similarity decides (in order: one per pair ``overlap_texts`` lists)."""
    if len(similarities) != sum(map(_measured, claim_list)):
        raise ValueError(
            f"{len(similarities)} similarities for {sum(map(_measured, claim_list))} "
            "measured claims"
        )
    measured = iter(similarities)
    verdicts = []
    for claim in claim_list:
        if not _measured(claim):
            verdicts.append(
                SentenceVerdict(
                    claim.sentence,
                    claim.citations,
                    None,
                    False,
                    _is_claim(claim),
                    claim.verdict or "",
                )
            )
            continue
        similarity = next(measured)
        supported = similarity >= tau_sim
        relation = ">=" if supported else "<"
        reason = f"cites {claim.doc_id}, cosine {similarity:.3f} {relation} tau_sim {tau_sim:g}"
        verdicts.append(
            SentenceVerdict(
                claim.sentence,
                claim.citations,
                similarity,
                supported,
                True,
                reason,
                claim.doc_id,
                claim.context,
            )
        )
    n_claims = sum(verdict.claim for verdict in verdicts)
    n_supported = sum(verdict.supported for verdict in verdicts)
    score = n_supported / n_claims if n_claims else 0.0
    return Overlap(score, n_supported, n_claims, tau_sim, tuple(verdicts))


@dataclass(frozen=True, slots=True)
class Faithfulness:
    """The fallback faithfulness of one answer and the branch of the rule that gave it."""

    score: float
    reason: str


def faithfulness(overlap_score: float, abstains: bool, answerable: bool | None) -> Faithfulness:
    """docs/metrics.md#faithfulness: 0.0 for abstaining on an answerable (or unknown)
    question, 1.0 for a correct abstention, otherwise ``min(1.0, 0.6 + 0.4 * overlap)``."""
    if abstains:
        if answerable is False:
            return Faithfulness(1.0, "abstains on an unanswerable question (correct)")
        known = "answerable" if answerable else "answerability unknown, taken as answerable"
        return Faithfulness(0.0, f"abstains on a question that is {known}")
    score = min(1.0, 0.6 + 0.4 * overlap_score)
    return Faithfulness(score, f"0.6 + 0.4 x overlap {overlap_score:.3g}")


@dataclass(frozen=True)
class GoldSimilarity:
    """Embedding similarity of an answer to its gold(s), each the best over the aliases."""

    semantic_similarity: float
    dot_similarity: float
    euclidean_distance: float
    gold: str

    def evidence(self, metric: str) -> str:
        value = getattr(self, metric)
        return f"{metric} {value:.4f} to gold {self.gold!r}"


def similarity_texts(answer: str, golds: Sequence[str], fmt: CitationFormat = "auto") -> list[str]:
    """The texts the similarity-to-gold metrics embed: the answer without markers, golds."""
    return [strip_citations(answer, fmt), *golds]


def similarity_to_gold(
    answer: str, golds: Sequence[str], embed: Embed, fmt: CitationFormat = "auto"
) -> GoldSimilarity:
    """Cosine, dot product and Euclidean distance between the answer's embedding and each
    gold's, best over the aliases: highest cosine and dot product, lowest distance.

    The vectors are the model's own output: with a normalising model (the packaged MiniLM
    is one) dot equals cosine and distance is ``sqrt(2 - 2 cos)``.
    """
    import numpy as np

    if not golds:
        raise ValueError("similarity to gold needs at least one gold answer")
    texts = similarity_texts(answer, golds, fmt)
    vectors = np.asarray(embed(texts), np.float64)
    answer_vector, gold_vectors = vectors[0], vectors[1:]
    cosines = [cosine(answer_vector, gold) for gold in gold_vectors]
    dots = gold_vectors @ answer_vector
    distances = np.linalg.norm(gold_vectors - answer_vector, axis=1)
    best = int(np.argmax(cosines))
    return GoldSimilarity(max(cosines), float(dots.max()), float(distances.min()), str(golds[best]))


# -- the metric fixtures ----------------------------------------------------------------


def _row_claims(row: Row, metric: str, settings: MetricSettings) -> list[Claim]:
    return claims(
        row.require("answer", metric),
        row.require("contexts", metric),
        settings.idk_matcher,
        settings.citations,
    )


def texts_overlap(row: Row, settings: MetricSettings) -> list[str]:
    return overlap_texts(_row_claims(row, "overlap", settings))


def texts_faithfulness(row: Row, settings: MetricSettings) -> list[str]:
    if row_abstention(row, "faithfulness", settings).abstains:
        return []  # an abstaining answer's faithfulness needs no similarity
    return overlap_texts(_row_claims(row, "faithfulness", settings))


@dataclass(frozen=True, slots=True)
class ScoredOverlap:
    """A row's overlap with the answer and contexts it was scored on: the entry a row's
    ``MetricContext.memo["overlap"]`` holds, so a test that hands a metric an edited row
    (another answer, say) gets that row's overlap, not the one scored for the original."""

    answer: str
    contexts: Any
    overlap: Overlap

    def scored(self, answer: Any, contexts: Any) -> bool:
        """Whether this overlap was scored on ``answer`` and ``contexts`` (the same
        objects, the usual case, or equal ones)."""
        return _same(self.answer, answer) and _same(self.contexts, contexts)


def _same(kept: Any, given: Any) -> bool:
    return kept is given or bool(kept == given)


def _row_overlap(row: Row, metric: str, ctx: MetricContext) -> Overlap:
    """The row's overlap: the one its fixtures' before-rows hook scored, or an earlier
    fixture of the row computed (``ctx.memo``), when it was scored on the row's answer and
    contexts; otherwise computed now, and kept for the row's other fixtures."""
    settings = ctx.settings
    answer, contexts = row.require("answer", metric), row.require("contexts", metric)
    kept = ctx.memo.get(OVERLAPS_KEY)
    if isinstance(kept, ScoredOverlap) and kept.scored(answer, contexts):
        return kept.overlap
    result = overlap(
        answer,
        contexts,
        ctx.embed,
        settings.tau_sim,
        settings.idk_matcher,
        settings.citations,
    )
    ctx.memo[OVERLAPS_KEY] = ScoredOverlap(answer, contexts, result)
    return result


# What a malformed row raises when overlap reads it: a field missing (``RowError``), a
# context without its ``doc_id`` or ``text`` (``KeyError``), a value of the wrong type
# (``TypeError``), a zero vector (``ValueError``). Such a row is left to its fixture,
# which fails with the same error when it runs; anything else is a bug, and surfaces.
_BAD_ROW = (RowError, KeyError, TypeError, ValueError)


@dataclass(frozen=True)
class GroundingPlan:
    """Rows whose overlap is scored at once (``grounding_plan``), each with its claims:
    the pairs similarity decides are known before any vector is, so their similarities
    may come from the prepared vectors (``plan_similarities``) or from a cache (``score``).
    A caller that puts each result in its row's ``MetricContext.memo["overlap"]`` before
    the row runs leaves the ``overlap`` and ``faithfulness`` fixtures only their evidence
    to format (for a row with the answer and contexts it was scored on).

    A row that cannot be scored here has no result: it lacks its answer or contexts, or
    they are not what overlap reads (analysing it raises what a malformed row raises,
    ``_BAD_ROW``, and its claims are ``None``; any other error is a bug, and propagates),
    or a pair of it has no similarity (a zero vector). One such row never keeps the others
    from being scored, and it is not skipped: its own fixture computes it when it runs,
    and fails there exactly as it would have without this step.
    """

    rows: tuple[Row, ...]
    claim_lists: tuple[list[Claim] | None, ...]

    @property
    def pairs(self) -> list[Pair]:
        """Every pair similarity decides for these rows, once each, in order."""
        return measured_pairs([claims for claims in self.claim_lists if claims is not None])

    def score(
        self, similarities: Mapping[Pair, float], tau_sim: float
    ) -> list[ScoredOverlap | None]:
        """Each row's overlap from the similarity of its pairs; ``None`` for a row that
        cannot be analysed or has a pair without a similarity (a zero vector): its
        fixture scores it, and fails, when it runs."""
        results: list[ScoredOverlap | None] = []
        for row, claim_list in zip(self.rows, self.claim_lists, strict=True):
            pairs = [_pair(claim) for claim in claim_list or () if _measured(claim)]
            if claim_list is None or any(pair not in similarities for pair in pairs):
                results.append(None)
                continue
            try:
                overlap = judge_claims(claim_list, [similarities[pair] for pair in pairs], tau_sim)
            except _BAD_ROW:  # the row's fixture raises the same when it runs: reported there
                results.append(None)
                continue
            results.append(ScoredOverlap(row.data["answer"], row.data["contexts"], overlap))
        return results


def plan_similarities(plan: GroundingPlan, embed: Embed) -> dict[Pair, float]:
    """The similarity of every pair of ``plan`` (``pair_similarities``), embedded at once;
    if what a malformed row raises (``_BAD_ROW``) spoils the batch, each row's pairs
    alone, so that one row never keeps the others from being scored."""
    try:
        return pair_similarities(plan.pairs, embed)
    except _BAD_ROW:
        found: dict[Pair, float] = {}
        for claim_list in plan.claim_lists:
            if claim_list is not None:
                with contextlib.suppress(*_BAD_ROW):  # its fixture raises it when it runs
                    found.update(pair_similarities(measured_pairs([claim_list]), embed))
        return found


def grounding_plan(rows: Sequence[tuple[Row, bool]], settings: MetricSettings) -> GroundingPlan:
    """The rows whose overlap the prepare step scores, analysed. ``rows``: each row a test
    runs ``overlap`` or ``faithfulness`` on, with whether a test takes ``overlap`` on it;
    of the rows only ``faithfulness`` is taken on, those whose answer abstains need no
    overlap (``measure_faithfulness``; their texts are not prepared,
    ``texts_faithfulness``)."""
    chosen = tuple(row for row, takes_overlap in rows if takes_overlap or _answers(row, settings))
    return GroundingPlan(chosen, tuple(_row_claim_list(row, settings) for row in chosen))


def _answers(row: Row, settings: MetricSettings) -> bool:
    """Whether ``faithfulness`` scores the row's overlap: its answer does not abstain
    (the rule of ``texts_faithfulness`` and ``measure_faithfulness``)."""
    if not isinstance(row.data.get("answer"), str):
        return False  # no answer overlap can read: the fixture says so when it runs
    try:
        return not row_abstention(row, "faithfulness", settings).abstains
    except _BAD_ROW:  # the row's fixture raises the same when it runs: reported there
        return False


def _row_claim_list(row: Row, settings: MetricSettings) -> list[Claim] | None:
    """The claims of the row's answer when overlap can analyse them; ``None`` otherwise."""
    answer = row.data.get("answer")
    if not isinstance(answer, str) or "contexts" not in row.data:
        return None
    try:
        return claims(answer, row.data["contexts"], settings.idk_matcher, settings.citations)
    except _BAD_ROW:  # the row's fixture raises the same when it runs: reported there
        return None


def scored_overlaps(
    plan: GroundingPlan, similarities: Mapping[Pair, float], tau_sim: float
) -> dict[RowKey, ScoredOverlap]:
    """The overlap of the rows of ``plan`` from the similarities of their pairs, by the
    row's file and position; a row that cannot be scored is left out, for its fixture
    (``GroundingPlan.score``)."""
    scored = plan.score(similarities, tau_sim)
    return {
        (row.source, row.index): result
        for row, result in zip(plan.rows, scored, strict=True)
        if result is not None
    }


def prepare_overlaps(
    rows: Sequence[PrepareRow], settings: MetricSettings, store: EmbeddingStore
) -> Prepared:
    """Grounding's before-rows hook (``OVERLAPS``): the overlap of every row a row test
    runs ``overlap`` or ``faithfulness`` on, scored at once, so that their fixtures only
    format the evidence.

    The answers' sentence analyses are read from the cache first (analysing the claims
    then runs no Punkt); the rows are analysed (``grounding_plan``), which names every
    (sentence, cited context) pair similarity decides before any vector is read. When the
    cache keeps the similarity set of those pairs the rows are scored from it: no vector
    read, no numpy imported, and their texts are not prepared. Otherwise the rows are
    scored once the session's texts are embedded, from the prepared vectors, and the set
    is stored for the next run."""
    from pytest_ragmetrics.embeddings.analyses import prepare_sentences
    from pytest_ragmetrics.embeddings.similarities import (
        read_similarities,
        similarity_set,
        store_similarities,
    )
    from pytest_ragmetrics.metrics.hooks import Prepared

    answers = [answer for one in rows if isinstance(answer := one.row.data.get("answer"), str)]
    prepare_sentences(store.cache, answers, settings.citations)
    plan = grounding_plan([(one.row, OVERLAP in one.fixtures) for one in rows], settings)
    pairs = similarity_set(store.embedder.identity, plan.pairs)
    found = read_similarities(store.cache, pairs)
    if found is not None:
        store.stats.similarities += len(pairs.pairs)
        stored = scored_overlaps(plan, found, settings.tau_sim)
        if stored:
            return Prepared(stored)

    def computed() -> dict[RowKey, ScoredOverlap]:
        similarities = plan_similarities(plan, store.embed)
        store_similarities(store.cache, pairs, similarities)
        return scored_overlaps(plan, similarities, settings.tau_sim)

    return Prepared({}, computed)


OVERLAP = "overlap"
# Where a row's overlap is kept for its grounding fixtures (``MetricContext.memo``): put
# there by the before-rows hook, or by the first fixture of the row that scored it.
OVERLAPS_KEY = OVERLAP
OVERLAPS = Preparation(OVERLAPS_KEY, prepare_overlaps)


def measure_overlap(row: Row, ctx: MetricContext) -> Measured:
    result = _row_overlap(row, "overlap", ctx)
    values = {"overlap": result.score}
    if not result.abstains and not row_abstention(row, "overlap", ctx.settings).abstains:
        values["overlap_answered"] = result.score
    details = {"sentences": [verdict.as_dict() for verdict in result.sentences]}
    return Measured(values, Evidence(result.evidence), details=details)


def measure_faithfulness(row: Row, ctx: MetricContext) -> Measured:
    abstaining = row_abstention(row, "faithfulness", ctx.settings)
    if abstaining.abstains:
        result = faithfulness(0.0, True, row.answerable)
        return Measured({"faithfulness": result.score}, f"{result.reason} ({abstaining.reason})")
    grounding = _row_overlap(row, "faithfulness", ctx)
    result = faithfulness(grounding.score, False, row.answerable)
    evidence = Evidence(_faithfulness_evidence, result.reason, grounding)
    return Measured({"faithfulness": result.score}, evidence)


def _faithfulness_evidence(reason: str, grounding: Overlap) -> str:
    return f"{reason}; overlap: {grounding.evidence()}"


def texts_similarity(row: Row, settings: MetricSettings) -> list[str]:
    answer = row.require("answer", "semantic_similarity")
    return similarity_texts(answer, golds(row, "semantic_similarity"), settings.citations)


def _similarity_measure(metric: str) -> Compute:
    def measure(row: Row, ctx: MetricContext) -> Measured:
        result = similarity_to_gold(
            row.require("answer", metric),
            golds(row, metric),
            ctx.embed,
            ctx.settings.citations,
        )
        return Measured({metric: getattr(result, metric)}, Evidence(result.evidence, metric))

    return measure


def _similarity(name: str, doc: str, description: str, value_range: Range) -> MetricSpec:
    return MetricSpec(
        name,
        doc,
        (MetricInfo(name, description, range=value_range),),
        ("answer", "gold"),
        _similarity_measure(name),
        texts_similarity,
    )


SPECS = (
    MetricSpec(
        OVERLAP,
        "Share of the answer's claim sentences supported by their one cited context "
        "(cosine >= tau_sim), 0-1; 0 with no claim sentence. Also records overlap_answered "
        "on rows that do not abstain.",
        (
            MetricInfo(
                "overlap",
                "share of claim sentences supported by their one cited context",
                range=UNIT,
                presentation=Presentation(
                    label="Overlap",
                    columns=(Column("main", 20),),
                    distribution=1,
                    bar=1,
                    versus=(Versus("mean", "delta", 3),),
                    pareto="quality",
                    role="supported",
                ),
            ),
            MetricInfo(
                "overlap_answered",
                "overlap over the rows that do not abstain",
                range=UNIT,
                presentation=Presentation(listed=False),
            ),
        ),
        ("answer", "contexts"),
        measure_overlap,
        texts_overlap,
        prepare=OVERLAPS,
        reads_citations=True,
    ),
    MetricSpec(
        "faithfulness",
        "Embedding fallback for faithfulness, 0-1: 0.6 + 0.4 x overlap for an answer; for an "
        "abstaining one 1.0 when the question is unanswerable, 0.0 when it is answerable "
        "(or not known).",
        (
            MetricInfo(
                "faithfulness",
                "fallback: 0.6 + 0.4 x overlap, or the abstention rule",
                range=UNIT,
                presentation=Presentation(
                    label="Faithfulness", columns=(Column("main", 10),), distribution=2, bar=2
                ),
            ),
        ),
        ("answer", "contexts"),
        measure_faithfulness,
        texts_faithfulness,
        prepare=OVERLAPS,
        reads_citations=True,
    ),
    _similarity(
        "semantic_similarity",
        "Cosine of the answer's and the gold's embeddings (markers stripped), best gold, -1-1.",
        "cosine of answer and gold embeddings, best gold",
        COSINE,
    ),
    _similarity(
        "dot_similarity",
        "Dot product of the answer's and the gold's embeddings, best gold (equal to the "
        "cosine for the normalised embeddings of the packaged model).",
        "dot product of answer and gold embeddings, best gold",
        (-math.inf, math.inf),
    ),
    _similarity(
        "euclidean_distance",
        "Euclidean distance of the answer's and the gold's embeddings, nearest gold, 0-2 for "
        "normalised embeddings; lower is closer.",
        "distance of answer and gold embeddings, nearest gold",
        COUNT,
    ),
)
