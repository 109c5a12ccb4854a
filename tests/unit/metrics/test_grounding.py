"""Overlap, faithfulness and similarity to gold on hand-made vectors (METRICS.md §1, §4).

The embedder here is a lookup table of 2-d vectors at chosen angles, so every cosine is
known exactly: cos 0° = 1, cos 60° = 0.5, cos 90° = 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.embeddings.model import Vectors
from pytest_ragmetrics.metrics import cosine, faithfulness, overlap, similarity_to_gold
from pytest_ragmetrics.metrics.grounding import (
    ScoredOverlap,
    claims,
    cosines,
    grounding_plan,
    judge_claims,
    overlap_texts,
    overlaps,
    plan_similarities,
)
from pytest_ragmetrics.text.idk import IdkMatcher


def at(degrees: float) -> Vectors:
    radians = math.radians(degrees)
    return np.array([math.cos(radians), math.sin(radians)], np.float32)


CONTEXTS = [
    {"doc_id": "d1", "text": "Paris is the capital of France."},
    {"doc_id": "d2", "text": "Berlin is the capital of Germany."},
]
VECTORS = {
    "Paris is the capital of France.": at(0),
    "Berlin is the capital of Germany.": at(90),
    "Paris is the French capital.": at(10),  # cos 0.985 with d1
    "France is in Europe.": at(60),  # cos 0.5 with d1
    "Berlin is large.": at(30),  # cos 0.5 with d2
}


class Table:
    """An ``embed`` that looks texts up and remembers what it was asked for."""

    def __init__(self, vectors: dict[str, Vectors]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return np.stack([self.vectors[text] for text in texts])


def test_supported_and_unsupported_sentences_with_their_reasons() -> None:
    answer = (
        "Paris is the French capital [CIT:d1]. France is in Europe [CIT:d1]. "
        "Berlin is large [CIT:d2]."
    )
    result = overlap(answer, CONTEXTS, Table(VECTORS), tau_sim=0.65)
    assert (result.supported, result.claims) == (1, 3)
    assert result.score == pytest.approx(1 / 3)
    first, second, third = result.sentences
    assert first.supported
    assert first.similarity == pytest.approx(math.cos(math.radians(10)))
    assert not second.supported
    assert second.similarity == pytest.approx(0.5)
    assert "cosine 0.500 < tau_sim 0.65" in second.reason
    assert not third.supported
    assert third.similarity == pytest.approx(0.5, abs=1e-6)
    assert "[UNSUPPORTED] 'France is in Europe [CIT:d1].'" in result.evidence()


def test_tau_sim_is_the_decision_threshold() -> None:
    answer = "France is in Europe [CIT:d1]."  # cos 0.5 exactly (float32 vectors)
    assert overlap(answer, CONTEXTS, Table(VECTORS), tau_sim=0.49).score == 1.0
    assert overlap(answer, CONTEXTS, Table(VECTORS), tau_sim=0.51).score == 0.0


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Paris is the French capital.", "no citation"),
        ("Paris is the French capital [CIT:d1][CIT:d2].", "2 citations"),
        ("Paris is the French capital [1, 2].", "2 citations"),
        ("Paris is the French capital [CIT:d9].", "names no context"),
        ("Paris is the French capital [3].", "names no context"),
    ],
)
def test_a_supported_sentence_carries_exactly_one_valid_citation(
    sentence: str, reason: str
) -> None:
    table = Table(VECTORS)
    result = overlap(sentence, CONTEXTS, table)
    assert (result.score, result.claims) == (0.0, 1)
    assert reason in result.sentences[0].reason
    assert table.calls == []  # settled without embedding anything


def test_the_same_citation_twice_is_one_citation() -> None:
    result = overlap("Paris is the French capital [CIT:d1] [CIT:d1].", CONTEXTS, Table(VECTORS))
    assert result.score == 1.0


def test_numeric_citation_resolves_to_the_nth_context() -> None:
    table = Table(VECTORS)
    assert overlap("Paris is the French capital [1].", CONTEXTS, table).score == 1.0
    assert table.calls == [["Paris is the French capital.", "Paris is the capital of France."]]
    assert overlap("Paris is the French capital [2].", CONTEXTS, Table(VECTORS)).score == 0.0


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before() -> None:
    answer = "Paris is the French capital. [CIT:d1] Berlin is large. [CIT:d2]"
    result = overlap(answer, CONTEXTS, Table(VECTORS))
    assert [v.citations for v in result.sentences] == [("d1",), ("d2",)]
    assert result.score == 0.5


def test_idk_sentences_are_dropped_from_the_claims() -> None:
    answer = "Paris is the French capital [CIT:d1]. I don't know the rest."
    result = overlap(answer, CONTEXTS, Table(VECTORS))
    assert (result.supported, result.claims, result.score) == (1, 1, 1.0)
    assert result.sentences[1].reason == "IDK sentence, dropped"
    assert not result.sentences[1].claim


@pytest.mark.parametrize("answer", ["I don't know.", "", "   ", "Saya tidak tahu."])
def test_an_answer_without_claims_scores_zero_and_abstains(answer: str) -> None:
    result = overlap(answer, CONTEXTS, Table(VECTORS))
    assert (result.score, result.claims, result.abstains) == (0.0, 0, True)
    assert "no claim sentence" in result.evidence()


def test_a_sentence_of_markers_only_is_not_a_claim() -> None:
    result = overlap("[CIT:d2]\nParis is the French capital [CIT:d1].", CONTEXTS, Table(VECTORS))
    assert (result.claims, result.score) == (1, 1.0)
    assert result.sentences[0].reason == "only citation markers, dropped"


def test_overlap_texts_lists_exactly_what_overlap_embeds() -> None:
    answer = "Paris is the French capital [CIT:d1]. Berlin is large. I don't know."
    table = Table(VECTORS)
    overlap(answer, CONTEXTS, table)
    assert table.calls == [overlap_texts(claims(answer, CONTEXTS))]
    assert table.calls[0] == ["Paris is the French capital.", "Paris is the capital of France."]


@pytest.mark.parametrize(
    ("overlap_score", "abstains", "answerable", "expected"),
    [
        (0.0, True, True, 0.0),  # abstaining on an answerable question
        (0.0, True, None, 0.0),  # unknown answerability counts as answerable
        (0.0, True, False, 1.0),  # a correct abstention
        (0.5, False, True, 0.8),  # 0.6 + 0.4 * 0.5
        (0.0, False, False, 0.6),  # answering anyway, nothing supported
        (1.0, False, None, 1.0),  # min(1.0, 0.6 + 0.4)
    ],
)
def test_faithfulness_fallback_rule(
    overlap_score: float, abstains: bool, answerable: bool | None, expected: float
) -> None:
    assert faithfulness(overlap_score, abstains, answerable).score == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # dot / (norm * norm) rounds to 1.0000000000000002 and -1.0000000000000002 here.
        ([0.02, 0.81, 0.91], [0.02, 0.81, 0.91], 1.0),
        ([-0.5, -0.9], [0.5, 0.9], -1.0),
    ],
)
def test_cosine_of_parallel_vectors_stays_within_its_definition(
    a: list[float], b: list[float], expected: float
) -> None:
    x, y = np.asarray(a), np.asarray(b)
    unclamped = float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))
    assert abs(unclamped) > 1  # the rounding this guards against
    assert cosine(x, y) == expected


def test_cosine_of_a_zero_vector_is_an_error_not_nan() -> None:
    with pytest.raises(ValueError, match="zero vector"):
        cosine(np.zeros(2, np.float32), at(0))


@pytest.mark.parametrize("dim", [2, 3, 384, 1000])
def test_cosines_of_many_pairs_are_cosine_bit_for_bit(dim: int) -> None:
    """The pairs at once give each pair's float exactly: the decision at tau_sim and the
    similarity in the report cannot change with how many sentences are scored together."""
    rng = np.random.default_rng(dim)
    left = rng.standard_normal((300, dim)).astype(np.float32)
    right = (left + rng.standard_normal((300, dim)) * rng.uniform(0, 3, (300, 1))).astype(
        np.float32
    )
    right[:3] = left[:3] * np.float32(2.5)  # parallel: clamped to 1, as cosine does
    right[3] = -left[3]
    expected = [cosine(x, y) for x, y in zip(left, right, strict=True)]
    assert cosines(left, right) == expected
    assert cosines(left[::-1], right[::-1]) == expected[::-1]
    assert cosines(left[5:6], right[5:6]) == expected[5:6]


def test_cosines_refuse_a_zero_vector_and_mismatched_stacks() -> None:
    with pytest.raises(ValueError, match="zero vector"):
        cosines(np.stack([at(0), np.zeros(2, np.float32)]), np.stack([at(0), at(90)]))
    with pytest.raises(ValueError, match="one shape"):
        cosines(np.stack([at(0), at(90)]), at(0)[None, :])
    assert cosines(np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)) == []


def test_judging_claims_needs_one_similarity_per_measured_claim() -> None:
    claim_list = claims("Paris is the French capital [CIT:d1]. Berlin is large.", CONTEXTS)
    result = judge_claims(claim_list, [0.7], 0.65)
    assert (result.score, result.supported, result.claims) == (0.5, 1, 2)
    with pytest.raises(ValueError, match="2 similarities for 1 measured claims"):
        judge_claims(claim_list, [0.7, 0.1], 0.65)


ANSWERS = [
    ("Paris is the French capital [CIT:d1]. France is in Europe [CIT:d1].", CONTEXTS),
    ("I don't know.", CONTEXTS),
    ("Berlin is large [2]. Paris is the French capital [1][2].", CONTEXTS),
    ("Berlin is large [CIT:d2].", None),
]


def test_overlaps_of_many_answers_equal_each_answers_overlap() -> None:
    table = Table(VECTORS)
    together = overlaps(ANSWERS, table, tau_sim=0.6)
    assert len(table.calls) == 1  # one embed of every distinct text
    assert sorted(table.calls[0]) == sorted(set(table.calls[0]))
    alone = [overlap(answer, contexts, Table(VECTORS), 0.6) for answer, contexts in ANSWERS]
    assert together == alone
    # hand-computed: cos 10 deg >= 0.6 and cos 60 deg < 0.6; IDK; cos 60 deg < 0.6 and
    # two citations; the citation names no context
    assert [(o.supported, o.claims) for o in together] == [(1, 2), (0, 0), (0, 2), (0, 1)]


def row_overlaps(rows: list[Row], embed: object) -> list[ScoredOverlap | None]:
    """Every row of ``rows`` scored at once, as the prepare step scores a test's rows."""
    plan = grounding_plan([(row, True) for row in rows], SETTINGS)  # type: ignore[arg-type]
    return plan.score(plan_similarities(plan, embed), SETTINGS.tau_sim)  # type: ignore[arg-type]


def test_row_overlaps_leave_rows_without_answer_or_contexts_to_error_when_run() -> None:
    rows = [
        Row("r1", "rows.jsonl", 1, 0, {"answer": ANSWERS[0][0], "contexts": CONTEXTS}),
        Row("r2", "rows.jsonl", 2, 1, {"answer": "Paris is the French capital [CIT:d1]."}),
    ]
    first, second = row_overlaps(rows, Table(VECTORS))
    assert first is not None
    assert first.overlap == overlap(ANSWERS[0][0], CONTEXTS, Table(VECTORS), 0.6)
    assert (first.answer, first.contexts) == (ANSWERS[0][0], CONTEXTS)
    assert second is None


SETTINGS = SimpleNamespace(tau_sim=0.6, idk_matcher=IdkMatcher(), citations="auto")


def test_row_overlaps_equal_each_rows_own_overlap() -> None:
    rows = [
        Row(f"r{n}", "rows.jsonl", n, n, {"answer": answer, "contexts": contexts})
        for n, (answer, contexts) in enumerate(ANSWERS)
    ]
    table = Table(VECTORS)
    scored = row_overlaps(rows, table)
    assert len(table.calls) == 1
    alone = [overlap(answer, contexts, Table(VECTORS), 0.6) for answer, contexts in ANSWERS]
    assert [entry.overlap if entry else None for entry in scored] == alone
    assert [entry.overlap.evidence() for entry in scored if entry] == [o.evidence() for o in alone]


def test_a_row_whose_scoring_raises_is_left_out_and_the_others_are_scored() -> None:
    zero = "A zero vector [CIT:d1]."  # no direction: its cosine is an error
    table = Table({**VECTORS, "A zero vector.": np.zeros(2, np.float32)})
    answers: list[object] = [
        ANSWERS[0][0],
        zero,  # spoils the batch it is scored in
        ANSWERS[2][0],
        None,  # not an answer overlap can read
    ]
    rows = [
        Row(f"r{n}", "rows.jsonl", n, n, {"answer": answer, "contexts": CONTEXTS})
        for n, answer in enumerate(answers)
    ]
    rows.append(Row("r4", "rows.jsonl", 4, 4, {"answer": zero, "contexts": [{"text": "x"}]}))
    scored = row_overlaps(rows, table)
    assert [index for index, result in enumerate(scored) if result is None] == [1, 3, 4]
    first, third = scored[0], scored[2]
    assert first is not None
    assert third is not None
    assert first.overlap == overlap(ANSWERS[0][0], CONTEXTS, Table(VECTORS), 0.6)
    assert third.overlap == overlap(ANSWERS[2][0], CONTEXTS, Table(VECTORS), 0.6)
    # ... and each left-out row fails as it would have, when its own fixture scores it
    with pytest.raises(ValueError, match="zero vector"):
        overlap(zero, CONTEXTS, table, 0.6)
    with pytest.raises(KeyError, match="doc_id"):
        overlap(zero, [{"text": "x"}], table, 0.6)


def test_an_error_no_malformed_row_raises_is_a_bug_and_propagates() -> None:
    """Only what a bad row raises leaves a row to its fixture; anything else would turn
    a bug into a prepare step that silently scored nothing."""

    def broken(texts: object) -> object:
        raise RuntimeError("a bug in the lookup")

    rows = [Row("r0", "rows.jsonl", 0, 0, {"answer": ANSWERS[0][0], "contexts": CONTEXTS})]
    with pytest.raises(RuntimeError, match="a bug in the lookup"):
        row_overlaps(rows, broken)


def test_prepared_overlaps_leave_out_abstaining_rows_only_faithfulness_takes() -> None:
    idk = "I don't know."
    rows = [
        Row("r0", "rows.jsonl", 0, 0, {"answer": ANSWERS[0][0], "contexts": CONTEXTS}),
        Row("r1", "rows.jsonl", 1, 1, {"answer": idk, "contexts": CONTEXTS}),
        Row("r2", "rows.jsonl", 2, 2, {"answer": idk, "contexts": CONTEXTS}),
        Row("r3", "rows.jsonl", 3, 3, {"answer": ANSWERS[0][0], "contexts": CONTEXTS}),
        Row("r4", "rows.jsonl", 4, 4, {"contexts": CONTEXTS}),  # no answer
    ]
    takes_overlap = [True, True, False, False, False]
    plan = grounding_plan(list(zip(rows, takes_overlap, strict=True)), SETTINGS)  # type: ignore[arg-type]
    scored = plan.score(plan_similarities(plan, Table(VECTORS)), SETTINGS.tau_sim)
    prepared = [(row, result) for row, result in zip(plan.rows, scored, strict=True) if result]
    # r2 abstains and only faithfulness is taken on it: faithfulness needs no overlap;
    # r4 has no answer: only its fixture can say so
    assert [row.id for row in plan.rows] == ["r0", "r1", "r3"]
    assert [row.id for row, _ in prepared] == ["r0", "r1", "r3"]
    by_id = {row.id: result for row, result in prepared}
    assert by_id["r1"].overlap.abstains
    assert by_id["r3"].overlap == overlap(ANSWERS[0][0], CONTEXTS, Table(VECTORS), 0.6)


def test_similarity_to_gold_is_best_over_aliases() -> None:
    # Unnormalised vectors so cosine, dot and distance all differ:
    # answer (2, 0); gold A (0, 1): cos 0, dot 0, distance sqrt(5);
    # gold B (3, 4): cos 6 / (2 * 5) = 0.6, dot 6, distance sqrt(1 + 16) = sqrt(17).
    table = Table(
        {
            "Paris": np.array([2, 0], np.float32),
            "A": np.array([0, 1], np.float32),
            "B": np.array([3, 4], np.float32),
        }
    )
    result = similarity_to_gold("Paris [CIT:d1]", ["A", "B"], table)
    assert table.calls == [["Paris", "A", "B"]]  # citation markers stripped
    assert result.semantic_similarity == pytest.approx(0.6)
    assert result.dot_similarity == pytest.approx(6.0)
    assert result.euclidean_distance == pytest.approx(math.sqrt(5))  # nearest is A
    assert result.gold == "B"


def test_similarity_to_gold_needs_a_gold() -> None:
    with pytest.raises(ValueError, match="at least one gold"):
        similarity_to_gold("Paris", [], Table({}))


@given(
    st.lists(
        st.tuples(st.floats(0, 180), st.booleans(), st.sampled_from(["d1", "d2", "d9", None])),
        max_size=6,
    ),
    st.floats(0.01, 1.0),
)
def test_overlap_is_a_share_of_claims(
    sentences: list[tuple[float, bool, str | None]], tau_sim: float
) -> None:
    vectors = dict(VECTORS)
    parts = []
    for index, (angle, idk, doc) in enumerate(sentences):
        text = "I don't know." if idk else f"Claim number {index} here."
        vectors[text] = at(angle)
        parts.append(text if doc is None else f"{text[:-1]} [CIT:{doc}].")
    result = overlap("\n".join(parts), CONTEXTS, Table(vectors), tau_sim=tau_sim)
    assert 0.0 <= result.score <= 1.0
    assert result.supported <= result.claims == sum(not idk for _, idk, _ in sentences)
    for verdict in result.sentences:
        if verdict.supported:
            assert verdict.similarity is not None
            assert verdict.similarity >= tau_sim


def test_each_measured_sentence_carries_the_context_it_was_measured_against() -> None:
    answer = "Berlin is large [2]. I don't know the rest. France is in Europe."
    result = overlap(answer, CONTEXTS, Table(VECTORS))
    measured, idk, uncited = (verdict.as_dict() for verdict in result.sentences)
    # [2] is the second context: d2, whatever marker the sentence used
    assert measured["context"] == {"doc_id": "d2", "text": "Berlin is the capital of Germany."}
    assert measured["similarity"] == pytest.approx(0.5)
    assert idk["context"] is None  # settled without similarity: measured against nothing
    assert uncited["context"] is None
