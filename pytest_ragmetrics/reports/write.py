"""Writing the report files (controller, at the end of the run): the JSON document, the
HTML page and the Markdown summary, each replaced atomically; the Markdown summary is also
appended to GitHub's step summary when ``$GITHUB_STEP_SUMMARY`` names one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import write_atomic

GITHUB_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


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


def write_reports(
    document: Mapping[str, Any],
    json_path: Path | None,
    html_path: Path | None,
    md_path: Path | None,
) -> None:
    """Write each report asked for. JSON and HTML are written for any run; the Markdown
    summary only when some eval ran (an empty summary would only add noise to a CI page).

    Each renderer is imported here, when the run ends and its report is asked for: the
    plugin's options name this module's ``GITHUB_SUMMARY_ENV``, and importing the plugin
    should not import them."""
    from pytest_ragmetrics.reports.document import entries

    if json_path is not None:
        write_atomic(json_path, json_chunks(document))
    if html_path is not None:
        from pytest_ragmetrics.reports.html import render_html

        write_atomic(html_path, render_html(document))
    github = os.environ.get(GITHUB_SUMMARY_ENV)
    if not entries(document) or (md_path is None and not github):
        return
    from pytest_ragmetrics.reports.markdown import markdown_summary

    markdown = markdown_summary(document)
    if md_path is not None:
        write_atomic(md_path, markdown)
    if github:  # GitHub Actions collects what every step appends to this file
        with open(github, "a", encoding="utf-8", errors="backslashreplace") as summary:
            summary.write(markdown)
