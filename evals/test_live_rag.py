"""A live eval: the plugin calls two configurations of a RAG system per question, scores
their answers and compares them side by side.

The system is ``example_rag.py``, a small offline EXAMPLE (faiss retrieval over the
bundled corpus and an extractive answerer that cites ``[CIT:doc_id]``) standing in for a
real one. ``topk`` gives the answerer the 4 passages nearest the question; ``mmr`` picks
them by Maximal Marginal Relevance (lambda 0.45) with at most two per domain. ``baseline``
in a gate rule means ``topk``'s aggregate in the same run.

The outputs are cached by (system fingerprint, question): the first run calls each
system once per question, a re-run calls nothing until a configuration, the corpus or
the version below changes (``--ragmetrics-refresh`` calls anew).
``--ragmetrics-save-outputs outputs.jsonl`` keeps the outputs as a recorded dataset.
"""

import hashlib
from pathlib import Path

import pytest
from example_rag import MMR, TOPK, ExampleRag, load_corpus

from pytest_ragmetrics import LiveSystem

pytestmark = pytest.mark.ragmetrics(
    dataset="data/live_questions.jsonl", systems=["topk", "mmr"], compare_to="topk"
)
CORPUS = Path(__file__).parent / "data" / "corpus.jsonl"
VERSION = "1"  # bump when example_rag.py changes what it answers


@pytest.fixture(scope="session")
def ragmetrics_system(ragmetrics_embed):
    """The systems under test. The fingerprint covers everything an answer depends on: the
    code version, the configuration, the corpus and the embedding model, so the cache never
    serves outputs of another system."""
    corpus = load_corpus(CORPUS)
    corpus_sha = hashlib.sha256(CORPUS.read_bytes()).hexdigest()
    systems = []
    for config in (TOPK, MMR):
        rag = ExampleRag(config, corpus, ragmetrics_embed)
        rag.build()  # the index, before any answer is timed
        fingerprinted = {
            **config.as_dict(),
            "corpus_sha256": corpus_sha,
            "embedding_model": ragmetrics_embed.model,
        }
        systems.append(LiveSystem(config.name, rag.answer, VERSION, fingerprinted))
    return systems


def test_grounded(row, overlap, faithfulness, idk_citation, anchor_coverage):
    assert idk_citation(row) == 0
    overlap(row)
    faithfulness(row)
    anchor_coverage(row)


def test_correct(row, f1, f1_short, abstain, wrong_on_answerable, idk_on_answerable):
    f1(row)
    f1_short(row)
    abstain(row)
    wrong_on_answerable(row)
    idk_on_answerable(row)


def test_retrieval(row, hit_rate, mrr, ndcg):
    if row.answerable:  # an unanswerable question has no relevant passage to find
        hit_rate(row, k=4)
        mrr(row)
        ndcg(row)


def test_cost(row, tokens, latency, determinism):
    tokens(row)
    latency(row)
    assert determinism(row) == 1  # a second call gives the same answer and citations
