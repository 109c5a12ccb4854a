"""Property testing for metric authors: Hypothesis strategies for well-formed rows and
``check_metric``, which checks that a metric's values are finite, within its range,
deterministic and the same whichever citation format the answer uses
(docs/property-testing.md)::

    from pytest_ragmetrics.testing import check_metric

    def test_numbers_cited_properties():
        check_metric("numbers_cited")

The project's own metrics are checked with the same helpers
(tests/unit/metrics/test_properties.py). Hypothesis is an optional extra:
``pip install 'pytest-ragmetrics[testing]'``. Nothing here imports pytest.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError:  # pragma: no cover - the test environment has it
    raise ImportError(
        "pytest_ragmetrics.testing: Hypothesis is not installed; "
        "pip install 'pytest-ragmetrics[testing]'"
    ) from None

from pytest_ragmetrics.testing import strategies
from pytest_ragmetrics.testing.check import (
    CITATION_FORMAT,
    DECLARED_VALUE,
    DETERMINISTIC,
    FINITE,
    IN_RANGE,
    NO_ERROR,
    PROPERTIES,
    PropertyFailure,
    check_metric,
    measure,
    metric_spec,
)

__all__ = [
    "CITATION_FORMAT",
    "DECLARED_VALUE",
    "DETERMINISTIC",
    "FINITE",
    "IN_RANGE",
    "NO_ERROR",
    "PROPERTIES",
    "PropertyFailure",
    "check_metric",
    "measure",
    "metric_spec",
    "strategies",
]
