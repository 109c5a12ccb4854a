"""Root conftest of the example evals under evals/.

The plugin itself is loaded through its pytest11 entry point. This file declares the
example's metric of its own, ``numbers_cited``, gated in thresholds.toml for
``evals/test_grounding.py`` (docs/custom-metrics.md). It is declared here, not in
``evals/conftest.py``: thresholds.toml sits at the project's root and every run inside the
project reads it (``pytest tests/`` too), and only the root conftest.py is imported by all
of them before the gates are read. A project that evaluates a live system also defines the
fixtures that call it in a file like this one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_ragmetrics import RowValue, metric
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.text.citations import find_citations, strip_citations
from pytest_ragmetrics.text.sentences import split_sentences

# A number as written in prose: 1440, 5,895, 3.5 (a thousands comma is dropped to compare).
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, in order, thousands commas removed."""
    return [number.replace(",", "") for number in NUMBER.findall(text)]


def pooled(sums: Mapping[str, float]) -> float:
    """Cited numbers over all numbers of the eval's answers; 1 when no answer has any."""
    return sums["cited"] / sums["numbers"] if sums["numbers"] else 1.0


@metric(requires=("answer", "contexts"), range=(0, 1), corpus={"pooled": pooled}, version=1)
def numbers_cited(row: Row) -> RowValue:
    """Share of the answer's numbers found in a context their own sentence cites.

    A number a RAG system writes (a year, a height, a price) should come from the source
    its sentence cites; one found in none of them is unsupported, however fluent the
    sentence (and a sentence citing nothing supports none of its numbers). The citation
    markers themselves ([CIT:id], [n]) are not numbers of the answer. An answer without
    numbers scores 1. ``numbers_cited.pooled`` counts over all numbers of the
    eval, so an answer with twenty numbers weighs twenty times one with one.
    """
    contexts = {str(context["doc_id"]): context["text"] for context in row.contexts}
    numbers, missing = 0, []
    for sentence in split_sentences(row.answer):
        cited = {c.doc_id for c in find_citations(sentence.text, row.context_ids) if c.valid}
        available = set(numbers_in(" ".join(contexts[doc_id] for doc_id in sorted(cited))))
        written = numbers_in(strip_citations(sentence.text))
        numbers += len(written)
        missing += [number for number in written if number not in available]
    found = numbers - len(missing)
    share = found / numbers if numbers else 1.0
    evidence = f"{found} of {numbers} number(s) in a context their sentence cites"
    if missing:
        evidence += f"; not found: {', '.join(missing)}"
    return RowValue(share, evidence, {"cited": found, "numbers": numbers})
