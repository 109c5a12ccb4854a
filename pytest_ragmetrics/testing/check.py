"""``check_metric``: the properties every per-row metric must have, checked on generated
rows through the same ``MetricSpec.compute`` its fixture calls.

The properties, each named in a failure with the metric and the shrunk row:

* ``no error``: a well-formed row holding the fields the metric requires gives a value;
* ``finite``: every value it records (and every sufficient statistic) is a finite number;
* ``in range``: every value lies in the range its declaration states (``MetricInfo.range``,
  0 or 1 for ``kind="binary"``), by the same check a run makes of every recorded value
  (``metrics.values``). A metric declared with ``pytest_ragmetrics.metric`` checks its
  values inside its computation too: a value that check refuses fails ``finite and in
  range``, with the declaration's message;
* ``deterministic``: the same row computed twice, and a deep copy of it, give the same
  values;
* ``citation-format invariant``: the answer written with ``[CIT:<doc_id>]`` markers under
  ``citation_format = "cit"`` and with ``[n]`` markers under ``citation_format =
  "numeric"`` gives the same values.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.embeddings.model import Vectors, embedder_for
from pytest_ragmetrics.metrics.base import PROPERTIES as BASE_PROPERTIES
from pytest_ragmetrics.metrics.base import Embed, Measured, MetricContext, MetricSpec
from pytest_ragmetrics.metrics.catalog import close_fixtures, declaration_of, in_force
from pytest_ragmetrics.metrics.custom import CustomMetricError
from pytest_ragmetrics.metrics.values import value_problem
from pytest_ragmetrics.testing.strategies import as_row
from pytest_ragmetrics.testing.strategies import rows as row_strategy
from pytest_ragmetrics.text.citations import Citation, find_citations

# The names are the declaration's (``MetricSpec.untested`` may leave one out).
PROPERTIES = BASE_PROPERTIES
NO_ERROR, FINITE, IN_RANGE, DETERMINISTIC, CITATION_FORMAT = PROPERTIES
DECLARED_VALUE = "finite and in range"  # a declared metric's own check of its values
DEFAULT_SETTINGS = settings(max_examples=50, deadline=None)  # no timing: embeddings vary


class PropertyFailure(AssertionError):
    """A metric broke a property on a generated row; the message names the metric, the
    property and the row."""

    def __init__(self, metric: str, prop: str, detail: str, row: Row) -> None:
        super().__init__(f"{metric}: property {prop!r} failed: {detail}\nrow: {_shown(row)}")
        self.metric, self.property, self.row = metric, prop, row


def _shown(row: Row) -> str:
    return json.dumps(dict(row.data), ensure_ascii=False, sort_keys=True, default=repr)


def metric_spec(metric: str | MetricSpec | Any) -> MetricSpec:
    """The catalog declaration ``metric`` names: a ``MetricSpec``, a fixture's name
    (``"f1"``), or what ``pytest_ragmetrics.metric`` returned."""
    if isinstance(metric, MetricSpec):
        return metric
    declared = declaration_of(metric)  # what pytest_ragmetrics.metric returned
    if declared is not None and declared.spec is not None:
        return declared.spec
    # pytest 8.4 and later give a fixture's name as `.name`, earlier ones as `__name__`
    # (plugin.fixtures.define_metric_fixture names the function after the metric).
    name = metric if isinstance(metric, str) else getattr(metric, "name", None)
    if not isinstance(name, str):
        name = getattr(metric, "__name__", None)
    fixtures = in_force().fixtures  # the run's catalog, while a run is under way
    if isinstance(name, str) and name in fixtures:
        return fixtures[name]
    close = close_fixtures(name) if isinstance(name, str) else ()
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise LookupError(
        f"check_metric: {metric!r} is no per-row metric of the catalog{hint}; pass a metric "
        "fixture's name, or the metric pytest_ragmetrics.metric declared (its module must "
        "be imported first)"
    )


class _CachedEmbed:
    """``embed`` with the model of the settings, loaded on first use; a text's vector is
    computed once, as the run's embedding cache gives it back."""

    def __init__(self, model: str, base_dir: Any) -> None:
        self._embedder = embedder_for(model, base_dir)
        self._vectors: dict[str, np.ndarray[Any, Any]] = {}

    def __call__(self, texts: Sequence[str]) -> Vectors:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._embedder.encode(missing), strict=True))
        if not texts:
            return np.zeros((0, 0), np.float32)
        return np.stack([self._vectors[text] for text in texts])


_EMBEDS: dict[tuple[str, Any], _CachedEmbed] = {}


def _default_embed(run: Settings) -> Embed:
    key = (run.embedding_model, run.base_dir)
    if key not in _EMBEDS:
        _EMBEDS[key] = _CachedEmbed(*key)
    return _EMBEDS[key]


def check_metric(
    metric: str | MetricSpec | Any,
    *,
    options: Mapping[str, Any] | None = None,
    rows: st.SearchStrategy[Row] | st.SearchStrategy[Mapping[str, Any]] | None = None,
    settings: settings | None = None,
    metric_settings: Settings | None = None,
    embed: Embed | None = None,
    properties: Iterable[str] = PROPERTIES,
) -> None:
    """Check ``metric``'s properties on generated rows; ``PropertyFailure`` on the first
    (shrunk) row that breaks one.

    ``metric``: a per-row metric of the catalog, by its fixture's name (``"f1"``) or as
    ``pytest_ragmetrics.metric`` returned it, or its ``MetricSpec``. ``options``: the
    fixture's keyword arguments (``{"k": 5}`` for ``hit_rate``). ``rows``: a strategy of
    rows (or of their field dicts), ``strategies.rows(requires=...)`` by default.
    ``settings``: Hypothesis's (50 examples, no deadline by default). ``metric_settings``:
    the run's ``[settings]`` (their defaults by default). ``embed``: texts -> vectors, for
    an embedding metric; the model of ``metric_settings``, loaded on first use, by
    default. ``properties``: which ones to check (``PROPERTIES``; a metric that reads one
    citation format by definition leaves out ``CITATION_FORMAT``). A property the
    declaration leaves out (``MetricSpec.untested``) is not checked; a declaration
    without property tests (``untested={"properties": ...}``) is a ``ValueError``.
    """
    spec = metric_spec(metric)
    chosen = tuple(properties)
    unknown = sorted(set(chosen) - set(PROPERTIES))
    if unknown:
        raise ValueError(f"check_metric: unknown properties {unknown}; they are {PROPERTIES}")
    if "properties" in spec.untested:
        raise ValueError(
            f"check_metric: {spec.fixture} is declared without property tests "
            f"({spec.untested['properties']}); check it with measure() on rows of your own"
        )
    chosen = tuple(prop for prop in chosen if prop not in spec.untested)
    run = metric_settings or Settings()
    checker = _Checker(spec, dict(options or {}), run, embed or _default_embed(run), chosen)
    strategy = rows if rows is not None else row_strategy(requires=spec.requires)

    def check(generated: Row | Mapping[str, Any]) -> None:
        checker.check(generated if isinstance(generated, Row) else as_row(generated))

    # Every check runs this one function: without its own key in Hypothesis's example
    # database, one metric's failing rows would be replayed on every other metric.
    key = repr((spec.fixture, sorted(checker.options.items()))).encode()
    check._hypothesis_internal_add_digest = key  # type: ignore[attr-defined]
    (settings or DEFAULT_SETTINGS)(given(strategy)(check))()


def measure(
    metric: str | MetricSpec | Any,
    row: Row,
    *,
    options: Mapping[str, Any] | None = None,
    metric_settings: Settings | None = None,
    embed: Embed | None = None,
) -> Measured:
    """``metric`` computed on ``row`` as its fixture computes it (``spec.compute``), for a
    property of one's own: ``measure("f1", row).values["f1"]``. The arguments are
    ``check_metric``'s; an error the metric raises is raised as it is."""
    spec = metric_spec(metric)
    run = metric_settings or Settings()
    context = MetricContext(run, embed or _default_embed(run))
    return spec.compute(row, context, **dict(options or {}))


@dataclasses.dataclass(frozen=True)
class _Checker:
    spec: MetricSpec
    options: dict[str, Any]
    run: Settings
    embed: Embed
    properties: tuple[str, ...]

    def check(self, row: Row) -> None:
        measured = self.compute(row, self.run)
        self.check_values(row, measured)
        if DETERMINISTIC in self.properties:
            self.check_deterministic(row, measured)
        if CITATION_FORMAT in self.properties:
            self.check_citation_formats(row)

    def compute(self, row: Row, run: Settings) -> Measured:
        context = MetricContext(run, self.embed)
        try:
            return self.spec.compute(row, context, **self.options)
        except CustomMetricError as error:
            if error.__cause__ is None:  # the declaration refused what it returned
                raise self.failure(DECLARED_VALUE, str(error), row) from None
            raise self.failure(NO_ERROR, str(error), row) from error
        except Exception as error:
            failure = f"{type(error).__name__}: {error}"
            raise self.failure(NO_ERROR, failure, row) from error

    def failure(self, prop: str, detail: str, row: Row) -> PropertyFailure:
        return PropertyFailure(self.spec.fixture, prop, detail, row)

    def check_values(self, row: Row, measured: Measured) -> None:
        named = {**measured.values}
        if measured.score is not None:
            named[self.spec.primary] = measured.score
        statistics = {
            f"{breakdown}.{part}": value
            for breakdown, parts in measured.breakdowns.items()
            for part, value in parts.items()
        }
        for name, value in {**named, **statistics}.items():
            if FINITE in self.properties and not _finite(value):
                raise self.failure(FINITE, f"{name} = {value!r} is not a finite number", row)
        if IN_RANGE in self.properties:
            for name, value in named.items():
                self.check_range(row, name, float(value))

    def check_range(self, row: Row, name: str, value: float) -> None:
        """The value against the declaration that names it, by the check a run makes of
        every recorded value (``metrics.values.value_problem``)."""
        base = name.partition("@")[0]
        info = next((info for info in self.spec.records if info.name == base), None)
        if info is None:
            records = ", ".join(info.name for info in self.spec.records)
            detail = f"{name} is recorded but not declared (the declaration lists {records})"
            raise self.failure(IN_RANGE, detail, row)
        why = value_problem(value, info)
        if why is not None:
            raise self.failure(IN_RANGE, f"{name} = {value!r}: {why}", row)

    def check_deterministic(self, row: Row, first: Measured) -> None:
        for again, how in ((row, "the same row again"), (copy.deepcopy(row), "a deep copy")):
            second = self.compute(again, self.run)
            if _outcome(second) != _outcome(first):
                detail = f"{_values(first)}, then on {how} {_values(second)}"
                raise self.failure(DETERMINISTIC, detail, row)

    def check_citation_formats(self, row: Row) -> None:
        written = _both_formats(row)
        if written is None:
            return  # two contexts share a doc id: [CIT:id] cannot name the second
        cit_row, numbered_row = written
        cit = self.compute(cit_row, dataclasses.replace(self.run, citation_format="cit"))
        numbered = self.compute(
            numbered_row, dataclasses.replace(self.run, citation_format="numeric")
        )
        if _scores(cit) != _scores(numbered):
            detail = (
                f"{_values(cit)} with [CIT:id] markers ({cit_row.answer!r}), "
                f"{_values(numbered)} with [n] markers ({numbered_row.answer!r})"
            )
            raise self.failure(CITATION_FORMAT, detail, row)


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _scores(measured: Measured) -> tuple[dict[str, float], float | None]:
    return dict(measured.values), measured.score


def _outcome(measured: Measured) -> tuple[Any, ...]:
    breakdowns = {name: dict(parts) for name, parts in measured.breakdowns.items()}
    return dict(measured.values), measured.score, measured.primary, breakdowns


def _values(measured: Measured) -> str:
    shown = dict(measured.values)
    if measured.score is not None:
        shown["(returned)"] = measured.score
    return json.dumps(shown, sort_keys=True)


# -- one answer in both citation formats ------------------------------------------------


def _both_formats(row: Row) -> tuple[Row, Row] | None:
    """``row`` with every citation of its answer and repeats written ``[CIT:<doc_id>]``,
    and written ``[n]``; ``None`` when two contexts share a doc id."""
    ids = [str(context.get("doc_id")) for context in row.contexts or ()]
    if len(set(ids)) != len(ids):
        return None
    return (
        _rewritten(row, lambda text: _rewrite(text, ids, _as_cit)),
        _rewritten(row, lambda text: _rewrite(text, ids, _as_numbered)),
    )


def _rewritten(row: Row, rewrite: Callable[[str], str]) -> Row:
    data = dict(row.data)
    if isinstance(data.get("answer"), str):
        data["answer"] = rewrite(data["answer"])
    if isinstance(data.get("repeats"), list):
        data["repeats"] = [rewrite(text) for text in data["repeats"]]
    return dataclasses.replace(row, data=data)


Writer = Callable[[Citation, Sequence[str], dict[object, str]], str]


def _rewrite(text: str, ids: Sequence[str], write: Writer) -> str:
    """``text`` with each marker (``[CIT:..]`` or ``[n]``, read as ``"auto"`` does)
    written by ``write``; an invalid citation stays invalid, one distinct invalid target
    per distinct invalid citation."""
    invalid: dict[object, str] = {}
    pieces, at = [], 0
    for citation in find_citations(text, ids, "auto"):
        if citation.start < at:  # the second citation of a "[1, 2]" marker
            pieces.append(write(citation, ids, invalid))
            continue
        pieces.extend([text[at : citation.start], write(citation, ids, invalid)])
        at = citation.end
    pieces.append(text[at:])
    return "".join(pieces)


def _as_cit(citation: Citation, ids: Sequence[str], invalid: dict[object, str]) -> str:
    if citation.doc_id is not None:
        return f"[CIT:{citation.doc_id}]"
    if citation.target not in invalid:
        invalid[citation.target] = _unused(ids, invalid, "missing")
    return f"[CIT:{invalid[citation.target]}]"


def _as_numbered(citation: Citation, ids: Sequence[str], invalid: dict[object, str]) -> str:
    if citation.doc_id is not None:
        return f"[{ids.index(citation.doc_id) + 1}]"
    if citation.target not in invalid:
        invalid[citation.target] = str(len(ids) + len(invalid) + 1)
    return f"[{invalid[citation.target]}]"


def _unused(ids: Sequence[str], invalid: Mapping[object, str], stem: str) -> str:
    taken = {*ids, *invalid.values()}
    n = len(invalid) + 1
    while f"{stem}-{n}" in taken:
        n += 1
    return f"{stem}-{n}"
