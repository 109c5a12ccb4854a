"""No built-in metric is named outside its declaration: the layers above ``metrics/``
(``plugin/``, ``reports/``, ``results/``, ``gates/``, ``config/``) read what they need of a
metric from its ``MetricInfo`` / ``MetricSpec`` (its presentation, its kind, its range) or
import the constant its family module exports; none writes a metric's or a metric
fixture's name as a string literal (nor ``name.stat`` or ``name@k`` of one).

Read with ``ast`` from the source: every string constant (docstrings and the literal
parts of f-strings included) is compared whole with the catalog's built-in names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pytest_ragmetrics.data.dataset import VALIDATORS
from pytest_ragmetrics.metrics.catalog import BUILTIN_FIXTURES, BUILTIN_METRICS, DATASET_FIXTURES

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ragmetrics"
CHECKED = ("plugin", "reports", "results", "gates", "config")
NAMES = frozenset(BUILTIN_METRICS | BUILTIN_FIXTURES | set(DATASET_FIXTURES))
# A name whole, or with a statistic (``f1.mean``) or a level (``ndcg@10``).
_NAMED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+|@[0-9.]+)?")

# Row fields (data.dataset.VALIDATORS) that share their metric's name: the field a metric
# reads is named where the row is read, not the metric.
ROW_FIELDS = {
    "tokens": "the row field of the query's token counts, which the tokens metric reads",
    "latency_ms": "the row field of the query's latency, which latency_ms records",
}
# Keys of the report document (--ragmetrics-json) and the run history that are a word
# some metric is also named: each with the module that writes or reads it and why.
DOCUMENT_KEYS = {
    ("reports/model.py", "baseline"): "a gate's baseline value (gates[].baseline)",
    ("results/history.py", "baseline"): "a recorded gate's baseline value (runs[].gates[])",
    ("config/rules.py", "baseline"): "the rule grammar's word for the value compared with "
    "('<= 1.2x baseline'), not the baseline pairing metric",
}


def metric_literals(source: str, module: str) -> list[str]:
    """``line: 'literal'`` for each string constant of ``source`` naming a built-in metric
    or fixture that neither allow-list excuses in ``module``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        match = _NAMED.fullmatch(node.value)
        if match is None or match.group(1) not in NAMES:
            continue
        if node.value in ROW_FIELDS or (module, node.value) in DOCUMENT_KEYS:
            continue
        found.append(f"{node.lineno}: {node.value!r}")
    return found


MODULES = sorted(
    str(path.relative_to(PACKAGE))
    for folder in CHECKED
    for path in (PACKAGE / folder).rglob("*.py")
)


@pytest.mark.parametrize("module", MODULES)
def test_no_built_in_metric_is_named(module: str) -> None:
    found = metric_literals((PACKAGE / module).read_text(encoding="utf-8"), module)
    assert not found, (
        f"pytest_ragmetrics/{module} names built-in metrics: {', '.join(found)}; read them "
        "from the metric's declaration (MetricInfo.presentation) or import its family's "
        "constant"
    )


def test_the_lists_name_real_modules_and_fields() -> None:
    """An allow-list entry for a module or a field that no longer exists is stale."""
    assert set(ROW_FIELDS) <= set(VALIDATORS)
    for module, key in DOCUMENT_KEYS:
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
        assert key in literals, f"{module} no longer writes {key!r}: take it off DOCUMENT_KEYS"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('x = "f1"', ["1: 'f1'"]),
        ('x = "f1.mean"', ["1: 'f1.mean'"]),
        ('x = "ndcg@10"', ["1: 'ndcg@10'"]),
        ('x = f"{y}.mean"', []),  # no name: a statistic alone
        ('x = "f1 and more"', []),  # prose
        ('x = "tokens"', []),  # a row field
        ('x = "baseline"', ["1: 'baseline'"]),  # a document key only where listed
        ('x = "latency"', ["1: 'latency'"]),  # a fixture's name
    ],
)
def test_the_check_finds_a_named_metric(source: str, found: list[str]) -> None:
    assert metric_literals(source, "reports/terminal.py") == found


def test_a_listed_document_key_is_allowed_in_its_module_only() -> None:
    assert metric_literals('x = "baseline"', "reports/model.py") == []
    assert metric_literals('x = "baseline"', "reports/terminal.py") == ["1: 'baseline'"]
