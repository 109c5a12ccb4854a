"""The in-process judge (``[judge] function = "module:attribute"``): the same prompts,
parser, cache, repeats and accounting as an endpoint, with a function answering.

Expected scores and reasons come from the replies the test functions return.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.judge.client import LlmJudge
from pytest_ragmetrics.judge.config import JudgeConfig, JudgeConfigError, judge_config
from pytest_ragmetrics.judge.prompts import SYSTEM_MESSAGE
from pytest_ragmetrics.judge.verdicts import JudgeCallFailed, JudgeUnreachable, UnparseableVerdict

FIELDS = {
    "question": "What is the capital of France?",
    "answer": "Paris is the capital of France.",
    "contexts": "[d1] Paris is the capital and largest city of France.",
}
MODULE = """
calls = []

def judge(messages):
    calls.append(messages)
    return '{"score": 0.5, "reason": "Half of it."}'

def raises(messages):
    raise RuntimeError("the stand-in judge broke")

def prose(messages):
    return "Looks faithful to me."

def number(messages):
    return 1.0

class Holder:
    judge = staticmethod(judge)

not_callable = 3
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module of judge functions, importable as ``judge_functions``."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "judge_functions.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(__import__("sys").modules, "judge_functions", raising=False)
    import judge_functions  # type: ignore[import-not-found]

    judge_functions.calls.clear()
    return judge_functions


def judge_for(reference: str, cache_dir: Path | None = None, **settings: Any) -> LlmJudge:
    config = JudgeConfig(function=reference, model="example-judge", **settings)
    return LlmJudge(config, cache_dir, run_id="run")


def test_the_function_gets_the_messages_an_endpoint_would(module: Any) -> None:
    verdict = judge_for("judge_functions:judge").judge("faithfulness_judge", FIELDS)
    assert (verdict.score, verdict.reason) == (0.5, "Half of it.")
    ((system, user),) = module.calls
    assert system == {"role": "system", "content": SYSTEM_MESSAGE}
    assert user["role"] == "user"
    assert "Answer:\nParis is the capital of France.\n" in user["content"]
    assert "[d1] Paris is the capital and largest city of France." in user["content"]


def test_latency_is_measured_and_tokens_are_zero(module: Any) -> None:
    verdict = judge_for("judge_functions:judge").judge("faithfulness_judge", FIELDS)
    call = verdict.call
    assert (call.cached, call.attempts, call.prompt_tokens, call.completion_tokens) == (
        False,
        1,
        0,
        0,
    )
    assert call.latency_ms >= 0


def test_a_dotted_attribute_is_followed(module: Any) -> None:
    verdict = judge_for("judge_functions:Holder.judge").judge("faithfulness_judge", FIELDS)
    assert verdict.score == 0.5


def test_a_rerun_reads_the_cache_and_calls_nothing(module: Any, tmp_path: Path) -> None:
    first = judge_for("judge_functions:judge", tmp_path / "cache")
    first.judge("faithfulness_judge", FIELDS)
    again = judge_for("judge_functions:judge", tmp_path / "cache")
    verdict = again.judge("faithfulness_judge", FIELDS)
    assert len(module.calls) == 1
    assert verdict.call.cached is True
    assert (again.counts.asked, again.counts.cached) == (0, 1)
    (entry,) = (tmp_path / "cache" / "judge").glob("??/*.json")
    request = json.loads(entry.read_text(encoding="utf-8"))["request"]
    assert request["function"] == "judge_functions:judge"
    assert "base_url" not in request


def test_another_function_is_another_cache_entry(module: Any, tmp_path: Path) -> None:
    judge_for("judge_functions:judge", tmp_path / "cache").judge("faithfulness_judge", FIELDS)
    judge_for("judge_functions:Holder.judge", tmp_path / "cache").judge(
        "faithfulness_judge", FIELDS
    )
    assert len(module.calls) == 2


def test_each_repeat_is_a_call_of_its_own(module: Any, tmp_path: Path) -> None:
    judge = judge_for("judge_functions:judge", tmp_path / "cache", repeats=3)
    for repeat in range(3):
        judge.judge("faithfulness_judge", FIELDS, repeat=repeat)
    assert len(module.calls) == 3
    assert len(list((tmp_path / "cache" / "judge").glob("??/*.json"))) == 3


def test_an_exception_of_the_function_fails_the_call_with_its_message(module: Any) -> None:
    judge = judge_for("judge_functions:raises")
    with pytest.raises(JudgeCallFailed, match="RuntimeError: the stand-in judge broke") as raised:
        judge.judge("faithfulness_judge", FIELDS)
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert raised.value.call is not None
    assert raised.value.call.attempts == 1
    assert judge.counts.failed == 1


def test_a_reply_that_is_not_a_verdict_is_unparseable(module: Any) -> None:
    with pytest.raises(UnparseableVerdict, match="Looks faithful to me"):
        judge_for("judge_functions:prose").judge("faithfulness_judge", FIELDS)


def test_a_reply_that_is_not_text_fails_the_call(module: Any) -> None:
    with pytest.raises(JudgeCallFailed, match="returned float, expected the reply's text"):
        judge_for("judge_functions:number").judge("faithfulness_judge", FIELDS)


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ("no_such_judge_module:judge", "no module 'no_such_judge_module' on sys.path"),
        ("judge_functions:missing", "module 'judge_functions' has no attribute 'missing'"),
        ("judge_functions:not_callable", "'judge_functions:not_callable' is a int, not a call"),
    ],
)
def test_a_function_that_cannot_be_found_fails_every_verdict(
    module: Any, reference: str, problem: str
) -> None:
    judge = judge_for(reference)
    for _ in range(2):
        with pytest.raises(JudgeUnreachable) as raised:
            judge.judge("faithfulness_judge", FIELDS)
        assert str(raised.value).startswith("[judge] function: ")
        assert problem in str(raised.value)


def test_the_label_names_the_function(module: Any) -> None:
    assert judge_for("judge_functions:judge").label == (
        "LLM judge example-judge (function judge_functions:judge)"
    )


def test_function_is_read_from_toml() -> None:
    config = judge_config({"function": "evals_judge:judge", "model": "m"}, Path("."))
    assert (config.function, config.base_url) == ("evals_judge:judge", None)


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        ({"model": "m"}, "base_url", "required (or function"),
        (
            {"model": "m", "function": "a:b", "base_url": "http://127.0.0.1:1/v1"},
            "function",
            "not both",
        ),
        ({"model": "m", "function": "judge"}, "function", 'expected "module:attribute"'),
        ({"model": "m", "function": "a.b:"}, "function", 'expected "module:attribute"'),
        ({"model": "m", "function": 3}, "function", "expected a string"),
        ({"model": "m", "function": "a:b", "api_key_env": "K"}, "api_key_env", "base_url only"),
        ({"function": "a:b"}, "model", "required"),
    ],
)
def test_function_config_errors_name_the_key(table: dict[str, Any], key: str, message: str) -> None:
    with pytest.raises(JudgeConfigError) as raised:
        judge_config(table, Path("."))
    assert raised.value.key == key
    assert message in raised.value.message


def test_a_previous_judge_may_name_the_other_source() -> None:
    table = {
        "function": "a:b",
        "model": "stand-in",
        "previous": {"base_url": "http://127.0.0.1:1/v1", "model": "real"},
    }
    config = judge_config(table, Path("."))
    assert config.previous is not None
    assert (config.previous.base_url, config.previous.function) == ("http://127.0.0.1:1/v1", None)
