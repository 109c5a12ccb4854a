"""The stand-in judge in evals/example_judge.py, on the prompt the plugin fills.

Expected scores are counted by hand from the rule in its docstring (content words: three
letters or more, stop words and citation markers left out; 0.8 and 0.5 the bounds).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_ragmetrics.judge.client import LlmJudge
from pytest_ragmetrics.judge.config import JudgeConfig

ROOT = Path(__file__).parents[2]
CONTEXTS = "[nile] Title: Nile\nThe Nile flows north through eleven countries into the sea."


def _load_example_judge() -> ModuleType:
    # evals/ is not a package: load the module from its path, under the name the root
    # thresholds.toml gives it.
    path = ROOT / "evals" / "example_judge.py"
    spec = importlib.util.spec_from_file_location("example_judge", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_judge"] = module
    spec.loader.exec_module(module)
    return module


example = _load_example_judge()


def _verdict(answer: str, contexts: str = CONTEXTS) -> tuple[float, str]:
    judge = LlmJudge(JudgeConfig(function="example_judge:judge", model="example-judge"), None)
    fields = {"question": "Which way does the Nile flow?", "answer": answer, "contexts": contexts}
    verdict = judge.judge("faithfulness_judge", fields)
    return verdict.score, verdict.reason


@pytest.mark.parametrize(
    ("answer", "score", "found"),
    [
        # nile flows north through eleven countries: 6 of 6
        ("The Nile flows north through eleven countries [CIT:nile].", 1.0, "6 of 6"),
        # nile flows north / rivers carry fish: 3 of 6 (rivers, carry, fish missing)
        ("The Nile flows north; rivers carry fish.", 0.5, "3 of 6"),
        # nile flows (found) south past deserts camels: 2 of 6
        ("The Nile flows south past deserts and camels.", 0.0, "2 of 6"),
        # a negation between supported words costs one word only: never missing, 3 of 4
        ("The Nile never flows north.", 0.5, "3 of 4"),
    ],
)
def test_the_share_of_content_words_found_gives_the_score(
    answer: str, score: float, found: str
) -> None:
    assert _verdict(answer) == (
        score,
        f"{found} content words of the answer are in the contexts.",
    )


def test_an_abstention_makes_no_claim() -> None:
    assert _verdict("I don't know.")[0] == 1.0


def test_a_context_with_dollars_and_braces_is_read_back() -> None:
    contexts = "[p] Title: Price\nThe ticket costs $5 {or ${more}} at the gate."
    assert _verdict("The ticket costs $5 at the gate.", contexts)[0] == 1.0


def test_another_prompt_gets_no_verdict() -> None:
    reply = example.judge([{"role": "user", "content": "Is this answer relevant?"}])
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply)
