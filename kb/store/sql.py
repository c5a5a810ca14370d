"""``kb sql``: read-only SQL over stable views of the store, for people and tools.

The tables are kb's to change between versions; the views are the documented interface
(``docs/sql.md``): ``notes``, ``links``, ``backlinks``, ``tags``, ``headings``. They are
temporary views on a read-only connection, named like the tables they stand in front of
(SQLite looks a plain name up in ``temp`` first), so ``select * from notes`` reads the
view and the tables stay reachable as ``main.notes``. Nothing can write: the connection is
read-only, ``query_only`` is on, and an authorizer refuses every action that is not a read
(an ``ATTACH`` or a ``PRAGMA`` that sets a value included).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from kb.errors import StoreError, UsageError

VIEWS = {
    "notes": """
        SELECT n.path, n.title, n.date,
            (SELECT group_concat(t.name, ', ') FROM main.note_tags t WHERE t.note_id = n.id)
                AS tags,
            n.word_count, n.draft, n.root, n.rel, n.slug, n.summary, n.size,
            n.mtime_ns, n.encoding,
            (SELECT count(*) FROM main.links l WHERE l.target_id = n.id
                AND l.source_id != n.id) AS backlinks
        FROM main.notes n""",
    "links": """
        SELECT s.path AS source, l.line, l.kind, l.target, l.anchor, l.text,
            t.path AS target_path, l.status
        FROM main.links l JOIN main.notes s ON s.id = l.source_id
        LEFT JOIN main.notes t ON t.id = l.target_id""",
    "backlinks": """
        SELECT t.path AS note, s.path AS source, l.line, l.kind, l.text
        FROM main.links l JOIN main.notes s ON s.id = l.source_id
        JOIN main.notes t ON t.id = l.target_id WHERE l.source_id != l.target_id""",
    "tags": """
        SELECT g.name AS tag, count(t.note_id) AS notes
        FROM main.tags g JOIN main.note_tags t ON t.tags_id = g.id GROUP BY g.id""",
    "headings": """
        SELECT n.path AS note, h.level, h.text, h.slug, h.line
        FROM main.headings h JOIN main.notes n ON n.id = h.note_id""",
}

_READS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
# Pragmas that only report (``PRAGMA table_info(notes)``); any other is refused.
_REPORTING_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "index_list", "index_info", "foreign_key_list"}
)


class QueryResult(NamedTuple):
    columns: list[str]
    rows: Iterator[tuple[Any, ...]]


def read_only_query(path: Path, sql: str) -> QueryResult:
    """Run one SQL statement over the views; raises UsageError for a statement that
    would write or that SQLite rejects, StoreError when there is no store."""
    if not path.is_file():
        raise StoreError(f"no store at {path}: run 'kb ingest' first")
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
        for name, body in VIEWS.items():
            conn.execute(f"CREATE TEMP VIEW {name} AS {body}")
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{path}: the store cannot be read ({exc}); run 'kb ingest --rebuild'"
        ) from None
    try:
        cursor = conn.execute(sql)
    except sqlite3.DatabaseError as exc:
        conn.close()
        message = str(exc)
        if any(word in message for word in ("not authorized", "readonly", "cannot modify")):
            raise UsageError("kb sql only reads: that statement would change the store") from None
        raise UsageError(f"SQL: {message}") from None
    except (sqlite3.Warning, ValueError) as exc:  # several statements, a NUL in the text
        conn.close()
        raise UsageError(f"SQL: {exc}") from None
    columns = [column[0] for column in cursor.description or []]
    return QueryResult(columns, _rows(conn, cursor))


def _rows(conn: sqlite3.Connection, cursor: sqlite3.Cursor) -> Iterator[tuple[Any, ...]]:
    try:
        yield from cursor
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"SQL: {exc}") from None
    finally:
        conn.close()


def _authorize(action: int, first: str | None, *_: object) -> int:
    if action in _READS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and first in _REPORTING_PRAGMAS:
        return sqlite3.SQLITE_OK  # table_info(notes): its argument is a table's name
    return sqlite3.SQLITE_DENY
