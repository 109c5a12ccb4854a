"""Two judges compared (docs/judge.md#comparing-two-judges): ``--ragmetrics-judge-compare``
judges every judged row with ``[judge]`` and with the judge it replaces,
``[judge.previous]``, both cached, and reports the shift of the metric's mean with its
interval and the rows whose value changed.

The scripted server answers by model: the new judge ("judge-new") and the previous one
("judge-old") agree on six of eight rows and differ on q2 (old 1, new 0.5) and q5 (old 0,
new 1). By hand: old mean 4/8 = 0.5 (q0, q1, q2, q3 are 1), new mean (3 + 0.5 + 1) / 8 =
0.5625; shift +0.0625; two rows changed.
"""

from __future__ import annotations

import json
import threading

import pytest
from helpers.project import IN_PROCESS, Project, jsonl

from chat_server import ChatServer, Raw, Received, completion

OLD = {f"q{i}": 1.0 if i < 4 else 0.0 for i in range(8)}
NEW = {**OLD, "q2": 0.5, "q5": 1.0}
DATA = [
    {
        "id": qid,
        "question": f"Question {qid}?",
        "answer": f"Answer {qid} [CIT:d1].",
        "contexts": [{"doc_id": "d1", "text": "A passage."}],
    }
    for qid in OLD
]
EVAL = """
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_faithful(row, faithfulness_judge):
    faithfulness_judge(row)
"""
JUDGE = """[judge]
base_url = "{url}"
model = "judge-new"
timeout = 5

[judge.previous]
model = "judge-old"
"""


class TwoJudges:
    """A verdict by model and question."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.models: list[str] = []

    def __call__(self, received: Received) -> Raw:
        model = received.body["model"]
        prompt = received.body["messages"][-1]["content"]
        qid = next(q for q in OLD if f"Question {q}?" in prompt)
        with self.lock:
            self.models.append(model)
        score = (NEW if model == "judge-new" else OLD)[qid]
        return Raw(completion(json.dumps({"score": score, "reason": model}), None))


def _project(pytester: pytest.Pytester, url: str) -> Project:
    project = Project(pytester, IN_PROCESS)
    (project.path / "test_eval.py").unlink()
    project.write("rows.jsonl", jsonl(DATA))
    project.write("test_faithful.py", EVAL)
    project.write("thresholds.toml", JUDGE.format(url=url))
    return project


def test_both_judges_are_asked_once_and_compared(pytester: pytest.Pytester) -> None:
    judges = TwoJudges()
    with ChatServer(default=judges) as server:
        project = _project(pytester, server.url)
        result, document = project.run_json(
            "--ragmetrics-judge-compare", "--ragmetrics-md=out.md", "--ragmetrics-html=out.html"
        )
        asked = len(server.requests)
        _, second = project.run_json("--ragmetrics-judge-compare")
        asked_again = len(server.requests) - asked
    result.assert_outcomes(passed=8)
    assert sorted(judges.models) == ["judge-new"] * 8 + ["judge-old"] * 8
    assert asked_again == 0  # both judges' verdicts come from the cache
    (entry,) = document["evals"]
    metrics = entry["metrics"]["faithfulness_judge"]
    assert metrics["mean"] == 0.5625  # the new judge's values are the metric's
    assert metrics["judge_shift"] == pytest.approx(0.0625, abs=1e-15)
    assert metrics["judge_changed"] == 2 / 8
    compared = entry["dataset_level"]["details"]["judge_compare"]["faithfulness_judge"]
    assert (compared["previous_mean"], compared["mean"], compared["rows"]) == (0.5, 0.5625, 8)
    assert compared["changed"] == [
        {"row": "q2", "previous": 1.0, "current": 0.5},
        {"row": "q5", "previous": 0.0, "current": 1.0},
    ]
    low, high = compared["interval"]
    assert low < 0.0625 < high
    # Every verdict, both judges', is counted in the judge's accounting.
    assert entry["metrics"]["judge"]["verdicts"] == 16
    result.stdout.fnmatch_lines(
        [
            "*test_faithful.py: faithfulness_judge: the previous judge and this one",
            "*mean 0.5 -> 0.5625 over 8 rows: change +0.0625 [[]*",
            "*2 of 8 rows changed their value",
            "*q2: 1 -> 0.5",
            "*q5: 0 -> 1",
        ]
    )
    # The Markdown summary and the HTML page show the same notes.
    markdown = (project.path / "out.md").read_text(encoding="utf-8")
    assert "test_faithful.py: faithfulness_judge: the previous judge and this one" in markdown
    assert "      q5: 0 -> 1" in markdown
    page = (project.path / "out.html").read_text(encoding="utf-8")
    assert "<h4>faithfulness_judge: the previous judge and this one</h4>" in page
    assert "2 of 8 rows changed their value\n  q2: 1 -&gt; 0.5" in page
    assert second["evals"][0]["metrics"] == entry["metrics"] | {
        "judge": second["evals"][0]["metrics"]["judge"]
    }


def test_without_the_option_the_previous_judge_is_not_asked(pytester: pytest.Pytester) -> None:
    judges = TwoJudges()
    with ChatServer(default=judges) as server:
        project = _project(pytester, server.url)
        _, document = project.run_json()
    assert judges.models == ["judge-new"] * 8
    assert "judge_shift" not in document["evals"][0]["metrics"]["faithfulness_judge"]


def test_the_option_without_a_previous_judge_is_a_usage_error(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "http://127.0.0.1:9/v1")
    project.write("thresholds.toml", '[judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    result = project.run("--ragmetrics-judge-compare")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--ragmetrics-judge-compare compares [[]judge[]] with the judge it replaces: add a "
            "[[]judge.previous[]] table*"
        ]
    )


def test_the_same_judge_twice_is_a_usage_error(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "http://127.0.0.1:9/v1")
    same = (
        '[judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n[judge.previous]\ntimeout = 9\n'
    )
    project.write("thresholds.toml", same)
    result = project.run("--ragmetrics-judge-compare")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is the same judge as [[]judge[]]*nothing to compare*"])


def test_a_mistake_in_the_previous_judge_names_its_key(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "http://127.0.0.1:9/v1")
    bad = '[judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    bad += '[judge.previous]\nmodel = ""\n'
    project.write("thresholds.toml", bad)
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*[[]judge[]] previous.model: must not be empty*"])
