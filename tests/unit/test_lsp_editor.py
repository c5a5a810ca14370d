"""kb.notes.editor: what the editor server reads from a buffer's text alone (table tests)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from kb.models import Heading
from kb.names.resolve import NoteName
from kb.notes.buffer import place_rows
from kb.notes.editor import (
    HUGO_REF,
    MARKDOWN,
    TAG,
    WIKILINK,
    CompletionContext,
    completion_context,
    front_matter_key,
    link_at,
    name_keys,
    outline,
    placed_links,
    rank_notes,
    relative_target,
    tag_at,
)
from kb.notes.naming import title_pinyin


def _at_bar(line: str, front: str = "") -> CompletionContext | None:
    """The context at the last ``|`` in ``line`` (the cursor)."""
    index = line.rindex("|")
    return completion_context(line[:index] + line[index + 1 :], index, front)


@pytest.mark.parametrize(
    ("line", "front", "expected"),
    [
        ("见 [[xcgs|", "", CompletionContext(WIKILINK, "xcgs", 4)),
        ("见 [[xcgs|]]", "", CompletionContext(WIKILINK, "xcgs", 4)),
        ("😀 [[|", "", CompletionContext(WIKILINK, "", 4)),
        ("[[note#Roof|", "", CompletionContext("heading", "Roof", 7, "note", WIKILINK)),
        ("[[a|label|", "", None),  # the label after | names nothing
        ("[[done]] then |", "", None),
        ("see [text](../po|", "", CompletionContext(MARKDOWN, "../po", 11)),
        ("see [text](a.md#sec|", "", CompletionContext("heading", "sec", 16, "a.md", MARKDOWN)),
        ("[t](https://x.org/|", "", None),
        ('{{< ref "posts/m|', "", CompletionContext(HUGO_REF, "posts/m", 9)),
        ('{{< relref "|', "", CompletionContext(HUGO_REF, "", 12)),
        ("a #gp|", "", CompletionContext(TAG, "gp", 3)),
        ("#|", "", CompletionContext(TAG, "", 1)),
        ("，#显|", "", CompletionContext(TAG, "显", 2)),
        ("issue#1|", "", None),  # a # inside a word is no tag
        ("tags: [gpu, che|", "tags", CompletionContext(TAG, "che", 12)),
        ("  - cu|", "tags", CompletionContext(TAG, "cu", 4)),
        ("title: x|", "title", None),
    ],
)
def test_completion_context(line: str, front: str, expected: CompletionContext | None) -> None:
    assert _at_bar(line, front) == expected


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("---\ntitle: x\ntags:\n  - a\n---\nbody", 3, "tags"),
        ("---\ntitle: x\ntags:\n  - a\n---\nbody", 1, "title"),
        ("---\ntitle: x\n---\ntags: here", 3, ""),  # the body: no key
        ("no front matter\ntags: x", 1, ""),
    ],
)
def test_front_matter_key(text: str, line: int, key: str) -> None:
    assert front_matter_key(text.split("\n"), line) == key


@pytest.mark.parametrize(
    ("line", "index", "front", "tag"),
    [
        ("see #gpu/perf now", 6, "", "gpu/perf"),
        ("see #gpu/perf now", 1, "", ""),
        ("a#b", 2, "", ""),
        ("tags: [cheatsheet, gpu/memory]", 22, "tags", "gpu/memory"),
        ("  - cuda", 5, "tags", "cuda"),
    ],
)
def test_tag_at(line: str, index: int, front: str, tag: str) -> None:
    assert tag_at(line, index, front) == tag


@pytest.mark.parametrize(
    ("source", "target", "written"),
    [
        ("posts/a.md", "posts/b.md", "b.md"),
        ("posts/a.md", "engineering/显存 估算.md", "../engineering/显存%20估算.md"),
        ("a.md", "x/y (z).md", "x/y%20%28z%29.md"),
    ],
)
def test_relative_target(source: str, target: str, written: str) -> None:
    assert relative_target(source, target) == written


NAMES = [
    NoteName(1, "notes", "engineering/显存 估算.md", "显存估算速查"),
    NoteName(2, "notes", "engineering/redis-study.md", "Redis 学习笔记", aliases=("redis",)),
    NoteName(3, "notes", "posts/dtype-memory.md", "每个参数几个字节"),
    NoteName(4, "notes", "cs336/lecture-03-gpus.md", "CS336 Lecture 3：GPU"),
]


@pytest.mark.parametrize(
    ("typed", "first", "rule"),
    [
        ("xcgs", 1, "pinyin"),  # initials of 显存估算速查
        ("xiancun", 1, "pinyin"),
        ("显存", 1, "name"),
        ("ＲＥＤＩＳ", 2, "name"),  # full-width, any case
        ("redis studdy", 2, "fuzzy"),
        ("lecture-03", 4, "name"),  # by path
    ],
)
def test_rank_notes(typed: str, first: int, rule: str) -> None:
    ranked = rank_notes(name_keys(NAMES), typed, lambda n: title_pinyin(n.title))
    assert (ranked[0].note.id, ranked[0].rule) == (first, rule)


def test_rank_notes_offers_nothing_for_a_loose_likeness() -> None:
    assert rank_notes(name_keys(NAMES), "qqqq", lambda n: title_pinyin(n.title)) == []


def test_placed_links_find_each_target_on_its_line() -> None:
    text = '# T\n\n中文 [[显存 估算#表]] and [x](../a%20b.md#h) 😀 {{< ref "posts/m.md" >}}\n'
    links = placed_links(text)
    line = text.split("\n")[2]
    assert [(p.kind, line[p.start : p.end], p.anchor) for p in links] == [
        ("wikilink", "显存 估算", "表"),
        ("markdown", "../a%20b.md", "h"),
        ("hugo-ref", "posts/m.md", ""),
    ]
    wiki = links[0]
    assert line[wiki.outer_start : wiki.outer_end] == "[[显存 估算#表]]"
    assert link_at(links, 2, line.index("[x]")) is links[1]
    assert link_at(links, 2, 0) is None


def test_outline_nests_sections_to_the_next_heading_of_their_level() -> None:
    headings = [
        Heading(1, "A", "a", 1),
        Heading(2, "B", "b", 3),
        Heading(2, "C", "c", 5),
        Heading(1, "D", "d", 8),
    ]
    tree = outline(headings, 10)
    assert [(s.heading.text, s.first, s.last) for s in tree] == [("A", 0, 6), ("D", 7, 9)]
    assert [(s.heading.text, s.first, s.last) for s in tree[0].children] == [
        ("B", 2, 3),
        ("C", 4, 6),
    ]


class _Row(NamedTuple):
    id: int
    kind: str
    target: str
    anchor: str
    line: int  # 1-based


@pytest.mark.parametrize(
    ("text", "rows", "placed"),
    [
        # the target's text in prose, then the link: the link
        ("纯文本 redis-study 在前 [[redis-study]] 😀", [("wikilink", "redis-study", "", 1)],
         [(0, 21, 32)]),
        # two links to one note on a line: one place each, in order
        ("[[redis-study]] 和 [[redis-study#Intro]]",
         [("wikilink", "redis-study", "", 1), ("wikilink", "redis-study", "Intro", 1)],
         [(0, 2, 13), (0, 20, 31)]),
        # in code first, then the link
        ("`[[redis-study]]` [[redis-study]]", [("wikilink", "redis-study", "", 1)],
         [(0, 20, 31)]),
        # a code span opened on the line before: alone, the line holds two look-alikes;
        # the whole text says which one is the link
        ("a `x\n[[redis-study]]` [[redis-study]]", [("wikilink", "redis-study", "", 2)],
         [(1, 19, 30)]),
        # a typed front-matter link, which only the whole text shows
        ("---\nrelated: [redis-study]\n---\n# T\n", [("front-matter", "redis-study", "", 2)],
         [(1, 10, 21)]),
        # a reference-style link: its target is written elsewhere; its whole line
        ("[笔记][r] 与 redis-study\n\n[r]: redis-study.md\n",
         [("reference", "redis-study.md", "", 1)], [(0, 0, 21)]),
        # a stored link the text no longer holds: its whole line
        ("no link here", [("wikilink", "redis-study", "", 1)], [(0, 0, 12)]),
    ],
)  # fmt: skip
def test_place_rows(
    text: str, rows: list[tuple[str, str, str, int]], placed: list[tuple[int, int, int]]
) -> None:
    stored = [_Row(number, *row) for number, row in enumerate(rows)]
    found = place_rows(Path("n.md"), stored, text)
    assert [(p.line, p.start, p.end) for p in found] == placed
