"""The metric catalog: every declared metric fixture is registered, documented and
gateable, and no metric is declared twice."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.metrics import catalog, registry
from pytest_ragmetrics.metrics.base import MetricInfo, MetricSpec
from pytest_ragmetrics.metrics.catalog import (
    BUILTINS,
    CORPUS_STATS,
    DERIVED,
    FIXTURES,
    METRICS,
    SPECS,
    Catalog,
    Declared,
    catalog_in_force,
    close_fixtures,
    in_force,
)
from pytest_ragmetrics.metrics.chrf import ChrfSettings
from pytest_ragmetrics.metrics.custom import DeclarationError, declare
from pytest_ragmetrics.metrics.registry import split_aggregate
from pytest_ragmetrics.metrics.setting import SettingsTable

ROOT = Path(__file__).resolve().parents[3]
METRICS_DOC = ROOT / "docs" / "metrics.md"
ADDING_DOC = ROOT / "docs" / "adding-a-metric.md"


def _fixture_docs(output: str) -> dict[str, str]:
    """``pytest --fixtures`` output as fixture name -> its docstring (indented lines),
    joined by spaces."""
    docs: dict[str, list[str]] = {}
    current: str | None = None
    for line in output.splitlines():
        header = re.match(r"^(\w+)(?: \[\w+ scope\])? -- \S", line)
        if header:
            current = header.group(1)
            docs[current] = []
        elif current is not None and line.startswith("    "):
            docs[current].append(line.strip())
        else:
            current = None
    return {name: " ".join(lines) for name, lines in docs.items()}


@pytest.fixture(scope="module")
def fixtures_text(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``pytest --fixtures`` in an empty project, run once for the module's tests, as
    fixture name -> its shown docstring."""
    folder = tmp_path_factory.mktemp("fixtures")
    (folder / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return _fixture_docs(result.stdout)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.fixture)
def test_a_declared_fixture_is_registered_with_its_own_docstring(
    spec: MetricSpec, fixtures_text: dict[str, str]
) -> None:
    assert spec.fixture in fixtures_text, f"metric fixture {spec.fixture!r} is not registered"
    # --fixtures shows the first paragraph of the docstring: the metric's definition.
    assert fixtures_text[spec.fixture] == " ".join(spec.doc.split())


def test_no_two_metric_fixtures_share_a_docstring() -> None:
    docs = [" ".join(spec.doc.split()) for spec in SPECS]
    assert [doc for doc, count in Counter(docs).items() if count > 1] == []


def test_a_fixtures_full_docstring_says_how_to_call_it_and_what_it_needs() -> None:
    assert FIXTURES["ndcg"].docstring.endswith(
        "Call ``ndcg(row, k=..., gain=...)``: records and returns a Score; needs relevant."
    )
    assert FIXTURES["f1"].docstring.endswith("needs answer, gold.")


def _gate(info: MetricInfo) -> str:
    """An aggregate name a thresholds.toml gate could use for ``info``."""
    suffix = info.levels[-1] if info.levels else "10"
    name = f"{info.name}@{suffix}" if info.cutoff != "none" else info.name
    stat = info.stats[0]  # "mean", or a dataset-level metric's first statistic
    return f"{name}.{stat}"


@pytest.mark.parametrize(
    "info",
    [info for spec in SPECS for info in spec.records] + list(DERIVED),
    ids=lambda info: info.name,
)
def test_every_declared_metric_is_reachable_from_a_gate(info: MetricInfo) -> None:
    gate = _gate(info)
    metric, stat = split_aggregate(gate)
    assert (metric, stat) == tuple(gate.rsplit(".", 1))
    for corpus_stat in info.corpus:
        assert split_aggregate(f"{info.name}.{corpus_stat}") == (info.name, corpus_stat)


def test_a_required_cutoff_must_be_named_an_optional_one_may_be() -> None:
    assert split_aggregate("recall@5.mean") == ("recall@5", "mean")
    assert split_aggregate("mrr.mean") == ("mrr", "mean")  # optional cutoff
    with pytest.raises(registry.UnknownAggregate, match="needs a cutoff"):
        split_aggregate("recall.mean")


def test_a_recall_level_is_one_of_trec_evals_eleven() -> None:
    assert split_aggregate("iprec_at_recall@0.5.mean") == ("iprec_at_recall@0.5", "mean")
    assert split_aggregate("iprec_at_recall@1.0.p50") == ("iprec_at_recall@1.0", "p50")
    with pytest.raises(
        registry.UnknownAggregate, match=r"needs a level, e\.g\. iprec_at_recall@0\.5"
    ):
        split_aggregate("iprec_at_recall.mean")
    for bad in ("iprec_at_recall@0.55", "iprec_at_recall@10", "iprec_at_recall@.5"):
        with pytest.raises(registry.UnknownAggregate, match=r"the level after @ is one of 0\.0, "):
            split_aggregate(f"{bad}.mean")


def test_gm_map_gmean_is_a_statistic_of_gm_map_only() -> None:
    assert split_aggregate("gm_map.gmean") == ("gm_map", "gmean")
    with pytest.raises(registry.UnknownAggregate, match="unknown statistic 'gmean' for map"):
        split_aggregate("map.gmean")


@pytest.mark.parametrize("stat", ["mean", "sum"])
def test_gm_map_mean_is_refused_pointing_to_map_and_gmean(stat: str) -> None:
    # The rows record their average precision, so gm_map.mean would be MAP under the
    # name of trec_eval's geometric mean: a gate on it would check the wrong number.
    with pytest.raises(
        registry.UnknownAggregate,
        match=rf"gm_map\.{stat} is not a gate: .* is map\.{stat}; trec_eval's gm_map is "
        r"gm_map\.gmean",
    ):
        split_aggregate(f"gm_map.{stat}")
    assert split_aggregate("gm_map.p50") == ("gm_map", "p50")


def test_no_two_declarations_record_the_same_metric() -> None:
    names = Counter(info.name for spec in SPECS for info in spec.records)
    names.update(info.name for info in DERIVED)
    assert [name for name, count in names.items() if count > 1] == []
    fixtures = Counter(spec.fixture for spec in SPECS)
    assert [name for name, count in fixtures.items() if count > 1] == []


def test_the_registry_and_the_corpus_statistics_come_from_the_catalog() -> None:
    assert registry.METRICS is METRICS
    assert len(METRICS) == sum(len(spec.records) for spec in SPECS) + len(DERIVED)
    with_corpus = {spec.primary for spec in SPECS if spec.corpus is not None}
    assert (
        set(CORPUS_STATS)
        == with_corpus
        == {
            "bleu",
            "chrf",
            "chrf_pp",
            "gm_map",
            "judge_pipeline",
        }
    )
    for metric in with_corpus:
        assert METRICS[metric].corpus, f"{metric} reduces corpus statistics it does not name"


def test_the_corpus_reducers_give_the_statistics_their_metric_names() -> None:
    # bleu: one row "a b c d" against itself has 4/3/2/1 matched of 4/3/2/1 n-grams, so
    # every precision is 1, the brevity penalty 1 and corpus BLEU 100.
    breakdown, reduce = CORPUS_STATS["bleu"]
    assert breakdown == "bleu_stats"
    sums = {"sys_len": 4, "ref_len": 4, "correct_1": 4, "correct_2": 3, "correct_3": 2}
    sums |= {"correct_4": 1, "total_1": 4, "total_2": 3, "total_3": 2, "total_4": 1}
    assert reduce(sums, Settings()) == {"corpus": pytest.approx(100.0)}
    # judge_pipeline: tp 3, fp 1, fn 1, tn 5 -> accuracy 8/10, precision 3/4, recall 3/4.
    breakdown, reduce = CORPUS_STATS["judge_pipeline"]
    assert breakdown == "judge_pipeline_counts"
    stats = reduce({"tp": 3, "fp": 1, "fn": 1, "tn": 5}, Settings())
    assert set(stats) == set(METRICS["judge_pipeline"].corpus)
    assert (stats["accuracy"], stats["precision"], stats["recall"]) == (0.8, 0.75, 0.75)
    assert stats["f1"] == pytest.approx(0.75)
    # chrf under the run's [settings.chrf]: unigrams only, beta 1, summed counts 4 answer /
    # 2 gold characters, 2 matched: P 1/2, R 1, F1 2/3.
    breakdown, reduce = CORPUS_STATS["chrf"]
    assert breakdown == "chrf_stats"
    unigrams = Settings(chrf=ChrfSettings(char_order=1, beta=1))
    sums = {"char_1_hyp": 4.0, "char_1_ref": 2.0, "char_1_match": 2.0}
    assert reduce(sums, unigrams) == {"corpus": pytest.approx(100 * 2 / 3)}
    # beta 2 weighs recall: F2 = 5 * 1/2 * 1 / (4 * 1/2 + 1) = 5/6.
    beta2 = Settings(chrf=ChrfSettings(char_order=1))
    assert reduce(sums, beta2) == {"corpus": pytest.approx(100 * 5 / 6)}
    with pytest.raises(ValueError, match="1 character and 0 word orders, the settings 6"):
        reduce(sums, Settings())
    # chrf_pp's statistics carry their word orders: char 1 + word 1, both P 1/2, R 1.
    breakdown, reduce = CORPUS_STATS["chrf_pp"]
    assert breakdown == "chrf_pp_stats"
    sums |= {"word_1_hyp": 2.0, "word_1_ref": 1.0, "word_1_match": 1.0}
    assert reduce(sums, unigrams) == {"corpus": pytest.approx(100 * 2 / 3)}


def test_the_metric_layer_imports_neither_pytest_nor_config_nor_the_heavy_libraries() -> None:
    code = (
        "import sys, pytest_ragmetrics.metrics.catalog, pytest_ragmetrics.metrics.registry\n"
        "bad = [m for m in sys.modules if m == 'pytest' or m == '_pytest'\n"
        "       or m.startswith(('pytest_ragmetrics.config', 'pytest_ragmetrics.plugin'))\n"
        "       or m.split('.')[0] in ('nltk', 'rouge_score', 'sacrebleu', 'faiss', 'torch')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.fixture)
def test_a_declared_fixture_is_documented_in_docs_metrics_md(spec: MetricSpec) -> None:
    headings = set(METRICS_DOC.read_text(encoding="utf-8").splitlines())
    assert f"### `{spec.fixture}`" in headings, (
        f"{METRICS_DOC}: no heading ### `{spec.fixture}`; every metric fixture has one "
        "(docs/adding-a-metric.md)"
    )


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.fixture)
def test_a_built_in_declaration_names_its_family_module(spec: MetricSpec) -> None:
    # What an error about its values names: the module whose SPECS holds it.
    module = importlib.import_module(spec.declared_at.removesuffix(".py").replace("/", "."))
    assert any(declared is spec for declared in module.SPECS)


def _families_table() -> dict[str, list[str]]:
    """docs/adding-a-metric.md's table of the families: module -> its fixtures."""
    table: dict[str, list[str]] = {}
    text = ADDING_DOC.read_text(encoding="utf-8")
    section = text.split("\n## The families\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        row = re.fullmatch(r"\| `(metrics/[\w/]+\.py)` \| (.*) \|", line)
        if row:
            table[row.group(1)] = re.findall(r"`(\w+)`", row.group(2))
    return table


def test_the_guide_s_families_table_is_the_catalog() -> None:
    table = _families_table()
    declared = {spec.declared_at.removeprefix("pytest_ragmetrics/"): [] for spec in SPECS}
    for spec in SPECS:
        declared[spec.declared_at.removeprefix("pytest_ragmetrics/")].append(spec.fixture)
    assert table == declared


@pytest.mark.parametrize(
    ("name", "close"),
    [
        ("faithfulnes", ("faithfulness",)),  # a letter missing
        ("recalll", ("recall",)),  # a letter added
        ("f2", ("f1",)),  # a letter replaced
        ("faithfluness", ("faithfulness",)),  # two neighbours swapped
        ("rouge", ("rouge1", "rouge2", "rougeL")),  # close to several
        ("embeding_space", ("embedding_space",)),  # a dataset-level fixture
        ("faithfulness", ()),  # a fixture's own name is no typo
        ("bananas", ()),
        ("faithfulnss_", ()),  # two edits away
    ],
)
def test_close_fixtures_are_one_edit_away(name: str, close: tuple[str, ...]) -> None:
    assert close_fixtures(name) == close


def _declared(name: str, origin: str) -> Declared:
    def function(row: Any) -> float:
        """Doc."""
        return 1.0

    spec = declare(function, name, (), None, False).spec()
    return Declared(spec.records[0], spec, origin)


def test_a_catalog_holds_the_built_in_metrics_and_its_declarations() -> None:
    mine = _declared("mine", "conftest.py:3")
    ours = Catalog([mine])
    assert ours.fixtures["mine"] is mine.spec
    assert ours.metrics["mine"] is mine.info
    assert ours.fixtures["f1"] is FIXTURES["f1"]
    assert split_aggregate("mine.p95", ours) == ("mine", "p95")
    assert registry.value_range("ndcg@10", ours) == registry.value_range("ndcg@10", BUILTINS)
    assert Catalog(ours.snapshot()).fixtures["mine"] is mine.spec  # what a Ray job carries
    # The built-in tables, and a catalog without it, know nothing of it.
    assert "mine" not in FIXTURES
    assert "mine" not in METRICS
    with pytest.raises(registry.UnknownAggregate, match="unknown metric 'mine'"):
        split_aggregate("mine.p95", BUILTINS)


@dataclass(frozen=True)
class OwnSettings:
    width: int = 3


@pytest.mark.parametrize("table", ["retrieval", "squad", "bleu"])
@pytest.mark.parametrize("kind", ["per-row", "dataset-level"])
def test_a_table_under_a_built_in_tables_name_is_refused(table: str, kind: str) -> None:
    """The run reads the built-in table of that name, so the user's would silently be its
    defaults: ``retrieval`` and ``squad`` are no metric's name, only a table's."""
    origin = "conftest.py:3"

    def own(row: Any, settings: OwnSettings) -> float:
        """Doc."""
        return 1.0

    if kind == "per-row":
        spec = declare(own, table, (), None, False, None, OwnSettings).spec()
        declared = Declared(spec.records[0], spec, origin)
    else:
        info = MetricInfo(table, "doc", dataset=("share",))
        declared = Declared(info, None, origin, None, SettingsTable(table, OwnSettings))
    with pytest.raises(DeclarationError, match=rf"^{origin}: metric '{table}' ") as raised:
        Catalog([declared])
    if table != "bleu":  # bleu is a built-in metric's name first
        assert f"the settings table '{table}' is pytest-ragmetrics's own" in str(raised.value)
        assert "yours would never be read: give the metric another name" in str(raised.value)


def test_the_built_in_tables_and_a_catalog_are_read_only() -> None:
    mine = _declared("mine", "conftest.py:3")
    for table in (FIXTURES, Catalog().fixtures):
        with pytest.raises(TypeError):
            table["mine"] = mine.spec  # type: ignore[index]
    with pytest.raises(TypeError):
        METRICS["mine"] = mine.info  # type: ignore[index]


def test_two_catalogs_may_hold_one_name_each_from_its_own_place() -> None:
    """Two projects run in one process (pytester), or two jobs on one reused Ray worker."""
    first, second = _declared("mine", "a/conftest.py:3"), _declared("mine", "b/conftest.py:5")
    assert Catalog([first]).declared["mine"].origin == "a/conftest.py:3"
    assert Catalog([second]).declared["mine"].origin == "b/conftest.py:5"


def test_one_name_declared_in_two_places_is_refused_naming_both() -> None:
    with pytest.raises(
        DeclarationError,
        match=r"^other.py:9: metric 'mine' is already declared at conftest.py:3: declare it "
        "once, or give one of them another name$",
    ):
        Catalog([_declared("mine", "conftest.py:3"), _declared("mine", "other.py:9")])
    # The same declaration met twice (its module imported again) is one.
    again = Catalog([_declared("mine", "conftest.py:3"), _declared("mine", "conftest.py:3")])
    assert list(again.declared) == ["mine"]


def test_a_built_in_name_is_refused_naming_its_module() -> None:
    with pytest.raises(
        DeclarationError, match=r"metrics/retrieval/fixtures.py \(the built-in `ndcg`"
    ):
        Catalog([_declared("ndcg", "conftest.py:3")])
    with pytest.raises(DeclarationError, match=r"catalog.py \(a metric the plugin derives\)"):
        Catalog([_declared("errors", "conftest.py:3")])


def _failing_batch(catalog: Catalog, seen: list[str]) -> None:
    """A batch scored with ``catalog`` in force, which raises."""
    with catalog_in_force(catalog):
        seen.append(in_force().declared["mine"].origin)
        assert split_aggregate("mine.mean") == ("mine", "mean")  # no catalog handed
        raise RuntimeError("the batch failed")


def test_a_catalog_is_in_force_for_its_block_only() -> None:
    """What a lookup handed no catalog reads: the one in force, and the one before it
    again after the block, also when the block raised."""
    before = in_force()
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="the batch failed"):
        _failing_batch(Catalog([_declared("mine", "other.py:9")]), seen)
    assert seen == ["other.py:9"]
    assert in_force() is before


class _Lazy:
    """A module attribute whose attribute lookups run code, as a lazy proxy's do."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise KeyError(name)


def test_declarations_are_read_from_a_namespace_without_running_its_attributes() -> None:
    mine = _declared("mine", "conftest.py:3")

    def fixture() -> None:
        """Stands for the fixture pytest_ragmetrics.metric returns."""

    setattr(fixture, catalog.DECLARATION_MARK, mine)
    namespace = {"lazy": _Lazy(), "mine": fixture, "number": 1, "other": _declared}
    assert catalog.declarations_in(namespace) == [mine]
    assert catalog.declaration_of(_Lazy()) is None
