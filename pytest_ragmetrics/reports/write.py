"""Writing the report files (controller, at the end of the run): the JSON document, the
HTML page and the Markdown summary, each replaced atomically; the Markdown summary is also
appended to GitHub's step summary when ``$GITHUB_STEP_SUMMARY`` names one.

A report that cannot be written (its path a directory, a read-only or full disk) is
returned as ``Unwritten``, naming the option, the path and the cause, and the others are
written all the same; the run session fails the run for it (``plugin.session``).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.files import GITHUB_SUMMARY_ENV, write_atomic

if TYPE_CHECKING:
    from pytest_ragmetrics.reports.model import ReportModel


def json_chunks(document: Mapping[str, Any]) -> Iterator[str]:
    """The ``--ragmetrics-json`` file in the pieces the JSON encoder makes, the text
    ``json.dumps`` would join from the same pieces: the file is written piece by piece,
    since held whole (and the encoder's list of pieces with it) it costs several kilobytes
    a row at the end of a large run."""
    yield from json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False).iterencode(document)
    yield "\n"


def json_text(document: Mapping[str, Any]) -> str:
    """The ``--ragmetrics-json`` file: sorted keys, two-space indent, UTF-8 as it is."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Unwritten:
    """A file the user asked for that could not be written: what asked for it (the option,
    or the environment variable) and the message saying where and why."""

    what: str
    message: str

    @classmethod
    def report(cls, option: str, path: str, error: OSError) -> Unwritten:
        """``<option> <path>: not written: <cause>``."""
        return cls(option, f"{option} {path}: not written: {os_cause(error)}")


# What to do about the commonest reasons a report cannot be written.
_ADVICE = {
    errno.EISDIR: "name a file",
    errno.ENOSPC: "free some space, or name a path on another disk",
    errno.EDQUOT: "free some space, or name a path on another disk",
    errno.EACCES: "make its folder writable, or name another path",
    errno.EPERM: "make its folder writable, or name another path",
    errno.EROFS: "name a path on a writable file system",
    errno.ENOTDIR: "a folder on its path is a file: name another path",
    errno.ENOENT: "a folder on its path does not exist: create it, or name another path",
    errno.EINVAL: "the file system refuses to write it there: name a regular file elsewhere",
}


def os_cause(error: OSError) -> str:
    """Why writing failed, in the system's words (``is a directory``, ``no space left on
    device``), with what to do about it when that is clear."""
    words = (error.strerror or str(error)).lower()
    advice = _ADVICE.get(error.errno or 0)
    return f"{words}; {advice}" if advice else words


def write_reports(
    report: ReportModel | Mapping[str, Any],
    json_path: Path | None,
    html_path: Path | None,
    md_path: Path | None,
    shown: Callable[[Path], str] = str,
    comment: Comment | None = None,
) -> list[Unwritten]:
    """Write each report of ``report`` (the run's model, or a report document) asked for,
    and return those that could not be written, each with its cause (``shown`` gives a
    path as the user reads it). JSON and HTML are written for any run; the Markdown
    summary only when some eval ran (an empty summary would only add noise to a CI page).
    A report that cannot be written does not keep the others from being written.
    ``comment``: the pull-request comment asked for, written last, when every other file
    is written or known not to be, so its verdict knows whether the run failed.

    Each renderer is imported here, when the run ends and its report is asked for:
    importing this module should not import them."""
    from pytest_ragmetrics.reports.document import model_of

    model = model_of(report)
    unwritten: list[Unwritten] = []

    def attempt(option: str, path: str, write: Callable[[], None]) -> None:
        try:
            write()
        except OSError as error:
            unwritten.append(Unwritten.report(option, path, error))

    if json_path is not None:
        chunks = json_chunks(report if isinstance(report, Mapping) else model.as_dict())
        attempt("--ragmetrics-json", shown(json_path), lambda: write_atomic(json_path, chunks))
    if html_path is not None:
        from pytest_ragmetrics.reports.html import render_html

        records = None
        if json_path is not None:  # every row is there; the page may show a sample
            records = Path(os.path.relpath(json_path, html_path.parent)).as_posix()
        page = render_html(model, records)
        attempt("--ragmetrics-html", shown(html_path), lambda: write_atomic(html_path, page))
    github = os.environ.get(GITHUB_SUMMARY_ENV)
    if model.evals and (md_path is not None or github):
        from pytest_ragmetrics.reports.markdown import markdown_summary

        markdown = markdown_summary(model)
        if md_path is not None:
            attempt("--ragmetrics-md", shown(md_path), lambda: write_atomic(md_path, markdown))
        if github:  # GitHub Actions collects what every step appends to this file
            attempt(f"${GITHUB_SUMMARY_ENV}", github, lambda: _append(github, markdown))
    if comment is not None:
        from pytest_ragmetrics.reports.comment import pr_comment

        text = pr_comment(model, comment.link, comment.run_failed or bool(unwritten))
        path = comment.path
        attempt("--ragmetrics-pr-comment", shown(path), lambda: write_atomic(path, text))
    return unwritten


@dataclass(frozen=True)
class Comment:
    """The pull-request comment asked for: where it goes, the page it links to (``None``:
    no link line), and whether the run failed already (its exit status is not 0)."""

    path: Path
    link: str | None
    run_failed: bool


def _append(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as stream:
        stream.write(text)
