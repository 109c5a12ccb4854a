"""Row ids packed as bytes read back as the strings they were."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragmetrics.data.packed import PackedStrings


@given(st.lists(st.text()))
def test_packed_strings_read_back_as_a_tuple_of_them(strings: list[str]) -> None:
    packed = PackedStrings(strings)
    assert len(packed) == len(strings)
    assert list(packed) == strings
    assert [packed[i] for i in range(-len(strings), len(strings))] == strings * 2
    assert packed == tuple(strings)
    assert packed[1:3] == strings[1:3]


def test_ids_json_can_hold_read_back_unchanged() -> None:
    """An empty id, accents, an emoji and a lone surrogate (valid in JSON, not in UTF-8)."""
    ids = ["", "q1", "é", "\U0001f600", "r\udcff"]
    packed = PackedStrings(ids)
    assert list(packed) == ids
    assert packed != ["", "q1", "é", "\U0001f600", "r"]
    with pytest.raises(IndexError):
        packed[5]
