"""The F1 (short) finalizer: a deterministic short answer extracted from a long one.

docs/metrics.md#the-finalizer. ``finalize(question, answer)`` returns the minimal span of
the answer that answers the question, for EM/F1 (short) only; the displayed answer is never
changed. The answer is citation-stripped (``strip_citations``) first, and the short answer
is always a substring of that text, or all of it. The first rule that applies wins; ``rule``
names it.

1. ``abstain``: the answer abstains (docs/metrics.md#abstain; an empty answer does too): whole text.
2. The question (NFKC, case-folded) is classified by the first cue group of
   ``_QUESTION_CUES`` it contains, as whole words, in this order: *average* (average,
   averaged…, avg, "the/a mean", "mean of", rata-rata, rerata, средн…, в среднем);
   *total* (total, in total, overall, altogether, in all, combined, sum, jumlah,
   keseluruhan, seluruhnya, всего, итого, в сумме, суммарн…, общий…); *year* (what/which
   year, tahun berapa/apa, в каком году, какой год); *date* (what/which date, tanggal
   berapa, какого числа, какая дата); *count* (how many/much/long/old/big/large/far/fast/
   often, what percentage/percent/share, berapa, сколько, какой процент, какова доля);
   *when* (when, kapan, когда); *who/which* (who, whom, whose, which, siapa, yang mana, кто,
   кого, кому, кем, чей…, какой…, который…). No cue: ``whole``.
3. Numbers (average, total, count). A candidate is an optional currency (``$ US$ € £ ¥ ₽
   Rp IDR USD EUR``), a number (optional sign; digits with ``,``/``.`` groups, or 1–3
   digits with space-separated groups of three, "1 200"; or a range "5-10"), then ``%``
   or an optional magnitude (``_MAGNITUDES``: million, juta, млн…), unit (``_UNITS``: GB,
   ms, days, users, tahun, рублей…) and period ("per month", "/month", "a month", "per
   bulan", "в месяц"), words matched case-insensitively. It is not preceded by a letter,
   digit, "." "," or "-" nor followed by a letter or digit, so "GPT-4", "5th" and "1990s"
   give none. Dropped: candidates inside a date (rule 4), and those with a number that
   also occurs in the question; bare years (4 digits 1000–2099, nothing attached) are
   dropped while any other candidate is left.

   - ``average``: the last candidate right after an approximation marker (≈ ~ about
     approximately approx. around roughly circa sekitar kira-kira "kurang lebih" около
     примерно приблизительно порядка); else the first candidate ≤ 40 characters after an
     average word of the answer (the last such word that has one; no sentence break in
     between: ``! ? ;``, a line break, or "." before a space); else the last candidate.
   - ``total``: the candidate nearest a total word of the answer (the last such word that
     has one): the first ≤ 40 characters after it with no sentence break in between, or
     the last one before it separated by spaces and at most one word ("1,500 users in
     total", "300 rows in total"); the shorter gap wins, after on ties. Else the count
     rule.
   - ``number`` (count): the first candidate whose unit word occurs in the question ("How
     many users" prefers "1,200 users" to "3 regions"), else the first candidate.
4. Dates (year, date, when). Date spans: "2024-03-12", "12.03.2024", "12/03/2024", "12
   March 2024", "March 12, 2024", "March 2024", "12 March", "March 12", with English
   (abbreviations too) or Indonesian month names written capitalised, or Russian ones in
   any case ("12 марта 2024"). Years: 4 digits 1000–2099 on number boundaries, "1990s"
   allowed. Dropped: dates whose text and years whose digits occur in the question.

   - ``year`` (year questions): the first year, years inside dates included.
   - ``date`` or ``year`` (date and when questions): the first date or stand-alone year.
5. Entities (who/which): quoted titles (``title``) and capitalised spans (``entity``) of
   the answer exactly as ``anchors.quoted_titles`` and ``anchors.capitalised_spans``
   define them (leading stop words dropped: "The Pro plan" gives "Pro"), spans inside a
   title excluded; in order of appearance, minus those whose every word occurs in the
   question. A one-word span starting a sentence (text start, or after ``. ! ? : ;`` or a
   line break) is taken only when nothing else is left.
6. ``whole``: no cue, or the rule found no candidate: the whole citation-stripped answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.abstention import abstention
from pytest_ragmetrics.metrics.anchors import (
    NUMBER_CORE,
    TextSpan,
    capitalised_spans,
    fold,
    quoted_titles,
    words,
)
from pytest_ragmetrics.metrics.answer import best_f1, exact_match
from pytest_ragmetrics.metrics.base import (
    UNIT,
    Column,
    Evidence,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSpec,
    Presentation,
    Versus,
    golds,
)
from pytest_ragmetrics.text.citations import CitationFormat, strip_citations
from pytest_ragmetrics.text.patterns import LazyPattern


@dataclass(frozen=True)
class ShortAnswer:
    """The short answer used by EM/F1 (short), and the name of the rule that chose it."""

    text: str
    rule: str


def _words(text: str) -> str:
    """A regex alternation of the white-space separated words of ``text``, longest first."""
    return "|".join(re.escape(w) for w in sorted(set(text.split()), key=lambda w: (-len(w), w)))


_AVERAGE = r"averag\w*|avg|rata-rata|rerata|средн\w*"
_TOTAL = (
    r"in\s+total|total\w*|overall|altogether|in\s+all|combined|sum|jumlah|keseluruhan|seluruhnya"
    r"|всего|итого|в\s+сумме|суммарн\w*|общ(?:ий|ая|ее|ие|ей|его|ую|ем)"
)
_QUESTION_CUES = {  # tried in this order; the first group found classifies the question
    "average": rf"{_AVERAGE}|(?:the|a)\s+mean|mean\s+of",
    "total": _TOTAL,
    "year": r"(?:what|which)\s+year|tahun\s+(?:berapa|apa)|в\s+каком\s+году|как(?:ой|ого)\s+год",
    "date": r"(?:what|which)\s+date|tanggal\s+berapa|какого\s+числа|какая\s+дата",
    "count": r"how\s+(?:many|much|long|old|big|large|far|fast|often)|berapa|сколько"
    r"|what\s+(?:percentage|percent|share)|какой\s+процент|какова\s+доля",
    "when": r"when|kapan|когда",
    "entity": r"who|whom|whose|which|siapa|yang\s+mana|кто|кого|кому|кем|ч(?:ей|ья|ьё|ьи)"
    r"|как(?:ой|ая|ое|ие|ую|им|ом)|котор(?:ый|ая|ое|ые|ого|ую)",
}
_CUE_PATTERNS = [
    (kind, LazyPattern(rf"(?<!\w)(?:{cue})(?!\w)")) for kind, cue in _QUESTION_CUES.items()
]
_AVERAGE_WORDS = LazyPattern(rf"(?<!\w)(?:{_AVERAGE}|mean)(?!\w)", re.IGNORECASE)
_TOTAL_WORDS = LazyPattern(rf"(?<!\w)(?:{_TOTAL})(?!\w)", re.IGNORECASE)

_UNITS = _words(
    """GB TB MB KB PB GiB MiB TiB ms sec secs second seconds min mins minute minutes hour
    hours hr hrs day days week weeks month months year years user users device devices file
    files request requests query queries token tokens page pages people person employee
    employees customer customers item items percent dollar dollars euro euros rupiah USD EUR
    IDR GBP RUB detik menit jam hari minggu bulan tahun pengguna perangkat berkas orang
    karyawan pelanggan persen halaman мс сек секунд секунды секунда мин минут минуты минута
    час часа часов день дня дней неделя недели недель месяц месяца месяцев год года лет
    пользователь пользователя пользователей устройство устройства устройств файл файла
    файлов человек сотрудников процент процента процентов рубль рубля рублей руб долларов
    евро ГБ ТБ МБ КБ"""
)
_MAGNITUDES = _words(
    """thousand million billion trillion ribu juta miliar milyar triliun тыс тысяча тысячи
    тысяч млн миллион миллиона миллионов млрд миллиард миллиарда миллиардов"""
)
_PERIODS = _words(
    """second minute hour day week month quarter year user request query person detik menit
    jam hari minggu bulan kuartal tahun orang pengguna секунду минуту час день сутки неделю
    месяц квартал год человека пользователя"""
)
_PER = r"(?:\s?/\s?|\s(?:per|a|an|each|every|tiap|setiap|в|за|на)\s)"
_CURRENCY = r"(?:US\$|\$|€|£|¥|₽|Rp\.?|IDR|USD|EUR)"
_NUMBER = LazyPattern(
    rf"(?<![\w.,\-−])(?P<currency>{_CURRENCY}\s?)?"
    rf"(?P<value>(?:[-−](?=\d))?(?:{NUMBER_CORE})(?:\s?[-–]\s?(?:{NUMBER_CORE}))?)"
    rf"(?:\s?(?P<percent>%)|(?:\s?(?P<magnitude>(?i:{_MAGNITUDES}))(?!\w))?"
    rf"(?:\s?(?P<unit>(?i:{_UNITS}))(?!\w))?(?P<per>{_PER}(?i:{_PERIODS}))?)(?!\w)"
)
_CORE = LazyPattern(NUMBER_CORE)
_APPROX = LazyPattern(
    r"(?:≈|~|∼|\b(?:about|approximately|approx\.|around|roughly|circa|sekitar|kira-kira"
    r"|kurang\s+lebih|около|примерно|приблизительно|порядка))\s*$",
    re.IGNORECASE,
)
_BREAK = LazyPattern(r"[!?;\n]|\.(?:\s|$)")
_ONE_WORD_GAP = LazyPattern(r"[^\S\n]+(?:[^\W\d_]+[^\S\n]+)?")

_MONTHS = _words(
    """January February March April May June July August September October November December
    Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Januari Februari Maret Mei Juni Juli
    Agustus Oktober Desember"""
)
_RU_MONTHS = (
    r"(?i:январ[ьяе]|феврал[ьяе]|март[ае]?|апрел[ьяе]|ма[йяе]|июн[ьяе]|июл[ьяе]"
    r"|август[ае]?|сентябр[ьяе]|октябр[ьяе]|ноябр[ьяе]|декабр[ьяе])"
)
_MONTH = rf"(?:(?:{_MONTHS})\.?|{_RU_MONTHS})"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
_DATE = LazyPattern(
    r"(?<![\w.,/\-])(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{4}"
    rf"|{_DAY}\s{_MONTH},?\s\d{{4}}|{_MONTH}\s{_DAY},?\s\d{{4}}|{_MONTH},?\s\d{{4}}"
    rf"|{_DAY}\s{_MONTH}|{_MONTH}\s{_DAY})(?!\w)"
)
_YEAR = LazyPattern(r"(?<![\w.,])(?:1\d{3}|20\d{2})(?!\d)(?:s(?!\w))?(?!\w)")
_YEAR_DIGITS = LazyPattern(r"(?<!\d)(?:1\d{3}|20\d{2})(?!\d)")
_SENTENCE_START = LazyPattern(r"(?:^|[.!?:;\n])[\s\"'“”‘’«»(\[*•\-–—]*$")


@dataclass(frozen=True)
class _Number:
    span: TextSpan
    unit: str
    bare_year: bool


def _question_kind(question: str) -> str | None:
    folded = unicodedata.normalize("NFKC", question).casefold()
    return next((kind for kind, cue in _CUE_PATTERNS if cue.search(folded)), None)


def _question_numbers(question: str) -> set[str]:
    return set(_CORE.findall(fold(question)))


def _dates(text: str) -> list[TextSpan]:
    return [TextSpan(m.group(0), m.start(), m.end()) for m in _DATE.finditer(text)]


def _numbers(text: str, question: str) -> list[_Number]:
    """Number candidates of ``text`` (rule 3), bare years last-resort only."""
    asked, dates = _question_numbers(question), _dates(text)
    found = []
    for m in _NUMBER.finditer(text):
        span = TextSpan(m.group(0), m.start(), m.end())
        attached = any(m.group(g) for g in ("currency", "percent", "magnitude", "unit", "per"))
        if any(d.overlaps(span.start, span.end) for d in dates):
            continue
        if asked.intersection(_CORE.findall(fold(m.group("value")))):
            continue
        bare_year = not attached and _YEAR_DIGITS.fullmatch(m.group("value")) is not None
        found.append(_Number(span, (m.group("unit") or "").casefold(), bare_year))
    others = [n for n in found if not n.bare_year]
    return others or found


def _near(
    text: str, cue: LazyPattern, numbers: Sequence[_Number], look_before: bool
) -> _Number | None:
    """The candidate nearest a cue word (rule 3), cue words tried from the last.

    The first candidate ≤ 40 characters after the word with no sentence break in between
    (``! ? ;``, a line break, or "." before a space), or, if ``look_before``, the last one
    ending before it with only white space and at most one word in between; the shorter
    gap wins, after on ties.
    """
    for word in reversed(list(cue.finditer(text))):
        options = []
        after = [n for n in numbers if n.span.start >= word.end()]
        if after:
            gap = text[word.end() : after[0].span.start]
            if len(gap) <= 40 and not _BREAK.search(gap):
                options.append((len(gap), 0, after[0]))
        ahead = [n for n in numbers if n.span.end <= word.start()]
        if look_before and ahead:
            gap = text[ahead[-1].span.end : word.start()]
            if _ONE_WORD_GAP.fullmatch(gap):
                options.append((len(gap), 1, ahead[-1]))
        if options:
            return min(options, key=lambda option: option[:2])[2]
    return None


def _average(text: str, numbers: Sequence[_Number]) -> _Number:
    # the longest marker plus spacing fits in 40 characters; lookbehinds still see before it
    approximate = [
        n for n in numbers if _APPROX.search(text, max(0, n.span.start - 40), n.span.start)
    ]
    if approximate:
        return approximate[-1]
    return _near(text, _AVERAGE_WORDS, numbers, look_before=False) or numbers[-1]


def _count(question: str, numbers: Sequence[_Number]) -> _Number:
    asked = {w.text.casefold() for w in words(unicodedata.normalize("NFKC", question))}
    return next((n for n in numbers if n.unit and n.unit in asked), numbers[0])


def _number_answer(kind: str, question: str, text: str) -> ShortAnswer | None:
    numbers = _numbers(text, question)
    if not numbers:
        return None
    if kind == "average":
        return ShortAnswer(_average(text, numbers).span.text, "average")
    if kind == "total" and (near := _near(text, _TOTAL_WORDS, numbers, look_before=True)):
        return ShortAnswer(near.span.text, "total")
    return ShortAnswer(_count(question, numbers).span.text, "number")


def _date_answer(kind: str, question: str, text: str) -> ShortAnswer | None:
    all_dates = _dates(text)
    years = [TextSpan(m.group(0), m.start(), m.end()) for m in _YEAR.finditer(text)]
    if kind == "year":
        inside = [
            TextSpan(m.group(0), d.start + m.start(), d.start + m.end())
            for d in all_dates
            for m in _YEAR_DIGITS.finditer(d.text)
        ]
        years = [*years, *inside]
    else:
        years = [y for y in years if not any(d.overlaps(y.start, y.end) for d in all_dates)]
    asked_numbers, asked_text = _question_numbers(question), fold(question)
    candidates = {(y, "year") for y in years if y.text.rstrip("s") not in asked_numbers}
    if kind != "year":
        candidates |= {(d, "date") for d in all_dates if fold(d.text) not in asked_text}
    if not candidates:
        return None
    span, rule = min(candidates, key=lambda c: (c[0].start, c[0].end, c[1]))
    return ShortAnswer(span.text, rule)


def _entity_answer(question: str, text: str) -> ShortAnswer | None:
    asked = {fold(w.text) for w in words(unicodedata.normalize("NFKC", question))}
    titles = quoted_titles(text)
    candidates = [(t, "title") for t in titles] + [
        (s, "entity")
        for s in capitalised_spans(text)
        if not any(t.overlaps(s.start, s.end) for t in titles)
    ]
    candidates.sort(key=lambda c: c[0].start)
    new = [(s, r) for s, r in candidates if not {fold(w.text) for w in words(s.text)} <= asked]
    if not new:
        return None

    def weak(span: TextSpan, rule: str) -> bool:
        one_word = rule == "entity" and len(words(span.text)) == 1
        return one_word and _SENTENCE_START.search(text[: span.start]) is not None

    span, rule = next(((s, r) for s, r in new if not weak(s, r)), new[0])
    return ShortAnswer(span.text, rule)


def finalize(question: str, answer: str, fmt: CitationFormat = "auto") -> ShortAnswer:
    """The short answer of ``answer`` to ``question`` (rules in the module docstring).

    Deterministic and pure; the text is a substring of the citation-stripped answer, or
    all of it when no rule finds a span (``whole``) or the answer abstains (``abstain``).
    """
    text = strip_citations(answer, fmt)
    if abstention(answer, fmt=fmt).abstains:
        return ShortAnswer(text, "abstain")
    kind = _question_kind(question)
    short: ShortAnswer | None = None
    if kind in ("average", "total", "count"):
        short = _number_answer(kind, question, text)
    elif kind in ("year", "date", "when"):
        short = _date_answer(kind, question, text)
    elif kind == "entity":
        short = _entity_answer(question, text)
    return short or ShortAnswer(text, "whole")


# -- the metric fixtures ----------------------------------------------------------------


def _short(row: Row, metric: str, ctx: MetricContext) -> tuple[str, str]:
    question = row.require("question", metric)
    short = finalize(question, row.require("answer", metric), ctx.settings.citations)
    return short.text, short.rule


def measure_f1_short(row: Row, ctx: MetricContext) -> Measured:
    text, rule = _short(row, "f1_short", ctx)
    match = best_f1(text, golds(row, "f1_short"))
    evidence = Evidence(
        "short answer {!r} (finalizer rule {}); best gold {!r}: {} common token(s)",
        text,
        rule,
        match.gold,
        match.common,
    )
    details = {"short_answer": {"text": text, "rule": rule}}
    return Measured({"f1_short": match.score}, evidence, details=details)


def measure_em_short(row: Row, ctx: MetricContext) -> Measured:
    text, rule = _short(row, "em_short", ctx)
    value = exact_match(text, golds(row, "em_short"))
    verdict = "matches a gold" if value else "matches no gold"
    details = {"short_answer": {"text": text, "rule": rule}}
    evidence = Evidence("short answer {!r} (rule {}) {}", text, rule, verdict)
    return Measured({"em_short": value}, evidence, details=details)


SPECS = (
    MetricSpec(
        "f1_short",
        "SQuAD token F1 of the finalizer's short answer (the minimal span answering the "
        "question: a number, a date, an entity, else the whole answer) against the best "
        "gold, 0-1.",
        (
            MetricInfo(
                "f1_short",
                "SQuAD F1 of the finalizer's short answer, best gold",
                range=UNIT,
                presentation=Presentation(
                    label="F1 short",
                    columns=(Column("systems", 35),),
                    distribution=4,
                    bar=4,
                    versus=(Versus("mean", "delta", 5),),
                ),
            ),
        ),
        ("question", "answer", "gold"),
        measure_f1_short,
    ),
    MetricSpec(
        "em_short",
        "1 when the finalizer's short answer equals a gold alias after SQuAD "
        "normalisation, else 0.",
        (
            MetricInfo(
                "em_short", "exact match of the finalizer's short answer", kind="binary", range=UNIT
            ),
        ),
        ("question", "answer", "gold"),
        measure_em_short,
    ),
)
