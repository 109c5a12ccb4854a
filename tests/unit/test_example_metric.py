"""``numbers_cited``, the example project's metric of its own (the root conftest.py),
declared like a user's and gated in thresholds.toml for ``evals/test_grounding.py``.

Every expected value is counted by hand on the rows written here; the properties are
checked on generated rows with ``pytest_ragmetrics.testing``, as docs/property-testing.md
shows a user.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import Measured, MetricContext
from pytest_ragmetrics.metrics.catalog import in_force
from pytest_ragmetrics.testing import check_metric, measure, strategies
from pytest_ragmetrics.text.sentences import split_sentences

CONTEXTS = [
    {"doc_id": "a", "text": "The bridge was built in 1947 and is 1,200 metres long."},
    {"doc_id": "b", "text": "It cost 4,000 dollars."},
]


def _row(answer: str) -> Row:
    return Row("r1", "rows.jsonl", 1, 0, {"answer": answer, "contexts": CONTEXTS})


def _measure(answer: str) -> Measured:
    return (
        in_force()
        .fixtures["numbers_cited"]
        .compute(_row(answer), MetricContext(Settings(), embed=lambda texts: []))
    )


def test_the_root_conftest_declares_it() -> None:
    """Every run inside the project imports the root conftest.py before thresholds.toml,
    which gates numbers_cited; this one did too: its catalog, in force, holds it."""
    assert "numbers_cited" in in_force().declared
    path, _ = in_force().declared["numbers_cited"].origin.rsplit(":", 1)
    assert path.endswith("conftest.py")
    assert "tests" not in path


@pytest.mark.parametrize(
    ("answer", "value", "cited", "numbers"),
    [
        # 1947 and 1200 (1,200) are in a, which the sentence cites; 5000 is in no context.
        (
            "It was built in 1947 and is 1,200 metres long [CIT:a]. It cost 5,000 [CIT:b].",
            2 / 3,
            2,
            3,
        ),
        # The same answer with [n] markers: a is [1], b is [2].
        ("It was built in 1947 and is 1,200 metres long [1]. It cost 5,000 [2].", 2 / 3, 2, 3),
        # 1947 is in a, but its sentence cites b: not supported.
        ("It was built in 1947 [CIT:b]. It is long [CIT:a].", 0.0, 0, 1),
        # A sentence citing nothing supports none of its numbers.
        ("It was built in 1947.", 0.0, 0, 1),
        # A citation to a context the row does not have resolves to nothing.
        ("It was built in 1947 [CIT:zzz].", 0.0, 0, 1),
        # The markers' digits are no numbers of the answer: no number, score 1.
        ("It is a bridge [2].", 1.0, 0, 0),
        # Both contexts cited by one sentence: 1947 from a, 4000 from b.
        ("Built in 1947 for 4,000 dollars [CIT:a][CIT:b].", 1.0, 2, 2),
    ],
)
def test_a_rows_share_and_its_sufficient_statistics(
    answer: str, value: float, cited: int, numbers: int
) -> None:
    measured = _measure(answer)
    assert measured.values == {"numbers_cited": pytest.approx(value, abs=1e-12)}
    assert measured.breakdowns == {"numbers_cited_stats": {"cited": cited, "numbers": numbers}}


def test_the_evidence_names_the_numbers_not_found() -> None:
    evidence = _measure("Built in 1950 and 1,200 metres long [CIT:a].").evidence
    assert evidence == "1 of 2 number(s) in a context their sentence cites; not found: 1950"


def test_pooled_counts_over_all_numbers_of_the_eval() -> None:
    """Rows with 1 of 2, 0 of 1 and no number: the mean of the rows is (0.5 + 0 + 1) / 3 =
    0.5, the pooled share 1 / 3."""
    sums: dict[str, Any] = {"cited": 1 + 0 + 0, "numbers": 2 + 1 + 0}
    _, reduce = in_force().corpus_stats["numbers_cited"]
    assert reduce(sums, Settings()) == {"pooled": pytest.approx(1 / 3, abs=1e-12)}
    assert reduce({"cited": 0, "numbers": 0}, Settings()) == {"pooled": 1.0}


def test_numbers_cited_keeps_its_properties() -> None:
    """In [0, 1], finite, deterministic, and the same with [CIT:id] and [n] markers, on
    generated rows whose contexts and answers hold numbers and cite (validly or not)."""
    check_metric("numbers_cited")


@settings(max_examples=50, deadline=None)
@given(strategies.contexts())
def test_an_answer_quoting_what_each_sentence_cites_scores_1(contexts: list[Any]) -> None:
    """Every sentence of every context quoted, each citing its context: every number the
    answer writes is in the context its sentence cites."""
    answer = " ".join(
        f"{sentence.text.rstrip('.')} [CIT:{context['doc_id']}]."
        for context in contexts
        for sentence in split_sentences(context["text"])
    )
    row = Row("g1", "<generated>", 1, 0, {"answer": answer, "contexts": contexts})
    measured = measure("numbers_cited", row)
    assert measured.values == {"numbers_cited": 1.0}, measured.evidence
