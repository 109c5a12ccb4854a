"""A dataset's row as metrics read it (``Row``), and as the loader gives it (``LoadedRow``:
the row with whatever is wrong with it).

Loading is ``data.dataset``'s; this module is what every metric, fixture and report
imports to read a row, and imports nothing but the ``Problem`` a loaded row carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ragmetrics.data.streams import Problem


class RowError(Exception):
    """A row lacks, or has a malformed, field that a metric needs."""


@dataclass(frozen=True, slots=True)
class Row:
    """One evaluated question, as loaded and validated from the dataset.

    Fields of docs/datasets.md#fields are attributes (``row.answer``, ``row.gold``, ...), ``None``
    when absent; ``row["any_field"]`` reads any field, known or not. Every row test's item
    holds its row to the end of the run, hence the slots.
    """

    id: str
    source: str
    line: int
    index: int
    data: Mapping[str, Any]
    # A row of a SQL query has no line: it is named by its id.
    keyed: bool = False
    # The column of a proxy relevance label (``SqlDataset.proxy_relevant``): a row
    # without ``relevant`` cannot be judged, and is counted as unjudged.
    proxy: str | None = None

    @property
    def unjudged(self) -> bool:
        """Whether the row's proxy relevance label is missing (NULL)."""
        return self.proxy is not None and "relevant" not in self.data

    def __repr__(self) -> str:
        return f"<Row {self.id!r} at {self.where()}>"

    def __getitem__(self, field: str) -> Any:
        return self.data[field]

    def get(self, field: str, default: Any = None) -> Any:
        return self.data.get(field, default)

    def where(self, field: str | None = None) -> str:
        """``file:line`` of this row (``source: row 'id'`` for a row of a SQL query), with
        the field when given, for error messages."""
        place = f"{self.source}: row {self.id!r}" if self.keyed else f"{self.source}:{self.line}"
        return f"{place}: field {field!r}" if field else place

    def require(self, field: str, metric: str) -> Any:
        """The field's value, or ``RowError`` naming file, line and field."""
        if field not in self.data:
            raise RowError(f"{self.where(field)}: required by {metric} but missing")
        return self.data[field]

    @property
    def question(self) -> str | None:
        return self.data.get("question")

    @property
    def answer(self) -> str | None:
        return self.data.get("answer")

    @property
    def gold(self) -> Any:
        return self.data.get("gold")

    @property
    def contexts(self) -> list[dict[str, Any]] | None:
        return self.data.get("contexts")

    @property
    def context_ids(self) -> list[str]:
        return [str(c["doc_id"]) for c in self.data.get("contexts") or ()]

    @property
    def telemetry(self) -> dict[str, Any] | None:
        return self.data.get("telemetry")

    @property
    def system(self) -> str | None:
        """The row's system; ``None`` when it names none or a value that is no string
        (a problem of the row)."""
        system = self.data.get("system")
        return system if isinstance(system, str) else None

    @property
    def answerable(self) -> bool | None:
        return self.data.get("answerable")


@dataclass(frozen=True, slots=True)
class LoadedRow:
    """A row as loaded: the row itself plus whatever is wrong with it."""

    row: Row
    problems: tuple[Problem, ...] = ()
