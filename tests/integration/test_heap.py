"""A run that collects row tests keeps the garbage collector off what it holds to its end
(``pytest_ragmetrics.collector.Freezer``): frozen while the rows run, given back when the run
ends; a run without row tests, and a process that froze objects itself, are left alone.
Each project runs in this process, so the tests see the collector the run leaves."""

from __future__ import annotations

import gc

from helpers.project import ROWS, Project

ROW_TEST = """
import gc
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl")


def test_answers(row):
    assert gc.get_freeze_count() {expected}
"""


def test_rows_run_frozen_and_the_collector_gets_them_back(project: Project) -> None:
    project.write("thresholds.toml", "")
    project.write("test_eval.py", ROW_TEST.format(expected="> 0"))
    assert gc.get_freeze_count() == 0
    project.run().assert_outcomes(passed=len(ROWS))
    assert gc.get_freeze_count() == 0


def test_a_run_without_row_tests_freezes_nothing(project: Project) -> None:
    project.write(
        "test_eval.py", "import gc\n\ndef test_plain():\n    assert not gc.get_freeze_count()\n"
    )
    project.run().assert_outcomes(passed=1)


def test_a_freeze_made_before_the_run_is_left_alone(project: Project) -> None:
    project.write("thresholds.toml", "")
    gc.freeze()
    try:
        # Frozen objects that are freed leave the count: it can only fall, not grow.
        frozen = gc.get_freeze_count()
        project.write("test_eval.py", ROW_TEST.format(expected=f"<= {frozen}"))
        project.run().assert_outcomes(passed=len(ROWS))
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()


def test_with_the_collector_off_nothing_is_frozen(project: Project) -> None:
    project.write("thresholds.toml", "")
    project.write("test_eval.py", ROW_TEST.format(expected="== 0"))
    gc.disable()
    try:
        project.run().assert_outcomes(passed=len(ROWS))
    finally:
        gc.enable()
    assert gc.get_freeze_count() == 0


def test_a_run_lets_go_of_its_rows_results_when_it_ends(project: Project) -> None:
    """The project's result holds the run's config, as pytest does until the process
    exits: the rows' results, whole or packed, must not stay reachable through it."""
    from pytest_ragmetrics.results.rowstore import RowStore
    from pytest_ragmetrics.results.summary import RowResult

    project.write("thresholds.toml", "")
    project.write("test_eval.py", ROW_TEST.format(expected="> 0"))
    result = project.run()
    result.assert_outcomes(passed=len(ROWS))
    gc.collect()
    ids = {row["id"] for row in ROWS}
    assert [o for o in gc.get_objects() if type(o) is RowResult and o.id in ids] == []
    stores = [o for o in gc.get_objects() if type(o) is RowStore]
    assert [s for s in stores if {s.id_of(p) for p in range(len(s))} & ids] == []


BULK_TEST = """
import gc
import pytest

from pytest_ragmetrics.results.summary import RowResult

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", mode="bulk", batch_size=1)


def test_answers(row):
    # The records of the items before this one were gathered by now: frozen, the
    # collector's walks never meet them (gc.get_objects leaves the frozen out).
    walked = [o.id for o in gc.get_objects() if type(o) is RowResult]
    assert walked == [], walked
"""


def test_a_bulk_items_records_are_frozen_once_gathered(project: Project) -> None:
    project.write("thresholds.toml", "")
    project.write("test_eval.py", BULK_TEST)
    project.run().assert_outcomes(passed=len(ROWS))
    assert gc.get_freeze_count() == 0
