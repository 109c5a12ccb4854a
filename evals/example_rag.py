"""An EXAMPLE RAG system, small and fully offline, for the project's example evals.

This is not part of the plugin. It shows how a user plugs a live system into
pytest-ragmetrics: a function from a question to a row-shaped dict (``answer``,
``contexts``, ``retrieved``, ``tokens``, ``telemetry``) that the metric fixtures can score.
It is deliberately simple and deterministic: same corpus, same ``embed`` and same question
give the same row, byte for byte.

* Retrieval: every passage of ``evals/data/corpus.jsonl`` is embedded once (by the injected
  ``embed``, e.g. the ``ragmetrics_embed`` fixture) into a ``faiss.IndexFlatIP``; on
  L2-normalised vectors the inner product is the cosine. The ``fetch_k`` nearest passages
  are candidates, from which ``k`` are given to the answerer, either the ``k`` most similar
  (``TOPK``) or by Maximal Marginal Relevance with at most ``per_domain`` passages per
  domain (``MMR``; Carbonell & Goldstein 1998). A passage's domain is the first path
  segment of its url.
* Answering: there is no LLM. An extractive answerer takes the retrieved sentence most
  similar to the question and cites its passage, ``... [CIT:<doc_id>].``; it adds the runner-up
  sentence when that comes from another passage and is within ``SECOND_SENTENCE_MARGIN``
  of the best. If no sentence reaches ``min_similarity`` it answers ``I don't know.``
* Tokens: an ESTIMATE of what an LLM generator would be billed for the same step, in
  whitespace-separated words: the prompt is the question plus the given contexts' texts,
  the completion is the answer. No tokenizer is involved.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import faiss
import numpy as np

Embed = Callable[[Sequence[str]], np.ndarray]
"""Texts -> one L2-normalised float32 row each, as the ``ragmetrics_embed`` fixture returns."""

IDK_ANSWER = "I don't know."
SECOND_SENTENCE_MARGIN = 0.05
"""The runner-up sentence is added when its cosine is at most this far below the best."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class RagConfig:
    """One configuration of the example system; ``as_dict`` is its fingerprint."""

    name: str
    k: int = 4  # passages given to the answerer
    fetch_k: int = 20  # candidates taken from faiss before MMR or the domain cap
    mmr_lambda: float | None = None  # None = vanilla top-k (with per_domain: lambda = 1)
    per_domain: int | None = None  # at most this many passages per domain
    # Below this best-sentence cosine the answerer abstains. 0.60 was read off
    # live_questions.jsonl with all-MiniLM-L6-v2: the off-topic questions there still reach
    # 0.50-0.72 on some on-topic sentence, so lower values never abstain at all.
    min_similarity: float = 0.60

    def __post_init__(self) -> None:
        if self.k < 1 or self.fetch_k < self.k:
            raise ValueError(f"need 1 <= k <= fetch_k, got k={self.k}, fetch_k={self.fetch_k}")
        if self.mmr_lambda is not None and not 0.0 <= self.mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must be in [0, 1], got {self.mmr_lambda}")
        if self.per_domain is not None and self.per_domain < 1:
            raise ValueError(f"per_domain must be >= 1, got {self.per_domain}")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


TOPK = RagConfig("topk")
MMR = RagConfig("mmr", mmr_lambda=0.45, per_domain=2)


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    url: str
    text: str
    domain: str


def domain_of(url: str) -> str:
    """First path segment of ``url``: ``https://docs.x/billing/plans`` -> ``billing``."""
    segments = [s for s in urlparse(url).path.split("/") if s]
    return segments[0] if segments else ""


def load_corpus(path: Path) -> list[Passage]:
    """Passages of a JSONL corpus with ``doc_id``, ``title``, ``url`` and ``text``."""
    passages = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            item = json.loads(line)
            passages.append(
                Passage(
                    item["doc_id"], item["title"], item["url"], item["text"], domain_of(item["url"])
                )
            )
    return passages


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, split after ``.``, ``!`` or ``?`` followed by whitespace."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def top_k_select(
    query_sims: np.ndarray, k: int, tie_keys: Sequence[str] | None = None
) -> list[int]:
    """Indices of the ``k`` largest ``query_sims``, best first; ties by ``tie_keys``, then index."""
    sims = np.asarray(query_sims, dtype=np.float64)
    keys = tie_keys if tie_keys is not None else [""] * len(sims)
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], keys[i], i))
    return order[:k]


def mmr_select(
    query_sims: np.ndarray,
    doc_sims: np.ndarray,
    domains: Sequence[str],
    k: int,
    lam: float,
    per_domain: int | None = None,
    tie_keys: Sequence[str] | None = None,
) -> list[int]:
    """Indices chosen greedily by Maximal Marginal Relevance, in the order picked.

    Each step picks the candidate ``d`` maximising
    ``lam * query_sims[d] - (1 - lam) * max(doc_sims[d, s] for s already selected)``;
    the first pick is the largest ``query_sims``. ``lam = 1`` is plain top-k. With
    ``per_domain``, a candidate whose domain already has ``per_domain`` picks is skipped.
    Equal scores are broken by ``tie_keys`` (doc ids), then by index. Stops after ``k``
    picks or when no candidate is eligible; empty input gives ``[]``.
    """
    sims = np.asarray(query_sims, dtype=np.float64)
    pair_sims = np.asarray(doc_sims, dtype=np.float64)
    keys = tie_keys if tie_keys is not None else [""] * len(sims)
    selected: list[int] = []
    per_domain_count: Counter[str] = Counter()
    redundancy = np.full(len(sims), -np.inf)  # max similarity to anything selected so far
    while len(selected) < k:
        eligible = [
            i
            for i in range(len(sims))
            if i not in selected
            and (per_domain is None or per_domain_count[domains[i]] < per_domain)
        ]
        if not eligible:
            break
        scores = lam * sims - (1.0 - lam) * redundancy if selected else sims
        pick = min(eligible, key=lambda i: (-scores[i], keys[i], i))
        selected.append(pick)
        per_domain_count[domains[pick]] += 1
        redundancy = np.maximum(redundancy, pair_sims[:, pick])
    return selected


def cite(sentence: str, doc_id: str) -> str:
    """``sentence`` with ``[CIT:doc_id]`` before its closing punctuation (``.`` if none)."""
    body = sentence.rstrip()
    end = "."
    if body and body[-1] in ".!?":
        body, end = body[:-1], body[-1]
    return f"{body} [CIT:{doc_id}]{end}"


def word_count(text: str) -> int:
    """Whitespace-separated words: the example's stand-in for an LLM tokenizer."""
    return len(text.split())


def context_record(passage: Passage, rank: int, score: float) -> dict[str, Any]:
    """One item of a row's ``contexts``: the passage, its 1-based rank and its cosine."""
    return {
        "doc_id": passage.doc_id,
        "title": passage.title,
        "text": passage.text,
        "domain": passage.domain,
        "url": passage.url,
        "rank": rank,
        "score": score,
    }


@dataclass(frozen=True)
class _Sentence:
    passage_rank: int  # 0-based rank of its passage among the retrieved ones
    position: int  # 0-based position in its passage
    doc_id: str
    text: str
    score: float  # cosine to the question


class ExampleRag:
    """The example system: ``answer(question)`` returns a row the plugin can evaluate."""

    def __init__(self, config: RagConfig, corpus: Sequence[Passage], embed: Embed) -> None:
        if not corpus:
            raise ValueError("the corpus is empty")
        self.config = config
        self.corpus = list(corpus)
        self.embed = embed
        self._index: faiss.IndexFlatIP | None = None
        self._passage_vectors = np.empty((0, 0), dtype=np.float32)
        self._sentences: list[list[str]] = []
        self._sentence_vectors: list[np.ndarray] = []

    def build(self) -> None:
        """Build the index now rather than on the first answer, so no answer's latency
        includes it."""
        self._build()

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        return np.ascontiguousarray(self.embed(list(texts)), dtype=np.float32)

    def _build(self) -> faiss.IndexFlatIP:
        """Embed every passage and every passage sentence once, on first use."""
        if self._index is None:
            self._passage_vectors = self._vectors([p.text for p in self.corpus])
            index = faiss.IndexFlatIP(self._passage_vectors.shape[1])
            index.add(self._passage_vectors)
            # Sentences are embedded once too, in corpus order, so a sentence's vector never
            # depends on which other passages a question happened to retrieve.
            self._sentences = [split_sentences(p.text) for p in self.corpus]
            flat = self._vectors([s for sentences in self._sentences for s in sentences])
            bounds = itertools.accumulate((len(s) for s in self._sentences), initial=0)
            self._sentence_vectors = [flat[a:b] for a, b in itertools.pairwise(bounds)]
            self._index = index
        return self._index

    def _retrieve(self, query: np.ndarray) -> list[tuple[int, float]]:
        """Corpus indices and cosines of the ``k`` passages given to the answerer, in rank order."""
        index = self._build()
        fetch_k = min(self.config.fetch_k, len(self.corpus))
        scores, ids = index.search(query[None, :], fetch_k)
        # faiss does not order equal scores by doc id; re-sort so ties are stable and readable.
        candidates = sorted(
            zip(ids[0].tolist(), scores[0].tolist(), strict=True),
            key=lambda c: (-c[1], self.corpus[c[0]].doc_id),
        )
        sims = np.array([score for _, score in candidates])
        doc_ids = [self.corpus[i].doc_id for i, _ in candidates]
        if self.config.mmr_lambda is None and self.config.per_domain is None:
            picks = top_k_select(sims, self.config.k, doc_ids)
        else:
            vectors = self._passage_vectors[[i for i, _ in candidates]]
            picks = mmr_select(
                sims,
                vectors @ vectors.T,
                [self.corpus[i].domain for i, _ in candidates],
                self.config.k,
                1.0 if self.config.mmr_lambda is None else self.config.mmr_lambda,
                self.config.per_domain,
                doc_ids,
            )
        return [candidates[p] for p in picks]

    def retrieve(self, question: str) -> list[tuple[Passage, float]]:
        """The ``k`` passages given to the answerer, with their cosine to the question."""
        query = self._vectors([question])[0]
        return [(self.corpus[i], score) for i, score in self._retrieve(query)]

    def _ranked_sentences(
        self, query: np.ndarray, retrieved: list[tuple[int, float]]
    ) -> list[_Sentence]:
        """Sentences of the retrieved passages, most similar to the question first."""
        sentences = []
        for rank, (i, _) in enumerate(retrieved):
            scores = self._sentence_vectors[i] @ query
            for position, text in enumerate(self._sentences[i]):
                doc_id = self.corpus[i].doc_id
                sentences.append(_Sentence(rank, position, doc_id, text, float(scores[position])))
        return sorted(sentences, key=lambda s: (-s.score, s.passage_rank, s.position))

    def _compose(self, ranked: list[_Sentence]) -> str | None:
        """The extractive answer with citations, or None to abstain."""
        if not ranked or ranked[0].score < self.config.min_similarity:
            return None
        best = ranked[0]
        parts = [cite(best.text, best.doc_id)]
        if len(ranked) > 1:
            second = ranked[1]
            if second.doc_id != best.doc_id and best.score - second.score <= SECOND_SENTENCE_MARGIN:
                parts.append(cite(second.text, second.doc_id))
        return " ".join(parts)

    def answer(self, question: str) -> dict[str, Any]:
        """Retrieve, answer extractively and return the row-shaped result."""
        query = self._vectors([question])[0]
        retrieved = self._retrieve(query)
        composed = self._compose(self._ranked_sentences(query, retrieved))
        answer = IDK_ANSWER if composed is None else composed
        given = [(self.corpus[i], score) for i, score in retrieved]
        prompt_tokens = word_count(question) + sum(word_count(p.text) for p, _ in given)
        contexts = [
            context_record(passage, rank, score) for rank, (passage, score) in enumerate(given, 1)
        ]
        return {
            "answer": answer,
            "contexts": contexts,
            "retrieved": [passage.doc_id for passage, _ in given],
            "tokens": [
                {
                    "stage": "generate",
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": word_count(answer),
                }
            ],
            "telemetry": {
                "rounds": 1,
                "stop_reason": "abstained" if composed is None else "answered",
            },
        }
