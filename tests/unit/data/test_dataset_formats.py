"""Parquet and compressed JSONL datasets, and the chunked reading every format shares.

Parquet files are written here with pyarrow, column by column, so each value and each
problem below is what docs/datasets.md#parquet says a column of that type gives.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.data import parquet, streams
from pytest_ragmetrics.data.dataset import DatasetError, LoadedRow, load_dataset

CONTEXT = pa.struct([("doc_id", pa.string()), ("text", pa.string()), ("title", pa.string())])


def write_parquet(path: Path, columns: dict[str, pa.Array], **options: Any) -> Path:
    pq.write_table(pa.table(columns), path, **options)
    return path


def found(rows: tuple[LoadedRow, ...]) -> list[tuple[int, str, dict[str, Any], list[Any]]]:
    return [
        (r.row.line, r.row.id, dict(r.row.data), [(p.field, p.message) for p in r.problems])
        for r in rows
    ]


# -- Parquet ----------------------------------------------------------------------------


def test_parquet_columns_become_the_fields_a_jsonl_line_holds(tmp_path: Path) -> None:
    contexts = [
        [{"doc_id": "d1", "text": "Paris is the capital.", "title": "Paris"}],
        [{"doc_id": "d2", "text": "Rome.", "title": None}],  # a null struct field: no key
    ]
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b"]),
            "answer": pa.array(["Paris [1].", "Rome"]),
            "gold": pa.array([["Paris", "paris"], ["Rome"]], pa.list_(pa.string())),
            "contexts": pa.array(contexts, pa.list_(CONTEXT)),
            "tokens": pa.array([120, 7], pa.int64()),
            "latency_ms": pa.array([850.5, 12.0], pa.float64()),
            "answerable": pa.array([True, False]),
            "relevant": pa.array([[("d1", 2.0)], []], pa.map_(pa.string(), pa.float64())),
            "note": pa.array(["x", "y"], pa.dictionary(pa.int8(), pa.string())),
            "repeats": pa.array([["p"], []], pa.list_view(pa.string_view())),
        },
    )
    dataset = load_dataset(path, "data/d.parquet")
    assert found(dataset.rows) == [
        (
            1,
            "a",
            {
                "id": "a",
                "answer": "Paris [1].",
                "gold": ["Paris", "paris"],
                "contexts": [{"doc_id": "d1", "text": "Paris is the capital.", "title": "Paris"}],
                "tokens": 120,
                "latency_ms": 850.5,
                "answerable": True,
                "relevant": {"d1": 2.0},
                "note": "x",
                "repeats": ["p"],
            },
            [],
        ),
        (
            2,
            "b",
            {
                "id": "b",
                "answer": "Rome",
                "gold": ["Rome"],
                "contexts": [{"doc_id": "d2", "text": "Rome."}],
                "tokens": 7,
                "latency_ms": 12.0,
                "answerable": False,
                "relevant": {},
                "note": "y",
                "repeats": [],
            },
            [],
        ),
    ]
    assert dataset.rows[1].row.where("gold") == "data/d.parquet:2: field 'gold'"
    assert dataset.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_null_is_an_absent_field(tmp_path: Path) -> None:
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b"]),
            "gold": pa.array(["Paris", None]),  # gold as a string column
            "tokens": pa.array([None, 3], pa.int64()),
            "retrieved": pa.array([["d1", None], None], pa.list_(pa.string())),
        },
    )
    assert found(load_dataset(path).rows) == [
        # a null *item* of a list is kept, and the list's check names the field
        (
            1,
            "a",
            {"id": "a", "gold": "Paris", "retrieved": ["d1", None]},
            [("retrieved", "expected a list of strings, got list")],
        ),
        (2, "b", {"id": "b", "tokens": 3}, []),
    ]


def test_a_column_of_the_wrong_type_is_a_problem_of_its_field(tmp_path: Path) -> None:
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b"]),
            "tokens": pa.array(["120", None]),
            "answerable": pa.array([1, 0], pa.int32()),
            # a context struct without its text
            "contexts": pa.array(
                [[{"doc_id": "d1"}], []], pa.list_(pa.struct([("doc_id", pa.string())]))
            ),
        },
    )
    a, b = load_dataset(path).rows
    assert [(p.field, p.message) for p in a.problems] == [
        ("contexts", "item 0: 'text' must be a string, got null"),
        ("answerable", "expected true or false, got int"),
        ("tokens", "expected an int, {prompt, completion} or a list of calls, got str"),
    ]
    assert [(p.field, p.message) for p in b.problems] == [
        ("answerable", "expected true or false, got int")
    ]


def test_nan_and_infinity_are_problems_of_their_field_never_values(tmp_path: Path) -> None:
    scored = pa.struct([("doc_id", pa.string()), ("text", pa.string()), ("score", pa.float64())])
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b", "c"]),
            "latency_ms": pa.array([1.5, float("nan"), 2.0]),
            "contexts": pa.array(
                [[], [], [{"doc_id": "d", "text": "t", "score": float("-inf")}]], pa.list_(scored)
            ),
            "my_score": pa.array([float("inf"), 0.5, None], pa.float32()),
        },
    )
    a, b, c = load_dataset(path).rows
    tail = (
        "is not a number a dataset may hold (JSON has no NaN or Infinity); "
        "write null for a missing value"
    )
    assert (dict(a.row.data), [(p.field, p.message) for p in a.problems]) == (
        {"id": "a", "latency_ms": 1.5, "contexts": []},
        [("<parquet>", f"column 'my_score': inf {tail}")],
    )
    assert (dict(b.row.data), [(p.field, p.message) for p in b.problems]) == (
        {"id": "b", "contexts": [], "my_score": 0.5},
        [("<parquet>", f"column 'latency_ms': nan {tail}")],
    )
    assert (dict(c.row.data), [(p.field, p.message) for p in c.problems]) == (
        {"id": "c", "latency_ms": 2.0},
        [("<parquet>", f"column 'contexts': -inf {tail}")],
    )


def test_a_column_with_no_json_value_is_a_problem_where_it_is_not_null(tmp_path: Path) -> None:
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b"]),
            "logged_at": pa.array([1, None], pa.timestamp("us")),
            "blob": pa.array([b"\x00", None], pa.binary()),
            "ranks": pa.array([[(1, "x")], None], pa.map_(pa.int32(), pa.string())),
            "meta": pa.array([{"at": 1}, None], pa.struct([("at", pa.date32())])),
        },
    )
    a, b = load_dataset(path).rows
    assert [(p.field, p.message) for p in a.problems] == [
        (
            "<parquet>",
            "column 'logged_at': a Parquet timestamp[us] column, which has no JSON value; "
            "cast it to a string",
        ),
        (
            "<parquet>",
            "column 'blob': a Parquet binary column, which has no JSON value; cast it to a string",
        ),
        (
            "<parquet>",
            "column 'ranks': a Parquet map with int32 keys; JSON object keys are strings",
        ),
        (
            "<parquet>",
            "column 'meta': its field 'at' is a Parquet date32[day] column, which has no "
            "JSON value; cast it to a string",
        ),
    ]
    assert dict(a.row.data) == {"id": "a"}
    assert (dict(b.row.data), b.problems) == ({"id": "b"}, ())


def test_a_date_python_cannot_hold_is_a_problem_of_its_row_alone(tmp_path: Path) -> None:
    """Python's dates end at year 9999 and begin at year 1, Parquet's do not: such a value
    is a problem of its row, as any date is, and every other row is read."""
    year_10000 = 253_402_300_800  # 10000-01-01T00:00:00Z, in seconds since 1970
    year_0 = -62_135_596_800 - 86_400  # 0000-12-31, the day before 0001-01-01
    nulls = [None] * 5
    path = write_parquet(
        tmp_path / "d.parquet",
        {
            "id": pa.array(["a", "b", "c", "d", "e", "f"]),
            "answer": pa.array(["x"] * 6),
            "logged_at": pa.array([None, year_10000 * 10**6, *nulls[1:]], pa.timestamp("us")),
            "asked_at": pa.array(
                [None, None, year_0 * 1000, *nulls[2:]], pa.timestamp("ms", tz="UTC")
            ),
            "day": pa.array([*nulls[:3], 2**31 - 1, None, None], pa.date32()),
            "days": pa.array([*nulls[:4], [0, -(2**31)], None], pa.list_(pa.date32())),
            "wait": pa.array([*nulls, 2**62], pa.duration("s")),
        },
        row_group_size=3,  # the far values in both row groups
    )
    rows = load_dataset(path, "d.parquet").rows
    no_json = "column, which has no JSON value; cast it to a string"
    assert [(r.row.id, dict(r.row.data), [p.message for p in r.problems]) for r in rows] == [
        ("a", {"id": "a", "answer": "x"}, []),
        (
            "b",
            {"id": "b", "answer": "x"},
            [f"column 'logged_at': a Parquet timestamp[us] {no_json}"],
        ),
        (
            "c",
            {"id": "c", "answer": "x"},
            [f"column 'asked_at': a Parquet timestamp[ms, tz=UTC] {no_json}"],
        ),
        ("d", {"id": "d", "answer": "x"}, [f"column 'day': a Parquet date32[day] {no_json}"]),
        ("e", {"id": "e", "answer": "x"}, [f"column 'days': a Parquet date32[day] {no_json}"]),
        ("f", {"id": "f", "answer": "x"}, [f"column 'wait': a Parquet duration[s] {no_json}"]),
    ]
    assert {p.field for r in rows for p in r.problems} == {"<parquet>"}


def test_a_column_nested_deeper_than_a_row_may_be(tmp_path: Path) -> None:
    def nested(levels: int) -> pa.Array:  # a struct of a struct ... of an int, ``levels`` deep
        arrow_type: pa.DataType = pa.int8()
        value: Any = 1
        for _ in range(levels):
            arrow_type, value = pa.struct([("x", arrow_type)]), {"x": value}
        return pa.array([value], arrow_type)

    # the row is level 1, so a column may hold MAX_DEPTH - 1 levels of objects (lists
    # count alike, but Parquet stores a list as two levels of its schema, which pyarrow
    # reads to a depth of 100 only)
    path = write_parquet(tmp_path / "d.parquet", {"ok": nested(63), "over": nested(64)})
    ((_, _, data, problems),) = found(load_dataset(path).rows)
    assert list(data) == ["ok"]
    assert problems == [
        (
            "<parquet>",
            "column 'over': nested deeper than 64 levels (the row itself is one); flatten it",
        )
    ]


def test_rows_are_numbered_across_batches_and_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "BATCH_ROWS", 2)
    answers = ["x", "y", "x", "z", "w"]
    ids = ["q", None, "q", None, "L4-" + hashlib.sha1(b'{"answer": "z"}').hexdigest()[:8]]
    path = write_parquet(
        tmp_path / "d.parquet",
        {"id": pa.array(ids, pa.string()), "answer": pa.array(answers)},
        row_group_size=3,
    )
    rows = load_dataset(path).rows
    own = str(ids[4])
    assert [(r.row.line, r.row.index, r.row.id) for r in rows] == [
        (1, 0, "q"),
        # a made-up id hashes the row as JSON, keys in column order
        (2, 1, "L2-" + hashlib.sha1(b'{"answer": "y"}').hexdigest()[:8]),
        (3, 2, "q@L3"),
        (4, 3, own + "~2"),  # never the id a later row gives itself
        (5, 4, own),
    ]
    assert [p.message for p in rows[2].problems] == ["duplicate id 'q' (first used at row 1)"]


def test_a_parquet_file_by_format_and_a_file_that_is_not_one(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "rows.data", {"id": pa.array(["a"])})
    assert [r.row.id for r in load_dataset(path, fmt="parquet").rows] == ["a"]
    (tmp_path / "bad.parquet").write_bytes(b'{"id": "a"}\n')
    with pytest.raises(DatasetError, match=r"^bad\.parquet: cannot read the Parquet file: "):
        load_dataset(tmp_path / "bad.parquet", "bad.parquet")
    whole = path.read_bytes()
    (tmp_path / "cut.parquet").write_bytes(whole[: len(whole) // 2] + whole[-8:])
    with pytest.raises(DatasetError, match=r"^cut\.parquet: cannot read the Parquet file: "):
        load_dataset(tmp_path / "cut.parquet", "cut.parquet")


def test_a_missing_file_fails_as_any_format_does(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot read the dataset: No such file"):
        load_dataset(tmp_path / "missing.parquet")


def test_a_column_named_twice_fails_the_dataset(tmp_path: Path) -> None:
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["id", "id"])
    pq.write_table(table, tmp_path / "d.parquet")
    with pytest.raises(DatasetError, match="column\\(s\\) 'id' more than once"):
        load_dataset(tmp_path / "d.parquet")


def test_without_pyarrow_a_parquet_dataset_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_parquet(tmp_path / "d.parquet", {"id": pa.array(["a"])})
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DatasetError) as raised:
        load_dataset(path, "data/d.parquet")
    assert str(raised.value) == (
        "data/d.parquet: reading Parquet needs pyarrow; pip install 'pytest-ragmetrics[parquet]'"
    )


# -- compressed JSONL -------------------------------------------------------------------

# Good rows, bad rows, a BOM, every line end, a byte that is not UTF-8, a blank line.
JSONL = (
    b'\xef\xbb\xbf{"id": "a", "answer": "Paris"}\r\n'
    b'{"id": "b\xff"}\n'
    b"{broken\r"
    b"\r\n"
    b'{"answer": "no id", "tokens": "many"}\n'
    b'{"id": "a"}\r'
    b'{"id": "c", "latency_ms": NaN}'
)


def zst(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize(
    ("name", "compress"), [("d.jsonl.gz", gzip.compress), ("d.JSONL.ZST", zst)]
)
def test_compressed_jsonl_loads_as_its_text_does(tmp_path: Path, name: str, compress: Any) -> None:
    plain = tmp_path / "d.jsonl"
    plain.write_bytes(JSONL)
    packed = tmp_path / name
    packed.write_bytes(compress(JSONL))
    expected = found(load_dataset(plain, "d").rows)
    assert [(line, row_id) for line, row_id, _, _ in expected][::2] == [
        (1, "a"),
        (3, "L3-" + hashlib.sha1(b"{broken").hexdigest()[:8]),
        (6, "a@L6"),
    ]
    assert "at line 2, byte 9 of the line (44 of the file)" in expected[1][3][0][1]
    dataset = load_dataset(packed, "d")
    assert found(dataset.rows) == expected
    assert dataset.sha256 == hashlib.sha256(packed.read_bytes()).hexdigest()


@pytest.mark.parametrize("compress", [gzip.compress, zst])
def test_members_or_frames_one_after_another_are_one_text(tmp_path: Path, compress: Any) -> None:
    path = tmp_path / ("d.jsonl.gz" if compress is gzip.compress else "d.jsonl.zst")
    path.write_bytes(compress(b'{"id": "a"}\n{"id"') + compress(b': "b"}\n'))
    assert [(r.row.line, r.row.id, r.problems) for r in load_dataset(path).rows] == [
        (1, "a", ()),
        (2, "b", ()),
    ]


@pytest.mark.parametrize(
    ("suffix", "compress", "name"), [(".gz", gzip.compress, "gzip"), (".zst", zst, "Zstandard")]
)
def test_damaged_compressed_data_fails_the_dataset_naming_the_file(
    tmp_path: Path, suffix: str, compress: Any, name: str
) -> None:
    rows = b"".join(
        json.dumps({"id": f"r{i}", "answer": "x" * i}).encode() + b"\n" for i in range(300)
    )
    whole = compress(rows)
    path = tmp_path / f"d.jsonl{suffix}"
    path.write_bytes(whole[: len(whole) - 5])
    with pytest.raises(DatasetError) as raised:
        load_dataset(path, f"data/d.jsonl{suffix}")
    assert str(raised.value) == (
        f"data/d.jsonl{suffix}: the {name} data ends early (the file is truncated); "
        "copy or compress the dataset again"
    )
    path.write_bytes(rows)  # not compressed at all
    with pytest.raises(DatasetError, match=rf"^data/d\.jsonl{suffix}: not valid {name} data \("):
        load_dataset(path, f"data/d.jsonl{suffix}")
    path.write_bytes(b"")
    assert load_dataset(path).rows == ()  # empty text: no rows, which collection refuses


def test_without_zstandard_a_zst_dataset_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(zst(b'{"id": "a"}\n'))
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(DatasetError) as raised:
        load_dataset(path, "d.jsonl.zst")
    assert str(raised.value) == (
        "d.jsonl.zst: reading .zst needs the zstandard package; "
        "pip install 'pytest-ragmetrics[zstd]'"
    )


@pytest.mark.parametrize(
    ("name", "fmt", "expected"),
    [
        ("d.ndjson.gz", None, "jsonl.gz"),
        ("run.2024.jsonl", None, "jsonl"),
        ("d.jsonl.zst", None, "jsonl.zst"),
        ("d.gz", "jsonl.gz", "jsonl.gz"),
    ],
)
def test_the_format_comes_from_the_last_two_suffixes(
    tmp_path: Path, name: str, fmt: str | None, expected: str
) -> None:
    from pytest_ragmetrics.data.dataset import dataset_format

    assert dataset_format(tmp_path / name, fmt) == expected
    with pytest.raises(DatasetError, match=r"\.jsonl or \.csv file \(or \.parquet, \.jsonl\.gz"):
        dataset_format(tmp_path / "d.csv.gz")


# -- reading in chunks ------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_chunk_boundaries_change_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(JSONL)
    whole = found(load_dataset(path).rows)
    csv_path = tmp_path / "d.csv"
    csv_path.write_bytes(b'id,answer\r\na,"two\r\nlines"\rb,x\n')
    csv_whole = found(load_dataset(csv_path).rows)
    monkeypatch.setattr(streams, "CHUNK", chunk)
    assert found(load_dataset(path).rows) == whole
    assert found(load_dataset(csv_path).rows) == csv_whole


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"\r", b"\n", b"\r\n", b"\xe2\x80\xa8", b"x"]), max_size=30),
    st.lists(st.integers(min_value=0, max_value=40), max_size=8),
)
def test_lines_from_chunks_are_splitlines_of_the_whole(
    pieces: list[bytes], cuts: list[int]
) -> None:
    text = b"".join(pieces)
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    chunks = [text[start:end] for start, end in itertools.pairwise(bounds)]
    assert list(streams._physical_lines(chunks)) == text.splitlines(keepends=True)
