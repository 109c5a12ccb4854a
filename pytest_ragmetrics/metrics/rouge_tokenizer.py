"""The ROUGE tokenizer: letters and digits of every script, optional Porter stemming.

Its rules are in the docstring of ``pytest_ragmetrics.metrics.text``. It lives apart from
the ROUGE and BLEU metrics because it subclasses rouge-score's ``Tokenizer`` and so imports
rouge-score and NLTK (seconds of start-up): ``metrics.text`` imports it only when a ROUGE
score is first computed, so loading the plugin does not.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

from nltk.stem.porter import PorterStemmer  # type: ignore[import-untyped]
from rouge_score import tokenizers  # type: ignore[import-untyped]

_MIN_STEM_LENGTH: Final = 4  # rouge-score stems only tokens of more than 3 characters


@functools.cache
def _porter_stemmer() -> PorterStemmer:
    return PorterStemmer()


def _split_words(text: str) -> list[str]:
    """Maximal runs of letters/digits, each with the combining marks that follow it."""
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if char.isalnum() or (current and unicodedata.category(char).startswith("M")):
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


def _stem(token: str, stemmer: PorterStemmer | None) -> str:
    if stemmer is None or not token.isascii() or len(token) < _MIN_STEM_LENGTH:
        return token
    stemmed: str = stemmer.stem(token)
    return stemmed


def _tokenize(text: str, stemmer: PorterStemmer | None) -> list[str]:
    words = _split_words(unicodedata.normalize("NFC", text).lower())
    return [token for token in (_stem(word, stemmer) for word in words) if token]


def tokenize(text: str, use_stemmer: bool = False) -> list[str]:
    """Split ``text`` into ROUGE tokens, keeping the letters and digits of every script.

    Normalisation: NFC, then ``str.lower()``; tokens are maximal runs of letters/digits
    (``str.isalnum()``), with trailing combining marks kept; everything else separates. With
    ``use_stemmer`` the Porter stemmer is applied to ASCII tokens longer than 3 characters only;
    other scripts are left as they are. On ASCII text the result equals rouge-score's default
    tokenizer. Empty or separator-only text gives ``[]``.
    """
    return _tokenize(text, _porter_stemmer() if use_stemmer else None)


class UnicodeTokenizer(tokenizers.Tokenizer):  # type: ignore[misc]  # rouge-score is untyped
    """rouge-score ``Tokenizer`` applying :func:`tokenize`; pass it to ``RougeScorer``."""

    def __init__(self, use_stemmer: bool = False) -> None:
        self._stemmer = _porter_stemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text`` as defined by :func:`tokenize`; ``[]`` for empty text."""
        return _tokenize(text, self._stemmer)
