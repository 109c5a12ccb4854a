"""The example RAG system in evals/example_rag.py, on hand-made vectors (no real model)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]


def _load_example_rag() -> ModuleType:
    # evals/ is not a package: load the module from its path. dataclasses needs the module
    # registered in sys.modules while the class bodies run.
    path = ROOT / "evals" / "example_rag.py"
    spec = importlib.util.spec_from_file_location("example_rag", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_rag"] = module
    spec.loader.exec_module(module)
    return module


rag = _load_example_rag()

# ---------------------------------------------------------------------------------------------
# mmr_select and top_k_select on hand-made unit vectors

# q = (1, 0, 0); a = (.8, .6, 0), b = (.6, .8, 0), c = (.6, 0, .8), d = (0, 1, 0)
QUERY_SIMS = np.array([0.8, 0.6, 0.6, 0.0])
DOC_SIMS = np.array(
    [
        # a     b     c     d
        [1.00, 0.96, 0.48, 0.60],  # a
        [0.96, 1.00, 0.36, 0.80],  # b
        [0.48, 0.36, 1.00, 0.00],  # c
        [0.60, 0.80, 0.00, 1.00],  # d
    ]
)


def test_mmr_picks_by_hand() -> None:
    # lam = 0.5, score = 0.5 * sim(q, x) - 0.5 * max sim(x, selected)
    # pick 1: a, the most similar to q (0.8)
    # pick 2: b: .3 - .48 = -.18   c: .3 - .24 = .06   d: 0 - .3 = -.3   -> c
    # pick 3: b: .3 - max(.96, .36) = -.18   d: 0 - .5 * max(.6, 0) = -.3  -> b
    picks = rag.mmr_select(QUERY_SIMS, DOC_SIMS, ["x"] * 4, k=3, lam=0.5)
    assert picks == [0, 2, 1]
    # plain top-k takes the near-duplicate b before c (equal similarity, lower index)
    assert rag.top_k_select(QUERY_SIMS, 3) == [0, 1, 2]


def test_mmr_lambda_zero_still_starts_with_the_most_similar() -> None:
    # pick 1: a (0.8). Then only redundancy counts: b -.96, c -.48, d -.6 -> c, then
    # b: -max(.96, .36) = -.96, d: -max(.6, 0) = -.6 -> d
    assert rag.mmr_select(QUERY_SIMS, DOC_SIMS, ["x"] * 4, k=3, lam=0.0) == [0, 2, 3]


def test_mmr_with_lambda_one_is_top_k() -> None:
    sims = np.array([0.2, 0.9, 0.5, 0.7])
    everything_redundant = np.ones((4, 4))
    assert rag.top_k_select(sims, 3) == [1, 3, 2]
    assert rag.mmr_select(sims, everything_redundant, ["x"] * 4, k=3, lam=1.0) == [1, 3, 2]


def test_mmr_respects_the_per_domain_cap() -> None:
    sims = np.array([0.9, 0.8, 0.7, 0.6])
    no_redundancy = np.eye(4)
    domains = ["billing", "billing", "billing", "sync"]
    # Without a cap the scores keep the similarity order: 0, 1, 2.
    assert rag.mmr_select(sims, no_redundancy, domains, k=3, lam=0.5) == [0, 1, 2]
    # With 2 per domain the third billing passage is skipped for the sync one.
    assert rag.mmr_select(sims, no_redundancy, domains, k=3, lam=0.5, per_domain=2) == [0, 1, 3]
    # Asking for 4 gives only 3: the remaining candidate is over its domain's cap.
    assert rag.mmr_select(sims, no_redundancy, domains, k=4, lam=0.5, per_domain=2) == [0, 1, 3]


def test_ties_are_broken_by_doc_id_then_index() -> None:
    sims = np.array([0.5, 0.5, 0.5])
    doc_ids = ["kb-3", "kb-1", "kb-2"]
    assert rag.top_k_select(sims, 3, doc_ids) == [1, 2, 0]
    assert rag.top_k_select(sims, 3) == [0, 1, 2]
    no_redundancy = np.eye(3)
    assert rag.mmr_select(sims, no_redundancy, ["x"] * 3, 3, 0.45, tie_keys=doc_ids) == [1, 2, 0]
    assert rag.mmr_select(sims, no_redundancy, ["x"] * 3, 3, 0.45) == [0, 1, 2]


def test_empty_candidates_select_nothing() -> None:
    assert rag.mmr_select(np.zeros(0), np.zeros((0, 0)), [], k=3, lam=0.45) == []
    assert rag.top_k_select(np.zeros(0), 3) == []


# ---------------------------------------------------------------------------------------------
# small pieces


def test_domain_is_the_first_path_segment() -> None:
    assert rag.domain_of("https://docs.lumen.example/billing/plans") == "billing"
    assert rag.domain_of("https://docs.lumen.example/") == ""


@pytest.mark.parametrize(
    ("sentence", "cited"),
    [
        ("Personal costs $9.99 per month.", "Personal costs $9.99 per month [CIT:kb-002]."),
        ("Is it free?", "Is it free [CIT:kb-002]?"),
        ("No final stop", "No final stop [CIT:kb-002]."),
    ],
)
def test_cite_puts_the_marker_before_the_closing_punctuation(sentence: str, cited: str) -> None:
    assert rag.cite(sentence, "kb-002") == cited


def test_split_sentences_keeps_decimals_together() -> None:
    text = "Encrypted with TLS 1.2 or later. Keys are separate! Why? Because."
    assert rag.split_sentences(text) == [
        "Encrypted with TLS 1.2 or later.",
        "Keys are separate!",
        "Why?",
        "Because.",
    ]


def test_config_fingerprint_and_validation() -> None:
    assert rag.MMR.as_dict() == {
        "name": "mmr",
        "k": 4,
        "fetch_k": 20,
        "mmr_lambda": 0.45,
        "per_domain": 2,
        "min_similarity": rag.MMR.min_similarity,
    }
    assert rag.TOPK.mmr_lambda is None
    assert rag.TOPK.per_domain is None
    with pytest.raises(ValueError, match="k <= fetch_k"):
        rag.RagConfig("bad", k=5, fetch_k=4)
    with pytest.raises(ValueError, match="mmr_lambda"):
        rag.RagConfig("bad", mmr_lambda=1.5)
    with pytest.raises(ValueError, match="per_domain"):
        rag.RagConfig("bad", per_domain=0)


# ---------------------------------------------------------------------------------------------
# ExampleRag with a fake embedding: every text has a hand-made 4-d unit vector

S11 = "Personal costs $9.99 per month."
S12 = "Family costs $14.99 per month."
S21 = "Files over 250 GB are skipped."
S31 = "Refunds take 14 days."
P1_TEXT = f"{S11} {S12}"

ASK_PERSONAL = "How much is Personal?"  # (1, 0, 0, 0)
ASK_OFF_TOPIC = "Who founded the company?"  # (.5, .5, .5, -.5)
ASK_BOTH = "What about prices and refunds?"  # (.7, .7, .1, .1), norm 1
ASK_MOSTLY_PRICE = "Price, or maybe refunds?"  # (.8, .6, 0, 0)

R = float(np.sqrt(0.5))
VECTORS: dict[str, tuple[float, float, float, float]] = {
    S11: (1, 0, 0, 0),
    S12: (0, 0, 0, 1),
    S21: (0, 0, 1, 0),  # also passage 2's text
    S31: (0, 1, 0, 0),  # also passage 3's text
    P1_TEXT: (R, 0, 0, R),
    ASK_PERSONAL: (1, 0, 0, 0),
    ASK_OFF_TOPIC: (0.5, 0.5, 0.5, -0.5),
    ASK_BOTH: (0.7, 0.7, 0.1, 0.1),
    ASK_MOSTLY_PRICE: (0.8, 0.6, 0, 0),
}


class FakeEmbed:
    """Looks every text up in VECTORS and counts the texts it was asked for."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([VECTORS[t] for t in texts], dtype=np.float32)


def corpus() -> list[Any]:
    return [
        rag.Passage("kb-1", "Plans", "https://docs.x/billing/plans", P1_TEXT, "billing"),
        rag.Passage("kb-2", "Limits", "https://docs.x/sync/limits", S21, "sync"),
        rag.Passage("kb-3", "Refunds", "https://docs.x/billing/refunds", S31, "billing"),
    ]


def system(min_similarity: float = 0.6, **overrides: Any) -> Any:
    config = rag.RagConfig("topk", k=2, fetch_k=3, min_similarity=min_similarity, **overrides)
    return rag.ExampleRag(config, corpus(), FakeEmbed())


def test_answer_cites_the_best_sentence() -> None:
    # Passage cosines: kb-1 .707, kb-2 0, kb-3 0 -> kb-1, then kb-2 (tie with kb-3, by doc_id).
    # Sentences: S11 1.0, S12 0, S21 0 -> S11; S12 is from the same passage and far below.
    row = system().answer(ASK_PERSONAL)
    assert row["answer"] == "Personal costs $9.99 per month [CIT:kb-1]."
    assert row["retrieved"] == ["kb-1", "kb-2"]
    assert [c["rank"] for c in row["contexts"]] == [1, 2]
    assert [c["domain"] for c in row["contexts"]] == ["billing", "sync"]
    assert row["contexts"][0]["score"] == pytest.approx(R, abs=1e-6)
    assert row["contexts"][1]["score"] == pytest.approx(0.0, abs=1e-6)
    assert row["contexts"][0]["url"] == "https://docs.x/billing/plans"
    assert row["telemetry"] == {"rounds": 1, "stop_reason": "answered"}
    # prompt: question 4 words + kb-1 10 words + kb-2 6 words; completion: 6 words
    assert row["tokens"] == [{"stage": "generate", "prompt_tokens": 20, "completion_tokens": 6}]


def test_abstains_below_min_similarity() -> None:
    # Passage cosines: kb-1 .5*.707 - .5*.707 = 0, kb-2 .5, kb-3 .5 -> kb-2, kb-3.
    # Best sentence cosine .5 < .6 -> "I don't know." without a citation.
    row = system().answer(ASK_OFF_TOPIC)
    assert row["answer"] == "I don't know."
    assert "[CIT:" not in row["answer"]
    assert row["retrieved"] == ["kb-2", "kb-3"]
    assert row["telemetry"] == {"rounds": 1, "stop_reason": "abstained"}
    # prompt: 4 + 6 + 4 words; completion: "I don't know." is 3 words
    assert row["tokens"] == [{"stage": "generate", "prompt_tokens": 14, "completion_tokens": 3}]


def test_a_best_sentence_at_min_similarity_is_answered() -> None:
    # Same question with min_similarity .5: S21 and S31 both have cosine exactly .5; S21's
    # passage ranks first (doc id), and S31 is from another passage, 0 below -> both cited.
    row = system(min_similarity=0.5).answer(ASK_OFF_TOPIC)
    assert row["answer"] == (
        "Files over 250 GB are skipped [CIT:kb-2]. Refunds take 14 days [CIT:kb-3]."
    )


def test_runner_up_from_another_passage_within_margin_is_added() -> None:
    # Passage cosines: kb-3 .7, kb-1 (.7 + .1) * .707 = .566, kb-2 .1 -> kb-3, kb-1.
    # Sentences: S31 .7 (rank 1), S11 .7 (rank 2), S12 .1 -> S31 then S11, 0 apart.
    row = system().answer(ASK_BOTH)
    assert row["retrieved"] == ["kb-3", "kb-1"]
    assert row["answer"] == (
        "Refunds take 14 days [CIT:kb-3]. Personal costs $9.99 per month [CIT:kb-1]."
    )


def test_runner_up_beyond_margin_is_left_out() -> None:
    # Passage cosines: kb-3 .6, kb-1 .8 * .707 = .566 -> kb-3, kb-1.
    # Sentences: S11 .8, S31 .6 -> .2 apart, more than .05: only S11, from the second passage.
    row = system().answer(ASK_MOSTLY_PRICE)
    assert row["retrieved"] == ["kb-3", "kb-1"]
    assert row["answer"] == "Personal costs $9.99 per month [CIT:kb-1]."


def test_mmr_config_applies_the_domain_cap() -> None:
    # Candidates kb-3 .6, kb-1 .566, kb-2 0. With one passage per domain kb-1 (billing, like
    # kb-3) is skipped, so kb-2 is second; the answer can only come from S31 (.6) or S21 (0).
    mmr = system(min_similarity=0.5, mmr_lambda=0.45, per_domain=1)
    row = mmr.answer(ASK_MOSTLY_PRICE)
    assert row["retrieved"] == ["kb-3", "kb-2"]
    assert row["answer"] == "Refunds take 14 days [CIT:kb-3]."
    assert [p.doc_id for p, _ in mmr.retrieve(ASK_MOSTLY_PRICE)] == ["kb-3", "kb-2"]


def test_builds_lazily_and_embeds_the_corpus_once() -> None:
    embed = FakeEmbed()
    example = rag.ExampleRag(rag.RagConfig("topk", k=2, fetch_k=3), corpus(), embed)
    assert embed.calls == []
    example.answer(ASK_PERSONAL)
    example.answer(ASK_BOTH)
    assert embed.calls == [
        [ASK_PERSONAL],
        [P1_TEXT, S21, S31],  # passages, on first use
        [S11, S12, S21, S31],  # their sentences, on first use
        [ASK_BOTH],
    ]


def test_answers_are_deterministic() -> None:
    first, second = system(), system()
    questions = [ASK_PERSONAL, ASK_OFF_TOPIC, ASK_BOTH, ASK_MOSTLY_PRICE]
    runs = [[s.answer(q) for q in questions] for s in (first, first, second)]
    dumps = [json.dumps(run, sort_keys=True) for run in runs]
    assert dumps[0] == dumps[1] == dumps[2]


def test_an_empty_corpus_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        rag.ExampleRag(rag.TOPK, [], FakeEmbed())


# ---------------------------------------------------------------------------------------------
# the shipped data files (read only, no model)


def test_load_corpus_reads_the_project_corpus() -> None:
    passages = rag.load_corpus(ROOT / "evals" / "data" / "corpus.jsonl")
    assert len(passages) == 120
    domains = {p.domain for p in passages}
    assert len(domains) == 8
    assert all(sum(p.domain == d for p in passages) == 15 for d in domains)
    assert passages[0].domain == "billing"


def test_live_questions_are_well_formed() -> None:
    doc_ids = {p.doc_id for p in rag.load_corpus(ROOT / "evals" / "data" / "corpus.jsonl")}
    lines = (ROOT / "evals" / "data" / "live_questions.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["id"] for r in rows] == [f"lq-{i:02d}" for i in range(1, 43)]
    for r in rows:
        assert set(r) == {"id", "question", "gold", "relevant", "answerable"}
        assert set(r["relevant"]) <= doc_ids
        assert bool(r["relevant"]) == r["answerable"], r["id"]
    assert sum(not r["answerable"] for r in rows) == 6
