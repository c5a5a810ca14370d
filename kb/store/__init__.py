"""The SQLite store: one facade over a DAO per concern, returning frozen rows.

The note files are the truth; everything here can be rebuilt from them. Reads and
writes use the standard ``sqlite3`` module (cheap to import; bulk writes are plain
``executemany``, a tuple per row). SQL on note data lives in this package and nowhere
else (the FTS5 engine keeps its own index tables).

    store = Store.open(path)
    store.notes.by_id(7)        # NoteText | None
    store.links.backlinks(7)    # list[BacklinkRow]
    store.terms.of_note("tags", 7)
    store.problems.all()
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kb.errors import StoreError
from kb.store import schema
from kb.store.connection import (
    MetaDao,
    check_location,
    connect,
    store_error,
    store_errors,
    telling_store_errors,
    transaction,
)
from kb.store.links import LinkDao, key_hash
from kb.store.names import NameKeyDao
from kb.store.notes import NoteDao, pack_text, unpack_text
from kb.store.problems import ProblemDao
from kb.store.rows import (
    AliasRow,
    BacklinkRow,
    ChoiceRow,
    CoLinked,
    FileStamp,
    GraphEdgeRow,
    HeadingRow,
    LinkProblemRow,
    LinkRow,
    ListedRow,
    NoteListRow,
    NoteRecord,
    NoteRow,
    NoteText,
    OutgoingLinkRow,
    ProblemRow,
    RecentRow,
    SharedTerm,
    StatStamp,
)
from kb.store.schema import SCHEMA_VERSION, TERM_KINDS
from kb.store.terms import TermDao, filter_clause
from kb.store.vectors import PassageRow, PendingNote, StoredPassage, VectorDao
from kb.store.vocabulary import VocabularyDao

__all__ = [
    "SCHEMA_VERSION",
    "TERM_KINDS",
    "AliasRow",
    "BacklinkRow",
    "ChoiceRow",
    "CoLinked",
    "FileStamp",
    "GraphEdgeRow",
    "HeadingRow",
    "LinkProblemRow",
    "LinkRow",
    "ListedRow",
    "NoteListRow",
    "NoteRecord",
    "NoteRow",
    "NoteText",
    "OutgoingLinkRow",
    "PassageRow",
    "PendingNote",
    "ProblemRow",
    "RecentRow",
    "SharedTerm",
    "StatStamp",
    "Store",
    "StoredPassage",
    "check_location",
    "filter_clause",
    "key_hash",
    "pack_text",
    "store_error",
    "store_errors",
    "telling_store_errors",
    "unpack_text",
]


class Store:
    """One database connection and the DAOs over it: ``notes``, ``links``, ``terms``,
    ``problems``, ``names`` (lookup keys) and ``meta``."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self.conn = conn  # the engines' index tables live in the same database
        self.path = path
        self.meta = MetaDao(conn, path)
        self.terms = TermDao(conn)
        self.problems = ProblemDao(conn)
        self.links = LinkDao(conn)
        self.names = NameKeyDao(conn)
        self.notes = NoteDao(conn, self.terms, self.problems)
        self.vocabulary = VocabularyDao(conn)
        self.vectors = VectorDao(conn)

    @classmethod
    def open(cls, path: Path, create: bool = True, check: bool = True) -> Store:
        """Open (and with ``create``, create or migrate) the store at ``path``; without
        ``create`` the connection only reads, and without ``check`` it reads whatever
        schema it finds (what a rebuild keeps of a damaged store)."""
        check_location(path)
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            raise StoreError(f"no store at {path} yet: run 'kb ingest' first")
        store = cls(connect(path, readonly=not create), path)
        try:
            with store_errors(path):
                if create:
                    schema.migrate(store.conn, path)
                elif check:
                    schema.check_version(store.conn, path)
        except BaseException:
            store.close()
            raise
        return store

    @property
    def version(self) -> int:
        return schema.version(self.conn)

    @property
    def generation(self) -> int:
        """Counts up with every ingest that changes something."""
        return self.meta.generation

    def close(self) -> None:
        self.conn.close()

    def seal(self) -> None:
        """Fold the write-ahead log into the database file and leave WAL mode, so that the
        file alone is the whole store (a rebuilt store is moved into place as one file)."""
        mode = self.conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        if str(mode).lower() != "delete":
            raise StoreError(f"the new store {self.path} is still in use; try again")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``), rolled back on any error."""
        with transaction(self.conn):
            yield

    def clear(self) -> None:
        """Forget every note (for ``--rebuild``); the generation keeps counting up."""
        generation = self.meta.next_generation()
        self.conn.execute(
            "INSERT OR REPLACE INTO tombstones(note_id, path, generation) "
            "SELECT id, path, ? FROM notes",
            (generation,),
        )
        self.vectors.clear()
        for table in (
            "note_texts",
            "link_lookups",
            "links",
            "name_keys",
            "headings",
            "aliases",
            "note_tags",
            "note_series",
            "note_categories",
            "tags",
            "series",
            "categories",
            "problems",
            "skipped_files",
        ):
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("DELETE FROM notes")
