"""The line of each key of a TOML file (for annotating a gate's line of thresholds.toml),
on the cases a line scan gets wrong: every expected line counted by hand."""

from __future__ import annotations

import tomllib

from pytest_ragmetrics.config.key_lines import key_lines

TRICKY = '''# "f1.mean" = "a comment, not a key"
[settings]
tau_sim = 0.65  # [gates] in a comment
idk_patterns = [
  "f1.mean = not a key",
  \'\'\'[gates]\'\'\',
]
note = """
[gates]
"f1.mean" = "inside a string"
"""

[ gates ]
"f1.mean"   =   ">= baseline - 0.01"
'em.rate'=">= 0.5"
"evals/x.py" = { "f1.mean" = ">= 0.2", 'latency_ms.p50' = false }

[gates . "evals/test_answers.py"]
  "f1.mean" = ">= 0.9"   # the same key in another table
"evals/y.py"."em.rate" = 1
"a \\"quoted\\" key" = 2
'''


def test_keys_are_found_at_their_lines_whatever_the_spacing() -> None:
    tomllib.loads(TRICKY)  # valid TOML, as every file scanned is
    lines = key_lines(TRICKY)
    assert lines[("settings",)] == 2
    assert lines[("settings", "tau_sim")] == 3
    assert lines[("settings", "note")] == 8
    assert lines[("gates",)] == 13
    assert lines[("gates", "f1.mean")] == 14
    assert lines[("gates", "em.rate")] == 15
    assert lines[("gates", "evals/x.py", "f1.mean")] == 16  # an inline table
    assert lines[("gates", "evals/x.py", "latency_ms.p50")] == 16
    assert lines[("gates", "evals/test_answers.py", "f1.mean")] == 19
    assert lines[("gates", "evals/test_answers.py", "evals/y.py", "em.rate")] == 20
    assert lines[("gates", "evals/test_answers.py", 'a "quoted" key')] == 21


def test_nothing_inside_a_string_or_a_comment_is_a_key() -> None:
    lines = key_lines(TRICKY)
    assert ("f1.mean",) not in lines  # line 1's comment
    assert not any(path[-1] == "f1.mean = not a key" for path in lines)
    # the [gates] table starts where its header is, not inside the strings above it
    assert lines[("gates",)] == 13


def test_an_empty_file_has_no_keys() -> None:
    assert key_lines("") == {}
    assert key_lines("# only a comment\n\n") == {}
