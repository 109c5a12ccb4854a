"""Dataset-level evals: the ``rows`` fixture and the metrics that describe a set of rows.

A test that takes ``rows`` (instead of ``row``) runs once over every row of its dataset.
The fixtures here compute one set of statistics over those rows and record it for the
eval, where thresholds.toml gates it like any aggregate (``embedding_space.avg_nn_distance``,
``ux.cache_hit_rate``, ``sources.chunk_utilization``)::

    def test_space(rows, embedding_space):
        space = embedding_space(rows, field="contexts", k=5)
        assert space.effective_dimensionality >= 10

The computations live in ``pytest_ragmetrics.metrics.space`` (without pytest); each
fixture returns their frozen result, and a row that lacks a field the metric needs makes
the test error with file, line and field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragmetrics.data.dataset import Row, RowError
from pytest_ragmetrics.metrics.base import DatasetMeasured, MetricSettings
from pytest_ragmetrics.metrics.catalog import DECLARATION_MARK, Declared
from pytest_ragmetrics.metrics.space.embedding import EMBEDDING_SPACE, measure_embedding_space
from pytest_ragmetrics.metrics.space.points import PICTURE_DETAIL, eval_points
from pytest_ragmetrics.metrics.space.sources import SOURCES, SourcesResult, measure_sources
from pytest_ragmetrics.metrics.space.ux import DEFAULT_CACHE_TAU, UX, UxResult, measure_ux

if TYPE_CHECKING:  # the geometry, and numpy, are imported when a dataset metric runs
    from pytest_ragmetrics.embeddings.model import Vectors
    from pytest_ragmetrics.metrics.space import EmbeddingSpace
from pytest_ragmetrics.plugin.fixtures import refuse_late
from pytest_ragmetrics.plugin.state import (
    DATASET_RECORDER_KEY,
    DatasetParam,
    DatasetRecorder,
    dataset_param,
    embedding_store,
    run_state,
)

# The picture of each eval's embedding space this process made, by eval label: the
# eval's other dataset-level tests here carry the same one without making it again.
PICTURES_KEY = pytest.StashKey[dict[str, dict[str, Any]]]()


@pytest.fixture
def rows(request: pytest.FixtureRequest) -> list[Row]:
    """Every row of the test's dataset, for dataset-level metrics; bad rows fail the test
    (or, with ``row_errors = "skip"``, are left out and counted)."""
    param = getattr(request, "param", None)
    if not isinstance(param, DatasetParam):
        raise pytest.UsageError(
            f"{request.node.nodeid} takes `rows` but has no dataset: "
            f'mark it with @pytest.mark.ragmetrics(dataset="path/to/rows.jsonl")'
        )
    good = [loaded.row for loaded in param.loaded if not loaded.problems]
    recorder = DatasetRecorder(good)
    request.node.stash[DATASET_RECORDER_KEY] = recorder
    bad = param.bad_rows()
    if bad:
        if run_state(request.config).thresholds.settings.row_errors != "skip":
            message = f"{len(bad)} problem(s) in the dataset:\n" + "\n".join(bad)
            recorder.fail(message)
            pytest.fail(message, pytrace=False)
        recorder.details["bad_rows_left_out"] = bad
    return good


@dataclass(frozen=True)
class DatasetMetric:
    """A dataset-level metric bound to the running test: call it with the test's ``rows``."""

    name: str
    recorder: DatasetRecorder
    request: pytest.FixtureRequest
    # Whether computing it carries the picture of the eval's embedding space: the built-in
    # metrics embed the eval's texts anyway; a metric of the user's may not embed at all.
    draws = True

    def check(self, rows: Sequence[Row]) -> None:
        if rows is not self.recorder.rows:
            raise TypeError(
                f"{self.name}() takes the test's own `rows` fixture; "
                "for other data use pytest_ragmetrics.metrics.space"
            )

    def embed(self, texts: Sequence[str]) -> Vectors:
        return embedding_store(self.request.config).embed(texts)

    def run(self, rows: Sequence[Row], compute: Callable[[], DatasetMeasured]) -> Any:
        """Compute on the test's own ``rows``, record the statistics and return the result;
        a bad row or argument fails the eval's record too."""
        self.check(rows)
        try:
            measured = compute()
        except (RowError, ValueError) as error:
            self.recorder.fail(f"{self.name}: {error}")
            raise
        self.recorder.record(self.name, dict(measured.stats), measured.details)
        if self.draws:
            self.picture()
        return measured.result

    def picture(self) -> None:
        """Carry the picture of the eval's embedding space (``metrics.space.projection``)
        for the reports that draw it, HTML and JSON; a run that writes neither makes
        none. Made once per process and eval; every dataset-level test of the eval that
        computes a built-in metric carries it, so which one the controller keeps is the
        last by name (``results.summary``) however xdist spread them. The texts it draws
        (at most the projection limit) are embedded through the run's store, like the
        metric's own; those the cache does not hold yet are encoded in one batch, so
        under xdist their float32 vectors, and the coordinates, can differ in the last
        bits from a run without it (docs/reports.md#embedding-space)."""
        config = self.request.config
        options = run_state(config).options
        param = dataset_param(self.request.node)
        if param is None or (options.html_path is None and options.json_path is None):
            return
        made = config.stash.setdefault(PICTURES_KEY, {})
        picture = made.get(param.info.label)
        if picture is None:
            from pytest_ragmetrics.metrics.space.projection import eval_picture

            picture = made[param.info.label] = eval_picture(
                eval_points(self.recorder.rows),
                self.embed,
                options.projection_limit,
                options.projection_seed,
                options.projection_umap,
            )
        self.recorder.details[PICTURE_DETAIL] = picture


class EmbeddingSpaceMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        field: str = "contexts",
        k: int = 5,
        exact_limit: int = 2048,
        seed: int = 0,
    ) -> EmbeddingSpace:
        """Tier 0 geometry of ``field``'s embeddings over ``rows``; see ``embedding_space``."""
        result: EmbeddingSpace = self.run(
            rows,
            lambda: measure_embedding_space(
                rows, self.embed, field, k, exact_limit, seed, self.name
            ),
        )
        return result


class UxMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        cache: Sequence[str] | None = None,
        tau: float = DEFAULT_CACHE_TAU,
    ) -> UxResult:
        """Cache hits of the questions against ``cache`` (past questions; cosine > tau),
        and the coherence of consecutive questions in each session (``session_id`` and
        ``turn``). Without a cache, or without sessions, those statistics are left out."""
        if isinstance(cache, str):
            raise TypeError("ux(rows, cache=...): cache is a list of past questions, not a string")
        result: UxResult = self.run(
            rows, lambda: measure_ux(rows, self.embed, cache, tau, self.name)
        )
        return result


class SourcesMetric(DatasetMetric):
    def __call__(
        self,
        rows: Sequence[Row],
        corpus: Sequence[str],
        k: int | None = None,
        n_topics: int | None = None,
        seed: int = 0,
    ) -> SourcesResult:
        """Which of the ``corpus`` chunk ids the rows retrieved (``retrieved``, else the
        contexts' order; the first ``k`` when given), and with ``n_topics``, k-means topics
        of the questions with the chunks and URLs (contexts' ``url``) each topic reached."""
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise TypeError(f"sources(rows, k=...): k must be an integer >= 1, got {k!r}")
        result: SourcesResult = self.run(
            rows, lambda: measure_sources(rows, self.embed, corpus, k, n_topics, seed, self.name)
        )
        return result


@dataclass(frozen=True)
class CustomDatasetMetricFixture(DatasetMetric):
    """A dataset-level metric declared in user code (``pytest_ragmetrics.dataset_metric``)
    bound to the running test."""

    measure: Callable[[Sequence[Row], MetricSettings], DatasetMeasured]
    draws = False

    def __call__(self, rows: Sequence[Row]) -> dict[str, float]:
        """The declared statistics over the test's ``rows`` under the run's settings (its
        own ``[settings.<name>]`` among them), recorded for the gates."""
        settings = run_state(self.request.config).thresholds.settings
        result: dict[str, float] = self.run(rows, lambda: self.measure(rows, settings))
        return result


def define_dataset_metric_fixture(
    name: str,
    doc: str,
    measure: Callable[[Sequence[Row], MetricSettings], DatasetMeasured],
    module: str,
    declared: Declared,
) -> Any:
    """The pytest fixture of a dataset-level metric declared in user code: ``name(rows)``
    records its statistics, documented in ``pytest --fixtures`` by its declaration, which
    it carries (``plugin.catalog``) and is refused without."""

    def fixture(request: pytest.FixtureRequest, rows: list[Row]) -> CustomDatasetMetricFixture:
        refuse_late(request.config, declared)
        return CustomDatasetMetricFixture(name, _recorder(request), request, measure)

    fixture.__name__ = fixture.__qualname__ = name
    fixture.__doc__ = f"{doc}\n\nCall ``{name}(rows)``: records and returns the statistics."
    fixture.__module__ = module
    setattr(fixture, DECLARATION_MARK, declared)
    defined = pytest.fixture(name=name)(fixture)
    setattr(defined, DECLARATION_MARK, declared)  # what the run's catalog is read from
    return defined


def _recorder(request: pytest.FixtureRequest) -> DatasetRecorder:
    recorder: DatasetRecorder = request.node.stash[DATASET_RECORDER_KEY]  # set by `rows`
    return recorder


@pytest.fixture(name=EMBEDDING_SPACE.name)
def embedding_space_fixture(
    request: pytest.FixtureRequest, rows: list[Row]
) -> EmbeddingSpaceMetric:
    """Callable: ``embedding_space(rows, field="contexts", k=5)`` records Tier 0 geometry."""
    return EmbeddingSpaceMetric(EMBEDDING_SPACE.name, _recorder(request), request)


@pytest.fixture
def ux(request: pytest.FixtureRequest, rows: list[Row]) -> UxMetric:
    """Callable: ``ux(rows, cache=[...], tau=0.85)`` records cache hits and coherence."""
    return UxMetric(UX.name, _recorder(request), request)


@pytest.fixture
def sources(request: pytest.FixtureRequest, rows: list[Row]) -> SourcesMetric:
    """Callable: ``sources(rows, corpus=[...], n_topics=8)`` records chunk utilization."""
    return SourcesMetric(SOURCES.name, _recorder(request), request)
