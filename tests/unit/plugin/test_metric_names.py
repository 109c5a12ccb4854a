"""The modules that run rows, merge their records and gate them name no built-in metric:
what they do for one is declared with it (``MetricSpec.prepare``, ``asks_judge``,
``reads_citations``; ``MetricInfo.aggregate``, ``merge``, ``signature``), read from the
catalog. A string literal equal to a metric's or a metric fixture's name is a metric
named by hand."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_ragmetrics.metrics.catalog import DATASET_FIXTURES, FIXTURES, METRICS

PACKAGE = Path(__file__).resolve().parents[3] / "pytest_ragmetrics"
OWN_PLUGIN_MODULES = (
    "session.py",
    "recording.py",
    "progress.py",
    "finish.py",
    "state.py",
    "bulk.py",
    "running.py",
    "rows.py",
    "collect.py",
    "gate_reports.py",
    "fixtures.py",
)
CHECKED = sorted(
    [
        *(PACKAGE / "plugin" / name for name in OWN_PLUGIN_MODULES),
        *(PACKAGE / "results" / name for name in ("summary.py", "stats.py")),
        *(PACKAGE / "gates").glob("*.py"),
    ]
)
# Names still written out, each with why: remove an entry when its reason is gone.
ALLOWED = {
    ("results/summary.py", "errors"): "ERRORS_METRIC, until metrics/ declares the constant",
}
NAMES = frozenset({*METRICS, *FIXTURES, *DATASET_FIXTURES})


def _named(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES
    ]


@pytest.mark.parametrize("path", CHECKED, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_metric_is_named_by_hand(path: Path) -> None:
    where = str(path.relative_to(PACKAGE))
    named = [
        f"{where}:{line}: {name!r}" for line, name in _named(path) if (where, name) not in ALLOWED
    ]
    assert not named, "declare it with the metric instead: " + "; ".join(named)


def test_a_metric_named_by_hand_is_found(tmp_path: Path) -> None:
    written = tmp_path / "module.py"
    written.write_text('TRUST = "trust"\nFIELD = "question"\n', encoding="utf-8")
    assert _named(written) == [(1, "trust")]
