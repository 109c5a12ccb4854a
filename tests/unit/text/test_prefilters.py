"""The checks that let a metric skip splitting an answer into sentences never skip one
whose sentences would have counted: ``IdkMatcher.may_occur_in`` is True whenever some
sentence of the text is IDK, ``may_cite`` whenever some sentence holds a marker, and
``idk_citation`` finds what splitting every answer finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.metrics.abstention import CitedIdk, IdkCitation, idk_citation
from pytest_ragmetrics.text.citations import (
    CitationFormat,
    CitationSyntax,
    find_citations,
    holds_citation,
    may_cite,
    strip_citations,
)
from pytest_ragmetrics.text.idk import DEFAULT_IDK_PATTERNS, IdkMatcher, _fold, idk_sentences
from pytest_ragmetrics.text.sentences import split_sentences

# Pieces that make the hard cases likely: IDK phrases cut anywhere, in other cases and with
# curly apostrophes; markers of every built-in form, nested ones that join when stripped;
# the punctuation stripping removes a space before; characters that fold to two.
PIECES = [
    *DEFAULT_IDK_PATTERNS,
    *(phrase.upper() for phrase in DEFAULT_IDK_PATTERNS),
    "I don’t know",
    "I do[1]n't know",
    "I don't [CIT:d1] know",
    "don't",
    "know",
    "KNOW",
    "kno",
    "w",
    "tidak",
    "tahu",
    "не",
    "знаю",
    "[1]",
    "[2, 3]",
    "[CIT:d1]",
    "[CIT: d2 ]",
    "[[1]2]",
    "[",
    "]",
    ".",
    "!",
    "?",
    "…",
    ",",
    ";",
    ":",
    " ",
    "  ",
    "\n",
    "Dr.",
    "no idea [1]!",
    "No IDEA[CIT:d1]!",
    "can’t say",
    "CAN'T",
    "ß",
    "İ",
    "Paris",
]
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=14).map("".join)
FORMATS = st.sampled_from(["auto", "cit", "numeric"])
MATCHERS = st.sampled_from(
    [
        IdkMatcher(),
        IdkMatcher(("no idea!",)),  # its longest piece is "idea": "!" may follow a marker
        IdkMatcher(("can't say",)),  # one phrase: its apostrophe folds from a curly one
        IdkMatcher(("n'est-ce pas?", "Dr. Who")),
        IdkMatcher(("?!",)),  # punctuation alone: no piece to look for
    ]
)


def every_sentence_idk_citation(
    answer: str, matcher: IdkMatcher, fmt: CitationFormat
) -> IdkCitation:
    """``idk_citation`` by its definition: split, then every IDK sentence's markers."""
    cited = []
    for sentence, phrase in idk_sentences(split_sentences(answer, fmt), matcher, fmt):
        markers = tuple(dict.fromkeys(c.marker for c in find_citations(sentence.text, None, fmt)))
        if markers:
            cited.append(CitedIdk(sentence.text, phrase, markers))
    return IdkCitation(tuple(cited))


def idk_by_definition(sentence: str, matcher: IdkMatcher, fmt: CitationFormat) -> str | None:
    """The IDK phrase of ``sentence`` by the rule alone: a phrase of the matcher found in
    the sentence folded with its markers stripped, no prefilter."""
    found = matcher._regex.search(_fold(strip_citations(sentence, fmt)))
    return found.group(0) if found else None


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, matcher=MATCHERS, fmt=FORMATS)
def test_a_text_with_an_idk_sentence_may_hold_one(
    text: str, matcher: IdkMatcher, fmt: CitationFormat
) -> None:
    if any(idk_by_definition(s.text, matcher, fmt) for s in split_sentences(text, fmt)):
        assert matcher.may_occur_in(text)


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, matcher=MATCHERS, fmt=FORMATS)
def test_matching_a_sentence_finds_what_the_rule_finds(
    text: str, matcher: IdkMatcher, fmt: CitationFormat
) -> None:
    """``match`` asks the patterns only when ``may_occur_in`` allows a match: the same
    phrase as the rule, or ``None``, on any text."""
    assert matcher.match(text, fmt) == idk_by_definition(text, matcher, fmt)


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, fmt=FORMATS)
def test_a_text_with_a_cited_sentence_may_cite(text: str, fmt: CitationFormat) -> None:
    if any(find_citations(s.text, None, fmt) for s in split_sentences(text, fmt)):
        assert may_cite(text, fmt)


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, matcher=MATCHERS, fmt=FORMATS)
def test_idk_citation_finds_what_splitting_every_answer_finds(
    text: str, matcher: IdkMatcher, fmt: CitationFormat
) -> None:
    assert idk_citation(text, None, matcher, fmt) == every_sentence_idk_citation(text, matcher, fmt)


@settings(max_examples=400, deadline=None)
@given(
    text=TEXTS,
    fmt=FORMATS | st.sampled_from([CitationSyntax("auto", r"(?:\(source: |<)(\w+)[)>]")]),
)
def test_a_citation_census_finds_what_find_citations_finds(text: str, fmt: CitationFormat) -> None:
    """A row's census says whether its answer holds a citation without building them:
    whether ``find_citations`` finds one, whatever the contexts."""
    assert holds_citation(text, fmt) == bool(find_citations(text, ["d1", "d2"], fmt))
    assert holds_citation(text + " (source: d1) <7>", fmt) == bool(
        find_citations(text + " (source: d1) <7>", None, fmt)
    )


def test_a_citation_census_by_hand() -> None:
    assert holds_citation("Paris [1][2, 3]. Lyon [CIT:d1].")
    assert not holds_citation("Paris [1][2, 3].", "cit")
    assert holds_citation("Lyon (source: d1).", CitationSyntax("auto", r"\(source: (\w+)\)"))
    assert not holds_citation("No marker [here].")


def test_the_checks_say_no_only_when_they_can() -> None:
    matcher = IdkMatcher()
    assert not matcher.may_occur_in("Paris is the capital [1].")
    assert matcher.may_occur_in("Paris. I DON’T KNOW the rest.")  # folded as a match is
    assert matcher.may_occur_in("Я не знаю.")
    assert IdkMatcher(("?!",)).may_occur_in("Paris.")  # no piece: always True
    # Each IDK as a sentence, so each must be looked for: a curly apostrophe folds to the
    # phrase's straight one, and "!" may follow a stripped marker ("idea [1]!": "idea!").
    assert IdkMatcher(("can't say",)).may_occur_in("I CAN’T SAY.")
    assert IdkMatcher(("can't say",)).match("I CAN’T SAY.") is not None
    assert IdkMatcher(("no idea!",)).may_occur_in("No idea [1]!")
    assert IdkMatcher(("no idea!",)).match("No idea [1]!") is not None
    assert not may_cite("Paris is the capital.", "auto")
    assert may_cite("Paris [CIT:d1].", "cit")
    assert not may_cite("Paris [CIT:d1].", "numeric")
    own = CitationSyntax("auto", r"\(source: ([^)]+)\)")
    assert may_cite("Paris.", own)  # a project's pattern: always True


def test_folding_ascii_text_maps_only_the_backtick() -> None:
    """``may_occur_in`` folds ASCII text by replacing the backtick alone: of the
    apostrophes folding maps, it is the only ASCII one."""
    from pytest_ragmetrics.text.idk import _APOSTROPHES

    ascii_text = "".join(map(chr, range(128)))
    assert ascii_text.translate(_APOSTROPHES) == ascii_text.replace("`", "'")
