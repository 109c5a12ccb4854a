r"""thresholds.toml: the run's settings and gates, parsed once at configure time.

Shape::

    [settings]                       # optional; every key: docs/gates.md#the-file
    citation_format = "auto"         # "auto" | "cit" | "numeric"
    citation_pattern = '\[([\w-]+)\]'  # a project's own marker: one group, the doc id
    idk_patterns = ["..."]           # replaces the default IDK phrases
    extra_idk_patterns = ["..."]     # added to them
    row_errors = "error"             # "error" | "skip": how a bad row is reported
    tau_sim = 0.65                   # cosine a cited sentence needs to count as supported
    embedding_model = "all-MiniLM-L6-v2"  # the packaged model, or a model directory
    rouge_use_stemmer = false        # Porter-stem English tokens before ROUGE
    squad_version = "1.1"            # "2.0": SQuAD v2.0's no-answer rule for em and f1
    squad_ascii_punctuation = false  # true: em/f1 delete ASCII punctuation only (v1.1's)
    refusal_flag = "I apologize, but I couldn't find an answer"  # Trust-Score refusal
    refusal_threshold = 85           # fuzzy partial ratio above which an output refuses
    trust_judge = "embedding"        # "table:verdicts.jsonl", "nli:<model directory>", "llm"
    trust_judge_tau = 0.65           # cosine the embedding judge needs to entail
    engine = "local"                 # "local" | "ray": where bulk evals' rows are scored

    [settings.retrieval]             # trec_eval's options for the retrieval fixtures
    relevance_level = 1              # lowest relevant grade (-l)
    cutoff = 100                     # cut each ranking to its first 100 docs (-M)
    ties = "float32"                 # "float32" (trec_eval 9) | "double" (trec_eval 10)
    gains = { "1" = 1, "2" = 3 }     # nDCG gain of each grade

    [settings.bleu]                  # optional: sacrebleu's BLEU options, by its names
    tokenize = "13a"                 # "13a" | "intl" | "char" | "zh" | "none" | ...
    smooth_method = "exp"            # "exp" | "floor" | "add-k" | "none"
    # smooth_value = 0.1             # floor and add-k only (defaults 0.1 and 1)
    lowercase = false
    max_ngram_order = 4
    effective_order = false          # for bleu.corpus (sentence BLEU always has it on)

    [settings.chrf]                  # optional: chrF / chrF++ (sacrebleu's names, defaults)
    char_order = 6                   # longest character n-gram
    beta = 2                         # recall weighs beta times precision
    lowercase = false
    whitespace = false               # keep spaces inside character n-grams
    eps_smoothing = false            # chrF++.py's mean of per-order F instead

    [settings.my_metric]             # the table a metric of the user's declares, if any

    [settings.prices]                # optional: US dollars per million tokens (cost_usd)
    "gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }  # a model, or a system's name

    [settings.stats]                 # optional: how comparisons are read (statistics.md)
    confidence = 0.95                # of the intervals reports show
    resamples = 2000                 # bootstrap resamples
    permutations = 10000             # sign flips and randomization shuffles
    seed = 12345
    correction = "none"              # "none" | "holm" | "bh": across statistical gates
    power = 0.8                      # of the minimum detectable effect
    resample_limit = 5000            # more pairs (or sessions): normal intervals

    [judge]                          # optional: an OpenAI-compatible LLM judge
    base_url = "http://127.0.0.1:8000/v1"    # or function = "module:attribute", in process
    model = "qwen2.5-7b-instruct"
    api_key_env = "JUDGE_API_KEY"    # the variable's name; the key itself never goes here

    [gates]                          # every eval
    "f1.mean" = ">= baseline - 0.01"
    "em.rate" = ">= baseline - 0.02 @ 95%"   # fails only on evidence of a larger drop

    [gates."evals/test_answers.py"]  # one eval: adds or replaces gates;
    "latency_ms.p50" = false         # false switches a default gate off for it

    [gates."evals/test_study.py[baseline]"]  # one system of an eval of several systems
    "idk_on_answerable.sum" = false

The ``[settings.<name>]`` tables are not listed here: each is declared by the metrics
that read it (``MetricSpec.settings``, a ``SettingsTable``: the built-in ``retrieval``,
``bleu`` and ``chrf`` tables, and any a metric of the user's declares with
``pytest_ragmetrics.metric(settings=...)`` or ``dataset_metric(settings=...)``), and
every one is read the same way from the
catalog of metrics. Any mistake is a ``ThresholdsError`` naming the file and the key.
"""

from __future__ import annotations

import difflib
import functools
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from pytest_ragmetrics.config.rules import Rule, RuleError, parse_rule
from pytest_ragmetrics.embeddings.model import PACKAGED_MODEL, model_label
from pytest_ragmetrics.files import resolve_setting
from pytest_ragmetrics.inference.settings import StatsSettingError, StatsSettings
from pytest_ragmetrics.judge.config import (
    JUDGE_TABLE,
    JudgeConfig,
    JudgeConfigError,
    judge_config,
)
from pytest_ragmetrics.metrics.answer import SquadVersion
from pytest_ragmetrics.metrics.bleu import DEFAULT_BLEU, BleuSettings
from pytest_ragmetrics.metrics.catalog import Catalog, in_force
from pytest_ragmetrics.metrics.chrf import ChrfSettings
from pytest_ragmetrics.metrics.cost import COST_USD
from pytest_ragmetrics.metrics.grounding import DEFAULT_TAU_SIM
from pytest_ragmetrics.metrics.prices import (
    EXAMPLE,
    NO_PRICES,
    PRICES_TABLE,
    PriceError,
    Prices,
    parse_prices,
)
from pytest_ragmetrics.metrics.registry import UnknownAggregate, interval_kind, split_aggregate
from pytest_ragmetrics.metrics.setting import SettingError, SettingsTable
from pytest_ragmetrics.metrics.trec_options import TrecOptions
from pytest_ragmetrics.metrics.trust.judges import (
    DEFAULT_ENTAILMENT_TAU,
    LLM_TRUST_JUDGE,
    load_table_judge,
)
from pytest_ragmetrics.metrics.trust.refusal import (
    DEFAULT_REFUSAL_FLAG,
    DEFAULT_REFUSAL_THRESHOLD,
    trust_normalize,
)
from pytest_ragmetrics.text.citations import (
    CITATION_FORMATS,
    BuiltinFormat,
    CitationFormat,
    CitationPatternError,
    CitationSyntax,
)
from pytest_ragmetrics.text.idk import DEFAULT_IDK_PATTERNS, IdkMatcher

ROW_ERROR_MODES = ("error", "skip")
# Where bulk evals' rows are scored (docs/scale.md); the local engine never imports Ray.
ENGINES = ("local", "ray")
DEFAULT_TRUST_JUDGE = "embedding"
# Trust-Score settings enter the signature only when changed, so baselines stored before
# they existed stay comparable.
_TRUST_DEFAULTS: dict[str, Any] = {
    "refusal_flag": DEFAULT_REFUSAL_FLAG,
    "refusal_threshold": float(DEFAULT_REFUSAL_THRESHOLD),
    "trust_judge": DEFAULT_TRUST_JUDGE,
    "trust_judge_tau": DEFAULT_ENTAILMENT_TAU,
}
# Bumped when a metric's definition changes, so stored baselines are refused, not compared.
METRICS_VERSION = 1
# The keys of [settings] itself (the declared tables' names, and the fields of the flat
# tables, aside).
SETTINGS_KEYS = (
    "citation_format",
    "citation_pattern",
    "idk_patterns",
    "extra_idk_patterns",
    "row_errors",
    "tau_sim",
    "embedding_model",
    "engine",
    *_TRUST_DEFAULTS,
)
STATS_TABLE = "stats"  # [settings.stats]: how comparisons are read, of no metric
# Keys of a baseline's signature besides the settings; a declared table cannot take their
# names (its changed settings are signed under its name).
_SIGNATURE_KEYS = ("metrics_version", "system", JUDGE_TABLE)

_Table = TypeVar("_Table")


def declared_tables(catalog: Catalog | None = None) -> tuple[SettingsTable[Any], ...]:
    """Every settings table the catalog's metrics declare, each once (``chrf`` and
    ``chrf_pp`` share one): the built-in ones and those of the user's metrics, per-row
    and dataset-level, declared before the run was configured (``catalog``: the run's;
    default: the catalog in force)."""
    catalog = catalog or in_force()
    tables: dict[str, SettingsTable[Any]] = {}
    declared = (
        *(spec.settings for spec in catalog.fixtures.values()),
        *(found.settings for found in catalog.declared.values() if found.spec is None),
    )
    for table in declared:
        if table is not None:
            tables.setdefault(table.name, table)
    return tuple(tables.values())


class ThresholdsError(Exception):
    """thresholds.toml is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    """Metric settings shared by every eval of the run."""

    citation_format: BuiltinFormat = "auto"
    idk_patterns: tuple[str, ...] = DEFAULT_IDK_PATTERNS
    row_errors: str = "error"
    tau_sim: float = DEFAULT_TAU_SIM
    embedding_model: str = PACKAGED_MODEL
    rouge_use_stemmer: bool = False
    squad_version: SquadVersion = "1.1"  # em and f1: "2.0" scores no-answer questions
    squad_ascii_punctuation: bool = False  # em and f1 delete string.punctuation only
    bleu: BleuSettings = DEFAULT_BLEU  # [settings.bleu]
    refusal_flag: str = DEFAULT_REFUSAL_FLAG
    refusal_threshold: float = DEFAULT_REFUSAL_THRESHOLD
    trust_judge: str = DEFAULT_TRUST_JUDGE
    trust_judge_tau: float = DEFAULT_ENTAILMENT_TAU
    citation_pattern: str | None = None  # a project's own citation marker (one group)
    # Declared tables held as attributes too (``bleu`` above): code builds a run's
    # settings with ``Settings(bleu=...)``, and the retrieval fixtures read ``retrieval``;
    # ``table`` reads every declared table, these among them.
    retrieval: TrecOptions = field(default_factory=TrecOptions)  # [settings.retrieval]
    chrf: ChrfSettings = field(default_factory=ChrfSettings)  # [settings.chrf]
    # How comparisons are resampled and read ([settings.stats]); never changes a value,
    # so not in the signature.
    stats: StatsSettings = field(default_factory=StatsSettings)
    # US dollars per million tokens by model ([settings.prices]). Not in the settings'
    # signature: only cost_usd reads them, and its baselines are signed with the price of
    # each model they priced (metrics.cost.price_signature), not with the whole table.
    prices: Prices = NO_PRICES
    # Where bulk evals' rows are scored: "local" (the pytest process) or "ray" (Ray Data).
    # It changes where values are computed, never what they are: not in the signature.
    engine: str = "local"
    # Where a relative ``embedding_model`` directory is resolved from (thresholds.toml's
    # directory); not part of the signature, which names the model as it was written.
    base_dir: Path | None = None
    # Every other declared table's settings (the user's metrics'), by table name.
    tables: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # The tables declared when the settings were read: what ``signature`` signs.
    declared: tuple[SettingsTable[Any], ...] = field(
        default_factory=declared_tables, compare=False, hash=False, repr=False
    )

    def table(self, table: SettingsTable[_Table]) -> _Table:
        """The run's settings of the declared ``table``: ``[settings.<name>]``, or the
        table's defaults when the file has none (or the table was declared later)."""
        if table.flat:  # its fields are attributes
            return table.type(**{name: getattr(self, name) for name in table.fields})
        if table.name in _ATTRIBUTES:
            value = getattr(self, table.name)
            return value if isinstance(value, table.type) else table.defaults()
        # A user's table: parsed into ``table.type`` when the file was read.
        return self.tables[table.name] if table.name in self.tables else table.defaults()

    @functools.cached_property
    def idk_matcher(self) -> IdkMatcher:
        return IdkMatcher(self.idk_patterns)

    @functools.cached_property
    def citations(self) -> CitationFormat:
        """The markers answers are read for: the format, with the project's own pattern."""
        if self.citation_pattern is None:
            return self.citation_format
        return CitationSyntax(self.citation_format, self.citation_pattern)

    def signature(self) -> dict[str, Any]:
        """The settings that change metric values: stored with a baseline and compared."""
        signature: dict[str, Any] = {
            "citation_format": self.citation_format,
            "idk_patterns": list(self.idk_patterns),
            "metrics_version": METRICS_VERSION,
            "tau_sim": self.tau_sim,
            "embedding_model": model_label(self.embedding_model),
        }
        # Settings added after the first release appear only when they are not at their
        # default, so baselines stored before they existed stay comparable.
        if self.citation_pattern is not None:
            signature["citation_pattern"] = self.citation_pattern
        for table in self.declared:  # a table's signed settings, if changed
            changed = table.signature(self.table(table))
            if table.flat:  # (rouge_use_stemmer, squad_version): under their own names
                signature.update(changed)
            elif changed:
                signature[table.name] = changed
        for name, default in _TRUST_DEFAULTS.items():
            if getattr(self, name) != default:
                signature[name] = getattr(self, name)
        return signature


# A declared table whose name is one of these is held as an attribute of ``Settings``.
_ATTRIBUTES = frozenset(item.name for item in fields(Settings))


@dataclass(frozen=True)
class Gate:
    """One gate: an aggregate (``metric.stat``) and the rule it must satisfy."""

    name: str
    metric: str
    stat: str
    rule: Rule


@dataclass(frozen=True)
class Thresholds:
    """Parsed thresholds.toml: settings, default gates and per-eval overrides."""

    path: Path | None = None
    settings: Settings = field(default_factory=Settings)
    gates: Mapping[str, Gate] = field(default_factory=dict)
    overrides: Mapping[str, Mapping[str, Gate | None]] = field(default_factory=dict)
    judge: JudgeConfig | None = None  # [judge]: the LLM judge's endpoint

    def gates_for(self, eval_name: str, system: str | None = None) -> list[Gate]:
        """The gates of one eval: the defaults, then its own table's changes, then (for one
        system of several) the changes of its ``"<eval>[<system>]"`` table, in order."""
        merged: dict[str, Gate | None] = dict(self.gates)
        merged.update(self.overrides.get(eval_name, {}))
        if system is not None:
            merged.update(self.overrides.get(f"{eval_name}[{system}]", {}))
        return [gate for gate in merged.values() if gate is not None]

    def bounds(self, eval_name: str, system: str | None = None) -> dict[str, list[Passes]]:
        """The fixed bounds of one eval's gates on a statistic on its values' own scale
        (``mean``, ``rate``, ``p50``, ``p95``), by metric, each as the test a value passes:
        ``f1.mean >= 0.8`` gives ``f1: [v >= 0.8]`` (a judge metric's ``flip_rate``)."""
        found: dict[str, list[Passes]] = {}
        for gate in self.gates_for(eval_name, system):
            if gate.rule.constant is not None and gate.stat in _VALUE_SCALE_STATS:
                found.setdefault(gate.metric, []).append(gate.rule.holds)
        return found


# The statistics whose value is on the scale of one row's value.
_VALUE_SCALE_STATS = ("mean", "rate", "p50", "p95")
Passes = Callable[[float], bool]


def _error(path: Path, where: str, message: str) -> ThresholdsError:
    return ThresholdsError(f"{path}: {where}: {message}")


def _string_list(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _error(path, f"[settings] {key}", "expected a list of non-empty strings")
    return tuple(value)


def _settings(path: Path, table: Any, declared: Sequence[SettingsTable[Any]]) -> Settings:
    if not isinstance(table, dict):
        raise _error(path, "[settings]", "expected a table")
    known = {*SETTINGS_KEYS, STATS_TABLE, PRICES_TABLE}
    for declared_table in declared:
        known.update(declared_table.fields if declared_table.flat else [declared_table.name])
    for key in table:
        if key not in known:
            raise _error(path, f"[settings] {key}", _unknown_setting(key, known))
    citation_format = table.get("citation_format", "auto")
    if citation_format not in CITATION_FORMATS:
        raise _error(
            path, "[settings] citation_format", f"expected one of {', '.join(CITATION_FORMATS)}"
        )
    pattern = table.get("citation_pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise _error(path, "[settings] citation_pattern", "expected a regular expression")
        try:
            CitationSyntax(citation_format, pattern)
        except CitationPatternError as error:
            raise _error(path, "[settings] citation_pattern", str(error)) from None
    row_errors = table.get("row_errors", "error")
    if row_errors not in ROW_ERROR_MODES:
        raise _error(path, "[settings] row_errors", f"expected one of {', '.join(ROW_ERROR_MODES)}")
    patterns = DEFAULT_IDK_PATTERNS
    if "idk_patterns" in table:
        patterns = _string_list(path, "idk_patterns", table["idk_patterns"])
        if not patterns:
            raise _error(path, "[settings] idk_patterns", "the list is empty")
    if "extra_idk_patterns" in table:
        patterns = patterns + _string_list(path, "extra_idk_patterns", table["extra_idk_patterns"])
    tau_sim = table.get("tau_sim", DEFAULT_TAU_SIM)
    if isinstance(tau_sim, bool) or not isinstance(tau_sim, int | float) or not 0 < tau_sim <= 1:
        raise _error(path, "[settings] tau_sim", "expected a number in (0, 1]; 0.6-0.7 is sane")
    model = table.get("embedding_model", PACKAGED_MODEL)
    if not isinstance(model, str) or not model.strip():
        raise _error(
            path,
            "[settings] embedding_model",
            f'expected "{PACKAGED_MODEL}" or the path of a sentence-transformers model directory',
        )
    engine = table.get("engine", "local")
    if engine not in ENGINES:
        raise _error(path, "[settings] engine", f"expected one of {', '.join(ENGINES)}")
    tables, attributes = _declared_tables(path, table, declared)
    return Settings(
        citation_format,
        patterns,
        row_errors,
        float(tau_sim),
        model,
        citation_pattern=pattern,
        engine=engine,
        base_dir=path.parent,
        stats=_stats_settings(path, table.get(STATS_TABLE, {})),
        prices=_prices(path, table),
        tables=tables,
        declared=tuple(declared),
        **attributes,
        **_trust_settings(path, table),
    )


def _declared_tables(
    path: Path, settings: Mapping[str, Any], declared: Sequence[SettingsTable[Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every declared table read from ``[settings.<name>]`` (a flat one from ``[settings]``;
    its defaults when absent): the settings of the tables held in ``Settings.tables``, by
    name, and the attributes of ``Settings`` the others give (a flat table's fields, or
    the table by its name). A table's own ``SettingError`` is reported under its key."""
    tables: dict[str, Any] = {}
    attributes: dict[str, Any] = {}
    flat_keys = [key for table in declared if table.flat for key in table.fields]
    taken = {*SETTINGS_KEYS, *flat_keys, STATS_TABLE, PRICES_TABLE, *_SIGNATURE_KEYS}
    for table in declared:
        where = table.where
        if table.flat:
            given = {key: settings[key] for key in table.fields if key in settings}
            parsed = _parsed(path, table, given)
            attributes.update((name, getattr(parsed, name)) for name in table.fields)
            continue
        if table.name in taken:
            raise _error(
                path,
                where,
                f"a metric declares this settings table, but {table.name!r} is a name "
                "pytest-ragmetrics uses itself; give the metric (and so its table) another name",
            )
        value = settings.get(table.name, {})
        if not isinstance(value, dict):
            raise _error(path, f"[settings] {table.name}", f"expected a table: {where}")
        held = attributes if table.name in _ATTRIBUTES else tables
        held[table.name] = _parsed(path, table, value)
    return tables, attributes


def _parsed(path: Path, table: SettingsTable[_Table], value: Mapping[str, Any]) -> _Table:
    """``table.parse(value)``, its ``SettingError`` reported under the table and key."""
    try:
        return table.parse(value)
    except SettingError as error:
        raise _error(path, f"{table.where} {error.key}".strip(), error.problem) from None


def _unknown_setting(key: str, known: set[str]) -> str:
    """Why ``[settings] key`` is refused, with where it belongs or what it is close to."""
    listed = f"known: {', '.join(sorted(known))}"
    if key in StatsSettings.names():
        return f"unknown setting; {key} belongs in the [settings.stats] table; {listed}"
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return f"unknown setting{f' (did you mean {close[0]}?)' if close else ''}; {listed}"


def _stats_settings(path: Path, table: Any) -> StatsSettings:
    """``[settings.stats]``: how comparisons are resampled and read (docs/statistics.md)."""
    if not isinstance(table, dict):
        raise _error(path, "[settings] stats", "expected a table: [settings.stats]")
    for key in table:
        if key not in StatsSettings.names():
            close = difflib.get_close_matches(key, StatsSettings.names(), n=1)
            mean = f" (did you mean {close[0]}?)" if close else ""
            known = ", ".join(StatsSettings.names())
            raise _error(path, f"[settings.stats] {key}", f"unknown setting{mean}; known: {known}")
    try:
        return StatsSettings(**table)
    except StatsSettingError as error:
        raise _error(path, f"[settings.stats] {error.key}", error.problem) from None


def _prices(path: Path, table: Mapping[str, Any]) -> Prices:
    """``[settings.prices]``: US dollars per million tokens by model (docs/gates.md)."""
    if PRICES_TABLE not in table:
        return NO_PRICES
    try:
        return parse_prices(table[PRICES_TABLE])
    except PriceError as error:
        where = f"[settings.{PRICES_TABLE}] {error.key}".strip()
        raise _error(path, where, error.problem) from None


def _trust_settings(path: Path, table: Mapping[str, Any]) -> dict[str, Any]:
    """The Trust-Score settings of ``[settings]``, checked."""
    flag = table.get("refusal_flag", DEFAULT_REFUSAL_FLAG)
    if not isinstance(flag, str) or not trust_normalize(flag):
        raise _error(
            path,
            "[settings] refusal_flag",
            "expected the refusal sentence (words that survive normalisation)",
        )
    threshold = table.get("refusal_threshold", DEFAULT_REFUSAL_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise _error(path, "[settings] refusal_threshold", "expected a number in [0, 100)")
    if not 0 <= threshold < 100:
        raise _error(path, "[settings] refusal_threshold", "expected a number in [0, 100)")
    judge = table.get("trust_judge", DEFAULT_TRUST_JUDGE)
    kind, _, where = judge.partition(":") if isinstance(judge, str) else ("", "", "")
    plain = judge in (DEFAULT_TRUST_JUDGE, LLM_TRUST_JUDGE)
    if not (plain or (kind in ("table", "nli") and where.strip())):
        raise _error(
            path,
            "[settings] trust_judge",
            'expected "embedding", "table:<verdicts.jsonl>", "nli:<model directory>" or '
            '"llm" (the [judge] endpoint)',
        )
    if kind == "table":
        if not (path.parent / where).is_file():
            raise _error(path, "[settings] trust_judge", f"no verdict file {where!r}")
        table_path = resolve_setting(
            path.parent / where, lambda problem: _error(path, "[settings] trust_judge", problem)
        )
        try:
            load_table_judge(table_path)
        except ValueError as error:
            raise _error(path, "[settings] trust_judge", str(error)) from None
    if kind == "nli" and not (path.parent / where / "config.json").is_file():
        raise _error(
            path, "[settings] trust_judge", f"{where!r} is not a model directory (no config.json)"
        )
    tau = table.get("trust_judge_tau", DEFAULT_ENTAILMENT_TAU)
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0 < tau <= 1:
        raise _error(path, "[settings] trust_judge_tau", "expected a number in (0, 1]")
    return {
        "refusal_flag": flag,
        "refusal_threshold": float(threshold),
        "trust_judge": judge,
        "trust_judge_tau": float(tau),
    }


def _gate(path: Path, where: str, name: str, value: Any, catalog: Catalog | None) -> Gate | None:
    if value is False:
        return None
    if not isinstance(value, str):
        raise _error(path, where, 'expected a rule string such as ">= 0.5", or false')
    try:
        metric, stat = split_aggregate(name, catalog)
        rule = parse_rule(value)
    except (UnknownAggregate, RuleError) as error:
        raise _error(path, where, str(error)) from None
    if rule.statistical:
        kind, why = interval_kind(metric, stat, catalog)
        if kind is None:
            reading = value[value.index("@") :].strip()
            raise _error(
                path, where, f"'{reading}' reads the rule on an interval, and {why}; drop it"
            )
    return Gate(name, metric, stat, rule)


def parse_thresholds(
    path: Path,
    document: Mapping[str, Any],
    catalog: Catalog | None = None,
    tables: Sequence[SettingsTable[Any]] | None = None,
) -> Thresholds:
    """Build ``Thresholds`` from a parsed TOML document read from ``path``; its gates name
    metrics of ``catalog`` (the run's; default: the catalog in force), and ``tables`` are
    the settings tables the metrics declare (default: every one of that catalog)."""
    for key in document:
        if key not in ("settings", "gates", JUDGE_TABLE):
            raise _error(
                path, f"[{key}]", "unknown table; expected [settings], [judge] and [gates]"
            )
    declared = declared_tables(catalog) if tables is None else tables
    settings = _settings(path, document.get("settings", {}), declared)
    judge = _judge(path, document.get(JUDGE_TABLE))
    if settings.trust_judge == LLM_TRUST_JUDGE and judge is None:
        raise _error(path, "[settings] trust_judge", '"llm" needs a [judge] table')
    gates_table = document.get("gates", {})
    if not isinstance(gates_table, dict):
        raise _error(path, "[gates]", "expected a table")
    gates: dict[str, Gate] = {}
    overrides: dict[str, dict[str, Gate | None]] = {}
    for key, value in gates_table.items():
        if isinstance(value, dict):
            overrides[key] = {
                name: _gate(path, f'[gates."{key}"] {name!r}', name, rule, catalog)
                for name, rule in value.items()
            }
            continue
        gate = _gate(path, f"[gates] {key!r}", key, value, catalog)
        if gate is None:
            raise _error(
                path, f"[gates] {key!r}", "false only switches a gate off in an eval's table"
            )
        gates[key] = gate
    _check_priced(path, settings, [*gates.values(), *_overriding(overrides)])
    return Thresholds(path, settings, gates, overrides, judge)


def _overriding(overrides: Mapping[str, Mapping[str, Gate | None]]) -> list[Gate]:
    return [gate for table in overrides.values() for gate in table.values() if gate is not None]


def _check_priced(path: Path, settings: Settings, gates: Sequence[Gate]) -> None:
    """A gate on cost_usd with no prices to compute it from is a usage error now, not an
    error of every row later."""
    priced = [gate.name for gate in gates if gate.metric == COST_USD]
    if priced and not settings.prices:
        raise _error(
            path,
            f"[settings.{PRICES_TABLE}]",
            f"missing, and the gate {priced[0]!r} needs it: {COST_USD} prices each LLM call "
            f"from it; add the table, e.g. [settings.{PRICES_TABLE}] {EXAMPLE}",
        )


def _judge(path: Path, table: Any) -> JudgeConfig | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise _error(path, "[judge]", "expected a table")
    try:
        return judge_config(table, path.parent)
    except JudgeConfigError as error:
        raise _error(path, f"[judge] {error.key}", error.message) from None


def _bad_byte(error: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 is, as an editor shows it."""
    content, start = bytes(error.object), error.start
    line = content.count(b"\n", 0, start) + 1
    column = start - content.rfind(b"\n", 0, start)
    return f"byte 0x{content[start]:02x} at line {line}, column {column}; save the file as UTF-8"


def load_thresholds(path: Path, catalog: Catalog | None = None) -> Thresholds:
    """Read thresholds.toml, its gates naming metrics of ``catalog`` (the run's; default:
    the catalog in force); ``ThresholdsError`` on any problem, naming file and key."""
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except OSError as error:
        raise ThresholdsError(f"{path}: cannot read: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise ThresholdsError(f"{path}: not UTF-8 text: {_bad_byte(error)}") from None
    except tomllib.TOMLDecodeError as error:
        raise ThresholdsError(f"{path}: not valid TOML: {error}") from error
    except RecursionError:
        raise ThresholdsError(f"{path}: not valid TOML: nested too deeply") from None
    return parse_thresholds(path, document, catalog)
