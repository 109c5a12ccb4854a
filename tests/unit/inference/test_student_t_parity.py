"""Student's t distribution (``inference.student``, used by the t interval that widens a
mean's bootstrap interval) against ``scipy.stats.t``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student_t

from pytest_ragmetrics.inference.student import t_cdf, t_quantile

# Degrees of freedom a comparison meets: units - 1, up to resample_limit (5,000) - 1.
DFS = [1, 2, 3, 4, 5, 7, 10, 19, 29, 41, 59, 99, 199, 499, 1000, 2000, 4999]
POINTS = [-40.0, -8, -4, -2.5, -1.96, -1, -0.3, -0.05, -0.01, 0, 0.01, 0.05, 0.3, 1, 1.5, 2, 2.7, 6]
LEVELS = [0.5, 0.55, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.025, 0.005, 0.1]


@pytest.mark.parametrize("df", DFS)
def test_t_cdf_equals_scipy(df: int) -> None:
    for point in POINTS:
        expected = float(student_t.cdf(point, df))
        assert t_cdf(point, df) == pytest.approx(expected, abs=1e-10, rel=0), point
    assert t_cdf(float("inf"), df) == 1.0
    assert t_cdf(float("-inf"), df) == 0.0


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_equals_scipy(df: int) -> None:
    for level in LEVELS:
        expected = float(student_t.ppf(level, df))
        assert t_quantile(level, df) == pytest.approx(expected, rel=1e-10, abs=1e-12), level


def test_t_quantile_of_a_95_percent_interval() -> None:
    # the familiar table values: t(0.975; 1) = 12.7062..., t(0.975; 10) = 2.2281...
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736174698, rel=1e-10)
    assert t_quantile(0.975, 10) == pytest.approx(2.228138851986274, rel=1e-10)


def test_t_cdf_near_zero_equals_scipy() -> None:
    for df in (300, 2000, 4999):
        for point in (1e-6, -1e-6, 1e-4):
            expected = float(student_t.cdf(point, df))
            assert t_cdf(point, df) == pytest.approx(expected, abs=1e-12, rel=0), (df, point)


def test_t_cdf_and_quantile_invert_each_other() -> None:
    for df in (3, 59, 4999):
        for level in np.linspace(0.51, 0.999, 7):
            assert t_cdf(t_quantile(float(level), df), df) == pytest.approx(level, abs=1e-10)
