"""The built-in per-row metrics checked with the helpers metric authors get
(``pytest_ragmetrics.testing.check_metric``), one test per declaration of the catalog:
on generated well-formed rows, every value is finite and within the range its declaration
states, the same when computed twice or on a deep copy of the row, and the same whether
the answer cites with ``[CIT:<doc_id>]`` or ``[n]``.

The cases are generated from the declarations: a new ``MetricSpec`` gets its test without
an edit here. A metric that takes a cutoff is called with one (``k=3``, and without one
when it is optional), a metric with levels at its first and middle level. A declaration
that cannot take the check says why in its ``untested`` (``determinism`` has no second run
on a generated row, the judged metrics need a judge server); a property it leaves out is
not checked. The embedding metrics run with the packaged model (nothing is downloaded),
with fewer examples.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.metrics.base import UNTESTED, Measured, MetricInfo, MetricSpec
from pytest_ragmetrics.metrics.catalog import BUILTIN_FIXTURES, FIXTURES, SPECS
from pytest_ragmetrics.metrics.prices import Price, Prices
from pytest_ragmetrics.testing import check_metric, strategies
from pytest_ragmetrics.testing.strategies import as_row
from pytest_ragmetrics.text.citations import strip_citations

# Enough examples to meet IDK answers, invalid citations and empty rankings; few enough
# for the file to take well under a minute on two cores.
EXAMPLES = settings(max_examples=25, deadline=None, derandomize=True)
# Every new text costs the model a call: fewer examples for the embedding metrics.
EMBEDDED = settings(EXAMPLES, max_examples=12)
# A text's embedding compared with itself: these checks found its cosine computed as
# 1.0000000000000002 for many texts, above the [-1, 1] of the definition, until
# metrics.grounding.cosine clamped it. The default rows meet that case only now and then
# (a gold or a repeat equal to the answer), so it is checked on rows built for it, without
# shrinking, which would spend a minute embedding smaller rows.
NO_SHRINK = settings(EMBEDDED, phases=(Phase.explicit, Phase.reuse, Phase.generate))
# Option values the generated calls do not reach on their own (they take the defaults).
MORE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("ndcg", {"k": 3, "gain": "exponential"}),
    ("rouge2", {"measure": "precision"}),
    ("rougeL", {"measure": "recall"}),
]


@st.composite
def trust_rows(draw: st.DrawFn) -> Row:
    """Rows as the Trust-Score suite reads them: ``[n]`` citations, gold answer groups, and
    in every context a ``title`` and ``answers_found``, one 0 or 1 per group."""
    row = draw(strategies.rows(style="numbered"))
    alias = st.sampled_from(strategies.WORDS + strategies.NUMBERS)
    groups = draw(st.lists(st.lists(alias, min_size=1, max_size=2), min_size=1, max_size=2))
    found = st.lists(st.integers(0, 1), min_size=len(groups), max_size=len(groups))
    contexts = [
        {"title": "doc", **context, "answers_found": draw(found)} for context in row.contexts or ()
    ]
    return as_row({**row.data, "gold": groups, "contexts": contexts}, row.index)


# The prices cost_usd's rows are priced at (US dollars per million tokens).
PRICES = Prices({"small": Price(0.15, 0.60), "large": Price(2.50, 10.00), "free": Price(0, 0)})
_MODEL = st.sampled_from(sorted(PRICES.by_name))


@st.composite
def priced_rows(draw: st.DrawFn) -> Row:
    """Rows cost_usd can price: a model, and tokens split into prompt and completion (one
    call, or a list of calls, each may name a model of its own)."""
    row = draw(strategies.rows(requires=("tokens",)))
    count = st.integers(0, 10**6)
    call = st.fixed_dictionaries(
        {"prompt_tokens": count, "completion_tokens": count}, optional={"model": _MODEL}
    )
    tokens = draw(
        st.one_of(
            st.fixed_dictionaries({"prompt": count, "completion": count}),
            st.lists(call, max_size=4),
        )
    )
    return as_row({**row.data, "tokens": tokens, "model": draw(_MODEL)}, row.index)


# Rows of their own for a metric whose fields go beyond the default rows' (the Trust-Score
# suite reads `answers_found` in every context; cost_usd a model and split tokens); every
# other metric gets strategies.rows(requires=...).
ROWS: dict[str, st.SearchStrategy[Row]] = {"trust": trust_rows(), "cost_usd": priced_rows()}
# Settings of their own for a metric that needs more than the defaults.
METRIC_SETTINGS = {"cost_usd": Settings(prices=PRICES)}


def calls(spec: MetricSpec) -> list[dict[str, Any]]:
    """The option sets a declaration's generated test calls its fixture with."""
    info = spec.records[0]
    if info.levels:
        return [
            {"level": float(level)}
            for level in (info.levels[0], info.levels[len(info.levels) // 2])
        ]
    if info.cutoff == "required":
        return [{"k": 3}]
    if info.cutoff == "optional":
        return [{}, {"k": 2}]
    return [{}]


def _case_id(name: str, options: dict[str, Any]) -> str:
    return "-".join([name, *(f"{key}={value}" for key, value in options.items())])


def _cases() -> list[Any]:
    cases: list[Any] = []
    generated = [
        (spec.fixture, options)
        for spec in SPECS
        if "properties" not in spec.untested
        for options in calls(spec)
    ]
    for name, options in [*generated, *MORE_OPTIONS]:
        marks = [pytest.mark.slow] if FIXTURES[name].texts is not None else []
        cases.append(pytest.param(name, options, marks=marks, id=_case_id(name, options)))
    return cases


@pytest.mark.parametrize(("name", "options"), _cases())
def test_declared_metric_properties(name: str, options: dict[str, Any]) -> None:
    spec = FIXTURES[name]
    embeds = spec.texts is not None  # the packaged model runs: fewer examples
    check_metric(
        name,
        options=options,
        rows=ROWS.get(name),
        settings=EMBEDDED if embeds else EXAMPLES,
        metric_settings=METRIC_SETTINGS.get(name),
    )


def _same_text_everywhere(row: Row) -> Row:
    """The row with its gold and its one repeat the answer's own text."""
    answer = row.answer or ""
    return as_row({**row.data, "gold": strip_citations(answer), "repeats": [answer]}, row.index)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["semantic_similarity", "response_semantic_consistency", "euclidean_distance"]
)
def test_embedding_metrics_of_a_text_and_itself_stay_in_range(name: str) -> None:
    # Real vectors of the packaged model: the float edge of a cosine of a text with itself.
    rows = strategies.rows().map(_same_text_everywhere)
    check_metric(name, rows=rows, settings=NO_SHRINK)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.fixture)
def test_a_declaration_is_tested_or_says_why_not(spec: MetricSpec) -> None:
    assert set(spec.untested) <= set(UNTESTED)
    assert all(isinstance(why, str) and why.strip() for why in spec.untested.values())
    if "properties" not in spec.untested:
        assert calls(spec), f"{spec.fixture}: no generated call and no reason"


def test_the_opt_outs_of_the_built_in_metrics() -> None:
    # determinism (no second run on a generated row), the five judged metrics (an
    # endpoint), and trust's citation format (the reference's [n] by definition).
    untested = {spec.fixture: set(spec.untested) for spec in SPECS if spec.untested}
    assert untested == {
        "determinism": {"properties"},
        "faithfulness_judge": {"properties"},
        "answer_relevance": {"properties"},
        "answer_correctness": {"properties"},
        "e2e_score": {"properties"},
        "consistency_score": {"properties"},
        "trust": {"citation-format invariant"},
    }
    assert set(untested) <= BUILTIN_FIXTURES


def _measure(row: Row, ctx: Any) -> Measured:
    return Measured({"mine": 0.5}, "")


@pytest.mark.parametrize(
    ("untested", "message"),
    [
        ({"propertys": "a typo"}, "untested names 'propertys', which is no generated test"),
        ({"properties": ""}, r"untested\['properties'\] gives no reason"),
        ({"deterministic": "   "}, r"untested\['deterministic'\] gives no reason"),
        ({"properties": None}, r"untested\['properties'\] gives no reason"),
    ],
)
def test_an_opt_out_names_a_generated_test_and_gives_a_reason(
    untested: dict[str, Any], message: str
) -> None:
    info = MetricInfo("mine", "mine", range=(0.0, 1.0))
    with pytest.raises(ValueError, match=f"metric fixture 'mine': {message}"):
        MetricSpec("mine", "", (info,), (), _measure, untested=untested)


def test_check_metric_reads_the_declarations_opt_outs() -> None:
    with pytest.raises(ValueError, match="determinism is declared without property tests"):
        check_metric("determinism")
