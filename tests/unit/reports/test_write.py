"""Why a report could not be written, in the system's words and with what to do."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pytest_ragmetrics.reports.write import os_cause, write_reports


@pytest.mark.parametrize(
    ("code", "advice"),
    [
        (errno.EISDIR, "name a file"),
        (errno.ENOSPC, "free some space"),
        (errno.EACCES, "make its folder writable"),
        (errno.EROFS, "writable file system"),
        (errno.ENOTDIR, "a folder on its path is a file"),
        (errno.ENOENT, "a folder on its path does not exist"),
        (errno.EINVAL, "name a regular file elsewhere"),
    ],
)
def test_each_cause_says_what_to_do(code: int, advice: str) -> None:
    cause = os_cause(OSError(code, os.strerror(code), "r.md"))
    words, _, told = cause.partition("; ")
    assert words == os.strerror(code).lower()
    assert advice in told


def _large_document(rows: int) -> dict[str, object]:
    """A report of one eval whose table is too large to show whole on the page."""
    return {
        "schema_version": 1,
        "plugin_version": "0.1.0",
        "settings": {},
        "evals": [
            {
                "name": "evals/test_big.py",
                "system": None,
                "label": "evals/test_big.py",
                "compare_to": None,
                "module": "evals/test_big.py",
                "dataset": "evals/data/big.jsonl",
                "dataset_sha256": "ab" * 32,
                "dataset_rows": rows,
                "n": rows,
                "errors": 0,
                "metrics": {},
                "breakdowns": {},
                "dataset_level": {"details": {}, "errors": []},
                "gates": [],
                "rows": [
                    {"id": f"q{i}", "system": None, "metrics": {}, "errors": [], "evidence": {}}
                    for i in range(rows)
                ],
            }
        ],
    }


def test_a_page_that_leaves_rows_out_links_to_the_json_report_from_its_own_folder(
    tmp_path: Path,
) -> None:
    json_path, html_path = tmp_path / "out" / "run report.json", tmp_path / "pages" / "r.html"
    json_path.parent.mkdir()
    html_path.parent.mkdir()
    assert write_reports(_large_document(1001), json_path, html_path, None) == []
    page = html_path.read_text(encoding="utf-8")
    assert '<a href="../out/run%20report.json">the JSON report</a>' in page
    assert write_reports(_large_document(1001), None, html_path, None) == []
    assert "the JSON report (--ragmetrics-json=FILE)" in html_path.read_text(encoding="utf-8")
