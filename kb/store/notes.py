"""Notes: their rows and texts, the names they go by, and every write of a note."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Collection, Iterable
from operator import itemgetter
from typing import Any

from kb.errors import StoreError
from kb.models import Problem
from kb.names.resolve import NoteName
from kb.store.connection import id_table
from kb.store.problems import ProblemDao
from kb.store.rows import (
    AliasRow,
    ChoiceRow,
    FileStamp,
    HeadingRow,
    ListedRow,
    NoteListRow,
    NoteRecord,
    NoteText,
    RecentRow,
    StatStamp,
)
from kb.store.schema import TERM_KINDS
from kb.store.terms import TermDao, filter_clause
from kb.words.documents import SearchDocument, described, search_document

_NOTE_COLUMNS = (
    "n.id, n.path, n.root, n.rel, n.title, n.date, n.draft, n.slug, n.hash, n.mtime_ns, "
    "n.size, n.encoding, n.word_count, n.summary, n.front_matter, n.generation"
)
_NOTE_WITH_TEXT = (
    f"SELECT {_NOTE_COLUMNS}, t.text_z, t.code_z FROM notes n "
    "LEFT JOIN note_texts t ON t.note_id = n.id"
)


# Up to this many notes are looked up by key; more are read in the date index's order.
BY_KEY_AT_MOST = 500


# kb list's orders that SQL can give with a LIMIT: newest, longest first; ties by path.
LIST_ORDERS = {
    "path": "path",
    "date": "date IS NULL, date DESC, path DESC",
    "modified": "mtime_ns DESC, path",
    "words": "word_count DESC, path",
}


class NoteDao:
    """Reads and writes of notes; a note's terms and problems are written with it."""

    def __init__(self, conn: sqlite3.Connection, terms: TermDao, problems: ProblemDao) -> None:
        self.conn = conn
        self.terms = terms
        self.problems = problems

    # -- one note -----------------------------------------------------------------------

    def by_path(self, path: str) -> NoteText | None:
        return _note_text(
            self.conn.execute(f"{_NOTE_WITH_TEXT} WHERE n.path = ?", (path,)).fetchone()
        )

    def by_id(self, note_id: int) -> NoteText | None:
        return _note_text(
            self.conn.execute(f"{_NOTE_WITH_TEXT} WHERE n.id = ?", (note_id,)).fetchone()
        )

    def aliases(self, note_id: int) -> list[AliasRow]:
        return [
            AliasRow(*row)
            for row in self.conn.execute(
                "SELECT alias, kind FROM aliases WHERE note_id = ? ORDER BY rowid", (note_id,)
            )
        ]

    def headings(self, note_id: int) -> list[HeadingRow]:
        return [
            HeadingRow(*row)
            for row in self.conn.execute(
                "SELECT level, text, slug, line FROM headings WHERE note_id = ? ORDER BY position",
                (note_id,),
            )
        ]

    def heading_slugs(self, note_id: int) -> set[str]:
        return {
            row[0]
            for row in self.conn.execute("SELECT slug FROM headings WHERE note_id = ?", (note_id,))
        }

    # -- many notes ---------------------------------------------------------------------

    def count(self, root: str | None = None) -> int:
        if root is None:
            return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        return int(
            self.conn.execute("SELECT count(*) FROM notes WHERE root = ?", (root,)).fetchone()[0]
        )

    def listing(self) -> list[NoteListRow]:
        """Every note, by path."""
        return [
            NoteListRow(row[0], row[1], row[2], row[3], bool(row[4]), row[5])
            for row in self.conn.execute(
                "SELECT id, path, title, date, draft, word_count FROM notes ORDER BY path"
            )
        ]

    def choices(self) -> list[ChoiceRow]:
        """Every note's id, title and path, by path (the rows made in C: the app lists
        100,000 of them in its command palette)."""
        rows = self.conn.execute("SELECT id, title, path FROM notes ORDER BY path")
        return list(map(ChoiceRow._make, rows))

    def name_aliases(self) -> dict[int, tuple[str, ...]]:
        """Every note's name aliases (front-matter ``aliases`` that are not URLs), by id."""
        found: dict[int, list[str]] = {}
        for note_id, alias in self.conn.execute(
            "SELECT note_id, alias FROM aliases WHERE kind = 'name' ORDER BY rowid"
        ):
            found.setdefault(note_id, []).append(alias)
        return {note_id: tuple(aliases) for note_id, aliases in found.items()}

    def listed(self, order: str = "path", limit: int = -1) -> list[ListedRow]:
        """Notes with what ``kb list`` filters and sorts on, in ``order`` (a key of
        ``LIST_ORDERS``), at most ``limit`` of them (-1: all)."""
        return [
            ListedRow(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8])
            for row in self.conn.execute(
                "SELECT id, path, root, rel, title, date, draft, word_count, mtime_ns "
                f"FROM notes ORDER BY {LIST_ORDERS[order]} LIMIT ?",
                (limit,),
            )
        ]

    def totals(self) -> tuple[int, int]:
        """How many notes, and their words."""
        row = self.conn.execute("SELECT count(*), coalesce(sum(word_count), 0) FROM notes")
        count, words = row.fetchone()
        return int(count), int(words)

    def by_year(self) -> list[tuple[str | None, int]]:
        """Notes per year of their date (None: undated), oldest first."""
        return [
            (row[0], int(row[1]))
            for row in self.conn.execute(
                "SELECT substr(date, 1, 4) AS year, count(*) FROM notes "
                "GROUP BY year ORDER BY year IS NULL, year"
            )
        ]

    def date_counts(self) -> list[tuple[str, int]]:
        """Notes per year and per month of their date (``2024``, ``2024-03``), newest first:
        what ``date:`` completes to."""
        rows = self.conn.execute(
            "SELECT substr(date, 1, 4), count(*) FROM notes WHERE date IS NOT NULL "
            "GROUP BY 1 UNION ALL "
            "SELECT substr(date, 1, 7), count(*) FROM notes WHERE length(date) >= 7 "
            "GROUP BY 1 ORDER BY 1 DESC"
        )
        return [(str(row[0]), int(row[1])) for row in rows]

    def recent(self, limit: int, modified: bool = False) -> list[RecentRow]:
        """Newest first by front-matter date (notes without a date last), or with
        ``modified`` by file time, for an empty search box."""
        # Both orders are an index's (notes_changed, notes_date): no sort of every note.
        # (SQLite sorts NULL below every date, so DESC leaves notes without one last.)
        # Files with one time (an unpacked archive, a checkout within one clock tick) are
        # in date order among themselves, not by path: by path a section's ``_index.md``
        # led a fresh clone ('_' sorts before letters). SQLite sorts only those ties.
        order = "mtime_ns DESC, date DESC, path" if modified else "date DESC, path"
        return [
            RecentRow(*row)
            for row in self.conn.execute(
                f"SELECT id, path, title, date, summary FROM notes ORDER BY {order} LIMIT ?",
                (limit,),
            )
        ]

    def titles(self, note_ids: Iterable[int]) -> dict[int, str]:
        found = {}
        for note_id in note_ids:
            row = self.conn.execute("SELECT title FROM notes WHERE id = ?", (note_id,)).fetchone()
            if row is not None:
                found[note_id] = row[0]
        return found

    def titles_and_sizes(self, note_ids: Iterable[int]) -> dict[int, tuple[str, int]]:
        """(title, word count) of each note: what search ranks a candidate by."""
        ids = list(note_ids)
        found: dict[int, tuple[str, int]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self.conn.execute(
                f"SELECT id, title, word_count FROM notes WHERE id IN ({marks})", chunk
            )
            found.update((int(r[0]), (str(r[1]), int(r[2]))) for r in rows)
        return found

    def titles_and_texts(self, note_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        """(title, text or else summary) by note id, in one query; the code is left packed."""
        ids = list(note_ids)
        marks = ", ".join("?" for _ in ids)
        rows = self.conn.execute(
            f"SELECT n.id, n.path, n.title, n.summary, t.text_z FROM notes n "
            f"LEFT JOIN note_texts t ON t.note_id = n.id WHERE n.id IN ({marks})",
            ids,
        )
        return {
            note_id: (title, unpack_text(text_z, path) or summary or "")
            for note_id, path, title, summary, text_z in rows
        }

    def dates_and_paths(self, note_ids: Iterable[int]) -> dict[int, tuple[str | None, str]]:
        wanted = set(note_ids)
        if len(wanted) <= BY_KEY_AT_MOST:  # a page of hits: by key, not a scan (9 ms)
            marks = ",".join("?" * len(wanted))
            sql = f"SELECT id, date, path FROM notes WHERE id IN ({marks})"
            return {row[0]: (row[1], row[2]) for row in self.conn.execute(sql, list(wanted))}
        return {
            row[0]: (row[1], row[2])
            for row in self.conn.execute("SELECT id, date, path FROM notes")
            if row[0] in wanted
        }

    def newest(self, note_ids: Collection[int], limit: int) -> list[int]:
        """The first ``limit`` of these notes newest first (undated last), then by path:
        the order of notes a query's filters keep with no score. Many notes are read in
        the date index's order until enough are found (a tag on 5% of 100,000 notes: a
        few thousand rows, where sorting them all in Python took 190 ms)."""
        if limit <= 0 or not note_ids:
            return []
        if len(note_ids) <= BY_KEY_AT_MOST:
            marks = ",".join("?" * len(note_ids))
            sql = f"SELECT id FROM notes WHERE id IN ({marks}) ORDER BY date DESC, path LIMIT ?"
            return [row[0] for row in self.conn.execute(sql, [*note_ids, limit])]
        wanted = note_ids if isinstance(note_ids, set | frozenset) else set(note_ids)
        found: list[int] = []
        rows = self.conn.execute("SELECT id FROM notes ORDER BY date DESC, path")
        try:
            for (note_id,) in rows:
                if note_id in wanted:
                    found.append(note_id)
                    if len(found) == limit:
                        break
        finally:
            rows.close()
        return found

    def ids_titled(self, title: str) -> set[int]:
        """Notes whose title is ``title`` (any ASCII case): they rank first."""
        return {
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM notes WHERE lower(title) = ?", (title.lower(),)
            )
        }

    def filter_ids(self, name: str, value: str) -> set[int]:
        """Notes a query filter (tag:, path:, date: ...) keeps."""
        sql, params = filter_clause(name, value)
        return {
            row[0] for row in self.conn.execute(f"SELECT n.id FROM notes n WHERE {sql}", params)
        }

    def ids_aliased(self, alias: str) -> set[int]:
        """Notes with this name alias (any ASCII case), by the alias index."""
        return {
            row[0]
            for row in self.conn.execute(
                "SELECT note_id FROM aliases WHERE alias = ? COLLATE NOCASE AND kind = 'name'",
                (alias,),
            )
        }

    def ids_of(self, paths: Iterable[str]) -> dict[str, int]:
        found = {}
        for path in paths:
            row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
            if row is not None:
                found[path] = int(row[0])
        return found

    def paths(self) -> dict[int, str]:
        """Every note's path, by id."""
        return dict(self.conn.execute("SELECT id, path FROM notes"))

    def all_ids(self) -> list[int]:
        return [int(row[0]) for row in self.conn.execute("SELECT id FROM notes ORDER BY id")]

    def duplicate_titles(self) -> list[list[str]]:
        """Paths of notes that share a title (any ASCII case), one list per title."""
        groups: dict[str, list[str]] = {}
        for title, path in self.conn.execute(
            "SELECT title, path FROM notes WHERE lower(title) IN (SELECT lower(title) "
            "FROM notes GROUP BY lower(title) HAVING count(*) > 1) ORDER BY path"
        ):
            groups.setdefault(title.casefold(), []).append(path)
        return list(groups.values())

    def names(self, note_ids: Iterable[int] | None = None) -> list[NoteName]:
        """Every name each note goes by (all notes when ``note_ids`` is None)."""
        if note_ids is None:
            rows = self.conn.execute("SELECT id, root, rel, title, slug FROM notes").fetchall()
            alias_rows = self.conn.execute("SELECT note_id, alias, kind FROM aliases").fetchall()
        else:
            ids = list(note_ids)
            if not ids:
                return []
            with id_table(self.conn, ids) as table:
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

    def search_documents(self, note_ids: Iterable[int]) -> list[tuple[int, SearchDocument]]:
        """The search documents of stored notes, exactly as ``document_of`` made them."""
        documents = []
        for note_id in note_ids:
            row = self.conn.execute(
                "SELECT n.path, n.title, t.text_z, t.code_z, n.rel, n.front_matter FROM notes n "
                "LEFT JOIN note_texts t ON t.note_id = n.id WHERE n.id = ?",
                (note_id,),
            ).fetchone()
            if row is None:
                continue
            path, title, text_z, code_z, rel, front_matter = row
            documents.append(
                (
                    note_id,
                    search_document(
                        title,
                        [a.alias for a in self.aliases(note_id) if a.kind == "name"],
                        self.terms.of_note("tags", note_id),
                        self.terms.of_note("series", note_id),
                        self.terms.of_note("categories", note_id),
                        [h.text for h in self.headings(note_id)],
                        unpack_text(text_z, path),
                        unpack_text(code_z, path),
                        described(json.loads(front_matter or "{}")),
                        rel,
                    ),
                )
            )
        return documents

    # -- what ingest compares with the files ---------------------------------------------

    def stat_stamps(self, prefix: str = "", exact: bool = False) -> dict[str, StatStamp]:
        """What a stat tells of stored notes and skipped files whose path starts with
        ``prefix`` (compared exactly: `Docs/` is not `docs/`), or with ``exact`` is
        ``prefix``: ``(path, size, mtime_ns, is_note)``, the rows as they come (a no-op
        ingest of 100,000 notes compares them all)."""
        where, params = ("path = ?", (prefix,)) if exact else (
            "substr(path, 1, ?) = ?", (len(prefix), prefix)
        )  # fmt: skip
        skipped = self.conn.execute(
            f"SELECT path, size, mtime_ns, 0 FROM skipped_files WHERE {where}", params
        ).fetchall()
        notes = self.conn.execute(
            f"SELECT path, size, mtime_ns, 1 FROM notes WHERE {where}", params
        ).fetchall()
        # Keyed in C (map, zip): a generator here took 0.17 s for 100,000 notes.
        stamps = dict(zip(map(itemgetter(0), skipped), skipped, strict=True))
        stamps.update(zip(map(itemgetter(0), notes), notes, strict=True))  # a note wins
        return stamps

    def file_stamps(self, paths: Iterable[str]) -> dict[str, FileStamp]:
        """The stamps of stored notes and skipped files at ``paths`` (those a stat found
        changed or gone), with the note's id and hash."""
        stamps = {}
        for path in paths:
            row = self.conn.execute(
                "SELECT id, size, mtime_ns, hash FROM notes WHERE path = ?", (path,)
            ).fetchone()
            if row is None:
                row = self.conn.execute(
                    "SELECT NULL, size, mtime_ns, '' FROM skipped_files WHERE path = ?", (path,)
                ).fetchone()
            if row is not None:
                stamps[path] = FileStamp(*row)
        return stamps

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

    # -- writes (inside a transaction) ---------------------------------------------------

    def write(self, records: list[NoteRecord], generation: int) -> list[int]:
        """Insert or replace notes by path, with their tags, aliases, headings and links."""
        if not records:
            return []
        ids = self._upsert_rows(records, generation)
        self._delete_children(ids)
        for kind in TERM_KINDS:
            self.terms.write(
                kind,
                (
                    (note_id, getattr(r.parsed, kind))
                    for r, note_id in zip(records, ids, strict=True)
                ),
            )
        written = list(zip(ids, (r.parsed for r in records), strict=True))
        # Plain executemany: sqlite-utils' insert_all built a dict per row (and cost
        # 110 ms to import), the main process's share of a full ingest.
        self.conn.executemany(
            "INSERT INTO aliases(note_id, alias, kind) VALUES (?, ?, ?)",
            [
                (note_id, alias, kind)
                for note_id, note in written
                for kind, values in (("name", note.name_aliases), ("url", note.url_aliases))
                for alias in values
            ],
        )
        self.conn.executemany(
            "INSERT INTO headings(note_id, position, level, text, slug, line) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (note_id, position, h.level, h.text, h.slug, h.line)
                for note_id, note in written
                for position, h in enumerate(note.headings)
            ],
        )
        self.conn.executemany(
            "INSERT INTO links(source_id, target, anchor, kind, rel, text, line) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (note_id, link.target, link.anchor, link.kind, link.rel, link.text, link.line)
                for note_id, note in written
                for link in note.links
            ],
        )
        for record in records:
            self.problems.replace(record.path, record.parsed.problems)
        self.conn.executemany(
            "DELETE FROM skipped_files WHERE path = ?", [(r.path,) for r in records]
        )
        return ids

    def _upsert_rows(self, records: list[NoteRecord], generation: int) -> list[int]:
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
            [(note_id, *packed_texts(r)) for note_id, r in zip(ids, records, strict=True)],
        )
        return ids

    def _delete_children(self, ids: list[int]) -> None:
        params = [(i,) for i in ids]
        for table in ("note_tags", "note_series", "note_categories", "aliases", "headings"):
            self.conn.executemany(f"DELETE FROM {table} WHERE note_id = ?", params)
        self.conn.executemany("DELETE FROM links WHERE source_id = ?", params)

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """The file's stamp changed but its content did not."""
        self.conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def move(
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
        return str(old)

    def remove(self, paths: Iterable[str], generation: int) -> int:
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
        self.problems.replace(path, problems)
        return was_note is not None


def pack_text(text: str) -> bytes:
    """Note text is kept compressed: it is read only for snippets, and halving it keeps
    the database under twice the size of the notes."""
    return zlib.compress(text.encode("utf-8"), 6)


def packed_texts(record: NoteRecord) -> tuple[bytes, bytes]:
    """The note's text and code as stored: packed by the parse worker when it could."""
    if record.packed is not None:
        return record.packed
    return pack_text(record.parsed.text), pack_text(record.parsed.code)


def unpack_text(blob: bytes | None, path: str = "") -> str:
    """The text ``pack_text`` stored; ``path`` names the note when it is damaged."""
    try:
        return zlib.decompress(blob).decode("utf-8") if blob else ""
    except (zlib.error, UnicodeDecodeError) as exc:
        raise StoreError(
            f"the stored text of {path or 'a note'} is damaged ({exc}); "
            "'kb ingest --rebuild' recreates the store"
        ) from None


def _note_text(row: Any) -> NoteText | None:
    """A note row with ``text`` and ``code`` unpacked from their packed columns."""
    if row is None:
        return None
    (
        note_id, path, root, rel, title, date, draft, slug, hash_, mtime_ns, size,
        encoding, word_count, summary, front_matter, generation, text_z, code_z,
    ) = row  # fmt: skip
    return NoteText(
        note_id, path, root, rel, title, date, bool(draft), slug, hash_, mtime_ns, size,
        encoding, word_count, summary, front_matter, generation,
        text=unpack_text(text_z, path), code=unpack_text(code_z, path),
    )  # fmt: skip
