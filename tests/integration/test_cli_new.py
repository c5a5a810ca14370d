"""``kb new`` with a title a note has, an editor that cannot start, and ``kb ingest`` of
a path that does not exist."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli as run


@pytest.fixture
def editor_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$EDITOR is a script that writes down which file it opened."""
    log = tmp_path / "opened.txt"
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\nopen({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    return log


def test_new_with_an_existing_title_opens_that_note(make_kb, editor_log: Path) -> None:
    kb = make_kb({"eng/redis.md": "---\ntitle: Redis 学习笔记\n---\n\nredis\n"})
    kb.ingest()
    result = run(kb, "new", "redis", "学习笔记")  # any case
    assert result.exit_code == 0, result.output
    existing = kb.notes_root / "eng" / "redis.md"
    assert result.stdout.strip() == str(existing)  # run from outside the knowledge base: whole
    assert editor_log.read_text().splitlines() == [str(existing)]
    assert sorted(p.name for p in kb.notes_root.rglob("*.md")) == ["redis.md"]


def test_new_with_an_existing_title_and_no_edit_only_prints_it(make_kb, editor_log) -> None:
    kb = make_kb({"redis.md": "---\ntitle: Redis\n---\n\nredis\n"})
    kb.ingest()
    result = run(kb, "new", "--no-edit", "Redis")
    assert result.exit_code == 0, result.output
    assert Path(result.stdout.strip()).name == "redis.md"
    assert not editor_log.exists()


def test_force_new_makes_a_second_note(make_kb) -> None:
    kb = make_kb({"redis.md": "---\ntitle: Redis\n---\n\nredis\n"})
    kb.ingest()
    result = run(kb, "new", "--no-edit", "--force-new", "Redis")
    assert result.exit_code == 0, result.output
    assert Path(result.stdout.strip()).name == "redis-2.md"
    # Two notes so titled now: kb new names both and opens neither.
    result = run(kb, "new", "--no-edit", "Redis")
    assert result.exit_code == 2
    assert "2 notes are titled 'Redis'" in result.stderr
    assert "--force-new" in result.stderr


def test_new_before_any_ingest_still_creates(make_kb) -> None:
    kb = make_kb({})
    result = run(kb, "new", "--no-edit", "第一篇")
    assert result.exit_code == 0, result.output
    assert [hit.title for hit in kb.search("第一篇").hits] == ["第一篇"]


def test_an_editor_that_cannot_start_keeps_and_ingests_the_note(make_kb, monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "/no/such/editor")
    monkeypatch.delenv("VISUAL", raising=False)
    kb = make_kb({})
    result = run(kb, "new", "周末", "读书")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cannot start the editor /no/such/editor" in lines[0]
    assert "kept and ingested" in lines[0]
    assert Path(result.stdout.strip()).is_file()
    assert [hit.title for hit in kb.search("周末").hits] == ["周末 读书"]


def test_ingest_of_a_missing_path_says_it_does_not_exist(make_kb, monkeypatch) -> None:
    kb = make_kb({"a.md": "# a\n"})
    monkeypatch.chdir(kb.home)
    result = run(kb, "ingest", "nosuchdir")
    assert result.exit_code == 2
    assert result.stderr.strip() == "kb: nosuchdir does not exist"


def test_ingest_of_a_deleted_note_inside_a_root_removes_it(make_kb) -> None:
    kb = make_kb({"a.md": "# a\n", "b.md": "# b\n"})
    kb.ingest()
    (kb.notes_root / "a.md").unlink()
    result = run(kb, "ingest", str(kb.notes_root / "a.md"), "--json")
    assert result.exit_code == 0, result.output
    assert '"removed": 1' in result.stdout


# -- the site's own convention for the title (issue 38) ---------------------------------------

HUGO_POST = '---\ntitle: "{0}"\ndate: 2024-01-0{1}\n---\n\nThe text starts here.\n'
HEADED = "---\ntitle: {0}\n---\n\n# {0}\n\ntext\n"


@pytest.mark.parametrize(
    ("starts", "heading"),
    [
        ([], True),  # nothing to learn from: the title as a heading too, as always
        ([HUGO_POST.format("a", 1), HUGO_POST.format("b", 2)], False),
        ([HEADED.format("a"), HEADED.format("b")], True),
        ([HUGO_POST.format("a", 1), HEADED.format("b")], True),  # a tie keeps the heading
        ([HUGO_POST.format("a", 1), HUGO_POST.format("b", 2), HEADED.format("c")], False),
        (['+++\ntitle = "a"\n+++\n\ntext\n'], False),  # TOML front matter
        (["# Only a heading\n\ntext\n", "plain text\n"], True),  # no front-matter titles
        (["\ufeff---\ntitle: a\n---\ntext\n"], False),  # a byte-order mark
    ],
)
def test_a_new_note_repeats_its_title_as_a_heading_as_its_neighbours_do(
    starts: list[str], heading: bool
) -> None:
    from kb.notes.editing import heads_with_title

    assert heads_with_title(starts) is heading


def test_new_on_a_hugo_site_whose_posts_carry_the_title_once(make_kb) -> None:
    kb = make_kb(
        {
            "posts/first.md": HUGO_POST.format("First", 1),
            "posts/second.md": HUGO_POST.format("Second", 2),
            "about.md": HEADED.format("About"),
        }
    )
    result = run(kb, "new", "--no-edit", "--folder", "posts", "第三篇")
    assert result.exit_code == 0, result.output
    text = (kb.notes_root / "posts" / "第三篇.md").read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: 第三篇\n")
    assert "# 第三篇" not in text
    # Where the notes beside it repeat the title, the new one does too.
    result = run(kb, "new", "--no-edit", "Elsewhere")
    text = (kb.notes_root / "elsewhere.md").read_text(encoding="utf-8")
    assert "\n# Elsewhere\n" in text
