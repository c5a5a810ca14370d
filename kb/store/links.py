"""Links between notes: as written, as resolved, and what they say about the notes."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator

from kb.names.resolve import LinkToResolve
from kb.store.rows import (
    BacklinkRow,
    CoLinked,
    GraphEdgeRow,
    LinkProblemRow,
    LinkRow,
    OutgoingLinkRow,
)

_RESOLVE_COLUMNS = "id, source_id, target, anchor, kind"
_LINK_COLUMNS = "l.id, l.source_id, l.target, l.anchor, l.kind, l.rel, l.text, l.line, " + (
    "l.target_id, l.status"
)


class LinkDao:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def of_note(self, note_id: int) -> list[LinkRow]:
        """The note's links in the order they are written."""
        return [
            LinkRow(*row)
            for row in self.conn.execute(
                f"SELECT {_LINK_COLUMNS} FROM links l WHERE l.source_id = ? ORDER BY l.line, l.id",
                (note_id,),
            )
        ]

    def outgoing(self, note_id: int) -> list[OutgoingLinkRow]:
        """The note's links with the notes they lead to."""
        return [
            OutgoingLinkRow(*row)
            for row in self.conn.execute(
                f"SELECT {_LINK_COLUMNS}, t.path, t.title FROM links l "
                "LEFT JOIN notes t ON t.id = l.target_id WHERE l.source_id = ? "
                "ORDER BY l.line, l.id",
                (note_id,),
            )
        ]

    def backlinks(self, note_id: int) -> list[BacklinkRow]:
        """Links from other notes to this one: one query."""
        return [
            BacklinkRow(*row)
            for row in self.conn.execute(
                f"SELECT {_LINK_COLUMNS}, s.path, s.title FROM links l "
                "JOIN notes s ON s.id = l.source_id WHERE l.target_id = ? AND l.source_id != ? "
                "ORDER BY s.path, l.line",
                (note_id, note_id),
            )
        ]

    def neighbours(self, note_id: int) -> tuple[set[int], set[int]]:
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

    def co_linked(self, note_id: int) -> list[CoLinked]:
        """Notes that link to the same notes as this one or are linked from the same notes
        (coupling and co-citation)."""
        targets, sources = self.neighbours(note_id)
        found: list[CoLinked] = []
        for target in targets:
            others = [
                row[0]
                for row in self.conn.execute(
                    "SELECT DISTINCT source_id FROM links WHERE target_id = ?", (target,)
                )
            ]
            found.extend(CoLinked(o, target, len(others)) for o in others if o != note_id)
        for source in sources:
            others = [
                row[0]
                for row in self.conn.execute(
                    "SELECT DISTINCT target_id FROM links WHERE source_id = ? "
                    "AND target_id IS NOT NULL",
                    (source,),
                )
            ]
            found.extend(CoLinked(o, source, len(others)) for o in others if o != note_id)
        return found

    def problems(self) -> list[LinkProblemRow]:
        """Broken links, links to missing headings and ambiguous ones, by note and line."""
        return [
            LinkProblemRow(*row)
            for row in self.conn.execute(
                "SELECT n.path, l.line, l.kind, l.target, l.anchor, l.status, t.path "
                "FROM links l JOIN notes n ON n.id = l.source_id LEFT JOIN notes t "
                "ON t.id = l.target_id "
                "WHERE l.status IN ('broken', 'missing-file', 'missing-heading', 'ambiguous') "
                "ORDER BY n.path, l.line"
            )
        ]

    def graph_edges(self) -> list[GraphEdgeRow]:
        return list(self.each_graph_edge())

    def each_graph_edge(self) -> Iterator[GraphEdgeRow]:
        """As ``graph_edges``, one at a time: a graph may have millions (``kb graph``
        writes each as it comes)."""
        rows = self.conn.execute(
            "SELECT DISTINCT source_id, target_id, kind, rel FROM links "
            "WHERE target_id IS NOT NULL AND target_id != source_id "
            "ORDER BY source_id, target_id"
        )
        return map(GraphEdgeRow._make, rows)

    def linked_ids(self) -> set[int]:
        """Notes with a resolved link to or from another note."""
        found: set[int] = set()
        for source, target in self.conn.execute(
            "SELECT DISTINCT source_id, target_id FROM links "
            "WHERE target_id IS NOT NULL AND target_id != source_id"
        ):
            found.update((source, target))
        return found

    def status_counts(self) -> dict[str, int]:
        """How many links have each status (resolved, broken, external, ...)."""
        return {
            row[0]: int(row[1])
            for row in self.conn.execute("SELECT status, count(*) FROM links GROUP BY status")
        }

    def note_link_counts(self, note_ids: Iterable[int]) -> dict[int, int]:
        """How many links to other notes each of ``note_ids`` holds (hub pages hold many)."""
        ids = list(note_ids)
        counts: dict[int, int] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self.conn.execute(
                f"SELECT source_id, count(*) FROM links WHERE source_id IN ({marks}) "
                "AND target_id IS NOT NULL GROUP BY source_id",
                chunk,
            )
            counts.update((int(r[0]), int(r[1])) for r in rows)
        return counts

    def has_unresolved(self) -> bool:
        """Links never resolved (a store from before link resolution existed)."""
        row = self.conn.execute("SELECT 1 FROM links WHERE status = 'new' LIMIT 1").fetchone()
        return row is not None

    def to_resolve(
        self, changed: Iterable[int] | None, keys: Iterable[str] = (), link_ids: Iterable[int] = ()
    ) -> list[LinkToResolve]:
        """Links whose target may have changed: from or to ``changed`` notes, never
        resolved ones, those looking up any of ``keys`` and ``link_ids``; each found by an
        index, so the work grows with the change, not with the notes. All links when
        ``changed`` is None."""
        if changed is None:
            return [link for chunk in self.all_to_resolve() for link in chunk]
        found = set(link_ids)
        for note_id in set(changed):
            found.update(self._ids("SELECT id FROM links WHERE source_id = ?", note_id))
            found.update(self._ids("SELECT id FROM links WHERE target_id = ?", note_id))
        found.update(self._ids("SELECT id FROM links WHERE status = 'new'"))
        # A missing file is looked for on disk, where the store sees no change: tried again
        # on every ingest (few, and each found by a partial index).
        found.update(self._ids("SELECT id FROM links WHERE status = 'missing-file'"))
        for key in {key_hash(k) for k in keys}:
            found.update(self._ids("SELECT id FROM links WHERE target_key = ?", key))
        wanted = sorted(found)
        rows = []
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows += self.conn.execute(
                f"SELECT {_RESOLVE_COLUMNS} FROM links WHERE id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
        return [LinkToResolve(*row) for row in rows]

    def all_to_resolve(self, chunk: int = 20_000) -> Iterator[list[LinkToResolve]]:
        """Every link, in chunks by id, so that a million links are never all in memory."""
        last = 0
        while True:
            rows = self.conn.execute(
                f"SELECT {_RESOLVE_COLUMNS} FROM links WHERE id > ? ORDER BY id LIMIT ?",
                (last, chunk),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [LinkToResolve(*row) for row in rows]

    def targeting(self, note_ids: Iterable[int]) -> set[int]:
        """Links that lead to these notes (before they are removed: then they lead nowhere)."""
        found: set[int] = set()
        for note_id in set(note_ids):
            found.update(self._ids("SELECT id FROM links WHERE target_id = ?", note_id))
        return found

    def _ids(self, sql: str, *params: object) -> list[int]:
        return [row[0] for row in self.conn.execute(sql, params)]

    def set_targets(self, updates: Iterable[tuple[int | None, str, str, int]]) -> None:
        """(target_id, status, target_key, link id) for each re-resolved link."""
        self.conn.executemany(
            "UPDATE links SET target_id = ?, status = ?, target_key = ? WHERE id = ?",
            [(target, status, key_hash(key), link) for target, status, key, link in updates],
        )


def key_hash(key: str) -> int:
    """A link's lookup key as a 63-bit number: an index of these is a third the size of
    the strings, and a collision only means one link more is resolved again."""
    if not key:
        return 0
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest()) >> 1
