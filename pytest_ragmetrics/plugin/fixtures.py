"""The ``row`` fixture and the metric fixtures (``em``, ``f1``, ``abstain``, ...).

A metric fixture is a callable ``fixture(row) -> Score``. Calling it computes the metric
with the pure functions of ``pytest_ragmetrics.metrics``, records the value for the
eval's aggregate, and returns a ``Score``: a float that carries its evidence, so
``assert idk_citation(row) == 0`` fails showing the sentence and the marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Problem, Row, RowError
from pytest_ragmetrics.embeddings.model import Vectors, model_label
from pytest_ragmetrics.live.outputs import live_row, saved_row
from pytest_ragmetrics.live.system import LiveSystemError, systems_by_name
from pytest_ragmetrics.metrics import (
    Overlap,
    best_f1,
    exact_match,
    faithfulness,
    idk_citation,
    overlap,
    similarity_to_gold,
    token_usage,
)
from pytest_ragmetrics.metrics.base import (
    Compute,
    Measured,
    MetricContext,
    Texts,
    claim_text,
    golds,
    row_abstention,
)
from pytest_ragmetrics.metrics.experiment import (
    measure_anchor_coverage,
    measure_determinism,
    measure_em_short,
    measure_f1_short,
    measure_idk_on_answerable,
    measure_rounds,
    measure_wrong_on_answerable,
)
from pytest_ragmetrics.metrics.grounding import Claim, claims, overlap_texts, similarity_texts
from pytest_ragmetrics.metrics.judge import (
    CONSISTENCY,
    JUDGE_METRICS,
    JudgeRowError,
    judge_measure,
    measure_consistency,
)
from pytest_ragmetrics.metrics.judge import needs as judged_fields
from pytest_ragmetrics.metrics.measures import (
    measure_bleu,
    measure_exact_repeats,
    measure_judge_pipeline,
    measure_retrieval_consistency,
    measure_rouge,
    measure_semantic_repeats,
    measure_trust,
    retrieval_measure,
    semantic_repeat_texts,
    trust_texts,
)
from pytest_ragmetrics.plugin.state import (
    RECORDER_KEY,
    RowParam,
    RowRecorder,
    embedding_store,
    live_cache,
    llm_judge,
    located,
    row_param,
    run_state,
)

DETERMINISM = "determinism"  # needs the marker's `rerun` file; checked at collection


class Score(float):
    """A metric value that keeps the evidence behind it.

    It compares and computes like the float it is; its ``repr`` names the metric, the row
    and the evidence, which is what pytest prints when an assertion on it fails.
    """

    metric: str
    row_id: str
    evidence: str

    def __new__(cls, value: float, metric: str, row_id: str, evidence: str) -> Score:
        score = super().__new__(cls, value)
        score.metric, score.row_id, score.evidence = metric, row_id, evidence
        return score

    def __repr__(self) -> str:
        return f"{self.metric}={float(self):g} (row {self.row_id!r}: {self.evidence})"

    __str__ = __repr__


def measure_em(row: Row, ctx: MetricContext) -> Measured:
    answer, references = claim_text(row, "em", ctx.settings), golds(row, "em")
    value = exact_match(answer, references)
    verdict = "matches a gold" if value else f"matches none of {len(references)} gold(s)"
    return Measured({"em": value}, f"answer {verdict} after normalisation")


def measure_f1(row: Row, ctx: MetricContext) -> Measured:
    match = best_f1(claim_text(row, "f1", ctx.settings), golds(row, "f1"))
    evidence = (
        f"best gold {match.gold!r}: {match.common} common token(s), "
        f"precision {match.precision:.3g}, recall {match.recall:.3g}"
    )
    return Measured({"f1": match.score}, evidence)


def measure_abstain(row: Row, ctx: MetricContext) -> Measured:
    result = row_abstention(row, "abstain", ctx.settings)
    return Measured({"abstain": result.score}, result.reason)


def measure_idk_citation(row: Row, ctx: MetricContext) -> Measured:
    result = idk_citation(
        row.require("answer", "idk_citation"),
        row.context_ids,
        ctx.settings.idk_matcher,
        ctx.settings.citations,
    )
    if not result.cited:
        return Measured({"idk_citation": 0.0}, "no IDK sentence carries a citation")
    evidence = "; ".join(
        f"IDK sentence {c.sentence!r} carries {', '.join(c.markers)}" for c in result.cited
    )
    return Measured({"idk_citation": 1.0}, evidence)


def measure_tokens(row: Row, ctx: MetricContext) -> Measured:
    usage = token_usage(row.require("tokens", "tokens"))
    values = {"tokens": float(usage.total)}
    if usage.prompt is not None and usage.completion is not None:
        values["prompt_tokens"] = float(usage.prompt)
        values["completion_tokens"] = float(usage.completion)
    stages = ", ".join(f"{stage} {count}" for stage, count in usage.by_stage.items())
    breakdown = {stage: float(count) for stage, count in usage.by_stage.items()}
    return Measured(values, f"{usage.total} tokens ({stages})", {"tokens_by_stage": breakdown})


def measure_latency(row: Row, ctx: MetricContext) -> Measured:
    latency = float(row.require("latency_ms", "latency"))
    return Measured({"latency_ms": latency}, f"{latency:g} ms end to end")


def _claims(row: Row, metric: str, settings: Settings) -> list[Claim]:
    return claims(
        row.require("answer", metric),
        row.require("contexts", metric),
        settings.idk_matcher,
        settings.citations,
    )


def texts_overlap(row: Row, settings: Settings) -> list[str]:
    return overlap_texts(_claims(row, "overlap", settings))


def texts_faithfulness(row: Row, settings: Settings) -> list[str]:
    if row_abstention(row, "faithfulness", settings).abstains:
        return []  # an abstaining answer's faithfulness needs no similarity
    return overlap_texts(_claims(row, "faithfulness", settings))


def _overlap(row: Row, metric: str, ctx: MetricContext) -> Overlap:
    settings = ctx.settings
    answer, contexts = row.require("answer", metric), row.require("contexts", metric)
    if "overlap" not in ctx.memo:
        ctx.memo["overlap"] = overlap(
            answer,
            contexts,
            ctx.embed,
            settings.tau_sim,
            settings.idk_matcher,
            settings.citations,
        )
    result: Overlap = ctx.memo["overlap"]
    return result


def measure_overlap(row: Row, ctx: MetricContext) -> Measured:
    result = _overlap(row, "overlap", ctx)
    values = {"overlap": result.score}
    if not result.abstains and not row_abstention(row, "overlap", ctx.settings).abstains:
        values["overlap_answered"] = result.score
    details = {"sentences": [verdict.as_dict() for verdict in result.sentences]}
    return Measured(values, result.evidence(), details=details)


def measure_faithfulness(row: Row, ctx: MetricContext) -> Measured:
    abstaining = row_abstention(row, "faithfulness", ctx.settings)
    if abstaining.abstains:
        result = faithfulness(0.0, True, row.answerable)
        return Measured({"faithfulness": result.score}, f"{result.reason} ({abstaining.reason})")
    grounding = _overlap(row, "faithfulness", ctx)
    result = faithfulness(grounding.score, False, row.answerable)
    evidence = f"{result.reason}; overlap: {grounding.evidence()}"
    return Measured({"faithfulness": result.score}, evidence)


def texts_similarity(row: Row, settings: Settings) -> list[str]:
    answer = row.require("answer", "semantic_similarity")
    return similarity_texts(answer, golds(row, "semantic_similarity"), settings.citations)


def _similarity_measure(metric: str) -> Compute:
    def measure(row: Row, ctx: MetricContext) -> Measured:
        result = similarity_to_gold(
            row.require("answer", metric),
            golds(row, metric),
            ctx.embed,
            ctx.settings.citations,
        )
        return Measured({metric: getattr(result, metric)}, result.evidence(metric))

    return measure


@dataclass(frozen=True)
class MetricFixture:
    """A metric bound to the running test: call it with the test's ``row``."""

    name: str
    primary: str
    compute: Compute
    recorder: RowRecorder
    context: MetricContext
    options: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<metric fixture {self.name} for row {self.recorder.row.id!r}>"

    def __call__(self, row: Row, **options: Any) -> Score:
        if not isinstance(row, Row) or row.id != self.recorder.row.id:
            raise TypeError(
                f"{self.name}() takes the test's own `row` fixture "
                f"(row {self.recorder.row.id!r}); for other data use pytest_ragmetrics.metrics"
            )
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            takes = f"takes {', '.join(self.options)}" if self.options else "takes no options"
            raise TypeError(f"{self.name}(row, ...) {takes}; got {', '.join(unknown)}")
        try:
            measured = self.compute(row, self.context, **options)
        except RowError as error:
            if isinstance(error, JudgeRowError):  # keep what the failed judge call cost
                self.recorder.record({}, {}, None, error.details)
            self.recorder.fail(located(row, str(error)))
            raise
        primary = measured.primary or self.primary
        self.recorder.record(
            measured.values, measured.breakdowns, {primary: measured.evidence}, measured.details
        )
        value = measured.values[primary] if measured.score is None else measured.score
        return Score(value, primary, row.id, measured.evidence)


@dataclass(frozen=True)
class FixtureSpec:
    """A metric fixture: the metric it returns, how to compute it, the fields it needs."""

    primary: str
    compute: Compute
    requires: tuple[str, ...]
    texts: Texts | None = None  # the texts to embed, for the embedding metrics
    options: tuple[str, ...] = ()  # keyword arguments the fixture takes (k, gain)


FIXTURES: dict[str, FixtureSpec] = {
    "em": FixtureSpec("em", measure_em, ("answer", "gold")),
    "f1": FixtureSpec("f1", measure_f1, ("answer", "gold")),
    "abstain": FixtureSpec("abstain", measure_abstain, ("answer",)),
    "idk_citation": FixtureSpec("idk_citation", measure_idk_citation, ("answer",)),
    "tokens": FixtureSpec("tokens", measure_tokens, ("tokens",)),
    "latency": FixtureSpec("latency_ms", measure_latency, ("latency_ms",)),
    "overlap": FixtureSpec("overlap", measure_overlap, ("answer", "contexts"), texts_overlap),
    "faithfulness": FixtureSpec(
        "faithfulness", measure_faithfulness, ("answer", "contexts"), texts_faithfulness
    ),
    **{
        name: FixtureSpec(name, _similarity_measure(name), ("answer", "gold"), texts_similarity)
        for name in ("semantic_similarity", "dot_similarity", "euclidean_distance")
    },
    **{
        family: FixtureSpec(
            family,
            retrieval_measure(family),
            ("relevant",),
            options=("k", "gain") if family == "ndcg" else ("k",),
        )
        for family in ("hit_rate", "mrr", "recall", "precision", "ndcg")
    },
    "retrieval_consistency": FixtureSpec(
        "retrieval_consistency",
        measure_retrieval_consistency,
        ("retrieved_repeats",),
        options=("k",),
    ),
    **{
        name: FixtureSpec(name, measure_rouge(name), ("answer", "gold"))
        for name in ("rouge1", "rouge2", "rougeL")
    },
    "bleu": FixtureSpec("bleu", measure_bleu, ("answer", "gold")),
    "response_exact_match_rate": FixtureSpec(
        "response_exact_match_rate", measure_exact_repeats, ("answer", "repeats")
    ),
    "response_semantic_consistency": FixtureSpec(
        "response_semantic_consistency",
        measure_semantic_repeats,
        ("answer", "repeats"),
        semantic_repeat_texts,
    ),
    "judge_pipeline": FixtureSpec("judge_pipeline", measure_judge_pipeline, ("show", "show_gold")),
    "trust": FixtureSpec("trust", measure_trust, ("answer", "gold", "contexts"), trust_texts),
    "wrong_on_answerable": FixtureSpec(
        "wrong_on_answerable", measure_wrong_on_answerable, ("answer", "gold", "answerable")
    ),
    "idk_on_answerable": FixtureSpec(
        "idk_on_answerable", measure_idk_on_answerable, ("answer", "answerable")
    ),
    "rounds": FixtureSpec("rounds", measure_rounds, ("telemetry",)),
    "f1_short": FixtureSpec("f1_short", measure_f1_short, ("question", "answer", "gold")),
    "em_short": FixtureSpec("em_short", measure_em_short, ("question", "answer", "gold")),
    "anchor_coverage": FixtureSpec(
        "anchor_coverage", measure_anchor_coverage, ("question", "answer", "contexts")
    ),
    DETERMINISM: FixtureSpec(DETERMINISM, measure_determinism, ("answer",)),
    **{name: FixtureSpec(name, judge_measure(name), judged_fields(name)) for name in JUDGE_METRICS},
    CONSISTENCY: FixtureSpec(
        CONSISTENCY, measure_consistency, ("question", "answer"), options=("metric",)
    ),
}


def missing_fields(row: Row, fixture_names: list[str]) -> list[Problem]:
    """Fields the requested metric fixtures need that ``row`` lacks, one problem each."""
    needed: dict[str, list[str]] = {}
    for name in fixture_names:
        spec = FIXTURES.get(name)
        for field_name in spec.requires if spec else ():
            needed.setdefault(field_name, []).append(name)
    return [
        Problem(field_name, f"required by {', '.join(users)} but missing")
        for field_name, users in needed.items()
        if field_name not in row.data
    ]


def _metric_fixture(request: pytest.FixtureRequest, name: str) -> MetricFixture:
    spec = FIXTURES[name]
    recorder = request.node.stash[RECORDER_KEY]  # set by `row`, which every metric requires
    config = request.config

    def embed(texts: Sequence[str]) -> Vectors:
        return embedding_store(config).embed(texts)  # built on first use only

    param = row_param(request.node)
    context = MetricContext(
        run_state(config).thresholds.settings,
        embed,
        recorder.memo,
        recorder.rerun or (param.rerun if param is not None else None),
        lambda: llm_judge(config),
    )
    return MetricFixture(name, spec.primary, spec.compute, recorder, context, spec.options)


@pytest.fixture
def row(request: pytest.FixtureRequest) -> Row:
    """The dataset row this test runs on; a bad row errors here with file:line:field."""
    param = getattr(request, "param", None)
    if not isinstance(param, RowParam):
        raise pytest.UsageError(
            f"{request.node.nodeid} takes `row` but has no dataset: "
            f'mark it with @pytest.mark.ragmetrics(dataset="path/to/rows.jsonl")'
        )
    recorder = RowRecorder(param.row)
    request.node.stash[RECORDER_KEY] = recorder
    if param.problems:
        message = param.error_message()
        recorder.fail(message)
        if run_state(request.config).thresholds.settings.row_errors == "skip":
            pytest.skip(f"bad row: {message}")
        pytest.fail(message, pytrace=False)
    if param.live is None:
        return param.row
    try:
        return _answer_live(request, param, recorder)
    except LiveSystemError as error:
        recorder.fail(located(param.row, str(error)))
        raise


def _answer_live(request: pytest.FixtureRequest, param: RowParam, recorder: RowRecorder) -> Row:
    """Call the row's live system (or read its cached output) and give the test the
    question row with the output fields added."""
    assert param.live is not None  # checked by the caller
    where = request.node.nodeid
    systems = systems_by_name(request.getfixturevalue("ragmetrics_system"), where)
    system = systems.get(param.live)
    if system is None:
        named = ", ".join(map(repr, systems)) or "none"
        raise LiveSystemError(
            f"the marker names system {param.live!r}, but ragmetrics_system returned {named}"
        )
    cache = live_cache(request.config)
    question = param.row.require("question", "the live system")
    output = cache.output(system, question)
    row = live_row(param.row, output)
    missing = missing_fields(row, list(request.fixturenames))
    if missing:
        lacking = "; ".join(f"{p.field} {p.message}" for p in missing)
        raise LiveSystemError(f"system {system.name!r} returned no {lacking}")
    recorder.row = row
    recorder.details["live"] = output.describe()
    recorder.saved = saved_row(param.row, output)
    if DETERMINISM in request.fixturenames:  # a second, independent call of the system
        recorder.rerun = live_row(param.row, cache.output(system, question, repeat=1))
    return row


@pytest.fixture(scope="session")
def ragmetrics_system() -> Any:
    """The live systems under test. A project with a live eval overrides this fixture (in
    a conftest.py or the eval file) to return a ``LiveSystem``, several, or a mapping of
    names to them; the marker's ``systems=[...]`` picks the ones an eval runs."""
    raise LiveSystemError(
        "this eval names live systems (ragmetrics marker systems=...): define a "
        "`ragmetrics_system` fixture that returns them as pytest_ragmetrics.LiveSystem"
    )


@dataclass(frozen=True)
class RunEmbedder:
    """The run's embedding model: ``embed(texts)`` gives L2-normalised float32 rows
    through the persistent embedding cache; ``model`` names it, for a live system's
    fingerprint (its outputs change with the model)."""

    config: pytest.Config = field(repr=False)
    model: str

    def __call__(self, texts: Sequence[str]) -> Vectors:
        return embedding_store(self.config).embed(texts)


@pytest.fixture(scope="session")
def ragmetrics_embed(request: pytest.FixtureRequest) -> RunEmbedder:
    """The run's embedding model, for a live system that retrieves with it."""
    settings = run_state(request.config).thresholds.settings
    return RunEmbedder(request.config, model_label(settings.embedding_model))


def _define(name: str) -> Any:
    def metric(request: pytest.FixtureRequest, row: Row) -> MetricFixture:
        return _metric_fixture(request, name)

    metric.__name__ = name
    metric.__doc__ = f"Callable metric fixture: ``{name}(row)`` records and returns a Score."
    return pytest.fixture(name=name)(metric)


em = _define("em")
f1 = _define("f1")
abstain = _define("abstain")
idk_citation_fixture = _define("idk_citation")
tokens = _define("tokens")
latency = _define("latency")
overlap_fixture = _define("overlap")
faithfulness_fixture = _define("faithfulness")
semantic_similarity = _define("semantic_similarity")
dot_similarity = _define("dot_similarity")
euclidean_distance = _define("euclidean_distance")
hit_rate = _define("hit_rate")
mrr = _define("mrr")
recall = _define("recall")
precision = _define("precision")
ndcg = _define("ndcg")
retrieval_consistency_fixture = _define("retrieval_consistency")
rouge1 = _define("rouge1")
rouge2 = _define("rouge2")
rougeL = _define("rougeL")
bleu = _define("bleu")
response_exact_match_rate = _define("response_exact_match_rate")
response_semantic_consistency = _define("response_semantic_consistency")
judge_pipeline = _define("judge_pipeline")
trust = _define("trust")
wrong_on_answerable = _define("wrong_on_answerable")
idk_on_answerable = _define("idk_on_answerable")
rounds_fixture = _define("rounds")
f1_short = _define("f1_short")
em_short = _define("em_short")
anchor_coverage_fixture = _define("anchor_coverage")
determinism = _define(DETERMINISM)
faithfulness_judge = _define("faithfulness_judge")
answer_relevance = _define("answer_relevance")
answer_correctness = _define("answer_correctness")
e2e_score = _define("e2e_score")
consistency_score = _define(CONSISTENCY)


def session_texts(items: Sequence[pytest.Item], settings: Settings) -> list[str]:
    """Every text the embedding metrics of ``items`` will embed, in first-use order.

    A row that lacks a field its metrics need is left out here: it errors when it runs.
    """
    texts: dict[str, None] = {}
    for item in items:
        param = row_param(item)
        if param is None or param.problems:
            continue
        for name in getattr(item, "fixturenames", ()):
            spec = FIXTURES.get(name)
            if spec is None or spec.texts is None:
                continue
            try:
                texts.update(dict.fromkeys(spec.texts(param.row, settings)))
            except RowError:
                continue
    return list(texts)
