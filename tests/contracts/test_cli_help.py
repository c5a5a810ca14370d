"""The offline reference is docs/ as written, the README is a front door whose two commands
are what CI runs, and every search and command-table example in the README and docs/ runs
as written on the bundled notes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kb.cli import cli
from kb.help import ALIASES, TOPICS, page, topic_named
from tests.conftest import REPO, SAMPLE_NOTES

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
PAGES = {path.stem: path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))}


# -- kb help is docs/, one copy in git ---------------------------------------------------------


def test_every_docs_page_is_a_help_topic_and_every_topic_a_page() -> None:
    assert set(PAGES) == set(TOPICS), "give each page of docs/ a summary in kb/help TOPICS"
    copies = sorted(path.name for path in (REPO / "kb" / "help").glob("*.md"))
    assert not copies, f"docs are kept once, in docs/: remove kb/help/{copies[0]}"


@pytest.mark.parametrize("topic", sorted(PAGES))
def test_help_prints_the_docs_page(topic: str) -> None:
    assert page(topic) == PAGES[topic]


@pytest.mark.slow
def test_a_wheel_carries_every_docs_page_for_kb_help(tmp_path: Path) -> None:
    """What a user who installs kb from a wheel (pipx install .) gets: kb/help/*.md."""
    import zipfile

    source = tmp_path / "src"
    shutil.copytree(
        REPO, source, ignore=shutil.ignore_patterns(".venv", ".git", "index", "*_cache", "build")
    )
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip("setuptools cannot be installed for the build here (offline)")
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("kb_notes-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"kb/help/{topic}.md" for topic in PAGES} <= names


def test_a_topic_is_named_in_any_case_or_by_its_old_name() -> None:
    assert topic_named("Query") == "query"
    assert topic_named("config") == "configuration" == ALIASES["config"]
    assert topic_named("nonsense") is None


# -- the README as a front door --------------------------------------------------------------


def test_the_readme_is_a_front_door_of_at_most_20_kb() -> None:
    assert len(README.encode("utf-8")) <= 20_000
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    try_it, test_it = first_block
    # The first installs kb without the test tools and runs it; the second the tests.
    assert try_it == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/kb"
    assert "[test]" in test_it and test_it.endswith("&& .venv/bin/python -m pytest -q")


def test_ci_runs_exactly_the_readmes_test_command_in_a_fresh_venv() -> None:
    test_it = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()[1]
    steps = [
        line
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert steps == ["rm -rf .venv", "python3 -m venv .venv", test_it]


def test_the_links_between_the_pages_lead_to_pages_and_headings_that_exist() -> None:
    """Every relative link in the README and docs/ names a file of the repository, and an
    anchor in it names one of that page's headings (GitHub's rule: lower case, spaces to
    hyphens, punctuation dropped)."""

    def anchors(text: str) -> set[str]:
        found = set()
        for line in re.sub(r"```.*?```", "", text, flags=re.DOTALL).splitlines():
            if line.startswith("#"):
                heading = line.lstrip("#").strip().lower()
                found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
        return found

    pages = {REPO / "README.md": README} | {DOCS / f"{n}.md": t for n, t in PAGES.items()}
    for path, text in pages.items():
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue  # an external URL
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            assert linked.exists(), f"{path.name}: {target} leads nowhere"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked.read_text(encoding="utf-8")), (
                    f"{path.name}: {target}: no such heading"
                )


# -- the examples run as written -------------------------------------------------------------

DOCUMENTS = {"README.md": README} | {f"docs/{name}.md": text for name, text in PAGES.items()}


def _search_commands() -> list[str]:
    """Every `kb search ...` the README and docs/ show, as written (placeholders left out)."""
    found: list[str] = []
    for text in DOCUMENTS.values():
        found += re.findall(r"`(kb search [^`]+)`", text)
        found += re.findall(r"^\$ (kb search .+)$", text, flags=re.MULTILINE)
    return sorted({c for c in found if "QUERY" not in c and c != "kb search --help"})


def _query_table_examples() -> list[str]:
    """The queries in the first column of the query-language table (docs/query.md)."""
    table = [line for line in PAGES["query"].splitlines() if line.startswith("| `")]
    return [q for row in table for q in re.findall(r"`([^`]+)`", row.split("|")[1])]


def _command_table(text: str) -> list[tuple[str, str]]:
    """(command, example) for each row of the table headed `| command | what it does |
    example |` in ``text``, as written."""
    lines = text.splitlines()
    start = lines.index("| command | what it does | example |") + 2
    rows = []
    for row in lines[start:]:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        rows.append((cells[0], cells[2].strip("`").replace("\\|", "|")))
    return rows


def _command_word(cell: str) -> str:
    return cell.strip("`").split()[1] if " " in cell.strip("`") else "kb"


def test_the_readmes_command_table_has_every_command_of_the_reference() -> None:
    """Both tables, in one order: a bare `kb` and each command click lists, once."""
    readme = [_command_word(command) for command, _ in _command_table(README)]
    reference = [_command_word(command) for command, _ in _command_table(PAGES["commands"])]
    assert readme == reference
    assert sorted(readme) == sorted(["kb", *cli.list_commands(click.Context(cli))])


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


# What the docs say of these: a misspelling and a filter no note has find nothing
# (exit 1); after -- a word is query text, so -n alone is a query that only excludes (2).
_EXIT_CODES = {
    "kb search zookeper": 1,
    "kb search --exact rooflien": 1,
    "kb search 'tag:x' -draft": 1,
    "kb search -- -n": 2,
}


@pytest.mark.slow
def test_every_search_example_in_the_readme_and_docs_runs_as_written(bundled: Path) -> None:
    commands = _search_commands()
    assert "kb search redis -cluster" in commands and "kb search roofline -n 2" in commands
    assert len(commands) >= 12
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
    assert "only excludes" in _shell("kb search -- -n", bundled).stderr


@pytest.mark.slow
def test_the_readmes_search_output_is_what_kb_prints(bundled: Path) -> None:
    """The tour's `kb search roofline -n 2` is real output: the same titles, paths and tags
    in the same order (snippets may be cut at another width)."""
    block = README.split("$ kb search roofline -n 2\n", 1)[1].split("```", 1)[0]
    done = _shell("kb search roofline -n 2", bundled)
    shown = [line for line in block.splitlines() if line.startswith(("FLOPs", "CS336", "notes/"))]
    printed = done.stdout.splitlines()
    assert shown and all(line in printed for line in shown), (shown, printed)


@pytest.mark.slow
def test_the_readmes_check_and_links_output_is_what_kb_prints(bundled: Path) -> None:
    """The tour's `kb check` is the whole output, and each line of its `kb links` (where
    `…` marks what was left out) is a line kb prints."""
    block = README.split("$ kb check\n", 1)[1].split("```", 1)[0]
    assert _shell("kb check", bundled).stdout == block
    block = README.split('$ kb links "Redis 学习笔记" -n 3\n', 1)[1].split("```", 1)[0]
    printed = _shell('kb links "Redis 学习笔记" -n 3', bundled).stdout.splitlines()
    shown = [line for line in block.splitlines() if line.strip() not in ("", "…")]
    assert len(shown) > 10 and all(line in printed for line in shown)


@pytest.mark.slow
def test_every_query_in_the_query_table_runs(bundled: Path) -> None:
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
    examples = sorted(
        {example for text in (README, PAGES["commands"]) for _, example in _command_table(text)}
    )
    assert "kb show xcgs" in examples and "kb help query" in examples
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


# -- words for users: what `kb help` ships ---------------------------------------------------

# A commit hash (7+ hex digits holding a letter and a digit), the development's branches, the
# developers' folder of other people's notes: none of them means anything to a reader.
NOT_FOR_USERS = [
    (r"(?<![\w#.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w.-])", "a commit hash"),
    (r"\bmain's\b|\bthis branch\b|\bmain then\b|\bon main\b", "a branch"),
    (r"\.\./shared", "the developers' ../shared folder"),
    (r"\bissue \d+\b", "an issue number of kb's tracker"),
]


@pytest.mark.parametrize("topic", sorted(PAGES))
def test_the_shipped_help_holds_no_commit_branch_or_developers_folder(topic: str) -> None:
    shipped = page(topic)
    found = [
        f"{what}: {match.group(0)!r} on line {shipped.count(chr(10), 0, match.start()) + 1}"
        for pattern, what in NOT_FOR_USERS
        for match in re.finditer(pattern, shipped)
    ]
    assert found == [], f"kb help {topic}"


def test_kb_help_names_every_engine() -> None:
    from click.testing import CliRunner

    from kb.cli import cli
    from kb.engines.registry import engine_names

    listing = CliRunner().invoke(cli, ["help"]).stdout
    (line,) = [line for line in listing.splitlines() if line.strip().startswith("engines")]
    assert all(name.lower() in line.lower() for name in engine_names()), line
