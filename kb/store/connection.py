"""Opening the database, transactions, the meta table, and database errors as StoreErrors."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar, cast

from kb.errors import StoreError

T = TypeVar("T")


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
    return conn


def _reader(path: Path) -> sqlite3.Connection:
    # Each thread has its own reader; the one that closes it at the end may be another.
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


def telling_store_errors(part: T, path: Path) -> T:
    """``part`` with each method call's database errors turned into StoreErrors that tell
    their cause (``store_errors``): how the facade hands out its named parts."""

    class Telling:
        def __getattr__(self, name: str) -> object:
            found = getattr(part, name)
            if not callable(found):
                return found

            @functools.wraps(found)
            def call(*args: object, **kwargs: object) -> object:
                with store_errors(path):
                    return found(*args, **kwargs)

            return call

    return cast(T, Telling())


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``), rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        # SQLite may have rolled back already (disk full does): a second ROLLBACK
        # would fail and hide the real cause.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def id_table(conn: sqlite3.Connection, ids: list[int]) -> Iterator[str]:
    """A temporary table of note ids, for ``IN (SELECT id FROM ...)`` over many ids."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS kb_ids (id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM kb_ids")
    conn.executemany("INSERT OR IGNORE INTO kb_ids(id) VALUES (?)", [(i,) for i in ids])
    try:
        yield "temp.kb_ids"
    finally:
        conn.execute("DELETE FROM kb_ids")


class MetaDao:
    """The meta table: the store's generation, its id and settings kept by key."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self.conn = conn
        self.path = path

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
        return self.get("store_id") or ""

    def next_generation(self) -> int:
        generation = self.generation + 1
        self.set("generation", str(generation))
        return generation

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def get_many(self, *keys: str) -> list[str | None]:
        """The values of ``keys`` read in one statement (one snapshot), None where unset."""
        found = dict(
            self.conn.execute(
                f"SELECT key, value FROM meta WHERE key IN ({', '.join('?' for _ in keys)})",
                keys,
            ).fetchall()
        )
        return [found.get(key) for key in keys]

    def delete(self, *keys: str) -> None:
        self.conn.execute(f"DELETE FROM meta WHERE key IN ({', '.join('?' for _ in keys)})", keys)

    def set(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            # The same value is not written again: a no-op ingest then commits nothing.
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value "
            "WHERE value IS NOT excluded.value",
            (key, value),
        )
