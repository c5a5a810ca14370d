"""kb mv: the note moves, every link to it follows (anchors, link text and the way each
was written kept), all files or none, then ingest."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.links import move_transaction
from kb.links.moving import Place, moved_own_target, new_target
from tests.conftest import run_cli as run

ROOT = Path("/r")
OLD, NEW = ROOT / "eng/redis.md", ROOT / "db/redis-notes.md"


def _new(kind: str, source: str, target: str, old: Path = OLD, new: Path = NEW) -> str | None:
    return new_target(kind, target, Place(ROOT / source, ROOT), old, new)


@pytest.mark.parametrize(
    ("kind", "source", "target", "new"),
    [
        ("markdown", "eng/a.md", "redis.md", "../db/redis-notes.md"),
        ("markdown", "eng/a.md", "./redis.md", "../db/redis-notes.md"),
        ("markdown", "eng/a.md", "redis", "../db/redis-notes"),  # no .md kept
        ("markdown", "eng/a.md", "redis.html", "../db/redis-notes.html"),
        ("markdown", "life/b.md", "../eng/redis.md", "../db/redis-notes.md"),
        ("reference", "life/b.md", "../eng/redis.md", "../db/redis-notes.md"),
        ("markdown", "x.md", "/eng/redis.md", "/db/redis-notes.md"),  # root-absolute
        ("hugo-ref", "x.md", "eng/redis.md", "db/redis-notes.md"),
        ("front-matter", "x.md", "eng/redis.md", "db/redis-notes.md"),
        ("wikilink", "x.md", "redis", "redis-notes"),  # the stem changed
        ("wikilink", "x.md", "Redis", "redis-notes"),
        ("wikilink", "x.md", "eng/redis", "db/redis-notes"),
        ("wikilink", "x.md", "Redis 学习笔记", "Redis 学习笔记"),  # a title follows by itself
        ("front-matter", "x.md", "Redis 学习笔记", "Redis 学习笔记"),
        ("url", "x.md", "https://blog.example.com/eng/redis/", None),  # kb cannot rewrite it
    ],
)
def test_a_link_to_the_moved_note_follows_it(
    kind: str, source: str, target: str, new: str | None
) -> None:
    assert _new(kind, source, target) == new


def test_encoding_is_kept() -> None:
    old, new = ROOT / "eng/显存 x.md", ROOT / "gpu/显存 y.md"
    assert _new("markdown", "a.md", "eng/%E6%98%BE%E5%AD%98%20x.md", old, new) == (
        "gpu/%E6%98%BE%E5%AD%98%20y.md"
    )
    assert _new("markdown", "a.md", "eng/显存%20x.md", old, new) == "gpu/显存%20y.md"


@pytest.mark.parametrize(
    ("target", "new"),
    [
        ("limiter.md", "../eng/limiter.md"),
        ("img/zset.png", "../eng/img/zset.png"),
        ("redis.md", "redis-notes.md"),  # a link to itself follows it, not its old path
        ("./redis.md", "redis-notes.md"),
    ],
)
def test_the_notes_own_relative_links_follow_it_to_its_new_folder(target: str, new: str) -> None:
    assert moved_own_target(target, OLD, NEW) == new


NOTES = {
    "eng/redis.md": "---\ntitle: Redis 学习笔记\n---\n\n## ZSET\n\n见 [限流](limiter.md)。\n",
    "eng/limiter.md": "# 限流\n\n用 [Redis 的 ZSET](redis.md#zset) 和 [[redis]]。\n",
    "life/list.md": "# 清单\n\n- [笔记](../eng/redis.md)\n- [[Redis 学习笔记]]\n",
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    kb = make_kb(NOTES)
    kb.ingest()
    return kb


def test_dry_run_lists_each_change_and_changes_nothing(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    result = run(kb, "mv", "--dry-run", "Redis 学习笔记", "notes/db/redis-notes.md")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "notes/eng/limiter.md:3: redis.md → ../db/redis-notes.md",
        "notes/eng/limiter.md:3: redis → redis-notes",
        "notes/life/list.md:3: ../eng/redis.md → ../db/redis-notes.md",
        "notes/eng/redis.md:7: limiter.md → ../eng/limiter.md",
        "would move notes/eng/redis.md → notes/db/redis-notes.md",
    ]
    assert (kb.notes_root / "eng/redis.md").is_file()
    assert not (kb.notes_root / "db").exists()


def test_mv_moves_rewrites_and_ingests(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    result = run(kb, "mv", "eng/redis.md", "notes/db/redis-notes.md")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(
        "moved notes/eng/redis.md → notes/db/redis-notes.md; 4 links rewritten in 3 files\n"
    )
    root = kb.notes_root
    assert not (root / "eng/redis.md").exists()
    assert (
        (root / "db/redis-notes.md")
        .read_text(encoding="utf-8")
        .endswith("见 [限流](../eng/limiter.md)。\n")
    )
    assert (root / "eng/limiter.md").read_text(encoding="utf-8") == (
        "# 限流\n\n用 [Redis 的 ZSET](../db/redis-notes.md#zset) 和 [[redis-notes]]。\n"
    )
    assert "- [[Redis 学习笔记]]" in (root / "life/list.md").read_text(encoding="utf-8")
    assert run(kb, "check").exit_code == 0  # no broken link anywhere
    moved = kb.find_note("db/redis-notes.md")
    assert {b.path for b in kb.links.connections(moved).backlinks} == {
        "eng/limiter.md",
        "life/list.md",
    }


def test_mv_into_a_folder_keeps_the_name(kb, monkeypatch) -> None:
    (kb.notes_root / "db").mkdir()
    monkeypatch.chdir(kb.notes_root)
    assert run(kb, "mv", "限流", "db").exit_code == 0
    assert (kb.notes_root / "db/limiter.md").is_file()


def test_a_failed_write_puts_every_file_back(kb, monkeypatch) -> None:
    before = {p: p.read_bytes() for p in kb.notes_root.rglob("*.md")}
    real_write = move_transaction._write_new
    calls = []

    def full_disk_on_the_second_write(path, data, like):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(path, data, like)

    monkeypatch.setattr(move_transaction, "_write_new", full_disk_on_the_second_write)
    monkeypatch.chdir(kb.home)
    result = run(kb, "mv", "eng/redis.md", "notes/db/x.md")
    assert result.exit_code == 1
    assert result.stderr == "kb: disk full\n"
    assert {p: p.read_bytes() for p in kb.notes_root.rglob("*.md")} == before


def test_mv_refuses_an_existing_destination_or_another_root(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    result = run(kb, "mv", "eng/redis.md", "notes/life/list.md")
    assert result.exit_code == 2
    assert "already exists" in result.stderr
    result = run(kb, "mv", "eng/redis.md", "../elsewhere.md")
    assert result.exit_code == 2
    assert "outside every notes root" in result.stderr
