"""Tags, series and categories: the names notes share, and the search filters over them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from kb.errors import UsageError
from kb.store.rows import NoteListRow, SharedTerm
from kb.store.schema import TERM_KINDS


class TermDao:
    """Reads and writes of the term tables (``tags``/``note_tags`` and their kin)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def of_note(self, kind: str, note_id: int) -> list[str]:
        """The note's own spellings, in name order."""
        table = _term_table(kind)
        return [
            row[0]
            for row in self.conn.execute(
                f"SELECT name FROM note_{table} WHERE note_id = ? ORDER BY name COLLATE NOCASE",
                (note_id,),
            )
        ]

    def counts(self, kind: str) -> list[tuple[str, int]]:
        """Every name with the number of notes that have it, in name order."""
        table = _term_table(kind)
        return [
            (row[0], row[1])
            for row in self.conn.execute(
                f"SELECT t.name, count(nt.note_id) FROM {table} t "
                f"JOIN note_{table} nt ON nt.{table}_id = t.id GROUP BY t.id ORDER BY t.name"
            )
        ]

    def by_note(self, kind: str) -> dict[int, list[str]]:
        """Every note's own spellings, in name order, in one query."""
        table = _term_table(kind)
        found: dict[int, list[str]] = {}
        for note_id, name in self.conn.execute(
            f"SELECT note_id, name FROM note_{table} ORDER BY note_id, name COLLATE NOCASE"
        ):
            found.setdefault(note_id, []).append(name)
        return found

    def notes_in_series(self, name: str) -> list[NoteListRow]:
        """The notes of a series in date order (undated last, then by path)."""
        return [
            NoteListRow(row[0], row[1], row[2], row[3], bool(row[4]), row[5])
            for row in self.conn.execute(
                "SELECT n.id, n.path, n.title, n.date, n.draft, n.word_count FROM notes n "
                "JOIN note_series ns ON ns.note_id = n.id JOIN series s ON s.id = ns.series_id "
                "WHERE s.name = ? COLLATE NOCASE ORDER BY n.date IS NULL, n.date, n.path",
                (name,),
            )
        ]

    def shared(self, kind: str, note_id: int, max_notes: int) -> list[SharedTerm]:
        """Other notes with a name this note has that at most ``max_notes`` notes share
        (a tag on every note says nothing)."""
        table = _term_table(kind)
        mine = self.conn.execute(
            f"SELECT t.id, t.name, (SELECT count(*) FROM note_{table} c WHERE c.{table}_id = t.id)"
            f" FROM note_{table} m JOIN {table} t ON t.id = m.{table}_id WHERE m.note_id = ?",
            (note_id,),
        ).fetchall()
        found: list[SharedTerm] = []
        for term_id, name, count in mine:
            if count > max_notes:
                continue
            found.extend(
                SharedTerm(row[0], name, count)
                for row in self.conn.execute(
                    f"SELECT note_id FROM note_{table} WHERE {table}_id = ? AND note_id != ?",
                    (term_id, note_id),
                )
            )
        return found

    def write(self, kind: str, per_note: Iterable[tuple[int, Iterable[str]]]) -> None:
        """Link each (note id, its names) pair, adding names not seen before."""
        table = _term_table(kind)
        per_note = [(note_id, list(names)) for note_id, names in per_note]
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


MAX_FILTER_CHARS = 4096  # PATH_MAX: a longer path, tag or name matches nothing


def filter_clause(name: str, value: str) -> tuple[str, list[object]]:
    """SQL over ``notes n`` for a query filter (tag:, series:, category:, path:, date:,
    draft:), shared by every search engine so that filters mean the same everywhere."""
    if len(value) > MAX_FILTER_CHARS:  # SQLite refuses a LIKE pattern past 50,000 bytes
        raise UsageError(
            f"the {name} filter is too long: {len(value):,} characters, where kb takes "
            f"at most {MAX_FILTER_CHARS:,}"
        )
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


def _term_table(kind: str) -> str:
    if kind not in TERM_KINDS:
        raise ValueError(f"unknown term kind {kind!r}")
    return kind
