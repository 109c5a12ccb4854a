"""LazyPattern behaves as the ``re.compile`` it replaces, compiled on first use."""

from __future__ import annotations

import re

import pytest

from pytest_ragmetrics.text.patterns import LazyPattern

PATTERN = r"(?P<word>[^\W\d_]+)|(?P<number>\d+)"
TEXTS = ["", "Paris 2024 and Berlin", "42", "сколько 3 лет", "no digits here"]


@pytest.mark.parametrize("text", TEXTS)
def test_every_method_gives_what_the_compiled_pattern_gives(text: str) -> None:
    lazy, compiled = LazyPattern(PATTERN, re.IGNORECASE), re.compile(PATTERN, re.IGNORECASE)

    def spans(match: re.Match[str] | None) -> tuple[int, int] | None:
        return None if match is None else match.span()

    assert spans(lazy.search(text)) == spans(compiled.search(text))
    assert spans(lazy.search(text, 3, 12)) == spans(compiled.search(text, 3, 12))
    assert spans(lazy.match(text, 1)) == spans(compiled.match(text, 1))
    assert spans(lazy.fullmatch(text)) == spans(compiled.fullmatch(text))
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub("_", text, count=2) == compiled.sub("_", text, count=2)
    assert lazy.sub(lambda m: m.group(0).upper(), text) == text.upper()
    assert lazy.split(text, maxsplit=1) == compiled.split(text, maxsplit=1)


def test_a_pattern_is_compiled_on_first_use_not_when_declared() -> None:
    broken = LazyPattern("(unclosed")  # declaring it compiles nothing, so nothing fails
    with pytest.raises(re.error):
        broken.search("text")


def test_it_compiles_once_and_keeps_its_source() -> None:
    lazy = LazyPattern(r"\d+", re.ASCII)
    assert lazy.compiled is lazy.compiled
    assert (lazy.compiled.pattern, lazy.compiled.flags & re.ASCII) == (r"\d+", re.ASCII)
    assert (lazy.pattern, lazy.flags) == (r"\d+", re.ASCII)
