"""The kb command as a user runs it: help, init, finding the knowledge base, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kb.cli import LAZY_COMMANDS, cli
from kb.locations import find_knowledge_base, user_config_path

COMMANDS = sorted(LAZY_COMMANDS)


def test_every_command_is_listed() -> None:
    listed = cli.list_commands(click.Context(cli))
    assert listed == COMMANDS
    assert {"search", "ingest", "mv", "sql", "lsp", "mcp"} <= set(listed)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: cli {command}")
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    assert found.help, f"{command} has no help text"


def test_init_then_ingest_and_search_from_any_folder(tmp_path: Path, monkeypatch) -> None:
    runner = CliRunner()
    home = tmp_path / "mykb"
    result = runner.invoke(cli, ["init", str(home), "--default"])
    assert result.exit_code == 0, result.output
    assert (home / "kb.yaml").is_file()
    assert user_config_path().is_file()
    (home / "notes" / "first.md").write_text("# 第一篇\n\n显存带宽\n", encoding="utf-8")
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert runner.invoke(cli, ["ingest"]).exit_code == 0
    result = runner.invoke(cli, ["search", "--json", "显存"])
    assert [hit["path"] for hit in json.loads(result.stdout)] == ["first.md"]


def test_finding_the_knowledge_base(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "base" / "index").mkdir(parents=True)
    deep = tmp_path / "base" / "notes" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_knowledge_base(cwd=deep) == (tmp_path / "base").resolve()
    monkeypatch.setenv("KB_HOME", str(tmp_path))
    assert find_knowledge_base(cwd=deep) == tmp_path.resolve()
    assert find_knowledge_base(tmp_path / "base", cwd=deep) == (tmp_path / "base").resolve()


def test_no_knowledge_base_explains_how_to_make_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["ingest"])
    assert result.exit_code == 1
    assert "kb init" in result.stderr
    assert "Traceback" not in result.output


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest", "--rebuild", "x.md"])
    assert result.exit_code == 2
    assert CliRunner().invoke(cli, ["search"]).exit_code == 2
    assert CliRunner().invoke(cli, ["no-such-command"]).exit_code == 2


def test_another_ingest_running_exits_3(make_kb) -> None:
    from kb.ingest.lock import ingest_lock

    kb = make_kb({"a.md": "# a\n"})
    with ingest_lock(kb.config):
        result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest", "--wait", "0.1"])
    assert result.exit_code == 3
    assert "another kb ingest is running" in result.stderr


def test_missing_notes_root_exits_1(make_kb) -> None:
    kb = make_kb({}, config="roots: [missing]\n")
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest"])
    assert result.exit_code == 1
    assert "does not exist" in result.stderr


def test_unreadable_store_exits_1(make_kb) -> None:
    kb = make_kb({"a.md": "# a\n"})
    kb.config.index_dir.mkdir()
    kb.config.store_path.write_bytes(b"this is not a database" * 100)
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest"])
    assert result.exit_code == 1
    assert "is damaged (file is not a database)" in result.stderr
    assert "'kb ingest --rebuild' recreates it" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_installed_kb_command_runs(make_kb) -> None:
    executable = shutil.which("kb", path=str(Path(sys.executable).parent))
    assert executable, "the kb command is not installed beside this Python"
    kb = make_kb({"a.md": "---\ntitle: 装好了\n---\n\nroofline 模型\n"})
    ingest = subprocess.run(
        [executable, "--kb", str(kb.home), "ingest", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ingest.returncode == 0, ingest.stderr
    assert json.loads(ingest.stdout)["added"] == 1
    found = subprocess.run(
        [executable, "--kb", str(kb.home), "search", "roofline"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0
    assert found.stdout.startswith("装好了")
    module = subprocess.run(
        [sys.executable, "-m", "kb", "--version"], capture_output=True, text=True, check=False
    )
    assert module.stdout.startswith("kb, version")


def test_rebuild_recovers_a_damaged_store(make_kb) -> None:
    kb = make_kb({"a.md": "# 还在\n"})
    kb.config.index_dir.mkdir()
    kb.config.store_path.write_bytes(b"garbage" * 1000)
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest", "--rebuild", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 1
    assert [hit.path for hit in kb.search("还在").hits] == ["a.md"]


def test_new_creates_edits_and_ingests(make_kb, tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'a').write('写了一点 quokka\\n')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    kb = make_kb({})
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "new", "周末", "读书"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("周末-读书.md")
    assert [hit.title for hit in kb.search("quokka").hits] == ["周末 读书"]


def test_bare_kb_without_a_terminal_says_so(make_kb) -> None:
    kb = make_kb({"a.md": "# a\n"})
    result = CliRunner().invoke(cli, ["--kb", str(kb.home)])
    assert result.exit_code == 2
    assert "needs a terminal" in result.stderr


def test_file_names_with_escapes_never_reach_the_terminal(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"esc\x1b[31mname.md": "# esc\n", "linker.md": "[x](esc%1B[31mname.md)\n"})
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest", "-v"])
    assert result.exit_code == 0
    assert "\x1b" not in result.output
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "links", "linker.md"])
    assert "\x1b" not in result.output


def test_a_store_from_an_older_kb_is_upgraded_by_the_next_ingest(make_kb) -> None:
    import sqlite3

    kb = make_kb({"a.md": "# 升级\n"})
    kb.config.index_dir.mkdir()
    old = sqlite3.connect(kb.config.store_path)
    old.executescript(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, path TEXT);PRAGMA user_version = 1;"
    )
    old.close()
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "search", "升级"])
    assert result.exit_code == 1
    assert "run 'kb ingest'" in result.stderr
    assert CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest"]).exit_code == 0
    assert [hit.path for hit in kb.search("升级").hits] == ["a.md"]


def test_kb_open_needs_a_terminal(make_kb) -> None:
    kb = make_kb({"a.md": "# 升级\n"})
    kb.ingest()
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "open", "a.md"])
    assert result.exit_code == 2
    assert "needs a terminal" in result.stderr


def test_init_ends_by_naming_the_next_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = CliRunner().invoke(cli, ["init"])
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines()[-1] == "next, read the notes into the store: kb ingest"
    # From a folder where kb would not find it, the command names it.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    made = CliRunner().invoke(cli, ["init", str(tmp_path / "other kb")])
    assert made.stdout.splitlines()[-1] == (
        f"next, read the notes into the store: kb --kb '{tmp_path / 'other kb'}' ingest"
    )
