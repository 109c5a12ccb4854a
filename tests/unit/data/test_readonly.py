"""A row's read-only view: read like the row, every change refused naming it."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.data.readonly import ReadOnlyRowError, read_only

DATA: dict[str, Any] = {
    "id": "r1",
    "answer": "Paris [CIT:d1].",
    "gold": ["Paris", "City of Light"],
    "contexts": [{"doc_id": "d1", "text": "Paris is the capital."}],
    "telemetry": {"rounds": 2, "stages": [("plan", 10)]},
}


def _row() -> Row:
    return Row("r1", "rows.jsonl", 1, 0, copy.deepcopy(DATA))


def test_the_view_reads_as_the_row() -> None:
    row = _row()
    view = read_only(row)
    assert (view.id, view.source, view.line, view.index) == ("r1", "rows.jsonl", 1, 0)
    assert view.data == row.data
    assert isinstance(view.gold, list)
    assert isinstance(view.contexts, list)
    assert isinstance(view.contexts[0], dict)
    assert json.loads(json.dumps(view.data)) == DATA | {
        "telemetry": {"rounds": 2, "stages": [["plan", 10]]}
    }
    assert view.gold + ["x"] == ["Paris", "City of Light", "x"]  # noqa: RUF005 (list's +)
    assert sorted(view.gold) == ["City of Light", "Paris"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda row: row.gold.append("x"), "row['gold'].append()"),
        (lambda row: row["gold"].extend(["x"]), "row['gold'].extend()"),
        (lambda row: row.gold.insert(0, "x"), "row['gold'].insert()"),
        (lambda row: row.gold.remove("Paris"), "row['gold'].remove()"),
        (lambda row: row.gold.pop(), "row['gold'].pop()"),
        (lambda row: row.gold.clear(), "row['gold'].clear()"),
        (lambda row: row.gold.sort(), "row['gold'].sort()"),
        (lambda row: row.gold.reverse(), "row['gold'].reverse()"),
        (lambda row: row.gold.__setitem__(0, "x"), "setting row['gold'][0]"),
        (lambda row: row.gold.__delitem__(0), "deleting row['gold'][0]"),
        (lambda row: row.gold.__iadd__(["x"]), "row['gold'] += ..."),
        (lambda row: row.gold.__imul__(2), "row['gold'] *= ..."),
        (
            lambda row: row.contexts[0].__setitem__("text", "x"),
            "setting row['contexts'][0]['text']",
        ),
        (lambda row: row.contexts[0].update(text="x"), "row['contexts'][0].update()"),
        (lambda row: row.contexts[0].pop("text"), "row['contexts'][0].pop()"),
        (lambda row: row.contexts[0].popitem(), "row['contexts'][0].popitem()"),
        (lambda row: row.contexts[0].setdefault("x", 1), "row['contexts'][0].setdefault()"),
        (lambda row: row.contexts[0].clear(), "row['contexts'][0].clear()"),
        (lambda row: row.contexts[0].__delitem__("text"), "deleting row['contexts'][0]['text']"),
        (lambda row: row.contexts[0].__ior__({"x": 1}), "row['contexts'][0] |= ..."),
        (lambda row: row.data.__setitem__("answer", "x"), "setting row.data['answer']"),
        (lambda row: row.telemetry.__setitem__("rounds", 3), "setting row['telemetry']['rounds']"),
    ],
)
def test_every_change_is_refused_naming_it(change: Callable[[Row], Any], named: str) -> None:
    row = _row()
    with pytest.raises(ReadOnlyRowError) as raised:
        change(read_only(row))
    assert str(raised.value).startswith(
        f"{named} would change the row, which a metric may only read"
    )
    assert isinstance(raised.value, TypeError)
    assert row.data == DATA  # the row itself is as loaded
    assert type(row.data["gold"]) is list


def test_an_augmented_assignment_to_a_field_leaves_the_row_unchanged() -> None:
    view = read_only(_row())
    gold = view.gold
    with pytest.raises(ReadOnlyRowError, match=r"^row\['gold'\] \+= \.\.\."):
        gold += ["x"]
    assert view.gold == DATA["gold"]


@pytest.mark.parametrize(
    "copied",
    [
        lambda value: copy.copy(value),
        lambda value: copy.deepcopy(value),
        lambda value: pickle.loads(pickle.dumps(value)),
        lambda value: (list if isinstance(value, list) else dict)(value),
    ],
)
def test_a_copy_is_plain_and_mutable(copied: Callable[[Any], Any]) -> None:
    view = read_only(_row())
    gold, context = copied(view.gold), copied(view.contexts[0])
    assert (type(gold), type(context)) == (list, dict)
    gold.append("x")
    context["text"] = "x"
    assert view.gold == DATA["gold"]
    assert view.contexts[0] == DATA["contexts"][0]
