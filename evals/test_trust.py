"""Trust-Score of an ASQA-style long-form assistant: does it refuse exactly when the
passages cannot answer, are its answers correct, and do its citations support them?

32 ambiguous questions (several answer groups each) with the passages the generator saw
and which answer each passage contains (`answers_found`); the answers include wrong
citations, uncited sentences, over-citation, an out-of-range citation, wrong refusals and
two hallucinated answers. The default judge is the embedding approximation (the report
says so); `trust_judge = "nli:<model directory>"` in thresholds.toml uses an NLI model.
"""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/asqa.jsonl")


def test_trust(row, trust):
    trust(row)  # recorded; the suite's numbers are gated in thresholds.toml
