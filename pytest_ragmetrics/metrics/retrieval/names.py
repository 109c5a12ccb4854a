"""Retrieval metric names: the families, their cutoffs and recall levels, and the parser
of ``ndcg@10``-style names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from pytest_ragmetrics.metrics.trec_options import TrecOptions

Family = Literal[
    "hit_rate",
    "mrr",
    "recall",
    "precision",
    "ndcg",
    "ndcg_exp",
    "map",
    "gm_map",
    "rprec",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    "bpref",
]
FAMILIES: tuple[Family, ...] = get_args(Family)
NEEDS_CUTOFF = frozenset({"hit_rate", "recall", "precision"})
TAKES_CUTOFF = frozenset({"hit_rate", "recall", "precision", "mrr", "ndcg", "ndcg_exp", "map"})
# trec_eval's 11 recall points of iprec_at_recall, written as in our metric names.
RECALL_LEVELS = tuple(f"{i / 10:.1f}" for i in range(11))
# trec_eval's floor of a query's average precision in the geometric mean (gm_map).
GM_FLOOR = 0.00001
# The breakdown the gm_map fixture records: per row log(max(AP, GM_FLOOR)) and 1.
GM_MAP_LOGS = "gm_map_logs"
_NAME = re.compile(r"^(?P<family>[a-z_]+?)(?:@(?P<k>[0-9]+(?:\.[0-9]+)?))?$")


@dataclass(frozen=True)
class RetrievalMetric:
    """A parsed metric name: its family and cutoff (``None``: the whole ranking); for
    ``iprec_at_recall`` the recall level instead (one of ``RECALL_LEVELS``)."""

    family: Family
    k: int | None = None
    level: str | None = None

    @property
    def name(self) -> str:
        if self.level is not None:
            return f"{self.family}@{self.level}"
        return self.family if self.k is None else f"{self.family}@{self.k}"


def _usage(family: Family) -> str:
    if family == "iprec_at_recall":
        return "iprec_at_recall@0.0 ... @1.0"
    if family in NEEDS_CUTOFF:
        return f"{family}@k"
    return f"{family}[@k]" if family in TAKES_CUTOFF else family


def parse_metric(name: str) -> RetrievalMetric:
    """``"ndcg@10"`` -> ``RetrievalMetric("ndcg", 10)``; ``ValueError`` names the problem."""
    match = _NAME.match(name)
    family = match.group("family") if match else None
    if match is None or family not in FAMILIES:
        raise ValueError(
            f"unknown retrieval metric {name!r}; use one of "
            + ", ".join(_usage(f) for f in FAMILIES)
        )
    suffix = match.group("k")
    if family == "iprec_at_recall":
        if suffix not in RECALL_LEVELS:
            raise ValueError(
                f"{name!r}: the recall level is one of {', '.join(RECALL_LEVELS)}, "
                "e.g. iprec_at_recall@0.5"
            )
        return RetrievalMetric(family, level=suffix)
    if suffix is not None and (family not in TAKES_CUTOFF or not suffix.isdigit()):
        raise ValueError(f"{name!r}: use {_usage(family)}")
    k = int(suffix) if suffix is not None else None
    if k is not None and k < 1:
        raise ValueError(f"{name!r}: the cutoff k must be at least 1")
    if k is None and family in NEEDS_CUTOFF:
        raise ValueError(f"{name!r} needs a cutoff, e.g. {family}@10")
    return RetrievalMetric(family, k)


def ranks_every_judged(metric: RetrievalMetric, options: TrecOptions) -> bool:
    """Whether ``metric`` needs the ranks of the documents graded 0 too: bpref counts
    them, and ndcg gains from them when ``gains`` gives grade 0 a gain. The others need
    the documents graded above 0 only."""
    return metric.family == "bpref" or (metric.family == "ndcg" and options.grade_zero_gains)
