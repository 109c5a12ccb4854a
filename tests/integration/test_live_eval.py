"""A live system under test, end to end through pytester: called per row, cached on disk
by (system fingerprint, question), safe under pytest-xdist, saved as a dataset.

The systems answer three questions from a fixed table and append one line per call to
``calls.log`` (with O_APPEND, so lines from two xdist workers never interleave), which is
how the tests count calls across processes. Expected values by hand:

    question                      gold      base answer   cand answer
    q1 "What is 2 + 2?"           "4"       "4"           "4"
    q2 "Capital of France?"       "Paris"   "Lyon"        "Paris"
    q3 "Colour of the sky?"       "blue"    "blue"        "blue"

    f1: base 1, 0, 1 -> mean 2/3; cand 1, 1, 1 -> mean 1.
    tokens: base 10 per row; cand 12 per row -> tokens_mean_ratio 1.2.
    latency_ms: cand returns 7 for every row, so its p50 is 7 whether called or cached.
"""

from __future__ import annotations

import errno
import http.client
import json
import re
import socket
import urllib.error
from email.message import Message
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from helpers.files import block_directory
from helpers.project import IN_PROCESS, Project, jsonl, terminal_section

from pytest_ragmetrics import LiveSystem
from pytest_ragmetrics.live.cache import OutputCache
from pytest_ragmetrics.live.system import LiveSystemError, LiveSystemUnreachable, unreachable

from chat_server import unused_port

QUESTIONS = [
    {"id": "q1", "question": "What is 2 + 2?", "gold": "4"},
    {"id": "q2", "question": "Capital of France?", "gold": "Paris"},
    {"id": "q3", "question": "Colour of the sky?", "gold": "blue"},
]

SYSTEMS = """
import os

import pytest

from pytest_ragmetrics import LiveSystem

VERSION = "1"
BASE = {"What is 2 + 2?": "4", "Capital of France?": "Lyon", "Colour of the sky?": "blue"}
CAND = {**BASE, "Capital of France?": "Paris"}


def log(name, question):
    fd = os.open("calls.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{name}\\t{question}\\n".encode())
    os.close(fd)


def base(question):
    log("base", question)
    return {"answer": BASE[question], "tokens": 10}


def cand(question):
    log("cand", question)
    return {"answer": CAND[question], "tokens": 12, "latency_ms": 7}


@pytest.fixture(scope="session")
def ragmetrics_system():
    return {
        "base": LiveSystem("base", base, VERSION, {"k": 3}),
        "cand": LiveSystem("cand", cand, VERSION, {"k": 5}),
    }
"""

EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(
    dataset="data/questions.jsonl", systems=["base", "cand"], compare_to="base"
)


def test_correct(row, f1):
    f1(row)


def test_cost(row, tokens, latency):
    tokens(row)
    latency(row)
"""

GATES = """
[gates]
"f1.mean" = ">= baseline"
"tokens.mean" = "<= 1.2x baseline"
"""


def _project(pytester: pytest.Pytester, mode: str, systems: str = SYSTEMS) -> Project:
    project = Project(pytester, mode)
    (project.path / "test_eval.py").unlink()
    project.write("data/questions.jsonl", jsonl(QUESTIONS))
    project.write("conftest.py", systems)
    project.write("test_live.py", EVAL)
    project.write("thresholds.toml", GATES)
    return project


def _calls(project: Project) -> list[str]:
    log = project.path / "calls.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return sorted(lines)


def _entry(document: dict[str, Any], label: str) -> dict[str, Any]:
    (entry,) = [e for e in document["evals"] if e["label"] == label]
    return entry


ALL_CALLS = sorted(f"{s}\t{q['question']}" for s in ("base", "cand") for q in QUESTIONS)


@pytest.mark.parametrize("mode", [IN_PROCESS, "n2"])
def test_each_output_is_called_once_then_served_from_the_cache(
    pytester: pytest.Pytester, mode: str
) -> None:
    project = _project(pytester, mode)
    result, first = project.run_json()
    result.assert_outcomes(passed=12 + 2)  # 2 tests x 3 rows x 2 systems, 2 gates on cand
    # Two tests per row, possibly on two workers: still one call per (system, question).
    assert _calls(project) == ALL_CALLS
    base, cand = _entry(first, "test_live.py[base]"), _entry(first, "test_live.py[cand]")
    assert base["metrics"]["f1"]["mean"] == pytest.approx(2 / 3)
    assert cand["metrics"]["f1"]["mean"] == 1.0
    assert cand["metrics"]["vs_baseline"]["tokens_mean_ratio"] == pytest.approx(1.2)
    assert [r["live"]["cached"] for r in cand["rows"]] == [False] * 3
    assert [r["answer"] for r in base["rows"]] == ["4", "Lyon", "blue"]

    result, second = project.run_json()
    result.assert_outcomes(passed=14)
    assert _calls(project) == []  # nothing changed: nothing called
    cand_again = _entry(second, "test_live.py[cand]")
    assert [r["live"]["cached"] for r in cand_again["rows"]] == [True] * 3
    # A cached output keeps what it was measured with.
    assert cand_again["metrics"] == cand["metrics"]
    assert _entry(second, "test_live.py[base]")["metrics"]["tokens"] == base["metrics"]["tokens"]
    result.stdout.fnmatch_lines(
        ["*live system 'cand' of test_live.py[[]cand[]]*3 output(s), 0 called now, 3 from*"]
    )


def test_refresh_calls_every_system_again_once_per_run(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "n2")
    project.run().assert_outcomes(passed=14)
    assert _calls(project) == ALL_CALLS
    project.run("--ragmetrics-refresh").assert_outcomes(passed=14)
    assert _calls(project) == ALL_CALLS  # once each, though two tests read every output


def test_a_new_version_is_a_new_fingerprint(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS)
    project.run().assert_outcomes(passed=14)
    _calls(project)
    project.write("conftest.py", SYSTEMS.replace('VERSION = "1"', 'VERSION = "2"'))
    project.run().assert_outcomes(passed=14)
    assert _calls(project) == ALL_CALLS


def test_saved_outputs_are_a_dataset_that_scores_the_same(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "n2")
    result, live = project.run_json("--ragmetrics-save-outputs", "out/outputs.jsonl")
    result.stdout.fnmatch_lines(["*--ragmetrics-save-outputs: 6 output(s) written to*"])
    assert _calls(project) == ALL_CALLS
    saved = [
        json.loads(line)
        for line in (project.path / "out/outputs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(r["system"], r["id"], r["answer"]) for r in saved] == [
        ("base", "q1", "4"),
        ("base", "q2", "Lyon"),
        ("base", "q3", "blue"),
        ("cand", "q1", "4"),
        ("cand", "q2", "Paris"),
        ("cand", "q3", "blue"),
    ]
    assert (saved[3]["latency_ms"], saved[3]["tokens"]) == (7, 12)
    assert (saved[0]["question"], saved[0]["gold"]) == ("What is 2 + 2?", "4")
    # The saved file is the next run's recorded dataset: same numbers, no call.
    project.write(
        "test_live.py",
        EVAL.replace(
            'dataset="data/questions.jsonl", systems=["base", "cand"]',
            'dataset="out/outputs.jsonl"',
        ),
    )
    result, recorded = project.run_json()
    result.assert_outcomes(passed=14)
    assert _calls(project) == []
    for label in ("test_live.py[base]", "test_live.py[cand]"):
        assert _entry(recorded, label)["metrics"]["f1"] == _entry(live, label)["metrics"]["f1"]
        assert (
            _entry(recorded, label)["metrics"]["tokens"] == _entry(live, label)["metrics"]["tokens"]
        )


# A ValueError on one question is that question's failure: the system is still called for
# the others (a connection-level error would make it unreachable for the rest of the run).
FAILING = SYSTEMS.replace(
    'def base(question):\n    log("base", question)\n',
    'def base(question):\n    log("base", question)\n'
    '    if question.startswith("Capital"):\n'
    '        raise ValueError("no passage for this question")\n'
    '    if question.startswith("Colour"):\n'
    '        return {"answer": "blue", "tokens": 10, "sources": []}\n',
)


def test_a_failing_system_errors_its_rows_and_caches_nothing(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS, FAILING)
    project.write("thresholds.toml", '[gates]\n"errors.sum" = "== 0"\n')
    result, document = project.run_json()
    # q2 raised and q3 returned an unknown field: 2 rows x 2 tests error; the other 8 row
    # tests pass, and so does cand's errors gate, while base's fails.
    result.assert_outcomes(passed=9, errors=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*system 'base' raised ValueError: no passage for this question",
            "*system 'base' returned unknown field(s) sources*",
        ]
    )
    base = _entry(document, "test_live.py[base]")
    assert base["metrics"]["errors"]["sum"] == 2
    assert base["metrics"]["f1"]["count"] == 1  # q1 alone was scored
    assert _entry(document, "test_live.py[cand]")["metrics"]["f1"]["count"] == 3
    assert _calls(project).count("base\tCapital of France?") == 2  # once per test: no cache
    project.run()
    assert _calls(project) == ["base\tCapital of France?"] * 2 + ["base\tColour of the sky?"] * 2


def test_an_output_without_a_needed_field_errors_the_row(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS)
    project.write(
        "test_live.py",
        EVAL.replace("def test_correct(row, f1):", "def test_correct(row, overlap):"),
    )
    project.write("thresholds.toml", "")
    result = project.run()
    result.assert_outcomes(passed=6, errors=6)
    result.stdout.fnmatch_lines(["*system 'base' returned no contexts required by overlap*"])


def test_live_determinism_calls_each_system_twice(pytester: pytest.Pytester) -> None:
    flaky = SYSTEMS.replace(
        'def cand(question):\n    log("cand", question)\n',
        'def cand(question):\n    log("cand", question)\n'
        "    calls = open('calls.log').read().count('cand\\t' + question)\n"
        "    if calls == 2:\n"
        '        return {"answer": "something else", "tokens": 12}\n',
    )
    project = _project(pytester, IN_PROCESS, flaky)
    project.write(
        "test_live.py",
        EVAL.split("def test_correct")[0]
        + "def test_det(row, determinism):\n    determinism(row)\n",
    )
    project.write("thresholds.toml", "")
    result, document = project.run_json()
    result.assert_outcomes(passed=6)
    assert len(_calls(project)) == 12  # every question twice per system
    assert _entry(document, "test_live.py[base]")["metrics"]["determinism"]["rate"] == 1.0
    assert _entry(document, "test_live.py[cand]")["metrics"]["determinism"]["rate"] == 0.0


def test_a_question_set_must_leave_outputs_to_the_system(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS)
    project.write("data/questions.jsonl", jsonl([{**QUESTIONS[0], "answer": "4"}, QUESTIONS[1]]))
    result = project.run()
    result.stdout.fnmatch_lines(["*field 'answer': is produced by the live system*"])
    assert _calls(project) == sorted(f"{s}\tCapital of France?" for s in ("base", "cand"))


@pytest.mark.parametrize(
    ("conftest", "eval_text", "message"),
    [
        (
            "",
            EVAL,
            "*define a `ragmetrics_system` fixture that returns them*",
        ),
        (
            SYSTEMS,
            EVAL.replace('systems=["base", "cand"]', 'systems=["base", "other"]'),
            "*the marker names system 'other', but ragmetrics_system returned 'base', 'cand'*",
        ),
        (
            SYSTEMS,
            EVAL.replace('systems=["base", "cand"]', 'systems="base, cand"'),
            "*compare_to='base' is not a system*",
        ),
        (
            SYSTEMS,
            EVAL.replace('systems=["base", "cand"]', 'systems=["base", "base"]'),
            "*systems names a system twice*",
        ),
        (
            SYSTEMS,
            EVAL + "\n\ndef test_all(rows):\n    pass\n",
            "*a dataset-level test (one that takes `rows`) runs over recorded outputs*",
        ),
    ],
    ids=["no-fixture", "unknown-system", "not-a-list", "twice", "rows-test"],
)
def test_usage_mistakes_are_named(
    pytester: pytest.Pytester, conftest: str, eval_text: str, message: str
) -> None:
    project = _project(pytester, IN_PROCESS, conftest)
    project.write("test_live.py", eval_text)
    project.run().stdout.fnmatch_lines([message])


def test_a_system_fixture_the_eval_cannot_see_is_reported_once_per_test(
    pytester: pytest.Pytester,
) -> None:
    """``ragmetrics_system`` defined in another test module is out of the eval's reach:
    the eval file fails to collect once, not every row of every system of each of its
    test functions (12 errors) with the same message."""
    project = _project(pytester, IN_PROCESS, "")
    project.write("test_other.py", SYSTEMS + "\n\ndef test_other():\n    pass\n")
    result = project.run()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*test_live.py::test_correct: this eval names live systems (ragmetrics marker "
            "systems=...), but test_live.py sees no `ragmetrics_system` fixture of the "
            "project's: define a `ragmetrics_system` fixture that returns them*"
        ]
    )
    assert _calls(project) == []


def test_a_dataset_that_names_systems_is_not_a_question_set(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS)
    project.write("data/questions.jsonl", jsonl([{**q, "system": "x"} for q in QUESTIONS]))
    project.run().stdout.fnmatch_lines(["*a live eval's dataset holds questions*'x'*"])


def test_the_fingerprint_hashes_name_version_and_config() -> None:
    def answer(question: str) -> dict[str, Any]:
        return {"answer": question}

    one = LiveSystem("rag", answer, "1", {"k": 4})
    assert one.fingerprint == LiveSystem("rag", answer, "1", {"k": 4}).fingerprint
    others = [
        LiveSystem("rag2", answer, "1", {"k": 4}),
        LiveSystem("rag", answer, "2", {"k": 4}),
        LiveSystem("rag", answer, "1", {"k": 5}),
    ]
    assert len({one.fingerprint, *(o.fingerprint for o in others)}) == 4
    with pytest.raises(TypeError, match="JSON-able"):
        LiveSystem("rag", answer, "1", {"path": Path(".")})
    with pytest.raises(ValueError, match="non-empty"):
        LiveSystem(" ", answer)


def test_an_unwritable_save_outputs_path_stops_the_run_at_once(pytester: pytest.Pytester) -> None:
    project = _project(pytester, IN_PROCESS)
    project.write("blocker", "a file where a directory is needed\n")
    result = project.run("--ragmetrics-save-outputs", "blocker/outputs.jsonl")
    result.stderr.fnmatch_lines(
        ["*--ragmetrics-save-outputs*blocker/outputs.jsonl: cannot create*"]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _calls(project) == []


@pytest.mark.parametrize("blocked", ["a file", "read-only"])
def test_a_cache_directory_that_cannot_be_written_stops_a_live_run_naming_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, blocked: str
) -> None:
    """The live outputs are kept in the cache directory: a run that embeds nothing still
    checks it before calling any system, and stops with the reason, not one traceback per
    row."""
    project = _project(pytester, IN_PROCESS)
    target = project.path / "cache"
    block_directory(target, blocked, monkeypatch)
    result = project.run("--ragmetrics-cache-dir", "cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    why = "is a file, not a directory" if blocked == "a file" else "cannot write in it"
    result.stderr.fnmatch_lines(
        [f"ERROR: ragmetrics cache directory {target}: {why}*--ragmetrics-no-cache*"]
    )
    assert _calls(project) == []
    if blocked == "a file":
        assert target.read_text(encoding="utf-8") == "not a directory"
    else:
        assert sorted(target.iterdir()) == []


def test_ragmetrics_embed_names_the_run_model_for_fingerprints(pytester: pytest.Pytester) -> None:
    from pytest_ragmetrics.embeddings.model import PACKAGED_MODEL, model_label

    systems = SYSTEMS.replace(
        "def ragmetrics_system():",
        "def ragmetrics_system(ragmetrics_embed):\n"
        "    open('model.txt', 'w').write(ragmetrics_embed.model)",
    )
    project = _project(pytester, IN_PROCESS, systems)
    project.run().assert_outcomes(passed=14)
    # A label only: naming the model loads nothing.
    assert (project.path / "model.txt").read_text() == model_label(PACKAGED_MODEL)


# --- an unreachable system is given up on once per process ------------------------------


REFUSED = "ConnectionRefusedError: [Errno 111] Connection refused"


def _answer(question: str) -> dict[str, Any]:
    return {"answer": f"an answer to {question}"}


def _refusing(calls: list[str]) -> Any:
    def call(question: str) -> dict[str, Any]:
        calls.append(question)
        raise ConnectionRefusedError(111, "Connection refused")

    return call


def test_an_unreachable_system_is_called_once_then_errors_at_once(tmp_path: Path) -> None:
    calls: list[str] = []
    cache = OutputCache(tmp_path, "run")
    down = LiveSystem("topk", _refusing(calls), "1", {"k": 4})
    with pytest.raises(LiveSystemUnreachable) as first:
        cache.output(down, "q1")
    assert str(first.value) == (
        f"system 'topk' raised {REFUSED}; it cannot be reached, so it is not called again "
        "in this run"
    )
    for question in ("q2", "q3", "q1"):
        with pytest.raises(LiveSystemUnreachable) as later:
            cache.output(down, question)
        assert str(later.value) == (
            f"not called: system 'topk' could not be reached earlier in this run: {REFUSED}"
        )
    with pytest.raises(LiveSystemUnreachable):
        cache.output(down, "q2", repeat=1)  # determinism's second call, too
    assert calls == ["q1"]
    assert list(tmp_path.rglob("*.json")) == []  # a failure is never cached
    # Another system, or another fingerprint of the same one, is still called.
    assert cache.output(LiveSystem("mmr", _answer), "q1").fields["answer"] == "an answer to q1"
    with pytest.raises(LiveSystemUnreachable, match=r"^system 'topk' raised"):
        cache.output(LiveSystem("topk", _refusing(calls), "2", {"k": 4}), "q1")
    assert calls == ["q1", "q1"]


def test_an_unreachable_system_still_has_its_cached_outputs_served(tmp_path: Path) -> None:
    OutputCache(tmp_path, "earlier run").output(LiveSystem("topk", _answer), "q1")
    calls: list[str] = []
    cache = OutputCache(tmp_path, "this run")
    down = LiveSystem("topk", _refusing(calls))  # the call is no part of the fingerprint
    with pytest.raises(LiveSystemUnreachable):
        cache.output(down, "q2")
    served = cache.output(down, "q1")
    assert (served.cached, served.fields["answer"]) == (True, "an answer to q1")
    assert calls == ["q2"]


def test_a_failure_on_one_question_leaves_the_system_reachable(tmp_path: Path) -> None:
    def picky(question: str) -> dict[str, Any]:
        if question == "q1":
            raise ValueError("no passage for this question")
        return _answer(question)

    cache = OutputCache(tmp_path, "run")
    system = LiveSystem("topk", picky)
    with pytest.raises(LiveSystemError) as raised:
        cache.output(system, "q1")
    assert not isinstance(raised.value, LiveSystemUnreachable)
    assert str(raised.value) == "system 'topk' raised ValueError: no passage for this question"
    assert cache.output(system, "q2").fields["answer"] == "an answer to q2"


def _raised_from(error: BaseException, cause: BaseException) -> BaseException:
    """``error`` as ``raise error from cause`` leaves it (requests and httpx wrap so)."""
    try:
        raise error from cause
    except BaseException as raised:
        return raised


def _raised_while_handling(
    error: BaseException, context: BaseException, suppress: bool = False
) -> BaseException:
    """``error`` raised in an ``except`` block that handles ``context`` (``from None``
    when ``suppress``)."""
    try:
        try:
            raise context
        except BaseException:
            if suppress:
                raise error from None
            raise error  # noqa: B904 - the implicit context is the point
    except BaseException as raised:
        return raised


class WrappedConnectError(Exception):
    """A client library's own connection error, not a subclass of the builtin ones."""


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError(104, "Connection reset by peer"),
        http.client.RemoteDisconnected("Remote end closed connection without response"),
        TimeoutError("timed out"),
        socket.gaierror(-2, "Name or service not known"),
        OSError(errno.ENETUNREACH, "Network is unreachable"),
        OSError(errno.EHOSTUNREACH, "No route to host"),
        urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
        _raised_from(WrappedConnectError("connect failed"), ConnectionRefusedError(111, "x")),
        _raised_while_handling(RuntimeError("backend down"), TimeoutError("timed out")),
    ],
    ids=repr,
)
def test_connection_level_errors_make_a_system_unreachable(error: BaseException) -> None:
    assert unreachable(error)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("no passage for this question"),
        KeyError("answer"),
        RuntimeError("the model refused"),
        FileNotFoundError(errno.ENOENT, "No such file or directory", "index.faiss"),
        OSError(errno.EACCES, "Permission denied"),
        urllib.error.HTTPError("http://127.0.0.1/", 500, "Internal Server Error", Message(), None),
        http.client.BadStatusLine("garbage"),
        _raised_from(ValueError("bad question"), KeyError("q")),
        # `raise ... from None` while handling a connection error: the system's code says
        # the connection error is not the story, as Python's traceback then does.
        _raised_while_handling(ValueError("bad question"), ConnectionResetError(), True),
    ],
    ids=repr,
)
def test_other_errors_fail_one_question_only(error: BaseException) -> None:
    assert not unreachable(error)


# --- how an unreachable system's rows are reported ----------------------------------------

# base calls a port nothing listens on (urllib, as a system over HTTP would); cand answers.
DOWN = SYSTEMS.replace("import os\n", "import os\nimport urllib.request\n", 1).replace(
    'def base(question):\n    log("base", question)\n',
    "def base(question):\n"
    '    log("base", os.environ.get("PYTEST_XDIST_WORKER", "main"))\n'
    '    urllib.request.urlopen("http://127.0.0.1:PORT/answer", timeout=5)\n',
)
REFUSED_URL = "URLError: <urlopen error [Errno 111] Connection refused>"
FIRST = f"system 'base' raised {REFUSED_URL}; it cannot be reached, so it is not called again"
LATER = f"not called: system 'base' could not be reached earlier in this run: {REFUSED_URL}"
# A traceback's mark: a frame's file:line (live.py:339, urllib/request.py:1348, ...).
FRAME = re.compile(r"Traceback|\w\.py:\d+")


def _down_project(pytester: pytest.Pytester, mode: str) -> Project:
    project = _project(pytester, mode, DOWN.replace("PORT", str(unused_port())))
    project.write("thresholds.toml", "")
    # Not test_live.py: a run in this process would find this module under that name.
    (project.path / "test_live.py").rename(project.path / "test_down.py")
    return project


def test_an_unreachable_system_errors_each_row_in_one_line(pytester: pytest.Pytester) -> None:
    project = _down_project(pytester, IN_PROCESS)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--ragmetrics-json", "report.json", "--junitxml", "junit.xml"
    )
    result.assert_outcomes(passed=6, errors=6)  # base's 3 rows x 2 tests
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # Called once, by the first row; the other five rows errored without a call.
    calls = _calls(project)
    assert len([line for line in calls if line.startswith("base\t")]) == 1
    assert [line for line in calls if line.startswith("cand\t")] == sorted(
        f"cand\t{q['question']}" for q in QUESTIONS
    )
    # Each error: pytest's header line and one line naming the row, system and error.
    errors = terminal_section(result, "ERRORS")
    assert len(errors) == 2 * 6
    messages = sorted(errors[1::2])
    assert all(line.startswith("data/questions.jsonl:") for line in messages)
    assert sorted(line.split(": ", 1)[1] for line in messages) == sorted(
        [f"{FIRST} in this run"] + [LATER] * 5
    )
    summary = terminal_section(result, "short test summary info")
    assert len(summary) == 6
    assert all(line.startswith("ERROR test_down.py::test_") for line in summary)
    assert FRAME.search(result.stdout.str()) is None
    # The reports say the same: the JSON rows' errors (each distinct message of a row once)
    # and JUnit XML's <error> elements.
    document = json.loads((project.path / "report.json").read_text(encoding="utf-8"))
    base = _entry(document, "test_down.py[base]")
    assert base["metrics"]["errors"]["sum"] == 3
    assert sorted(error for row in base["rows"] for error in row["errors"]) == sorted({*messages})
    junit = (project.path / "junit.xml").read_text(encoding="utf-8")
    reported = [e.get("message") for e in ElementTree.fromstring(junit).iter("error")]
    assert sorted(reported) == [f'failed on setup with "{line}"' for line in messages]
    assert FRAME.search(junit) is None


@pytest.mark.parametrize("option", ["--tb=long", "-vv"])
def test_the_full_traceback_is_shown_on_request(pytester: pytest.Pytester, option: str) -> None:
    _down_project(pytester, IN_PROCESS)
    result = pytester.runpytest("-p", "no:cacheprovider", option)
    result.assert_outcomes(passed=6, errors=6)
    output = result.stdout.str()
    # The first row's call finds the system down; later rows are refused by the cache.
    assert re.search(r"pytest_ragmetrics/live/system\.py:\d+: LiveSystemUnreachable", output)
    assert re.search(r"pytest_ragmetrics/live/cache\.py:\d+: LiveSystemUnreachable", output)
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in output


def test_each_xdist_worker_finds_out_once(pytester: pytest.Pytester) -> None:
    project = _down_project(pytester, "n2")
    questions = [{"id": f"q{n}", "question": f"Question {n}?", "gold": "x"} for n in range(8)]
    project.write("data/questions.jsonl", jsonl(questions))
    project.write(
        "test_down.py",
        "import pytest\n\n"
        'pytestmark = pytest.mark.ragmetrics(dataset="data/questions.jsonl", systems=["base"])\n'
        "\n\ndef test_correct(row, f1):\n    f1(row)\n",
    )
    result = project.run()
    result.assert_outcomes(errors=8)
    workers = [line.split("\t")[1] for line in _calls(project)]
    # At most one call per worker: every worker that ran a row called once, then gave up.
    assert len(workers) == len(set(workers)) <= 2
    assert set(workers) <= {"gw0", "gw1"}
    errors = terminal_section(result, "ERRORS")
    assert len(errors) == 3 * 8  # xdist adds a "[gw0] linux -- Python ..." line to each
    messages = errors[2::3]
    assert all(line.startswith("data/questions.jsonl:") for line in messages)
    assert sum(FIRST in line for line in messages) == len(workers)
    assert sum(LATER in line for line in messages) == 8 - len(workers)
