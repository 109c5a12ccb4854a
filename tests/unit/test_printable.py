"""Text from the data made safe for a terminal, a CI log and GitHub's job summary."""

from __future__ import annotations

from pytest_ragmetrics.printable import printable_line, printable_lines, printable_text


def test_control_characters_are_escaped() -> None:
    assert printable_line("a\x1b[31mb\x07c") == "a\\x1b[31mb\\x07c"
    assert printable_line("\x00\t\r\x7f\x85\x9b") == "\\x00\\x09\\x0d\\x7f\\x85\\x9b"


def test_one_line_keeps_no_newline() -> None:
    assert printable_line("id\n::error::owned") == "id\\x0a::error::owned"


def test_a_workflow_command_at_the_start_of_a_line_is_defused() -> None:
    assert printable_line("::error::owned") == "\\x3a:error::owned"
    assert printable_line("  ::add-mask::x") == "  \\x3a:add-mask::x"
    assert printable_line("a :: b") == "a :: b"  # not at the start: GitHub runs nothing
    assert printable_line(":x") == ":x"


def test_text_keeps_its_lines_and_defuses_each() -> None:
    text = "answer \x1b[31m\x07\n::error::owned\nok"
    assert printable_text(text) == "answer \\x1b[31m\\x07\n\\x3a:error::owned\nok"
    assert printable_lines(["::a", "b\n::c"]) == ["\\x3a:a", "b\n\\x3a:c"]


def test_plain_text_is_left_as_it_is() -> None:
    text = "f1.mean >= 0.9 FAILS · q1 1 → 0 — café"
    assert printable_text(text) == text


def test_a_page_keeps_tabs_and_newlines_and_shows_every_other_control() -> None:
    from pytest_ragmetrics.printable import visible_controls

    text = "a\tb\nc\x1b[31m\x07\x00\x7f\x85::x"
    assert visible_controls(text) == "a\tb\nc\\x1b[31m\\x07\\x00\\x7f\\x85::x"
