"""The SQLite store: schema, migrations, and every read and write of note data.

The note files are the truth; everything here can be rebuilt from them. Reads use
the standard ``sqlite3`` module (cheap to import); bulk writes go through sqlite-utils,
imported only by the writer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb.documents import SearchDocument, search_document
from kb.errors import StoreError
from kb.links import LinkToResolve, NoteName
from kb.models import ParsedNote, Problem

SCHEMA_VERSION = 2
TERM_KINDS = ("tags", "series", "categories")

# tags, series and categories: one table of names each, and a link table in which each note
# keeps its own spelling (the name table keeps the first spelling it saw).
_TERM_TABLES = "".join(
    f"""CREATE TABLE {kind} (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE);
CREATE TABLE note_{kind} (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    {kind}_id INTEGER NOT NULL REFERENCES {kind}(id),
    name TEXT NOT NULL,
    PRIMARY KEY (note_id, {kind}_id)
);
CREATE INDEX note_{kind}_term ON note_{kind}({kind}_id);
"""
    for kind in TERM_KINDS
)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,          -- the note's id: relative to its root
    root TEXT NOT NULL,
    rel TEXT NOT NULL,                  -- path inside the root
    title TEXT NOT NULL,
    date TEXT,
    draft INTEGER NOT NULL DEFAULT 0,
    slug TEXT,
    hash TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    word_count INTEGER NOT NULL,
    summary TEXT NOT NULL,
    front_matter TEXT NOT NULL,         -- JSON
    generation INTEGER NOT NULL         -- store generation that last changed this note
);
CREATE INDEX notes_generation ON notes(generation);
CREATE INDEX notes_date ON notes(date);
CREATE INDEX notes_title ON notes(lower(title));
CREATE TABLE note_texts (              -- apart from notes, so scans of notes stay small
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    text_z BLOB NOT NULL,               -- plain text, zlib-compressed (see pack_text)
    code_z BLOB NOT NULL                -- code blocks, zlib-compressed
);
CREATE INDEX notes_hash ON notes(hash);
CREATE TABLE tombstones (
    note_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    generation INTEGER NOT NULL
);
CREATE INDEX tombstones_generation ON tombstones(generation);
{term_tables}CREATE TABLE aliases (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,
    kind TEXT NOT NULL                  -- name | url
);
CREATE INDEX aliases_note ON aliases(note_id);
CREATE INDEX aliases_alias ON aliases(alias COLLATE NOCASE);
CREATE TABLE headings (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    level INTEGER NOT NULL,
    text TEXT NOT NULL,
    slug TEXT NOT NULL,
    line INTEGER NOT NULL
);
CREATE INDEX headings_note ON headings(note_id);
CREATE TABLE links (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    target TEXT NOT NULL,               -- as written, without the #anchor
    anchor TEXT NOT NULL,
    kind TEXT NOT NULL,
    rel TEXT NOT NULL,                  -- front-matter key of a typed link, else ''
    text TEXT NOT NULL,
    line INTEGER NOT NULL,
    target_id INTEGER REFERENCES notes(id) ON DELETE SET NULL,  -- resolved note, NULL if none
    status TEXT NOT NULL DEFAULT 'new', -- resolved | ambiguous | missing-heading | broken
                                        -- | external | attachment | new (not yet resolved)
    target_key INTEGER NOT NULL DEFAULT 0  -- hash of the name or path it looks up (key_hash)
);
CREATE INDEX links_source ON links(source_id);
CREATE INDEX links_target ON links(target_id);
CREATE INDEX links_key ON links(target_key);
CREATE TABLE problems (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,                 -- a note path, or a file that could not become one
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    line INTEGER
);
CREATE INDEX problems_path ON problems(path);
CREATE TABLE skipped_files (           -- files that are not notes, so unchanged ones cost a stat
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
INSERT INTO meta(key, value) VALUES ('generation', '0');
INSERT INTO meta(key, value) VALUES ('store_id', lower(hex(randomblob(8))));
""".replace("{term_tables}", _TERM_TABLES)

# Schema 1 was never released in a stable shape (it changed while kb was being built),
# so a version-1 store is started over: its notes are read again by the same ingest.
_RESET = "RESET"
MIGRATIONS: dict[int, str] = {2: _RESET}


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What the store remembers of a file, to tell unchanged files with one stat."""

    note_id: int | None  # None for a skipped (non-note) file
    size: int
    mtime_ns: int
    hash: str


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A parsed note with the facts about its file, ready to write."""

    path: str
    root: str
    rel: str
    hash: str
    mtime_ns: int
    size: int
    encoding: str
    parsed: ParsedNote
    streams: tuple[str, ...] | None = None  # search tokens, made in the worker process


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open the store's database; ``readonly`` never creates or writes anything."""
    try:
        if readonly:
            conn = _reader(path)
        else:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise store_error(exc, path) from exc
    conn.row_factory = sqlite3.Row
    return conn


def _reader(path: Path) -> sqlite3.Connection:
    # Readers may be used from worker threads (the TUI), one at a time under a lock.
    uri = f"{path.as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opening is lazy
        return conn
    except sqlite3.OperationalError as exc:
        if _primary(exc) not in (_READONLY, _CANTOPEN):
            raise
    # A folder kb cannot write (a read-only mount, another user's knowledge base): a WAL
    # store cannot be read there without its -shm file, which cannot be made. Read the
    # file as immutable instead. The trade-off: SQLite then takes no locks and ignores any
    # -wal file, so answers are exact only while nobody else (an owner with write access)
    # ingests meanwhile; kb itself cannot write from here.
    return sqlite3.connect(
        f"{uri}&immutable=1", uri=True, isolation_level=None, check_same_thread=False
    )


def check_location(path: Path) -> None:
    """Refuse a store path of the wrong kind; kb never deletes what it did not make."""
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"{folder} is a file, not a folder: kb keeps its store there; move it")
    if path.exists() and not path.is_file():
        raise StoreError(f"{path} is not a file (a folder?): kb keeps its store there; move it")


# SQLite's primary result codes (an extended code keeps its primary in the low byte).
_FULL, _READONLY, _CANTOPEN, _PERM, _BUSY, _LOCKED, _IOERR = 13, 8, 14, 3, 5, 6, 10


def _primary(exc: sqlite3.Error) -> int:
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def store_error(exc: sqlite3.Error, path: Path | None = None) -> StoreError:
    """A database error as a StoreError that tells its true cause. Only a damaged store
    is worth a rebuild: after disk full, a permission or a lock it would not help."""
    where = f"the store {path}" if path else "the store"
    code = _primary(exc)
    if code == _FULL:
        message = f"disk full: cannot write {where} ({exc}); free some space and try again"
    elif code in (_READONLY, _PERM):
        message = (
            f"{where} is read-only here ({exc}): writing it needs write access to it and its folder"
        )
    elif code == _CANTOPEN:
        message = f"cannot open {where} ({exc}): check the permissions of it and its folder"
    elif code in (_BUSY, _LOCKED):
        message = f"{where} is locked by another program ({exc}); try again"
    elif code == _IOERR:
        message = f"I/O error on {where} ({exc}): is the disk failing or full?"
    else:
        message = f"{where} is damaged ({exc}); 'kb ingest --rebuild' recreates it from the notes"
    return StoreError(message)


@contextmanager
def store_errors(path: Path | None) -> Iterator[None]:
    """Database errors raised inside become StoreErrors (programming errors stay as they are)."""
    try:
        yield
    except sqlite3.ProgrammingError:
        raise
    except sqlite3.DatabaseError as exc:
        raise store_error(exc, path) from exc


class Store:
    """All SQL on note data lives in this class."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self.conn = conn
        self.path = path

    # -- opening and migrating ---------------------------------------------------------

    @classmethod
    def open(cls, path: Path, create: bool = True) -> Store:
        """Open (and with ``create``, create or migrate) the store at ``path``."""
        check_location(path)
        if not create:
            if not path.exists():
                raise StoreError(f"no store at {path} yet: run 'kb ingest' first")
            store = cls(connect(path, readonly=True), path)
            store.check_version()
            return store
        path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(connect(path), path)
        try:
            with store_errors(path):
                store.migrate()
        except BaseException:
            store.close()
            raise
        return store

    @property
    def version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def check_version(self) -> None:
        if self.version > SCHEMA_VERSION:
            raise StoreError(
                f"the store was written by a newer kb (schema {self.version}); upgrade kb"
            )
        if self.version < SCHEMA_VERSION:
            raise StoreError("the store is from an older kb: run 'kb ingest' to upgrade it")

    def migrate(self) -> None:
        """Bring the schema to SCHEMA_VERSION, each step in one transaction."""
        current = self.version
        if current > SCHEMA_VERSION:
            self.check_version()
        if current == 0:  # a new store: today's schema at once
            with self.transaction():
                self._create()
                self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            return
        for version in range(current + 1, SCHEMA_VERSION + 1):
            with self.transaction():
                if MIGRATIONS[version] == _RESET:
                    self._drop_everything()
                    self._create()
                else:
                    for statement in _statements(MIGRATIONS[version]):
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {version}")

    def _create(self) -> None:
        for statement in _statements(_SCHEMA):
            self.conn.execute(statement)

    def _drop_everything(self) -> None:
        # Virtual tables first: dropping one drops its shadow tables with it.
        for (name,) in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%' "
            "ORDER BY length(name) DESC"
        ).fetchall():
            self.conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for (name,) in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall():
            self.conn.execute(f'DROP TABLE IF EXISTS "{name}"')

    def close(self) -> None:
        self.conn.close()

    def seal(self) -> None:
        """Fold the write-ahead log into the database file and leave WAL mode, so that the
        file alone is the whole store (a rebuilt store is moved into place as one file)."""
        mode = self.conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        if str(mode).lower() != "delete":
            raise StoreError(f"the new store {self.path} is still in use; try again")

    # -- transactions ---------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``), rolled back on any error."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            # SQLite may have rolled back already (disk full does): a second ROLLBACK
            # would fail and hide the real cause.
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- generation ---------------------------------------------------------------

    @property
    def generation(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        try:
            return int(row[0])
        except (TypeError, ValueError):
            raise StoreError(
                f"the store {self.path} is damaged (its generation is "
                f"{row[0] if row else 'missing'!r}); 'kb ingest --rebuild' recreates it"
            ) from None

    @property
    def store_id(self) -> str:
        """Random, made when the store is created: an index kept elsewhere can tell a new
        store (whose generations start again at 1) from the one it was built for."""
        return self.get_meta("store_id") or ""

    def next_generation(self) -> int:
        generation = self.generation + 1
        self.set_meta("generation", str(generation))
        return generation

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- what is stored -------------------------------------------------------------

    def file_stamps(self, prefix: str = "") -> dict[str, FileStamp]:
        """Stamps of stored notes and skipped files whose path starts with ``prefix``
        (compared exactly: `Docs/` is not `docs/`)."""
        where = "substr(path, 1, ?) = ?"
        stamps = {
            row[0]: FileStamp(row[1], row[2], row[3], row[4])
            for row in self.conn.execute(
                f"SELECT path, id, size, mtime_ns, hash FROM notes WHERE {where}",
                (len(prefix), prefix),
            )
        }
        for row in self.conn.execute(
            f"SELECT path, size, mtime_ns FROM skipped_files WHERE {where}", (len(prefix), prefix)
        ):
            stamps.setdefault(row[0], FileStamp(None, row[1], row[2], ""))
        return stamps

    def count_notes(self, root: str | None = None) -> int:
        if root is None:
            return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        return int(
            self.conn.execute("SELECT count(*) FROM notes WHERE root = ?", (root,)).fetchone()[0]
        )

    def note(self, path: str) -> dict[str, Any] | None:
        return _unpacked(
            self.conn.execute(f"{_NOTE_WITH_TEXT} WHERE n.path = ?", (path,)).fetchone()
        )

    def note_by_id(self, note_id: int) -> dict[str, Any] | None:
        return _unpacked(
            self.conn.execute(f"{_NOTE_WITH_TEXT} WHERE n.id = ?", (note_id,)).fetchone()
        )

    def recent_notes(self, limit: int) -> list[sqlite3.Row]:
        """Newest first (notes without a date last), for an empty search box."""
        return self.conn.execute(
            "SELECT id, path, title, date, summary FROM notes "
            "ORDER BY date IS NULL, date DESC, path LIMIT ?",
            (limit,),
        ).fetchall()

    def series_notes(self, name: str) -> list[sqlite3.Row]:
        """The notes of a series in date order (undated last, then by path)."""
        return self.conn.execute(
            "SELECT n.id, n.path, n.title, n.date FROM notes n JOIN note_series ns "
            "ON ns.note_id = n.id JOIN series s ON s.id = ns.series_id "
            "WHERE s.name = ? COLLATE NOCASE ORDER BY n.date IS NULL, n.date, n.path",
            (name,),
        ).fetchall()

    def titles(self, note_ids: Iterable[int]) -> dict[int, str]:
        found = {}
        for note_id in note_ids:
            row = self.conn.execute("SELECT title FROM notes WHERE id = ?", (note_id,)).fetchone()
            if row is not None:
                found[note_id] = row[0]
        return found

    def dates_and_paths(self, note_ids: Iterable[int]) -> dict[int, tuple[str | None, str]]:
        wanted = set(note_ids)
        return {
            row[0]: (row[1], row[2])
            for row in self.conn.execute("SELECT id, date, path FROM notes")
            if row[0] in wanted
        }

    def ids_titled(self, title: str) -> set[int]:
        """Notes whose title is ``title`` (any ASCII case): they rank first."""
        return {
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM notes WHERE lower(title) = ?", (title.lower(),)
            )
        }

    def filter_ids(self, name: str, value: str) -> set[int]:
        sql, params = filter_clause(name, value)
        return {
            row[0] for row in self.conn.execute(f"SELECT n.id FROM notes n WHERE {sql}", params)
        }

    def notes(self) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT id, path, title, date, draft, word_count FROM notes ORDER BY path"
        ).fetchall()

    def terms(self, kind: str, note_id: int) -> list[str]:
        table = _term_table(kind)
        return [
            row[0]
            for row in self.conn.execute(
                f"SELECT name FROM note_{table} WHERE note_id = ? ORDER BY name COLLATE NOCASE",
                (note_id,),
            )
        ]

    def term_counts(self, kind: str) -> list[tuple[str, int]]:
        table = _term_table(kind)
        return [
            (row[0], row[1])
            for row in self.conn.execute(
                f"SELECT t.name, count(nt.note_id) FROM {table} t "
                f"JOIN note_{table} nt ON nt.{table}_id = t.id GROUP BY t.id ORDER BY t.name"
            )
        ]

    def aliases(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT alias, kind FROM aliases WHERE note_id = ? ORDER BY rowid", (note_id,)
        ).fetchall()

    def headings(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT level, text, slug, line FROM headings WHERE note_id = ? ORDER BY position",
            (note_id,),
        ).fetchall()

    def links_from(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT * FROM links WHERE source_id = ? ORDER BY line, id", (note_id,)
        ).fetchall()

    def problems(self, path: str | None = None) -> list[sqlite3.Row]:
        if path is None:
            return self.conn.execute(
                "SELECT path, kind, message, line FROM problems ORDER BY path, line"
            ).fetchall()
        return self.conn.execute(
            "SELECT path, kind, message, line FROM problems WHERE path = ? ORDER BY line",
            (path,),
        ).fetchall()

    def changes_since(self, generation: int) -> tuple[list[int], list[int]]:
        """Note ids changed and note ids removed after ``generation``: how an index catches up."""
        changed = [
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM notes WHERE generation > ? ORDER BY id", (generation,)
            )
        ]
        removed = [
            row[0]
            for row in self.conn.execute(
                "SELECT note_id FROM tombstones WHERE generation > ? ORDER BY note_id",
                (generation,),
            )
        ]
        return changed, removed

    def ids_of(self, paths: Iterable[str]) -> dict[str, int]:
        found = {}
        for path in paths:
            row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
            if row is not None:
                found[path] = int(row[0])
        return found

    def all_ids(self) -> list[int]:
        return [int(row[0]) for row in self.conn.execute("SELECT id FROM notes ORDER BY id")]

    def search_documents(self, note_ids: Iterable[int]) -> list[tuple[int, SearchDocument]]:
        """The search documents of stored notes, exactly as ``document_of`` made them."""
        documents = []
        for note_id in note_ids:
            row = self.conn.execute(
                "SELECT n.path, n.title, t.text_z, t.code_z FROM notes n "
                "LEFT JOIN note_texts t ON t.note_id = n.id WHERE n.id = ?",
                (note_id,),
            ).fetchone()
            if row is None:
                continue
            aliases = [r["alias"] for r in self.aliases(note_id) if r["kind"] == "name"]
            headings = [r["text"] for r in self.headings(note_id)]
            documents.append(
                (
                    note_id,
                    search_document(
                        row["title"],
                        aliases,
                        self.terms("tags", note_id),
                        self.terms("series", note_id),
                        self.terms("categories", note_id),
                        headings,
                        unpack_text(row["text_z"], row["path"]),
                        unpack_text(row["code_z"], row["path"]),
                    ),
                )
            )
        return documents

    # -- links ------------------------------------------------------------------------

    def note_names(self, note_ids: Iterable[int] | None = None) -> list[NoteName]:
        """Every name each note goes by (all notes when ``note_ids`` is None)."""
        if note_ids is None:
            rows = self.conn.execute("SELECT id, root, rel, title, slug FROM notes").fetchall()
            alias_rows = self.conn.execute("SELECT note_id, alias, kind FROM aliases").fetchall()
        else:
            ids = list(note_ids)
            if not ids:
                return []
            with self._id_table(ids) as table:
                rows = self.conn.execute(
                    f"SELECT id, root, rel, title, slug FROM notes WHERE id IN "
                    f"(SELECT id FROM {table})"
                ).fetchall()
                alias_rows = self.conn.execute(
                    f"SELECT note_id, alias, kind FROM aliases WHERE note_id IN "
                    f"(SELECT id FROM {table})"
                ).fetchall()
        names: dict[int, list[str]] = {}
        urls: dict[int, list[str]] = {}
        for note_id, alias, kind in alias_rows:
            (names if kind == "name" else urls).setdefault(note_id, []).append(alias)
        return [
            NoteName(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                tuple(names.get(row[0], ())),
                tuple(urls.get(row[0], ())),
            )
            for row in rows
        ]

    def outgoing_links(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT l.*, t.path AS target_path, t.title AS target_title FROM links l "
            "LEFT JOIN notes t ON t.id = l.target_id WHERE l.source_id = ? "
            "ORDER BY l.line, l.id",
            (note_id,),
        ).fetchall()

    def backlinks(self, note_id: int) -> list[sqlite3.Row]:
        """Links from other notes to this one: one query."""
        return self.conn.execute(
            "SELECT l.*, s.path AS source_path, s.title AS source_title FROM links l "
            "JOIN notes s ON s.id = l.source_id WHERE l.target_id = ? AND l.source_id != ? "
            "ORDER BY s.path, l.line",
            (note_id, note_id),
        ).fetchall()

    def link_neighbours(self, note_id: int) -> tuple[set[int], set[int]]:
        """Notes this one links to, and notes that link to it."""
        targets = {
            row[0]
            for row in self.conn.execute(
                "SELECT DISTINCT target_id FROM links WHERE source_id = ? "
                "AND target_id IS NOT NULL AND target_id != ?",
                (note_id, note_id),
            )
        }
        sources = {
            row[0]
            for row in self.conn.execute(
                "SELECT DISTINCT source_id FROM links WHERE target_id = ? AND source_id != ?",
                (note_id, note_id),
            )
        }
        return targets, sources

    def co_linked(self, note_id: int) -> list[tuple[int, int, int]]:
        """(other note, shared note, that note's link count) for notes that link to the same
        notes as this one or are linked from the same notes (coupling and co-citation)."""
        targets, sources = self.link_neighbours(note_id)
        found: list[tuple[int, int, int]] = []
        for target in targets:
            others = [
                row[0]
                for row in self.conn.execute(
                    "SELECT DISTINCT source_id FROM links WHERE target_id = ?", (target,)
                )
            ]
            found.extend((o, target, len(others)) for o in others if o != note_id)
        for source in sources:
            others = [
                row[0]
                for row in self.conn.execute(
                    "SELECT DISTINCT target_id FROM links WHERE source_id = ? "
                    "AND target_id IS NOT NULL",
                    (source,),
                )
            ]
            found.extend((o, source, len(others)) for o in others if o != note_id)
        return found

    def notes_sharing_terms(
        self, kind: str, note_id: int, max_notes: int
    ) -> list[tuple[int, str, int]]:
        """(other note, shared tag/series name, how many notes have it), for the names this
        note has that at most ``max_notes`` notes share (a tag on every note says nothing)."""
        table = _term_table(kind)
        mine = self.conn.execute(
            f"SELECT t.id, t.name, (SELECT count(*) FROM note_{table} c WHERE c.{table}_id = t.id)"
            f" FROM note_{table} m JOIN {table} t ON t.id = m.{table}_id WHERE m.note_id = ?",
            (note_id,),
        ).fetchall()
        shared = []
        for term_id, name, count in mine:
            if count > max_notes:
                continue
            shared.extend(
                (row[0], name, count)
                for row in self.conn.execute(
                    f"SELECT note_id FROM note_{table} WHERE {table}_id = ? AND note_id != ?",
                    (term_id, note_id),
                )
            )
        return shared

    def link_problems(self) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT n.path, l.line, l.kind, l.target, l.anchor, l.status, t.path AS target_path "
            "FROM links l JOIN notes n ON n.id = l.source_id LEFT JOIN notes t "
            "ON t.id = l.target_id WHERE l.status IN ('broken', 'missing-heading', 'ambiguous') "
            "ORDER BY n.path, l.line"
        ).fetchall()

    def duplicate_titles(self) -> list[list[str]]:
        groups: dict[str, list[str]] = {}
        for title, path in self.conn.execute(
            "SELECT title, path FROM notes WHERE lower(title) IN (SELECT lower(title) "
            "FROM notes GROUP BY lower(title) HAVING count(*) > 1) ORDER BY path"
        ):
            groups.setdefault(title.casefold(), []).append(path)
        return list(groups.values())

    def graph_edges(self) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT DISTINCT source_id, target_id, kind, rel FROM links "
            "WHERE target_id IS NOT NULL AND target_id != source_id "
            "ORDER BY source_id, target_id"
        ).fetchall()

    def has_new_links(self) -> bool:
        """Links never resolved (a store from before link resolution existed)."""
        row = self.conn.execute("SELECT 1 FROM links WHERE status = 'new' LIMIT 1").fetchone()
        return row is not None

    def heading_slugs(self, note_id: int) -> set[str]:
        return {
            row[0]
            for row in self.conn.execute("SELECT slug FROM headings WHERE note_id = ?", (note_id,))
        }

    def links_to_resolve(
        self, changed: Iterable[int] | None, keys: Iterable[str] = ()
    ) -> list[LinkToResolve]:
        """Links whose target may have changed: from or to ``changed`` notes, unresolved
        ones, and those looking up any of ``keys``. All links when ``changed`` is None."""
        columns = "id, source_id, target, anchor, kind"
        if changed is None:
            rows = self.conn.execute(f"SELECT {columns} FROM links").fetchall()
        else:
            with self._id_table(list(changed)) as ids, self._key_table(list(keys)) as key_table:
                rows = self.conn.execute(
                    f"SELECT {columns} FROM links WHERE source_id IN (SELECT id FROM {ids}) "
                    f"OR target_id IN (SELECT id FROM {ids}) "
                    f"OR (target_id IS NULL AND status NOT IN ('external', 'attachment')) "
                    f"OR target_key IN (SELECT key FROM {key_table})"
                ).fetchall()
        return [LinkToResolve(*row) for row in rows]

    def set_link_targets(self, updates: Iterable[tuple[int | None, str, str, int]]) -> None:
        """(target_id, status, target_key, link id) for each re-resolved link."""
        self.conn.executemany(
            "UPDATE links SET target_id = ?, status = ?, target_key = ? WHERE id = ?",
            [(target, status, key_hash(key), link) for target, status, key, link in updates],
        )

    @contextmanager
    def _id_table(self, ids: list[int]) -> Iterator[str]:
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS kb_ids (id INTEGER PRIMARY KEY)")
        self.conn.execute("DELETE FROM kb_ids")
        self.conn.executemany("INSERT OR IGNORE INTO kb_ids(id) VALUES (?)", [(i,) for i in ids])
        try:
            yield "temp.kb_ids"
        finally:
            self.conn.execute("DELETE FROM kb_ids")

    @contextmanager
    def _key_table(self, keys: list[str]) -> Iterator[str]:
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS kb_keys (key INTEGER PRIMARY KEY)")
        self.conn.execute("DELETE FROM kb_keys")
        self.conn.executemany(
            "INSERT OR IGNORE INTO kb_keys(key) VALUES (?)", [(key_hash(k),) for k in keys]
        )
        try:
            yield "temp.kb_keys"
        finally:
            self.conn.execute("DELETE FROM kb_keys")

    # -- writes (inside transaction()) ---------------------------------------------------

    def write_notes(self, records: list[NoteRecord], generation: int) -> list[int]:
        """Insert or replace notes by path, with their tags, aliases, headings and links."""
        if not records:
            return []
        import sqlite_utils

        db = sqlite_utils.Database(self.conn)
        ids = self._upsert_note_rows(records, generation)
        self._delete_children(ids)
        for kind in TERM_KINDS:
            self._write_terms(kind, records, ids)
        db["aliases"].insert_all(
            {"note_id": note_id, "alias": alias, "kind": kind}
            for record, note_id in zip(records, ids, strict=True)
            for kind, values in (
                ("name", record.parsed.name_aliases),
                ("url", record.parsed.url_aliases),
            )
            for alias in values
        )
        db["headings"].insert_all(
            {
                "note_id": note_id,
                "position": position,
                "level": h.level,
                "text": h.text,
                "slug": h.slug,
                "line": h.line,
            }
            for record, note_id in zip(records, ids, strict=True)
            for position, h in enumerate(record.parsed.headings)
        )
        db["links"].insert_all(
            {
                "source_id": note_id,
                "target": link.target,
                "anchor": link.anchor,
                "kind": link.kind,
                "rel": link.rel,
                "text": link.text,
                "line": link.line,
                "target_id": None,
            }
            for record, note_id in zip(records, ids, strict=True)
            for link in record.parsed.links
        )
        for record in records:
            self.replace_problems(record.path, record.parsed.problems)
        self.conn.executemany(
            "DELETE FROM skipped_files WHERE path = ?", [(r.path,) for r in records]
        )
        return ids

    def _upsert_note_rows(self, records: list[NoteRecord], generation: int) -> list[int]:
        ids = []
        for record in records:
            note = record.parsed
            values = {
                "path": record.path,
                "root": record.root,
                "rel": record.rel,
                "title": note.title,
                "date": note.date,
                "draft": int(note.draft),
                "slug": note.slug,
                "hash": record.hash,
                "mtime_ns": record.mtime_ns,
                "size": record.size,
                "encoding": record.encoding,
                "word_count": note.word_count,
                "summary": note.summary,
                "front_matter": json.dumps(note.front_matter, ensure_ascii=False),
                "generation": generation,
            }
            columns = ", ".join(values)
            placeholders = ", ".join(f":{c}" for c in values)
            updates = ", ".join(f"{c} = excluded.{c}" for c in values if c != "path")
            row = self.conn.execute(
                f"INSERT INTO notes ({columns}) VALUES ({placeholders}) "
                f"ON CONFLICT(path) DO UPDATE SET {updates} RETURNING id",
                values,
            ).fetchone()
            ids.append(int(row[0]))
        self.conn.executemany(
            "INSERT OR REPLACE INTO note_texts(note_id, text_z, code_z) VALUES (?, ?, ?)",
            [
                (note_id, pack_text(r.parsed.text), pack_text(r.parsed.code))
                for note_id, r in zip(ids, records, strict=True)
            ],
        )
        return ids

    def _delete_children(self, ids: list[int]) -> None:
        params = [(i,) for i in ids]
        for table in ("note_tags", "note_series", "note_categories", "aliases", "headings"):
            self.conn.executemany(f"DELETE FROM {table} WHERE note_id = ?", params)
        self.conn.executemany("DELETE FROM links WHERE source_id = ?", params)

    def _write_terms(self, kind: str, records: list[NoteRecord], ids: list[int]) -> None:
        table = _term_table(kind)
        per_note = [
            (note_id, getattr(r.parsed, kind)) for r, note_id in zip(records, ids, strict=True)
        ]
        names = {name for _, values in per_note for name in values}
        if not names:
            return
        self.conn.executemany(
            f"INSERT OR IGNORE INTO {table}(name) VALUES (?)", [(n,) for n in names]
        )
        term_ids = {}
        for name in names:
            row = self.conn.execute(f"SELECT id FROM {table} WHERE name = ?", (name,)).fetchone()
            term_ids[name] = row[0]
        # Each note keeps its own spelling: its search tokens are made from it, and the
        # index must be able to delete exactly those tokens later.
        self.conn.executemany(
            f"INSERT OR IGNORE INTO note_{table}(note_id, {table}_id, name) VALUES (?, ?, ?)",
            [(note_id, term_ids[name], name) for note_id, values in per_note for name in values],
        )

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """The file's stamp changed but its content did not."""
        self.conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def move_note(
        self,
        note_id: int,
        path: str,
        root: str,
        rel: str,
        size: int,
        mtime_ns: int,
        generation: int,
    ) -> str:
        """A renamed file: same note, new path. Returns the old path."""
        old = self.conn.execute("SELECT path FROM notes WHERE id = ?", (note_id,)).fetchone()[0]
        self.conn.execute(
            "UPDATE notes SET path = ?, root = ?, rel = ?, size = ?, mtime_ns = ?, "
            "generation = ? WHERE id = ?",
            (path, root, rel, size, mtime_ns, generation, note_id),
        )
        self.conn.execute("UPDATE problems SET path = ? WHERE path = ?", (path, old))
        return old

    def remove_notes(self, paths: Iterable[str], generation: int) -> int:
        """Delete notes by path, leaving tombstones so derived indexes can follow."""
        removed = 0
        for path in paths:
            row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
            self.conn.execute("DELETE FROM problems WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM skipped_files WHERE path = ?", (path,))
            if row is None:
                continue
            self.conn.execute(
                "INSERT OR REPLACE INTO tombstones(note_id, path, generation) VALUES (?, ?, ?)",
                (row[0], path, generation),
            )
            self.conn.execute("DELETE FROM notes WHERE id = ?", (row[0],))
            removed += 1
        return removed

    def mark_skipped(self, path: str, size: int, mtime_ns: int, problems: list[Problem]) -> bool:
        """Remember a file that is not a note. Returns True if it was a note until now."""
        was_note = self.conn.execute("SELECT 1 FROM notes WHERE path = ?", (path,)).fetchone()
        self.conn.execute(
            "INSERT OR REPLACE INTO skipped_files(path, size, mtime_ns) VALUES (?, ?, ?)",
            (path, size, mtime_ns),
        )
        self.replace_problems(path, problems)
        return was_note is not None

    def clear_problems(self, prefix: str, kinds: Iterable[str]) -> None:
        kinds = list(kinds)
        marks = ", ".join("?" for _ in kinds)
        self.conn.execute(
            f"DELETE FROM problems WHERE substr(path, 1, ?) = ? AND kind IN ({marks})",
            (len(prefix), prefix, *kinds),
        )

    def replace_problems(self, path: str, problems: Iterable[Problem]) -> None:
        self.conn.execute("DELETE FROM problems WHERE path = ?", (path,))
        self.conn.executemany(
            "INSERT INTO problems(path, kind, message, line) VALUES (?, ?, ?, ?)",
            [(path, p.kind, p.message, p.line) for p in problems],
        )

    def clear(self) -> None:
        """Forget every note (for ``--rebuild``); the generation keeps counting up."""
        generation = self.next_generation()
        self.conn.execute(
            "INSERT OR REPLACE INTO tombstones(note_id, path, generation) "
            "SELECT id, path, ? FROM notes",
            (generation,),
        )
        for table in (
            "note_texts",
            "links",
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


def filter_clause(name: str, value: str) -> tuple[str, list[object]]:
    """SQL over ``notes n`` for a query filter (tag:, series:, category:, path:, date:,
    draft:), shared by every search engine so that filters mean the same everywhere."""
    if name == "tag":  # the tag or any tag below it, any case
        return (
            "n.id IN (SELECT nt.note_id FROM note_tags nt JOIN tags t ON t.id = nt.tags_id "
            "WHERE t.name = ? COLLATE NOCASE OR t.name LIKE ? ESCAPE '\\')",
            [value, _like_escape(value) + "/%"],
        )
    if name in ("series", "category"):
        table = "series" if name == "series" else "categories"
        return (
            f"n.id IN (SELECT nt.note_id FROM note_{table} nt JOIN {table} t "
            f"ON t.id = nt.{table}_id WHERE t.name = ? COLLATE NOCASE)",
            [value],
        )
    if name == "path":
        return "n.path LIKE ? ESCAPE '\\'", ["%" + _like_escape(value) + "%"]
    if name == "date":
        start, end = value.split("..")
        # ISO dates sort as text; a date with a time sorts after its day, before '~'.
        return "(n.date >= ? AND n.date <= ?)", [start, end + "~"]
    if name == "draft":
        return ("n.draft = 1" if value == "true" else "n.draft = 0"), []
    return "0", []  # title: is text, handled by the engine


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def key_hash(key: str) -> int:
    """A link's lookup key as a 63-bit number: an index of these is a third the size of
    the strings, and a collision only means one link more is resolved again."""
    if not key:
        return 0
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest()) >> 1


def pack_text(text: str) -> bytes:
    """Note text is kept compressed: it is read only for snippets, and halving it keeps
    the database under twice the size of the notes."""
    return zlib.compress(text.encode("utf-8"), 6)


def unpack_text(blob: bytes | None, path: str = "") -> str:
    """The text ``pack_text`` stored; ``path`` names the note when it is damaged."""
    try:
        return zlib.decompress(blob).decode("utf-8") if blob else ""
    except (zlib.error, UnicodeDecodeError) as exc:
        raise StoreError(
            f"the stored text of {path or 'a note'} is damaged ({exc}); "
            "'kb ingest --rebuild' recreates the store"
        ) from None


_NOTE_WITH_TEXT = (
    "SELECT n.*, t.text_z, t.code_z FROM notes n LEFT JOIN note_texts t ON t.note_id = n.id"
)


def _unpacked(row: sqlite3.Row | None) -> dict[str, Any] | None:
    """A note row as a dict, with ``text`` and ``code`` in place of their packed columns."""
    if row is None:
        return None
    note = dict(row)
    note["text"] = unpack_text(note.pop("text_z"), note["path"])
    note["code"] = unpack_text(note.pop("code_z"), note["path"])
    return note


def _term_table(kind: str) -> str:
    if kind not in TERM_KINDS:
        raise ValueError(f"unknown term kind {kind!r}")
    return kind


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (none of ours holds a ';' inside a string)."""
    return [s.strip() for s in script.split(";") if s.strip()]
