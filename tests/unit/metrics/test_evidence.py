"""``Evidence``: a metric's evidence text, built when read and once; equal to its text;
pickled as its builder and arguments. The expected texts are written out by hand."""

from __future__ import annotations

import pickle

import pytest

from pytest_ragmetrics import Evidence

BUILDS: list[int] = []


def counted(count: int) -> str:
    BUILDS.append(count)
    return f"{count} word(s)"


def test_a_template_is_formatted_with_its_arguments() -> None:
    evidence = Evidence("best gold {!r}: precision {:.3g}", "Paris", 2 / 3)
    assert str(evidence) == "best gold 'Paris': precision 0.667"


def test_a_function_is_called_with_its_arguments_once_and_only_when_read() -> None:
    BUILDS.clear()
    evidence = Evidence(counted, 5)
    assert BUILDS == []
    assert str(evidence) == "5 word(s)"
    assert str(evidence) == "5 word(s)"
    assert BUILDS == [5]


def test_it_equals_and_hashes_as_its_text() -> None:
    evidence = Evidence("{} of {}", 1, 2)
    assert evidence == "1 of 2"
    assert evidence == Evidence("1 of {}", 2)
    assert evidence != "2 of 2"
    assert hash(evidence) == hash("1 of 2")
    assert repr(evidence) == "Evidence('1 of 2')"


def test_it_pickles_as_its_builder_and_arguments() -> None:
    BUILDS.clear()
    evidence = Evidence(counted, 3)
    copied = pickle.loads(pickle.dumps(evidence))
    assert BUILDS == []  # not built to be pickled
    assert str(copied) == "3 word(s)"
    assert str(pickle.loads(pickle.dumps(Evidence("{:g} ms", 12.5)))) == "12.5 ms"


def test_a_function_that_returns_no_string_is_an_error_naming_it() -> None:
    evidence = Evidence(len, "abc")
    with pytest.raises(TypeError, match=r"Evidence\(<built-in function len>, \.\.\.\) built int 3"):
        str(evidence)


def test_a_template_that_does_not_take_its_arguments_raises_when_built() -> None:
    evidence = Evidence("{} and {}", 1)  # made without complaint: nothing is built yet
    with pytest.raises(IndexError):
        str(evidence)
