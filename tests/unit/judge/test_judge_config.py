"""A ``[judge] prompts`` path that cannot be resolved is a usage error naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragmetrics.config.thresholds import ThresholdsError, load_thresholds
from pytest_ragmetrics.judge.config import JudgeConfigError, judge_config


def _loop(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop")


def test_a_prompts_directory_in_a_symlink_loop_is_a_config_error(tmp_path: Path) -> None:
    _loop(tmp_path)
    table = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "prompts": "loop"}
    with pytest.raises(JudgeConfigError) as raised:
        judge_config(table, tmp_path)
    assert raised.value.key == "prompts"
    assert raised.value.message == f"cannot resolve {tmp_path / 'loop'}: symlink loop"


def test_thresholds_toml_names_the_file_and_the_key(tmp_path: Path) -> None:
    _loop(tmp_path)
    path = tmp_path / "thresholds.toml"
    path.write_text(
        '[judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nprompts = "loop"\n',
        encoding="utf-8",
    )
    with pytest.raises(ThresholdsError) as raised:
        load_thresholds(path)
    assert str(raised.value) == (
        f"{path}: [judge] prompts: cannot resolve {tmp_path / 'loop'}: symlink loop"
    )
