"""What a judge counts for the progress lines: each verdict once, as asked of the
endpoint, read from the cache or failed; only time spent on the endpoint is added up.
Expected counts by hand from the scripted replies."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_llm import ANSWER, judge_for

from pytest_ragmetrics.judge.client import VerdictCounts
from pytest_ragmetrics.judge.verdicts import JudgeCallFailed, JudgeUnreachable, UnparseableVerdict

from chat_server import ChatServer, Raw, Reply, unused_port

VERDICT = '{"score": 1.0, "reason": "On topic."}'


def test_asked_then_cached_then_repeated(tmp_path: Path) -> None:
    with ChatServer([Reply(VERDICT), Reply(VERDICT)]) as server:
        judge = judge_for(server.url, tmp_path)
        judge.judge("answer_relevance", ANSWER)  # asked
        judge.judge("answer_relevance", ANSWER)  # the cache entry
        judge.judge("answer_relevance", ANSWER, repeat=1)  # a repeat bypasses the cache
    counts = judge.counts
    assert (counts.asked, counts.cached, counts.failed, counts.verdicts) == (2, 1, 0, 3)
    assert counts.endpoint_s > 0


def test_an_unparseable_reply_and_a_refused_call_are_failures(tmp_path: Path) -> None:
    with ChatServer([Reply("Looks fine."), Raw('{"error": "no"}', 400)]) as server:
        judge = judge_for(server.url, tmp_path)
        with pytest.raises(UnparseableVerdict):
            judge.judge("answer_relevance", ANSWER)
        with pytest.raises(UnparseableVerdict):  # the unparseable reply, from the cache
            judge.judge("answer_relevance", ANSWER)
        with pytest.raises(JudgeCallFailed):
            judge.judge("answer_relevance", ANSWER, repeat=1)
    counts = judge.counts
    assert (counts.asked, counts.cached, counts.failed) == (0, 0, 3)


def test_an_unreachable_endpoint_counts_every_verdict_it_failed() -> None:
    judge = judge_for(f"http://127.0.0.1:{unused_port()}/v1", retries=0)
    for _ in range(3):
        with pytest.raises(JudgeUnreachable):
            judge.judge("answer_relevance", ANSWER)
    assert judge.counts == VerdictCounts(failed=3, endpoint_s=judge.counts.endpoint_s)
