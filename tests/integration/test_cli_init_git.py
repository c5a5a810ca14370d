"""``kb init`` in a git repository keeps the store out of git: it writes
``index/.gitignore`` holding ``*`` and says so in one line (issue 23, item 5)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, check=True
    ).stdout


def kb(folder: Path, *args: str):
    return CliRunner().invoke(cli, ["--kb", str(folder), *args], catch_exceptions=False)


def test_init_and_ingest_in_a_repository_leave_nothing_under_index_for_git(tmp_path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "redis.md").write_text("# Redis 学习笔记\n\n跳表\n", encoding="utf-8")
    made = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert made.exit_code == 0, made.output
    assert "kept the store out of git" in made.stdout and ".gitignore" in made.stdout
    assert kb(tmp_path, "ingest").exit_code == 0
    assert (tmp_path / "index" / "kb.sqlite").is_file()
    status = git(tmp_path, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert status and not [line for line in status if "index/" in line], status
    assert "*" in (tmp_path / "index" / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_init_in_a_subfolder_of_a_repository_ignores_its_index_too(tmp_path) -> None:
    git(tmp_path, "init", "-q")
    made = CliRunner().invoke(cli, ["init", str(tmp_path / "kb")])
    assert made.exit_code == 0, made.output
    assert kb(tmp_path / "kb", "ingest").exit_code == 0
    status = git(tmp_path, "status", "--porcelain", "--untracked-files=all")
    assert "index/" not in status


def test_init_outside_git_writes_no_ignore_file(tmp_path) -> None:
    made = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert made.exit_code == 0, made.output
    assert not (tmp_path / "index" / ".gitignore").exists()
    assert "kept the store out of git" not in made.stdout


def test_an_ignore_file_of_the_users_is_kept(tmp_path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / ".gitignore").write_text("kb.sqlite\n", encoding="utf-8")
    made = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert made.exit_code == 0, made.output
    assert (tmp_path / "index" / ".gitignore").read_text(encoding="utf-8") == "kb.sqlite\n"
