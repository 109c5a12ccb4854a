"""The built-in per-row metrics checked with the helpers metric authors get
(``pytest_ragmetrics.testing.check_metric``): on generated well-formed rows, every value is
finite and within the range its definition states (``metrics.ranges``), the same when
computed twice or on a deep copy of the row, and the same whether the answer cites with
``[CIT:<doc_id>]`` (``citation_format = "cit"``) or ``[n]`` (``"numeric"``). ``trust``
is checked on rows of its own (gold answer groups, ``answers_found`` in every context) and
without the citation-format property: its citations are the Trust-Score reference's
``[n]`` by definition (docs/metrics.md#2-trust-score).

The embedding metrics run with the packaged model (nothing is downloaded); a text's
vector is computed once, as the run's embedding cache does. Left out, and why:

* ``determinism``: it compares the row with its second run (the marker's ``rerun`` file
  or a second live call), which a generated row does not have;
* ``faithfulness_judge``, ``answer_relevance``, ``answer_correctness``, ``e2e_score``,
  ``consistency_score``: each is an LLM judge's verdict, which needs an endpoint.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.catalog import BUILTIN_FIXTURES, FIXTURES
from pytest_ragmetrics.testing import (
    CITATION_FORMAT,
    PROPERTIES,
    check_metric,
    strategies,
)
from pytest_ragmetrics.testing.strategies import as_row
from pytest_ragmetrics.text.citations import strip_citations

# Enough examples to meet IDK answers, invalid citations and empty rankings; few enough
# for the file to take well under a minute on two cores.
EXAMPLES = settings(max_examples=25, deadline=None, derandomize=True)

CHEAP: list[tuple[str, dict[str, Any]]] = [
    ("em", {}),
    ("f1", {}),
    ("wrong_on_answerable", {}),
    ("abstain", {}),
    ("idk_citation", {}),
    ("idk_on_answerable", {}),
    ("tokens", {}),
    ("latency", {}),
    ("rounds", {}),
    ("hit_rate", {"k": 3}),
    ("mrr", {}),
    ("mrr", {"k": 2}),
    ("recall", {"k": 3}),
    ("precision", {"k": 3}),
    ("ndcg", {}),
    ("ndcg", {"k": 3, "gain": "exponential"}),
    ("map", {}),
    ("map", {"k": 2}),
    ("gm_map", {}),
    ("rprec", {}),
    ("bpref", {}),
    ("iprec_at_recall", {"level": 0.0}),
    ("iprec_at_recall", {"level": 0.5}),
    ("num_ret", {}),
    ("num_rel", {}),
    ("num_rel_ret", {}),
    ("retrieval_consistency", {}),
    ("retrieval_consistency", {"k": 2}),
    ("rouge1", {}),
    ("rouge2", {"measure": "precision"}),
    ("rougeL", {"measure": "recall"}),
    ("rougeLsum", {}),
    ("bleu", {}),
    ("chrf", {}),
    ("chrf_pp", {}),
    ("response_exact_match_rate", {}),
    ("judge_pipeline", {}),
    ("f1_short", {}),
    ("em_short", {}),
    ("anchor_coverage", {}),
]
# Every new text costs the model a call: fewer examples for the embedding metrics.
EMBEDDED = settings(EXAMPLES, max_examples=12)
EMBEDDING = [
    "overlap",
    "faithfulness",
    "semantic_similarity",
    "dot_similarity",
    "euclidean_distance",
    "response_semantic_consistency",
]
# A text's embedding compared with itself: these checks found its cosine computed as
# 1.0000000000000002 for many texts, above the [-1, 1] of the definition, until
# metrics.grounding.cosine clamped it. The default rows meet that case only now and then
# (a gold or a repeat equal to the answer), so it is checked on rows built for it, without
# shrinking, which would spend a minute embedding smaller rows.
NO_SHRINK = settings(EMBEDDED, phases=(Phase.explicit, Phase.reuse, Phase.generate))
LEFT_OUT = {
    "determinism",
    "faithfulness_judge",
    "answer_relevance",
    "answer_correctness",
    "e2e_score",
    "consistency_score",
}


def _id(case: tuple[str, dict[str, Any]]) -> str:
    name, options = case
    return "-".join([name, *(f"{key}={value}" for key, value in options.items())])


@pytest.mark.parametrize("case", CHEAP, ids=_id)
def test_cheap_metric_properties(case: tuple[str, dict[str, Any]]) -> None:
    name, options = case
    check_metric(name, options=options, settings=EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", EMBEDDING)
def test_embedding_metric_properties(name: str) -> None:
    assert FIXTURES[name].texts is not None  # it embeds: the packaged model runs
    check_metric(name, settings=EMBEDDED)


def _same_text_everywhere(row: Row) -> Row:
    """The row with its gold and its one repeat the answer's own text."""
    answer = row.answer or ""
    return as_row({**row.data, "gold": strip_citations(answer), "repeats": [answer]}, row.index)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["semantic_similarity", "response_semantic_consistency", "euclidean_distance"]
)
def test_embedding_metrics_of_a_text_and_itself_stay_in_range(name: str) -> None:
    rows = strategies.rows().map(_same_text_everywhere)
    check_metric(name, rows=rows, settings=NO_SHRINK)


@st.composite
def trust_rows(draw: st.DrawFn) -> Row:
    """Rows as the Trust-Score suite reads them: ``[n]`` citations, gold answer groups, and
    in every context a ``title`` and ``answers_found``, one 0 or 1 per group."""
    row = draw(strategies.rows(style="numbered"))
    alias = st.sampled_from(strategies.WORDS + strategies.NUMBERS)
    groups = draw(st.lists(st.lists(alias, min_size=1, max_size=2), min_size=1, max_size=2))
    found = st.lists(st.integers(0, 1), min_size=len(groups), max_size=len(groups))
    contexts = [
        {"title": "doc", **context, "answers_found": draw(found)} for context in row.contexts or ()
    ]
    return as_row({**row.data, "gold": groups, "contexts": contexts}, row.index)


@pytest.mark.slow
def test_trust_properties() -> None:
    checked = [prop for prop in PROPERTIES if prop != CITATION_FORMAT]
    check_metric("trust", rows=trust_rows(), settings=EMBEDDED, properties=checked)


def test_every_built_in_per_row_metric_is_checked_or_left_out_with_a_reason() -> None:
    checked = {name for name, _ in CHEAP} | set(EMBEDDING) | {"trust"}
    assert checked.isdisjoint(LEFT_OUT)
    assert sorted(BUILTIN_FIXTURES - checked - LEFT_OUT) == []
