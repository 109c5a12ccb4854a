"""Entailment judges for the Trust-Score suite: ``judge(premise, hypothesis) -> bool``.

* ``TableJudge``: verdicts given as data, for exact reproduction of published numbers and
  for tests; a pair it has no verdict for is an error, never a guess.
* ``EmbeddingJudge``: the offline default, cosine of the premise's and the hypothesis's
  embeddings at least ``tau``. It is an *approximation* of an NLI model, and says so
  (``approximate = True``): every report that used it must say the citation numbers are
  approximate.

Any callable with the same signature works (an NLI cross-encoder, an LLM judge).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import resolve_setting
from pytest_ragmetrics.metrics.base import Embed

DEFAULT_ENTAILMENT_TAU = 0.65
# trust_judge = "llm": the [judge] endpoint (pytest_ragmetrics.metrics.judge)
LLM_TRUST_JUDGE = "llm"

Judge = Callable[[str, str], bool]


class MissingVerdict(KeyError):
    """A ``TableJudge`` was asked about a pair its table does not hold."""


@dataclass
class TableJudge:
    """Entailment verdicts as data: ``{(premise, hypothesis): bool}``.

    ``calls`` records every question asked, in order, so a test can check the reference's
    call pattern too.
    """

    verdicts: Mapping[tuple[str, str], bool]
    calls: list[tuple[str, str]] = field(default_factory=list)
    approximate: bool = False
    name: str = "table"
    record_calls: bool = True

    def __call__(self, premise: str, hypothesis: str) -> bool:
        if self.record_calls:
            self.calls.append((premise, hypothesis))
        try:
            return bool(self.verdicts[(premise, hypothesis)])
        except KeyError:
            raise MissingVerdict(
                f"no verdict for hypothesis {hypothesis!r} given premise {premise[:80]!r}..."
            ) from None

    @classmethod
    def from_records(
        cls, records: Iterable[Mapping[str, object]], where: Sequence[str] | None = None
    ) -> TableJudge:
        """From records ``{"premise": ..., "hypothesis": ..., "entailed": true}``;
        ``where`` names each record's place (``file:line``) for the error message."""
        verdicts = {}
        for i, record in enumerate(records):
            premise, hypothesis = record.get("premise"), record.get("hypothesis")
            entailed = record.get("entailed")
            texts = isinstance(premise, str) and isinstance(hypothesis, str)
            if not (texts and isinstance(entailed, bool)):
                place = where[i] if where else f"verdict {i}"
                raise ValueError(
                    f"{place}: expected string 'premise' and 'hypothesis' and boolean "
                    f"'entailed', got {dict(record)!r}"
                )
            verdicts[(str(premise), str(hypothesis))] = bool(entailed)
        return cls(verdicts)


@dataclass
class EmbeddingJudge:
    """Entailed when cos(embed(premise), embed(hypothesis)) >= ``tau``: an offline
    approximation of NLI entailment, labelled as such (``approximate``)."""

    embed: Embed
    tau: float = DEFAULT_ENTAILMENT_TAU
    approximate: bool = True
    name: str = "embedding"

    def __call__(self, premise: str, hypothesis: str) -> bool:
        import numpy as np

        if not hypothesis.strip():
            return False  # an empty claim (a citation-only fragment) is entailed by nothing
        vectors: Sequence[np.ndarray] = self.embed([premise, hypothesis])  # type: ignore[assignment]
        a, b = (np.asarray(v, dtype=np.float64) for v in vectors)
        norms = float(np.linalg.norm(a) * np.linalg.norm(b))
        return norms > 0 and float(a @ b) / norms >= self.tau


@functools.lru_cache(maxsize=8)
def load_table_judge(path: Path) -> TableJudge:
    """A ``TableJudge`` from a JSONL file of verdict records, read once per process;
    ``ValueError`` names the file and line of a bad record."""
    records, where = [], []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON: {error.msg}") from None
            if not isinstance(records[-1], dict):
                raise ValueError(f"{path}:{number}: expected an object")
            where.append(f"{path}:{number}")
    judge = TableJudge.from_records(records, where)
    judge.record_calls = False
    return judge


class NliModelError(Exception):
    """An NLI model directory cannot serve as a judge; the message says why."""


@dataclass
class NliJudge:
    """Entailment from an NLI cross-encoder the user has on disk (never downloaded):
    entailed when the model's highest-scoring label for (premise, hypothesis) is its
    entailment label. ``load`` finds that label in the model's ``id2label``."""

    model: Any
    entailment: int
    path: str
    approximate: bool = False
    name: str = "nli"

    @classmethod
    def load(cls, path: Path) -> NliJudge:
        if not (path / "config.json").is_file():
            raise NliModelError(f"{path}: not a model directory (no config.json)")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(str(path), local_files_only=True)
        labels = {int(i): str(label) for i, label in model.config.id2label.items()}
        entailment = [i for i, label in labels.items() if label.lower().startswith("entail")]
        if len(entailment) != 1:
            raise NliModelError(
                f"{path}: expected one entailment label in id2label, got {sorted(labels.values())}"
            )
        return cls(model, entailment[0], str(path))

    def __call__(self, premise: str, hypothesis: str) -> bool:
        import numpy as np

        scores = np.asarray(self.model.predict([(premise, hypothesis)]))
        return int(np.argmax(scores.reshape(-1))) == self.entailment


@functools.lru_cache(maxsize=2)
def load_nli_judge(path: Path) -> NliJudge:
    """An ``NliJudge`` from a model directory, loaded once per process."""
    return NliJudge.load(path)


def judge_for(setting: str, base_dir: Path | None, embed: Embed, tau: float) -> Judge:
    """The judge a ``trust_judge`` setting names: ``"embedding"``, ``"table:<path>"`` or
    ``"nli:<directory>"`` (paths relative to thresholds.toml's directory)."""
    base = base_dir or Path.cwd()

    def unusable(problem: str) -> ValueError:
        return ValueError(f"trust_judge {setting!r}: {problem}")

    if setting.startswith("table:"):
        return load_table_judge(resolve_setting(base / setting[6:], unusable))
    if setting.startswith("nli:"):
        return load_nli_judge(resolve_setting(base / setting[4:], unusable))
    return EmbeddingJudge(embed, tau)
