"""The LLM-judge metrics end to end: pytest runs an eval (in this process, or in a
subprocess under ``-n 2``) whose ``[judge]`` points at a scripted chat-completions server
on loopback in this process.

The server answers by prompt (told apart by its first line) and question, and counts how
often it saw each exact prompt, so the consistency re-judgments (which bypass the cache)
get their own replies, the same pair again in every run. Every reply carries usage 100
prompt + 10 completion tokens. Expected values by hand:

    row  faithfulness  relevance  correctness  e2e  consistency (2nd, 3rd faithfulness)
    q1   1.0           1.0        5            1.0  1.0, 1.0 -> |0| <= 0.5: 1
    q2   0.5           1.0        3            0.5  0.5, 1.0 -> |0.5| <= 0.5: 1
    q3   0.0           0.5        1            0.0  0.0, 1.0 -> |1| > 0.5: 0

    means: faithfulness 0.5, relevance 2.5/3, correctness 3, e2e 0.5, consistency 2/3.
    judge: 6 verdicts per row -> 18; tokens 18 x 110 = 1980 (1800 prompt, 180 completion).
    A second test asks faithfulness_judge of every row again: it is the same verdict, asked
    once (a lock per cache entry, also across xdist workers) and counted once.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from helpers.project import IN_PROCESS, Project, jsonl, terminal_section

from chat_server import ChatServer, Raw, Received, completion, unused_port

SECRET = "sk-test-never-shown-3f9a"
QUESTIONS = {"q1": "Where is the Eiffel Tower?", "q2": "Who wrote Hamlet?", "q3": "Why?"}
ROWS = [
    {
        "id": qid,
        "question": question,
        "answer": f"An answer to {qid} [CIT:d1].",
        "gold": "gold",
        "contexts": [{"doc_id": "d1", "title": "Doc", "text": "Some passage."}],
    }
    for qid, question in QUESTIONS.items()
]
SCORES = {
    "You are checking whether an answer is faithful": {"q1": 1.0, "q2": 0.5, "q3": 0.0},
    "You are checking whether an answer addresses": {"q1": 1.0, "q2": 1.0, "q3": 0.5},
    "You are grading an answer against the reference": {"q1": 5, "q2": 3, "q3": 1},
    "You are judging how useful an answer is": {"q1": 1.0, "q2": 0.5, "q3": 0.0},
}
REPEATED = {"q1": [1.0, 1.0], "q2": [0.5, 1.0], "q3": [0.0, 1.0]}
USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_judged(row, faithfulness_judge, answer_relevance, answer_correctness, e2e_score,
                consistency_score):
    faithfulness_judge(row)
    answer_relevance(row)
    answer_correctness(row)
    e2e_score(row)
    consistency_score(row)


def test_again(row, faithfulness_judge):
    faithfulness_judge(row)


def test_plain(row, f1):
    f1(row)
"""


def _judge_table(url: str, **changes: Any) -> str:
    table = {
        "base_url": url,
        "model": "scripted",
        "api_key_env": "RAGMETRICS_TEST_JUDGE_KEY",
        "timeout": 2,
        "retries": 1,
        "backoff": 0.01,
        **changes,
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in table.items() if value is not None]
    return "[judge]\n" + "\n".join(lines) + "\n"


class Judge:
    """The scripted judge: a reply per (prompt, question), repeats counted per prompt."""

    def __init__(self, unparseable: str | None = None) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.unparseable = unparseable

    def __call__(self, received: Received) -> Raw:
        prompt = received.body["messages"][-1]["content"]
        qid = next(q for q, text in QUESTIONS.items() if f"\n{text}\n" in prompt)
        with self.lock:
            self.seen[prompt] += 1
            occurrence = self.seen[prompt]
        kind = next(k for k in SCORES if prompt.startswith(k))
        score = SCORES[kind][qid]
        if kind.endswith("faithful") and occurrence > 1:
            score = REPEATED[qid][(occurrence - 2) % 2]  # the same pair in every run
        content = json.dumps({"score": score, "reason": f"scripted {qid}"})
        if self.unparseable == qid and kind.endswith("faithful"):
            content = "The answer looks fine to me."
        return Raw(completion(content, USAGE))


def _project(pytester: pytest.Pytester, mode: str, judge: str) -> Project:
    project = Project(pytester, mode)
    (project.path / "test_eval.py").unlink()
    project.write("data/rows.jsonl", jsonl(ROWS))
    project.write("test_judged.py", EVAL)
    project.write("thresholds.toml", judge)
    return project


def _files_mention(root: Path, text: str) -> list[str]:
    return [
        str(path)
        for path in root.rglob("*")
        if path.is_file() and (text in path.name or text.encode() in path.read_bytes())
    ]


@pytest.mark.parametrize("mode", [IN_PROCESS, "n2"])
def test_verdicts_are_scored_accounted_and_cached(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    judge = Judge()
    with ChatServer(default=judge) as server:
        project = _project(pytester, mode, _judge_table(server.url))
        result, first = project.run_json()
        result.assert_outcomes(passed=9)
        requests = len(server.requests)
        assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {SECRET}"}
        assert {r.body["temperature"] for r in server.requests} == {0}
        result_again, second = project.run_json()
        requests_again = len(server.requests) - requests
        _, refreshed = project.run_json("--ragmetrics-refresh")
        requests_refreshed = len(server.requests) - requests - requests_again
    (entry,) = first["evals"]
    metrics = entry["metrics"]
    assert metrics["faithfulness_judge"]["mean"] == 0.5
    assert metrics["answer_relevance"]["mean"] == pytest.approx(2.5 / 3)
    assert metrics["answer_correctness"]["mean"] == 3
    assert metrics["e2e_score"]["mean"] == 0.5
    assert metrics["consistency_score"]["mean"] == pytest.approx(2 / 3)
    stats = metrics["judge"]
    assert requests == 18
    assert stats["verdicts"] == 18
    assert stats["requests"] == 18
    assert stats["cached"] == 0
    assert stats["error_rate"] == 0
    assert stats["consistency_score"] == pytest.approx(2 / 3)
    assert (stats["prompt_tokens"], stats["completion_tokens"], stats["tokens"]) == (
        1800,
        180,
        1980,
    )
    assert stats["avg_latency_ms"] > 0
    assert "tokens" not in metrics  # the judge's tokens are not the system's
    # A re-run asks only the consistency pairs (2 per row) anew: every other verdict is
    # cached and keeps the latency and tokens it was measured with.
    assert requests_again == 6
    again = second["evals"][0]["metrics"]
    same = {k: v for k, v in stats.items() if k != "avg_latency_ms"}
    assert {k: v for k, v in again["judge"].items() if k != "avg_latency_ms"} == {
        **same,
        "cached": 12,
        "requests": 6,
    }
    assert {k: v for k, v in again.items() if k != "judge"} == {
        k: v for k, v in metrics.items() if k != "judge"
    }
    # --ragmetrics-refresh asks every verdict anew, each once though two tests read it.
    assert requests_refreshed == 18
    assert refreshed["evals"][0]["metrics"]["judge"]["requests"] == 18
    row = entry["rows"][2]
    assert row["judge"]["consistency_score"]["scores"] == [0.0, 1.0]
    assert row["judge"]["faithfulness_judge"]["reason"] == "scripted q3"
    # The key is nowhere: not in the reports, the output, the cache or its file names.
    for output in (result.stdout.str(), result_again.stdout.str(), json.dumps(first)):
        assert SECRET not in output
    assert _files_mention(project.path, SECRET) == []


def test_an_unparseable_verdict_errors_its_row_and_counts_in_error_rate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    gates = '[gates]\n"error_rate" = "<= 0.05"\n"errors.sum" = "== 0"\n'
    with ChatServer(default=Judge(unparseable="q2")) as server:
        project = _project(pytester, IN_PROCESS, _judge_table(server.url) + gates)
        result, document = project.run_json()
        asked = len(server.requests)
        project.run_json()
        # The unparseable reply is cached too: only q1's and q3's consistency pairs, which
        # bypass the cache, are asked again.
        assert len(server.requests) == asked + 4
    # q2 stops at its first verdict: 6 + 1 + 6 verdicts, one unparseable (test_again's
    # q2 reads the same cached reply, the same record). Its two tests error; the two gates
    # fail.
    result.assert_outcomes(passed=7, errors=2, failed=2)
    result.stdout.fnmatch_lines(["*faithfulness_judge*The answer looks fine to me.*"])
    metrics = document["evals"][0]["metrics"]
    assert metrics["judge"]["verdicts"] == 13
    assert metrics["judge"]["unparseable"] == 1
    assert metrics["judge"]["error_rate"] == pytest.approx(1 / 13)
    assert metrics["errors"]["sum"] == 1
    assert metrics["faithfulness_judge"]["count"] == 2  # never a made-up score for q2
    assert metrics["f1"]["count"] == 3  # the rest of the run is scored


@pytest.mark.parametrize("mode", [IN_PROCESS, "n2"])
def test_an_unreachable_judge_fails_fast_with_one_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    url = f"http://127.0.0.1:{unused_port()}/v1"
    project = _project(pytester, mode, _judge_table(url, timeout=30))
    result, document = project.run_json()
    result.assert_outcomes(passed=3, errors=6)
    # Every judged row errors with the same one message (no per-row timeout).
    (message,) = set(re.findall(r"LLM judge unreachable at [^;]*", result.stdout.str()))
    assert message.startswith(f"LLM judge unreachable at {url}: cannot connect: Connection")
    metrics = document["evals"][0]["metrics"]
    assert metrics["f1"]["count"] == 3
    # Both tests of each row asked for faithfulness_judge, and a failure is never cached.
    assert metrics["judge"]["failed"] == 6
    assert metrics["judge"]["error_rate"] == 1
    # One call's two attempts (retries = 1) per process that judged, then nothing: every
    # later judged row failed without a request.
    assert metrics["judge"]["requests"] in ((2,) if mode == IN_PROCESS else (2, 4))


def test_a_judge_metric_without_a_judge_table_names_the_fix(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS, "")
    result = project.run()
    result.assert_outcomes(passed=3, errors=6)
    result.stdout.fnmatch_lines(
        ["data/rows.jsonl:1: an LLM-judge metric needs an endpoint: add a [[]judge[]] table*"]
    )


def test_the_key_stays_out_of_tracebacks_and_junit_xml(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that fails every request and echoes the Authorization header back; pytest
    # -l prints every frame's locals, JUnit XML keeps the failures.
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)

    def echo(received: Received) -> Raw:
        return Raw(json.dumps({"error": {"message": received.headers["authorization"]}}), 503)

    with ChatServer(default=echo) as server:
        project = _project(pytester, IN_PROCESS, _judge_table(server.url))
        result, document = project.run_json("-l", "--junitxml=junit.xml", "--tb=long")
    result.assert_outcomes(passed=3, errors=6)
    result.stdout.fnmatch_lines(["*HTTP 503: Bearer [*][*][*]"])
    assert SECRET not in result.stdout.str()
    assert SECRET not in result.stderr.str()
    assert SECRET not in json.dumps(document)
    assert _files_mention(project.path, SECRET) == []


# A traceback's mark: a frame's file:line (judged.py:144, test_judged.py:9, ...).
FRAME = re.compile(r"Traceback|\w\.py:\d+")


def test_a_failed_judge_call_errors_its_row_in_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    url = f"http://127.0.0.1:{unused_port()}/v1"
    project = _project(pytester, IN_PROCESS, _judge_table(url))
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--ragmetrics-json", "report.json", "--junitxml", "junit.xml"
    )
    # The judged rows error, as the README says, in the call phase too; f1's rows pass.
    result.assert_outcomes(passed=3, errors=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    errors = terminal_section(result, "ERRORS")
    assert len(errors) == 2 * 6  # pytest's header and one line per errored test
    headers, messages = errors[0::2], errors[1::2]
    assert all(
        re.fullmatch(r"_+ ERROR at call of test_(judged|again)\[q\d\] _+", h) for h in headers
    )
    reason = (
        f"faithfulness_judge: LLM judge unreachable at {url}: cannot connect: "
        "ConnectionRefusedError: [Errno 111] Connection refused; no further judge calls are "
        "made in this run"
    )
    assert sorted(messages) == sorted(f"data/rows.jsonl:{n}: {reason}" for n in (1, 2, 3) * 2)
    summary = terminal_section(result, "short test summary info")
    assert len(summary) == 6
    assert all(line.startswith("ERROR test_judged.py::test_") for line in summary)
    assert FRAME.search(result.stdout.str()) is None
    # The JSON report's row errors are the same lines.
    document = json.loads((project.path / "report.json").read_text(encoding="utf-8"))
    assert [row["errors"] for row in document["evals"][0]["rows"]] == [
        [f"data/rows.jsonl:{n}: {reason}"] for n in (1, 2, 3)
    ]
    # JUnit XML files a call-phase report under <failure> whatever the terminal calls it;
    # its message is the same line, without a traceback.
    junit = (project.path / "junit.xml").read_text(encoding="utf-8")
    reported = [e.get("message") for e in ElementTree.fromstring(junit).iter("failure")]
    assert sorted(reported) == sorted(messages)
    assert FRAME.search(junit) is None


@pytest.mark.parametrize("option", ["--tb=long", "-vv"])
def test_a_failed_judge_calls_traceback_is_shown_on_request(
    pytester: pytest.Pytester, option: str
) -> None:
    _project(pytester, IN_PROCESS, _judge_table(f"http://127.0.0.1:{unused_port()}/v1"))
    result = pytester.runpytest("-p", "no:cacheprovider", option)
    result.assert_outcomes(passed=3, errors=6)
    assert re.search(r"pytest_ragmetrics/[\w/]+\.py:\d+: JudgeRowError", result.stdout.str())


def test_a_failed_assert_on_a_judge_score_stays_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETRICS_TEST_JUDGE_KEY", SECRET)
    with ChatServer(default=Judge()) as server:
        project = _project(pytester, IN_PROCESS, _judge_table(server.url))
        project.write(
            "test_judged.py",
            'import pytest\npytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n\n'
            "def test_strict(row, faithfulness_judge):\n"
            "    assert faithfulness_judge(row) >= 0.9\n",
        )
        result = pytester.runpytest("-p", "no:cacheprovider")
    # q2 (0.5) and q3 (0.0) fail the test's own verdict, with pytest's assertion report.
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_strict[[]q2[]] _*",
            ">*assert faithfulness_judge(row) >= 0.9",
            "E*assert faithfulness_judge=0.5 (row 'q2': LLM judge scripted at * scored 0.5*",
            "test_judged.py:5: AssertionError",
        ]
    )


PASTED = "gsk_" + "Q7wX2mB9vK4tR8nJ3cY6hL1pZ5sD0fG2aE7uW9iO4kM8bN3x"


@pytest.mark.parametrize("options", [(), ("-l", "--tb=long")])
def test_a_key_pasted_as_api_key_env_is_echoed_nowhere(
    pytester: pytest.Pytester, options: tuple[str, ...]
) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"  # nothing is sent: the key is not set
    project = _project(pytester, IN_PROCESS, _judge_table(url, api_key_env=PASTED))
    reports = {
        "--ragmetrics-json": "report.json",
        "--ragmetrics-html": "report.html",
        "--ragmetrics-md": "report.md",
        "--junitxml": "junit.xml",
    }
    arguments = [part for option, path in reports.items() for part in (option, path)]
    result = pytester.runpytest("-p", "no:cacheprovider", *arguments, *options)
    result.assert_outcomes(passed=3, errors=6)
    result.stdout.fnmatch_lines(
        [
            "*data/rows.jsonl:1: faithfulness_judge: the variable named by [[]judge[]] "
            "api_key_env is not set; the name looks like an API key rather than a variable "
            "name*"
        ]
    )
    assert PASTED not in result.stdout.str()
    assert PASTED not in result.stderr.str()
    for path in reports.values():
        assert PASTED not in (project.path / path).read_text(encoding="utf-8")
    written = [p for p in _files_mention(project.path, PASTED) if Path(p).name != "thresholds.toml"]
    assert written == []


@pytest.mark.parametrize(("entailed", "expected"), [(True, 100.0), (False, 0.0)])
def test_the_llm_judge_serves_trust_score_citations(
    pytester: pytest.Pytester, entailed: bool, expected: float
) -> None:
    # One answered, answerable row whose one sentence cites [1]: citation recall and
    # precision are 100 when the judge entails it and 0 when it does not.
    row = {
        "id": "t1",
        "question": "Where is the Eiffel Tower?",
        "answer": "The Eiffel Tower is in Paris [1].",
        "gold": [["Paris"]],
        "answerable": True,
        "contexts": [
            {"doc_id": "e", "title": "Eiffel", "text": "It is in Paris.", "answers_found": [1]}
        ],
    }
    reply = completion(json.dumps({"entailed": entailed, "reason": "scripted"}), USAGE)
    with ChatServer(default=Raw(reply)) as server:
        project = _project(pytester, IN_PROCESS, "")
        project.write("data/rows.jsonl", jsonl([row]))
        project.write(
            "test_judged.py",
            'import pytest\npytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")\n\n'
            "def test_trust(row, trust):\n    trust(row)\n",
        )
        table = _judge_table(server.url, api_key_env=None)  # a local server needs no key
        project.write("thresholds.toml", '[settings]\ntrust_judge = "llm"\n\n' + table)
        result, document = project.run_json()
        (request,) = server.requests
    result.assert_outcomes(passed=1)
    prompt = request.body["messages"][-1]["content"]
    assert "Title: Eiffel\nIt is in Paris." in prompt
    assert "The Eiffel Tower is in Paris." in prompt
    metrics = document["evals"][0]["metrics"]
    assert metrics["trust"]["regular_citation_rec"] == expected
    assert metrics["trust"]["regular_citation_prec"] == expected
    assert metrics["judge"]["verdicts"] == 1
