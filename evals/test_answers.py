"""Answer quality and cost of the example RAG system, one test per logged question.

Run with ``pytest evals/``; the gates in ``thresholds.toml`` decide whether the run passes.
"""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/answers.jsonl")  # relative to this file


def test_answers(row, em, f1, abstain, idk_citation, tokens, latency):
    # By contract an "I don't know" sentence cites nothing: fail the row at once if one does.
    assert idk_citation(row) == 0
    # Recorded for the aggregates that thresholds.toml gates.
    em(row)
    f1(row)
    abstain(row)
    tokens(row)
    latency(row)


def test_grounded(row, overlap, faithfulness, semantic_similarity):
    # Read overlap beside F1: these answers are short factoids ("Canberra [CIT:...]."), and
    # a single name is rarely within tau_sim of a whole paragraph, so overlap stays low
    # while F1 is high. evals/test_grounding.py shows long-form answers that overlap suits.
    overlap(row)
    faithfulness(row)
    semantic_similarity(row)
