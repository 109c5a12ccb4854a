"""``pytest_ragmetrics.metric``: declare a per-row metric once, in a conftest.py, and get
its fixture, its gates, its baseline and its report rows from the same catalog as the
built-in metrics::

    from pytest_ragmetrics import metric

    @metric(requires=("answer",), range=(0, 1))
    def short_answer(row):
        \"\"\"1 when the answer has at most 20 words, else 0.\"\"\"
        return float(len(row.answer.split()) <= 20)

Declaring returns the metric's pytest fixture, which carries the declaration and which
pytest finds under the function's name. thresholds.toml is read when the run is
configured, after pytest imported the conftest.py files of the command-line paths and
their parents (and ``-p`` plugins): the run's catalog holds the metrics those modules
declare (``plugin.catalog``), and their gates can be read. One declared later (a
conftest.py deeper than the command-line path, a test module) is refused when a test uses
it (``fixtures.late_declaration``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.metrics.base import Presentation
from pytest_ragmetrics.metrics.catalog import (
    Declared,
    declarations_in,
    refuse_builtin_name,
    refuse_clash,
)
from pytest_ragmetrics.metrics.custom import (
    CorpusFunction,
    DatasetFunction,
    DeclarationError,
    MetricFunction,
    check_version,
    declare,
    declare_dataset,
)
from pytest_ragmetrics.plugin.dataset_fixtures import define_dataset_metric_fixture
from pytest_ragmetrics.plugin.fixtures import define_metric_fixture

__all__ = ["dataset_metric", "metric"]


def metric(
    function: MetricFunction | None = None,
    *,
    name: str | None = None,
    requires: Sequence[str] = (),
    range: tuple[float, float] | None = None,
    binary: bool = False,
    corpus: Mapping[str, CorpusFunction] | None = None,
    version: str | int | None = None,
    settings: type | None = None,
    signed: Sequence[str] | None = None,
    presentation: Presentation | None = None,
) -> Any:
    """Declare ``function(row) -> value | (value, evidence)`` as a metric.

    ``name``: the metric's, its fixture's and its gates' name (default: the function's);
    ``requires``: the row fields it reads (a row without one errors with file:line before
    the test runs); ``range``: the closed interval its values lie in (a value outside
    errors the row); ``binary``: its values are 0 or 1, and gates may use ``rate``;
    ``corpus``: statistics of the whole eval from the rows' summed sufficient statistics,
    ``{"micro_f1": function(sums) -> number}``, each row returning
    ``RowValue(value, evidence, stats={...})``. The docstring is its definition: the first
    line is the reports' description. ``version``: change it when the metric computes
    something else: its gates against a baseline stored under another version fail, not
    compared (the baseline's other metrics still are). ``settings``: a frozen dataclass
    whose fields (each with a default) are the metric's settings, read from
    ``[settings.<name>]`` of thresholds.toml (an unknown key, or a value of the wrong type
    for its field's annotation, stops the run naming it); the function is then called as
    ``function(row, settings)``. ``signed``: the fields that change the metric's values
    (default: every field); when one differs from its default it enters the baseline's
    signature, and a baseline stored with another value is not compared.
    ``presentation``: how the reports show it, as a built-in metric declares it
    (``Presentation``: its label, its table columns, its place among the plots); by
    default it is listed under "More metrics" by its name.

    Returns the metric's pytest fixture: ``name(row) -> Score``, recorded like ``f1``.
    A malformed declaration or a name already taken raises ``DeclarationError`` naming
    both places.
    """

    def decorate(function: MetricFunction) -> Any:
        declared = declare(
            function, name, requires, range, binary, corpus, settings, signed, presentation
        )
        _refuse_plugin_fixture(declared.name, declared.origin)
        spec = declared.spec()
        checked = check_version(declared.origin, declared.name, version)
        declaration = Declared(spec.records[0], spec, declared.origin, checked)
        _refuse_taken(declaration, function.__globals__)
        return define_metric_fixture(spec, function.__module__, declaration)

    return decorate if function is None else decorate(function)


def dataset_metric(
    function: DatasetFunction | None = None,
    *,
    name: str | None = None,
    requires: Sequence[str] = (),
    stats: Sequence[str] = (),
    version: str | int | None = None,
    settings: type | None = None,
    signed: Sequence[str] | None = None,
    presentation: Presentation | None = None,
) -> Any:
    """Declare ``function(rows) -> {statistic: value}`` as a dataset-level metric: one set
    of statistics over all the rows of an eval, like ``embedding_space``.

    ``stats``: the statistics it returns, exactly (gates name them ``name.stat``);
    ``requires``: the row fields it reads; ``version``, ``settings``, ``signed`` and
    ``presentation``: as for ``metric``, checked by the same code (with ``settings``, the
    function is called as ``function(rows, settings)``; a ``Column`` of ``presentation``
    names one of ``stats``). Returns its fixture, which a test taking ``rows`` calls:
    ``name(rows) -> {statistic: value}``. A missing or undeclared statistic, a value that
    is not a finite number, or an exception makes the test (and the eval's record) an
    error naming the metric.
    """

    def decorate(function: DatasetFunction) -> Any:
        declared = declare_dataset(function, name, requires, stats, settings, signed, presentation)
        _refuse_plugin_fixture(declared.name, declared.origin)
        checked = check_version(declared.origin, declared.name, version)
        declaration = Declared(declared.info(), None, declared.origin, checked, declared.settings)
        _refuse_taken(declaration, function.__globals__)
        return define_dataset_metric_fixture(
            declared.name, declared.doc, declared.measure, function.__module__, declaration
        )

    return decorate if function is None else decorate(function)


# Fixtures of the plugin that are no metric: a metric of the same name would replace them.
RESERVED_FIXTURES = {
    "row": "fixtures.py",
    "rows": "dataset_fixtures.py",
    "ragmetrics_system": "fixtures.py",
    "ragmetrics_embed": "fixtures.py",
}


def _refuse_plugin_fixture(name: str, origin: str) -> None:
    module = RESERVED_FIXTURES.get(name)
    if module is not None:
        raise DeclarationError(
            f"{origin}: metric {name!r} would replace pytest-ragmetrics's own `{name}` "
            f"fixture (pytest_ragmetrics/plugin/{module}): give yours another name"
        )


def _refuse_taken(declared: Declared, module: Mapping[str, object]) -> None:
    """``DeclarationError`` naming both places when ``declared`` takes a built-in metric's
    name, or the name of another metric its own module (``module``, its globals as they
    are while it is imported) declared; a name two modules declare is refused when a run
    loads both (``metrics.catalog.Catalog``)."""
    refuse_builtin_name(declared)
    for other in declarations_in(module):
        if other.name == declared.name:
            refuse_clash(declared, other)
