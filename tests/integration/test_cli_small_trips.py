"""The smaller things a new user trips on (issue 23, item 11): ``kb new`` prints a path
from here and says when it opened an existing note; ``kb mv NOTE posts/`` suggests
``notes/posts/``; ``kb show`` offers as close only notes that share something with what
was typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli as run

TITLES = {
    "reading-list.md": "阅读清单",
    "eng/redis-study.md": "Redis 学习笔记",
    "lecture-02-architectures.md": "CS336 Lecture 2：Transformer 架构的各种变体",
    "gitlab-rancher-ci.md": "GitLab CI 流水线部署到 Rancher",
    "kv-cache-math.md": "KV cache 显存怎么算",
    "xcg-notes.md": "XCG 工具链",
    "cgroups.md": "cgroups 与容器",
    "posts/hello.md": "Hello",
}


@pytest.fixture
def kb(make_kb, monkeypatch) -> KnowledgeBase:
    made: KnowledgeBase = make_kb(
        {path: f"---\ntitle: {title}\n---\n\ntext\n" for path, title in TITLES.items()}
    )
    made.ingest()
    monkeypatch.chdir(made.home)
    return made


def close_offered(kb: KnowledgeBase, typed: str) -> str:
    result = run(kb, "show", typed)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith(f"kb: no note matches {typed!r}"), line
    return line


@pytest.mark.parametrize(
    ("typed", "offered", "unrelated"),
    [
        ("redsi", ["redis-study.md"], ["reading-list.md", "lecture-02"]),
        ("xcgs", ["xcg-notes.md"], ["cgroups.md"]),
        ("abc", [], ["gitlab", "kv-cache", "lecture-02"]),
        ("lectrue", ["lecture-02-architectures.md"], []),
        ("显存估", ["kv-cache-math.md"], []),
    ],
)
def test_show_offers_only_notes_that_share_something_with_the_text(
    kb, typed, offered, unrelated
) -> None:
    line = close_offered(kb, typed)
    for path in offered:
        assert path in line, line
    for path in unrelated:
        assert path not in line, line
    if not offered:
        assert line.endswith(": give its path, title or alias"), line


def test_mv_takes_a_path_in_the_notes_root_or_from_here(kb) -> None:
    """Both path styles (issue 38): the note's path in its root, as kb prints it from
    outside the knowledge base, and the path from here."""
    moved = run(kb, "mv", "redis-study", "posts/")
    assert moved.exit_code == 0, moved.output
    assert moved.stdout.startswith(f"moved {Path('notes', 'eng', 'redis-study.md')} → ")
    assert (kb.notes_root / "posts" / "redis-study.md").is_file()
    back = run(kb, "mv", str(Path("notes", "posts", "redis-study.md")), "notes/eng/")
    assert back.exit_code == 0, back.output
    assert (kb.notes_root / "eng" / "redis-study.md").is_file()


def test_mv_to_no_folder_anywhere_suggests_nothing(kb) -> None:
    result = run(kb, "mv", "redis-study", "nowhere/")
    assert result.exit_code == 2
    assert "outside every notes root" in result.stderr and "did you mean" not in result.stderr


def test_new_prints_the_path_from_here(kb) -> None:
    result = run(kb, "new", "--no-edit", "第一篇")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(Path("notes", "第一篇.md"))
    assert result.stderr == ""


def test_new_with_a_title_a_note_has_says_it_opened_that_note(kb, monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "true")
    result = run(kb, "new", "redis", "学习笔记")
    assert result.exit_code == 0, result.output
    assert result.stdout == str(Path("notes", "eng", "redis-study.md")) + "\n"
    assert "a note is already titled 'redis 学习笔记'; opened it" in result.stderr
    unedited = run(kb, "new", "--no-edit", "Redis 学习笔记")
    assert "nothing made" in unedited.stderr and unedited.stdout == result.stdout
