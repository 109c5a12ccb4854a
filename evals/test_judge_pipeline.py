"""The production "show this answer?" judge against human labels (judge pipeline).

Each row holds the judge's decision (`show`) and the label (`show_gold`); accuracy,
precision, recall and F1 are computed from the confusion counts of all rows and gated as
`judge_pipeline.accuracy`, `judge_pipeline.precision`, ... in thresholds.toml.
"""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/judge_pipeline.jsonl")


def test_show_decision(row, judge_pipeline):
    judge_pipeline(row)
