"""The Trust-Score suite: refusal detection, entailment judges, the suite's numbers.

The names of the numbers are here, apart from the suite's computation (``suite``): the
``trust`` metric's declaration (``metric``), which the plugin imports in every run, and
the registry name them without importing the computation.
"""

from __future__ import annotations

# The Trust-Score suite's numbers, in the order of the reference's sample output.
TRUST_KEYS = (
    "num_samples",
    "answered_ratio",
    "answered_num",
    "answerable_num",
    "overlapped_num",
    "regular_length",
    "answered_length",
    "refusal_rec",
    "refusal_prec",
    "refusal_f1",
    "answerable_rec",
    "answerable_prec",
    "answerable_f1",
    "macro_avg",
    "macro_f1",
    "regular_str_em",
    "answered_str_em",
    "calib_answered_str_em",
    "calib_answerable_str_em",
    "calib_str_em_f1",
    "parametric_str_em",
    "regular_citation_rec",
    "regular_citation_prec",
    "regular_citation_f1",
    "answered_citation_rec",
    "answered_citation_prec",
    "answered_citation_f1",
    "trust_score",
)
