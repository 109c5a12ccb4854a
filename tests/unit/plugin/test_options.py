"""The --ragmetrics-* options: declared in one group, parsed into a frozen ``Options``."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ragmetrics.files import CACHE_DIR_NAME
from pytest_ragmetrics.plugin import options as options_module
from pytest_ragmetrics.plugin.options import (
    RUN_CACHE_KEY,
    RUN_ID_KEY,
    Options,
    parse_options,
)


def test_defaults(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGMETRICS_CACHE_DIR", raising=False)
    pytester.makefile(".toml", thresholds="[settings]\n")
    options = parse_options(pytester.parseconfig())
    assert options.project.thresholds == pytester.path / "thresholds.toml"
    assert options.project.root == pytester.path
    assert options.cache_dir == pytester.path / CACHE_DIR_NAME
    assert (options.limit, options.json_path, options.md_path, options.html_path) == (None,) * 4
    assert (options.projection_limit, options.projection_seed) == (3000, 0)
    assert not options.projection_umap
    assert options.save_outputs is None
    assert options.history_dir is None
    assert not options.update_baseline
    assert not options.force_gates
    assert not options.refresh
    assert not options.no_cache
    assert len(options.run_id) == 32  # a fresh uuid4 hex per run


def test_values_are_parsed_and_paths_taken_from_the_invocation_dir(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfig(
        "--ragmetrics-limit=3",
        "--ragmetrics-json=out/r.json",
        "--ragmetrics-md=out/r.md",
        "--ragmetrics-html=out/r.html",
        "--ragmetrics-save-outputs=out/live.jsonl",
        "--ragmetrics-cache-dir=cache",
        "--ragmetrics-update-baseline",
        "--ragmetrics-force-gates",
        "--ragmetrics-refresh",
    )
    options = parse_options(config)
    out = pytester.path / "out"
    assert options.limit == 3
    assert (options.json_path, options.md_path, options.html_path) == (
        out / "r.json",
        out / "r.md",
        out / "r.html",
    )
    assert options.save_outputs == out / "live.jsonl"
    assert out.is_dir()  # made by the writability check of --ragmetrics-save-outputs
    assert options.cache_dir == pytester.path / "cache"
    assert options.update_baseline
    assert options.force_gates
    assert options.refresh


def test_options_are_frozen(pytester: pytest.Pytester) -> None:
    options = parse_options(pytester.parseconfig())
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.limit = 2  # type: ignore[misc]


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_limit_below_one_is_a_usage_error(pytester: pytest.Pytester, limit: str) -> None:
    config = pytester.parseconfig(f"--ragmetrics-limit={limit}")
    message = f"--ragmetrics-limit must be at least 1, got {limit}"
    with pytest.raises(pytest.UsageError, match=re.escape(message)):
        parse_options(config)


def test_an_output_that_is_a_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.mkdir("taken")
    config = pytester.parseconfig("--ragmetrics-save-outputs=taken")
    with pytest.raises(pytest.UsageError, match=r"--ragmetrics-save-outputs \S*taken: is a dir"):
        parse_options(config)


def test_a_missing_thresholds_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig("--ragmetrics-thresholds=nowhere.toml")
    with pytest.raises(pytest.UsageError, match=r"nowhere\.toml"):
        parse_options(config)


def test_no_cache_gives_the_run_a_private_directory(pytester: pytest.Pytester) -> None:
    options = parse_options(pytester.parseconfig("--ragmetrics-no-cache"))
    try:
        assert options.no_cache
        assert options.cache_dir.is_dir()
        assert options.cache_dir.name.startswith("ragmetrics-run-cache-")
        assert not options.cache_dir.is_relative_to(pytester.path)
    finally:
        options.cache_dir.rmdir()


def test_a_worker_takes_the_run_id_and_private_cache_from_the_controller(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    config = pytester.parseconfig("--ragmetrics-no-cache", "--ragmetrics-save-outputs=taken")
    pytester.mkdir("taken")  # only the controller checks where outputs go
    config.workerinput = {RUN_ID_KEY: "run-7", RUN_CACHE_KEY: str(tmp_path)}  # type: ignore[attr-defined]
    options = parse_options(config)
    assert options.run_id == "run-7"
    assert options.cache_dir == tmp_path


def test_every_option_is_in_one_group_and_names_its_default(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig()
    group = config._parser.getgroup("ragmetrics")
    names = [name for option in group.options for name in option.names()]
    fields = {field.name for field in dataclasses.fields(Options)}
    assert len(names) == 25
    assert all(name.startswith("--ragmetrics-") for name in names)
    assert all(option.attrs()["help"].endswith(")") for option in group.options)
    assert all("(default: " in option.attrs()["help"] for option in group.options)
    assert {"limit", "json_path", "no_cache", "run_id"} <= fields


@pytest.mark.parametrize(
    "spelled", [("--ragmetrics-history=out/hist",), ("--ragmetrics-history", "out/hist")]
)
def test_the_history_option_is_taken_from_the_invocation_dir(
    pytester: pytest.Pytester, spelled: tuple[str, ...]
) -> None:
    options = parse_options(pytester.parseconfig(*spelled))
    assert options.history_dir == (pytester.path / "out" / "hist").resolve()


def test_the_history_ini_key_is_taken_from_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nragmetrics_history = out/hist\n")
    monkeypatch.chdir(pytester.mkdir("sub"))
    options = parse_options(pytester.parseconfig(str(pytester.path)))
    assert options.history_dir == (pytester.path / "out" / "hist").resolve()


def test_a_history_that_is_a_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".txt", hist="not a directory")
    config = pytester.parseconfig("--ragmetrics-history=hist.txt")
    with pytest.raises(
        pytest.UsageError, match=r"--ragmetrics-history hist\.txt: \S* is not a dir"
    ):
        parse_options(config)


@pytest.mark.parametrize(
    ("spelled", "mode"),
    [
        (("--ragmetrics-mode=bulk",), "bulk"),
        (("--ragmetrics-mode", "bulk"), "bulk"),
        (("--ragmetrics-mode=row",), "row"),
        ((), None),  # each marker's mode decides
    ],
)
def test_the_mode_option_takes_both_spellings(
    pytester: pytest.Pytester, spelled: tuple[str, ...], mode: str | None
) -> None:
    assert parse_options(pytester.parseconfig(*spelled)).mode == mode


def test_an_unknown_mode_is_a_usage_error_naming_the_modes(pytester: pytest.Pytester) -> None:
    with pytest.raises(
        pytest.UsageError, match=r"--ragmetrics-mode: unknown mode 'rows'; use row or bulk"
    ):
        parse_options(pytester.parseconfig("--ragmetrics-mode=rows"))


@pytest.mark.parametrize(("given", "expected"), [("7", 7), ("1", 1)])
def test_the_batch_size_option_is_a_row_count(
    pytester: pytest.Pytester, given: str, expected: int
) -> None:
    options = parse_options(pytester.parseconfig("--ragmetrics-batch-size", given))
    assert options.batch_size == expected


def test_a_batch_size_below_one_is_a_usage_error(pytester: pytest.Pytester) -> None:
    with pytest.raises(
        pytest.UsageError, match="--ragmetrics-batch-size must be at least 1, got 0"
    ):
        parse_options(pytester.parseconfig("--ragmetrics-batch-size=0"))


@pytest.mark.parametrize("spelled", [("--ragmetrics-engine=ray",), ("--ragmetrics-engine", "ray")])
def test_the_engine_option_takes_both_spellings(
    pytester: pytest.Pytester, spelled: tuple[str, ...]
) -> None:
    assert parse_options(pytester.parseconfig(*spelled)).engine == "ray"
    assert parse_options(pytester.parseconfig()).engine is None  # [settings] engine decides


def test_an_unknown_engine_is_a_usage_error_naming_the_engines(pytester: pytest.Pytester) -> None:
    with pytest.raises(
        pytest.UsageError, match=r"--ragmetrics-engine: unknown engine 'spark'; use local or ray"
    ):
        parse_options(pytester.parseconfig("--ragmetrics-engine=spark"))


BOTH_SPELLINGS = [
    pytest.param(lambda option, value: (f"{option}={value}",), id="--opt=v"),
    pytest.param(lambda option, value: (option, value), id="--opt v"),
]


@pytest.mark.parametrize("spell", BOTH_SPELLINGS)
@pytest.mark.parametrize(("given", "expected"), [("3", 3), ("250", 250), (" 5000 ", 5000)])
def test_the_projection_limit_is_a_point_count(
    pytester: pytest.Pytester, spell: Any, given: str, expected: int
) -> None:
    config = pytester.parseconfig(*spell("--ragmetrics-projection-limit", given))
    assert parse_options(config).projection_limit == expected


@pytest.mark.parametrize("spell", BOTH_SPELLINGS)
@pytest.mark.parametrize("given", ["0", "-5", "2", "abc", "2.5", ""])
def test_a_bad_projection_limit_is_a_usage_error(
    pytester: pytest.Pytester, spell: Any, given: str
) -> None:
    config = pytester.parseconfig(*spell("--ragmetrics-projection-limit", given))
    message = f"--ragmetrics-projection-limit takes a whole number >= 3, got {given!r}"
    with pytest.raises(pytest.UsageError, match=re.escape(message)):
        parse_options(config)


@pytest.mark.parametrize("spell", BOTH_SPELLINGS)
@pytest.mark.parametrize(("given", "expected"), [("0", 0), ("42", 42), ("4294967295", 2**32 - 1)])
def test_the_projection_seed_takes_umap_s_range(
    pytester: pytest.Pytester, spell: Any, given: str, expected: int
) -> None:
    config = pytester.parseconfig(*spell("--ragmetrics-projection-seed", given))
    assert parse_options(config).projection_seed == expected


@pytest.mark.parametrize("spell", BOTH_SPELLINGS)
@pytest.mark.parametrize("given", ["-1", "4294967296", "seven"])
def test_a_bad_projection_seed_is_a_usage_error(
    pytester: pytest.Pytester, spell: Any, given: str
) -> None:
    config = pytester.parseconfig(*spell("--ragmetrics-projection-seed", given))
    message = (
        f"--ragmetrics-projection-seed takes a whole number from 0 to 4294967295, got {given!r}"
    )
    with pytest.raises(pytest.UsageError, match=re.escape(message)):
        parse_options(config)


def test_umap_is_refused_at_once_without_umap_learn(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(options_module, "umap_installed", lambda: False)
    config = pytester.parseconfig("--ragmetrics-projection-umap")
    with pytest.raises(pytest.UsageError, match=r"pip install 'pytest-ragmetrics\[umap\]'"):
        parse_options(config)
    assert not parse_options(pytester.parseconfig()).projection_umap  # not asked: not checked


def test_umap_is_taken_when_umap_learn_is_installed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(options_module, "umap_installed", lambda: True)
    assert parse_options(pytester.parseconfig("--ragmetrics-projection-umap")).projection_umap


def test_another_package_named_umap_is_not_umap_learn(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import umap`` may find a different package: only umap-learn's distribution
    counts."""
    monkeypatch.setattr(options_module, "umap_version", lambda: None)
    assert not options_module.umap_installed()
    monkeypatch.setattr(options_module, "umap_version", lambda: "0.5.12")
    assert options_module.umap_installed() is (importlib.util.find_spec("umap") is not None)


def test_every_option_has_a_line_in_the_docs_table(pytester: pytest.Pytester) -> None:
    table = (Path(__file__).parents[3] / "docs" / "gates.md").read_text(encoding="utf-8")
    group = pytester.parseconfig()._parser.getgroup("ragmetrics")
    names = [name for option in group.options for name in option.names()]
    missing = [name for name in names if f"| `{name}" not in table]
    assert missing == []


def test_the_pr_comment_options(pytester: pytest.Pytester) -> None:
    options = parse_options(
        pytester.parseconfig(
            "--ragmetrics-pr-comment=out/c.md",
            "--ragmetrics-pr-comment-link",
            "https://x.test/r",
            "--ragmetrics-annotations=off",
        )
    )
    assert options.pr_comment_path == pytester.path / "out" / "c.md"
    assert options.pr_comment_link == "https://x.test/r"
    assert options.annotations is False
    plain = parse_options(pytester.parseconfig())
    assert (plain.pr_comment_path, plain.pr_comment_link, plain.annotations) == (None, None, True)


def test_annotations_take_auto_or_off(pytester: pytest.Pytester) -> None:
    with pytest.raises(pytest.UsageError, match="invalid choice: 'on'"):
        pytester.parseconfig("--ragmetrics-annotations=on")
