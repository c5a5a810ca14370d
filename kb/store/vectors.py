"""The passages' vectors for search by meaning (kb/meaning), and which note version each
note's vectors come from. Vectors are opaque bytes here: kb/meaning packs them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import NamedTuple


class PendingNote(NamedTuple):
    note_id: int
    hash: str


class PassageRow(NamedTuple):
    note_id: int
    position: int
    start: int
    end: int
    heading: str
    vector: bytes


class StoredPassage(NamedTuple):
    start: int
    end: int
    heading: str


_SIGNATURE_KEY = "meaning"  # the embedder's signature the stored vectors come from
_STAMP_KEY = "meaning_stamp"  # counts up with every change to the vectors


class VectorDao:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def signature(self) -> str | None:
        row = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (_SIGNATURE_KEY,)
        ).fetchone()
        return str(row[0]) if row else None

    def set_signature(self, signature: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_SIGNATURE_KEY, signature)
        )

    def stamp(self) -> int:
        """Changes whenever the stored vectors do (a cache of them is keyed by it); -1 when
        the stored stamp is not a whole number (damaged: ``stamp_damaged``), which no
        cache was ever keyed by."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (_STAMP_KEY,)).fetchone()
        if row is None:
            return 0
        try:
            return int(row[0])
        except (TypeError, ValueError):
            return -1

    def stamp_damaged(self) -> bool:
        return self.stamp() < 0

    def _bump(self) -> None:
        # A damaged stamp starts again from 1: what was kept under it is stale either way.
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            (_STAMP_KEY, max(self.stamp(), 0) + 1),
        )

    def wrong_size(self, size: int) -> list[int]:
        """The notes that have a passage whose vector is not ``size`` bytes of a blob
        (damaged: what a search cannot read)."""
        return [
            int(row[0])
            for row in self.conn.execute(
                "SELECT DISTINCT note_id FROM passages "
                "WHERE typeof(vector) != 'blob' OR length(vector) != ? ORDER BY note_id",
                (size,),
            )
        ]

    def forget(self, note_ids: Iterable[int]) -> None:
        """These notes' passages and the version they came from, dropped: they are
        embedded again by the next run."""
        ids = [(note_id,) for note_id in note_ids]
        self.conn.executemany("DELETE FROM passages WHERE note_id = ?", ids)
        self.conn.executemany("DELETE FROM embedded WHERE note_id = ?", ids)
        self._bump()

    def pending(self, limit: int) -> list[PendingNote]:
        """Notes whose vectors are missing or from an older version of the note."""
        return [
            PendingNote(int(row[0]), str(row[1]))
            for row in self.conn.execute(
                "SELECT n.id, n.hash FROM notes n LEFT JOIN embedded e ON e.note_id = n.id "
                "WHERE e.note_id IS NULL OR e.hash != n.hash ORDER BY n.id LIMIT ?",
                (limit,),
            )
        ]

    def pending_count(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM notes n LEFT JOIN embedded e ON e.note_id = n.id "
            "WHERE e.note_id IS NULL OR e.hash != n.hash"
        ).fetchone()
        return int(row[0])

    def replace(self, note_id: int, digest: str, rows: Iterable[PassageRow], failed: bool) -> None:
        """A note's passages, replaced, and the version they come from."""
        self.conn.execute("DELETE FROM passages WHERE note_id = ?", (note_id,))
        self.conn.executemany(
            "INSERT INTO passages(note_id, position, start, end, heading, vector) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [tuple(row) for row in rows],
        )
        self.conn.execute(
            "INSERT OR REPLACE INTO embedded(note_id, hash, failed) VALUES (?, ?, ?)",
            (note_id, digest, int(failed)),
        )
        self._bump()

    def clear(self) -> None:
        """Forget every vector (another embedder's, or a rebuild)."""
        self.conn.execute("DELETE FROM passages")
        self.conn.execute("DELETE FROM embedded")
        self._bump()

    def exist(self) -> bool:
        return self.conn.execute("SELECT 1 FROM passages LIMIT 1").fetchone() is not None

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM passages").fetchone()[0])

    def note_count(self) -> int:
        """Notes with vectors (of any version)."""
        row = self.conn.execute("SELECT count(DISTINCT note_id) FROM passages").fetchone()
        return int(row[0])

    def all_vectors(self, size: int | None = None) -> Iterator[tuple[int, int, bytes]]:
        """(note, position, vector) of every passage, in one order; with ``size``, only
        the vectors of that many bytes (a damaged one is left out, not read)."""
        where = "" if size is None else "WHERE typeof(vector) = 'blob' AND length(vector) = ? "
        for note_id, position, vector in self.conn.execute(
            f"SELECT note_id, position, vector FROM passages {where}ORDER BY note_id, position",
            () if size is None else (size,),
        ):
            yield int(note_id), int(position), bytes(vector)

    def passage(self, note_id: int, position: int) -> StoredPassage | None:
        row = self.conn.execute(
            "SELECT start, end, heading FROM passages WHERE note_id = ? AND position = ?",
            (note_id, position),
        ).fetchone()
        return StoredPassage(int(row[0]), int(row[1]), str(row[2])) if row else None
