"""kb mv costs no byte: only each link target's bytes change, in every encoding and line
ending; nothing is written over a save; modes, hard links and symlinks are kept; files
kb would lose a note in are refused. (Issue 21's failures 1-8; the kills are in
test_mv_kills.py.)"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli as run

TARGET = "# T\n\nthe target note\n"


def _kb(make_kb, notes: dict[str, str | bytes], config: str = "roots: [notes]\n") -> KnowledgeBase:
    kb = make_kb(notes, config)
    kb.ingest()
    return kb


def _mv(kb: KnowledgeBase, *args: str):
    return run(kb, "mv", *args)


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        # neither UTF-8 nor GB18030: the undecodable bytes stay as they were
        (
            "undecodable",
            b"# x\n\n\xff\xfe\x80 [t](t.md) \x81\n",
            b"# x\n\n\xff\xfe\x80 [t](zz.md) \x81\n",
        ),
        ("crlf", b"# x\r\n\r\n[t](t.md)\r\nend\r\n", b"# x\r\n\r\n[t](zz.md)\r\nend\r\n"),
        ("lone-cr", b"# x\r\r[t](t.md)\rend\r", b"# x\r\r[t](zz.md)\rend\r"),
        ("bom", b"\xef\xbb\xbf# x\n\n[t](t.md)\n", b"\xef\xbb\xbf# x\n\n[t](zz.md)\n"),
        (
            "utf16be",
            "\ufeff# 显存\n\n[t](t.md) 🎉\n".encode("utf-16-be"),
            "\ufeff# 显存\n\n[t](zz.md) 🎉\n".encode("utf-16-be"),
        ),
        (
            "utf16le-crlf",
            "\ufeff# x\r\n\r\n[t](t.md)\r\n".encode("utf-16-le"),
            "\ufeff# x\r\n\r\n[t](zz.md)\r\n".encode("utf-16-le"),
        ),
        (
            "gbk",
            "# 显存带宽\n\n见 [目标](t.md)。\n".encode("gbk"),
            "# 显存带宽\n\n见 [目标](zz.md)。\n".encode("gbk"),
        ),
    ],
)
def test_only_the_link_target_bytes_change(make_kb, name: str, before: bytes, after: bytes) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, f"{name}.md": before})
    result = _mv(kb, "t.md", str(kb.notes_root / "zz.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / f"{name}.md").read_bytes() == after


def test_link_text_prose_and_code_are_never_rewritten(make_kb) -> None:
    linking = (
        "# a\n\n"
        "[a.md](a.md) and Pick option (a), \"a\" or 'a'.\n"
        "`[a](a.md)` in code, [[a]] and [[a|a]].\n\n"
        "```\n[a](a.md)\n```\n"
    )
    kb = _kb(make_kb, {"a.md": TARGET, "l.md": linking})
    assert _mv(kb, "a.md", str(kb.notes_root / "zz.md")).exit_code == 0
    assert (kb.notes_root / "l.md").read_text(encoding="utf-8") == (
        "# a\n\n"
        "[a.md](zz.md) and Pick option (a), \"a\" or 'a'.\n"
        "`[a](a.md)` in code, [[zz]] and [[zz|a]].\n\n"
        "```\n[a](a.md)\n```\n"
    )


@pytest.mark.parametrize(
    ("linking", "expected"),
    [
        ("# l\n\nsee [t][r].\n\n[r]: t.md\n", "# l\n\nsee [t][r].\n\n[r]: zz.md\n"),
        (
            '# l\n\n[t][r] and [t](t.md#t).\n\n[r]: <t.md#t> "T"\n',
            '# l\n\n[t][r] and [t](zz.md#t).\n\n[r]: <zz.md#t> "T"\n',
        ),
    ],
)
def test_reference_links_are_edited_where_they_are_defined(
    make_kb, linking: str, expected: str
) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": linking})
    result = _mv(kb, "t.md", str(kb.notes_root / "zz.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "l.md").read_text(encoding="utf-8") == expected
    assert run(kb, "check").exit_code == 0


def test_a_reference_style_image_in_the_moved_note_follows_it(make_kb) -> None:
    note = "# T\n\n![plot][p]\n\n[p]: img/plot.png\n"
    kb = _kb(make_kb, {"t.md": note, "img/plot.png": b"\x89PNG", "sub/x.md": "# x\n"})
    result = _mv(kb, "t.md", str(kb.notes_root / "sub/t.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "sub/t.md").read_text(encoding="utf-8") == (
        "# T\n\n![plot][p]\n\n[p]: ../img/plot.png\n"
    )


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\x85", "\x1c", "\u2029", "\v"])
def test_line_breaks_markdown_does_not_count_do_not_shift_the_links(
    make_kb, separator: str
) -> None:
    linking = f"# l\n\nbefore{separator}after\n\n[t](t.md)\n"
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": linking})
    result = _mv(kb, "t.md", str(kb.notes_root / "zz.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "l.md").read_text(encoding="utf-8") == linking.replace(
        "(t.md)", "(zz.md)"
    )


def test_a_notes_links_to_itself_follow_it(make_kb) -> None:
    note = "# T\n\n## Part\n\n[me](t.md) [part](t.md#part) [here](#part) [[t]] [[t#Part]]\n"
    kb = _kb(make_kb, {"t.md": note, "sub/x.md": "# x\n"})
    result = _mv(kb, "t.md", str(kb.notes_root / "sub/zz.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "sub/zz.md").read_text(encoding="utf-8") == (
        "# T\n\n## Part\n\n[me](zz.md) [part](zz.md#part) [here](#part) [[zz]] [[zz#Part]]\n"
    )
    assert run(kb, "check").exit_code == 0


def test_a_trailing_slash_means_into_that_folder(make_kb, monkeypatch) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": "# l\n\n[t](t.md)\n"})
    monkeypatch.chdir(kb.notes_root)
    result = _mv(kb, "t.md", "archive/")
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "archive/t.md").is_file()
    assert not (kb.notes_root / "archive.md").exists()
    assert (kb.notes_root / "l.md").read_text(encoding="utf-8") == "# l\n\n[t](archive/t.md)\n"


@pytest.mark.parametrize(
    ("config", "destination", "rule"),
    [
        ("roots: [notes]\n", ".hidden/t.md", ".hidden is hidden"),
        ("roots: [notes]\nexclude: [drafts]\n", "drafts/t.md", "matches exclude: 'drafts'"),
        ("roots: [notes]\n", "node_modules/t.md", "a tool's folder"),
    ],
)
def test_a_note_is_never_moved_where_kb_would_lose_it(
    make_kb, config: str, destination: str, rule: str
) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": "# l\n\n[t](t.md)\n"}, config)
    before = {p: p.read_bytes() for p in kb.notes_root.rglob("*") if p.is_file()}
    result = _mv(kb, "t.md", str(kb.notes_root / destination))
    assert result.exit_code == 2
    assert rule in result.stderr
    assert {p: p.read_bytes() for p in kb.notes_root.rglob("*") if p.is_file()} == before


def test_outside_every_root_and_onto_a_file_are_refused(make_kb, tmp_path) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "other.md": "# o\n"})
    result = _mv(kb, "t.md", str(tmp_path / "elsewhere.md"))
    assert result.exit_code == 2
    assert "outside every notes root" in result.stderr
    result = _mv(kb, "t.md", str(kb.notes_root / "other.md"))
    assert result.exit_code == 2
    assert "already exists" in result.stderr


def _store_digest(kb: KnowledgeBase) -> dict[str, str]:
    """The store's bytes: SQLite's shared-memory file and an empty write-ahead log,
    which any reader makes, do not count."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in kb.config.index_dir.iterdir()
        if p.is_file()
        and not p.name.endswith("-shm")
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


def test_dry_run_writes_nothing_not_even_the_store(make_kb) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": "# l\n\n[t](t.md)\n"})
    kb.close()
    files = {p: p.read_bytes() for p in kb.notes_root.rglob("*") if p.is_file()}
    store = _store_digest(kb)
    result = _mv(kb, "--dry-run", "t.md", str(kb.notes_root / "zz.md"))
    assert result.exit_code == 0, result.output
    assert "l.md:3: t.md → zz.md" in result.stdout
    assert {p: p.read_bytes() for p in kb.notes_root.rglob("*") if p.is_file()} == files
    assert _store_digest(kb) == store


# -- files as they are on disk ---------------------------------------------------------------


def test_the_mode_is_kept_and_a_read_only_note_refused(make_kb) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "private.md": "# p\n\n[t](t.md)\n", "ro.md": "# r\n"})
    private = kb.notes_root / "private.md"
    private.chmod(0o600)
    assert _mv(kb, "t.md", str(kb.notes_root / "zz.md")).exit_code == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_text(encoding="utf-8") == "# p\n\n[t](zz.md)\n"

    read_only = kb.notes_root / "ro.md"
    read_only.write_text("# r\n\n[z](zz.md)\n", encoding="utf-8")
    read_only.chmod(0o444)
    kb.ingest()
    result = _mv(kb, "zz.md", str(kb.notes_root / "yy.md"))
    assert result.exit_code == 2
    assert "ro.md is read-only; nothing was moved" in result.stderr
    assert read_only.read_text(encoding="utf-8") == "# r\n\n[z](zz.md)\n"
    assert (kb.notes_root / "zz.md").is_file()
    assert private.read_text(encoding="utf-8") == "# p\n\n[t](zz.md)\n"


def test_the_mode_is_kept_when_the_move_fails(make_kb, monkeypatch) -> None:
    from kb.links import move_transaction

    kb = _kb(make_kb, {"t.md": TARGET, "a.md": "# a\n\n[t](t.md)\n", "b.md": "# b\n\n[t](t.md)\n"})
    for name in ("a.md", "b.md"):
        (kb.notes_root / name).chmod(0o600)
    real = move_transaction._write_new
    calls: list[Path] = []

    def fail_second(path: Path, data: bytes, like: os.stat_result) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data, like)

    monkeypatch.setattr(move_transaction, "_write_new", fail_second)
    assert _mv(kb, "t.md", str(kb.notes_root / "zz.md")).exit_code == 1
    for name in ("a.md", "b.md"):
        path = kb.notes_root / name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text(encoding="utf-8").endswith("[t](t.md)\n")


def test_a_hard_link_is_not_split(make_kb, tmp_path) -> None:
    kb = _kb(make_kb, {"t.md": TARGET, "l.md": "# l\n\n[t](t.md)\n"})
    outside = tmp_path / "outside-copy.md"
    os.link(kb.notes_root / "l.md", outside)
    assert _mv(kb, "t.md", str(kb.notes_root / "zz.md")).exit_code == 0
    assert outside.stat().st_ino == (kb.notes_root / "l.md").stat().st_ino
    assert outside.read_text(encoding="utf-8") == "# l\n\n[t](zz.md)\n"


def test_a_symlinked_linking_note_is_edited_where_it_points(make_kb) -> None:
    kb = make_kb({"t.md": TARGET, "real/l.md": "# l\n\n[t](../t.md)\n"})
    (kb.notes_root / "alias").mkdir()
    (kb.notes_root / "alias/l.md").symlink_to(kb.notes_root / "real/l.md")
    kb.ingest()
    result = _mv(kb, "t.md", str(kb.notes_root / "zz.md"))
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "alias/l.md").is_symlink()
    assert (kb.notes_root / "real/l.md").read_text(encoding="utf-8") == "# l\n\n[t](../zz.md)\n"


def test_the_journal_edits_go_both_ways() -> None:
    """What a recovery applies: the journal's byte edits turn the old bytes into the new
    and back, for any two byte strings."""
    import random

    from kb.links.move_transaction import _apply_edits, _byte_edits, _undo_edits

    chooser = random.Random(21)
    for _ in range(2000):
        before = bytes(chooser.choice(b"ab\r\n") for _ in range(chooser.randint(0, 12)))
        after = bytes(chooser.choice(b"ab\r\n") for _ in range(chooser.randint(0, 12)))
        edits = _byte_edits(before, after)
        assert _apply_edits(before, edits) == after
        assert _undo_edits(after, edits) == before


def test_nested_roots_rewrite_the_links_to_the_moved_note_only(make_kb) -> None:
    """roots: [notes, notes/sub]: two notes named t.md, each linked by its neighbour; and
    links that cross from one root into the other."""
    notes = {
        "t.md": "# outer t\n",
        "a.md": "# a\n\n[t](t.md) and [inner](sub/t.md)\n",
        "sub/t.md": "# inner t\n",
        "sub/b.md": "# b\n\n[t](t.md) and [outer](../t.md)\n",
    }
    kb = _kb(make_kb, notes, "roots: [notes, notes/sub]\n")
    result = _mv(kb, "sub/t.md", str(kb.notes_root / "sub/moved.md"))
    assert result.exit_code == 0, result.output
    root = kb.notes_root
    assert (root / "a.md").read_text(encoding="utf-8") == (
        "# a\n\n[t](t.md) and [inner](sub/moved.md)\n"
    )
    assert (root / "sub/b.md").read_text(encoding="utf-8") == (
        "# b\n\n[t](moved.md) and [outer](../t.md)\n"
    )
    assert run(kb, "check").exit_code == 0
