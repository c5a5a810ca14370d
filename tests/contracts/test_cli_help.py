"""The offline reference is the README's text, and the README's search examples run as
written on the bundled notes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb.help import TOPICS, readme_section
from tests.conftest import REPO, SAMPLE_NOTES

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_help_files_are_the_readme_sections(topic: str) -> None:
    shipped = (REPO / "kb" / "help" / f"{topic}.md").read_text(encoding="utf-8")
    assert shipped == readme_section(README, TOPICS[topic]), (
        f"kb/help/{topic}.md differs from the README: run 'python -m kb.help'"
    )


def test_a_section_runs_to_the_next_heading_as_high() -> None:
    text = "# A\n\n## B\n\nb\n\n### C\n\n```\n## not a heading\n```\n\n## D\n\nd\n"
    assert readme_section(text, "## B") == "## B\n\nb\n\n### C\n\n```\n## not a heading\n```\n"
    assert readme_section(text, "## D") == "## D\n\nd\n"


def _readme_search_commands() -> list[str]:
    """Every `kb search ...` the README shows, as written (placeholders left out)."""
    found = re.findall(r"`(kb search [^`]+)`", README)
    found += re.findall(r"^\$ (kb search .+)$", README, flags=re.MULTILINE)
    return sorted({c for c in found if "QUERY" not in c})


def _query_table_examples() -> list[str]:
    """The queries in the first column of the query-language table."""
    section = readme_section(README, TOPICS["query"])
    table = [line for line in section.splitlines() if line.startswith("| `")]
    return [q for row in table for q in re.findall(r"`([^`]+)`", row.split("|")[1])]


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's knowledge base (its notes and kb.yaml), ingested."""
    home = tmp_path_factory.mktemp("bundled")
    shutil.copytree(SAMPLE_NOTES, home / "notes")
    shutil.copy(REPO / "kb.yaml", home / "kb.yaml")
    subprocess.run(
        [sys.executable, "-m", "kb", "--kb", str(home), "ingest"], check=True, capture_output=True
    )
    return home


def _shell(command: str, home: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("KB_HOME", None)
    return subprocess.run(
        ["bash", "-c", command], cwd=home, env=env, capture_output=True, text=True, check=False
    )


# What the README says of these: a misspelling and a filter no note has find nothing
# (exit 1); after -- a word is query text, so -n alone is a query that only excludes (2).
_EXIT_CODES = {
    "kb search zookeper": 1,
    "kb search --exact rooflien": 1,
    "kb search 'tag:x' -draft": 1,
    "kb search -- -n": 2,
}


@pytest.mark.slow
def test_every_readme_search_example_runs_as_written(bundled: Path) -> None:
    commands = _readme_search_commands()
    assert "kb search redis -cluster" in commands and len(commands) >= 8
    if shutil.which("kb", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the kb command is not installed beside this Python")
    for command in commands:
        done = _shell(command, bundled)
        assert "Traceback" not in done.stderr, command
        if command in _EXIT_CODES:
            assert done.returncode == _EXIT_CODES[command], (command, done.stderr)
        else:
            assert done.returncode == 0, (command, done.stderr)
            assert done.stdout.strip(), command
    # (The README's "did you mean: zookeeper?" needs notes that say zookeeper; the bundled
    # ones do not, so only the exit code is checked here.)
    assert "only excludes" in _shell("kb search -- -n", bundled).stderr


@pytest.mark.slow
def test_every_query_in_the_readme_table_runs(bundled: Path) -> None:
    queries = _query_table_examples()
    assert "roofline OR 带宽" in queries and "tag:cs336" in queries
    for query in queries:
        done = subprocess.run(
            [sys.executable, "-m", "kb", "--kb", str(bundled), "search", query],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode in (0, 1), (query, done.stderr)  # 1: no note has it
        assert "Traceback" not in done.stderr, query


def _command_table_examples() -> list[str]:
    """The third column of the README's command table, as written."""
    table = README[README.index("## Commands") : README.index("Every command takes")]
    examples = []
    for row in table.splitlines()[4:]:  # after the heading, a blank line and the header
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        if len(cells) == 3:
            examples.append(cells[2].strip("`").replace("\\|", "|"))
    return examples


# Examples that need a terminal, an editor or the user's home are left to their own tests.
_NOT_RUN_HERE = {
    "kb",
    "kb open xcgs",
    "kb init ~/notes --default",
    'kb new "Redis 学习笔记"',
    "kb edit redis-study",
    "kb lsp",  # servers: they answer on stdin until the client leaves (test_lsp*.py)
    "kb mcp",  # (test_mcp*.py)
}


@pytest.mark.slow
def test_every_command_table_example_runs(bundled: Path) -> None:
    examples = _command_table_examples()
    assert len(examples) == 22 and "kb show xcgs" in examples
    if shutil.which("kb", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the kb command is not installed beside this Python")
    for example in examples:
        if example in _NOT_RUN_HERE or (" dot " in example and not shutil.which("dot")):
            continue
        done = _shell(example, bundled)
        assert "Traceback" not in done.stderr, example
        # kb check exits 1: the bundled notes keep a few broken links on purpose.
        assert done.returncode == (1 if example == "kb check" else 0), (example, done.stderr)
        assert done.stdout.strip() or example.startswith("eval "), example
