"""Hypothesis strategies for well-formed rows: every field docs/datasets.md#fields
describes, with values a dataset may hold, so that a metric's properties are checked on
the rows it will meet.

Each strategy builds one part of a row and they compose: ``contexts()`` gives the
documents, ``answers(contexts)`` an answer citing them (``[CIT:id]`` or ``[n]``),
``idk_answers()`` an abstention, ``golds()`` gold answers and aliases, ``retrieval()``
a ranking with its qrels, ``tokens()``, ``latencies()`` and ``telemetry()`` the cost
fields, and ``rows()`` puts them together into a ``Row``. The texts are short sentences
of a small vocabulary with numbers, years and names: enough for answers to share words,
numbers and sentences with their contexts and golds (so EM, F1 and overlap take every
value), few enough that a shrunk example stays readable.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hypothesis import strategies as st

from pytest_ragmetrics.data.dataset import Row, validate_fields
from pytest_ragmetrics.text.citations import strip_citations

Style = Literal["cit", "numbered"]
Language = Literal["en", "id", "ru"]
STYLES: tuple[Style, ...] = ("cit", "numbered")
LANGUAGES: tuple[Language, ...] = ("en", "id", "ru")
SOURCE = "<generated>"  # a generated row's file, in every message naming it

WORDS = (
    "the", "router", "resets", "after", "update", "battery", "lasts", "hours", "price",
    "is", "euros", "paris", "jakarta", "tower", "was", "built", "in", "about", "total",
    "average", "speed", "of", "network", "supports", "users", "a", "an", "and", "model",
    "version", "released", "dollars", "per", "month", "Paris", "Jakarta", "Eiffel", "WiFi",
)  # fmt: skip
NUMBERS = ("3", "12", "42", "3.5", "1889", "2019", "2024", "100", "0.75")

# Abstentions the default IDK phrases match (docs/metrics.md#idk-detection), in the three
# languages the defaults cover; the English ones with straight and curly apostrophes.
IDK_SENTENCES: Mapping[Language, tuple[str, ...]] = {
    "en": (
        "I don't know.",
        "I don\u2019t know.",
        "I do not know.",
        "I couldn't find an answer.",
        "I could not find an answer.",
        "I cannot find an answer.",
        "I apologize, but I couldn't find an answer.",
        "Sorry, I dont know the answer to that.",
    ),
    "id": (
        "Saya tidak tahu.",
        "Maaf, saya tidak tahu jawabannya.",
        "Saya tidak dapat menemukan jawaban.",
    ),
    "ru": ("Я не знаю.", "Не знаю.", "Я не могу найти ответ.", "Извините, я не знаю."),
}

_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."


def doc_ids() -> st.SearchStrategy[str]:
    """A document id as datasets write them: ``d3``, ``wifi-1``, ``kb_2.1``, ``17``; never
    holding ``]`` or white space, so that ``[CIT:<id>]`` writes it as it is."""
    return st.text(_ID_ALPHABET, min_size=1, max_size=8)


def sentences() -> st.SearchStrategy[str]:
    """A sentence of 2 to 8 words and numbers, capitalised, ending with a full stop."""
    token = st.one_of(st.sampled_from(WORDS), st.sampled_from(NUMBERS))
    return st.lists(token, min_size=2, max_size=8).map(_sentence)


def _sentence(tokens: Sequence[str]) -> str:
    text = " ".join(tokens)
    return f"{text[0].upper()}{text[1:]}."


def contexts(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[list[dict[str, Any]]]:
    """The contexts a generator saw: ``{doc_id, text}`` objects (some with a ``title``),
    each ``doc_id`` unique, each ``text`` one to three sentences."""

    def build(ids: list[str], texts: list[str], titles: list[str | None]) -> list[dict[str, Any]]:
        built = []
        for doc_id, text, title in zip(ids, texts, titles, strict=False):
            context: dict[str, Any] = {"doc_id": doc_id, "text": text}
            if title is not None:
                context["title"] = title
            built.append(context)
        return built

    text = st.lists(sentences(), min_size=1, max_size=3).map(" ".join)
    return st.lists(doc_ids(), min_size=min_size, max_size=max_size, unique=True).flatmap(
        lambda ids: st.builds(
            build,
            st.just(ids),
            st.lists(text, min_size=len(ids), max_size=len(ids)),
            st.lists(st.none() | st.sampled_from(WORDS), min_size=len(ids), max_size=len(ids)),
        )
    )


def _marker(targets: Sequence[int], context_list: Sequence[Mapping[str, Any]], style: Style) -> str:
    """The markers citing ``targets`` (0-based context indices; an index past the last
    context is an invalid citation): ``[CIT:id]`` each, or ``[n]`` each or ``[n, m]``."""
    count = len(context_list)
    if style == "numbered":
        return "".join(f"[{target + 1}]" for target in targets)
    ids = [str(context["doc_id"]) for context in context_list]
    return "".join(
        f"[CIT:{ids[target]}]" if target < count else f"[CIT:{_missing_id(ids, target)}]"
        for target in targets
    )


def _missing_id(ids: Sequence[str], target: int) -> str:
    """An id naming no context, one per invalid target."""
    return next(
        candidate
        for n in itertools.count()
        if (candidate := f"missing-{target}{'-' * n}") not in ids
    )


@st.composite
def _claim(draw: st.DrawFn, context_list: Sequence[Mapping[str, Any]], style: Style) -> str:
    """One claim sentence: a context's first sentence (grounded) or another, with zero to
    two citations, valid or not, before or after its full stop."""
    firsts = [str(context["text"]).split(". ")[0].rstrip(".") + "." for context in context_list]
    sentence = draw(st.sampled_from(firsts) | sentences() if firsts else sentences())
    targets = draw(st.lists(st.integers(0, len(context_list)), max_size=2))
    marker = _marker(targets, context_list, style)
    if not marker:
        return sentence
    if style == "numbered" and len(targets) > 1 and draw(st.booleans()):
        marker = f"[{', '.join(str(target + 1) for target in targets)}]"
    if draw(st.booleans()):
        return f"{sentence}{marker}"  # after the full stop: still this sentence's
    return f"{sentence[:-1]} {marker}."


def answers(
    context_list: Sequence[Mapping[str, Any]], style: Style = "cit"
) -> st.SearchStrategy[str]:
    """An answer of one to three claim sentences over ``context_list``, citing them in
    ``style``: ``"cit"`` writes ``[CIT:<doc_id>]``, ``"numbered"`` writes ``[n]`` (and
    sometimes ``[n, m]``). A sentence cites zero, one or two contexts, sometimes one that
    does not exist (an invalid citation); some repeat a context's sentence word for word,
    others share only words with it. Now and then an IDK sentence joins the claims (a
    partial abstention), cited or not, which ``idk_citation`` flags."""
    if style not in STYLES:
        raise ValueError(f"answers(style={style!r}): the style is one of {', '.join(STYLES)}")
    claims = st.lists(_claim(context_list, style), min_size=1, max_size=3)
    idk = st.none() | idk_answers(context_list=context_list, style=style)
    return st.tuples(claims, idk).map(
        lambda parts: " ".join([*parts[0], *filter(None, [parts[1]])])
    )


@st.composite
def idk_answers(
    draw: st.DrawFn,
    language: Language | None = None,
    context_list: Sequence[Mapping[str, Any]] = (),
    style: Style = "cit",
) -> str:
    """An abstention: one sentence the default IDK phrases match, in ``language``
    (``"en"``, ``"id"`` or ``"ru"``; any of them when ``None``). Given contexts, it
    sometimes cites one in ``style``, as an answer breaking the no-citation-when-IDK
    contract does."""
    if language is not None and language not in LANGUAGES:
        raise ValueError(
            f"idk_answers(language={language!r}): the languages are {', '.join(LANGUAGES)}"
        )
    chosen: Language = language if language is not None else draw(st.sampled_from(LANGUAGES))
    sentence = draw(st.sampled_from(IDK_SENTENCES[chosen]))
    cited: bool = bool(context_list) and draw(st.booleans())
    if cited:
        target = draw(st.integers(0, len(context_list) - 1))
        sentence = f"{sentence[:-1]} {_marker([target], context_list, style)}."
    return sentence


def golds() -> st.SearchStrategy[str | list[str]]:
    """A gold answer: a short phrase, or a list of one to three aliases of it."""
    phrase = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(NUMBERS)), min_size=1,
                      max_size=4).map(" ".join)  # fmt: skip
    return phrase | st.lists(phrase, min_size=1, max_size=3)


@st.composite
def retrieval(draw: st.DrawFn, doc_id_pool: Sequence[str] = ()) -> dict[str, Any]:
    """A ranking and its qrels: ``retrieved`` (unique doc ids, ranked, possibly empty) and
    ``relevant`` as a list of ids or as ``{doc_id: grade}`` with grades 0 to 3 (0: judged
    non-relevant). At least one document is relevant (trec_eval evaluates only judged
    queries). The ids come from ``doc_id_pool`` and a few more."""
    pool = list(dict.fromkeys([*doc_id_pool, *draw(st.lists(doc_ids(), max_size=4))]))
    if not pool:
        pool = [draw(doc_ids())]
    retrieved = draw(st.lists(st.sampled_from(pool), max_size=len(pool), unique=True))
    first = draw(st.sampled_from(pool))
    others = draw(st.lists(st.sampled_from(pool), max_size=len(pool), unique=True))
    if draw(st.booleans()):
        return {"retrieved": retrieved, "relevant": list(dict.fromkeys([first, *others]))}
    grades = {doc_id: draw(st.integers(0, 3)) for doc_id in others}
    grades[first] = draw(st.integers(1, 3))
    return {"retrieved": retrieved, "relevant": grades}


def tokens() -> st.SearchStrategy[int | dict[str, int] | list[dict[str, Any]]]:
    """The ``tokens`` field in each of its shapes: a total, ``{prompt, completion}``, or a
    list of calls (``{stage?, prompt_tokens, completion_tokens}``)."""
    count = st.integers(0, 100_000)
    call = st.fixed_dictionaries(
        {"prompt_tokens": count, "completion_tokens": count},
        optional={"stage": st.sampled_from(("retrieve", "generate", "judge"))},
    )
    return st.one_of(
        count,
        st.fixed_dictionaries({"prompt": count, "completion": count}),
        st.lists(call, max_size=3),
    )


def latencies() -> st.SearchStrategy[float]:
    """``latency_ms``: a finite number of milliseconds, 0 to an hour."""
    return st.floats(0, 3_600_000, allow_nan=False, allow_infinity=False)


def telemetry() -> st.SearchStrategy[dict[str, Any]]:
    """``telemetry`` with ``rounds`` (>= 1) and a ``stop_reason``, sometimes the system's
    own ``"action": "ABSTAIN"``."""
    return st.fixed_dictionaries(
        {"rounds": st.integers(1, 5), "stop_reason": st.sampled_from(("answer", "budget"))},
        optional={"action": st.sampled_from(("ABSTAIN", "ANSWER"))},
    )


# The fields rows() may leave out when a metric does not require them.
OPTIONAL = ("answerable", "retrieved", "telemetry", "question")


@st.composite
def rows(draw: st.DrawFn, requires: Sequence[str] = (), style: Style | None = None) -> Row:
    """A well-formed ``Row`` holding every field the built-in metrics read: ``question``,
    ``answer`` (claims citing in ``style``, either when ``None``, or an IDK sentence),
    ``gold``, ``contexts``, ``retrieved`` and ``relevant``, ``answerable``, ``tokens``,
    ``latency_ms``, ``telemetry``, ``repeats`` and ``retrieved_repeats``, ``show`` and
    ``show_gold`` (``repeats`` and ``retrieved_repeats`` hold at least one, as the
    consistency metrics need). The fields of ``OPTIONAL`` are sometimes absent unless named in
    ``requires``. The gold is sometimes the answer's own words, the repeats sometimes the
    answer itself, so that the metrics see matches as well as misses."""
    chosen: Style = style if style is not None else draw(st.sampled_from(STYLES))
    context_list = draw(contexts())
    answer = draw(
        answers(context_list, chosen) | idk_answers(context_list=context_list, style=chosen)
    )
    data: dict[str, Any] = {
        "question": draw(st.sampled_from(QUESTIONS)),
        "answer": answer,
        "gold": draw(golds() | st.sampled_from(_answer_as_gold(answer))),
        "contexts": context_list,
        "answerable": draw(st.booleans()),
        "tokens": draw(tokens()),
        "latency_ms": draw(latencies()),
        "telemetry": draw(telemetry()),
        "repeats": draw(st.lists(st.just(answer) | sentences(), min_size=1, max_size=3)),
        "show": draw(st.booleans()),
        "show_gold": draw(st.booleans()),
    }
    ranking = draw(retrieval([str(context["doc_id"]) for context in context_list]))
    data.update(ranking)
    data["retrieved_repeats"] = draw(
        st.lists(
            st.just(ranking["retrieved"]) | st.permutations(ranking["retrieved"]),
            min_size=1,
            max_size=2,
        )
    )
    for field in OPTIONAL:
        if field not in requires and draw(st.booleans()):
            del data[field]
    return as_row(data, index=draw(st.integers(0, 999)))


QUESTIONS = (
    "When was the Eiffel Tower built?",
    "What is the average battery life in hours?",
    "What is the total price per month?",
    "How many users does the WiFi network support in 2024?",
    "Which version of the model was released in Jakarta?",
)


def _answer_as_gold(answer: str) -> list[str]:
    """Golds the answer matches: its text without markers (the very text an embedding
    metric embeds for it), and the same without full stops."""
    text = strip_citations(answer)
    return [text, text.replace(".", "").strip() or text]


def as_row(data: Mapping[str, Any], index: int = 0) -> Row:
    """``data`` as the ``Row`` a dataset line holding it loads as; a ``ValueError`` naming
    the field when a field is malformed (a strategy of one's own made a bad row)."""
    problems = validate_fields(data)
    if problems:
        shown = "; ".join(f"{problem.field}: {problem.message}" for problem in problems)
        raise ValueError(f"{SOURCE}: not a well-formed row: {shown}; fix the row strategy")
    row_id = str(data.get("id", f"g{index}"))
    return Row(row_id, SOURCE, index + 1, index, dict(data))
