"""A metric's vouching gate (``MetricInfo.vouching``, a judge metric's agreement with
people): when it fails, every other gate on that metric in the eval fails as "cannot be
trusted", naming it; gates on other metrics, skipped gates and passing vouching gates
leave everything as it was."""

from __future__ import annotations

from pytest_ragmetrics.config.rules import parse_rule
from pytest_ragmetrics.config.thresholds import Gate
from pytest_ragmetrics.gates.evaluate import GateResult, Status, distrusted
from pytest_ragmetrics.metrics.base import UNIT, MetricInfo
from pytest_ragmetrics.metrics.catalog import Catalog, Declared, catalog_in_force

VOUCHED = MetricInfo(
    "graded", "a judged score", range=UNIT, derived=("agreement",), vouching=("agreement",)
)
OTHER = MetricInfo("plain", "another score", range=UNIT)
CATALOG = Catalog(
    [Declared(VOUCHED, None, "conftest.py:1"), Declared(OTHER, None, "conftest.py:2")]
)


def _result(metric: str, stat: str, rule: str, status: Status) -> GateResult:
    name = f"{metric}.{stat}"
    gate = Gate(name, metric, stat, parse_rule(rule))
    verdict = "holds" if status == "passed" else "FAILS"
    message = f"{name} {rule}: {verdict}: 0.4" if status != "skipped" else "skipped: partial run"
    return GateResult("test_eval.py", name, rule, status, message, gate=gate)


def test_a_failed_vouching_gate_fails_every_other_gate_on_its_metric() -> None:
    results = [
        _result("graded", "mean", ">= 0.3", "passed"),
        _result("graded", "agreement", ">= 0.6", "failed"),
        _result("graded", "p50", ">= 0.9", "failed"),
        _result("plain", "mean", ">= 0.3", "passed"),
    ]
    with catalog_in_force(CATALOG):
        marked = distrusted(results)
    assert [r.status for r in marked] == ["failed", "failed", "failed", "passed"]
    assert marked[0].message.splitlines()[0] == (
        "graded.mean: cannot be trusted: the gate graded.agreement failed, so graded's values "
        "are not trusted (graded.agreement >= 0.6: FAILS: 0.4)"
    )
    assert marked[0].message.splitlines()[1:] == results[0].message.splitlines()
    assert marked[1] == results[1]  # the vouching gate itself is as it was
    assert marked[2].message.startswith("graded.p50: cannot be trusted:")
    assert marked[3] == results[3]  # another metric


def test_a_passing_or_skipped_vouching_gate_changes_nothing() -> None:
    passing = [
        _result("graded", "agreement", ">= 0.6", "passed"),
        _result("graded", "mean", ">= 0.3", "passed"),
    ]
    skipped = [
        _result("graded", "agreement", ">= 0.6", "failed"),
        _result("graded", "mean", ">= 0.3", "skipped"),
    ]
    with catalog_in_force(CATALOG):
        assert distrusted(passing) == passing
        assert distrusted(skipped) == skipped  # a skipped gate stays skipped
