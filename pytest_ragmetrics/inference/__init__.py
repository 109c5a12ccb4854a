"""Statistical inference for comparisons: how sure a difference between two runs is.

Pure numpy (and the standard library), no pytest, no metric code: the gates layer hands
in paired per-row values (or per-row sufficient statistics) and gets back a frozen
``Evidence`` record with the difference, its confidence interval, a p-value, the method
and the minimum detectable effect. docs/statistics.md explains every choice for a reader
who is no statistician.

* ``settings``: ``StatsSettings``, the ``[settings.stats]`` table (confidence, resamples,
  permutations, seed, correction, power, resample_limit);
* ``resample``: seeded bootstrap weights (rows, or whole sessions), BCa and percentile
  intervals, the normal interval above ``resample_limit``;
* ``signflip``: the paired sign-flip permutation test (exact up to 16 pairs);
* ``binary``: exact McNemar, Newcombe's paired interval and Wilson's interval for 0/1
  values;
* ``corpus``: statistics reduced from summed sufficient statistics (corpus BLEU, chrF,
  precision/recall), resampled as sacrebleu's paired bootstrap and approximate
  randomization do;
* ``power``: the minimum detectable effect and the rows that would detect a margin;
* ``multiplicity``: Holm and Benjamini-Hochberg adjusted p-values;
* ``evidence``: the entry points, ``paired_evidence`` and ``single_evidence``;
* ``agreement``: a judge's agreement with human labels (accuracy, Cohen's kappa,
  Krippendorff's alpha, with bootstrap intervals) and the prediction-powered mean.
"""

from __future__ import annotations

import sys


def release_draws() -> None:
    """Let go of the bootstrap draws the gates of an eval share (``resample.drawn_counts``
    keeps the last set, up to ``resamples x units`` whole numbers): called when a run's
    gates and reports are done, without importing numpy for a run that drew none."""
    resample = sys.modules.get("pytest_ragmetrics.inference.resample")
    if resample is not None:
        resample.drawn_counts.cache_clear()
