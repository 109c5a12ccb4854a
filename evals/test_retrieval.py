"""Retrieval quality of the example assistant (Tier 1): is the right chunk found, and high?

Each row is one logged retrieval: the ranked chunk ids (`retrieved`), graded relevance
judgements (`relevant`, 3 = answers the question, 0 = judged not relevant) and two further
retrievals of the same question (`retrieved_repeats`). The numbers equal trec_eval's; the
same metrics over a whole run dict are `pytest_ragmetrics.metrics.retrieval.evaluate`.
"""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/retrieval.jsonl")


def test_ranking(row, hit_rate, mrr, recall, precision, ndcg):
    for k in (1, 5, 10):
        hit_rate(row, k=k)  # recorded as hit_rate@1, hit_rate@5, hit_rate@10
    mrr(row)
    for k in (1, 3, 5, 10):
        recall(row, k=k)
        precision(row, k=k)
    ndcg(row, k=5)
    ndcg(row, k=10)
    ndcg(row, k=10, gain="exponential")  # recorded as ndcg_exp@10


def test_stable(row, retrieval_consistency):
    # The same question must retrieve the same top 5 every time.
    retrieval_consistency(row, k=5)
