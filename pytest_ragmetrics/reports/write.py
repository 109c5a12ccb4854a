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
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.files import GITHUB_SUMMARY_ENV, write_atomic
from pytest_ragmetrics.results.spool import SpoolError

if TYPE_CHECKING:
    from pytest_ragmetrics.reports.model import ReportModel, RowView, StoredValues

JSON_INDENT = 2  # spaces a level of the --ragmetrics-json file


def json_chunks(document: Mapping[str, Any]) -> Iterator[str]:
    """The ``--ragmetrics-json`` file in the pieces the JSON encoder makes, the text
    ``json.dumps`` would join from the same pieces: the file is written piece by piece,
    since held whole (and the encoder's list of pieces with it) it costs several kilobytes
    a row at the end of a large run."""
    yield from _encoder().iterencode(document)
    yield "\n"


def report_chunks(report: ReportModel | Mapping[str, Any]) -> Iterator[str]:
    """The ``--ragmetrics-json`` file of ``report``, the same text as ``json_text`` of its
    document, made with no more than one row's object at a time: a run's model is encoded
    with each eval's ``rows`` replaced by a marker (a random token no row's text can
    hold by chance), and each marker, as the encoder writes it, is replaced by that eval's
    rows, each encoded on its own by the same encoder and indented to its depth in the
    document. Every row's object held at once cost several kilobytes a row at the end
    of a large run (3 GB at a million rows). A report document (a mapping) is already
    whole, and is encoded as it is (``json_chunks``)."""
    if isinstance(report, Mapping):
        yield from json_chunks(report)
        return
    encoder = _encoder()
    marker = f"pytest-ragmetrics-rows-{secrets.token_hex(16)}-"
    spliced = _splices(report, marker, encoder)
    yield from _spliced(encoder.iterencode(report.as_dict(marker)), spliced)
    yield "\n"


# An encoded marker, the texts of the items written in its place, and their brackets.
Splice = tuple[str, Iterable[str], str]


def _splices(report: ReportModel, marker: str, encoder: json.JSONEncoder) -> list[Splice]:
    """What ``report.as_dict(marker)`` writes as markers, in the order the document
    holds them, each with what replaces it: a paired baseline's ``row_values`` made
    when read (an object), each eval's rows (a list). An eval's keys are sorted:
    ``baseline`` before ``rows``."""
    spliced: list[Splice] = []
    for place, view in enumerate(report.evals):
        values = view.baseline.streamed_values if view.baseline is not None else None
        if values is not None:
            spliced.append(
                (encoder.encode(f"{marker}{place}-values"), _member_texts(values, encoder), "{}")
            )
        if view.rows is not None:
            spliced.append(
                (encoder.encode(f"{marker}{place}"), _row_texts(view.rows, encoder), "[]")
            )
    return spliced


def _row_texts(rows: Sequence[RowView], encoder: json.JSONEncoder) -> Iterator[str]:
    """Each row's object as the encoder writes it, one row made at a time."""
    for row in rows:
        text = encoder.encode(row.as_dict())
        del row  # let the view go before the next one is made
        yield text


def _member_texts(members: StoredValues, encoder: json.JSONEncoder) -> Iterator[str]:
    """Each member of an object (in id order, as ``sort_keys`` writes it), as the
    encoder writes it, one made at a time."""
    for key, value in members.items():
        yield f"{encoder.encode(key)}: {encoder.encode(value)}"


def _encoder() -> json.JSONEncoder:
    return json.JSONEncoder(indent=JSON_INDENT, sort_keys=True, ensure_ascii=False)


def _spliced(pieces: Iterable[str], spliced: Sequence[Splice]) -> Iterator[str]:
    """``pieces`` with each encoded marker of ``spliced`` (in the order the document holds
    them) replaced by its items in its brackets (``[]`` or ``{}``), wherever the encoder's
    pieces split the marker: text that could begin the next marker is held back until the
    next piece says whether it does."""
    waiting = iter(spliced)
    expected = next(waiting, None)
    line = _Line()
    buffer = ""
    for piece in pieces:
        buffer += piece
        while expected is not None and (found := buffer.find(expected[0])) >= 0:
            before = buffer[:found]
            line.feed(before)
            yield before
            _, items, brackets = expected
            yield from _items_text(items, brackets, line.indent)
            line.feed(brackets[1])
            buffer = buffer[found + len(expected[0]) :]
            expected = next(waiting, None)
        held = len(expected[0]) - 1 if expected is not None else 0
        if len(buffer) > held:
            done, buffer = buffer[: len(buffer) - held], buffer[len(buffer) - held :]
            line.feed(done)
            yield done
    if expected is not None:  # the encoder wrote a marker otherwise than as one string
        raise RuntimeError(f"--ragmetrics-json: the rows' marker {expected[0]} was not written")
    yield buffer


def _items_text(items: Iterable[str], brackets: str, indent: int) -> Iterator[str]:
    """A list's items (or an object's members), each as the encoder wrote it, as the
    encoder writes the whole when its key's line is indented by ``indent`` spaces:
    ``[]`` (``{}``) when there are none, else each on lines indented one step further (a
    JSON string holds no line break, so every line break is the encoder's own)."""
    inner = "\n" + " " * (indent + JSON_INDENT)
    opening = brackets[0]
    for text in items:
        yield opening + inner + text.replace("\n", inner)
        opening = ","
    if opening == brackets[0]:  # nothing written
        yield brackets
        return
    yield "\n" + " " * indent + brackets[1]


class _Line:
    """How many spaces begin the line being written, from the text written so far."""

    def __init__(self) -> None:
        self.indent = 0
        self._leading = True  # nothing but spaces on the line yet

    def feed(self, text: str) -> None:
        start = text.rfind("\n") + 1
        if start:
            self.indent, self._leading = 0, True
        if self._leading:
            rest = text[start:]
            spaces = len(rest) - len(rest.lstrip(" "))
            self.indent += spaces
            self._leading = spaces == len(rest)


def json_text(document: Mapping[str, Any]) -> str:
    """The ``--ragmetrics-json`` file: sorted keys, two-space indent, UTF-8 as it is."""
    return json.dumps(document, indent=JSON_INDENT, sort_keys=True, ensure_ascii=False) + "\n"


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
        except SpoolError as error:  # a row the report shows could not be read back
            unwritten.append(Unwritten(option, f"{option} {path}: not written: {error}"))

    if json_path is not None:
        chunks = report_chunks(report)
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
