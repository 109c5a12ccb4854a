"""Retrieval on real users' questions (the Real-users tier): the URL of the page the
production system showed each user stands for the relevance label.

``data/real_users.sqlite`` (built from ``data/real_users.jsonl`` by
``data/build_sqlite.py``) logs ten questions in ``question_answer``: what was asked,
the pages the retriever returned, and ``confluence_url``, the page shown. That URL is a
proxy, not a judgement over every page: it says which one page was good enough to show.
Three questions ("hi", "thanks!!", "asdf") showed none: their proxy is NULL, so they
cannot be judged. They are skipped and counted (``unjudged``, gated in thresholds.toml),
never scored 0, which would call the retriever wrong where nothing says it was.
"""

import pytest

from pytest_ragmetrics import SqlDataset

pytestmark = pytest.mark.ragmetrics(
    dataset=SqlDataset(
        query="SELECT id, question, confluence_url, retrieved_urls FROM question_answer",
        sqlite="data/real_users.sqlite",
        columns={"retrieved_urls": "retrieved"},
        proxy_relevant="confluence_url",  # relevant = [confluence_url]; NULL: unjudged
    )
)


def test_real_users(row, hit_rate, mrr, ndcg, recall, precision):
    hit_rate(row, k=1)
    hit_rate(row, k=3)
    mrr(row)
    ndcg(row, k=3)
    recall(row, k=3)
    precision(row, k=3)
