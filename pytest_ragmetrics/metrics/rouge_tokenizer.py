"""The ROUGE tokenizer: letters and digits of every script, optional Porter stemming.

Its rules are in the docstring of ``pytest_ragmetrics.metrics.text``. NLTK (seconds of
start-up: it imports SciPy) is imported only when the stemmer is first needed, so ROUGE
without stemming never loads it.

Speed. Text that is all ASCII takes a fast path: NFC changes no ASCII text and the letters
and digits of ASCII are ``[a-z0-9]`` once lowercased, so one regular expression finds the
same tokens as the character-by-character rule that other text goes through. Stems are
memoised per token: a corpus repeats its words, and NLTK's Porter stemmer is pure Python.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nltk.stem.porter import PorterStemmer  # type: ignore[import-untyped]

_MIN_STEM_LENGTH: Final = 4  # rouge-score stems only tokens of more than 3 characters
# Distinct tokens whose stems are remembered: an English corpus's vocabulary, at some tens
# of megabytes at most; the least recently used are forgotten beyond it.
_STEM_CACHE_SIZE: Final = 1 << 18
_ASCII_WORD: Final = re.compile(r"[a-z0-9]+")


@functools.cache
def _porter_stemmer() -> PorterStemmer:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def _porter_stem(token: str) -> str:
    """NLTK's Porter stem of ``token`` (default ``NLTK_EXTENSIONS`` mode, as rouge-score)."""
    stemmed: str = _porter_stemmer().stem(token)
    return stemmed


# Scripts written without spaces between words, whose letters are each a token (as
# multilingual ROUGE implementations split Chinese, Japanese and Thai): a run of them is a
# sentence, not a word. Korean (Hangul) is written with spaces and keeps its words.
_UNSPACED_RANGES: Final = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x323AF),  # CJK unified ideographs extensions B to H, compatibility supplement
)


@functools.lru_cache(maxsize=4096)
def _unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without spaces (``_UNSPACED_RANGES``)."""
    code_point = ord(char)
    return any(low <= code_point <= high for low, high in _UNSPACED_RANGES)


def _split_words(text: str) -> list[str]:
    """Maximal runs of letters/digits, each with the combining marks that follow it; a
    letter of a script written without spaces is a token of its own (with its marks)."""
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if current and unicodedata.category(char).startswith("M"):
            current.append(char)
        elif char.isalnum():
            if current and (_unspaced(char) or _unspaced(current[0])):
                words.append("".join(current))
                current = []
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


def _words(text: str) -> list[str]:
    """The unstemmed tokens of ``text``: NFC, lowercase, runs of letters/digits."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return _split_words(unicodedata.normalize("NFC", text).lower())


def _stem(token: str) -> str:
    if len(token) < _MIN_STEM_LENGTH or not token.isascii():
        return token
    return _porter_stem(token)


def tokenize(text: str, use_stemmer: bool = False) -> list[str]:
    """Split ``text`` into ROUGE tokens, keeping the letters and digits of every script.

    Normalisation: NFC, then ``str.lower()``; tokens are maximal runs of letters/digits
    (``str.isalnum()``), with trailing combining marks kept; everything else separates. A
    letter of a script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar)
    is a token of its own, with its combining marks. With
    ``use_stemmer`` the Porter stemmer is applied to ASCII tokens longer than 3 characters only;
    other scripts are left as they are. On ASCII text the result equals rouge-score's default
    tokenizer. Empty or separator-only text gives ``[]``.
    """
    words = _words(text)
    if not use_stemmer:
        return words
    return [token for token in map(_stem, words) if token]
