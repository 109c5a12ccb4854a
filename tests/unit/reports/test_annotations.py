"""GitHub annotations: the workflow commands, escaped as GitHub documents, and capped."""

from __future__ import annotations

from pathlib import Path

from pytest_ragmetrics.config.rules import parse_rule
from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.gates.evaluate import GateResult
from pytest_ragmetrics.plugin.annotate import dataset_place, gate_annotations
from pytest_ragmetrics.reports.annotations import (
    ANNOTATIONS_SHOWN,
    Annotation,
    annotation_commands,
)
from pytest_ragmetrics.results.summary import EvalInfo


def test_a_command_escapes_its_properties_and_message() -> None:
    annotation = Annotation("error", "gate a::b, c: 100%", "line 1\r\nline 2: 5%", "d,e:f.toml", 7)
    assert annotation.command() == (
        "::error file=d%2Ce%3Af.toml,line=7,title=gate a%3A%3Ab%2C c%3A 100%25"
        "::line 1\\x0d%0Aline 2: 5%25"  # a carriage return is data: printed escaped
    )


def test_data_text_is_made_printable_before_it_is_escaped() -> None:
    command = Annotation("error", "row \x1b[31mr1", "::add-mask::x\n::error::y").command()
    assert "\x1b" not in command
    assert command.endswith("::\\x3a:add-mask::x%0A\\x3a:error::y")
    assert command.count("\n") == 0


def test_a_command_without_a_file_or_line() -> None:
    assert Annotation("error", "t", "m", "rows.db").command() == "::error file=rows.db,title=t::m"
    assert Annotation("notice", "t", "m").command() == "::notice title=t::m"


def test_gates_come_first_and_the_rest_is_counted_in_a_notice() -> None:
    gates = [Annotation("error", f"g{i}", "m") for i in range(3)]
    rows = [Annotation("error", f"r{i}", "m") for i in range(ANNOTATIONS_SHOWN - 3)]
    commands = annotation_commands(gates, rows, rows_left=25)
    assert [c.split("title=")[1].split("::")[0] for c in commands[:4]] == ["g0", "g1", "g2", "r0"]
    assert len(commands) == ANNOTATIONS_SHOWN + 1
    assert commands[-1].startswith("::notice title=pytest-ragmetrics%3A more annotations")
    assert "25 row(s) not annotated" in commands[-1]


def test_no_notice_when_nothing_is_left_out() -> None:
    assert annotation_commands([Annotation("error", "g", "m")], []) == ["::error title=g::m"]


def _failed(eval_label: str, name: str) -> GateResult:
    gate = Gate(name, *name.split("."), parse_rule(">= 0.9"))
    return GateResult(eval_label, name, ">= 0.9", "failed", "too low", 0.5, gate=gate)


THRESHOLDS = """[gates]
"f1.mean" = ">= 0.5"
"em.rate" = ">= 0.1"

[gates."evals/a.py"]
"f1.mean" = ">= 0.9"

[gates."evals/a.py[sys]"]
"em.rate" = ">= 0.9"
"""


def test_a_gate_is_annotated_at_the_table_it_comes_from(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(THRESHOLDS, encoding="utf-8")
    plain = EvalInfo("evals/a.py", "evals/a.py", "evals/rows.jsonl", "0" * 64, 3)
    system = EvalInfo("evals/a.py", "evals/a.py", "evals/rows.jsonl", "0" * 64, 3, system="sys")
    other = EvalInfo("evals/b.py", "evals/b.py", "evals/rows.jsonl", "0" * 64, 3)
    infos = {"evals/a.py": plain, "evals/a.py[sys]": system, "evals/b.py": other}
    results = [
        _failed("evals/a.py", "f1.mean"),  # its eval's table: line 6
        _failed("evals/a.py[sys]", "em.rate"),  # its system's table: line 9
        _failed("evals/a.py[sys]", "f1.mean"),  # from the eval's table: line 6
        _failed("evals/b.py", "f1.mean"),  # [gates]: line 2
    ]
    found = gate_annotations(results, infos, thresholds, tmp_path)
    assert [(a.file, a.line) for a in found] == [
        ("thresholds.toml", 6),
        ("thresholds.toml", 9),
        ("thresholds.toml", 6),
        ("thresholds.toml", 2),
    ]


def test_where_a_dataset_is(tmp_path: Path) -> None:
    assert dataset_place("evals/rows.jsonl", tmp_path).lined
    assert dataset_place("evals/rows.csv", tmp_path).lined
    assert not dataset_place("evals/rows.parquet", tmp_path).lined
    assert not dataset_place("evals/rows.jsonl.gz", tmp_path).lined
    sqlite = dataset_place("sql(evals/rows.db, answers)", tmp_path)
    assert (sqlite.file, sqlite.lined) == (tmp_path / "evals/rows.db", False)
    assert dataset_place("sql($DATABASE_URL, answers)", tmp_path).file is None


def test_a_rows_line_is_its_records_first_line_in_the_file(tmp_path: Path) -> None:
    from pytest_ragmetrics.plugin.annotate import DatasetPlace, _row_lines
    from pytest_ragmetrics.results.summary import RowResult

    # line 1 the header; r1 spans lines 2-3 (a quoted newline); r2 line 4; r3 line 5
    csv = 'id,answer,gold\nr1,"two\nlines",x\nr2,b,y\nr3,c,z\n'
    (tmp_path / "rows.csv").write_text(csv, encoding="utf-8")
    place = DatasetPlace(tmp_path / "rows.csv", lined=True)
    rows = [RowResult("r1", 0), RowResult("r2", 1), RowResult("r3", 2)]
    assert _row_lines(place, "rows.csv", rows) == {"r1": 2, "r2": 4, "r3": 5}
    # a row whose position holds another id now (the file changed): no line
    assert _row_lines(place, "rows.csv", [RowResult("r9", 1)]) == {}
