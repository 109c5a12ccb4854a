"""The run steps of the pytest-ragmetrics GitHub Action (action.yml), one subcommand each.

They live in a Python file rather than in the action's ``run:`` scripts so that a test can
run them without GitHub (tests/integration/test_github_action.py) and so that no input is
ever pasted into a shell script: action.yml hands every input over as an environment
variable, and the words of ``evals``, ``pytest-args`` and ``requirements`` are split as a
shell splits them (``shlex``), without expanding variables, globs or commands.

Each subcommand reads ``RAGMETRICS_ACTION_*`` variables (a prefix of their own: the
plugin reads ``RAGMETRICS_CACHE_DIR``, and pytest inherits the step's environment) and
GitHub's own (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_EVENT_NAME``,
``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``, ``GITHUB_ACTION_PATH``), and writes the
step's outputs to ``$GITHUB_OUTPUT``. Only the standard library is used: ``install`` runs
before anything else is there. Bad input stops the step with an ``::error::`` line saying
what to fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# The reports the run writes, by option, into the report folder. The option names are the
# plugin's (tests/integration/test_github_action.py checks each against its parser).
HTML_NAME = "ragmetrics-report.html"
JSON_NAME = "ragmetrics-report.json"
COMMENT_NAME = "ragmetrics-comment.md"
REPORT_OPTIONS = (
    ("--ragmetrics-html", HTML_NAME),
    ("--ragmetrics-json", JSON_NAME),
    ("--ragmetrics-pr-comment", COMMENT_NAME),
)
CACHE_OPTION = "--ragmetrics-cache-dir"
# GitHub refuses a pull-request comment longer than this many characters.
COMMENT_LIMIT = 65_536
# pytest's exit codes, as a failed run's last line names them.
EXIT_MEANINGS = {
    1: "a test, a row or a gate failed",
    2: "the run was interrupted",
    3: "pytest hit an internal error",
    4: "pytest was given a usage error (an option, thresholds.toml)",
    5: "no tests were collected",
}
TITLE = "title=pytest-ragmetrics"


def workflow_command(kind: str, message: str) -> str:
    """A workflow command line (``::error title=pytest-ragmetrics::...``), its message
    escaped as GitHub reads it, so a message of several lines stays one annotation."""
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{kind} {TITLE}::{escaped}"


class StepError(Exception):
    """An input the step cannot work with; its message says what to fix."""


def env(name: str) -> str:
    """The variable ``name``; absent is an error, since action.yml always sets it."""
    value = os.environ.get(name)
    if value is None:
        raise StepError(f"{name} is not set; run this step from action.yml, which sets it")
    return value


def words(name: str) -> list[str]:
    """The variable ``name`` split as a shell splits words, nothing expanded."""
    try:
        return shlex.split(env(name))
    except ValueError as error:  # an unclosed quote
        raise StepError(f"{input_name(name)}: cannot split {env(name)!r}: {error}") from None


def input_name(variable: str) -> str:
    """The action input a ``RAGMETRICS_ACTION_*`` variable carries
    (``RAGMETRICS_ACTION_PYTEST_ARGS`` carries ``pytest-args``), as messages name it."""
    return variable.removeprefix("RAGMETRICS_ACTION_").lower().replace("_", "-")


def flag(name: str) -> bool:
    """A 'true' or 'false' input; anything else is refused rather than read as false."""
    value = env(name).strip()
    if value not in ("true", "false"):
        raise StepError(f"{input_name(name)}: expected 'true' or 'false', got {value!r}")
    return value == "true"


def set_outputs(**outputs: str) -> None:
    """Append ``name=value`` lines to ``$GITHUB_OUTPUT`` (names with ``_`` become ``-``)."""
    lines = []
    for name, value in outputs.items():
        if "\n" in value or "\r" in value:
            raise StepError(f"output {name}: {value!r} holds a line break")
        lines.append(f"{name.replace('_', '-')}={value}\n")
    with open(env("GITHUB_OUTPUT"), "a", encoding="utf-8") as stream:
        stream.writelines(lines)


def append_summary(text: str) -> None:
    """Append ``text`` to the job summary, when GitHub gives one."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text)


def pip(arguments: Sequence[str]) -> None:
    command = [sys.executable, "-m", "pip", "install", *arguments]
    print(f"::group::{shlex.join(command)}", flush=True)
    completed = subprocess.run(command, check=False)
    print("::endgroup::", flush=True)
    if completed.returncode != 0:
        raise StepError(f"{shlex.join(command)} exited with {completed.returncode}; see above")


# -- the subcommands ----------------------------------------------------------------------


def install() -> None:
    """torch first (pinned, from the CPU index by default), then the plugin, then the
    caller's requirements."""
    torch = env("RAGMETRICS_ACTION_TORCH").strip()
    if torch:
        index = env("RAGMETRICS_ACTION_TORCH_INDEX_URL").strip()
        pip([torch, *(["--index-url", index] if index else [])])
    package = env("RAGMETRICS_ACTION_PACKAGE").strip() or env("GITHUB_ACTION_PATH")
    pip([package])
    requirements = words("RAGMETRICS_ACTION_REQUIREMENTS")
    if requirements:
        pip(requirements)


def plugin_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-ragmetrics")
    except PackageNotFoundError:
        raise StepError(
            f"pytest-ragmetrics is not installed for {sys.executable}; leave the input "
            "install at 'true', or install it in an earlier step with that Python"
        ) from None


def prepare() -> None:
    """The cache's absolute folder and the parts of its key known before the run: the
    plugin's version and a digest of what is run (test paths and pytest arguments)."""
    cache = env("RAGMETRICS_ACTION_CACHE_DIR").strip()
    if not cache:
        raise StepError("cache-dir: empty; name the plugin's cache folder")
    run = {
        "evals": words("RAGMETRICS_ACTION_EVALS"),
        "pytest-args": words("RAGMETRICS_ACTION_PYTEST_ARGS"),
    }
    digest = hashlib.sha256(json.dumps(run, sort_keys=True).encode("utf-8")).hexdigest()
    set_outputs(
        plugin_version=plugin_version(),
        cache_dir=str(Path(cache).absolute()),
        run_digest=digest[:16],
    )


def pytest_command(report_dir: Path) -> list[str]:
    """``python -m pytest`` with the evals, the caller's arguments, the cache folder and
    the reports; the caller's arguments come first, so ours are the ones in force."""
    evals = words("RAGMETRICS_ACTION_EVALS")
    if not evals:
        raise StepError("evals: empty; name the test paths, e.g. evals/")
    command = [sys.executable, "-m", "pytest", *evals, *words("RAGMETRICS_ACTION_PYTEST_ARGS")]
    command.append(f"{CACHE_OPTION}={env('RAGMETRICS_ACTION_CACHE_DIR')}")
    command.extend(f"{option}={report_dir / name}" for option, name in REPORT_OPTIONS)
    return command


def run() -> None:
    """Run pytest and record its exit code as an output; the step itself succeeds, so the
    cache is saved, the reports uploaded and the comment posted after a failing run too
    (``finish`` fails the action with the code at the end)."""
    report_dir = Path(env("RAGMETRICS_ACTION_REPORT_DIR").strip() or ".").absolute()
    report_dir.mkdir(parents=True, exist_ok=True)
    command = pytest_command(report_dir)
    print(shlex.join(command), flush=True)
    code = subprocess.run(command, check=False).returncode
    reports = [report_dir / name for _, name in REPORT_OPTIONS]
    set_outputs(
        exit_code=str(code),
        report_dir=str(report_dir),
        html=str(reports[0]),
        json=str(reports[1]),
        comment=str(reports[2]),
        reports_exist=str(any(path.is_file() for path in reports)).lower(),
        cache_exists=str(Path(env("RAGMETRICS_ACTION_CACHE_DIR")).is_dir()).lower(),
    )


def comment_refusal() -> str | None:
    """Why no pull-request comment can be written in this run, or ``None`` when one can."""
    event = os.environ.get("GITHUB_EVENT_NAME", "")
    if event != "pull_request":
        return f"the event is {event or 'unknown'}, not pull_request: no pull request to comment on"
    payload = json.loads(Path(env("GITHUB_EVENT_PATH")).read_text(encoding="utf-8"))
    head = (payload.get("pull_request") or {}).get("head") or {}
    source = (head.get("repo") or {}).get("full_name")
    if source != env("GITHUB_REPOSITORY"):
        return (
            f"the pull request comes from {source or 'a deleted repository'}, a fork: its "
            "token may not write, so no comment is posted (the job summary and the "
            "artifact have the report; docs/ci.md#forks)"
        )
    if os.environ.get("GITHUB_ACTOR") == "dependabot[bot]":
        return "Dependabot's pull requests get a read-only token: no comment is posted"
    return None


def comment() -> None:
    """Decide whether the sticky comment is posted (output ``post``), and add the
    reports artifact's link to it when it fits under GitHub's limit."""
    if not flag("RAGMETRICS_ACTION_COMMENT"):
        print("comment: 'false': no pull-request comment")
        set_outputs(post="false")
        return
    refusal = comment_refusal()
    if refusal is not None:
        print(workflow_command("notice", refusal))
        set_outputs(post="false")
        return
    path = Path(env("RAGMETRICS_ACTION_COMMENT_FILE"))
    if not path.is_file():
        print(workflow_command("warning", f"pytest wrote no comment ({path}); see the run's log"))
        set_outputs(post="false")
        return
    url = env("RAGMETRICS_ACTION_ARTIFACT_URL").strip()
    if url:
        text = path.read_text(encoding="utf-8")
        link = f"\n\n[Download the HTML and JSON reports]({url})\n"
        if len(text) + len(link) <= COMMENT_LIMIT:
            path.write_text(text + link, encoding="utf-8")
        else:
            print(workflow_command("warning", "the comment is too long to add the reports' link"))
    set_outputs(post="true")


def finish() -> int:
    """Link the reports in the job summary and fail with pytest's exit code."""
    code_text = env("RAGMETRICS_ACTION_EXIT_CODE").strip()
    try:
        code = int(code_text)
    except ValueError:
        raise StepError(f"pytest's exit code is {code_text!r}, not a number") from None
    url = env("RAGMETRICS_ACTION_ARTIFACT_URL").strip()
    if url:
        append_summary(f"\n[pytest-ragmetrics reports (HTML, JSON)]({url})\n")
    if code != 0:
        meaning = EXIT_MEANINGS.get(code, "see the log")
        append_summary(f"\npytest exited with code {code}: {meaning}.\n")
        print(workflow_command("error", f"pytest exited with code {code}: {meaning}"))
    return code


STEPS: dict[str, Callable[[], int | None]] = {
    "install": install,
    "prepare": prepare,
    "run": run,
    "comment": comment,
    "finish": finish,
}


def main(arguments: Sequence[str]) -> int:
    if len(arguments) != 1 or arguments[0] not in STEPS:
        print(f"usage: steps.py {{{','.join(STEPS)}}}", file=sys.stderr)
        return 2
    try:
        return STEPS[arguments[0]]() or 0
    except StepError as error:
        print(workflow_command("error", str(error)), flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
