"""Loading datasets: formats, validation with file:line:field, stable ids."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from pytest_ragmetrics.data.dataset import MAX_DEPTH, DatasetError, load_dataset
from pytest_ragmetrics.files import resolved


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> dict[str, list[tuple[str, str]]]:
    return {r.row.id: [(p.field, p.message) for p in r.problems] for r in load_dataset(path).rows}


def test_jsonl_rows_keep_file_order_and_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"id": "b"}\n\n{"id": "a", "answer": "x"}\n{"id": 7}\n')
    dataset = load_dataset(path, "data/d.jsonl")
    assert [(r.row.id, r.row.line, r.row.index) for r in dataset.rows] == [
        ("b", 1, 0),
        ("a", 3, 1),
        ("7", 4, 2),
    ]
    assert dataset.rows[1].row.answer == "x"
    assert dataset.rows[1].row.where("gold") == "data/d.jsonl:3: field 'gold'"
    assert len(dataset.sha256) == 64


def test_rows_without_id_get_line_and_content_hash(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"answer": "x"}\n{"answer": "x"}\n')
    first, second = (r.row.id for r in load_dataset(path).rows)
    assert first.startswith("L1-")
    assert second.startswith("L2-")
    assert first[3:] == second[3:]  # same content, same hash
    assert load_dataset(path).rows[0].row.id == first  # stable across loads


def test_malformed_lines_are_row_problems_not_crashes(tmp_path: Path) -> None:
    text = '{"id": "ok"}\n{broken\n[1, 2]\n{"id": "n", "latency_ms": NaN}\n'
    found = problems(write(tmp_path, "d.jsonl", text))
    by_line = {row_id.split("-")[0]: issues for row_id, issues in found.items()}
    assert found["ok"] == []
    assert by_line["L2"][0][0] == "<json>"
    assert "expected a JSON object" in by_line["L3"][0][1]
    assert by_line["L4"][0][0] == "<json>"  # NaN refused, so the row id is not read


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("answer", 3, "expected a string"),
        ("gold", [], "non-empty list"),
        ("contexts", [{"doc_id": "d"}], "'text' must be a string"),
        ("contexts", "d1", "expected a list"),
        ("tokens", -1, "count >= 0"),
        ("tokens", {"prompt": 1}, "exactly 'prompt' and 'completion'"),
        ("tokens", [{"prompt_tokens": 1}], "'completion_tokens' is missing"),
        ("tokens", True, "expected an int"),
        ("latency_ms", -5, "milliseconds >= 0"),
        ("latency_ms", "fast", "milliseconds >= 0"),
        ("answerable", "yes", "true or false"),
        ("relevant", {"d1": "high"}, "doc_id: grade"),
        ("telemetry", [], "expected an object"),
        # integers no float can hold are not finite numbers; counts past 2**53 lose units
        ("latency_ms", 10**400, "an integer of 401 digits, too large for a float"),
        ("contexts", [{"doc_id": "d", "text": "t", "score": -(10**400)}], "finite number"),
        ("relevant", {"d1": 10**400}, "the grade of 'd1' must be a finite number"),
        ("tokens", 2**53 + 1, "at most 2**53"),
        ("tokens", {"prompt": 1, "completion": 10**400}, "at most 2**53"),
        ("tokens", [{"prompt_tokens": 2**60, "completion_tokens": 1}], "at most 2**53"),
        ("turn", -(2**53) - 1, "within ±2**53"),
    ],
)
def test_wrong_field_types_name_the_field(
    tmp_path: Path, field: str, value: object, fragment: str
) -> None:
    path = write(tmp_path, "d.jsonl", json.dumps({"id": "r", field: value}) + "\n")
    ((name, message),) = problems(path)["r"]
    assert name == field
    assert fragment in message


def test_unknown_fields_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"id": "r", "my_field": [1]}\n')
    loaded = load_dataset(path).rows[0]
    assert loaded.problems == ()
    assert loaded.row["my_field"] == [1]


def test_duplicate_ids_are_a_problem_of_the_later_row(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"id": "q"}\n{"id": "q"}\n')
    first, second = load_dataset(path).rows
    assert first.problems == ()
    assert second.row.id == "q@L2"
    assert "duplicate id 'q' (first used at line 1)" in second.problems[0].message


def test_ids_are_unique_per_system(tmp_path: Path) -> None:
    lines = [
        {"id": "q1", "system": "baseline"},
        {"id": "q1", "system": "config_a"},
        {"id": "q2", "system": "config_a"},
        {"id": "q1", "system": "baseline"},
    ]
    path = write(tmp_path, "d.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    dataset = load_dataset(path)
    assert dataset.systems == ("baseline", "config_a")
    assert [r.problems for r in dataset.rows[:3]] == [(), (), ()]
    last = dataset.rows[3]
    assert last.row.id == "q1@L4"
    assert last.problems[0].message == (
        "duplicate id 'q1' of system 'baseline' (first used at line 1)"
    )


def test_once_one_row_names_its_system_every_row_must(tmp_path: Path) -> None:
    text = '{"id": "q1", "system": "a"}\n{"id": "q2"}\nnot json\n'
    rows = load_dataset(write(tmp_path, "d.jsonl", text)).rows
    assert [[(p.field, p.message) for p in r.problems] for r in rows[:2]] == [
        [],
        [("system", "missing: other rows of this dataset name their system")],
    ]
    assert [p.field for p in rows[2].problems] == ["<json>"]  # unreadable: nothing to add
    assert load_dataset(write(tmp_path, "plain.jsonl", '{"id": "q"}\n')).systems == ()


def test_csv_cells_are_typed_and_lines_counted(tmp_path: Path) -> None:
    text = (
        "id,answer,gold,tokens,latency_ms,answerable,contexts\n"
        'a,"Paris [1].","[""Paris"", ""paris""]",120,850.5,true,'
        '"[{""doc_id"": ""d1"", ""text"": ""t""}]"\n'
        'b,"two\nlines",Rome,,12,false,\n'
        "c,,x,lots,1,maybe,\n"
    )
    dataset = load_dataset(write(tmp_path, "d.csv", text))
    a, b, c = dataset.rows
    assert a.problems == ()
    assert a.row.gold == ["Paris", "paris"]
    assert a.row["tokens"] == 120
    assert a.row["latency_ms"] == 850.5
    assert a.row.answerable is True
    assert a.row.context_ids == ["d1"]
    assert (b.row.line, b.row.answer, b.row.gold) == (3, "two\nlines", "Rome")
    assert "tokens" not in b.row.data  # an empty cell is an absent field
    assert c.row.line == 5
    assert c.row.answer == ""  # an empty answer is an answer
    assert {p.field for p in c.problems} == {"tokens", "answerable"}


def test_csv_rows_with_the_wrong_cell_count(tmp_path: Path) -> None:
    rows = load_dataset(write(tmp_path, "d.csv", "id,answer\na,b,c\n")).rows
    assert rows[0].problems[0].field == "<csv>"


def test_unknown_format_and_missing_file_fail_the_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"\.jsonl or \.csv"):
        load_dataset(write(tmp_path, "d.txt", ""))
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "missing.jsonl")
    rows = load_dataset(write(tmp_path, "d.data", '{"id": "x"}\n'), fmt="jsonl").rows
    assert rows[0].row.id == "x"


def test_unicode_line_separators_inside_json_strings_do_not_split_rows(tmp_path: Path) -> None:
    rows = [{"id": "a", "answer": "one\u2028two\u0085three"}, {"id": "b", "answer": "x"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows)
    loaded = load_dataset(write(tmp_path, "d.jsonl", text)).rows
    assert [(r.row.id, r.row.line, r.problems) for r in loaded] == [("a", 1, ()), ("b", 2, ())]
    assert loaded[0].row.answer == "one\u2028two\u0085three"


def test_csv_text_fields_are_never_read_as_json(tmp_path: Path) -> None:
    text = 'id,answer,gold,note\na,"[1] Paris is the capital.",Paris,"[draft]"\n'
    (loaded,) = load_dataset(write(tmp_path, "d.csv", text)).rows
    assert loaded.problems == ()
    assert loaded.row.answer == "[1] Paris is the capital."
    assert loaded.row["note"] == "[draft]"  # unknown fields stay text


def test_gold_answer_groups_load_and_empty_groups_are_refused(tmp_path: Path) -> None:
    rows = [
        {"id": "groups", "gold": [["a", "b"], ["c"]]},  # answer groups (ASQA, Trust-Score)
        {"id": "empty", "gold": [["a"], []]},
        {"id": "mixed", "gold": ["a", ["b"]]},
    ]
    path = write(tmp_path, "d.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    found = problems(path)
    assert found["groups"] == []
    for row_id in ("empty", "mixed"):
        ((field, message),) = found[row_id]
        assert field == "gold"
        assert "non-empty list of non-empty alias lists" in message


def test_counts_a_float_holds_exactly_are_accepted(tmp_path: Path) -> None:
    row = {"id": "r", "tokens": 2**53, "turn": -(2**53), "latency_ms": 10**300}
    assert problems(write(tmp_path, "d.jsonl", json.dumps(row) + "\n"))["r"] == []


def test_a_long_value_is_cut_short_in_its_message(tmp_path: Path) -> None:
    path = write(tmp_path, "d.jsonl", '{"id": "r", "latency_ms": "' + "9" * 398 + '"}\n')
    ((_, message),) = problems(path)["r"]
    assert message.endswith("... (400 characters)")
    assert len(message) < 200


def test_lone_surrogates_anywhere_in_a_row_are_problems_of_their_field(tmp_path: Path) -> None:
    lines = [
        r'{"id": "a", "answer": "Paris\ud800"}',
        r'{"id": "b", "contexts": [{"doc_id": "d", "text": "x\udfff"}]}',
        r'{"id": "c", "note": {"\udc80": 1}}',  # a key, nested
        r'{"id": "\udc80", "answer": "x"}',
        r'{"id": "pair", "answer": "\ud83d\ude00"}',  # a pair is one character: fine
    ]
    path = write(tmp_path, "d.jsonl", "\n".join(lines) + "\n")
    rows = load_dataset(path).rows
    found = {r.row.id: [(p.field, p.message) for p in r.problems] for r in rows}
    assert found["a"] == [
        (
            "answer",
            "not valid Unicode text: a lone surrogate (\\ud800), half of a character's \\u "
            "escape pair; write the character itself or both halves",
        )
    ]
    assert [field for field, _ in found["b"]] == ["contexts"]
    assert [field for field, _ in found["c"]] == ["note"]
    fallback = rows[3].row.id
    assert fallback.startswith("L4-")  # an id that cannot be printed is replaced
    assert [field for field, _ in found[fallback]] == ["id"]
    assert found["pair"] == []
    assert rows[4].row.answer == "\U0001f600"
    assert rows[0].row.answer == "Paris\\ud800"  # kept as escape text, safe to write
    for loaded in rows:  # everything a report may write encodes
        json.dumps([loaded.row.id, loaded.row.data], ensure_ascii=False).encode("utf-8")


def test_rows_nested_too_deep_are_row_problems(tmp_path: Path) -> None:
    def nested(row_id: str, levels: int) -> str:  # the row object is one level
        inner = "[" * (levels - 1) + "]" * (levels - 1)
        return f'{{"id": "{row_id}", "x": {inner}}}\n'

    text = (
        nested("at-limit", MAX_DEPTH)
        + nested("over", MAX_DEPTH + 1)
        + nested("recursion", 10_000)  # deeper than json.loads can recurse
        + '{"id": "ok"}\n'
    )
    rows = load_dataset(write(tmp_path, "d.jsonl", text)).rows
    assert [(r.row.line, [p.field for p in r.problems]) for r in rows] == [
        (1, []),
        (2, ["<json>"]),
        (3, ["<json>"]),
        (4, []),
    ]
    assert rows[1].problems == rows[2].problems
    assert f"nested deeper than {MAX_DEPTH} levels" in rows[1].problems[0].message


def test_csv_json_cells_nested_too_deep_are_problems_of_their_field(tmp_path: Path) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    over = "[" * MAX_DEPTH + "]" * MAX_DEPTH  # one more level than a cell may add
    text = f"id,retrieved,note\na,{deep},\nb,{over},\nc,[],{deep}\n"
    found = problems(write(tmp_path, "d.csv", text))
    assert [field for field, _ in found["a"]] == ["retrieved"]
    assert "nested deeper than" in found["a"][0][1]
    assert [field for field, _ in found["b"]] == ["retrieved"]
    assert found["c"] == []  # an unknown column stays text


def test_csv_cells_of_any_size_load_and_the_csv_limit_is_restored(tmp_path: Path) -> None:
    before = csv.field_size_limit()
    long_text = "word " * 40_000  # 200,000 characters, past csv's default limit
    text = f'id,answer\na,"{long_text}"\nb,x\n'
    rows = load_dataset(write(tmp_path, "d.csv", text)).rows
    assert [(r.row.id, r.problems) for r in rows] == [("a", ()), ("b", ())]
    assert rows[0].row.answer == long_text
    assert csv.field_size_limit() == before


def test_a_malformed_csv_record_is_its_first_line_and_reading_resumes(tmp_path: Path) -> None:
    text = 'id,answer\ng1,ok\nbad,"unclosed\ng2,fine\ng3,"x"y\ng4,"two\nlines"\n'
    rows = load_dataset(write(tmp_path, "d.csv", text)).rows
    found = [(r.row.line, r.row.id, [p.message for p in r.problems]) for r in rows]
    assert [(line, row_id) for line, row_id, _ in found if row_id.startswith("g")] == [
        (2, "g1"),
        (4, "g2"),
        (6, "g4"),
    ]
    assert rows[4].row.answer == "two\nlines"
    bad = {line: messages for line, row_id, messages in found if not row_id.startswith("g")}
    # line 3's quote runs on to the one on line 5 ("x"y); then line 5 alone is malformed
    quote = "not valid CSV: ',' expected after '\"'; check the quotes of this record"
    assert bad == {3: [quote], 5: [quote]}
    text = 'id,answer\ng1,ok\nbad,"unclosed\ng2,fine\n'
    rows = load_dataset(write(tmp_path, "e.csv", text)).rows
    assert [r.row.id for r in rows][::2] == ["g1", "g2"]
    assert rows[1].problems[0].message == (
        "not valid CSV: unexpected end of data; check the quotes of this record"
    )


def test_a_stray_quote_closed_at_the_end_of_a_later_field_cannot_be_told(
    tmp_path: Path,
) -> None:
    # The one undetectable case (README "Bad rows"): valid CSV of one record over lines.
    text = 'id,answer\nbad,"unclosed\ng2,fine"\ng3,x\n'
    rows = load_dataset(write(tmp_path, "d.csv", text)).rows
    assert [(r.row.id, r.row.answer, r.problems) for r in rows] == [
        ("bad", "unclosed\ng2,fine", ()),
        ("g3", "x", ()),
    ]
    # ... unless its cell count gives it away
    text = 'id,answer\nbad,"unclosed\ng2,fine",extra\ng3,x\n'
    first, _ = load_dataset(write(tmp_path, "e.csv", text)).rows
    assert first.problems[0].message == (
        "3 cells for 2 columns in the record of lines 2-3; check its quotes"
    )


def test_a_malformed_csv_header_fails_the_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"d\.csv:1: the header row is not valid CSV"):
        load_dataset(write(tmp_path, "d.csv", 'id,"answer\na,b\n'))
    with pytest.raises(DatasetError, match="'answer' more than once"):
        load_dataset(write(tmp_path, "e.csv", "id,answer,answer\na,b,c\n"))


def test_a_byte_that_is_not_utf8_spoils_only_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n{"id": "b\xff"}\n{"id": "c"}\n')
    rows = load_dataset(path).rows
    assert [r.row.id for r in rows][::2] == ["a", "c"]
    ((field, message),) = [(p.field, p.message) for p in rows[1].problems]
    assert field == "<utf-8>"
    assert message == (
        "not UTF-8 text: byte 0xff at line 2, byte 9 of the line (24 of the file); "
        "save the file as UTF-8"
    )
    csv_path = tmp_path / "d.csv"
    csv_path.write_bytes(b'id,answer\na,x\nb,"two\nli\xe9nes"\nc,y\n')
    rows = load_dataset(csv_path).rows
    assert [(r.row.line, [p.field for p in r.problems]) for r in rows] == [
        (2, []),
        (3, ["<utf-8>"]),  # the record starts on line 3; its bad byte is on line 4
        (5, []),
    ]
    assert "byte 0xe9 at line 4, byte 2 of the line" in rows[1].problems[0].message


def test_a_utf16_file_or_header_that_is_not_utf8_fails_the_dataset(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes('{"id": "a"}\n'.encode("utf-16"))
    with pytest.raises(DatasetError, match="UTF-16 text"):
        load_dataset(path)
    path = tmp_path / "d.csv"
    path.write_bytes(b"id,r\xe9ponse\na,b\n")
    with pytest.raises(DatasetError, match=r"d\.csv:1: the header row is not UTF-8 text"):
        load_dataset(path)


@pytest.mark.parametrize("end", [b"\r", b"\r\n", b"\n"])
def test_every_line_end_ends_a_line(tmp_path: Path, end: bytes) -> None:
    for name, text in [
        ("d.jsonl", b'{"id": "a"}' + end + b'{"id": "b"}' + end + end + b'{"id": "c"}'),
        ("d.csv", b"id,answer" + end + b"a,x" + end + b'b,"y' + end + b'z"' + end + b"c,w"),
    ]:
        path = tmp_path / name
        path.write_bytes(text)
        rows = load_dataset(path).rows
        assert [(r.row.id, r.row.line, r.problems) for r in rows][-1] == (
            "c",
            4 if name == "d.jsonl" else 5,
            (),
        )
    assert rows[1].row.answer == "y" + end.decode() + "z"


def test_made_up_ids_never_take_an_id_a_row_gives_itself(tmp_path: Path) -> None:
    lines = [
        {"id": "x"},
        {"id": "x"},  # renamed; "x@L2" is a real id below
        {"id": "x@L2"},
        {"id": "x@L2~2"},
        {"answer": "no id"},  # its fallback id is a real id below
        {"id": "L5-" + hashlib.sha1(b'{"answer": "no id"}').hexdigest()[:8]},
    ]
    path = write(tmp_path, "d.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    rows = load_dataset(path).rows
    ids = [r.row.id for r in rows]
    assert ids == ["x", "x@L2~3", "x@L2", "x@L2~2", ids[5] + "~2", ids[5]]
    assert [bool(r.problems) for r in rows] == [False, True, False, False, False, False]


def test_made_up_ids_are_unique_within_each_system(tmp_path: Path) -> None:
    lines = [
        {"id": "x", "system": "a"},
        {"id": "x", "system": "b"},  # another system: no duplicate
        {"id": "x", "system": "a"},
        {"id": "x@L3", "system": "b"},  # a real id of b: a's renamed row avoids it too
    ]
    path = write(tmp_path, "d.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    rows = load_dataset(path).rows
    assert [(r.row.system, r.row.id, bool(r.problems)) for r in rows] == [
        ("a", "x", False),
        ("b", "x", False),
        ("a", "x@L3~2", True),
        ("b", "x@L3", False),
    ]


def test_a_row_naming_no_system_shares_no_id_with_rows_of_systems(tmp_path: Path) -> None:
    # it is a bad row of every system, so "q1" would be two rows of system "a"
    text = '{"id": "q1"}\n{"id": "q1", "system": "a"}\n{"id": "q2"}\n{"id": "q2"}\n'
    rows = load_dataset(write(tmp_path, "d.jsonl", text)).rows
    assert [(r.row.id, [p.field for p in r.problems]) for r in rows] == [
        ("q1@L1", ["system"]),
        ("q1", []),
        ("q2", ["system"]),
        ("q2@L4", ["id", "system"]),
    ]


def test_a_system_that_is_no_string_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    text = '{"id": "a", "system": ["s"]}\n{"id": "b", "system": "s"}\n'
    rows = load_dataset(write(tmp_path, "d.jsonl", text)).rows
    assert rows[0].row.system is None
    assert [p.field for p in rows[0].problems] == ["system"]
    assert rows[1].problems == ()


def test_an_unreadable_path_fails_the_dataset(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    with pytest.raises(DatasetError, match="cannot read the dataset: Too many levels"):
        load_dataset(loop)
    with pytest.raises(DatasetError, match="cannot read the dataset: embedded null byte"):
        load_dataset(tmp_path / "nul\0.jsonl")
    assert resolved(loop) == loop  # left as it is, to fail when read
