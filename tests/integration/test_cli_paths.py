"""One path style in every command (issue 38): a note's file relative to the current folder
when that folder is inside the knowledge base, else whole; what one command prints, another
takes back (kb show, kb mv)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli as run

NOTES = {
    "eng/redis-study.md": "---\ntitle: Redis 学习笔记\ntags: [redis]\n---\n\nredis zset 跳表\n",
    "posts/rate-limit.md": (
        "---\ntitle: 限流\ntags: [redis]\n---\n\nredis 限流，见 [笔记](../eng/redis-study.md)\n"
    ),
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    made = make_kb(NOTES)
    made.ingest()
    return made


def printed_paths(kb: KnowledgeBase) -> dict[str, str]:
    """The redis note's file as each command prints it, from the current folder."""
    searched = run(kb, "search", "zset").stdout.splitlines()
    linked = run(kb, "links", "限流").stdout.splitlines()
    checked = run(kb, "check", "--json")  # no problems: the file is taken from kb show
    assert checked.exit_code == 0
    return {
        "search": searched[1].split("  ")[0],
        "search --paths": run(kb, "search", "--paths", "zset").stdout.strip(),
        "search --json": json.loads(run(kb, "search", "--json", "zset").stdout)[0]["file"],
        "list": run(kb, "list", "tag:redis", "--sort", "path").stdout.splitlines()[0],
        "recent": sorted(run(kb, "recent").stdout.splitlines())[0],
        "links": next(line for line in linked if "Redis 学习笔记" in line).split("  ")[-2],
        "show --json": json.loads(run(kb, "show", "--json", "redis-study").stdout)["file"],
        "mv --dry-run": run(kb, "mv", "--dry-run", "redis-study", "posts/").stdout.split()[-3],
    }


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("", Path("notes", "eng", "redis-study.md")),  # the knowledge base's top
        ("notes/posts", Path("..", "eng", "redis-study.md")),  # inside a notes folder
    ],
)
def test_every_command_prints_a_note_from_here_inside_the_knowledge_base(
    kb: KnowledgeBase, monkeypatch, where: str, expected: Path
) -> None:
    monkeypatch.chdir(kb.home / where)
    assert printed_paths(kb) == dict.fromkeys(printed_paths(kb), str(expected))


def test_from_outside_the_knowledge_base_every_command_prints_the_whole_path(
    kb: KnowledgeBase, monkeypatch, tmp_path_factory
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    whole = str(kb.notes_root / "eng" / "redis-study.md")
    assert printed_paths(kb) == dict.fromkeys(printed_paths(kb), whole)


@pytest.mark.parametrize("where", ["", "notes", "notes/posts"])
def test_a_printed_path_goes_back_into_kb_show_and_kb_mv(
    kb: KnowledgeBase, monkeypatch, where: str
) -> None:
    monkeypatch.chdir(kb.home / where)
    file = run(kb, "search", "--paths", "zset").stdout.strip()
    assert run(kb, "show", "--raw", file).stdout.startswith("---\ntitle: Redis 学习笔记")
    posts = Path(file).parent.parent / "posts"  # the posts folder, from here
    moved = run(kb, "mv", "--dry-run", file, f"{posts}/")
    assert moved.exit_code == 0, moved.output
    destination = os.path.relpath(posts / "redis-study.md")  # from notes/posts: redis-study.md
    assert moved.stdout.splitlines()[-1] == f"would move {file} → {destination}"


def test_mv_takes_new_path_inside_the_notes_root_too(kb: KnowledgeBase, monkeypatch) -> None:
    """From the knowledge base's top, `posts/` is no folder here but is one in the notes
    root: the style of --json's `path` (kb refused it, naming the other style)."""
    monkeypatch.chdir(kb.home)
    moved = run(kb, "mv", "eng/redis-study.md", "posts/")
    assert moved.exit_code == 0, moved.output
    assert moved.stdout.splitlines()[-1].startswith(
        f"moved {Path('notes', 'eng', 'redis-study.md')} → "
        f"{Path('notes', 'posts', 'redis-study.md')};"
    )
    assert (kb.notes_root / "posts" / "redis-study.md").is_file()
