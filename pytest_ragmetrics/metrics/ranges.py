"""The closed interval each built-in per-row value lies in, as the metric's definition
states it (docs/metrics.md, its aggregates' scales in docs/metrics.md#aggregates); what
``pytest_ragmetrics.testing`` checks a metric's values against.

The key is the recorded metric's name without its ``@k`` or ``@L`` suffix (``ndcg@10`` is
``ndcg``). An infinite bound is a count or a quantity with no ceiling (or floor): the
value must still be finite. A metric declared in user code states its own range
(``pytest_ragmetrics.metric(range=...)``), which its computation checks on every row.
Every per-row metric the catalog records has an entry (tests/unit/metrics/test_ranges.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

Range = tuple[float, float]

UNIT: Range = (0.0, 1.0)  # a share, a rate, a 0/1 decision, an F-measure
PERCENT: Range = (0.0, 100.0)  # the suites that keep their native 0-100 scale
COSINE: Range = (-1.0, 1.0)  # of L2-normalised embeddings
COUNT: Range = (0.0, math.inf)  # tokens, documents, milliseconds

RANGES: Mapping[str, Range] = {
    # §1: 0/1 decisions and shares of sentences or tokens.
    "em": UNIT,
    "f1": UNIT,
    # squad_version = "2.0": each row records its split's em and f1 too
    **{f"{name}_{split}": UNIT for name in ("em", "f1") for split in ("has_ans", "no_ans")},
    "abstain": UNIT,
    "idk_citation": UNIT,
    "overlap": UNIT,
    "overlap_answered": UNIT,
    "faithfulness": UNIT,  # 0, 1, or min(1, 0.6 + 0.4 x overlap)
    "tokens": COUNT,
    "prompt_tokens": COUNT,
    "completion_tokens": COUNT,
    "latency_ms": COUNT,  # "a finite number >= 0"
    # §2: the row's calibrated STR-EM, percent-scaled like the suite.
    "trust": PERCENT,
    # §3
    "wrong_on_answerable": UNIT,
    "idk_on_answerable": UNIT,
    "rounds": (1.0, math.inf),  # "an integer >= 1"
    "multi_round": UNIT,
    "f1_short": UNIT,
    "em_short": UNIT,
    "anchor_coverage": UNIT,
    "determinism": UNIT,
    # §4 Tier 1: trec_eval's measures are shares of documents, except the counts.
    "hit_rate": UNIT,
    "mrr": UNIT,
    "recall": UNIT,
    "precision": UNIT,
    # at most 1; below 0 only with a negative gain in `gains` (trec_eval's rule)
    "ndcg": (-math.inf, 1.0),
    "ndcg_exp": UNIT,
    "map": UNIT,
    "gm_map": UNIT,  # the row's average precision; the eval's gmean floors it
    "rprec": UNIT,
    "bpref": UNIT,
    "iprec_at_recall": UNIT,
    "num_ret": COUNT,
    "num_rel": COUNT,
    "num_rel_ret": COUNT,
    "retrieval_consistency": UNIT,
    # §4 Tier 2: ROUGE F-measure, precision and recall; BLEU and chrF in percent.
    **{
        f"{rouge}{part}": UNIT
        for rouge in ("rouge1", "rouge2", "rougeL", "rougeLsum")
        for part in ("", "_precision", "_recall")
    },
    "bleu": PERCENT,
    "chrf": PERCENT,
    "chrf_pp": PERCENT,
    "response_exact_match_rate": UNIT,
    "response_semantic_consistency": COSINE,  # a mean of cosines
    "faithfulness_judge": UNIT,
    "answer_relevance": UNIT,
    "answer_correctness": (1.0, 5.0),
    # §4 Tier 3: a cosine; the dot product and the distance are of the model's own vectors
    # (docs/metrics.md#semantic_similarity): within [-1, 1] and [0, 2] only for a model
    # that normalises them, as the packaged one does (and then up to float32's rounding).
    "semantic_similarity": COSINE,
    "dot_similarity": (-math.inf, math.inf),
    "euclidean_distance": COUNT,
    "e2e_score": UNIT,
    # Judge quality and the judge pipeline: 0/1 per row.
    "consistency_score": UNIT,
    "judge_pipeline": UNIT,
}


def value_range(name: str) -> Range | None:
    """The range of the recorded metric ``name`` (``ndcg@10`` reads ``ndcg``'s); ``None``
    for a name the table does not hold (a metric declared in user code)."""
    return RANGES.get(name.split("@", 1)[0])
