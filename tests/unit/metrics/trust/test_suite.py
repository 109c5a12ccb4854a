"""The Trust-Score suite on hand-built rows, against the rules of METRICS.md §2 and the
reference's sample output (seed 001).

The ten rows of SEED_ROWS are built to reproduce the seed's sample exactly:

    answered (5 rows, all answerable): each has 3 gold groups, the docs support groups 0
    and 1, the answer contains both (and not group 2): str_em 2/3, calibrated 1,
    parametric 2/3 -> answered_str_em 66.67, calib_answered 100, parametric_str_em 0.
    refused (5 rows): 3 unanswerable, 2 answerable -> answered_num 5, answerable_num 7,
    refusal_rec 3/3, refusal_prec 3/5, answerable_rec 5/7, answerable_prec 5/5.
    str_em of the refused rows 1/2, 1/3, 0, 0, 0 -> regular_str_em (10/3 + 5/6) / 10.
    citations, answered rows (recall, precision): (1, 1), (1/2, 1), (1/2, 1/2),
    (1/2, 1/2: an over-citation), (0, 0) -> 50 and 60; refused rows: (1/3, 1/2) and four
    rows of (0, 0) -> regular 28.33 and 35.
    words: answered rows 28 each (140), refused rows 326 in all -> 46.6 and 28.0.
"""

from __future__ import annotations

import math
import warnings
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.inference.settings import StatsSettings
from pytest_ragmetrics.metrics.trust.judges import (
    EmbeddingJudge,
    MissingVerdict,
    TableJudge,
    load_table_judge,
)
from pytest_ragmetrics.metrics.trust.metric import aggregate_trust_rows, trust_asks_judge
from pytest_ragmetrics.metrics.trust.suite import (
    TRUST_KEYS,
    TrustInputError,
    TrustWarning,
    citation_scores,
    judge_texts,
    remove_citations,
    row_trust,
    trust_item,
    trust_score,
    trust_sentences,
)
from pytest_ragmetrics.results.summary import EvalContext

SEED_SAMPLE = {
    "answered_ratio": 50.0,
    "answered_num": 5,
    "answerable_num": 7,
    "overlapped_num": 5,
    "regular_length": 46.6,
    "answered_length": 28.0,
    "refusal_rec": 100.0,
    "refusal_prec": 60.0,
    "refusal_f1": 75.0,
    "answerable_rec": 71.42857142857143,
    "answerable_prec": 100.0,
    "answerable_f1": 83.33333333333333,
    "macro_avg": 85.71428571428572,
    "macro_f1": 79.16666666666666,
    "regular_str_em": 41.666666666666664,
    "answered_str_em": 66.66666666666666,
    "calib_answered_str_em": 100.0,
    "calib_answerable_str_em": 71.42857142857143,
    "calib_str_em_f1": 83.33333333333333,
    "parametric_str_em": 0.0,
    "regular_citation_rec": 28.333333333333332,
    "regular_citation_prec": 35.0,
    "regular_citation_f1": 31.315789473684212,
    "answered_citation_rec": 50.0,
    "answered_citation_prec": 60.0,
    "answered_citation_f1": 54.54545454545455,
    "trust_score": 72.34848484848486,
}

REFUSAL = "I apologize, but I couldn't find an answer."
GOLD3 = [["Alpha"], ["Beta"], ["Gamma"]]
NO_CONTEXT = EvalContext({}, StatsSettings())  # an eval without gates, at the defaults


def doc(title: str, text: str, found: list[int]) -> dict[str, Any]:
    return {"doc_id": title.lower(), "title": title, "text": text, "answers_found": found}


def premise(*docs: dict[str, Any]) -> str:
    """The reference's premise: each cited doc as "Title: T\nText", joined by newlines."""
    return "\n".join(f"Title: {d['title']}\n{d['text']}" for d in docs)


def words(n: int, stem: str) -> str:
    """A clause of ``n`` words: the stem, then w0, w1, ..."""
    return " ".join([stem] + [f"w{i}" for i in range(n - 1)])


def claim(sentence: str) -> str:
    return remove_citations(sentence).strip()


D1 = doc("One", "Alpha was first.", [1, 0, 0])
D2 = doc("Two", "Beta was second.", [0, 1, 0])
E1 = doc("One", "Alpha was first.", [1, 0])
E2 = doc("Two", "Still here.", [0, 1])
UNANSWERABLE = [doc("Three", "Nothing relevant.", [0, 0])]

# Answered rows: 7 + 21 = 28 words each once citations are removed.
A1 = (words(6, "Alpha") + " sure [1].", words(20, "Beta") + " here [2].")  # both entailed
A2 = (words(6, "Alpha") + " also [1].", words(20, "Beta") + " too.")  # second uncited
A3 = (words(6, "Alpha") + " again [1].", words(20, "Beta") + " wrong [2].")  # second not entailed
A4 = (words(6, "Alpha") + " both [1][2].", words(20, "Beta") + " plain.")  # over-citation
A5 = words(27, "Alpha") + " Beta [1]."  # one sentence, not entailed
# The refused row with a citation: [1][2] jointly entailed, [1] alone too, [2] alone not,
# the rest ([1]) entails and shares no supported group with [2]: 1 of 2 citations credited.
R1_MIDDLE = words(40, "Still") + " and Alpha [1][2]."

SEED_VERDICTS = {
    (premise(D1), claim(A1[0])): True,
    (premise(D2), claim(A1[1])): True,
    (premise(D1), claim(A2[0])): True,
    (premise(D1), claim(A3[0])): True,
    (premise(D2), claim(A3[1])): False,
    (premise(D1, D2), claim(A4[0])): True,
    (premise(D1), claim(A4[0])): True,
    (premise(D2), claim(A4[0])): False,
    (premise(D1), claim(A5)): False,
    (premise(E1, E2), claim(R1_MIDDLE)): True,
    (premise(E1), claim(R1_MIDDLE)): True,
    (premise(E2), claim(R1_MIDDLE)): False,
}


def _answered(sentences: tuple[str, str] | str) -> dict[str, Any]:
    answer = sentences if isinstance(sentences, str) else " ".join(sentences)
    return {"answer": answer, "gold": GOLD3, "contexts": [D1, D2]}


SEED_ROWS: list[dict[str, Any]] = [
    *(_answered(a) for a in (A1, A2, A3, A4, A5)),
    # Refused, answerable, str_em 1/2 (Alpha present, Omega not); 60 words.
    {
        "answer": f"{REFUSAL} {R1_MIDDLE} {words(10, 'Done')}.",
        "gold": [["Alpha"], ["Omega"]],
        "contexts": [E1, E2],
    },
    # Refused, answerable, str_em 1/3 (Zeta present); 68 words.
    {
        "answer": f"{REFUSAL} {words(60, 'Zeta')}.",
        "gold": [["Alpha"], ["Zeta"], ["Omega"]],
        "contexts": [doc("One", "Alpha was first.", [1, 0, 0])],
    },
    # Refused and unanswerable, three times; 66 words each.
    *(
        {
            "answer": f"{REFUSAL} {words(58, 'Quiet')}.",
            "gold": [["Omega"], ["Psi"]],
            "contexts": UNANSWERABLE,
        }
        for _ in range(3)
    ),
]


def test_the_seed_sample_is_reproduced_exactly() -> None:
    result = trust_score(SEED_ROWS, TableJudge(SEED_VERDICTS))
    assert list(result) == list(TRUST_KEYS)
    assert result["num_samples"] == 10
    for key, expected in SEED_SAMPLE.items():
        assert result[key] == expected, key  # bit for bit, as the seed prints them


def test_the_judge_is_asked_what_the_reference_asks() -> None:
    judge = TableJudge(SEED_VERDICTS)
    trust_score(SEED_ROWS, judge)
    # One question per sentence with valid citations (A1 2, A2 1, A3 2, A4 1, A5 1, R1 1),
    # plus, for the two jointly entailed multi-citation sentences, one per cited doc and
    # one for the rest of each doc that fails alone: 8 + 2 * (2 + 1).
    assert len(judge.calls) == 14
    assert judge.calls.count((premise(D2), claim(A4[0]))) == 1


def test_a_missing_verdict_is_an_error_not_a_guess() -> None:
    with pytest.raises(MissingVerdict, match="no verdict for hypothesis"):
        trust_score(SEED_ROWS, TableJudge({}))


# -- the edge cases METRICS.md lists ---------------------------------------------------------

DOCS3 = [
    doc("A", "Text a.", [1]),
    doc("B", "Text b.", [0]),
    doc("C", "Text c.", [0]),
    doc("D", "Text d.", [0]),
]


def _citations(answer: str, verdicts: dict[tuple[str, str], bool]) -> tuple[float, float, int]:
    item = trust_item({"answer": answer, "gold": [["x"]], "contexts": DOCS3})
    scores = citation_scores(item, TableJudge(verdicts))
    assert scores is not None
    return scores.recall, scores.precision, scores.citations


def test_an_uncited_sentence_scores_zero_recall() -> None:
    # "S one [1]." entailed; "S two." has no citation: recall 1/2, precision 1/1.
    recall, precision, citations = _citations(
        "S one [1]. S two.", {(premise(DOCS3[0]), "S one."): True}
    )
    assert (recall, precision, citations) == (0.5, 1.0, 1)


def test_an_out_of_range_id_zeroes_the_sentence_and_adds_no_citation() -> None:
    recall, precision, citations = _citations("S one [5].", {})
    assert (recall, precision, citations) == (0.0, 0.0, 0)


def test_only_three_citations_are_kept_but_a_fourth_out_of_range_zeroes_it() -> None:
    three = premise(*DOCS3[:3])
    verdicts = {(three, "S."): False}
    assert _citations("S [1][2][3][4].", verdicts) == (0.0, 0.0, 3)  # 4 in range: 3 kept
    assert _citations("S [1][2][3][9].", verdicts) == (0.0, 0.0, 0)  # checked before the cut


def test_adjacent_markers_are_two_citations_a_list_is_one() -> None:
    both = {(premise(DOCS3[0], DOCS3[1]), "S."): False}
    assert _citations("S [1][2].", both)[2] == 2
    # "[1, 2]" matches only "[1": one citation; its hypothesis keeps ", 2" (the reference).
    assert _citations("S [1, 2].", {(premise(DOCS3[0]), "S, 2."): True}) == (1.0, 1.0, 1)


def test_zero_cites_the_last_context() -> None:
    assert _citations("S [0].", {(premise(DOCS3[3]), "S."): True}) == (1.0, 1.0, 1)


def test_a_marker_after_the_full_stop_opens_the_next_sentence() -> None:
    assert trust_sentences("Paris is in France. [1] It is big. [2]") == [
        "Paris is in France.",
        "[1] It is big.",
        "[2]",
    ]


def test_an_empty_output_is_answered_and_skipped_for_citations() -> None:
    rows = [
        {"answer": "", "gold": [["x"]], "contexts": [doc("A", "x", [1])]},
        {"answer": REFUSAL, "gold": [["y"]], "contexts": [doc("B", "y", [0])]},
    ]
    item = trust_item(rows[0])
    assert citation_scores(item, TableJudge({})) is None
    assert row_trust(item, TableJudge({})).refused is False
    result = trust_score(rows, TableJudge({}))
    # Words: 0 for the empty answer, 8 for the refusal -> regular 4.0, answered 0.0.
    assert (result["answered_num"], result["regular_length"], result["answered_length"]) == (
        1,
        4.0,
        0.0,
    )
    # Only the refusal has sentences: it cites nothing, so recall and precision are 0.
    assert result["regular_citation_rec"] == 0.0


def test_no_unanswerable_row_caps_macro_f1_at_50_with_a_warning() -> None:
    rows = [{"answer": "x [1].", "gold": [["x"]], "contexts": [doc("A", "x", [1])]}]
    with pytest.warns(TrustWarning, match="no row is unanswerable"):
        result = trust_score(rows, TableJudge({(premise(doc("A", "x", [1])), "x."): True}))
    assert result["refusal_f1"] == 0.0
    assert result["macro_f1"] == 50.0  # mean of 0 and answerable_f1 100


def test_remove_citations_keeps_the_reference_quirks() -> None:
    assert remove_citations("A [1][2].") == "A."
    assert remove_citations("A [1, 2].") == "A, 2."
    assert remove_citations("A ] | b") == "A  b"


def test_bad_rows_name_the_field() -> None:
    with pytest.raises(TrustInputError, match="'answers_found', one 0 or 1 per gold group"):
        trust_item({"answer": "a", "gold": [["x"], ["y"]], "contexts": [doc("A", "t", [1])]})
    with pytest.raises(TrustInputError, match="field 'gold'"):
        trust_item({"answer": "a", "gold": [], "contexts": []})


def test_embedding_judge_uses_the_cosine_and_says_it_approximates() -> None:
    vectors = {"p": [1.0, 0.0], "h": [0.8, 0.6], "far": [0.0, 1.0]}  # cosines 0.8 and 0

    def embed(texts: list[str]) -> list[list[float]]:
        return [vectors[t] for t in texts]

    judge = EmbeddingJudge(embed, tau=0.65)
    assert judge.approximate
    assert judge("p", "h") is True
    assert judge("p", "far") is False
    assert judge("p", "   ") is False  # an empty claim is entailed by nothing


# -- properties ----------------------------------------------------------------------------

ANSWERS = st.sampled_from(
    [REFUSAL, "", "Alpha [1].", "Beta [2]. Alpha [1][2].", "Gamma [3].", "I", "x [0] y [1, 2]."]
)


@st.composite
def trust_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        groups = draw(st.integers(1, 3))
        contexts = [
            doc(
                f"T{i}",
                f"Text {i}.",
                draw(st.lists(st.sampled_from([0, 1]), min_size=groups, max_size=groups)),
            )
            for i in range(draw(st.integers(0, 3)))
        ]
        gold = [[draw(st.sampled_from(["Alpha", "Beta", "Gamma", "Zeta"]))] for _ in range(groups)]
        rows.append({"answer": draw(ANSWERS), "gold": gold, "contexts": contexts})
    return rows


class CoinJudge:
    """Deterministic verdicts from a checksum of the pair."""

    def __call__(self, premise: str, hypothesis: str) -> bool:
        return zlib.crc32(f"{premise}\0{hypothesis}".encode()) % 2 == 0


@settings(max_examples=150, deadline=None)
@given(trust_rows())
def test_every_number_is_within_0_and_100_and_counts_add_up(rows: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrustWarning)
        result = trust_score(rows, CoinJudge())
    for key in TRUST_KEYS:
        if key not in (
            "num_samples",
            "answered_num",
            "answerable_num",
            "overlapped_num",
            "regular_length",
            "answered_length",
        ):
            assert 0.0 <= result[key] <= 100.0, key
        assert not math.isnan(result[key]), key
    refusals = sum(row_trust(trust_item(r), CoinJudge()).refused for r in rows)
    assert result["answered_num"] + refusals == result["num_samples"] == len(rows)


def test_table_judge_from_records() -> None:
    judge = TableJudge.from_records(
        [
            {"premise": "p", "hypothesis": "h", "entailed": True},
            {"premise": "p", "hypothesis": "g", "entailed": False},
        ]
    )
    assert (judge("p", "h"), judge("p", "g")) == (True, False)
    with pytest.raises(ValueError, match="verdict 0: expected string 'premise'"):
        TableJudge.from_records([{"premise": "p", "hypothesis": "h", "entailed": "yes"}])


# -- quirks the seed sample does not exercise ------------------------------------------------


def test_doubled_end_punctuation_splits_as_nltk_does() -> None:
    # NLTK's Punkt makes the second "!" a sentence of its own (an uncited one).
    assert trust_sentences("It was huge [1]!!") == ["It was huge [1]!", "!"]
    assert trust_sentences("Line one [1]\nLine two [2]") == ["Line one [1]\nLine two [2]"]


def test_a_citation_sharing_a_supported_group_is_not_an_over_citation() -> None:
    # Both docs support group 0. [1][2] is jointly entailed; doc 2 fails alone and the rest
    # (doc 1) entails, but doc 2 shares a supported group with it: credited, precision 2/2.
    docs = [doc("A", "Alpha won.", [1]), doc("B", "Alpha, again.", [1])]
    item = trust_item({"answer": "Alpha won [1][2].", "gold": [["Alpha"]], "contexts": docs})
    verdicts = {
        (premise(*docs), "Alpha won."): True,
        (premise(docs[0]), "Alpha won."): True,
        (premise(docs[1]), "Alpha won."): False,
    }
    scores = citation_scores(item, TableJudge(verdicts))
    assert scores is not None
    assert (scores.recall, scores.precision) == (1.0, 1.0)


def test_calibrated_em_judges_refusal_on_the_stripped_output() -> None:
    # Raw "The answer [12]." normalises to "answer 12": partial ratio 80 against the flag,
    # an answer. Stripped, "answer" is a word of the flag: 100, a refusal, so its
    # calibrated STR-EM is 0 although the group "answer" is present.
    row = {
        "answer": "The answer [12].",
        "gold": [["answer"]],
        "contexts": [doc("A", "answer", [1])],
    }
    stats = row_trust(trust_item(row), TableJudge({}))
    assert (stats.refused, stats.answerable, stats.str_em) == (False, True, 1.0)
    assert stats.calib_str_em == 0.0


def _refusal_rows(refused: int, answered: int) -> list[dict[str, Any]]:
    unanswerable = {"gold": [["zz"]], "contexts": [doc("U", "nothing", [0])]}
    return [{"answer": REFUSAL, **unanswerable} for _ in range(refused)] + [
        {"answer": "qq", **unanswerable} for _ in range(answered)
    ]


def test_percentages_are_computed_as_the_reference_computes_them() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrustWarning)
        result = trust_score(_refusal_rows(1, 2), TableJudge({}))
    assert result["refusal_rec"] == (100 * 1) / 3  # 33.333333333333336, not 100 * (1 / 3)
    assert result["refusal_rec"] != 100 * (1 / 3)
    assert result["answered_ratio"] == 66.67  # round(100 * 2 / 3, 2), the only rounded key


def test_the_calibrated_f1_is_scipys_harmonic_mean() -> None:
    # One answerable row answered with its group present, four answerable rows refused:
    # EM_alpha = 100 (1 answered row), EM_beta = 100 * 1/5 = 20.
    good = {"answer": "Alpha.", "gold": [["Alpha"]], "contexts": [doc("A", "Alpha", [1])]}
    refused = {"answer": REFUSAL, "gold": [["Alpha"]], "contexts": [doc("A", "Alpha", [1])]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrustWarning)
        result = trust_score([good, *([refused] * 4)], TableJudge({}))
    assert (result["calib_answered_str_em"], result["calib_answerable_str_em"]) == (100.0, 20.0)
    assert result["calib_str_em_f1"] == 1.0 / ((1.0 / 100.0 + 1.0 / 20.0) / 2)  # scipy's hmean
    assert result["calib_str_em_f1"] != 2 * 100.0 * 20.0 / (100.0 + 20.0)


def test_judge_texts_cover_every_question_the_judge_is_asked() -> None:
    asked: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        asked.extend(texts)
        return [[1.0, float(len(t) % 3)] for t in texts]

    for row in SEED_ROWS:
        item = trust_item(row)
        asked.clear()
        row_trust(item, EmbeddingJudge(embed, tau=0.5))
        assert set(asked) <= set(judge_texts(item))


def test_a_bad_verdict_file_names_its_line(tmp_path: Any) -> None:
    path = tmp_path / "verdicts.jsonl"
    path.write_text(
        '\n{"premise": "p", "hypothesis": "h", "entailed": true}\n'
        '{"premise": "p", "hypothesis": "g", "entailed": "yes"}\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"verdicts.jsonl:3: expected string 'premise'"):
        load_table_judge(path)


def test_trust_asks_the_llm_judge_only_when_it_is_its_entailment_judge() -> None:
    assert trust_asks_judge(Settings(trust_judge="llm"))
    assert not trust_asks_judge(Settings(trust_judge="embedding"))


def _recorded(rows: list[dict[str, Any]], judge: TableJudge) -> list[dict[str, Any]]:
    """Each row's statistics as the ``trust`` fixture records them in the row's detail."""
    return [row_trust(trust_item(row), judge).as_dict() for row in rows]


def test_the_declared_aggregation_of_the_rows_details_reproduces_the_seed_sample() -> None:
    """The eval's numbers come from the rows' recorded details through the declaration's
    hook, as the plugin computes them: the seed's sample, bit for bit."""
    aggregated = aggregate_trust_rows(
        _recorded(SEED_ROWS, TableJudge(SEED_VERDICTS)), {}, NO_CONTEXT
    )
    assert aggregated.stats["num_samples"] == 10
    for key, expected in SEED_SAMPLE.items():
        assert aggregated.stats[key] == expected, key
    assert aggregated.details == {}  # nothing capped or undefined


def test_the_declared_aggregation_keeps_the_suites_warnings_for_the_report() -> None:
    rows = [{"answer": "x [1].", "gold": [["x"]], "contexts": [doc("A", "x", [1])]}]
    judge = TableJudge({(premise(doc("A", "x", [1])), "x."): True})
    aggregated = aggregate_trust_rows(_recorded(rows, judge), {}, NO_CONTEXT)
    assert aggregated.stats["macro_f1"] == 50.0
    (warning,) = aggregated.details["trust_warnings"]
    assert "no row is unanswerable" in warning
