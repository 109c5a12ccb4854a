"""Anchor coverage: the share of a question's anchors found in the text of the cited contexts.

docs/metrics.md#anchor_coverage. The question is NFKC-normalised and its white space
collapsed; its anchors are then, in order of appearance and deduplicated case-insensitively
(first spelling kept):

* **Quoted titles** — the text inside "…", “…”, «…», „…“, ‘…’ or '…' (surrounding spaces
  trimmed). A single quote opens only when no letter or digit precedes it and closes only
  when none follows it, so apostrophes inside words ("Lumen's", "don't") are not quotes.
  Nothing inside a title is taken again as a separate number or entity.
* **Numbers**, years included — digits with ``,``/``.`` groups ("1,200", "5.5",
  "1.200.000"), 1–3 digits followed by space-separated groups of exactly three digits
  ("1 200 000"), or an ISO date ("2024-03-12"); never preceded by a letter, digit, "." or
  ",". Currency, sign and unit are not part of the anchor ("$5 GB" gives "5"). A number
  inside an entity word ("GPT-4", "Q3") is not a separate anchor.
* **Capitalised entity spans** — maximal runs of capitalised words on one line, separated
  by white space only. A *word* starts and ends with a letter or digit and may contain
  ``& ' ’ . -`` inside ("AT&T", "O'Brien", "GPT-4"); a trailing possessive "'s" is not part
  of it. A word is *capitalised* when its first character is an upper-case letter of any
  script, or its first is a letter and its second is upper case ("iPhone", "eBay"). The
  lower-case connectors of ``CONNECTORS`` may join two capitalised words ("Bank of
  America"). Words of ``STOP_WORDS`` (question and function words in English, Indonesian
  and Russian, and the job titles CEO, CTO, CFO, COO; compared case-insensitively) are
  removed from the start of a run, and what remains is the entity: "What Lumen Cloud
  plan…" gives "Lumen Cloud", "Is Lumen…" gives "Lumen", and a question word alone is
  never an anchor ("Will Smith" gives "Smith"). A unit abbreviation of ``UNIT_WORDS``
  alone ("GB", "USD", "ГБ") is not an entity either.

**Matching.** Question anchors and cited texts are compared after NFKC, case folding,
curly-to-straight apostrophes and white-space collapsing. A title or entity is found when
it occurs with no letter or digit right before or after it ("Lumen" is not in "Lumenix").
A number is found on number-token boundaries: no letter or digit before it, no digit
after it, and no ``.``/``,`` joining it to further digits on either side — "2017" is not
in "20170", "5" is not in "50", "5.5" or "5,000" — while a letter may follow ("5" is in
"5GB", "10" in "10ms").

**Score** = found / anchors, over the union of the cited texts (an anchor counts as found
when any one cited text contains it). A question with no anchor scores 1.0 — nothing is
missing — and says so in its evidence; with anchors but no cited text the score is 0.0.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    Presentation,
)
from pytest_ragmetrics.text.citations import find_citations
from pytest_ragmetrics.text.patterns import LazyPattern


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP_WORDS = _word_set(
    """
    a an the this that these those it its he she they we i you his her their our my your
    there here in on at by for from to of with as and but or if so yes no not also only
    according based after before during since both each all any some please
    what which who whom whose how when where why is are was were do does did can could
    will would should has have had name list give tell describe explain compare find show
    yang ini itu dia ia mereka kami kita saya anda pada di ke dari dalam untuk dengan dan
    atau tetapi adalah ya tidak menurut berdasarkan apa siapa berapa kapan mana bagaimana
    mengapa kenapa apakah sebutkan jelaskan ceo cto cfo coo
    в во на по с со к о об у из за для от до и а но или это этот эта эти он она оно они
    мы я вы да нет согласно кто что когда где почему зачем как какой какая какое какие
    каков какова сколько ли назовите перечислите опишите
    """
)
UNIT_WORDS = _word_set("gb tb mb kb pb gib mib tib ms usd eur idr gbp rub гб тб мб кб мс")
CONNECTORS: frozenset[str] = frozenset(
    {"of", "of the", "de", "de la", "del", "der", "van", "van der", "van den", "von"}
    | {"von der", "da", "du", "bin", "binti", "al"}
)
_CONNECTOR_PREFIXES = frozenset(
    " ".join(phrase.split()[:n]) for phrase in CONNECTORS for n in range(1, 3)
)

_WORD = LazyPattern(r"[^\W_](?:(?:[^\W_]|[&'’.\-])*[^\W_])?")
_POSSESSIVE = LazyPattern(r"['’]s$", re.IGNORECASE)
_SAME_LINE_SPACE = LazyPattern(r"[^\S\n]+")
NUMBER_CORE = r"\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})+(?!\d)(?:[.,]\d+)?|\d+(?:[.,]\d+)*"
_NUMBER = LazyPattern(rf"(?<![\w.,])(?:\d{{4}}-\d{{2}}-\d{{2}}(?!\d)|{NUMBER_CORE})")
_QUOTED = LazyPattern(
    r'"(?P<straight>[^"\n]+)"|“(?P<curly>[^”\n]+)”|«(?P<guillemet>[^»\n]+)»'
    r"|„(?P<low>[^“”\n]+)[“”]"
    r"|(?<!\w)‘(?P<single_curly>(?:[^’\n]|(?<=\w)’(?=\w))+)’(?!\w)"
    r"|(?<!\w)'(?P<single>(?:[^'\n]|(?<=\w)'(?=\w))+)'(?!\w)"
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


@dataclass(frozen=True)
class TextSpan:
    """A piece of a text and its ``[start, end)`` offsets in that text."""

    text: str
    start: int
    end: int

    def overlaps(self, start: int, end: int) -> bool:
        return start < self.end and end > self.start


def fold(text: str) -> str:
    """NFKC, case folding, straight apostrophes and collapsed white space: the match key."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    return " ".join(folded.split())


def words(text: str) -> list[TextSpan]:
    """The words of ``text`` as defined in the module docstring, possessive "'s" removed."""
    found = []
    for match in _WORD.finditer(text):
        end = match.end()
        possessive = _POSSESSIVE.search(match.group(0))
        if possessive and len(match.group(0)) > 2:
            end -= 2
        found.append(TextSpan(text[match.start() : end], match.start(), end))
    return found


def _is_capitalised(word: str) -> bool:
    if word[0].isupper():
        return True
    return word[0].isalpha() and len(word) > 1 and word[1].isupper()


def _entity(text: str, run: list[TextSpan]) -> TextSpan | None:
    """The run without its leading stop words and connectors, or ``None`` if nothing is left."""
    while run and (run[0].text.casefold() in STOP_WORDS or not _is_capitalised(run[0].text)):
        run = run[1:]
    if len(run) == 1 and run[0].text.casefold() in UNIT_WORDS:
        return None
    return TextSpan(text[run[0].start : run[-1].end], run[0].start, run[-1].end) if run else None


def capitalised_spans(text: str) -> list[TextSpan]:
    """Capitalised entity spans of ``text`` (rules in the module docstring), in order."""
    spans: list[TextSpan] = []
    run: list[TextSpan] = []
    pending: list[TextSpan] = []  # connector words waiting for a capitalised word

    def close_run() -> None:
        entity = _entity(text, run)
        if entity is not None:
            spans.append(entity)
        run.clear()
        pending.clear()

    for word in words(text):
        last = (pending or run)[-1] if run else None
        joined = last is not None and _SAME_LINE_SPACE.fullmatch(text[last.end : word.start])
        connector = " ".join(w.text for w in [*pending, word])
        if _is_capitalised(word.text):
            if not (joined and (not pending or " ".join(w.text for w in pending) in CONNECTORS)):
                close_run()
            run.extend(pending)
            pending.clear()
            run.append(word)
        elif joined and connector in _CONNECTOR_PREFIXES:
            pending.append(word)
        else:
            close_run()
    close_run()
    return spans


def quoted_titles(text: str) -> list[TextSpan]:
    """The trimmed insides of the quoted titles of ``text``, in order."""
    titles = []
    for match in _QUOTED.finditer(text):
        group = next(name for name, value in match.groupdict().items() if value is not None)
        inner = match.group(group)
        stripped = inner.strip()
        if stripped:
            start = match.start(group) + inner.index(stripped)
            titles.append(TextSpan(stripped, start, start + len(stripped)))
    return titles


@dataclass(frozen=True)
class _Anchor:
    kind: str  # "title", "entity" or "number"
    span: TextSpan


def _anchors(question: str) -> list[_Anchor]:
    text = " ".join(unicodedata.normalize("NFKC", question).split())
    titles = quoted_titles(text)
    entities = [e for e in capitalised_spans(text) if not _inside(e, titles)]
    numbers = [
        TextSpan(m.group(0), m.start(), m.end())
        for m in _NUMBER.finditer(text)
        if not _inside(TextSpan(m.group(0), m.start(), m.end()), [*titles, *entities])
    ]
    candidates = [_Anchor("title", t) for t in titles]
    candidates += [_Anchor("entity", e) for e in entities]
    candidates += [_Anchor("number", n) for n in numbers]
    unique: dict[str, _Anchor] = {}
    for anchor in sorted(candidates, key=lambda a: a.span.start):
        unique.setdefault(fold(anchor.span.text), anchor)
    return list(unique.values())


def _inside(span: TextSpan, others: Sequence[TextSpan]) -> bool:
    return any(other.overlaps(span.start, span.end) for other in others)


def question_anchors(question: str) -> tuple[str, ...]:
    """The anchors of ``question``: deduplicated, in order of appearance, NFKC-normalised."""
    return tuple(anchor.span.text for anchor in _anchors(question))


def _pattern(anchor: _Anchor) -> re.Pattern[str]:
    key = re.escape(fold(anchor.span.text))
    if anchor.kind == "number":
        return re.compile(rf"(?<![^\W_])(?<!\d[.,]){key}(?!\d)(?![.,]\d)")
    head = r"(?<![^\W_])" if re.match(r"[^\W_]", key) else ""
    tail = r"(?![^\W_])" if re.search(r"[^\W_]$", key) else ""
    return re.compile(head + key + tail)


@dataclass(frozen=True)
class AnchorCoverage:
    """Anchor coverage of one row: which question anchors the cited contexts contain."""

    score: float
    anchors: tuple[str, ...]
    found: tuple[str, ...]
    missing: tuple[str, ...]
    cited_contexts: int = 0

    def evidence(self) -> str:
        """One line for a human: how many anchors were found, and which are missing."""
        if not self.anchors:
            return (
                "the question has no anchors (years, numbers, capitalised names, quoted "
                "titles), so nothing can be missing"
            )
        noun = "anchor" if len(self.anchors) == 1 else "anchors"
        line = f"{len(self.found)} of {len(self.anchors)} {noun} in the cited contexts"
        if self.cited_contexts == 0:
            line += " (nothing was cited)"
        if self.missing:
            line += "; missing: " + ", ".join(f"'{anchor}'" for anchor in self.missing)
        return line


def anchor_coverage(question: str, cited_texts: Sequence[str]) -> AnchorCoverage:
    """Share of the anchors of ``question`` found in ``cited_texts`` (module docstring).

    No anchor gives 1.0; anchors but no cited text give 0.0. Raises ``TypeError`` when
    ``cited_texts`` is a single string rather than a sequence of texts.
    """
    if isinstance(cited_texts, str):
        raise TypeError("cited_texts must be a sequence of texts, not one string")
    anchors = _anchors(question)
    haystacks = [fold(text) for text in cited_texts]
    found = [a for a in anchors if any(_pattern(a).search(h) for h in haystacks)]
    names = tuple(a.span.text for a in anchors)
    found_names = tuple(a.span.text for a in found)
    missing = tuple(name for name in names if name not in found_names)
    score = len(found) / len(anchors) if anchors else 1.0
    return AnchorCoverage(score, names, found_names, missing, len(cited_texts))


# -- the metric fixture ------------------------------------------------------------------


def cited_texts(row: Row, metric: str, ctx: MetricContext) -> list[str]:
    """The texts of the contexts the answer cites (each once, in citation order)."""
    answer, contexts = row.require("answer", metric), row.require("contexts", metric)
    ids = [str(c["doc_id"]) for c in contexts]
    texts: dict[int, str] = {}
    for citation in find_citations(answer, ids, ctx.settings.citations):
        if citation.doc_id is None:
            continue
        index = (
            citation.target - 1 if isinstance(citation.target, int) else ids.index(citation.doc_id)
        )
        texts.setdefault(index, str(contexts[index]["text"]))
    return list(texts.values())


def measure_anchor_coverage(row: Row, ctx: MetricContext) -> Measured:
    """The share of the question's anchors found in the contexts the answer cites."""
    result = anchor_coverage(
        row.require("question", "anchor_coverage"), cited_texts(row, "anchor_coverage", ctx)
    )
    details = {
        "anchors": {
            "found": list(result.found),
            "missing": list(result.missing),
        }
    }
    evidence = Evidence(AnchorCoverage.evidence, result)
    return Measured({"anchor_coverage": result.score}, evidence, details=details)


SPECS = (
    MetricSpec(
        "anchor_coverage",
        "Share of the question's anchors (numbers, dates, quoted titles, capitalised names) "
        "found in the contexts the answer cites, 0-1.",
        (
            MetricInfo(
                "anchor_coverage",
                "share of the question's anchors found in the cited contexts",
                range=UNIT,
                presentation=Presentation(bar=7),
            ),
        ),
        ("question", "answer", "contexts"),
        measure_anchor_coverage,
        reads_citations=True,
    ),
)
