"""Cost that grows with the change, not with the collection (issue 15).

A one-note ingest must run the same SQL statements at 1,000 notes as at 5,000: the stat
walk may grow with the notes, the store's work may not. Statements are counted with
sqlite3's trace callback, which sees every execution (each row of an ``executemany``
too), so a per-note loop or a per-link update shows up as a larger count.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path

import pytest

import kb.ingest.run
from kb.config import load_config
from kb.ingest.run import Ingester
from kb.names.resolve import LinkIndex, NoteName
from kb.parse.note import parse_note
from kb.store import Store
from kb.store.names import lookup_entries
from tests.conftest import SAMPLE_NOTES
from tests.integration import test_consistency as consistency


def _write_collection(root: Path, count: int) -> None:
    """``count`` small notes in 20 folders; each links the next by name and by path, and
    one link in ten is broken, as in real notes."""
    for i in range(count):
        folder = root / f"topic-{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        nxt = (i + 1) % count
        broken = f" and [[missing {i}]]" if i % 10 == 0 else ""
        (folder / f"note-{i:05d}.md").write_text(
            f"---\ntitle: Note {i}\ntags: [t{i % 7}]\naliases: [alias {i}]\n---\n"
            f"# Note {i}\n\n第 {i} 条笔记 about caching. See [[Note {nxt}]]{broken}, "
            f"[next](../topic-{nxt % 20:02d}/note-{nxt:05d}.md).\n",
            encoding="utf-8",
        )


def _statements(kb_dir: Path, run: Callable[[Ingester], object]) -> int:
    """SQL statements one ingest runs (the run itself, not opening the store)."""
    config = load_config(kb_dir)
    store = Store.open(config.store_path)
    executed: list[str] = []
    try:
        store.conn.set_trace_callback(executed.append)
        run(Ingester(config, store))
    finally:
        store.conn.set_trace_callback(None)
        store.close()
    return len(executed)


def _edit(note: Path, marker: str) -> None:
    text = note.read_text(encoding="utf-8")
    note.write_text(text + f"\nEdited: {marker} 新的一行.\n", encoding="utf-8")


def _one_note_costs(tmp_path: Path, count: int) -> tuple[int, int, int]:
    kb_dir = tmp_path / f"kb-{count}"
    (kb_dir / "notes").mkdir(parents=True)
    (kb_dir / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    _write_collection(kb_dir / "notes", count)
    _statements(kb_dir, lambda ingester: ingester.run())
    note = kb_dir / "notes/topic-10/note-00510.md"
    _edit(note, "one")
    one_path = _statements(kb_dir, lambda ingester: ingester.run([note]))
    _edit(note, "two")
    whole = _statements(kb_dir, lambda ingester: ingester.run())
    nothing = _statements(kb_dir, lambda ingester: ingester.run())
    return one_path, whole, nothing


@pytest.mark.slow
def test_a_one_note_ingest_runs_the_same_statements_at_1000_and_5000_notes(
    tmp_path: Path,
) -> None:
    small = _one_note_costs(tmp_path, 1000)
    large = _one_note_costs(tmp_path, 5000)
    # kb ingest PATH, kb ingest after one edit, kb ingest with nothing changed
    assert large == small
    assert small[0] < 200  # and the count is a note's worth of rows, not a folder's


def _tables(index: LinkIndex) -> dict[str, dict[Hashable, object]]:
    names = ("by_rel", "by_rel_folded", "by_stem", "by_title", "by_alias", "by_url", "by_slug")
    return {name: getattr(index, name) for name in names}


def test_the_stored_lookup_entries_are_exactly_what_the_link_index_builds() -> None:
    """StoreLinkIndex answers as LinkIndex does only if every entry build makes is one
    of lookup_entries (and no more): checked over the bundled notes and awkward names."""
    notes = [
        parse_note(path.relative_to(SAMPLE_NOTES).as_posix(), path.read_text("utf-8"))
        for path in sorted(SAMPLE_NOTES.rglob("*.md"))
    ]
    names = [
        NoteName(i, "notes", path.relative_to(SAMPLE_NOTES).as_posix(), note.title, note.slug,
                 tuple(note.name_aliases), tuple(note.url_aliases))
        for i, (path, note) in enumerate(
            zip(sorted(SAMPLE_NOTES.rglob("*.md")), notes, strict=True), start=1
        )
    ]  # fmt: skip
    names += [
        NoteName(900, "notes", "Docs/INDEX.md", "  Spaced   Title ", "My-Slug", ("Ünïcode",)),
        NoteName(901, "blog", "Docs/index.md", "spaced title", None, (), ("/posts/x.html",)),
        NoteName(902, "notes", "a/b/c.markdown", "C", "c", ("c", "C")),
    ]
    built = _tables(LinkIndex.build(names))
    expected: dict[str, set[tuple[Hashable, int]]] = {table: set() for table in built}
    for table, entries in built.items():
        for key, value in entries.items():
            ids = value if isinstance(value, list) else [value]
            expected[table].update((key, note_id) for note_id in ids)
    entered: dict[str, set[tuple[Hashable, int]]] = {table: set() for table in built}
    for note in names:
        for table, key in lookup_entries(note):
            if table in entered:
                entered[table].add((key, note.id))
    # Single-valued tables keep the first note by path; the store keeps every candidate.
    for table in ("by_rel", "by_rel_folded", "by_url"):
        assert {k for k, _ in entered[table]} == {k for k, _ in expected[table]}
        assert expected[table] <= entered[table]
    for table in ("by_stem", "by_title", "by_alias", "by_slug"):
        assert entered[table] == expected[table], table


@pytest.mark.parametrize("seed", range(6))
def test_links_resolved_through_the_stored_keys_match_a_full_resolution(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """test_consistency's random edits, moves and deletions, with every ingest resolving
    links through the stored lookup keys however many notes it wrote (small stores
    otherwise often take the resolve-everything path)."""
    monkeypatch.setattr(kb.ingest.run, "_FULL_LINKS_SHARE", 0)
    consistency.test_incremental_ingest_matches_a_fresh_one(tmp_path, seed)


def test_a_missing_file_is_looked_for_again_when_nothing_else_changed(
    make_kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a file exists is not in the store: a link to a missing file is tried again
    by every ingest, so adding the file fixes the link without touching the note."""
    monkeypatch.setattr(kb.ingest.run, "_FULL_LINKS_SHARE", 0)  # as in a large collection
    knowledge = make_kb({"a.md": "# A\n\n[the paper](files/paper.pdf)\n", "b.md": "# B\n"})
    knowledge.ingest()

    def statuses() -> list[str]:
        note = knowledge.find_note("a.md")
        return [row.status for row in knowledge._store.links.of_note(note.id)]

    assert statuses() == ["missing-file"]
    paper = knowledge.config.roots[0].path / "files/paper.pdf"
    paper.parent.mkdir()
    paper.write_bytes(b"%PDF-1.4\n")
    (knowledge.config.roots[0].path / "b.md").write_text("# B\n\nedited\n", encoding="utf-8")
    knowledge.ingest()
    assert statuses() == ["attachment"]


def test_kb_check_finds_the_meant_note_from_a_shortlist_as_from_every_name(make_kb) -> None:
    """Over many names ``kb check`` scores a broken link only against the names that share
    its start or its end; a typo anywhere in a name still finds the note it meant."""
    notes = {f"topic-{i % 20:02d}/note-{i:05d}.md": f"# Note {i}\n\n正文 {i}\n" for i in range(400)}
    notes["redis/redis-persistence.md"] = "# Redis 持久化机制\n"
    notes["gpu/线程束-70.md"] = "# 线程束\n"
    typos = {
        "[[redis-persistance]]": "redis/redis-persistence.md",  # late in the name
        "[x](redis/rdis-persistence.md)": "redis/redis-persistence.md",  # early
        "[[note-0x142]]": "topic-02/note-00142.md",  # in the middle
        "[[线束程-70]]": "gpu/线程束-70.md",
    }
    notes["src.md"] = "\n\n".join(typos) + "\n"
    kb = make_kb(notes)
    kb.ingest()
    from kb.links.check import check

    store = kb._store
    for full_scan in (10**6, 0):  # every name scored; only the shortlist's
        problems = [p for p in check(store, full_scan) if p.path == "src.md"]
        assert len(problems) == len(typos)
        for problem, meant in zip(problems, typos.values(), strict=True):
            assert meant in problem.message.partition("did you mean ")[2], (full_scan, problem)


def test_a_first_ingest_reads_every_note_s_names_once(tmp_path: Path) -> None:
    """A first ingest wrote every note, so the names it stored are every note's: resolving
    all links reads them again neither from the store nor into a second copy in memory
    (at 100,000 notes that copy was tens of MB at the ingest's peak); the links resolve
    as a later full resolution does (a rebuild resolves them from the store's names)."""
    kb_dir = tmp_path / "kb"
    (kb_dir / "notes").mkdir(parents=True)
    (kb_dir / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    _write_collection(kb_dir / "notes", 60)
    config = load_config(kb_dir)
    store = Store.open(config.store_path)
    executed: list[str] = []
    try:
        store.conn.set_trace_callback(executed.append)
        Ingester(config, store).run()
        store.conn.set_trace_callback(None)
        first = sorted(store.conn.execute("SELECT id, target_id, status FROM links"))
    finally:
        store.conn.set_trace_callback(None)
        store.close()
    names_read = [s for s in executed if s.startswith("SELECT id, root, rel, title, slug")]
    assert len(names_read) == 1
    assert any(status == "broken" for _, _, status in first)  # the [[missing N]] links
    assert sum(1 for _, target, _ in first if target is not None) > 60

    store = Store.open(config.store_path)
    try:
        ingester = Ingester(config, store)
        ingester.written_ids = set(store.notes.all_ids()[:1])  # not every note: reads them
        ingester.generation = store.generation
        with store.transaction():
            ingester._resolve_links(full=True)
        again = sorted(store.conn.execute("SELECT id, target_id, status FROM links"))
    finally:
        store.close()
    assert again == first
