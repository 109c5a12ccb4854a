"""Finding the thresholds file and the project root (``locate_project``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragmetrics.config.project import ProjectError, locate_project


def test_the_walk_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "thresholds.toml").write_text("")
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "evals").mkdir()
    found = locate_project(
        invocation_dir=repository,
        args=["evals"],
        option=None,
        ini_value="",
        inipath=None,
        rootpath=repository,
    )
    assert (found.thresholds, found.root) == (None, repository)


def test_an_ini_key_naming_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match=r"tox\.ini ragmetrics_thresholds = 'gates\.toml'"):
        locate_project(
            invocation_dir=tmp_path,
            args=[],
            option=None,
            ini_value="gates.toml",
            inipath=tmp_path / "tox.ini",
            rootpath=tmp_path,
        )
