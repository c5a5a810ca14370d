"""The store's DAOs on a small database: records in, typed rows out."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kb.errors import StoreError
from kb.models import Heading, Link, ParsedNote, Problem
from kb.store import (
    SCHEMA_VERSION,
    BacklinkRow,
    FileStamp,
    GraphEdgeRow,
    HeadingRow,
    LinkProblemRow,
    NoteListRow,
    NoteRecord,
    NoteText,
    ProblemRow,
    RecentRow,
    Store,
    store_error,
)
from kb.words.documents import search_document


def parsed(title: str, **fields: Any) -> ParsedNote:
    values: dict[str, Any] = {
        "title": title,
        "date": None,
        "draft": False,
        "slug": None,
        "tags": [],
        "categories": [],
        "series": [],
        "keywords": [],
        "name_aliases": [],
        "url_aliases": [],
        "headings": [],
        "links": [],
        "text": f"{title} text",
        "code": "",
        "summary": f"{title} summary",
        "word_count": 2,
        "front_matter": {},
        "problems": [],
    }
    values.update(fields)
    return ParsedNote(**values)


def record(path: str, note: ParsedNote, size: int = 10) -> NoteRecord:
    root, _, rel = path.partition("/")
    return NoteRecord(path, root, rel, f"hash-{path}", 1_000, size, "utf-8", note)


NOTES = [
    record(
        "notes/a.md",
        parsed(
            "Alpha",
            date="2024-01-02",
            tags=["Redis", "db/sql"],
            series=["Intro"],
            name_aliases=["A note"],
            url_aliases=["/posts/a/"],
            headings=[Heading(1, "Alpha", "alpha", 1), Heading(2, "Usage", "usage", 5)],
            links=[
                Link("b.md", "markdown", 7, anchor="setup", text="see B"),
                Link("missing.md", "markdown", 9),
            ],
            code="print(1)",
            front_matter={"title": "Alpha", "标签": ["中文"]},
        ),
    ),
    record(
        "notes/b.md",
        parsed(
            "Beta",
            date="2024-03-04",
            draft=True,
            tags=["redis"],
            series=["Intro"],
            headings=[Heading(2, "Setup", "setup", 3)],
            links=[Link("a.md", "markdown", 2, rel="related")],
            problems=[Problem("front-matter", "bad date", 2)],
        ),
    ),
    record("blog/c.md", parsed("Gamma", tags=["db"])),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "kb.sqlite")
    with store.transaction():
        ids = store.notes.write(NOTES, store.meta.next_generation())
        a, b, _c = ids
        # What link resolution would decide: a -> b (heading found), a -> nothing, b -> a.
        links = {link.target: link.id for i in ids for link in store.links.of_note(i)}
        store.links.set_targets(
            [
                (b, "resolved", "b", links["b.md"]),
                (None, "broken", "missing", links["missing.md"]),
                (a, "resolved", "a", links["a.md"]),
            ]
        )
    yield store
    store.close()


def ids(store: Store) -> dict[str, int]:
    return store.notes.ids_of(r.path for r in NOTES)


# -- notes --------------------------------------------------------------------------------


def test_a_note_reads_back_as_a_typed_row_with_its_text(store: Store) -> None:
    note = store.notes.by_path("notes/a.md")
    assert isinstance(note, NoteText)
    assert (note.path, note.root, note.rel, note.title) == ("notes/a.md", "notes", "a.md", "Alpha")
    assert (note.date, note.draft, note.slug, note.encoding) == ("2024-01-02", False, None, "utf-8")
    assert (note.hash, note.size, note.mtime_ns, note.generation) == (
        "hash-notes/a.md",
        10,
        1000,
        1,
    )
    assert (note.text, note.code, note.summary) == ("Alpha text", "print(1)", "Alpha summary")
    assert note.front_matter == '{"title": "Alpha", "标签": ["中文"]}'
    assert store.notes.by_id(note.id) == note
    assert store.notes.by_path("notes/b.md").draft is True  # type: ignore[union-attr]
    assert store.notes.by_path("nowhere.md") is None
    assert store.notes.by_id(999) is None


def test_rows_are_frozen(store: Store) -> None:
    note = store.notes.by_path("notes/a.md")
    with pytest.raises(AttributeError):  # rows are NamedTuples: cheap to define, frozen
        note.title = "changed"  # type: ignore[misc, union-attr]


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        (lambda s: s.notes.count(), 3),
        (lambda s: s.notes.count("blog"), 1),
        (lambda s: [r.path for r in s.notes.listing()], ["blog/c.md", "notes/a.md", "notes/b.md"]),
        (lambda s: [r.title for r in s.notes.recent(2)], ["Beta", "Alpha"]),
        (lambda s: sorted(s.notes.titles(s.notes.all_ids()).values()), ["Alpha", "Beta", "Gamma"]),
        (lambda s: len(s.notes.ids_titled("ALPHA")), 1),
        (lambda s: s.notes.duplicate_titles(), []),
        (lambda s: [h.slug for h in s.notes.headings(ids(s)["notes/a.md"])], ["alpha", "usage"]),
        (lambda s: s.notes.heading_slugs(ids(s)["notes/b.md"]), {"setup"}),
        (
            lambda s: [(a.alias, a.kind) for a in s.notes.aliases(ids(s)["notes/a.md"])],
            [("A note", "name"), ("/posts/a/", "url")],
        ),
        (
            lambda s: [
                (n.title, n.aliases, n.url_aliases) for n in s.notes.names([ids(s)["notes/a.md"]])
            ],
            [("Alpha", ("A note",), ("/posts/a/",))],
        ),
    ],
)
def test_note_reads(store: Store, read: Any, expected: object) -> None:
    assert read(store) == expected


def test_listing_recent_and_heading_rows_are_typed(store: Store) -> None:
    assert all(isinstance(r, NoteListRow) for r in store.notes.listing())
    assert all(isinstance(r, RecentRow) for r in store.notes.recent(10))
    a = ids(store)["notes/a.md"]
    assert store.notes.headings(a)[1] == HeadingRow(2, "Usage", "usage", 5)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("tag", "redis", {"notes/a.md", "notes/b.md"}),
        ("tag", "db", {"notes/a.md", "blog/c.md"}),  # db/sql is below db
        ("series", "intro", {"notes/a.md", "notes/b.md"}),
        ("path", "blog/", {"blog/c.md"}),
        ("date", "2024-03-01..2024-12-31", {"notes/b.md"}),
        ("draft", "true", {"notes/b.md"}),
        ("draft", "false", {"notes/a.md", "blog/c.md"}),
        ("title", "Alpha", set()),  # the engine's business
    ],
)
def test_filter_ids(store: Store, name: str, value: str, expected: set[str]) -> None:
    paths = {i: p for p, i in ids(store).items()}
    assert {paths[i] for i in store.notes.filter_ids(name, value)} == expected


def test_search_documents_are_made_from_the_stored_note(store: Store) -> None:
    [(note_id, document)] = store.notes.search_documents([ids(store)["notes/a.md"]])
    assert note_id == ids(store)["notes/a.md"]
    assert document == search_document(
        "Alpha", ["A note"], ["db/sql", "Redis"], ["Intro"], [], ["Alpha", "Usage"],
        "Alpha text", "print(1)", [], "a.md",
    )  # fmt: skip
    assert document.headings.splitlines()[-1] == "a"  # the file name is searched
    assert store.notes.search_documents([999]) == []


# -- terms --------------------------------------------------------------------------------


def test_terms(store: Store) -> None:
    a, b, c = (ids(store)[p] for p in ("notes/a.md", "notes/b.md", "blog/c.md"))
    assert store.terms.of_note("tags", a) == ["db/sql", "Redis"]
    assert store.terms.of_note("tags", b) == ["redis"]  # each note keeps its own spelling
    # The name table keeps one of the spellings; counts are over every spelling.
    assert [(n.casefold(), k) for n, k in store.terms.counts("tags")] == [
        ("db", 1),
        ("db/sql", 1),
        ("redis", 2),
    ]
    assert [n.title for n in store.terms.notes_in_series("INTRO")] == ["Alpha", "Beta"]
    assert [
        (s.note_id, s.name.casefold(), s.notes_with_it) for s in store.terms.shared("tags", a, 5)
    ] == [(b, "redis", 2)]
    assert store.terms.shared("tags", a, 1) == []  # too common
    assert store.terms.of_note("categories", c) == []
    with pytest.raises(ValueError, match="unknown term kind"):
        store.terms.of_note("colours", a)


# -- links --------------------------------------------------------------------------------


def test_links(store: Store) -> None:
    a, b, _c = (ids(store)[p] for p in ("notes/a.md", "notes/b.md", "blog/c.md"))
    outgoing = store.links.outgoing(a)
    assert [(o.target, o.anchor, o.status, o.target_path, o.target_title) for o in outgoing] == [
        ("b.md", "setup", "resolved", "notes/b.md", "Beta"),
        ("missing.md", "", "broken", None, None),
    ]
    [backlink] = store.links.backlinks(a)
    assert isinstance(backlink, BacklinkRow)
    assert (backlink.source_id, backlink.source_path, backlink.source_title, backlink.rel) == (
        b,
        "notes/b.md",
        "Beta",
        "related",
    )
    assert store.links.graph_edges() == [
        GraphEdgeRow(a, b, "markdown", ""),
        GraphEdgeRow(b, a, "markdown", "related"),
    ]
    assert store.links.problems() == [
        LinkProblemRow("notes/a.md", 9, "markdown", "missing.md", "", "broken", None)
    ]
    assert store.links.neighbours(a) == ({b}, {b})
    assert store.links.co_linked(a) == []  # only a itself shares b
    assert not store.links.has_unresolved()
    assert {link.id for link in store.links.to_resolve(None)} == {
        link.id for i in (a, b) for link in store.links.of_note(i)
    }


# -- problems and writes --------------------------------------------------------------------


def test_problems(store: Store) -> None:
    assert store.problems.all() == [ProblemRow("notes/b.md", "front-matter", "bad date", 2)]
    with store.transaction():
        store.problems.replace("x.md", [Problem("scan", "odd file")])
        assert store.problems.of("x.md") == [ProblemRow("x.md", "scan", "odd file", None)]
        store.problems.clear("x", ["scan"])
    assert store.problems.of("x.md") == []


def test_move_remove_skip_and_what_an_index_sees(store: Store) -> None:
    a, b, c = (ids(store)[p] for p in ("notes/a.md", "notes/b.md", "blog/c.md"))
    seen = store.generation
    with store.transaction():
        generation = store.meta.next_generation()
        assert store.notes.move(b, "notes/bb.md", "notes", "bb.md", 11, 2_000, generation) == (
            "notes/b.md"
        )
        assert store.problems.of("notes/bb.md")[0].message == "bad date"  # moved along
        assert store.notes.remove(["blog/c.md", "never.md"], generation) == 1
        assert store.notes.mark_skipped("notes/a.md", 5, 3_000, []) is True
        store.notes.touch("notes/bb.md", 12, 4_000)
    assert store.notes.changes_since(seen) == ([b], [c])
    stamps = store.notes.stat_stamps("notes/")
    assert stamps["notes/bb.md"] == ("notes/bb.md", 12, 4_000, 1)
    assert stamps["notes/a.md"] == ("notes/a.md", 10, 1_000, 1)  # the note wins
    assert "blog/c.md" not in store.notes.stat_stamps()
    assert store.notes.file_stamps(["notes/bb.md", "notes/a.md", "blog/c.md"]) == {
        "notes/bb.md": FileStamp(b, 12, 4_000, "hash-notes/b.md"),
        "notes/a.md": FileStamp(a, 10, 1_000, "hash-notes/a.md"),
    }


def test_clear_keeps_counting_generations(store: Store) -> None:
    before, known = store.generation, ids(store)
    with store.transaction():
        store.clear()
    assert store.notes.count() == 0
    assert store.generation == before + 1
    assert store.notes.changes_since(before) == ([], sorted(known.values()))


def test_a_failed_transaction_leaves_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.notes.write([record("notes/d.md", parsed("Delta"))], store.meta.next_generation())
        raise RuntimeError
    assert store.notes.count() == 3
    assert store.generation == 1


# -- opening ------------------------------------------------------------------------------


def test_opening(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    with pytest.raises(StoreError, match="no store at"):
        Store.open(path, create=False)
    Store.open(path).close()
    reader = Store.open(path, create=False)
    assert reader.version == SCHEMA_VERSION
    assert len(reader.meta.store_id) == 16
    reader.close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer kb"):
        Store.open(path, create=False)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (13, "disk full"),
        (8, "read-only"),
        (14, "cannot open"),
        (5, "locked by another program"),
        (10, "I/O error"),
        (11, "is damaged"),
    ],
)
def test_store_error_tells_the_cause(code: int, words: str) -> None:
    exc = sqlite3.OperationalError("boom")
    exc.sqlite_errorcode = code
    assert words in str(store_error(exc, Path("/x/kb.sqlite")))


@pytest.mark.parametrize("old_version", [1, 2])
def test_a_store_started_over_gets_todays_schema_in_one_step(tmp_path: Path, old_version) -> None:
    """A reset step creates today's schema, so the steps after it are not run again (they
    would create what it already made)."""
    from kb.store import schema

    path = tmp_path / "kb.sqlite"
    old = sqlite3.connect(path)
    old.executescript(f"CREATE TABLE notes (id INTEGER); PRAGMA user_version = {old_version};")
    old.close()
    store = Store.open(path)
    assert store.version == schema.SCHEMA_VERSION
    assert store.notes.count() == 0
    store.close()


def test_a_version_4_store_keeps_its_notes_and_gains_the_order_indexes(
    make_kb, tmp_path: Path
) -> None:
    """Schema 5 adds indexes for the newest and the last changed notes: the notes stay."""
    kb = make_kb({"a.md": "---\ndate: 2024-01-02\n---\n# A\n", "b.md": "# B\n"})
    kb.ingest()
    path = kb.config.store_path
    old = sqlite3.connect(path)
    old.executescript(
        "DROP INDEX notes_changed; DROP INDEX notes_date;"
        "CREATE INDEX notes_date ON notes(date); PRAGMA user_version = 4;"
    )
    old.close()
    store = Store.open(path)
    assert store.version == 6  # and on to schema 6 (the vectors of kb/meaning)
    assert [row.path for row in store.notes.recent(5)] == ["a.md", "b.md"]  # undated last
    plan = store.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM notes ORDER BY mtime_ns DESC, path LIMIT 5"
    ).fetchall()
    assert "notes_changed" in str(plan)
    store.close()
