"""The retrieval families' declarations (``SPECS``): each family's fixture, fields,
records with their range and kind, cutoff and options, from which the catalog, the
fixtures, the reports and the docs listings are generated."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pytest_ragmetrics.metrics.base import (
    COUNT,
    UNIT,
    CorpusReduction,
    Cutoff,
    Kind,
    MetricInfo,
    MetricSpec,
    Range,
)
from pytest_ragmetrics.metrics.retrieval.fixtures import (
    gm_map_gmean,
    measure_retrieval_consistency,
    retrieval_measure,
)
from pytest_ragmetrics.metrics.retrieval.names import GM_MAP_LOGS, RECALL_LEVELS, TAKES_CUTOFF

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
