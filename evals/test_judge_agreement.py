"""An LLM-judge metric and its agreement with people, offline: an EXAMPLE with a stand-in.

``faithfulness_judge`` asks the judge of ``[judge]`` in the root thresholds.toml whether
each answer is supported by its contexts. Here that judge is ``example_judge.py``, a
deterministic word-overlap stand-in called in process (``function =
"example_judge:judge"``), so the eval runs in CI with no server; it is no real judge and
misses negations and paraphrases on purpose. Some rows carry a person's label
(``"human": {"faithfulness_judge": ...}``), and the eval reports how far the judge agrees
with them (``faithfulness_judge.agreement``, kappa, accuracy; docs/judge.md#agreement-with-people).
The agreement gate vouches for the mean's: a judge that disagrees with people passes no gate.

To judge for real, replace ``function`` in ``[judge]`` by an endpoint::

    [judge]
    base_url = "http://127.0.0.1:11434/v1"
    model = "qwen2.5:7b-instruct"

and update this eval's baseline (its signature names the judge's model).
"""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/judged.jsonl")


def test_faithful_to_contexts(row, faithfulness_judge):
    faithfulness_judge(row)
