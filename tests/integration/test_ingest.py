"""Ingest on real-world messy input: incremental runs, roots, locks, settings (bad input,
one test each, is in test_ingest_bad_input.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kb.errors import NotesRootError
from kb.knowledge_base import KnowledgeBase
from kb.store import NoteText

GOOD = "---\ntitle: Good\ntags: [ok]\n---\n\n# Good\n\nbody text 显存带宽\n"


def problems(kb: KnowledgeBase, path: str) -> list[tuple[str, str, int | None]]:
    return [(p.kind, p.message, p.line) for p in kb._store.problems.of(path)]


def note(kb: KnowledgeBase, path: str) -> NoteText:
    row = kb._store.notes.by_path(path)
    assert row is not None, f"{path} is not in the store"
    return row


def test_second_run_reports_no_changes(make_kb) -> None:
    kb = make_kb({"a.md": GOOD, "sub/b.md": "# B\n", "c.markdown": "# C\n"})
    first = kb.ingest()
    assert (first.added, first.unchanged) == (3, 0)
    second = kb.ingest()
    assert second.changed == 0
    assert second.unchanged == 3


def test_edit_add_remove_are_reported(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a.md": GOOD, "b.md": "# B\n"})
    kb.ingest()
    (tmp_path / "notes/a.md").write_text(GOOD + "\nmore\n", encoding="utf-8")
    (tmp_path / "notes/b.md").unlink()
    (tmp_path / "notes/c.md").write_text("# C\n", encoding="utf-8")
    stats = kb.ingest()
    assert (stats.added, stats.updated, stats.removed, stats.unchanged) == (1, 1, 1, 0)
    assert kb._store.notes.by_path("notes/b.md") is None
    assert kb._store.notes.by_path("b.md") is None
    assert "more" in note(kb, "a.md").text


def test_touched_but_unchanged_file_is_not_an_update(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a.md": GOOD})
    kb.ingest()
    generation = kb._store.generation
    os.utime(tmp_path / "notes/a.md", ns=(1, 1))
    stats = kb.ingest()
    assert (stats.updated, stats.unchanged) == (0, 1)
    assert kb._store.generation == generation
    assert kb.ingest().unchanged == 1  # the new mtime was remembered: one stat next time


def test_rename_is_one_move_keeping_the_note_id(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"old/name.md": GOOD})
    kb.ingest()
    note_id = note(kb, "old/name.md").id
    (tmp_path / "notes/new").mkdir()
    (tmp_path / "notes/old/name.md").rename(tmp_path / "notes/new/renamed.md")
    stats = kb.ingest()
    assert (stats.moved, stats.added, stats.removed) == (1, 0, 0)
    assert note(kb, "new/renamed.md").id == note_id
    assert kb._store.notes.by_path("old/name.md") is None


def test_generations_and_tombstones_let_an_index_catch_up(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a.md": "# A\n", "b.md": "# B\n"})
    kb.ingest()
    seen = kb._store.generation
    a_id, b_id = note(kb, "a.md").id, note(kb, "b.md").id
    (tmp_path / "notes/a.md").write_text("# A2\n", encoding="utf-8")
    (tmp_path / "notes/b.md").unlink()
    kb.ingest()
    assert kb._store.generation == seen + 1
    assert kb._store.notes.changes_since(seen) == ([a_id], [b_id])
    assert kb._store.notes.changes_since(kb._store.generation) == ([], [])


def test_rebuild_starts_over(make_kb) -> None:
    kb = make_kb({"a.md": GOOD})
    kb.ingest()
    stats = kb.ingest(rebuild=True)
    assert (stats.added, stats.unchanged) == (1, 0)
    assert kb._store.notes.count() == 1


def test_ingest_one_path_never_removes_notes_elsewhere(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a/one.md": "# 1\n", "b/two.md": "# 2\n"})
    kb.ingest()
    (tmp_path / "notes/b/two.md").unlink()
    (tmp_path / "notes/a/one.md").write_text("# one changed\n", encoding="utf-8")
    stats = kb.ingest([tmp_path / "notes/a"])
    assert (stats.updated, stats.removed) == (1, 0)
    assert kb._store.notes.by_path("b/two.md") is not None
    stats = kb.ingest_file(tmp_path / "notes/a/one.md")
    assert stats.unchanged == 1


def test_ingest_of_a_deleted_file_path_removes_it(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a/one.md": "# 1\n", "a/two.md": "# 2\n"})
    kb.ingest()
    (tmp_path / "notes/a/one.md").unlink()
    stats = kb.ingest([tmp_path / "notes/a/one.md"])
    assert stats.removed == 1
    assert kb._store.notes.by_path("a/two.md") is not None


def test_path_outside_every_root_is_an_error(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a.md": GOOD})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with pytest.raises(NotesRootError, match=r"outside every notes root.*kb\.yaml"):
        kb.ingest([outside])


def test_several_roots_prefix_note_paths(make_kb, tmp_path: Path) -> None:
    (tmp_path / "blog").mkdir()
    (tmp_path / "blog/post.md").write_text("# Post\n", encoding="utf-8")
    kb = make_kb({"a.md": "# A\n"}, config="roots: [notes, blog]\n")
    kb.ingest()
    assert kb._store.notes.by_path("notes/a.md") is not None
    assert kb._store.notes.by_path("blog/post.md") is not None


def test_excluded_folders_and_patterns(make_kb) -> None:
    kb = make_kb(
        {
            "keep.md": "# k\n",
            ".hidden/x.md": "# h\n",
            ".git/y.md": "# g\n",
            "node_modules/pkg/README.md": "# n\n",
            "themes/t/README.md": "# theme\n",
            "public/index.md": "# built\n",
            "deep/public/ok.md": "# not the hugo folder\n",
            "drafts/wip.md": "# wip\n",
            "notes.txt": "not markdown",
        },
        config="roots: [notes]\nexclude: ['drafts/*']\n",
    )
    kb.ingest()
    assert [row.path for row in kb._store.notes.listing()] == ["deep/public/ok.md", "keep.md"]


def test_file_name_that_is_not_utf8_is_skipped_with_a_warning(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"ok.md": "# ok\n"})
    name = os.fsdecode(b"caf\xe9.md")
    (tmp_path / "notes" / name).write_text("# café\n", encoding="utf-8")
    stats = kb.ingest()
    assert stats.added == 1
    assert [(p.kind, path) for path, p in stats.problems] == [("file-name", "caf\ufffd.md")]


@pytest.mark.parametrize(
    "bad",
    [
        "date: 2024-02-30",
        "date: 2024-01-01 25:00:00",
        "x: !!int abc",
        "x: !!bool maybe",
        "title: [a, b]",
    ],
)
def test_bad_yaml_values_keep_the_note(make_kb, tmp_path: Path, bad: str) -> None:
    kb = make_kb(
        {"a.md": "---\ntitle: Leap\ndate: 2024-02-28\n---\nroofline\n", "b.md": "see [[Leap]]\n"}
    )
    kb.ingest()
    (tmp_path / "notes/a.md").write_text(f"---\n{bad}\n---\n# Leap\n\nroofline\n")
    stats = kb.ingest()
    assert (stats.updated, stats.removed) == (1, 0)
    assert [hit.path for hit in kb.search("roofline").hits] == ["a.md"]
    assert note(kb, "a.md").title == "Leap"


def test_ingest_of_one_folder_is_case_exact(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"Docs/a.md": "# A\n", "docs/b.md": "# lower\n"})
    kb.ingest()
    stats = kb.ingest([tmp_path / "notes/Docs"])
    assert stats.removed == 0
    assert kb._store.notes.by_path("docs/b.md") is not None


def test_excluded_paths_stay_excluded_when_named(make_kb, tmp_path: Path) -> None:
    kb = make_kb(
        {
            "keep.md": "# k\n",
            "drafts/d.md": "# d\n",
            ".h.md": "# h\n",
            "node_modules/x.md": "# x\n",
        },
        config="roots: [notes]\nexclude: ['drafts/*']\n",
    )
    notes = tmp_path / "notes"
    stats = kb.ingest([notes / "drafts/d.md", notes / ".h.md", notes / "node_modules"])
    assert stats.added == 0
    assert kb.ingest().added == 1


def test_folder_warnings_go_away_with_the_cause(make_kb, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# outside\n", encoding="utf-8")
    kb = make_kb({"a.md": "# a\n"})
    (tmp_path / "notes/ext.md").symlink_to(outside)
    assert kb.ingest().warnings == 1
    (tmp_path / "notes/ext.md").unlink()
    kb.ingest()
    assert kb.links.check() == []


def test_ingest_of_a_deleted_file_leaves_no_warning(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"sub/gone.md": "# gone\n", "sub/stay.md": "# stay\n"})
    kb.ingest()
    (tmp_path / "notes/sub/gone.md").unlink()
    stats = kb.ingest([tmp_path / "notes/sub/gone.md"])
    assert (stats.removed, stats.warnings) == (1, 0)
    assert kb.links.check() == []


def test_changed_settings_read_every_note_again(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"a.md": "---\nsee: [b.md]\n---\n# A\n", "b.md": "# B\n"})
    kb.ingest()
    assert kb.links.connections(kb.find_note("b.md")).backlinks == []
    (tmp_path / "kb.yaml").write_text("roots: [notes]\ntyped_links: [see]\n")
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    assert [(b.path, b.rel) for b in kb.links.connections(kb.find_note("b.md")).backlinks] == [
        ("a.md", "see")
    ]
    assert kb.ingest().changed == 0


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("exclude: 5", "'exclude' must be a list"),
        ("lock_wait_seconds: abc", "wrong type"),
        ("follow_external_symlinks: maybe", "must be true or false"),
        ("roots: 5", "'roots' must be a list"),
    ],
)
def test_bad_settings_are_one_line_errors(tmp_path: Path, setting: str, message: str) -> None:
    from click.testing import CliRunner

    from kb.cli import cli

    (tmp_path / "notes").mkdir()
    (tmp_path / "kb.yaml").write_text(setting + "\n")
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest"])
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_ingest_changed_reads_only_the_named_notes_unless_something_else_changed(
    make_kb, tmp_path: Path
) -> None:
    """What the app does when the system says files changed: the named notes alone, or
    every note when a name is not a note file (a folder, an image)."""
    kb = make_kb({"a.md": "# A\n", "b.md": "# B\n"})
    kb.ingest()
    notes = tmp_path / "notes"
    (notes / "a.md").write_text("# A2\n", encoding="utf-8")
    (notes / "b.md").write_text("# B2\n", encoding="utf-8")
    stats = kb.ingest_changed([notes / "a.md", notes / "a.md"])
    assert (stats.updated, stats.unchanged) == (1, 0)  # b.md was not even looked at
    titles = {row.path: row.title for row in kb._store.notes.listing()}
    assert titles == {"a.md": "A2", "b.md": "B"}
    (notes / "sub").mkdir()
    (notes / "sub/c.md").write_text("# C\n", encoding="utf-8")
    stats = kb.ingest_changed([notes / "sub"])  # a folder: every note
    assert (stats.added, stats.updated) == (1, 1)
    (notes / "a.md").unlink()
    assert kb.ingest_changed([notes / "a.md"]).removed == 1


@pytest.mark.parametrize(("real", "link"), [("x-real", "y-link"), ("z-real", "a-link")])
def test_a_folder_linked_inside_the_root_is_walked_at_its_real_path(
    make_kb, tmp_path: Path, real: str, link: str
) -> None:
    kb = make_kb({f"{real}/f.md": "# F\n"})
    (tmp_path / "notes" / link).symlink_to(tmp_path / "notes" / real, target_is_directory=True)
    assert kb.ingest().added == 1
    assert [row.path for row in kb._store.notes.listing()] == [f"{real}/f.md"]
