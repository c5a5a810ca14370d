"""kb mv: the note moves, every link to it follows (anchors, link text and the way each
was written kept), all files or none, then ingest."""

from __future__ import annotations

import pytest

from kb import moving
from kb.knowledge_base import KnowledgeBase
from kb.moving import LinkAt, LinkEdit, plan_link_edits, rewrite_line
from tests.conftest import run_cli as run

OLD, NEW = "eng/redis.md", "db/redis-notes.md"


@pytest.mark.parametrize(
    ("link", "new"),
    [
        (LinkAt("eng/a.md", "markdown", "redis.md", 3), "../db/redis-notes.md"),
        (LinkAt("eng/a.md", "markdown", "./redis.md", 3), "../db/redis-notes.md"),
        (LinkAt("eng/a.md", "markdown", "redis", 3), "../db/redis-notes"),  # no .md kept
        (LinkAt("eng/a.md", "markdown", "redis.html", 3), "../db/redis-notes.html"),
        (LinkAt("life/b.md", "markdown", "../eng/redis.md", 3), "../db/redis-notes.md"),
        (LinkAt("life/b.md", "reference", "../eng/redis.md", 9), "../db/redis-notes.md"),
        (LinkAt("x.md", "markdown", "/eng/redis.md", 3), "/db/redis-notes.md"),  # root-absolute
        (LinkAt("x.md", "hugo-ref", "eng/redis.md", 3), "db/redis-notes.md"),
        (LinkAt("x.md", "front-matter", "eng/redis.md", 2), "db/redis-notes.md"),
        (LinkAt("x.md", "wikilink", "redis", 3), "redis-notes"),  # the stem changed
        (LinkAt("x.md", "wikilink", "Redis", 3), "redis-notes"),
        (LinkAt("x.md", "wikilink", "eng/redis", 3), "db/redis-notes"),
    ],
)
def test_a_link_to_the_moved_note_follows_it(link: LinkAt, new: str) -> None:
    edits, left = plan_link_edits(OLD, NEW, [link], [])
    assert edits == [LinkEdit(link.source, link.line, link.target, new)]
    assert left == []


@pytest.mark.parametrize(
    "link",
    [
        LinkAt("x.md", "wikilink", "Redis 学习笔记", 3),  # a title follows by itself
        LinkAt("x.md", "front-matter", "Redis 学习笔记", 2),
    ],
)
def test_links_by_name_need_no_change(link: LinkAt) -> None:
    assert plan_link_edits(OLD, NEW, [link], []) == ([], [])


def test_links_kb_cannot_rewrite_are_reported() -> None:
    url = LinkAt("x.md", "url", "https://blog.example.com/eng/redis/", 4)
    assert plan_link_edits(OLD, NEW, [url], []) == ([], [url])


def test_encoding_is_kept() -> None:
    encoded = LinkAt("a.md", "markdown", "eng/%E6%98%BE%E5%AD%98%20x.md", 1)
    edits, _ = plan_link_edits("eng/显存 x.md", "gpu/显存 y.md", [encoded], [])
    assert edits[0].new == "gpu/%E6%98%BE%E5%AD%98%20y.md"
    spaced = LinkAt("a.md", "markdown", "eng/显存%20x.md", 1)
    edits, _ = plan_link_edits("eng/显存 x.md", "gpu/显存 y.md", [spaced], [])
    assert edits[0].new == "gpu/显存%20y.md"


def test_the_notes_own_relative_links_follow_it_to_its_new_folder() -> None:
    outgoing = [
        LinkAt(OLD, "markdown", "limiter.md", 5),
        LinkAt(OLD, "image", "img/zset.png", 6),
        LinkAt(OLD, "markdown", "/cs/gpu.md", 7),  # root-absolute: unchanged
        LinkAt(OLD, "markdown", "https://redis.io", 8),
        LinkAt(OLD, "wikilink", "limiter", 9),
    ]
    edits, _ = plan_link_edits(OLD, NEW, [], outgoing)
    assert edits == [
        LinkEdit(OLD, 5, "limiter.md", "../eng/limiter.md"),
        LinkEdit(OLD, 6, "img/zset.png", "../eng/img/zset.png"),
    ]


@pytest.mark.parametrize(
    ("line", "old", "new", "expected"),
    [
        ("see [R](redis.md#zset) now", "redis.md", "x.md", "see [R](x.md#zset) now"),
        ("[[redis|the notes]] and [[redis#a]]", "redis", "x", "[[x|the notes]] and [[x#a]]"),
        ('{{< ref "eng/redis.md" >}}', "eng/redis.md", "x.md", '{{< ref "x.md" >}}'),
        ("uses: [eng/redis.md, b.md]", "eng/redis.md", "x.md", "uses: [x.md, b.md]"),
        ("[r]: redis.md", "redis.md", "x.md", "[r]: x.md"),
        ("[R](myredis.md)", "redis.md", "x.md", None),  # only a whole target
    ],
)
def test_rewrite_line(line: str, old: str, new: str, expected: str | None) -> None:
    assert rewrite_line(line, old, new) == expected


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
    assert {b.path for b in kb.connections(moved).backlinks} == {"eng/limiter.md", "life/list.md"}


def test_mv_into_a_folder_keeps_the_name(kb, monkeypatch) -> None:
    (kb.notes_root / "db").mkdir()
    monkeypatch.chdir(kb.notes_root)
    assert run(kb, "mv", "限流", "db").exit_code == 0
    assert (kb.notes_root / "db/limiter.md").is_file()


def test_a_failed_write_puts_every_file_back(kb, monkeypatch) -> None:
    before = {p: p.read_bytes() for p in kb.notes_root.rglob("*.md")}
    real_write = moving._write
    calls = []

    def full_disk_on_the_second_write(path, data, exclusive=False):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(path, data, exclusive)

    monkeypatch.setattr(moving, "_write", full_disk_on_the_second_write)
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
    result = run(kb, "mv", "eng/redis.md", "elsewhere.md")
    assert result.exit_code == 2
    assert "outside the note's notes root" in result.stderr
