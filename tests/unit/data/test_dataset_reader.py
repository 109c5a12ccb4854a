"""Reading a dataset a batch at a time (``scan_dataset`` + ``DatasetReader``): the same
rows as ``load_dataset`` gives, whose own tests pin what each row is, in every format,
read in any split into batches; a file that changed under the run is an error."""

from __future__ import annotations

import gzip
import itertools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.data import dataset
from pytest_ragmetrics.data.dataset import (
    DatasetError,
    DatasetReader,
    LoadedRow,
    load_dataset,
    scan_dataset,
)

# Every id rule at once: own ids, a duplicate, made-up ids and a row giving itself the
# made-up id of another, systems with a row naming none, a bad line, a lone surrogate.
TRICKY = [
    '{"id": "a", "system": "s1", "answer": "x"}',
    '{"id": "a", "system": "s2", "answer": "y"}',
    '{"id": "a", "system": "s1", "answer": "again"}',
    '{"system": "s1", "answer": "no id"}',
    "",
    "not json",
    '{"id": "a", "answer": "names no system"}',
    '{"id": "L4-00000000", "system": "s2"}',
    '{"id": "q\\ud800", "system": "s2", "tokens": -1}',
    '{"id": 7, "system": "s1", "contexts": [{"doc_id": "d", "text": "t"}]}',
]


def as_tuples(rows: Sequence[LoadedRow]) -> list[tuple[Any, ...]]:
    return [
        (r.row.id, r.row.source, r.row.line, r.row.index, dict(r.row.data), r.problems)
        for r in rows
    ]


def rewrite_keeping_stamp(path: Path, text: str) -> None:
    """Write ``text`` over ``path``, keeping its modification time: a change that the
    file's size and time cannot show (``text`` is as long as what it replaces)."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def tricky(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    text = "\n".join(TRICKY) + "\n"
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz"])
def test_batches_read_the_rows_that_loading_gives(tmp_path: Path, name: str) -> None:
    path = tricky(tmp_path, name)
    loaded = load_dataset(path, "data/d")
    index = scan_dataset(path, "data/d")
    assert (index.sha256, index.systems, len(index)) == (loaded.sha256, loaded.systems, 9)
    assert list(index.row_keys()) == list(loaded.row_keys())
    reader = DatasetReader(index)
    try:
        batches = [reader.rows(range(0, 4)), reader.rows([5, 8]), reader.rows([])]
        assert as_tuples([*batches[0], *batches[1]]) == as_tuples(
            [*loaded.rows[:4], loaded.rows[5], loaded.rows[8]]
        )
        # An earlier row starts a new pass through the file.
        assert as_tuples(reader.rows([4])) == as_tuples([loaded.rows[4]])
    finally:
        reader.close()


def test_csv_and_parquet_rows_by_batch_are_the_loaded_rows(tmp_path: Path) -> None:
    csv_path = tmp_path / "d.csv"
    csv_path.write_text('id,answer,tokens\na,x,3\na,y,4\n,z,"5\n,w,oops\n', encoding="utf-8")
    table = pa.table({"id": ["a", None, "a"], "answer": ["x", "y", None], "n": [1.0, None, 2.0]})
    parquet_path = tmp_path / "d.parquet"
    pq.write_table(table, parquet_path, row_group_size=2)
    for path in (csv_path, parquet_path):
        loaded = load_dataset(path)
        reader = DatasetReader(scan_dataset(path))
        positions = range(len(loaded.rows))
        read = [row for p in positions for row in reader.rows([p])]
        assert as_tuples(read) == as_tuples(loaded.rows), path.name
        reader.close()


LINES = st.lists(
    st.one_of(
        st.builds(
            lambda i, s: json.dumps({k: v for k, v in (("id", i), ("system", s)) if v}),
            st.sampled_from([None, "a", "b", "L1-x", "a@L2"]),
            st.sampled_from([None, "s1", "s2"]),
        ),
        st.just(""),
        st.just("{broken"),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(lines=LINES, cuts=st.lists(st.integers(0, 12), max_size=4))
def test_any_split_into_batches_reads_every_row_as_loaded(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], cuts: list[int]
) -> None:
    path = tmp_path_factory.mktemp("split") / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_dataset(path)
    index = scan_dataset(path)
    assert list(index.row_keys()) == list(loaded.row_keys())
    bounds = sorted({0, len(index), *(c for c in cuts if c < len(index))})
    reader = DatasetReader(index)
    read = [row for lo, hi in itertools.pairwise(bounds) for row in reader.rows(range(lo, hi))]
    reader.close()
    assert as_tuples(read) == as_tuples(loaded.rows)


def test_a_dataset_changed_after_the_scan_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    reader = DatasetReader(scan_dataset(path, "data/d.jsonl"))
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"data/d\.jsonl: the dataset changed while the run"):
        reader.rows([0])


def test_a_row_moved_in_a_file_of_the_same_size_and_time_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a"}\n\n{"id": "b"}\n', encoding="utf-8")
    index = scan_dataset(path, "data/d.jsonl")
    rewrite_keeping_stamp(path, '\n{"id": "a"}\n{"id": "b"}\n')  # same bytes, moved
    reader = DatasetReader(index)
    with pytest.raises(DatasetError, match=r"row 1 is not the row it was"):
        reader.rows([0])
    reader.close()


def test_a_truncated_file_of_the_same_size_and_time_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    index = scan_dataset(path, "data/d.jsonl")
    rewrite_keeping_stamp(path, '{"id": "a"}\n' + " " * 12)  # same size, one row
    reader = DatasetReader(index)
    with pytest.raises(DatasetError, match=r"it has fewer than 2 rows"):
        reader.rows([0, 1])
    reader.close()


def test_a_row_edited_in_place_to_the_same_size_and_time_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "answer": "old"}\n{"id": "b"}\n', encoding="utf-8")
    index = scan_dataset(path, "data/d.jsonl")
    rewrite_keeping_stamp(path, '{"id": "a", "answer": "new"}\n{"id": "b"}\n')
    reader = DatasetReader(index)
    with pytest.raises(DatasetError, match=r"data/d\.jsonl: .*row 1 is not the row it was"):
        reader.rows([0])
    assert as_tuples(reader.rows([1]))[0][0] == "b"  # the next batch reads afresh
    reader.close()


def test_a_change_between_two_batches_of_one_pass_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"id": "r{i}"}}\n' for i in range(10)), encoding="utf-8")
    reader = DatasetReader(scan_dataset(path, "data/d.jsonl"))
    assert [r.row.id for r in reader.rows([0, 1])] == ["r0", "r1"]
    with path.open("a", encoding="utf-8") as more:
        more.write('{"id": "late"}\n')
    with pytest.raises(DatasetError, match=r"size or modification time differ"):
        reader.rows([8, 9])
    reader.close()


def test_batches_out_of_order_start_at_the_nearest_place_before_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain JSONL resumes at every RESUME_EVERY-th row (a byte offset), Parquet at each
    row group; any order of batches reads the rows loading gives. A byte-order mark, blank
    lines and CRLF ends shift the offsets the JSONL places are found at."""
    monkeypatch.setattr(dataset, "RESUME_EVERY", 4)
    text = "\r\n".join(
        "" if i % 5 == 2 else json.dumps({"id": f"r{i}", "answer": "é" * i}) for i in range(23)
    )
    jsonl_path = tmp_path / "d.jsonl"
    jsonl_path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    parquet_path = tmp_path / "d.parquet"
    table = pa.table({"id": [f"r{i}" for i in range(10)], "answer": ["x"] * 10})
    pq.write_table(table, parquet_path, row_group_size=3)
    for path, places in ((jsonl_path, [0, 4, 8, 12, 16]), (parquet_path, [0, 3, 6, 9])):
        loaded = load_dataset(path)
        index = scan_dataset(path)
        assert [resume.position for resume in index.resumes] == places
        reader = DatasetReader(index)
        batches = [range(lo, min(lo + 3, len(index))) for lo in range(0, len(index), 3)]
        read = {p: row for b in reversed(batches) for p, row in zip(b, reader.rows(b), strict=True)}
        reader.close()
        assert as_tuples([read[p] for p in range(len(index))]) == as_tuples(loaded.rows)
