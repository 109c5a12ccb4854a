"""The documentation's links hold: what the code cites exists, and every page links to
pages and headings that exist.

The package cites its docs by path and anchor (``docs/metrics.md#1-grounding``). Anchors
follow GitHub's rule for headings, so a citation that works here works on GitHub: the
heading's text lowercased, every character that is not a letter, a mark, a digit, a
connector (``_``), a space or ``-`` dropped, spaces turned into ``-``; a repeated heading
gets ``-1``, ``-2``, ... in order.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_ragmetrics"
DOCS = ROOT / "docs"

# `docs/<name>.md`, optionally with `#anchor`, anywhere in the package's text.
DOC_CITATION = re.compile(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+))?")
# The specification's old file name, which is not part of the repository.
OLD_SPEC = "METRICS.md"
# An inline link `[text](target)`; the text may wrap lines but holds no `]`.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = ("http://", "https://", "mailto:")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text (without its leading ``#``s).

    Inline code keeps its text and loses its backticks, as rendered; then the rule above.
    """
    kept = (
        ch
        for ch in heading.replace("`", "").lower()
        if ch in " -" or unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc"
    )
    return "".join(kept).replace(" ", "-")


def without_code(text: str) -> str:
    """The Markdown outside fenced blocks and inline code, where links and headings live."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def target_problem(source: Path, target: str) -> str | None:
    """Why a relative link (``page.md#anchor``, ``#anchor``, ``../README.md``) from
    ``source`` does not resolve, or ``None`` when it does."""
    path_part, _, anchor = target.partition("#")
    destination = (source.parent / path_part).resolve() if path_part else source
    if not destination.exists():
        return f"{target}: no file {destination}"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: no heading with the anchor #{anchor} in {destination.name}"
    return None


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix in {".py", ".txt"})


def markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


# -- the rules the checks rely on, on hand-made inputs ----------------------------------


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("§1 Grounding", "1-grounding"),
        ("§0 Shared conventions", "0-shared-conventions"),
        ("`hit_rate`", "hit_rate"),
        ("`rougeL`", "rougel"),
        ("Tier 0: embedding space, UX and sources", "tier-0-embedding-space-ux-and-sources"),
        ("cold / direct = 1.16", "cold--direct--116"),
        ("`--ragmetrics-save-outputs PATH`", "--ragmetrics-save-outputs-path"),
        ("Où est-ce ?", "où-est-ce-"),
    ],
)
def test_slug_follows_githubs_rule(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_repeated_headings_are_numbered(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n## Notes\n\n```\n## not a heading\n```\n\n## Notes\n\n## Notes\n")
    assert anchors(page) == {"page", "notes", "notes-1", "notes-2"}


def test_links_are_found_outside_code_only() -> None:
    text = (
        "See [the\nmetrics](docs/metrics.md#1-grounding) and `[1](x)`.\n"
        "```\n[not](a-link.md)\n```\n[1][2] cite two contexts; [x](https://example.org).\n"
    )
    assert LINK.findall(without_code(text)) == [
        "docs/metrics.md#1-grounding",
        "https://example.org",
    ]


def test_a_broken_link_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Known\n")
    source = tmp_path / "b.md"
    assert target_problem(source, "a.md#known") is None
    assert (
        target_problem(source, "a.md#unknown")
        == "a.md#unknown: no heading with the anchor #unknown in a.md"
    )
    assert target_problem(source, "missing.md") is not None


def test_citations_are_found_with_their_anchor() -> None:
    text = '"""Overlap (docs/metrics.md#overlap), defined in docs/metrics.md."""'
    assert DOC_CITATION.findall(text) == [("metrics.md", "overlap"), ("metrics.md", "")]


# -- the repository ------------------------------------------------------------------------


def test_every_docs_page_the_code_cites_exists_with_its_anchor() -> None:
    problems = []
    for path in package_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name, anchor in DOC_CITATION.findall(line):
                target = f"{name}#{anchor}" if anchor else name
                problem = target_problem(DOCS / "index.md", target)
                if problem:
                    problems.append(f"{path.relative_to(ROOT)}:{number}: docs/{problem}")
    assert not problems, "cited docs that do not exist:\n" + "\n".join(problems)


def test_no_code_cites_the_old_specification_file() -> None:
    citing = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in package_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OLD_SPEC in line
    ]
    assert not citing, (
        f"{OLD_SPEC} is not in the repository; cite the section of docs/metrics.md "
        "instead (e.g. docs/metrics.md#1-grounding):\n" + "\n".join(citing)
    )


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    targets = LINK.findall(without_code(page.read_text(encoding="utf-8")))
    problems = [
        problem
        for target in targets
        if not target.startswith(EXTERNAL) and (problem := target_problem(page, target))
    ]
    assert not problems, f"{page.relative_to(ROOT)}: broken links:\n" + "\n".join(problems)
