"""Fuzzing the input parsers: the dataset loader, citation markers, the sentence splitter.

Only documented errors may escape: ``DatasetError`` for a file the loader cannot read as
a whole, nothing at all from the citation parser and the sentence splitter. Examples are
derandomized, with no example database, so that CI sees the same inputs every run.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.data.dataset import (
    MAX_DEPTH,
    VALIDATORS,
    Dataset,
    DatasetError,
    load_dataset,
)
from pytest_ragmetrics.text.citations import (
    CITATION_FORMATS,
    CitationFormat,
    CitationSyntax,
    find_citations,
    marker_pattern,
    strip_citations,
)
from pytest_ragmetrics.text.sentences import split_sentences

FUZZ = settings(
    max_examples=150,
    deadline=None,  # a loaded CI machine is slow; speed is the benchmarks' business
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
FORMATS: list[CitationFormat] = [
    *CITATION_FORMATS,  # type: ignore[list-item]
    # A project's own markers; the last can match nothing right after an "x".
    CitationSyntax("auto", r"\[([\w-]+)\]"),
    CitationSyntax("cit", r"\((\w+)\)"),
    CitationSyntax("numeric", r"(?<=x)([\w.]*)"),
]


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def load(folder: Path, content: bytes, suffix: str) -> Dataset:
    path = folder / f"fuzz{suffix}"
    path.write_bytes(content)
    return load_dataset(path, f"data/fuzz{suffix}")


def assert_well_formed(dataset: Dataset) -> None:
    """What every later step relies on: rows in file order, test ids unique, and every
    id, field and message printable and writable as UTF-8 JSON."""
    lines = [loaded.row.line for loaded in dataset.rows]
    assert lines == sorted(set(lines))
    assert [loaded.row.index for loaded in dataset.rows] == list(range(len(dataset.rows)))
    systems = dataset.systems
    test_ids = [
        f"{system}/{loaded.row.id}" if system else loaded.row.id
        for loaded in dataset.rows
        for system in (
            [loaded.row.system]
            if loaded.row.system in systems or not systems
            else systems  # a row naming no system is a bad row of every system
        )
    ]
    assert len(test_ids) == len(set(test_ids))
    for loaded in dataset.rows:
        assert loaded.row.id.strip()
        written = json.dumps([loaded.row.id, loaded.row.data], ensure_ascii=False)
        written.encode("utf-8")
        for problem in loaded.problems:
            assert problem.field
            assert problem.message
            loaded.row.where(problem.field).encode("utf-8")
            problem.message.encode("utf-8")


def non_blank_lines(content: bytes) -> int:
    body = content.removeprefix(b"\xef\xbb\xbf")
    return sum(1 for line in body.splitlines() if line.decode("utf-8", "replace").strip())


# -- generators -----------------------------------------------------------------------

LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])
surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
awkward_text = st.text(
    st.one_of(st.characters(), surrogates, st.sampled_from('"\\[]{},\n\r\u2028\x00')),
    max_size=12,
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**50, max_value=2**60),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, awkward_text),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["doc_id", "text", "score", "rank", "x"]), children),
    ),
    max_leaves=8,
)


@st.composite
def nested(draw: st.DrawFn) -> Any:
    """A value in up to twice ``MAX_DEPTH`` lists: the depth limit, on both sides."""
    value: Any = draw(json_values)
    for _ in range(draw(st.integers(0, 2 * MAX_DEPTH + 10))):
        value = [value]
    return value


FIELDS = [*VALIDATORS, "id", "note"]
rows = st.dictionaries(
    st.one_of(st.sampled_from(FIELDS), awkward_text),
    st.one_of(json_values, nested(), st.sampled_from(["a", "b", "x@L2", "L1-"])),
    max_size=5,
)


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    """JSONL made of rows that hit every validator, broken lines and stray bytes."""
    lines = draw(
        st.lists(
            st.one_of(
                rows.map(lambda row: json.dumps(row).encode()),
                st.binary(max_size=20),
                st.sampled_from([b"", b"  ", b"[1]", b"{", b'{"id": "\xff"}', b"\xef\xbb\xbf{}"]),
                st.integers(0, 5000).map(lambda n: b'{"x": ' + b"[" * n + b"]" * n + b"}"),
            ),
            max_size=6,
        )
    )
    ends = draw(st.lists(LINE_ENDS, min_size=len(lines), max_size=len(lines)))
    return b"".join(line + end for line, end in zip(lines, ends, strict=True))


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    """CSV with a header of known and unknown columns and cells of every kind."""
    columns = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=4, unique=True))
    cell = st.one_of(
        st.sampled_from(["", "x", '"q"', '"un', 'a"b', "[]", "[[1]]", "{}", "1e400", "true"]),
        json_values.map(lambda value: json.dumps(value).replace("\n", " ")),
        nested().map(json.dumps),
        st.text(st.sampled_from('ab",\n\r '), max_size=6),
    )
    records = draw(st.lists(st.lists(cell, min_size=1, max_size=5), max_size=5))
    ends = draw(st.lists(LINE_ENDS, min_size=len(records) + 1, max_size=len(records) + 1))
    parts = [",".join(columns).encode()]
    for record in records:
        parts.append(",".join(record).encode("utf-8", "surrogatepass"))
    return b"".join(part + end for part, end in zip(parts, ends, strict=True))


# -- the dataset loader -------------------------------------------------------------------


@FUZZ
@given(content=st.one_of(st.binary(max_size=200), jsonl_files()))
def test_any_jsonl_file_loads_one_row_per_non_blank_line(folder: Path, content: bytes) -> None:
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: the one file-level error
        with pytest.raises(DatasetError, match="UTF-16"):
            load(folder, content, ".jsonl")
        return
    dataset = load(folder, content, ".jsonl")
    assert len(dataset.rows) == non_blank_lines(content)
    assert_well_formed(dataset)


@FUZZ
@given(content=st.one_of(st.binary(max_size=200), csv_files()))
def test_any_csv_file_loads_or_fails_as_a_whole(folder: Path, content: bytes) -> None:
    failure = None
    try:
        dataset = load(folder, content, ".csv")
    except DatasetError as error:
        failure = str(error)
    if failure is not None:  # the header row, or UTF-16: nothing else fails the file
        assert failure.startswith("data/fuzz.csv"), failure
        assert "header" in failure or "UTF-16" in failure, failure
        return
    assert_well_formed(dataset)
    assert all(1 < loaded.row.line <= len(content.splitlines()) for loaded in dataset.rows)


def depth(value: Any) -> int:
    if isinstance(value, dict | list):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max(map(depth, children), default=0)
    return 0


@FUZZ
@given(row=rows)
def test_any_json_object_is_one_row_good_or_with_problems(
    folder: Path, row: dict[str, Any]
) -> None:
    line = json.dumps(row).encode()
    dataset = load(folder, line + b"\n" + line + b"\n", ".jsonl")
    assert len(dataset.rows) == 2
    assert_well_formed(dataset)
    first, second = dataset.rows
    assert first.row.data == second.row.data
    assert second.row.id != first.row.id
    too_deep = any(p.field == "<json>" for p in first.problems)
    assert too_deep == (depth(row) > MAX_DEPTH)


ids = st.sampled_from(["x", "x@L2", "x@L3", "x@L3~2", "L1-", 7, "7", None])
systems = st.sampled_from(["a", "b", None])


@FUZZ
@given(lines=st.lists(st.tuples(ids, systems), max_size=8))
def test_ids_stay_unique_per_system(
    folder: Path, lines: list[tuple[str | int | None, str | None]]
) -> None:
    text = "".join(json.dumps({"id": row_id, "system": system}) + "\n" for row_id, system in lines)
    assert_well_formed(load(folder, text.replace(', "system": null', "").encode(), ".jsonl"))


@FUZZ
@given(
    good=st.integers(1, 5),
    junk=st.text(st.sampled_from('ab",[]{} \t'), min_size=1, max_size=12),
    where=st.integers(0, 5),
)
def test_a_malformed_csv_line_loses_no_good_row(
    folder: Path, good: int, junk: str, where: int
) -> None:
    records = [f"g{i},fine" for i in range(good)]
    records.insert(min(where, good), junk)
    dataset = load(folder, ("id,answer\n" + "\n".join(records) + "\n").encode(), ".csv")
    assert_well_formed(dataset)
    loaded = {r.row.id: (r.row.line, r.row.answer, r.problems) for r in dataset.rows}
    for i, record in enumerate(records):
        if record.startswith("g"):
            assert loaded[record.split(",")[0]] == (i + 2, "fine", ())


# -- citation markers and sentences ---------------------------------------------------------

# A marker inside brackets: removing it may make a marker of the brackets ("[[1]2]").
wrapped_markers = st.builds(
    lambda before, marker, after: f"[{before}{marker}{after}]",
    st.sampled_from(["", "1", " ", "CIT:", "CIT :", "[", "2,"]),
    st.sampled_from(["[1]", "[CIT:d]", "[2, 3]", "[[1]2]"]),
    st.sampled_from(["", "2", " ", ",1", "x", "]"]),
)
answers = st.lists(
    st.one_of(
        wrapped_markers,
        st.sampled_from(["[", "]", "CIT:", "CIT", ":", "1", "2", ",", " ", ".", "[1", "2]"]),
        st.sampled_from(["[1]", "[CIT:d]", "[ 2 , 3 ]", "Dr.", "e.g.", "?", "\n", "\u2028"]),
        st.integers(4290, 4310).map(lambda n: f"[{'9' * n}]"),  # past int()'s digit limit
        st.characters(),
    ),
    max_size=20,
).map("".join)
context_ids = st.lists(st.sampled_from(["d", "1", "doc a", "x.y"]), max_size=4)


@FUZZ
@given(text=answers, ids=context_ids, fmt=st.sampled_from(FORMATS))
def test_citations_are_ordered_spans_of_the_text(
    text: str, ids: list[str], fmt: CitationFormat
) -> None:
    found = find_citations(text, ids, fmt)
    starts = [citation.start for citation in found]
    assert starts == sorted(starts)
    for citation in found:
        assert 0 <= citation.start < citation.end <= len(text)
        assert text[citation.start : citation.end] == citation.marker
        assert citation.doc_id is None or citation.doc_id in ids


@FUZZ
@given(text=answers, fmt=st.sampled_from(FORMATS))
def test_stripped_text_holds_no_marker(text: str, fmt: CitationFormat) -> None:
    stripped = strip_citations(text, fmt)
    assert not any(match.group(0) for match in marker_pattern(fmt).finditer(stripped))
    assert strip_citations(stripped, fmt) == stripped


@FUZZ
@given(text=answers, fmt=st.sampled_from(FORMATS))
def test_sentences_are_ordered_disjoint_spans_of_the_text(text: str, fmt: CitationFormat) -> None:
    sentences = split_sentences(text, fmt)
    end = 0
    for sentence in sentences:
        assert sentence.text.strip()
        assert end <= sentence.start < sentence.end <= len(text)
        assert text[sentence.start : sentence.end] == sentence.text
        end = sentence.end
