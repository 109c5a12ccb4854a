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
