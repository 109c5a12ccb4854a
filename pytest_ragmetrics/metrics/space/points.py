"""The texts a picture of an eval's embedding space draws: each row's question and answer,
and each distinct chunk (context, by doc id) the rows carry; and the limits every process
agrees on. Importing this module imports no numpy: the options read its constants.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragmetrics.data.dataset import Row

QUESTION, ANSWER, CHUNK = "question", "answer", "chunk"
KINDS = (QUESTION, ANSWER, CHUNK)
MIN_POINTS = 3
"""The fewest points a 2-D projection is drawn for: two points only make a line."""
DEFAULT_LIMIT = 3000
"""Points drawn per eval unless ``--ragmetrics-projection-limit`` says otherwise."""
PREVIEW_CHARS = 200
"""A point's text is kept to this many characters (then "…") in the reports."""
MAX_SEED = 2**32 - 1
"""The largest seed: umap-learn hands it to numpy's legacy ``RandomState``."""
PICTURE_DETAIL = "_projection"
"""The key of a dataset-level test's details that carries the picture to the controller;
no metric's name starts with "_", so it is no metric's. The report document holds it as
the eval's ``projection``."""
# Which points the outliers of ``embedding_space`` over a field are.
FIELD_KINDS = {"contexts": CHUNK, "question": QUESTION, "answer": ANSWER}


def umap_version() -> str | None:
    """The installed umap-learn's version, or ``None`` when it is not installed (asked of
    the distribution's metadata: nothing is imported)."""
    try:
        return importlib.metadata.version("umap-learn")
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Point:
    """One text of the picture: its kind, the id it is known by (the row id of a question
    or answer, the doc id of a chunk) and the text."""

    kind: str
    id: str
    text: str


def preview(text: str) -> str:
    """``text`` cut to ``PREVIEW_CHARS`` characters, ending in "…" when cut."""
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[: PREVIEW_CHARS - 1].rstrip() + "…"


def eval_points(rows: Sequence[Row]) -> list[Point]:
    """The questions (one per row, in row order), the answers (likewise) and the chunks
    (each doc id once, with the text it first came with) of ``rows``.

    A row without a question, or an answer, simply has no point of that kind (a dataset
    level eval needs neither), and nor does one whose value is not a non-empty string.
    Identical questions of two rows are two points: a duplicate is what a look at the data
    should show.
    """
    questions: list[Point] = []
    answers: list[Point] = []
    chunks: list[Point] = []
    seen: set[str] = set()
    for row in rows:
        question, answer = row.get("question"), row.get("answer")
        if isinstance(question, str) and question.strip():
            questions.append(Point(QUESTION, row.id, question))
        if isinstance(answer, str) and answer.strip():
            answers.append(Point(ANSWER, row.id, answer))
        for context in row.get("contexts") or ():
            doc_id, text = str(context.get("doc_id")), context.get("text")
            if doc_id in seen:  # the first text of a doc id is its text, as embedding_space's
                continue
            seen.add(doc_id)
            if isinstance(text, str) and text.strip():
                chunks.append(Point(CHUNK, doc_id, text))
    return [*questions, *answers, *chunks]
