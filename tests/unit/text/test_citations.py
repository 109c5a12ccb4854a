"""Citation markers: parsing both formats, resolving against contexts, stripping."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.text.citations import (
    CitationFormat,
    CitationPatternError,
    CitationSyntax,
    find_citations,
    marker_pattern,
    strip_citations,
)
from pytest_ragmetrics.text.sentences import split_sentences

CTX = ["doc-a", "doc.v2", "doc c"]


def test_cit_markers_resolve_by_doc_id() -> None:
    found = find_citations("A [CIT:doc-a]. B [CIT: doc.v2 ]. C [CIT:missing].", CTX)
    assert [(c.target, c.doc_id) for c in found] == [
        ("doc-a", "doc-a"),
        ("doc.v2", "doc.v2"),
        ("missing", None),
    ]
    assert [c.valid for c in found] == [True, True, False]


def test_numeric_markers_are_one_based_indices() -> None:
    found = find_citations("X [1][2]. Y [3]. Z [0] [4].", CTX)
    assert [(c.target, c.doc_id) for c in found] == [
        (1, "doc-a"),
        (2, "doc.v2"),
        (3, "doc c"),
        (0, None),
        (4, None),
    ]


def test_a_comma_list_is_several_citations_of_one_marker() -> None:
    found = find_citations("X [1, 3].", CTX)
    assert [(c.marker, c.doc_id) for c in found] == [("[1, 3]", "doc-a"), ("[1, 3]", "doc c")]


def test_without_contexts_every_citation_is_invalid() -> None:
    assert [c.valid for c in find_citations("A [1] [CIT:doc-a]", None)] == [False, False]


def test_format_restricts_what_is_a_marker() -> None:
    text = "A [1] B [CIT:doc-a]"
    assert [c.marker for c in find_citations(text, CTX, "cit")] == ["[CIT:doc-a]"]
    assert [c.marker for c in find_citations(text, CTX, "numeric")] == ["[1]"]
    with pytest.raises(ValueError, match="unknown citation format"):
        marker_pattern("bogus")  # type: ignore[arg-type]


def test_a_numeral_too_long_for_any_index_is_an_invalid_citation() -> None:
    digits = "1" * 4301  # beyond the digits int() converts by default
    (found,) = find_citations(f"See [{digits}].", CTX)
    assert (found.marker, found.target, found.doc_id) == (f"[{digits}]", digits, None)
    (padded,) = find_citations(f"See [{'0' * 5000}2].", CTX)  # leading zeros write no digit
    assert (padded.target, padded.doc_id) == (2, "doc.v2")


def test_brackets_that_are_not_markers_are_left_alone() -> None:
    assert find_citations("see [note] and [a1] and []", CTX) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris is the capital [CIT:doc-a].", "Paris is the capital."),
        ("Paris [1][2], then Rome [3].", "Paris, then Rome."),
        ("No markers here.", "No markers here."),
    ],
)
def test_strip_citations(text: str, expected: str) -> None:
    assert strip_citations(text) == expected


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("Paris [[1]2].", "auto", "Paris."),  # removing [1] leaves "[ 2]"
        ("Paris [[1]2].", "numeric", "Paris."),
        ("Paris [CIT :x].", "cit", "Paris."),  # the space before ":" goes, "[CIT:x]" appears
    ],
)
def test_stripping_removes_markers_that_removing_others_creates(
    text: str, fmt: CitationFormat, expected: str
) -> None:
    assert strip_citations(text, fmt) == expected


doc_ids = st.text(alphabet="abcdefghij-._0123456789", min_size=1, max_size=8).filter(
    lambda s: s.strip() == s
)


@given(st.lists(doc_ids, min_size=1, max_size=5), st.data())
def test_markers_round_trip(ids: list[str], data: st.DataObject) -> None:
    cited = data.draw(st.lists(st.sampled_from(ids), max_size=6))
    indices = data.draw(st.lists(st.integers(1, len(ids)), max_size=6))
    text = (
        " ".join(f"claim [CIT:{d}]." for d in cited) + " " + " ".join(f"x [{i}]" for i in indices)
    )
    found = find_citations(text, ids)
    assert [c.doc_id for c in found] == [*cited, *(ids[i - 1] for i in indices)]
    assert find_citations(strip_citations(text), ids) == []


# -- a project's own marker: citation_pattern ---------------------------------------------

WIFI = ["wifi-1", "wifi-2"]


@pytest.mark.parametrize(
    ("pattern", "answer"),
    [
        (r"\[([\w-]+)\]", "Restart it [wifi-1]. Then wait [wifi-2]."),
        (r"\[source:\s*([^\]]+)\]", "Restart it [source: wifi-1]. Then wait [source:wifi-2]."),
        (r"\((wifi-\d+)\)", "Restart it (wifi-1). Then wait (wifi-2)."),
    ],
)
def test_a_projects_own_marker_resolves_like_a_doc_id(pattern: str, answer: str) -> None:
    syntax = CitationSyntax("auto", pattern)
    found = find_citations(answer, WIFI, syntax)
    assert [(c.target, c.doc_id) for c in found] == [("wifi-1", "wifi-1"), ("wifi-2", "wifi-2")]
    assert strip_citations(answer, syntax) == "Restart it. Then wait."
    assert find_citations(answer, WIFI, "auto") == []  # unread without the pattern
    first, second = split_sentences(answer, syntax)
    assert (first.text.startswith("Restart it "), second.text.startswith("Then wait ")) == (
        True,
        True,
    )


def test_the_built_in_formats_still_apply_next_to_a_projects_marker() -> None:
    syntax = CitationSyntax("auto", r"\[([\w-]+)\]")
    found = find_citations("A [CIT:wifi-2]. B [1]. C [wifi-9].", WIFI, syntax)
    assert [(c.target, c.doc_id) for c in found] == [
        ("wifi-2", "wifi-2"),
        (1, "wifi-1"),
        ("wifi-9", None),  # names no context: an invalid citation, like [CIT:wifi-9]
    ]


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"\[[\w-]+\]", "needs exactly one group, the cited doc id; it has 0"),
        (r"\[(\w+)-(\d)\]", "needs exactly one group, the cited doc id; it has 2"),
        (r"(\w*)", "matches the empty text"),
        (r"(\s)", "matches white space alone"),
        (r"\[(\w+", "not a regular expression"),
        (r"(?P<cit>\w+)", "not a regular expression"),  # the built-in format's group name
    ],
)
def test_a_pattern_that_cannot_describe_a_marker_is_refused(pattern: str, problem: str) -> None:
    with pytest.raises(CitationPatternError, match=re.escape(problem)):
        CitationSyntax("auto", pattern)


def test_an_empty_match_inside_a_text_is_no_marker() -> None:
    # Valid by the checks (it cannot match the empty text), yet it matches nothing
    # right after "x": such a match must neither cite nor move text around.
    syntax = CitationSyntax("auto", r"(?<=x)([\w-]*)")
    text = "Max said so. Then xenon."
    assert [c.target for c in find_citations(text, WIFI, syntax)] == ["enon"]
    assert strip_citations("ax.", syntax) == "ax."
    assert [s.text for s in split_sentences("ax. Then b.", syntax)] == ["ax.", "Then b."]


def _strip_as_first_written(text: str, fmt: CitationFormat) -> str:
    """Stripping as it was first written: each marker (a non-empty match) becomes a space,
    white space before punctuation goes, runs of spaces and tabs become one space; again
    until no marker is left."""
    pattern = marker_pattern(fmt)
    stripped = text
    for _ in range(len(text) + 1):
        stripped = pattern.sub(lambda m: " " if m.group(0) else "", stripped)
        stripped = re.sub(r"\s+([.,;:!?…])", r"\1", stripped)
        stripped = re.sub(r"[ \t]+", " ", stripped).strip()
        if not any(match.group(0) for match in pattern.finditer(stripped)):
            break
    return stripped


marker_texts = st.lists(
    st.sampled_from(
        [
            *("[", "]", "CIT:", "CIT :", "1", "2,", " 3", "d-1", "Paris", "x", "(source: d1)"),
            *(" ", "  ", "\t", "\n", "\u00a0", ".", ",", ";", ":", "!", "?", "…"),
        ]
    ),
    max_size=24,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(
    marker_texts,
    st.sampled_from(["auto", "cit", "numeric", CitationSyntax("auto", r"\(source: (\w+)\)")]),
)
def test_stripping_equals_its_definition(text: str, fmt: CitationFormat) -> None:
    assert strip_citations(text, fmt) == _strip_as_first_written(text, fmt)
