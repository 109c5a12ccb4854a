"""The logged answers of evals/test_answers.py, read from a SQL database instead of JSONL:
where a production system's log usually lives.

``data/answers.sqlite`` is built from ``data/answers.jsonl`` by ``data/build_sqlite.py``,
so this eval's aggregates equal test_answers.py's (tests/integration/test_sql_example.py
checks it). A SQLite file carries no secret, so its path is written here; a database on a
server is named by the environment variable that holds its URL, ``url_env="RAG_DB"``,
never by the URL (docs/datasets.md#sql).
"""

import pytest

from pytest_ragmetrics import SqlDataset

pytestmark = pytest.mark.ragmetrics(
    dataset=SqlDataset(
        query=(
            "SELECT qid, question, answer, gold_json, contexts, answerable, tokens, "
            "latency_ms, system FROM qa_log"
        ),
        sqlite="data/answers.sqlite",  # relative to this file
        id_column="qid",  # rows are ordered by it, so every xdist worker collects the same
        columns={"gold_json": "gold"},  # a column's field, where the names differ
    )
)


def test_answers_sql(row, em, f1, abstain, idk_citation, tokens, latency):
    assert idk_citation(row) == 0
    em(row)
    f1(row)
    abstain(row)
    tokens(row)
    latency(row)
