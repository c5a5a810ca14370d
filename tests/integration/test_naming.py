"""The one rule for naming a note: path, title, alias, stem, fuzzy, pinyin; several → a
list and exit 2, none → the notes that come close."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kb.errors import UsageError
from kb.names.resolve import NoteName
from kb.notes.naming import pinyin_matches, title_pinyin

NOTES = {
    "eng/redis-study.md": "---\ntitle: Redis 学习笔记\naliases: [Redis 数据结构]\n---\n\nx\n",
    "eng/显存 估算.md": "---\ntitle: 显存估算速查\n---\n\nx\n",
    "eng/overview.md": "# Engineering overview\n\nx\n",
    "cs/overview.md": "# Course overview\n\nx\n",
    "cs/roofline.md": "# Roofline model\n\nx\n",
}


@pytest.fixture
def kb(make_kb):
    kb = make_kb(NOTES)
    kb.ingest()
    return kb


@pytest.mark.parametrize(
    ("typed", "path"),
    [
        ("eng/redis-study.md", "eng/redis-study.md"),  # path from the root
        ("eng/redis-study", "eng/redis-study.md"),  # .md optional
        ("notes/eng/redis-study.md", "eng/redis-study.md"),  # a file from the current folder
        ("Redis 学习笔记", "eng/redis-study.md"),  # title
        ("redis 学习笔记", "eng/redis-study.md"),  # any case
        ("REDIS 数据结构", "eng/redis-study.md"),  # alias
        ("redis-study", "eng/redis-study.md"),  # file stem
        ("roofline", "cs/roofline.md"),  # stem again
        ("redis studdy", "eng/redis-study.md"),  # fuzzy, a typo
        ("rooflin model", "cs/roofline.md"),  # fuzzy
        ("xcgs", "eng/显存 估算.md"),  # pinyin initials
        ("xiancun", "eng/显存 估算.md"),  # full pinyin, a prefix
        ("xiancungusuan", "eng/显存 估算.md"),
        ("rxxbj", "eng/redis-study.md"),  # initials, Latin words by their first letter
    ],
)
def test_a_note_is_named_by(kb, typed: str, path: str) -> None:
    assert kb.find_note(typed, cwd=kb.home).path == path


def test_several_matches_are_listed_never_guessed(kb) -> None:
    with pytest.raises(UsageError) as caught:
        kb.find_note("overview", cwd=kb.home)
    assert str(caught.value) == (
        "'overview' names 2 notes: cs/overview.md (Course overview); "
        "eng/overview.md (Engineering overview); give its path to choose one"
    )


def test_no_match_names_the_notes_that_come_close(kb) -> None:
    with pytest.raises(
        UsageError, match=r"no note matches 'roof model'; close: cs/roofline\.md \(Roofline model\)"
    ):
        kb.find_note("roof model", cwd=kb.home)
    with pytest.raises(UsageError, match="no note matches 'zzzz': give its path, title or alias"):
        kb.find_note("zzzz", cwd=kb.home)


def test_pinyin_needs_latin_letters_and_a_chinese_title() -> None:
    names = [NoteName(1, "notes", "a.md", "显存估算"), NoteName(2, "notes", "b.md", "xcgs notes")]
    assert [n.id for n in pinyin_matches(names, "xcgs")] == [1]
    assert pinyin_matches(names, "x") == []  # too short to mean anything
    assert pinyin_matches(names, "显存") == []
    assert title_pinyin("Redis 学习笔记") == ("redisxuexibiji", "rxxbj")


def test_a_path_or_title_is_found_without_loading_every_name(kb, monkeypatch) -> None:
    from kb.store.notes import NoteDao

    def every_name(*args: object) -> None:
        raise AssertionError("loaded every name")

    monkeypatch.setattr(NoteDao, "names", every_name)
    assert kb.find_note("eng/redis-study.md", cwd=kb.home).title == "Redis 学习笔记"
    assert kb.find_note("Redis 学习笔记", cwd=kb.home).path == "eng/redis-study.md"
    assert kb.find_note("Redis 数据结构", cwd=kb.home).path == "eng/redis-study.md"


def test_pinyin_is_imported_only_when_the_cheaper_rules_found_nothing(kb) -> None:
    script = (
        "import sys\nfrom kb.knowledge_base import KnowledgeBase\n"
        f"kb = KnowledgeBase.open({str(kb.home)!r})\n"
        "kb.find_note('redis studdy')\n"
        "print('pypinyin' in sys.modules)\n"
        "kb.find_note('xcgs')\n"
        "print('pypinyin' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]
