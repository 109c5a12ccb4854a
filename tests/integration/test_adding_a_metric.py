"""docs/adding-a-metric.md followed literally, in a copy of the repository.

The repository's tracked files (``git ls-files``) are copied to a scratch folder; the
guide's code blocks are read from the page itself, each applied as the HTML comment before
it says (``<!-- guide: <path> <action> ["<anchor line>"] -->``): ``before`` inserts the
block above the first line equal to the anchor, ``in`` makes it the last item of the
tuple the anchor line opens (indented, with its trailing comma), ``replace`` replaces the
line equal to the anchor, ``create`` writes a new file, and ``try`` writes the file into
a trial project outside the copy. Nothing else is edited. Then, in subprocesses importing
the copy's package: the guide's own test file, the tests generated per declaration for
the new metric (and the families table's), and the trial eval, whose JSON report must
hold the mean the guide states (8/3 on its three rows) and whose failing gate prints the
line the guide shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-a-metric.md"
MARKED = re.compile(
    r"<!-- guide: (?P<path>\S+) (?P<action>before|in|replace|create|try)"
    r'(?: "(?P<anchor>[^\n]*)")? -->\n'
    r"(?P<fence>`{3,})\w*\n(?P<body>.*?)\n(?P=fence)\n",
    re.DOTALL,
)
TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    path: str
    action: str
    anchor: str | None
    body: str


def guide_blocks(text: str) -> list[Block]:
    """The guide's marked code blocks, in page order."""
    return [
        Block(found["path"], found["action"], found["anchor"], found["body"] + "\n")
        for found in MARKED.finditer(text)
    ]


def _index(lines: list[str], anchor: str | None, block: Block) -> int:
    if anchor is None or anchor not in lines:
        raise AssertionError(f"guide block for {block.path}: no line {anchor!r} to apply it at")
    return lines.index(anchor)


def apply(block: Block, repo: Path, trial: Path) -> None:
    """Apply one block as its comment says."""
    if block.action in ("create", "try"):
        target = (trial if block.action == "try" else repo) / block.path
        assert not target.exists(), f"guide creates {block.path}, which exists"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body, encoding="utf-8")
        return
    target = repo / block.path
    lines = target.read_text(encoding="utf-8").splitlines()
    at = _index(lines, block.anchor, block)
    body = block.body.splitlines()
    if block.action == "before":
        lines[at:at] = [*body, "", ""] if block.path.endswith(".py") else [*body, ""]
    elif block.action == "replace":
        lines[at : at + 1] = body
    else:  # "in": the last item of the tuple the anchor opens, indented, with its comma
        closing = lines.index(")", at)
        lines[closing:closing] = [f"    {line}" if line else line for line in body[:-1]]
        lines.insert(closing + len(body) - 1, f"    {body[-1]},")
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def copy_tracked(destination: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run(args: list[str], cwd: Path, repo: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _metric_mean(report: dict[str, Any], metric: str) -> float:
    """The eval's ``metric.mean`` in a --ragmetrics-json document."""
    (evaluation,) = report["evals"]
    return float(evaluation["metrics"][metric]["mean"])


def test_the_guide_s_blocks_are_read_from_the_page() -> None:
    blocks = guide_blocks(GUIDE.read_text(encoding="utf-8"))
    assert [(block.path, block.action) for block in blocks] == [
        ("pytest_ragmetrics/metrics/answer.py", "before"),
        ("pytest_ragmetrics/metrics/answer.py", "in"),
        ("docs/metrics.md", "before"),
        ("docs/adding-a-metric.md", "replace"),
        ("tests/unit/metrics/test_answer_length.py", "create"),
        ("data/rows.jsonl", "try"),
        ("test_answers.py", "try"),
        ("thresholds.toml", "try"),
    ]


def test_following_the_guide_gives_a_tested_gated_metric(tmp_path: Path) -> None:
    repo, trial = tmp_path / "repo", tmp_path / "trial"
    copy_tracked(repo)
    guide = GUIDE.read_text(encoding="utf-8")
    for block in guide_blocks(guide):
        apply(block, repo, trial)

    imported = run(
        ["-c", "import pytest_ragmetrics; print(pytest_ragmetrics.__file__)"], repo, repo
    )
    assert Path(imported.stdout.strip()).is_relative_to(repo), imported.stdout + imported.stderr

    # The guide's code is the project's style: ruff passes on what it wrote.
    written = ["pytest_ragmetrics/metrics/answer.py", "tests/unit/metrics/test_answer_length.py"]
    for ruff in (["check"], ["format", "--check"]):
        linted = run(["-m", "ruff", *ruff, *written], repo, repo)
        assert linted.returncode == 0, linted.stdout + linted.stderr

    tests = run(
        [
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "tests/unit/metrics/test_answer_length.py",
            "tests/unit/metrics/test_properties.py",
            "tests/unit/metrics/test_catalog.py",
            "tests/unit/metrics/test_ranges.py",
            "-k",
            "answer_length or families_table",
        ],
        repo,
        repo,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    # the guide's 7 cases; for the new declaration its properties, its --fixtures text,
    # its docs heading, its module, its gate name and its range; the families table
    assert re.search(r"\b15 passed\b", tests.stdout), tests.stdout

    report_path = trial / "report.json"
    evaluated = run(
        ["-m", "pytest", "-p", "no:cacheprovider", "-q", f"--ragmetrics-json={report_path}"],
        trial,
        repo,
    )
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    report = json.loads(report_path.read_text(encoding="utf-8"))
    # The guide: 4, 1 and 3 words, mean 8/3.
    assert "mean 8/3 = 2.667" in guide
    assert _metric_mean(report, "answer_length") == pytest.approx(8 / 3)

    failing = re.search(r"^answer_length\.mean <= 2 FAILS: .*$", guide, re.MULTILINE)
    assert failing is not None
    (trial / "thresholds.toml").write_text('[gates]\n"answer_length.mean" = "<= 2"\n')
    gated = run(["-m", "pytest", "-p", "no:cacheprovider", "-q"], trial, repo)
    assert gated.returncode != 0
    assert failing.group(0) in gated.stdout, gated.stdout
