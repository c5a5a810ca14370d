"""``kb sql``: read-only SQL over stable views of the store, for people and tools.

The tables are kb's to change between versions; the views are the documented interface
(``docs/sql.md``): ``notes``, ``links``, ``backlinks``, ``tags``, ``headings``. They are
temporary views on a read-only connection, named like the tables they stand in front of
(SQLite looks a plain name up in ``temp`` first), so ``select * from notes`` reads the
view and the tables stay reachable as ``main.notes``. Nothing can write: the connection is
read-only, ``query_only`` is on, and an authorizer refuses every action that is not a read
(an ``ATTACH`` or a ``PRAGMA`` that sets a value included).

A query is bounded: it may run ``seconds`` inside SQLite (a progress handler stops it, and
lets Ctrl-C through: SQLite otherwise never returns to Python), print ``max_rows`` rows
and MAX_RESULT_BYTES of text; past a bound the rows end with a KbError saying which.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from kb.errors import KbError, StoreError, UsageError

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
# Pragmas that only report (``PRAGMA table_info(notes)``, ``pragma_table_info('notes')``),
# whatever their argument; any other is refused.
_REPORTING_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "function_list",
        "pragma_list",
        "collation_list",
        "module_list",
        "database_list",
        "compile_options",
    }
)
# Pragmas that report when given no argument (``pragma_user_version``) and set with one.
_READING_PRAGMAS = frozenset(
    {"user_version", "schema_version", "application_id", "page_count", "page_size", "encoding"}
)
# SQLite reports reading the schema for a pragma function (``pragma_table_info``) as an
# update of these columns; nothing is written (the connection is read-only and
# ``writable_schema``, which alone would let sqlite_master change, is a refused pragma).
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master"})
# What SQLite says when one of the three locks holds.
_REFUSALS = ("not authorized", "readonly", "cannot modify", "may not be modified")
DEFAULT_SECONDS = 5.0
DEFAULT_MAX_ROWS = 100_000
# The text and blobs of a result, summed; also the most one value may hold (SQLite's length
# limit), so that printf('%.*c', 1e9, 'x') fails at once instead of taking a gigabyte.
MAX_RESULT_BYTES = 64 * 1024**2
_STEPS_BETWEEN_CHECKS = 10_000  # SQLite instructions between two looks at the clock


class QueryResult(NamedTuple):
    columns: list[str]
    # Past a bound (time, rows, bytes) the rows end with a KbError saying which; Ctrl-C
    # ends them with KeyboardInterrupt.
    rows: Iterator[tuple[Any, ...]]


class _Clock:
    """The time a query has spent inside SQLite (not while its rows wait to be printed),
    checked by SQLite's progress handler, which also lets Ctrl-C stop the query."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self.started = 0.0
        self.out_of_time = False

    def start(self) -> None:
        self.started = time.monotonic()

    def stop(self) -> None:
        self.spent += time.monotonic() - self.started

    def check(self) -> int:
        """SQLite's progress handler: nonzero stops the query."""
        try:
            if self.seconds and self.spent + time.monotonic() - self.started > self.seconds:
                self.out_of_time = True
                return 1
            return 0
        except KeyboardInterrupt:  # Ctrl-C: the query stops, and says so (stopped)
            return 1

    def stopped(self, exc: sqlite3.Error) -> BaseException | None:
        """What a stopped query raises instead of SQLite's "interrupted"."""
        if "interrupted" not in str(exc):
            return None
        if self.out_of_time:
            return KbError(
                f"SQL: stopped after {self.seconds:g} s (sql_time_limit in kb.yaml); "
                "add a LIMIT or a narrower WHERE, or raise the setting"
            )
        return KeyboardInterrupt()


def read_only_query(
    path: Path, sql: str, seconds: float = DEFAULT_SECONDS, max_rows: int = DEFAULT_MAX_ROWS
) -> QueryResult:
    """Run one SQL statement over the views; raises UsageError for a statement that
    would write or that SQLite rejects, StoreError when there is no store. ``seconds``
    and ``max_rows`` bound the query (0: no bound)."""
    if not path.is_file():
        raise StoreError(f"no store at {path}: run 'kb ingest' first")
    clock = _Clock(seconds)
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
        for name, body in VIEWS.items():
            conn.execute(f"CREATE TEMP VIEW {name} AS {body}")
        conn.execute("PRAGMA query_only = ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_RESULT_BYTES)
        conn.set_authorizer(_authorize)
        conn.set_progress_handler(clock.check, _STEPS_BETWEEN_CHECKS)
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{path}: the store cannot be read ({exc}); run 'kb ingest --rebuild'"
        ) from None
    try:
        clock.start()
        cursor = conn.execute(sql)
        clock.stop()
    except sqlite3.DatabaseError as exc:
        conn.close()
        stopped = clock.stopped(exc)
        if stopped is not None:
            raise stopped from None
        message = str(exc)
        if any(word in message for word in _REFUSALS):
            raise UsageError("kb sql only reads: that statement would change the store") from None
        raise UsageError(f"SQL: {message}") from None
    except (sqlite3.Warning, ValueError) as exc:  # several statements, a NUL in the text
        conn.close()
        raise UsageError(f"SQL: {exc}") from None
    columns = [column[0] for column in cursor.description or []]
    return QueryResult(columns, _rows(conn, cursor, clock, max_rows))


def _rows(
    conn: sqlite3.Connection, cursor: sqlite3.Cursor, clock: _Clock, max_rows: int
) -> Iterator[tuple[Any, ...]]:
    count = size = 0
    try:
        while True:
            clock.start()
            row = cursor.fetchone()
            clock.stop()
            if row is None:
                return
            size += sum(len(value) for value in row if isinstance(value, str | bytes))
            if size > MAX_RESULT_BYTES:
                raise KbError(
                    f"SQL: stopped after {count:,} rows: the result holds more than "
                    f"{MAX_RESULT_BYTES // 1024**2} MB of text; choose fewer columns or rows"
                )
            if max_rows and count == max_rows:
                raise KbError(
                    f"SQL: stopped after {max_rows:,} rows (sql_max_rows in kb.yaml); "
                    "add a LIMIT, or raise the setting"
                )
            count += 1
            yield row
    except sqlite3.DatabaseError as exc:
        stopped = clock.stopped(exc)
        if stopped is not None:
            raise stopped from None
        raise UsageError(f"SQL: {exc}") from None
    finally:
        conn.close()


def _authorize(action: int, first: str | None, second: str | None, *_: object) -> int:
    if action in _READS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and first in _REPORTING_PRAGMAS:
        return sqlite3.SQLITE_OK  # table_info(notes): its argument is a table's name
    if action == sqlite3.SQLITE_PRAGMA and first in _READING_PRAGMAS and second is None:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and first in _SCHEMA_TABLES:
        return sqlite3.SQLITE_OK  # a pragma function's schema lookup (_SCHEMA_TABLES)
    return sqlite3.SQLITE_DENY
