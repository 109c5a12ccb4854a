"""Report files that cannot be written: a clear error naming the option, the path and the
cause, the other reports still written, and a run that fails (in process, pytester)."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from helpers.project import IN_PROCESS, Project
from test_live_eval import _project as live_project

import pytest_ragmetrics.live.outputs as outputs_module
import pytest_ragmetrics.plugin.finish as finish_module
import pytest_ragmetrics.reports.write as write_module
from pytest_ragmetrics.files import write_atomic

REPORTS = ("--ragmetrics-json", "r.json", "--ragmetrics-md", "r.md", "--ragmetrics-html", "r.html")


def _others_written(project: Project, *names: str) -> None:
    for name in names:
        assert (project.path / name).is_file(), name
    if "r.json" in names:
        document = json.loads((project.path / "r.json").read_text(encoding="utf-8"))
        assert document["evals"][0]["n"] == 4


def _no_traceback(result: pytest.RunResult) -> None:
    text = "\n".join(result.outlines + result.errlines)
    assert "Traceback" not in text
    assert "INTERNALERROR" not in text


def _failing_write(
    monkeypatch: pytest.MonkeyPatch, name: str, code: int
) -> Callable[[Path, str | Iterable[str]], None]:
    """Make writing the report file ``name`` fail with ``code``, as the disk would."""

    def write(path: Path, text: str | Iterable[str]) -> None:
        if path.name == name:
            raise OSError(code, os.strerror(code), str(path))
        write_atomic(path, text)

    monkeypatch.setattr(write_module, "write_atomic", write)
    return write


def test_a_report_path_that_is_a_directory_fails_the_run_and_the_others_are_written(
    project: Project,
) -> None:
    (project.path / "r.json").mkdir()
    result = project.run(*REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every test passed
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-json r.json: not written: is a directory; name a file*"]
    )
    _others_written(project, "r.md", "r.html")
    assert (project.path / "r.json").is_dir()  # left as it was


def test_a_full_disk_is_named_and_the_other_reports_are_written(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_write(monkeypatch, "r.html", errno.ENOSPC)
    result = project.run(*REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-html r.html: not written: no space left on device*"]
    )
    _others_written(project, "r.json", "r.md")


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_refused_write_is_named(
    project: Project, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    _failing_write(monkeypatch, "r.md", code)
    result = project.run(*REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cause = os.strerror(code).lower()
    result.stdout.fnmatch_lines([f"*--ragmetrics-md r.md: not written: {cause}*"])
    _others_written(project, "r.json", "r.html")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_directory_is_named(project: Project) -> None:
    folder = project.path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = project.run("--ragmetrics-json", "locked/r.json", *REPORTS[2:])
    finally:
        folder.chmod(0o755)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-json locked/r.json: not written: permission denied*"]
    )
    _others_written(project, "r.md", "r.html")


def test_a_failed_run_keeps_its_exit_code(project: Project) -> None:
    project.write("thresholds.toml", '[gates]\n"f1.mean" = ">= 0.9"\n')
    (project.path / "r.json").mkdir()
    result = project.run(*REPORTS)
    _no_traceback(result)
    result.assert_outcomes(passed=4, failed=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_terminal_does_not_read_green(project: Project) -> None:
    (project.path / "r.json").mkdir()
    result = project.run(*REPORTS)
    # the report that was not written counts as an error in pytest's own summary line
    result.assert_outcomes(passed=8, errors=1)
    result.stdout.fnmatch_lines(["ERROR *--ragmetrics-json r.json: not written*"])


def test_without_evals_a_report_not_written_still_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    (pytester.path / "r.json").mkdir()
    result = pytester.runpytest("-p", "no:cacheprovider", "--ragmetrics-json", "r.json")
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*--ragmetrics-json r.json: not written: is a directory*"])


def test_an_unwritable_github_step_summary_is_named(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project.path / "step-summary"
    summary.mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = project.run(*REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*$GITHUB_STEP_SUMMARY {summary}: not written: is a directory*"])
    _others_written(project, "r.json", "r.md", "r.html")


def test_a_full_disk_under_the_github_step_summary_is_named(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    real_open = open

    def full_disk_open(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(summary):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(write_module, "open", full_disk_open, raising=False)
    result = project.run(*REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [f"*$GITHUB_STEP_SUMMARY {summary}: not written: no space left on device*"]
    )
    _others_written(project, "r.json", "r.md", "r.html")


def test_a_baseline_that_cannot_be_written_is_named_and_fails_the_run(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(path: Path, text: str | Iterable[str]) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(finish_module, "write_atomic", full_disk)
    result = project.run("--ragmetrics-update-baseline", *REPORTS)
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*baseline of test_eval.py NOT written to __baselines__/test_eval.json: "
            "no space left on device*"
        ]
    )
    _others_written(project, "r.json", "r.md", "r.html")


def test_saved_outputs_that_cannot_be_written_are_named_and_fail_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = live_project(pytester, IN_PROCESS)

    def full_disk(path: Path, text: str | Iterable[str]) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(outputs_module, "write_atomic", full_disk)
    result = project.run("--ragmetrics-save-outputs", "out/o.jsonl", "--ragmetrics-md", "r.md")
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-save-outputs out/o.jsonl: not written: no space left on device*"]
    )
    assert (project.path / "r.md").is_file()


def test_saved_outputs_of_two_live_evals_are_refused_and_fail_the_run(
    pytester: pytest.Pytester,
) -> None:
    project = live_project(pytester, IN_PROCESS)
    live = (project.path / "test_live.py").read_text(encoding="utf-8")
    project.write("test_live_again.py", live)  # a second live eval
    result = project.run("--ragmetrics-save-outputs", "out/o.jsonl")
    _no_traceback(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--ragmetrics-save-outputs out/o.jsonl: not written: 2 live evals ran*"]
    )
    assert not (project.path / "out" / "o.jsonl").exists()
