"""The per-row retrieval fixtures: their computations and their declarations (``SPECS``:
each family's fixture, fields, records with their range and kind, cutoff and options, from
which the catalog, the fixtures, the reports and the docs listings are generated).

A row is one query, its ranking the row's ``retrieved`` (else its contexts' doc ids) and
its qrels the row's ``relevant``. Each row is ranked once for all of its retrieval
fixtures (``query.py``) and every measure read from the same formulas as ``evaluate``'s
(``formulas.py``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import (
    COUNT,
    UNIT,
    Compute,
    CorpusReduction,
    Cutoff,
    Evidence,
    Kind,
    Measured,
    MetricContext,
    MetricInfo,
    MetricSettings,
    MetricSpec,
    Range,
)
from pytest_ragmetrics.metrics.retrieval.corpus import score_queries
from pytest_ragmetrics.metrics.retrieval.names import (
    GM_FLOOR,
    GM_MAP_LOGS,
    NEEDS_CUTOFF,
    RECALL_LEVELS,
    TAKES_CUTOFF,
    RetrievalMetric,
    parse_metric,
)
from pytest_ragmetrics.metrics.retrieval.query import QueryRanks, query_ranks
from pytest_ragmetrics.metrics.trec_options import RETRIEVAL_SETTINGS, TrecOptions


def as_qrels(relevant: Any) -> dict[str, float]:
    """A row's ``relevant`` field as qrels: a list of doc ids is grade 1 for each."""
    if isinstance(relevant, Mapping):
        return {str(doc): float(grade) for doc, grade in relevant.items()}
    return dict.fromkeys(map(str, relevant), 1.0)


def retrieval_consistency(
    first: Sequence[str], repeats: Sequence[Sequence[str]], k: int | None = None
) -> float:
    """Share of ``repeats`` (further retrievals of the same question) whose top k equals
    the first retrieval's top k, order included; the whole lists when ``k`` is None.
    No repeats is a ``ValueError``: there is nothing to be consistent with."""
    if not repeats:
        raise ValueError("retrieval_consistency needs at least one repeated retrieval")
    if k is not None and k < 1:
        raise ValueError(f"retrieval_consistency: k must be at least 1, got {k}")
    top = list(first[:k])
    return sum(list(repeat[:k]) == top for repeat in repeats) / len(repeats)


GAINS = {"linear": "ndcg", "exponential": "ndcg_exp"}


def ranking_field(row: Row, metric: str) -> str:
    """Where the row's ranking comes from: ``retrieved``, else ``contexts``."""
    for name in ("retrieved", "contexts"):
        if name in row.data:
            return name
    raise RowError(f"{row.where('retrieved')}: required by {metric} but missing (no contexts)")


def ranking(row: Row, metric: str) -> list[str]:
    """The row's ranked doc ids: ``retrieved``, else the order of its ``contexts``, where
    several chunks of one document count once, at the first one's rank."""
    if ranking_field(row, metric) == "retrieved":
        return list(row["retrieved"])
    return list(dict.fromkeys(row.context_ids))


def _cutoff(metric: str, k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise TypeError(f"{metric}(row, k=...): k must be an integer >= 1, got {k!r}")
    return k


def _level(level: Any) -> str:
    """``iprec_at_recall(row, level=0.5)``'s level as written in the metric name."""
    usage = f"use one of {', '.join(RECALL_LEVELS)}"
    if level is None:
        raise TypeError(f"iprec_at_recall(row, level=...) needs a recall level; {usage}")
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise TypeError(f"iprec_at_recall(row, level=...): {level!r} is not a number; {usage}")
    written = f"{level:.1f}"
    if written not in RECALL_LEVELS or float(written) != level:
        raise TypeError(f"iprec_at_recall(row, level=...): {level!r} is not a level; {usage}")
    return written


def _retrieval_metric(fixture: str, family: str, k: int | None, level: Any) -> RetrievalMetric:
    if family == "iprec_at_recall":
        return _parsed(f"{family}@{_level(level)}")
    if k is None and family in NEEDS_CUTOFF:
        raise TypeError(f"{fixture}(row, k=...) needs a cutoff, e.g. {fixture}(row, k=10)")
    return _parsed(family if k is None else f"{family}@{k}")


@lru_cache(maxsize=1024)
def _parsed(name: str) -> RetrievalMetric:
    """``parse_metric``, once per name: a row test asks for the same few names every row."""
    return parse_metric(name)


def _rank_evidence(
    ranked: list[str], qrels: dict[str, float], options: TrecOptions, ranks: QueryRanks | None
) -> tuple[str, str]:
    """A row's evidence around its cutoff: what comes before ``; cutoff k`` and after it.
    The same for every retrieval fixture of the row: ``_RowQuery`` keeps it. The 1-based
    ranks of the relevant documents come from ``ranks`` when the row has them, else from
    a pass over the ranking."""
    level = options.relevance_level
    if ranks is not None:
        found, relevant = ranks.relevant_found(), int(ranks.total)
    else:
        judged = {doc for doc, grade in qrels.items() if grade >= level}
        shown = ranked if options.cutoff is None else ranked[: options.cutoff]
        found = [i + 1 for i, doc in enumerate(shown) if doc in judged]
        relevant = len(judged)
    where = (
        f"relevant at rank {', '.join(map(str, found))}" if found else "no relevant doc retrieved"
    )
    graded = f"; relevant from grade {level:g}" if level != 1 else ""
    runs = "" if options.cutoff is None else f", run cut to {options.cutoff}"
    head = f"{where} of {len(ranked)} retrieved{runs} ({relevant} relevant in qrels"
    return head, f"{graded})"


@dataclass(frozen=True)
class _RowQuery:
    """A row's query as its retrieval fixtures read it, kept in the row's
    ``MetricContext.memo`` (``_ROW_QUERY``) so that the row's fixtures read the fields and
    rank the documents once: the row (the memo holds it, so it is that very row), the
    options it was ranked under, its qrels and ranking, and its ranks
    (``query.query_ranks``), ``None`` when the query is not well-formed."""

    row: Row
    options: TrecOptions
    qrels: dict[str, float]
    ranked: list[str]
    ranks: QueryRanks | None

    @cached_property
    def _evidence(self) -> tuple[str, str]:
        return _rank_evidence(self.ranked, self.qrels, self.options, self.ranks)

    def evidence(self, k: int | None) -> str:
        """Where the relevant documents are, for a fixture with cutoff ``k``."""
        head, tail = self._evidence
        return f"{head}; cutoff {k}{tail}" if k is not None else head + tail


_ROW_QUERY = "retrieval"


def _row_query(row: Row, ctx: MetricContext, family: str) -> _RowQuery:
    """The row's query, from the memo when a fixture of the same row and options read it
    already; a row that lacks a field raises ``RowError`` each time, and is not kept."""
    options = ctx.settings.retrieval
    kept = ctx.memo.get(_ROW_QUERY)
    if isinstance(kept, _RowQuery) and kept.row is row and kept.options == options:
        return kept
    qrels = as_qrels(row.require("relevant", family))
    ranked = ranking(row, family)
    if not qrels:
        raise RowError(f"{row.where('relevant')}: {family} needs at least one judgement")
    query = _RowQuery(row, options, qrels, ranked, query_ranks(qrels, ranked, options))
    ctx.memo[_ROW_QUERY] = query
    return query


def _scored_value(row: Row, query: _RowQuery, family: str, name: str) -> float:
    """One metric of the row through ``score_queries``; its ``ValueError`` (a doc id
    listed twice) becomes the row's error."""
    try:
        values = score_queries(
            [row.id], {row.id: query.qrels}, [query.ranked], [name], query.options
        )
    except ValueError as error:
        raise RowError(f"{row.where(ranking_field(row, family))}: {error}") from None
    return float(values[name][0])


def retrieval_measure(family: str) -> Compute:
    """The per-row computation of one retrieval family with the run's
    ``[settings.retrieval]`` options. A row is one query and is always evaluated
    (``all_queries`` has nothing to add). It is ranked once for all of the row's retrieval
    fixtures, in Python (``query.py``: the same formulas and floats as ``score_queries``, which
    a batch ``evaluate`` runs, without numpy's fixed cost per call)."""

    def measure(
        row: Row,
        ctx: MetricContext,
        k: int | None = None,
        gain: str = "linear",
        level: Any = None,
    ) -> Measured:
        cut = _cutoff(family, k)
        name_family = family
        if family == "ndcg":
            if gain not in GAINS:
                raise ValueError(f"ndcg(row, gain=...): use one of {', '.join(GAINS)}")
            name_family = GAINS[gain]
        metric = _retrieval_metric(family, name_family, cut, level)
        name = metric.name
        query = _row_query(row, ctx, family)
        if query.ranks is not None:
            value = query.ranks.measure(metric)
        else:  # not a well-formed query: score_queries says what is wrong
            value = _scored_value(row, query, family, name)
        evidence = Evidence(query.evidence, cut)
        breakdowns = {}
        if family == "gm_map":  # summed over the rows into gm_map.gmean
            breakdowns[GM_MAP_LOGS] = {"log_ap": math.log(max(value, GM_FLOOR)), "queries": 1.0}
        return Measured({name: value}, evidence, breakdowns, primary=name)

    return measure


def gm_map_gmean(sums: Mapping[str, float], settings: MetricSettings) -> dict[str, float]:
    """``gm_map.gmean``: trec_eval's gm_map over the rows, exp(mean(log(max(AP, 0.00001))))
    from the rows' summed logarithms (the settings change nothing here)."""
    return {"gmean": math.exp(sums["log_ap"] / sums["queries"])}


def measure_retrieval_consistency(row: Row, ctx: MetricContext, k: int | None = None) -> Measured:
    metric = "retrieval_consistency"
    cut = _cutoff(metric, k)
    name = metric if cut is None else f"{metric}@{cut}"
    repeats = row.require("retrieved_repeats", metric)
    if not repeats:
        raise RowError(f"{row.where('retrieved_repeats')}: {metric} needs at least one repeat")
    first = ranking(row, metric)
    value = retrieval_consistency(first, repeats, cut)
    evidence = Evidence(_consistency_evidence, value, len(repeats), cut)
    return Measured({name: value}, evidence, primary=name)


def _consistency_evidence(value: float, repeats: int, cut: int | None) -> str:
    same = round(value * repeats)
    return f"{same} of {repeats} repeated retrievals equal the first" + (
        f" in the top {cut}" if cut is not None else ""
    )


# at most 1; below 0 only with a negative gain in `gains` (trec_eval's rule)
NDCG_RANGE: Range = (-math.inf, 1.0)

_RANKING_DOC = (
    " The ranking is the row's retrieved ids, else its contexts' doc ids in order (a "
    "document's chunks count once); relevant holds the ids (grade 1) or id -> grade."
)


def _family(
    name: str,
    doc: str,
    records: tuple[tuple[str, str, Range], ...],
    cutoff: Cutoff,
    kind: Kind,
    corpus: tuple[str, ...] = (),
    misleading: Mapping[str, str] | None = None,
) -> MetricSpec:
    levels = RECALL_LEVELS if name == "iprec_at_recall" else ()
    infos = tuple(
        MetricInfo(
            metric,
            description,
            kind=kind,
            range=value_range,
            cutoff=cutoff,
            corpus=corpus,
            levels=levels,
            misleading=misleading or {},
        )
        for metric, description, value_range in records
    )
    if name == "ndcg":
        options: tuple[str, ...] = ("k", "gain")
    elif levels:
        options = ("level",)
    else:
        options = ("k",) if name in TAKES_CUTOFF else ()
    return MetricSpec(
        name,
        doc + _RANKING_DOC,
        infos,
        ("relevant",),
        retrieval_measure(name),
        options=options,
        corpus=CorpusReduction(GM_MAP_LOGS, gm_map_gmean) if corpus else None,
        settings=RETRIEVAL_SETTINGS,
    )


SPECS = (
    _family(
        "hit_rate",
        "1 when a relevant doc is in the top k, else 0; k is required (records hit_rate@k).",
        (("hit_rate", "a relevant doc is in the top k", UNIT),),
        "required",
        "binary",
    ),
    _family(
        "mrr",
        "1 / rank of the first relevant doc (0 when none is within k), 0-1; records mrr, or "
        "mrr@k with k.",
        (("mrr", "1 / rank of the first relevant doc (within k)", UNIT),),
        "optional",
        "continuous",
    ),
    _family(
        "recall",
        "Relevant docs in the top k / all relevant docs, 0-1; k is required (recall@k).",
        (("recall", "relevant docs in the top k / all relevant docs", UNIT),),
        "required",
        "continuous",
    ),
    _family(
        "precision",
        "Relevant docs in the top k / k, 0-1; k is required (precision@k).",
        (("precision", "relevant docs in the top k / k", UNIT),),
        "required",
        "continuous",
    ),
    _family(
        "ndcg",
        "nDCG (within k when given), 0-1: graded gains with a log2 discount over the ideal "
        "ranking; gain='linear' records ndcg, gain='exponential' (2^grade - 1) ndcg_exp.",
        (
            ("ndcg", "nDCG (within k), linear gain", NDCG_RANGE),
            ("ndcg_exp", "nDCG (within k), gain 2^grade - 1", UNIT),
        ),
        "optional",
        "continuous",
    ),
    _family(
        "map",
        "Average precision (trec_eval map), 0-1: the precisions at each retrieved relevant "
        "doc (within k when given), summed, over all relevant docs; records map, or map@k.",
        (("map", "average precision (within k)", UNIT),),
        "optional",
        "continuous",
    ),
    _family(
        "gm_map",
        "The query's average precision, 0-1, as map; the eval's gm_map.gmean is trec_eval's "
        "gm_map, the geometric mean over the rows with each value floored at 0.00001.",
        (("gm_map", "average precision; gm_map.gmean: trec_eval's geometric mean", UNIT),),
        "none",
        "corpus",
        corpus=("gmean",),
        misleading={
            stat: f"the {what} of the rows' average precisions is map.{stat}; trec_eval's "
            "gm_map is gm_map.gmean"
            for stat, what in (("mean", "arithmetic mean"), ("sum", "sum"))
        },
    ),
    _family(
        "rprec",
        "R-precision (trec_eval Rprec), 0-1: relevant docs in the top R / R, R the number "
        "of relevant docs.",
        (("rprec", "relevant docs in the top R / R", UNIT),),
        "none",
        "continuous",
    ),
    _family(
        "bpref",
        "bpref (trec_eval), 0-1: per retrieved relevant doc 1 - min(n, R) / min(N, R), n "
        "the judged non-relevant docs above it (grade 0 in relevant), summed over R.",
        (("bpref", "relevant docs ranked above judged non-relevant ones", UNIT),),
        "none",
        "continuous",
    ),
    _family(
        "num_ret",
        "The number of retrieved docs (trec_eval num_ret; its summary is the sum).",
        (("num_ret", "retrieved docs", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "num_rel",
        "The number of relevant docs in the qrels (trec_eval num_rel).",
        (("num_rel", "relevant docs in the qrels", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "num_rel_ret",
        "The number of relevant docs retrieved (trec_eval num_rel_ret).",
        (("num_rel_ret", "relevant docs retrieved", COUNT),),
        "none",
        "continuous",
    ),
    _family(
        "iprec_at_recall",
        "Interpolated precision at a recall level (trec_eval 9 iprec_at_recall), 0-1: "
        "level is one of 0.0, 0.1, ..., 1.0 and required (records iprec_at_recall@0.5).",
        (("iprec_at_recall", "interpolated precision at the recall level", UNIT),),
        "required",
        "continuous",
    ),
    MetricSpec(
        "retrieval_consistency",
        "Share of the repeated retrievals (retrieved_repeats) whose top k equals the first "
        "ranking's top k, order included (the whole lists without k), 0-1.",
        (
            MetricInfo(
                "retrieval_consistency",
                "share of repeated retrievals equal in the top k",
                range=UNIT,
                cutoff="optional",
            ),
        ),
        ("retrieved_repeats",),
        measure_retrieval_consistency,
        options=("k",),
    ),
)
