"""Pathological notes: each parses in bounded time and memory, or is kept as plain text.

The cases of issue 9 (each of which took from 45 s to hours, or gigabytes), scaled to the
limits of kb/parse/limits.py and beyond, plus other shapes that stress markdown-it or kb's
own rules. A case just under a limit is parsed; one over it is kept as plain text with a
one-line warning naming the limit. Either way the note is searchable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.parse.note import parse_note

pytestmark = pytest.mark.slow

MB = 1 << 20
PLAIN = "kept as plain text"
FRONT_MATTER_IGNORED = "front matter has"
NESTED = "front matter is nested too deeply; ignored"
# CPU seconds. The cases of issue 9 took 45 s to hours; the slowest case here parses in
# about 1.5 s on an idle machine (markdown-it stops autocompleting a table at 65,536
# cells) and took 3.1 s on a loaded 2-core CI. The bound tells bounded from unbounded;
# how fast parsing is lives in benchmarks/.
SECONDS = 10.0


def _links(count: int) -> str:
    return "".join(f"[l{i}](n{i}.md) " for i in range(count))


def _table(rows: int, columns: int) -> str:
    def row(cell: str) -> str:
        return "|" + "|".join(f"{cell}{i}" for i in range(columns)) + "|\n"

    return row("c") + "|" + "---|" * columns + "\n" + row("v") * rows


def _table_of_size(size: int, columns: int = 8) -> str:
    return _table(size // len(f"|v{columns}|" * columns), columns)


def _wide_table(columns: int) -> str:
    return "|" + "a|" * columns + "\n|" + "-|" * columns + "\n|" + "b|" * columns + "\n"


# name -> (a function making the note's text, the warning it must get or "" for none).
# Built lazily: together the texts are tens of megabytes.
CASES: dict[str, tuple[Callable[[], str], str]] = {
    # Issue 9, at the size reported and near or over the limits.
    "heading-id-issue": (lambda: "## x {" + "#" * 4000 + "\n", ""),
    "heading-id": (lambda: "## x {" + "#" * 99_000 + "\n", ""),
    "heading-id-1mb": (lambda: "## x {" + "#" * MB + "\n", PLAIN),
    "links-issue": (lambda: _links(10_000), ""),
    "links": (lambda: _links(9_990), ""),
    "links-1mb": (lambda: _links(60_000), PLAIN),
    "front-matter-blank-lines": (lambda: "---\n" + "\n" * 60_000 + "a: [\n---\nbody\n", ""),
    "front-matter-space-lines": (lambda: "---\n" + " \n" * 30_000 + "a: [\n---\nbody\n", ""),
    "front-matter-blank-lines-1mb": (
        lambda: "---\n" + "\n" * MB + "a: [\n---\nbody\n",
        FRONT_MATTER_IGNORED,
    ),
    "front-matter-space-lines-1mb": (
        lambda: "---\n" + " \n" * (MB // 2) + "a: [\n---\nbody\n",
        FRONT_MATTER_IGNORED,
    ),
    "table-4.9mb": (lambda: _table_of_size(int(4.9 * MB)), PLAIN),
    "table-2.2mb": (lambda: _table_of_size(int(2.2 * MB)), PLAIN),
    "x-lines-4mb": (lambda: "x\n" * (2 * MB), PLAIN),
    # Other shapes, under and over the limits.
    "table-at-limits": (lambda: _table(4_900, 3), ""),
    "table-over-limits": (lambda: _table(19_000, 3), PLAIN),
    "table-6k-columns": (lambda: _wide_table(6_000), ""),
    "table-10k-columns": (lambda: _wide_table(10_000), PLAIN),
    "table-header-autocompleted": (lambda: _wide_table(6_000) + "x\n" * 19_000, ""),
    "single-line-1.9mb": (lambda: "word " * 380_000, ""),
    "single-line-5mb": (lambda: "word " * MB, PLAIN),
    "blockquotes-90-deep": (lambda: ">" * 90 + " deep\n", ""),
    "blockquotes-10k-deep": (lambda: ">" * 10_000 + " deep\n", PLAIN),
    "blockquote-lines-deepening": (lambda: "".join(">" * i + " q\n" for i in range(1, 440)), PLAIN),
    "lists-40-deep": (lambda: "".join("  " * i + "- item\n" for i in range(40)), ""),
    "lists-1000-deep": (lambda: "".join("  " * i + "- item\n" for i in range(1000)), PLAIN),
    "brackets-nested": (lambda: "[" * 9_900 + "x" + "]" * 9_900, ""),
    "stars-99k": (lambda: "*" * 99_000, ""),
    "underscores-99k": (lambda: "_" * 99_000, ""),
    "backticks-99k": (lambda: "`" * 99_000, ""),
    "stars-100k": (lambda: "*" * 100_001, PLAIN),
    "underscores-100k": (lambda: "_" * 100_001, PLAIN),
    "backticks-100k": (lambda: "`" * 100_001, PLAIN),
    "emphasis-words": (lambda: "*a " * 95_000, ""),
    "emphasis-mixed": (lambda: "*_" * 49_000, ""),
    "emphasis-mixed-1mb": (lambda: "*_" * (MB // 2), PLAIN),
    "backtick-runs-of-every-length": (lambda: "".join("`" * i + "a" for i in range(1, 440)), ""),
    "brackets-9.9k": (lambda: "[" * 9_900, ""),
    "brackets-100k": (lambda: "[" * 100_000, PLAIN),
    "angles-99k": (lambda: "<" * 99_000, ""),
    "angles-1mb": (lambda: "<a " * (MB // 3), PLAIN),
    "html-block-angles": (lambda: "<div>" + "<" * 99_000 + "\n", ""),
    "html-comment-1mb": (lambda: "<!--" + "x " * (MB // 2) + "-->\n", ""),
    "html-comment-unclosed": (lambda: "<!--\n" + "x\n" * 19_000, ""),
    "shortcode-opens": (lambda: "{{< " * 33_000, ""),
    "shortcode-opens-1mb": (lambda: "{{< " * (MB // 4), PLAIN),
    "shortcode-refs-unclosed": (lambda: '{{< ref "' * 30_000, ""),
    "wikilink-opens": (lambda: "[[" * 4_900, ""),
    "wikilink-opens-1mb": (lambda: "[[" * (MB // 2), PLAIN),
    "wikilinks-unclosed": (lambda: "[[a" * 4_900, ""),
    "hashtags": (lambda: "#tag " * 95_000, ""),
    "hashtag-1mb-long": (lambda: "#" + "a/" * (MB // 2), ""),
    "headings-19k": (lambda: "# h\n" * 19_000, ""),
    "headings-100k": (lambda: "# h\n" * 100_000, PLAIN),
    "reference-definitions": (lambda: "".join(f"[r{i}]: u{i}.md\n" for i in range(9_900)), ""),
    "yaml-nested-flow": (lambda: "---\na: " + "[" * 30_000 + "\n---\nbody\n", ""),
    "yaml-nested-pure-python": (
        lambda: "---\nx: a *b\nb: " + "[" * 10_000 + "\n---\nbody\n",
        NESTED,
    ),
    "toml-nested": (lambda: "+++\na = " + "[" * 30_000 + "\n+++\nbody\n", NESTED),
}


def _marker(index: int) -> str:
    """A word found in no other note (letters only, so the tokenizer keeps it whole)."""
    letters = ""
    index += 26
    while index:
        index, digit = divmod(index, 26)
        letters = "abcdefghijklmnopqrstuvwxyz"[digit] + letters
    return "zq" + letters


def note_text(name: str) -> str:
    make, _ = CASES[name]
    return make() + f"\n\n{_marker(list(CASES).index(name))}\n"


def write_suite(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in CASES:
        (folder / f"{name}.md").write_text(note_text(name), encoding="utf-8")


@pytest.mark.parametrize("name", CASES)
def test_each_pathological_note_parses_quickly_or_is_kept_as_plain_text(name: str) -> None:
    text = note_text(name)
    _, expected_warning = CASES[name]
    start = time.process_time()
    note = parse_note(f"{name}.md", text)
    elapsed = time.process_time() - start
    assert elapsed < SECONDS, f"{name} took {elapsed:.1f} s of CPU to parse"
    limit_warnings = [
        p.message
        for p in note.problems
        if p.kind == "too-complex" or "over the limit" in p.message or NESTED in p.message
    ]
    if expected_warning:
        assert len(limit_warnings) == 1
        assert expected_warning in limit_warnings[0]
        assert "\n" not in limit_warnings[0]
    else:
        assert limit_warnings == []
    assert _marker(list(CASES).index(name)) in note.text + note.code
    if expected_warning == PLAIN:
        assert note.text == text
        assert note.links == []
        assert note.headings == []
        assert note.title == name


def test_a_note_over_a_limit_keeps_its_front_matter() -> None:
    text = "---\ntitle: Huge log\ntags: [logs]\ndate: 2024-05-01\n---\n" + "x\n" * 30_000
    note = parse_note("huge.md", text)
    assert (note.title, note.tags, note.date) == ("Huge log", ["logs"], "2024-05-01")
    assert [(p.kind, p.message) for p in note.problems] == [
        (
            "too-complex",
            "Markdown body has 30,001 lines, over the limit of 20,000; kept as plain text",
        )
    ]
    assert note.text.startswith("x\nx\n")
    assert note.summary.startswith("x x x") and note.summary.endswith("…")


@pytest.fixture(scope="module")
def ingested_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, float]:
    """The whole suite ingested by one `kb ingest`: its folder, exit code and peak RSS in MB."""
    folder = tmp_path_factory.mktemp("suite")
    write_suite(folder / "notes")
    (folder / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    # A parent of its own, so no other test's child counts in RUSAGE_CHILDREN.
    measure = (
        "import resource, subprocess, sys\n"
        "run = subprocess.run([sys.executable, '-m', 'kb', '--kb', sys.argv[1], 'ingest'],"
        " capture_output=True)\n"
        "print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env.pop("KB_HOME", None)
    result = subprocess.run(
        [sys.executable, "-c", measure, str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env=env,
    )
    returncode, max_rss = map(int, result.stdout.split())
    max_rss_mb = max_rss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return folder, returncode, max_rss_mb


def test_the_whole_suite_ingests_in_one_run_under_500_mb(
    ingested_suite: tuple[Path, int, float],
) -> None:
    _, returncode, max_rss_mb = ingested_suite
    assert returncode == 0
    assert max_rss_mb < 500, f"peak RSS {max_rss_mb:.0f} MB"


def test_every_pathological_note_is_stored_and_searchable(
    ingested_suite: tuple[Path, int, float],
) -> None:
    folder, _, _ = ingested_suite
    kb = KnowledgeBase.open(folder)
    for index, name in enumerate(CASES):
        assert kb._store.notes.by_path(f"{name}.md") is not None, name
        assert [hit.path for hit in kb.search(_marker(index)).hits] == [f"{name}.md"], name
