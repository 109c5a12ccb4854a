"""The LLM judge client against a scripted chat-completions server over real loopback HTTP.

Expected scores, reasons and token counts come from the scripted replies; retry delays
from the backoff rule (0.5 s doubling, Retry-After when longer, 30 s cap), recorded by an
injected sleep so no test waits for them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.judge.client import LlmJudge
from pytest_ragmetrics.judge.config import (
    JudgeConfig,
    JudgeConfigError,
    judge_config,
    looks_like_key,
)
from pytest_ragmetrics.judge.prompts import (
    PLACEHOLDERS,
    PROMPT_NAMES,
    SYSTEM_MESSAGE,
    load_prompt,
    placeholder_problem,
)
from pytest_ragmetrics.judge.verdicts import (
    Call,
    JudgeCallFailed,
    JudgeUnreachable,
    UnparseableVerdict,
)
from pytest_ragmetrics.metrics.judge import TalliedEntailment

from chat_server import ChatServer, Drop, Raw, Received, Reply, Step, Trickle, unused_port

KEY = "sk-test-5f0c1e9a7b3d42c8a6e1"
FIELDS: dict[str, dict[str, str]] = {
    "faithfulness_judge": {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "contexts": "[d1] Paris is the capital and largest city of France.",
    },
    "answer_relevance": {"question": "Who wrote Hamlet?", "answer": "Shakespeare wrote it."},
    "answer_correctness": {
        "question": "How many legs does a spider have?",
        "answer": "Eight.",
        "gold": "8",
    },
    "e2e_score": {"question": "Boiling point of water?", "answer": "100 C", "gold": "100 °C"},
    "entailment": {"premise": "Alpha scored first.", "hypothesis": "Alpha scored."},
}
ANSWER = FIELDS["answer_relevance"]


class Sleeps(list[float]):
    """An injected sleep that records the delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def judge_for(
    url: str,
    cache_dir: Path | None = None,
    *,
    sleeps: Sleeps | None = None,
    environ: Mapping[str, str] | None = None,
    refresh: bool = False,
    run_id: str = "run",
    **settings: Any,
) -> LlmJudge:
    options: dict[str, Any] = {"timeout": 5.0, "retries": 2, "backoff": 0.5, **settings}
    config = JudgeConfig(base_url=url, model="judge-model", **options)
    return LlmJudge(
        config,
        cache_dir,
        refresh=refresh,
        run_id=run_id,
        environ={} if environ is None else environ,
        sleep=Sleeps() if sleeps is None else sleeps,
    )


def cache_files(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "judge").glob("??/*.json"))


# --- well-formed verdicts and the request sent ------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "score"),
    [
        ("faithfulness_judge", '{"score": 1.0, "reason": "All claims are in d1."}', 1.0),
        ("answer_relevance", '{"score": 0.5, "reason": "Partly on topic."}', 0.5),
        ("answer_correctness", '{"score": 4, "reason": "Right, slightly vague."}', 4.0),
        ("e2e_score", '{"score": 0.75, "reason": "Useful."}', 0.75),
        ("entailment", '{"entailed": true, "reason": "Scoring first is scoring."}', 1.0),
    ],
)
def test_each_prompt_gives_its_verdict(name: str, content: str, score: float) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 17, "total_tokens": 137}
    with ChatServer([Reply(content, usage)]) as server:
        verdict = judge_for(server.url, max_tokens=64).judge(name, FIELDS[name])
    assert verdict.score == score
    assert verdict.reason == json.loads(content)["reason"]
    assert verdict.call.cached is False
    assert verdict.call.attempts == 1
    assert (verdict.call.prompt_tokens, verdict.call.completion_tokens) == (120, 17)
    assert verdict.call.latency_ms > 0
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "judge-model"
    assert request.body["temperature"] == 0
    assert request.body["max_tokens"] == 64
    system, user = request.body["messages"]
    assert system == {"role": "system", "content": SYSTEM_MESSAGE}
    assert user["role"] == "user"
    for value in FIELDS[name].values():
        assert value in user["content"]
    assert "$" not in user["content"]


def test_without_usage_the_token_counts_are_zero() -> None:
    with ChatServer([Reply('{"score": 1, "reason": "ok"}')]) as server:
        call = judge_for(server.url).judge("answer_relevance", ANSWER).call
    assert (call.prompt_tokens, call.completion_tokens) == (0, 0)


@pytest.mark.parametrize("with_key", [True, False])
def test_the_authorization_header_is_sent_only_with_api_key_env(with_key: bool) -> None:
    settings: dict[str, Any] = {"api_key_env": "JUDGE_KEY"} if with_key else {}
    with ChatServer([Reply('{"score": 1, "reason": "ok"}')]) as server:
        judge = judge_for(server.url, environ={"JUDGE_KEY": KEY}, **settings)
        judge.judge("answer_relevance", ANSWER)
    headers = server.requests[0].headers
    if with_key:
        assert headers["authorization"] == f"Bearer {KEY}"
    else:
        assert "authorization" not in headers


def test_the_key_is_read_when_calling_not_when_constructing() -> None:
    environ: dict[str, str] = {}
    with ChatServer([Reply('{"score": 1, "reason": "ok"}')]) as server:
        judge = judge_for(server.url, environ=environ, api_key_env="JUDGE_KEY")
        environ["JUDGE_KEY"] = KEY
        judge.judge("answer_relevance", ANSWER)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"score": 0.5, "reason": "fenced"}\n```',
        '```\n{"score": 0.5, "reason": "fenced"}\n```',
        '  \n```JSON\n  {"score": 0.5, "reason": "fenced"}  \n```\n',
        '{"score": 0.5, "reason": "fenced", "confidence": "high"}',  # extra keys are allowed
    ],
)
def test_fenced_json_and_extra_keys_are_accepted(content: str) -> None:
    with ChatServer([Reply(content)]) as server:
        verdict = judge_for(server.url).judge("e2e_score", FIELDS["e2e_score"])
    assert verdict.score == 0.5


def test_a_missing_reason_is_an_empty_one() -> None:
    with ChatServer([Reply('{"score": 3}')]) as server:
        verdict = judge_for(server.url).judge("answer_correctness", FIELDS["answer_correctness"])
    assert (verdict.score, verdict.reason) == (3.0, "")


def test_the_entailment_judge_returns_booleans_and_tallies_each_verdict() -> None:
    script = [Reply('{"entailed": true, "reason": "yes"}'), Reply('{"entailed": false}')]
    row = Row("r1", "rows.jsonl", 1, 0, {"answer": "Alpha scored."})
    with ChatServer(script) as server:
        entails = TalliedEntailment(judge_for(server.url), row)
        assert entails("Alpha scored first.", "Alpha scored.") is True
        assert entails("Alpha scored first.", "Beta scored.") is False
    prompts = [r.body["messages"][1]["content"] for r in server.requests]
    assert "Alpha scored first." in prompts[0]
    assert "Beta scored." in prompts[1]
    tally = entails.details()["judge"]["trust_entailment"]
    assert (tally["verdicts"], tally["requests"], tally["replies"], tally["failed"]) == (2, 2, 2, 0)


# --- unparseable verdicts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("answer_relevance", 'Sure! {"score": 1, "reason": "prose first"}'),
        ("answer_relevance", '{"score": 1, "reason": "text after"} Hope this helps.'),
        ("answer_relevance", 'Here it is:\n```json\n{"score": 1}\n```'),
        ("answer_relevance", '```json\n{"score": 1}\n```\n```json\n{"score": 0}\n```'),
        ("answer_relevance", '{"score": 1.5, "reason": "above the scale"}'),
        ("answer_relevance", '{"score": -0.1, "reason": "below the scale"}'),
        ("answer_correctness", '{"score": 0, "reason": "0 is below 1..5"}'),
        ("answer_correctness", '{"score": 6, "reason": "6 is above 1..5"}'),
        ("answer_relevance", '{"score": "0.8", "reason": "a string"}'),
        ("answer_relevance", '{"score": true, "reason": "a boolean"}'),
        ("answer_relevance", '{"reason": "no score"}'),
        ("answer_relevance", '{"score": NaN}'),
        ("answer_relevance", '{"score": 1e999}'),
        ("answer_relevance", '{"score": 1, "reason": 7}'),
        ("answer_relevance", '{"score": 1, "score": 0}'),
        ("answer_relevance", "[1]"),
        ("answer_relevance", ""),
        ("entailment", '{"entailed": "true"}'),
        ("entailment", '{"entailed": 1}'),
        ("entailment", '{"score": 1.0}'),
    ],
)
def test_a_reply_that_is_no_verdict_is_unparseable_and_not_retried(name: str, content: str) -> None:
    sleeps = Sleeps()
    with ChatServer([Reply(content, {"prompt_tokens": 9, "completion_tokens": 4})]) as server:
        judge = judge_for(server.url, sleeps=sleeps)
        with pytest.raises(UnparseableVerdict) as raised:
            judge.judge(name, FIELDS[name])
    assert raised.value.content == content
    call = raised.value.call
    assert call is not None
    assert (call.cached, call.attempts, call.prompt_tokens, call.completion_tokens) == (
        False,
        1,
        9,
        4,
    )
    assert len(server.requests) == 1
    assert sleeps == []


def test_an_unparseable_message_quotes_at_most_500_characters() -> None:
    content = "x" * 2000
    with ChatServer([Reply(content)]) as server, pytest.raises(UnparseableVerdict) as raised:
        judge_for(server.url).judge("answer_relevance", ANSWER)
    assert "x" * 500 in str(raised.value)
    assert "x" * 501 not in str(raised.value)
    assert raised.value.content == content


# --- retries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "<html>Bad gateway</html>",
        '{"choices": []}',
        '{"choices": [{"message": {"content": null}}]}',
        '{"object": "error"}',
    ],
)
def test_a_200_that_is_no_chat_completion_is_retried_then_fails(body: str) -> None:
    sleeps = Sleeps()
    with ChatServer([Raw(body)] * 3) as server, pytest.raises(JudgeCallFailed) as raised:
        judge_for(server.url, sleeps=sleeps, retries=2).judge("answer_relevance", ANSWER)
    assert "not a chat completion" in str(raised.value)
    assert raised.value.call is not None
    assert raised.value.call.attempts == 3
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_a_malformed_body_then_a_completion_succeeds() -> None:
    script: list[Step] = [Raw("{not json"), Reply('{"score": 0.25, "reason": "ok"}')]
    with ChatServer(script) as server:
        verdict = judge_for(server.url).judge("answer_relevance", ANSWER)
    assert verdict.score == 0.25
    assert verdict.call.attempts == 2


@pytest.mark.parametrize(
    ("retry_after", "delay"),
    [("3", 3.0), ("0", 0.5), ("120", 30.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.5)],
)
def test_429_is_retried_after_the_longer_of_backoff_and_retry_after(
    retry_after: str, delay: float
) -> None:
    sleeps = Sleeps()
    limited = Raw('{"error": {"message": "rate limited"}}', 429, {"Retry-After": retry_after})
    with ChatServer([limited, Reply('{"score": 1, "reason": "ok"}')]) as server:
        verdict = judge_for(server.url, sleeps=sleeps).judge("answer_relevance", ANSWER)
    assert verdict.score == 1.0
    assert verdict.call.attempts == 2
    assert len(server.requests) == 2
    assert sleeps == [delay]


def test_500_until_the_retries_run_out_fails_with_every_attempt_counted() -> None:
    sleeps = Sleeps()
    failing = Raw('{"error": {"message": "model crashed"}}', 500)
    with ChatServer([failing] * 4) as server:
        judge = judge_for(server.url, sleeps=sleeps, retries=3)
        with pytest.raises(JudgeCallFailed) as raised:
            judge.judge("answer_relevance", ANSWER)
    assert raised.value.call is not None
    assert raised.value.call.attempts == 4
    assert raised.value.call.cached is False
    assert len(server.requests) == 4
    assert sleeps == [0.5, 1.0, 2.0]
    assert "HTTP 500: model crashed" in str(raised.value)


def test_backoff_doubles_up_to_30_seconds() -> None:
    sleeps = Sleeps()
    with ChatServer([Raw("busy", 503)] * 4) as server:
        judge = judge_for(server.url, sleeps=sleeps, retries=3, backoff=10.0)
        with pytest.raises(JudgeCallFailed):
            judge.judge("answer_relevance", ANSWER)
    assert sleeps == [10.0, 20.0, 30.0]


def test_a_reply_slower_than_the_timeout_is_retried_then_gives_up() -> None:
    # An endpoint that accepts and never answers in time is as unusable as one that
    # refuses: after one call's retries, later calls fail at once instead of waiting.
    sleeps = Sleeps()
    slow = Reply('{"score": 1, "reason": "too late"}', delay=0.6)
    with ChatServer([slow, slow]) as server:
        judge = judge_for(server.url, sleeps=sleeps, retries=1, timeout=0.2)
        with pytest.raises(JudgeUnreachable) as raised:
            judge.judge("answer_relevance", ANSWER)
        with pytest.raises(JudgeUnreachable) as again:
            judge.judge("e2e_score", FIELDS["e2e_score"])
    assert "no reply within 0.2 s" in str(raised.value)
    assert raised.value.call is not None
    assert raised.value.call.attempts == 2
    assert str(again.value) == str(raised.value)
    assert len(server.requests) == 2
    assert sleeps == [0.5]


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers-and-body"])
def test_a_reply_trickled_past_the_timeout_fails_as_a_timeout(headers: bool) -> None:
    # A byte every 0.2 s keeps each socket read well within the 1 s timeout; the timeout
    # bounds the whole call, so it fails after about 1 s, not when the last of the
    # reply's bytes would arrive (minutes later).
    outcome: list[BaseException] = []

    def call(judge: LlmJudge) -> None:
        try:
            judge.judge("answer_relevance", ANSWER)
        except BaseException as error:  # reported by the assertions below
            outcome.append(error)

    with ChatServer([Trickle('{"score": 1, "reason": "slowly"}', 0.2, headers)]) as server:
        judge = judge_for(server.url, retries=0, timeout=1.0)
        caller = threading.Thread(target=call, args=(judge,), daemon=True)
        caller.start()
        caller.join(10.0)  # ten times the timeout
        running = caller.is_alive()
    caller.join(10.0)  # the server stopped: the call ends either way
    assert not running, "the call was still running after ten times the timeout"
    assert len(outcome) == 1
    assert isinstance(outcome[0], JudgeUnreachable)
    assert str(outcome[0]) == (
        f"LLM judge unreachable at {server.url}: no reply within 1 s; "
        "no further judge calls are made in this run"
    )
    assert len(server.requests) == 1


def test_a_timeout_then_a_500_is_a_failed_call_not_an_unreachable_endpoint() -> None:
    slow = Reply('{"score": 1, "reason": "too late"}', delay=0.6)
    with ChatServer([slow, Raw("{}", 500), Reply('{"score": 1}')]) as server:
        judge = judge_for(server.url, retries=1, timeout=0.2)
        with pytest.raises(JudgeCallFailed) as raised:
            judge.judge("answer_relevance", ANSWER)
        assert judge.judge("answer_relevance", ANSWER).score == 1  # still asked
    assert not isinstance(raised.value, JudgeUnreachable)
    assert len(server.requests) == 3


def test_a_dropped_connection_is_retried() -> None:
    with ChatServer([Drop(), Reply('{"score": 0.5, "reason": "ok"}')]) as server:
        verdict = judge_for(server.url).judge("answer_relevance", ANSWER)
    assert verdict.score == 0.5
    assert verdict.call.attempts == 2
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_other_4xx_fail_at_once(status: int) -> None:
    sleeps = Sleeps()
    body = json.dumps({"error": {"message": "Incorrect API key provided: " + "y" * 400}})
    with ChatServer([Raw(body, status)]) as server, pytest.raises(JudgeCallFailed) as raised:
        judge_for(server.url, sleeps=sleeps).judge("answer_relevance", ANSWER)
    message = str(raised.value)
    assert f"HTTP {status}: Incorrect API key provided: yyy" in message
    assert "y" * 300 not in message  # the server's message is cut to 300 characters
    assert raised.value.call is not None
    assert raised.value.call.attempts == 1
    assert len(server.requests) == 1
    assert sleeps == []


# --- an unreachable endpoint --------------------------------------------------------------


def test_connection_refused_is_unreachable_and_later_calls_fail_at_once(tmp_path: Path) -> None:
    sleeps = Sleeps()
    url = f"http://127.0.0.1:{unused_port()}/v1"
    judge = judge_for(url, tmp_path, sleeps=sleeps, retries=2)
    with pytest.raises(JudgeUnreachable) as first:
        judge.judge("answer_relevance", ANSWER)
    message = str(first.value)
    assert message.startswith(f"LLM judge unreachable at {url}: cannot connect: ")
    assert "ConnectionRefusedError" in message
    assert message.endswith("; no further judge calls are made in this run")
    assert first.value.call is not None
    assert first.value.call.attempts == 3
    assert sleeps == [0.5, 1.0]

    with pytest.raises(JudgeUnreachable) as second:
        judge.judge("e2e_score", FIELDS["e2e_score"])
    assert str(second.value) == message
    assert second.value.call is None  # nothing was sent
    assert sleeps == [0.5, 1.0]  # and nothing waited for
    assert cache_files(tmp_path) == []


@pytest.mark.parametrize("environ", [{}, {"JUDGE_KEY": ""}])
def test_an_unset_api_key_env_is_unreachable_for_every_call(environ: dict[str, str]) -> None:
    with ChatServer() as server:
        judge = judge_for(server.url, environ=environ, api_key_env="JUDGE_KEY")
        for _ in range(2):
            with pytest.raises(JudgeUnreachable) as raised:
                judge.judge("answer_relevance", ANSWER)
            assert str(raised.value) == "the variable named by [judge] api_key_env is not set"
    assert server.requests == []


# The shapes of keys pasted into api_key_env; each passes for a variable name.
PASTED_KEYS = [
    "gsk_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6",  # Groq
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",  # Hugging Face
    "sk_live_" + "51Hx9aBcDeFgHiJkLmNoPqRsTu",  # Stripe-style secret
    "AIzaSy" + "B1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6",  # Google
    "a3f91c7e5b2d4f6a8c0e1b3d5f7a9c2e",  # 32 hex digits
]


@pytest.mark.parametrize("pasted", PASTED_KEYS)
def test_a_key_pasted_as_api_key_env_is_named_as_such_and_never_echoed(pasted: str) -> None:
    with ChatServer() as server:
        judge = judge_for(server.url, api_key_env=pasted)
        with pytest.raises(JudgeUnreachable) as raised:
            judge.judge("answer_relevance", ANSWER)
    message = str(raised.value)
    assert message.startswith("the variable named by [judge] api_key_env is not set; ")
    assert "looks like an API key rather than a variable name" in message
    for text in (message, repr(raised.value), repr(judge), repr(judge.config)):
        assert pasted not in text
    assert server.requests == []


@pytest.mark.parametrize(
    "name",
    ["JUDGE_API_KEY", "OPENAI_API_KEY", "hf_token", "sk_live", "GROQ_API_KEY_FOR_THE_CI_RUNS"],
)
def test_a_variable_name_does_not_look_like_a_key(name: str) -> None:
    assert not looks_like_key(name)
    assert all(looks_like_key(key) for key in PASTED_KEYS)


def test_the_key_is_sent_without_surrounding_whitespace() -> None:
    with ChatServer([Reply('{"score": 1, "reason": "ok"}')]) as server:
        judge = judge_for(server.url, environ={"JUDGE_KEY": f" {KEY}\n"}, api_key_env="JUDGE_KEY")
        judge.judge("answer_relevance", ANSWER)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_key_that_cannot_be_a_header_is_unreachable_and_not_echoed() -> None:
    broken = "sk-first-half\nsecond-half"
    with ChatServer() as server:
        judge = judge_for(server.url, environ={"JUDGE_KEY": broken}, api_key_env="JUDGE_KEY")
        with pytest.raises(JudgeUnreachable) as raised:
            judge.judge("answer_relevance", ANSWER)
    assert str(raised.value).startswith(
        "the variable named by [judge] api_key_env does not hold an API key"
    )
    assert "first-half" not in str(raised.value)
    assert "second-half" not in str(raised.value)
    assert server.requests == []


# --- the key never leaks ---------------------------------------------------------------


def _echo_authorization(received: Received) -> Raw:
    """A 400 whose message quotes the Authorization header, as some proxies do."""
    header = received.headers["authorization"]
    return Raw(json.dumps({"error": {"message": f"invalid header {header!r}"}}), 400)


def test_the_key_is_scrubbed_from_an_echoing_error_body() -> None:
    with ChatServer([_echo_authorization]) as server:
        judge = judge_for(server.url, environ={"JUDGE_KEY": KEY}, api_key_env="JUDGE_KEY")
        with pytest.raises(JudgeCallFailed) as raised:
            judge.judge("answer_relevance", ANSWER)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert "invalid header 'Bearer ***'" in str(raised.value)
    for text in (str(raised.value), repr(raised.value), repr(judge), judge.label):
        assert KEY not in text
    assert KEY not in repr(judge.config)


def test_the_key_is_in_no_message_cache_file_or_name(tmp_path: Path) -> None:
    echoed = f"I cannot judge; your key is {KEY}"
    with ChatServer([Reply(echoed)]) as server:
        judge = judge_for(server.url, tmp_path, environ={"JUDGE_KEY": KEY}, api_key_env="JUDGE_KEY")
        with pytest.raises(UnparseableVerdict) as raised:
            judge.judge("answer_relevance", ANSWER)
        with pytest.raises(UnparseableVerdict) as again:  # from the cache
            judge.judge("answer_relevance", ANSWER)
    assert raised.value.content == "I cannot judge; your key is ***"
    assert again.value.call is not None
    assert again.value.call.cached
    for error in (raised.value, again.value):
        assert KEY not in str(error)
        assert KEY not in error.content
    files = list((tmp_path / "judge").rglob("*"))
    assert files
    for path in files:
        assert KEY not in str(path)
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()


def test_judge_label_names_model_and_endpoint() -> None:
    judge = judge_for("http://127.0.0.1:8000/v1/", api_key_env="JUDGE_KEY")
    assert judge.label == "LLM judge judge-model at http://127.0.0.1:8000/v1"


# --- the verdict cache --------------------------------------------------------------------


def test_a_second_identical_call_is_served_from_the_cache(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 50, "completion_tokens": 8}
    with ChatServer([Reply('{"score": 0.5, "reason": "half"}', usage)]) as server:
        first = judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
        second = judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
    assert len(server.requests) == 1
    assert (second.score, second.reason) == (0.5, "half")
    assert second.call == Call(
        cached=True,
        latency_ms=first.call.latency_ms,
        attempts=0,
        prompt_tokens=50,
        completion_tokens=8,
    )
    (path,) = cache_files(tmp_path)
    assert path.parent.name == path.stem[:2]
    assert len(path.stem) == 64
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["content"] == '{"score": 0.5, "reason": "half"}'


def test_a_different_question_model_or_endpoint_is_a_different_entry(tmp_path: Path) -> None:
    script = [Reply('{"score": 1, "reason": "ok"}')] * 3
    with ChatServer(script) as server:
        judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
        other = {**ANSWER, "answer": "Marlowe."}
        judge_for(server.url, tmp_path).judge("answer_relevance", other)
        judge_for(server.url, tmp_path, max_tokens=99).judge("answer_relevance", ANSWER)
    assert len(server.requests) == 3
    assert len(cache_files(tmp_path)) == 3


def test_refresh_ignores_earlier_runs_and_reuses_its_own(tmp_path: Path) -> None:
    script = [Reply('{"score": 0.25, "reason": "old"}'), Reply('{"score": 0.75, "reason": "new"}')]
    fields = FIELDS["e2e_score"]
    with ChatServer(script) as server:
        assert judge_for(server.url, tmp_path, run_id="r1").judge("e2e_score", fields).score == 0.25
        fresh = judge_for(server.url, tmp_path, refresh=True, run_id="r2").judge(
            "e2e_score", fields
        )
        # Another process of the same refreshed run reads what this run wrote.
        same_run = judge_for(server.url, tmp_path, refresh=True, run_id="r2")
        reused = same_run.judge("e2e_score", fields)
        cached = judge_for(server.url, tmp_path, run_id="r3").judge("e2e_score", fields)
    assert len(server.requests) == 2
    assert (fresh.score, fresh.call.cached) == (0.75, False)
    assert (reused.score, reused.call.cached) == (0.75, True)
    assert (cached.score, cached.call.cached) == (0.75, True)


def test_fresh_verdicts_bypass_the_cache(tmp_path: Path) -> None:
    script = [Reply(f'{{"score": {s}, "reason": "r{s}"}}') for s in (0.0, 0.5, 1.0, 0.25, 0.75)]
    with ChatServer(script) as server:
        judge = judge_for(server.url, tmp_path)
        first = judge.judge("answer_relevance", ANSWER).score
        fresh = [
            judge.judge("answer_relevance", ANSWER, repeat=r, fresh=True).score for r in (1, 2)
        ]
        again = [judge.judge("answer_relevance", ANSWER, repeat=r, fresh=True) for r in (2, 1)]
        cached = judge.judge("answer_relevance", ANSWER)
    assert [first, *fresh] == [0.0, 0.5, 1.0]
    # The fresh ones are asked anew; only the ordinary verdict comes from the cache.
    assert [(v.score, v.call.cached) for v in again] == [(0.25, False), (0.75, False)]
    assert (cached.score, cached.call.cached) == (0.0, True)
    assert len(server.requests) == 5
    bodies = [r.body for r in server.requests]
    assert all(body == bodies[0] for body in bodies)  # the same question each time
    assert len(cache_files(tmp_path)) == 1


def test_each_repeat_is_cached_under_its_own_index(tmp_path: Path) -> None:
    script = [Reply(f'{{"score": {s}, "reason": "r{s}"}}') for s in (0.0, 0.5, 1.0)]
    with ChatServer(script) as server:
        asked = [
            judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER, repeat=r)
            for r in (0, 1, 2)
        ]
        # Another judge on the same cache (a rerun, another process) asks nothing.
        again = [
            judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER, repeat=r)
            for r in (2, 0, 1)
        ]
    assert [(v.score, v.call.cached) for v in asked] == [(0.0, False), (0.5, False), (1.0, False)]
    assert [(v.score, v.call.cached) for v in again] == [(1.0, True), (0.0, True), (0.5, True)]
    assert len(server.requests) == 3
    assert len(cache_files(tmp_path)) == 3


def test_an_unparseable_reply_is_cached_and_replayed_without_a_request(tmp_path: Path) -> None:
    with ChatServer([Reply("I think it is relevant.", {"prompt_tokens": 7})]) as server:
        with pytest.raises(UnparseableVerdict) as first:
            judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
        with pytest.raises(UnparseableVerdict) as second:
            judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
    assert len(server.requests) == 1
    assert second.value.content == "I think it is relevant."
    assert str(second.value) == str(first.value)
    assert second.value.call is not None
    assert (second.value.call.cached, second.value.call.attempts) == (True, 0)
    assert second.value.call.prompt_tokens == 7


def test_a_failed_call_is_not_cached(tmp_path: Path) -> None:
    script: list[Step] = [Raw("down", 500), Reply('{"score": 1, "reason": "ok"}')]
    with ChatServer(script) as server:
        with pytest.raises(JudgeCallFailed):
            judge_for(server.url, tmp_path, retries=0).judge("answer_relevance", ANSWER)
        assert cache_files(tmp_path) == []
        verdict = judge_for(server.url, tmp_path, retries=0).judge("answer_relevance", ANSWER)
    assert (verdict.score, verdict.call.cached) == (1.0, False)


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{truncat",
        b"\xff\xfe not utf-8",
        b"[]",
        b'{"format": 1, "content": 5}',
    ],
)
def test_a_corrupt_cache_file_is_a_miss_and_is_overwritten(tmp_path: Path, damage: bytes) -> None:
    script = [Reply('{"score": 0.25, "reason": "a"}'), Reply('{"score": 0.75, "reason": "b"}')]
    with ChatServer(script) as server:
        judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
        (path,) = cache_files(tmp_path)
        path.write_bytes(damage)
        again = judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
        third = judge_for(server.url, tmp_path).judge("answer_relevance", ANSWER)
    assert (again.score, again.call.cached) == (0.75, False)
    assert (third.score, third.call.cached) == (0.75, True)
    assert len(server.requests) == 2


# --- bounded concurrency --------------------------------------------------------------


def _judge_from_threads(judges: list[LlmJudge], per_judge: int) -> None:
    errors: list[BaseException] = []

    def work(judge: LlmJudge, number: int) -> None:
        try:
            judge.judge("answer_relevance", {**ANSWER, "answer": f"answer {number}"})
        except BaseException as error:
            errors.append(error)
            raise

    threads = [
        threading.Thread(target=work, args=(judge, i * per_judge + n))
        for i, judge in enumerate(judges)
        for n in range(per_judge)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@pytest.mark.parametrize("with_cache", [True, False])
def test_concurrency_1_keeps_one_request_in_flight(tmp_path: Path, with_cache: bool) -> None:
    cache_dir = tmp_path if with_cache else None
    slow = Reply('{"score": 1, "reason": "ok"}', delay=0.1)
    with ChatServer(default=slow) as server:
        judge = judge_for(server.url, cache_dir, concurrency=1, timeout=5.0)
        _judge_from_threads([judge], 4)
    assert len(server.requests) == 4
    assert server.max_in_flight == 1


def test_concurrency_is_shared_by_judges_using_one_cache_dir(tmp_path: Path) -> None:
    slow = Reply('{"score": 1, "reason": "ok"}', delay=0.1)
    with ChatServer(default=slow) as server:
        judges = [judge_for(server.url, tmp_path, concurrency=1, timeout=5.0) for _ in range(2)]
        _judge_from_threads(judges, 2)
    assert len(server.requests) == 4
    assert server.max_in_flight == 1


@pytest.mark.parametrize("with_cache", [True, False])
def test_concurrency_2_allows_two_requests_in_flight(tmp_path: Path, with_cache: bool) -> None:
    cache_dir = tmp_path if with_cache else None
    # The first two requests wait until two are in flight (or 2 s), so reaching 2 does not
    # depend on how the threads happen to be scheduled; the last may be alone, so no wait.
    held = Reply('{"score": 1, "reason": "ok"}', hold_until=2)
    with ChatServer([held, held], default=Reply('{"score": 1}', delay=0.05)) as server:
        judge = judge_for(server.url, cache_dir, concurrency=2, timeout=5.0)
        _judge_from_threads([judge], 4)
    assert len(server.requests) == 4
    assert server.max_in_flight == 2


# --- judge_config -------------------------------------------------------------------------


def test_judge_config_reads_every_key(tmp_path: Path) -> None:
    (tmp_path / "my_prompts").mkdir()
    table = {
        "base_url": "https://judge.example/v1/",
        "model": "qwen2.5:7b",
        "api_key_env": "JUDGE_API_KEY",
        "timeout": 10,
        "retries": 0,
        "concurrency": 2,
        "backoff": 1.5,
        "max_tokens": 100,
        "prompts": "my_prompts",
    }
    assert judge_config(table, tmp_path) == JudgeConfig(
        base_url="https://judge.example/v1",
        model="qwen2.5:7b",
        api_key_env="JUDGE_API_KEY",
        timeout=10.0,
        retries=0,
        concurrency=2,
        backoff=1.5,
        max_tokens=100,
        prompts=tmp_path / "my_prompts",
    )


def test_judge_config_defaults() -> None:
    config = judge_config({"base_url": "http://127.0.0.1:8000/v1", "model": "m"}, Path("."))
    assert config == JudgeConfig("http://127.0.0.1:8000/v1", "m")
    assert (config.timeout, config.retries, config.concurrency) == (30.0, 3, 4)
    assert (config.backoff, config.max_tokens, config.api_key_env, config.prompts) == (
        0.5,
        256,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("base_url", "ftp://judge.example/v1"),
        ("base_url", "judge.example/v1"),
        ("base_url", "http:///v1"),
        ("base_url", "http://judge.example/v1?x=1"),
        ("base_url", "http://judge.example:99999/v1"),
        ("base_url", "http://user:secret@judge.example/v1"),
        ("base_url", 8000),
        ("model", ""),
        ("model", "  "),
        ("model", ["m"]),
        ("api_key_env", ""),
        ("api_key_env", "sk-not-a-variable-name"),
        ("api_key_env", 1),
        ("timeout", 0),
        ("timeout", -1.0),
        ("timeout", float("inf")),
        ("timeout", "30"),
        ("timeout", True),
        ("retries", -1),
        ("retries", 1.5),
        ("retries", False),
        ("concurrency", 0),
        ("concurrency", "4"),
        ("backoff", -0.5),
        ("backoff", float("nan")),
        ("max_tokens", 0),
        ("max_tokens", 10.0),
        ("prompts", "no_such_directory"),
        ("prompts", 3),
        ("top_p", 0.7),  # not a key of [judge]
        ("temperature", -0.1),
        ("temperature", 2.5),
        ("temperature", float("nan")),
        ("temperature", "0"),
        ("repeats", 0),
        ("repeats", 21),
        ("repeats", 2.0),
        ("repeats", True),
    ],
)
def test_judge_config_names_the_bad_key(tmp_path: Path, key: str, value: Any) -> None:
    table = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", key: value}
    with pytest.raises(JudgeConfigError) as raised:
        judge_config(table, tmp_path)
    assert raised.value.key == key
    assert raised.value.args[0] == key
    assert str(raised.value).startswith(f"{key}: ")


@pytest.mark.parametrize(
    ("key", "value", "secret"),
    [
        ("api_key_env", "sk-proj-9d8c7b6a5f4e", "sk-proj-9d8c7b6a5f4e"),
        ("api_key_env", 12345678, "12345678"),
        ("base_url", "http://user:hunter2@judge.example/v1", "hunter2"),
    ],
)
def test_judge_config_does_not_echo_what_may_be_a_secret(key: str, value: Any, secret: str) -> None:
    table = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", key: value}
    with pytest.raises(JudgeConfigError) as raised:
        judge_config(table, Path("."))
    assert secret not in str(raised.value)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("base_url", r"required \(or function, for a judge called in process\)"),
        ("model", "required"),
    ],
)
def test_judge_config_requires_base_url_and_model(key: str, message: str) -> None:
    table = {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}
    del table[key]
    with pytest.raises(JudgeConfigError, match=f"^{key}: {message}$"):
        judge_config(table, Path("."))


# --- prompts ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_each_shipped_prompt_has_its_placeholders_and_asks_for_json(name: str) -> None:
    text = load_prompt(name, None)
    assert placeholder_problem(name, text) is None
    last = text.strip().splitlines()[-1]
    expected = '{"entailed": ' if name == "entailment" else '{"score": <number>, '
    assert last.startswith(expected)
    assert "nothing else" in text


def _with_prompt(tmp_path: Path, filename: str, text: str) -> dict[str, Any]:
    directory = tmp_path / "prompts"
    directory.mkdir()
    (directory / filename).write_text(text, encoding="utf-8")
    return {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "prompts": "prompts"}


@pytest.mark.parametrize(
    ("filename", "text", "problem"),
    [
        ("faithfulnes_judge.txt", "$question $answer $contexts", "not a prompt name"),
        ("Entailment.txt", "$premise $hypothesis", "not a prompt name"),
        ("entailment.txt", "$premise $hypothesis $answer", "unknown placeholder $answer"),
        ("answer_relevance.txt", "$question $answers", "unknown placeholder $answers"),
        ("answer_correctness.txt", "$question $answer", "missing placeholder $gold"),
        ("e2e_score.txt", "$question $answer $gold costs $5", "starts no placeholder"),
    ],
)
def test_a_bad_prompt_override_is_refused(
    tmp_path: Path, filename: str, text: str, problem: str
) -> None:
    with pytest.raises(JudgeConfigError) as raised:
        judge_config(_with_prompt(tmp_path, filename, text), tmp_path)
    assert raised.value.key == "prompts"
    assert problem in str(raised.value)
    assert filename in str(raised.value)


def test_a_prompt_override_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    table = _with_prompt(tmp_path, "entailment.txt", "")
    (tmp_path / "prompts" / "entailment.txt").write_bytes(b"$premise \xff $hypothesis")
    with pytest.raises(JudgeConfigError, match=r"entailment\.txt: not UTF-8 text"):
        judge_config(table, tmp_path)


def test_a_prompt_override_replaces_only_its_prompt(tmp_path: Path) -> None:
    override = 'Q: $question\nA: ${answer}\nCosts $$0. Reply {"score": <number>}'
    config = judge_config(_with_prompt(tmp_path, "answer_relevance.txt", override), tmp_path)
    (tmp_path / "prompts" / "notes.md").write_text("not a prompt, ignored")
    script = [Reply('{"score": 1}'), Reply('{"entailed": false}')]
    with ChatServer(script) as server:
        judge = LlmJudge(replace(config, base_url=server.url), None, environ={}, sleep=Sleeps())
        judge.judge("answer_relevance", ANSWER)
        judge.judge("entailment", FIELDS["entailment"])
    prompts = [r.body["messages"][1]["content"] for r in server.requests]
    assert prompts[0] == (
        'Q: Who wrote Hamlet?\nA: Shakespeare wrote it.\nCosts $0. Reply {"score": <number>}'
    )
    assert prompts[1] == load_prompt("entailment", None).replace(
        "$premise", "Alpha scored first."
    ).replace("$hypothesis", "Alpha scored.")


@pytest.mark.parametrize(
    "fields",
    [
        {"question": "q"},
        {"question": "q", "answer": "a", "gold": "g"},
        {"question": "q", "answers": "a"},
    ],
)
def test_fields_must_be_exactly_the_prompts_placeholders(fields: dict[str, str]) -> None:
    judge = judge_for("http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="answer_relevance takes fields"):
        judge.judge("answer_relevance", fields)


def test_an_unknown_prompt_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown prompt 'faithfulness'"):
        judge_for("http://127.0.0.1:9/v1").judge("faithfulness", ANSWER)


def test_placeholders_cover_every_prompt() -> None:
    assert set(PLACEHOLDERS) == set(PROMPT_NAMES)
