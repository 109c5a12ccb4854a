"""The GitHub Action (action.yml) kept honest without GitHub.

Its run steps are run here as a runner would run them: the step's ``run:`` script through
``bash --noprofile --norc -eo pipefail``, its ``env:`` with the ``${{ inputs.* }}`` and
``${{ steps.*.outputs.* }}`` expressions filled in (an input's default unless the test
gives it), ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY`` and the event in temporary files,
``GITHUB_ACTION_PATH`` this checkout. The ``uses:`` steps (setup-python, the cache, the
artifact, the sticky comment) are GitHub's and are not run; the install step is not run
either (it would pip install into the test's environment).

The pytest the Action starts is a subprocess of the step, as on GitHub: that is the point.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS_SCRIPT = ROOT / "action" / "steps.py"
EXAMPLE = ROOT / "docs" / "examples" / "ragmetrics.yml"
OPTION = re.compile(r"--ragmetrics-[a-z][a-z-]*[a-z]")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMMENT_LIMIT = 65_536  # GitHub's limit on a comment's characters


def step(step_id: str) -> dict[str, Any]:
    (found,) = (s for s in ACTION["runs"]["steps"] if s.get("id") == step_id)
    return dict(found)


@dataclass(frozen=True)
class StepRun:
    code: int
    stdout: str
    outputs: dict[str, str]


class Runner:
    """Runs the Action's run steps in ``workspace``, keeping their outputs for later steps."""

    def __init__(self, workspace: Path, github: Mapping[str, str] | None = None) -> None:
        self.workspace = workspace
        self.github = dict(github or {})
        self.outputs: dict[str, dict[str, str]] = {}
        self.summary = workspace / "summary.md"

    def value(self, expression: str, inputs: Mapping[str, str]) -> str:
        kind, _, rest = expression.partition(".")
        if kind == "inputs":
            return inputs.get(rest, ACTION["inputs"][rest].get("default", ""))
        if kind == "steps":
            step_id, outputs, name = rest.split(".")
            assert outputs == "outputs", expression
            return self.outputs.get(step_id, {}).get(name, "")
        raise AssertionError(f"the test cannot evaluate ${{{{ {expression} }}}}")

    def run(self, step_id: str, **inputs: str) -> StepRun:
        definition = step(step_id)
        assert definition["shell"] == "bash"
        output_file = self.workspace / f"output-{step_id}.txt"
        output_file.write_text("", encoding="utf-8")
        environment = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            **self.github,
        }
        for name, template in definition.get("env", {}).items():
            environment[name] = EXPRESSION.sub(
                lambda match: self.value(match.group(1), inputs), template
            )
        folder = self.workspace
        if "working-directory" in definition:
            folder = folder / self.value("inputs.working-directory", inputs)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", definition["run"]],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        lines = output_file.read_text(encoding="utf-8").splitlines()
        outputs = dict(line.split("=", 1) for line in lines)
        self.outputs[step_id] = outputs
        return StepRun(done.returncode, done.stdout + done.stderr, outputs)


# -- what the Action says, against the plugin and the example ----------------------------


def test_every_ragmetrics_option_the_action_passes_exists(pytester: pytest.Pytester) -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8") + STEPS_SCRIPT.read_text("utf-8")
    options = sorted(set(OPTION.findall(text)))
    assert "--ragmetrics-pr-comment" in options
    assert "--ragmetrics-cache-dir" in options
    config = pytester.parseconfig()
    for option in options:
        config.getoption(option.removeprefix("--").replace("-", "_"))  # ValueError if unknown


def test_run_steps_take_inputs_through_env_only() -> None:
    run_steps = [s for s in ACTION["runs"]["steps"] if "run" in s]
    assert len(run_steps) == 5
    for definition in run_steps:
        assert definition["shell"] == "bash", definition["name"]
        assert "${{" not in definition["run"], definition["name"]
        assert definition["run"].startswith('python "$GITHUB_ACTION_PATH/action/steps.py" ')


def test_third_party_actions_are_pinned_to_a_commit() -> None:
    used = [s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert len(used) == 5
    for reference in used:
        assert re.fullmatch(r"[\w-]+/[\w./-]+@[0-9a-f]{40}", reference), reference


def test_the_example_workflow_uses_this_action() -> None:
    workflow = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key on as true
    assert set(triggers) == {"pull_request", "push"}
    assert triggers["push"] == {"branches": ["main"]}
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    (job,) = workflow["jobs"].values()
    ours = [
        s
        for s in job["steps"]
        if str(s.get("uses", "")).split("@")[0].endswith("/pytest-ragmetrics")
    ]
    (uses_step,) = ours
    assert set(uses_step["with"]) <= set(ACTION["inputs"])


# -- the run steps, run --------------------------------------------------------------------


@pytest.fixture
def starter(pytester: pytest.Pytester) -> Path:
    """The plugin's starter project (5 rows, 3 gates, an accepted baseline) in the
    workspace: the Action's project, run from the workspace's root."""
    assert pytester.runpytest("--ragmetrics-init=.").ret == 0
    return pytester.path


def test_a_passing_run_records_code_0_reports_and_the_summary(
    pytester: pytest.Pytester, starter: Path
) -> None:
    runner = Runner(starter)
    prepared = runner.run("prepare")
    assert prepared.code == 0, prepared.stdout
    assert prepared.outputs["cache-dir"] == str(starter / ".ragmetrics_cache")
    done = runner.run("evals")
    assert done.code == 0, done.stdout
    assert done.outputs["exit-code"] == "0"
    reports = starter / "ragmetrics-reports"
    assert done.outputs["report-dir"] == str(reports)
    for name in ("html", "json", "comment"):
        assert Path(done.outputs[name]).parent == reports
        assert Path(done.outputs[name]).is_file(), name
    assert done.outputs["reports-exist"] == "true"
    assert "all gates hold" in runner.summary.read_text(encoding="utf-8")
    assert "8 passed" in done.stdout  # 5 rows and 3 gates
    finished = runner.run("finish")
    assert finished.code == 0
    assert "::error" not in finished.stdout


def test_a_failing_run_still_succeeds_as_a_step_and_fails_the_action_at_the_end(
    pytester: pytest.Pytester, starter: Path
) -> None:
    data = starter / "evals" / "data" / "answers.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    rows[1]["tokens"] = 2000  # tokens.mean (370.4 accepted) rises to 692.8 > 1.2 x 370.4
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    runner = Runner(starter)
    assert runner.run("prepare").code == 0
    done = runner.run("evals", **{"pytest-args": "-p no:cacheprovider"})
    assert done.code == 0, done.stdout
    assert done.outputs["exit-code"] == "1"
    assert "tokens.mean <= 1.2x baseline FAILS" in done.stdout
    assert Path(done.outputs["comment"]).is_file()
    finished = runner.run("finish")
    assert finished.code == 1
    assert "::error title=pytest-ragmetrics::pytest exited with code 1" in finished.stdout
    assert "pytest exited with code 1" in runner.summary.read_text(encoding="utf-8")


def test_pytest_arguments_are_split_as_a_shell_would_without_expansion(
    pytester: pytest.Pytester, starter: Path
) -> None:
    runner = Runner(starter)
    assert runner.run("prepare").code == 0
    done = runner.run("evals", **{"pytest-args": "-k 'not q9' --collect-only -q $HOME"})
    # $HOME reaches pytest as a file name, never expanded: pytest reports it missing.
    assert done.outputs["exit-code"] == "4"
    assert "file or directory not found: $HOME" in done.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("-k 'not q9", 'pytest-args: cannot split "-k \'not q9": No closing quotation'),
        ("", None),
    ],
)
def test_prepare_refuses_an_unsplittable_argument(
    tmp_path: Path, arguments: str, message: str | None
) -> None:
    runner = Runner(tmp_path)
    done = runner.run("prepare", **{"pytest-args": arguments})
    if message is None:
        assert done.code == 0
        assert len(done.outputs["run-digest"]) == 16
        return
    assert done.code == 1
    assert f"::error title=pytest-ragmetrics::{message}" in done.stdout
    assert done.outputs == {}


def test_the_run_digest_tells_apart_what_is_run(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    digests = {
        runner.run("prepare", **{"pytest-args": args}).outputs["run-digest"]
        for args in ("", "-n 2", "-n  2", "'-n' 2")
    }
    assert len(digests) == 2  # the same words, however quoted, are the same run


# -- the comment's decision ------------------------------------------------------------


def comment_runner(tmp_path: Path, event: str, head_repository: str | None) -> Runner:
    payload: dict[str, Any] = {}
    if event == "pull_request":
        head_repo = None if head_repository is None else {"full_name": head_repository}
        payload = {"pull_request": {"number": 7, "head": {"repo": head_repo}}}
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(payload), encoding="utf-8")
    runner = Runner(
        tmp_path,
        {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_file),
            "GITHUB_REPOSITORY": "acme/rag",
            "GITHUB_ACTOR": "someone",
        },
    )
    comment = tmp_path / "ragmetrics-comment.md"
    comment.write_text("## pytest-ragmetrics: all gates hold\n", encoding="utf-8")
    runner.outputs["evals"] = {"comment": str(comment)}
    return runner


URL = "https://github.com/acme/rag/actions/runs/1/artifacts/2"


def test_a_pull_request_from_this_repository_gets_the_comment_with_the_reports_link(
    tmp_path: Path,
) -> None:
    runner = comment_runner(tmp_path, "pull_request", "acme/rag")
    runner.outputs["upload"] = {"artifact-url": URL}
    done = runner.run("comment")
    assert done.code == 0, done.stdout
    assert done.outputs == {"post": "true"}
    text = (tmp_path / "ragmetrics-comment.md").read_text(encoding="utf-8")
    assert text == (
        f"## pytest-ragmetrics: all gates hold\n\n\n[Download the HTML and JSON reports]({URL})\n"
    )


@pytest.mark.parametrize(
    ("event", "head", "why"),
    [
        ("pull_request", "fork/rag", "the pull request comes from fork/rag, a fork"),
        ("pull_request", None, "the pull request comes from a deleted repository, a fork"),
        ("push", None, "the event is push, not pull_request"),
        ("pull_request_target", None, "the event is pull_request_target, not pull_request"),
    ],
)
def test_no_comment_where_the_token_cannot_write_with_a_notice(
    tmp_path: Path, event: str, head: str | None, why: str
) -> None:
    runner = comment_runner(tmp_path, event, head)
    done = runner.run("comment")
    assert done.code == 0, done.stdout
    assert done.outputs == {"post": "false"}
    assert f"::notice title=pytest-ragmetrics::{why}" in done.stdout


def test_dependabot_gets_no_comment(tmp_path: Path) -> None:
    runner = comment_runner(tmp_path, "pull_request", "acme/rag")
    runner.github["GITHUB_ACTOR"] = "dependabot[bot]"
    done = runner.run("comment")
    assert done.outputs == {"post": "false"}
    assert "read-only token" in done.stdout


def test_comment_false_posts_nothing_and_a_typo_is_refused(tmp_path: Path) -> None:
    runner = comment_runner(tmp_path, "pull_request", "acme/rag")
    assert runner.run("comment", comment="false").outputs == {"post": "false"}
    refused = runner.run("comment", comment="yes")
    assert refused.code == 1
    assert "comment: expected 'true' or 'false', got 'yes'" in refused.stdout


def test_no_comment_when_pytest_wrote_none(tmp_path: Path) -> None:
    runner = comment_runner(tmp_path, "pull_request", "acme/rag")
    (tmp_path / "ragmetrics-comment.md").unlink()
    done = runner.run("comment")
    assert done.outputs == {"post": "false"}
    assert "::warning title=pytest-ragmetrics::pytest wrote no comment" in done.stdout


def test_the_reports_link_is_left_out_of_a_comment_at_the_limit(tmp_path: Path) -> None:
    runner = comment_runner(tmp_path, "pull_request", "acme/rag")
    runner.outputs["upload"] = {"artifact-url": URL}
    comment = tmp_path / "ragmetrics-comment.md"
    full = "x" * (COMMENT_LIMIT - 10)
    comment.write_text(full, encoding="utf-8")
    done = runner.run("comment")
    assert done.outputs == {"post": "true"}
    assert comment.read_text(encoding="utf-8") == full
    assert "too long to add the reports' link" in done.stdout


def test_finish_links_the_reports_in_the_summary(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    runner.outputs["evals"] = {"exit-code": "0"}
    runner.outputs["upload"] = {"artifact-url": URL}
    assert runner.run("finish").code == 0
    assert runner.summary.read_text(encoding="utf-8") == (
        f"\n[pytest-ragmetrics reports (HTML, JSON)]({URL})\n"
    )


# -- the lint's own checks (.ci/lint_actions.py; actionlint itself runs in .ci/run) -------


def lint_module() -> Any:
    """.ci/lint_actions.py, a script, imported by its path (registered under its name:
    its dataclass looks its module up)."""
    import importlib.util

    name = "lint_actions"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / ".ci" / "lint_actions.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_lint_finds_nothing_in_our_action_and_example() -> None:
    lint = lint_module()
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert lint.action_findings("action.yml", text, ACTION) == []
    example = EXAMPLE.read_text(encoding="utf-8")
    assert lint.workflow_findings("x.yml", example, set(ACTION["inputs"])) == []


def test_the_lint_finds_what_actionlint_cannot_see() -> None:
    lint = lint_module()
    action = """\
inputs:
  evals: {description: paths, default: evals/}
runs:
  using: composite
  steps:
    - id: first
      run: echo "${{ inputs.evals }}"
    - shell: bash
      env: {ARGS: "${{ inputs.pytest-arg }}", CODE: "${{ steps.evalz.outputs.code }}"}
      run: echo "$ARGS"
"""
    found = [str(f) for f in lint.action_findings("a.yml", action, yaml.safe_load(action))]
    assert found == [
        "a.yml:6: a run step of a composite action needs shell:",
        "a.yml:6: run: holds ${{ }}; pass the value through env:",
        "a.yml:9: inputs.pytest-arg: no such input",
        "a.yml:9: steps.evalz: no step has this id",
    ]
    workflow = """\
on: push
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v9
        with: {anything: 1}
      - uses: someone/pytest-ragmetrics@v1
        with: {evals: evals/, pytest-arg: -x}
"""
    found = [str(f) for f in lint.workflow_findings("w.yml", workflow, {"evals"})]
    assert found == ["w.yml:8: input 'pytest-arg' is not an input of action.yml"]


def test_docs_list_every_input_and_output() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w-]+)` \|", text, flags=re.MULTILINE)
    assert rows == list(ACTION["inputs"])
    for output in ACTION["outputs"]:
        assert f"`{output}`" in text, output


def test_install_puts_torch_first_from_its_index_then_the_plugin_then_the_requirements(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The install step's pip commands, recorded instead of run (it would install into
    the test's environment)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("action_steps", STEPS_SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    steps = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(steps)
    commands: list[list[str]] = []

    def record(command: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(steps.subprocess, "run", record)
    inputs = {name: str(given.get("default", "")) for name, given in ACTION["inputs"].items()}
    inputs["requirements"] = "-r 'requirements evals.txt' pytest-xdist $HOME"
    for name, template in step_by_name("Install")["env"].items():
        (expression,) = EXPRESSION.findall(template)
        monkeypatch.setenv(name, inputs[expression.removeprefix("inputs.")])
    monkeypatch.setenv("GITHUB_ACTION_PATH", "/home/runner/work/_actions/o/pytest-ragmetrics/v1")
    assert steps.main(["install"]) == 0
    pip = [sys.executable, "-m", "pip", "install"]
    assert commands == [
        [*pip, "torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"],
        [*pip, "/home/runner/work/_actions/o/pytest-ragmetrics/v1"],
        [*pip, "-r", "requirements evals.txt", "pytest-xdist", "$HOME"],
    ]
    assert capsys.readouterr().out.count("::group::") == 3


def step_by_name(start: str) -> dict[str, Any]:
    (found,) = (s for s in ACTION["runs"]["steps"] if s.get("name", "").startswith(start))
    return dict(found)
