"""The pure helpers behind kb mcp: pages and cursors (kb/paging.py), sections
(kb/note_sections.py), paths inside the roots (kb/safe_paths.py) and writes that name
the hash they read (kb/note_writing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import UsageError
from kb.notes.paging import decode_cursor, encode_cursor, page_end, safe_cut
from kb.notes.safe_paths import checked_file, folder_inside, looks_like_path, refuse_outside
from kb.notes.sections import find_section, sections
from kb.notes.writing import (
    appended,
    content_hash,
    keeping_newlines,
    new_note_file,
    replaced_once,
    write_if_unchanged,
)

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one glyph of five code points
E_ACUTE = "e\u0301"  # é as a letter and a combining accent


@pytest.mark.parametrize(
    ("text", "at", "cut"),
    [
        ("abcdef", 3, 3),
        ("ab" + E_ACUTE + "cd", 3, 2),  # before the e, not between it and its accent
        ("a" + FAMILY + "b", 3, 1),  # the family stays whole
        ("a" + FAMILY + "b", 6, 6),
        (FAMILY + "b", 2, 5),  # a page smaller than the glyph takes it whole
        ("中文字符", 2, 2),
        ("abc", 10, 3),
    ],
)
def test_safe_cut_never_splits_a_glyph(text: str, at: int, cut: int) -> None:
    assert safe_cut(text, at) == cut


@pytest.mark.parametrize(
    ("text", "start", "size", "end"),
    [
        ("short", 0, 100, 5),
        ("line one\nline two\nline three", 0, 20, 18),  # after the line break
        ("word " * 10, 0, 12, 10),  # after a space
        ("中" * 30, 0, 10, 10),  # no break and no space: at the size
        ("中" * 30, 25, 10, 30),
    ],
)
def test_page_end(text: str, start: int, size: int, end: int) -> None:
    assert page_end(text, start, size) == end


def test_pages_cover_the_text_exactly() -> None:
    text = ("Redis 学习笔记 " + FAMILY + E_ACUTE + "\n") * 300
    pieces, start = [], 0
    while start < len(text):
        end = page_end(text, start, 97)
        assert end > start
        pieces.append(text[start:end])
        start = end
    assert "".join(pieces) == text
    assert not any(p[:1] in ("\u200d", "\u0301") for p in pieces)


def test_cursor_round_trip_and_refusals() -> None:
    cursor = encode_cursor("search", q="显存 估算", offset=20)
    assert decode_cursor(cursor, "search") == {"q": "显存 估算", "offset": 20}
    with pytest.raises(UsageError, match="call read_note again without a cursor"):
        decode_cursor(cursor, "read_note")
    with pytest.raises(UsageError, match="without a cursor"):
        decode_cursor("not a cursor!", "search")


NOTE = """---
title: T
---
# Top

intro

## Setup

setup text
```
## not a heading (code)
```

### Detail

deep

## Usage

use it
"""


def test_sections_end_at_the_next_heading_of_their_level() -> None:
    found = {s.title: NOTE[s.start : s.end] for s in sections(NOTE)}
    assert list(found) == ["Top", "Setup", "Detail", "Usage"]
    assert found["Setup"].startswith("## Setup\n") and "### Detail" in found["Setup"]
    assert "Usage" not in found["Setup"]
    assert found["Usage"] == "## Usage\n\nuse it\n"


@pytest.mark.parametrize("heading", ["Setup", "setup", "## Setup", "setup"])
def test_find_section_by_text_or_anchor(heading: str) -> None:
    assert find_section(NOTE, heading).title == "Setup"


def test_find_section_names_the_headings_when_none_matches() -> None:
    with pytest.raises(UsageError, match="its headings: Top; Setup; Detail; Usage"):
        find_section(NOTE, "Install")


@pytest.mark.parametrize(
    ("name", "is_path"),
    [
        ("redis", False),
        ("posts/a.md", False),
        ("../x", True),
        ("/etc/passwd", True),
        ("a/../../b", True),
        ("~/x", True),
        ("Redis 学习笔记", False),
        ("C:/x", True),
    ],
)
def test_looks_like_path(name: str, is_path: bool) -> None:
    assert looks_like_path(name) is is_path


def test_paths_outside_the_roots_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "a").mkdir(parents=True)
    (root / "a" / "n.md").write_text("x", encoding="utf-8")
    outside = tmp_path / "secret.md"
    outside.write_text("secret", encoding="utf-8")
    (root / "link.md").symlink_to(outside)
    refuse_outside("a/../a/n.md", [root], root)  # stays inside: fine
    for name in ("../secret.md", str(outside), "a/../../secret.md"):
        with pytest.raises(UsageError, match="outside the notes roots"):
            refuse_outside(name, [root], root)
    assert checked_file(root / "a" / "n.md", [root]) == root / "a" / "n.md"
    with pytest.raises(UsageError, match="leads outside the notes roots"):
        checked_file(root / "link.md", [root])
    assert folder_inside("a/new", root, [root]) == root / "a" / "new"
    for folder in ("..", "/tmp", "a/../../x"):
        with pytest.raises(UsageError, match="folder"):
            folder_inside(folder, root, [root])


@pytest.mark.parametrize(
    ("before", "addition", "after"),
    [("a", "b", "a\nb\n"), ("a\n", "b\n", "a\nb\n"), ("", "b", "b\n")],
)
def test_appended(before: str, addition: str, after: str) -> None:
    assert appended(before, addition) == after


@pytest.mark.parametrize(
    ("old", "error"),
    [("zzz", "does not occur"), ("same", "occurs 2 times"), ("", "is empty")],
)
def test_replaced_once_refuses_unless_the_text_occurs_once(old: str, error: str) -> None:
    with pytest.raises(UsageError, match=error):
        replaced_once("same and same", old, "x")
    assert replaced_once("one same two", "one", "1") == "1 same two"


@pytest.mark.parametrize(
    ("raw", "after"),
    [
        ("a\r\nb\r\n", "a\r\nB\r\nc\r\n"),  # a CRLF file stays CRLF
        ("a\nb\n", "a\nB\nc\n"),
        ("a\r\nb\n", "a\r\nB\nc\n"),  # mixed: left as it is, edited as it is
    ],
)
def test_edits_keep_the_files_line_ends(raw: str, after: str) -> None:
    def change(text: str) -> str:
        return appended(text.replace("b\n", "B\n"), "c")

    assert keeping_newlines(raw, change) == after


def test_write_if_unchanged_refuses_a_stale_hash(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("first\n", encoding="utf-8")
    read = content_hash(note.read_bytes())
    note.write_text("edited in the editor\n", encoding="utf-8")
    with pytest.raises(UsageError, match="changed since it was read"):
        write_if_unchanged(note, read, "clobbered\n")
    assert note.read_text(encoding="utf-8") == "edited in the editor\n"
    now = content_hash(note.read_bytes())
    note.chmod(0o640)
    assert write_if_unchanged(note, now, "new\n") == content_hash(b"new\n")
    assert note.read_text(encoding="utf-8") == "new\n"
    assert note.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["n.md"]  # no temporary file left


def test_new_note_file_never_replaces_a_file(tmp_path: Path) -> None:
    (tmp_path / "redis.md").write_text("mine\n", encoding="utf-8")
    made = new_note_file(tmp_path, "Redis", ["db", "cache/redis"])
    assert made.name == "redis-2.md"
    assert "tags: [db, cache/redis]" in made.read_text(encoding="utf-8")
    assert (tmp_path / "redis.md").read_text(encoding="utf-8") == "mine\n"
    with pytest.raises(UsageError, match="tag 'a, b'"):
        new_note_file(tmp_path, "x", ["a, b"])


def test_capped_cuts_after_a_line_and_says_how_to_ask_for_less() -> None:
    pytest.importorskip("mcp")
    from kb.mcp.answers import capped

    text = "".join(f"line {i}\n" for i in range(100))
    assert capped(text, "ask less", budget=10_000) == text
    short = capped(text, "ask less", budget=30)
    assert short == "line 0\nline 1\nline 2\nline 3\n… (cut at 30 characters; ask less)\n"
