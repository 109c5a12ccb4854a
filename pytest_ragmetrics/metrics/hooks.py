"""The values a declaration's hooks take and give (``MetricSpec.prepare``,
``MetricInfo.aggregate``), apart from ``metrics.base``: they are made only when a hook
runs, so importing the plugin, which every pytest run does, does not create their classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragmetrics.data.row import Row

# A row as the run knows it before it runs: its file and its position there.
RowKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class PrepareRow:
    """A row a before-rows hook prepares (``Preparation``): the row, and the metric
    fixtures declaring the hook that the row's tests take (grounding scores the overlap of
    a row taken only by ``faithfulness`` only when its answer does not abstain)."""

    row: Row
    fixtures: frozenset[str]


@dataclass(frozen=True)
class Prepared:
    """What a before-rows hook made: ``done``, the result of each row it has already (from
    a cache, before any vector: the texts the declaring metrics would embed for those rows
    are not prepared); ``complete``, called once the session's texts are embedded, giving
    the result of each row it then has (``None``: ``done`` is all). A row it has no result
    for is computed by its fixture when it runs, which then fails as it would have."""

    done: Mapping[RowKey, Any]
    complete: Callable[[], Mapping[RowKey, Any]] | None = None


def _no_details() -> Mapping[str, Any]:
    return MappingProxyType({})


# The eval detail under which the aggregations' notes are kept: {title: lines}.
NOTES_DETAIL = "notes"


def _no_notes() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Aggregated:
    """A metric's eval-level statistics from its rows' details (``MetricInfo.aggregate``),
    what the eval's JSON report keeps of them (``details``: the suite's warnings, a judge
    comparison), and ``notes``: lines every report shows under a title (a judge metric's
    agreement with people, the rows two judges disagree on)."""

    stats: Mapping[str, float]
    details: Mapping[str, Any] = field(default_factory=_no_details)
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=_no_notes)
