"""Repeated verdicts end to end (docs/judge.md#repeated-verdicts), against a judge that is
noisy by design: a chat-completions server on loopback that, asked whether an answer is
faithful, says 1 with probability ``P`` and 0 otherwise, independently each time.

Its draws are reproducible: the k-th request with a given prompt draws from a generator
seeded with (prompt, k), and a row's repeats are asked in order by the process that runs
the row, so a run with and one without pytest-xdist see the same verdicts.

What the statistics must be, from the specification:

* a row's value is the mean of its K verdicts;
* ``flip_rate``, under the gate ``faithfulness_judge.mean <= 0.5`` (a verdict of 0 passes
  its bound, one of 1 does not), is the share of rows with both kinds of verdict, whose
  probability is 1 - P^K - (1 - P)^K;
* ``spread`` is sqrt(mean over rows of each row's sample variance of its verdicts).
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import threading
from collections import Counter

import pytest
from helpers.project import IN_PROCESS, Project, jsonl
from scipy.stats import binomtest

from chat_server import ChatServer, Raw, Received, completion

P = 0.3  # the chance of a verdict of 1
K = 5
ROWS = 200
USAGE = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
DATA = [
    {
        "id": f"q{i}",
        "question": f"Question number {i}?",
        "answer": f"Answer {i} [CIT:d1].",
        "contexts": [{"doc_id": "d1", "text": "A passage."}],
    }
    for i in range(ROWS)
]
EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_faithful(row, faithfulness_judge):
    faithfulness_judge(row)
"""
GATES = '[gates]\n"faithfulness_judge.mean" = "<= 0.5"\n'


class NoisyJudge:
    """Says 1 with probability ``P``: the k-th ask of a prompt draws from (prompt, k)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def reset(self) -> None:
        with self.lock:
            self.seen.clear()

    def __call__(self, received: Received) -> Raw:
        prompt = received.body["messages"][-1]["content"]
        with self.lock:
            self.seen[prompt] += 1
            occurrence = self.seen[prompt]
        seed = hashlib.sha256(f"{prompt}\0{occurrence}".encode()).hexdigest()
        score = 1.0 if random.Random(seed).random() < P else 0.0
        return Raw(completion(json.dumps({"score": score, "reason": "noisy"}), USAGE))


def _project(pytester: pytest.Pytester, url: str, mode: str, repeats: int | None) -> Project:
    project = Project(pytester, mode)
    (project.path / "test_eval.py").unlink()
    project.write("rows.jsonl", jsonl(DATA))
    project.write("test_noisy.py", EVAL)
    judge = f'[judge]\nbase_url = "{url}"\nmodel = "noisy"\ntimeout = 5\n'
    if repeats is not None:
        judge += f"repeats = {repeats}\n"
    project.write("thresholds.toml", judge + GATES)
    return project


def _flip_probability(p: float, k: int) -> float:
    return 1 - p**k - (1 - p) ** k


def test_repeated_verdicts_give_the_noise_of_the_judge_and_a_rerun_asks_nothing(
    pytester: pytest.Pytester,
) -> None:
    noisy = NoisyJudge()
    with ChatServer(default=noisy) as server:
        project = _project(pytester, server.url, IN_PROCESS, K)
        result, first = project.run_json()
        asked = len(server.requests)
        _, again = project.run_json()
        asked_again = len(server.requests) - asked
    result.assert_outcomes(passed=ROWS + 1)
    assert asked == ROWS * K
    assert asked_again == 0  # every repeat was cached under its own index
    (entry,) = first["evals"]
    rows = entry["rows"]
    scores = [row["judge"]["faithfulness_judge"]["scores"] for row in rows]
    assert all(len(found) == K and set(found) <= {0.0, 1.0} for found in scores)
    # Each row's value is the mean of its verdicts.
    assert [row["metrics"]["faithfulness_judge"] for row in rows] == [
        sum(found) / K for found in scores
    ]
    stats = entry["metrics"]["faithfulness_judge"]
    # By the definitions, from the verdicts the rows recorded.
    flipped = sum(len(set(found)) > 1 for found in scores)
    assert stats["flip_rate"] == flipped / ROWS
    assert stats["unstable"] == flipped / ROWS  # 0/1 verdicts: any change crosses 0.5
    pooled = statistics.fmean(statistics.variance(found) for found in scores)
    assert stats["spread"] == pytest.approx(pooled**0.5, rel=1e-12)
    # And against the server's noise: the flips are binomial(ROWS, 1 - P^K - (1-P)^K), and
    # a verdict's variance is P(1 - P).
    assert binomtest(flipped, ROWS, _flip_probability(P, K)).pvalue > 0.001
    assert abs(pooled - P * (1 - P)) < 4 * _variance_se(P, K) / ROWS**0.5
    judge = entry["metrics"]["judge"]
    assert (judge["verdicts"], judge["requests"], judge["cached"]) == (ROWS * K, ROWS * K, 0)
    assert again["evals"][0]["metrics"]["faithfulness_judge"] == stats
    assert again["evals"][0]["metrics"]["judge"]["cached"] == ROWS * K


def _variance_se(p: float, k: int) -> float:
    """The standard deviation of one row's sample variance of k Bernoulli(p) draws, by
    simulation with a fixed seed (its exact form is long): the tolerance's scale."""
    draw = random.Random(12345)
    found = [
        statistics.variance([1.0 if draw.random() < p else 0.0 for _ in range(k)])
        for _ in range(20_000)
    ]
    return statistics.stdev(found)


@pytest.mark.parametrize("spelling", ["equals", "space"])
def test_the_option_gives_the_same_verdicts_under_xdist(
    pytester: pytest.Pytester, spelling: str
) -> None:
    noisy = NoisyJudge()
    option = (
        [f"--ragmetrics-judge-repeats={K}"]
        if spelling == "equals"
        else ["--ragmetrics-judge-repeats", str(K)]
    )
    with ChatServer(default=noisy) as server:
        single = _project(pytester, server.url, IN_PROCESS, None)
        _, alone = single.run_json(*option)
        asked = len(server.requests)
        cache = single.path / ".ragmetrics_cache"
        for path in sorted(cache.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        noisy.reset()
        spread = _project(pytester, server.url, "n2", None)
        _, parallel = spread.run_json(*option)
        asked_parallel = len(server.requests) - asked
    assert asked == asked_parallel == ROWS * K
    one, two = alone["evals"][0], parallel["evals"][0]
    assert one["metrics"]["faithfulness_judge"] == two["metrics"]["faithfulness_judge"]
    assert [r["metrics"] for r in one["rows"]] == [r["metrics"] for r in two["rows"]]


@pytest.mark.parametrize("value", ["0", "21", "two"])
def test_a_bad_repeat_count_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    project = _project(pytester, "http://127.0.0.1:9/v1", IN_PROCESS, None)
    result = project.run(f"--ragmetrics-judge-repeats={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--ragmetrics-judge-repeats takes a whole number from 1 to 20, got '{value}'*"]
    )


def test_a_bad_repeats_key_names_it(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "http://127.0.0.1:9/v1", IN_PROCESS, 0)
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*[[]judge[]] repeats: expected 1 to 20 verdicts a row, got 0*"])
