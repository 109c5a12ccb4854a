"""Dataset-level views of the example assistant's sessions: the geometry of the retrieved
chunks' embeddings (Tier 0), how often a question could be served from a cache of past
questions and how coherent sessions are (UX), and how much of the knowledge base the
questions reach (sources). Each test takes `rows`, all rows at once, and runs once.
"""

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.ragmetrics(dataset="data/sessions.jsonl")


def test_chunk_space(rows, embedding_space):
    space = embedding_space(rows, field="contexts", k=5)
    # Near-identical chunks waste context window and skew retrieval.
    assert space.min_pairwise_distance > 0.02, space.describe()


def test_user_experience(rows, ux):
    past_questions = (DATA / "faq_cache.txt").read_text(encoding="utf-8").splitlines()
    ux(rows, cache=past_questions, tau=0.85)


def test_knowledge_base_reach(rows, sources):
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as corpus:
        chunk_ids = [json.loads(line)["doc_id"] for line in corpus if line.strip()]
    sources(rows, corpus=chunk_ids, n_topics=8)
