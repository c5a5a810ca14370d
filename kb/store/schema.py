"""The schema: tables, ``PRAGMA user_version`` and the migrations between versions."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from kb.errors import StoreError
from kb.store.connection import transaction

SCHEMA_VERSION = 6
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

# Search by meaning (kb/meaning): filled after the lexical index is written, by note hash.
_VECTOR_TABLES = """
CREATE TABLE passages (                -- a vector per passage of a note
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    start INTEGER NOT NULL,             -- where it stands in the note's plain text
    end INTEGER NOT NULL,
    heading TEXT NOT NULL,              -- the heading path it sits under
    vector BLOB NOT NULL,               -- int8 components, then a float32 scale
    PRIMARY KEY (note_id, position)
) WITHOUT ROWID;
CREATE TABLE embedded (                -- which version of each note its passages are from
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    hash TEXT NOT NULL,                 -- the note's content hash when it was embedded
    failed INTEGER NOT NULL DEFAULT 0   -- the embedder failed on it: words only
);
"""

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
CREATE INDEX notes_date ON notes(date DESC, path);  -- the newest notes, and date filters
CREATE INDEX notes_title ON notes(lower(title));
-- The files changed last (the app's first screen) and, covering, every stamp a re-ingest
-- compares, neither reading the rows of notes.
CREATE INDEX notes_changed ON notes(mtime_ns DESC, path, size);
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
CREATE INDEX links_new ON links(id) WHERE status = 'new';
CREATE INDEX links_missing_file ON links(id) WHERE status = 'missing-file';
CREATE TABLE name_keys (               -- each LinkIndex entry of a note (kb/store/names.py)
    key INTEGER NOT NULL,               -- entry_hash(table, key)
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    PRIMARY KEY (key, note_id)
) WITHOUT ROWID;
CREATE INDEX name_keys_note ON name_keys(note_id);
CREATE TABLE link_lookups (            -- what a broken link looked up, to know when to retry
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    key INTEGER NOT NULL,               -- entry_hash(table, key)
    PRIMARY KEY (link_id, key)
) WITHOUT ROWID;
CREATE INDEX link_lookups_key ON link_lookups(key);
CREATE TABLE problems (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,                 -- a note path, or a file that could not become one
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    line INTEGER
);
CREATE INDEX problems_path ON problems(path);
{vector_tables}-- files that are not notes, so unchanged ones cost a stat
CREATE TABLE skipped_files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
INSERT INTO meta(key, value) VALUES ('generation', '0');
INSERT INTO meta(key, value) VALUES ('store_id', lower(hex(randomblob(8))));
""".replace("{term_tables}", _TERM_TABLES).replace("{vector_tables}", _VECTOR_TABLES)
TABLES = tuple(re.findall(r"^CREATE TABLE (\w+)", _SCHEMA, re.MULTILINE))
# Schema numbers from SCHEMA_VERSION up to here may be a newer kb's; any other number
# (negative, huge: a damaged header) no kb writes.
NEWER_KB_BELOW = 1000

# Schema 1 was never released in a stable shape (it changed while kb was being built),
# so a version-1 store is started over: its notes are read again by the same ingest.
# Schema 3 adds the names' lookup keys, which only parsing the notes again can fill.
_RESET = "RESET"
MIGRATIONS: dict[int, str] = {
    2: _RESET,
    3: _RESET,
    4: "CREATE INDEX links_missing_file ON links(id) WHERE status = 'missing-file'",
    5: (
        "CREATE INDEX notes_changed ON notes(mtime_ns DESC, path, size);"
        "DROP INDEX notes_date;"
        "CREATE INDEX notes_date ON notes(date DESC, path)"
    ),
    6: _VECTOR_TABLES.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS "),
}


def version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def check_version(conn: sqlite3.Connection, path: Path | None = None) -> None:
    """Refuse a store this kb cannot read as it is: one from an older or a newer kb, or a
    damaged one (a schema number no kb writes, a table missing)."""
    found = version(conn)
    if found == SCHEMA_VERSION:
        check_tables(conn, path)
        return
    if found == 0 and not _tables(conn):
        raise StoreError(f"the store {_where(path)}is empty: run 'kb ingest' to build it")
    _check_known(conn, found, path)
    raise StoreError("the store is from an older kb: run 'kb ingest' to upgrade it")


def _check_known(conn: sqlite3.Connection, found: int, path: Path | None) -> None:
    """Refuse a schema number kb cannot upgrade from: a newer kb's, or one no kb writes
    (a damaged header, or tables without a number)."""
    if found == 0:
        raise damaged(path, "it has tables but no schema number")
    if not 0 < found < NEWER_KB_BELOW:
        raise damaged(path, f"its schema number {found} is not one any kb writes")
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"the store {_where(path)}was written by a newer kb (schema {found}); upgrade "
            "kb, or 'kb ingest --rebuild' recreates it from the notes for this kb"
        )


def check_tables(conn: sqlite3.Connection, path: Path | None = None) -> None:
    """Refuse a store of today's schema that lacks one of its tables: reads of it would
    answer as if it held no notes."""
    present = _tables(conn)
    missing = [name for name in TABLES if name not in present]
    if missing:
        listed = ", ".join(missing)
        verb = "are" if len(missing) > 1 else "is"
        raise damaged(path, f"the table{'s' if len(missing) > 1 else ''} {listed} {verb} missing")


def damaged(path: Path | None, why: str) -> StoreError:
    """A store that only a rebuild can repair."""
    return StoreError(
        f"the store {_where(path)}is damaged ({why}); 'kb ingest --rebuild' recreates it "
        "from the notes"
    )


def _where(path: Path | None) -> str:
    return f"{path} " if path else ""


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def migrate(conn: sqlite3.Connection, path: Path | None = None) -> None:
    """Bring the schema to SCHEMA_VERSION, each step in one transaction; refuse a store
    no step can start from (a newer kb's, a damaged one)."""
    current = version(conn)
    if current == 0 and not _tables(conn):  # a new store: today's schema at once
        with transaction(conn):
            _create(conn)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return
    if current != SCHEMA_VERSION:
        _check_known(conn, current, path)
    for step in range(current + 1, SCHEMA_VERSION + 1):
        with transaction(conn):
            if MIGRATIONS[step] == _RESET:
                # Started over with today's schema: the later steps are in it already.
                _drop_everything(conn)
                _create(conn)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                break
            for statement in _statements(MIGRATIONS[step]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {step}")
    check_tables(conn, path)


def _create(conn: sqlite3.Connection) -> None:
    for statement in _statements(_SCHEMA):
        conn.execute(statement)


def _drop_everything(conn: sqlite3.Connection) -> None:
    # Virtual tables first: dropping one drops its shadow tables with it.
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%' "
        "ORDER BY length(name) DESC"
    ).fetchall():
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall():
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (none of ours holds a ';' inside a string)."""
    return [s.strip() for s in script.split(";") if s.strip()]
