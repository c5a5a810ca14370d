"""The vocabulary: every word the notes use, kept at ingest so a query can be read
without scanning the index — Chinese dictionary words to split a Chinese question into
words, Latin words for typos and partial words, and their stems for inflections.

It only grows between rebuilds: a word that leaves the last note that held it stays
until the next ``kb ingest --rebuild`` (or tokenizer change), which is harmless because a
query expanded to it finds no note by it. Keeping counts instead would cost a write per
word of every changed note.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from functools import cache
from typing import Any

_TABLE = "vocabulary"
_DDL = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} ("
    "term TEXT PRIMARY KEY, script TEXT NOT NULL, length INTEGER NOT NULL, stem TEXT"
    ") WITHOUT ROWID",
    f"CREATE INDEX IF NOT EXISTS {_TABLE}_stem ON {_TABLE}(stem) WHERE stem IS NOT NULL",
)
_META_VERSION = "vocabulary_version"
# Bump when what goes into the vocabulary changes: the next ingest fills it again.
VERSION = "1"
_STEMMER = "porter"  # zk's FTS5 uses porter too: `gpus` → gpu, `benchmarking` → benchmark


def stem(word: str) -> str:
    """The porter stem of a Latin word (imported here: only ingest and rare queries pay)."""
    return _stemmer().stemWord(word)


@cache
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: snowball's stemmers in C

    return Stemmer.Stemmer(_STEMMER)


def stemmable(word: str) -> bool:
    return len(word) >= 3 and word.isascii() and word.isalpha()


class VocabularyDao:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._seen: set[str] = set()  # words written in this run: skip them cheaply

    @property
    def written(self) -> AbstractSet[str]:
        """The words this run has written (callers skip them before building pairs)."""
        return self._seen

    # -- writing (ingest, in the store's transaction) -------------------------------

    def prepare(self) -> bool:
        """Create the table if needed; True when it must be filled from every note."""
        for statement in _DDL:
            self.conn.execute(statement)
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (_META_VERSION,)).fetchone()
        if row is not None and row[0] == VERSION:
            return False
        self.clear()
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (_META_VERSION, VERSION),
        )
        return True

    def clear(self) -> None:
        self.conn.execute(f"DELETE FROM {_TABLE}")
        self._seen.clear()

    def add(self, words: Iterable[tuple[str, str]]) -> None:
        """Record (word, script) pairs, script ``latin`` or ``cjk``."""
        new = [(w, s) for w, s in words if w not in self._seen]
        if not new:
            return
        self._seen.update(w for w, _ in new)
        self.conn.executemany(
            f"INSERT OR IGNORE INTO {_TABLE}(term, script, length, stem) VALUES (?, ?, ?, ?)",
            [(w, s, len(w), stem(w) if stemmable(w) else None) for w, s in new],
        )

    # -- reading ------------------------------------------------------------------------

    def _rows(self, sql: str, params: Iterable[object]) -> list[tuple[object, ...]]:
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a store not yet ingested by this kb
                return []
            raise

    def known(self, words: Iterable[str]) -> set[str]:
        """Which of ``words`` some note uses (or used, see the module note)."""
        wanted = list(dict.fromkeys(words))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._rows(f"SELECT term FROM {_TABLE} WHERE term IN ({marks})", chunk)
            found.update(str(r[0]) for r in rows)
        return found

    def same_stem(self, word: str) -> list[str]:
        """Other words with the stem of ``word``: its inflections in the notes."""
        if not stemmable(word):
            return []
        rows = self._rows(f"SELECT stem FROM {_TABLE} WHERE term = ?", (word,))
        word_stem = str(rows[0][0]) if rows and rows[0][0] else stem(word)
        rows = self._rows(
            f"SELECT term FROM {_TABLE} WHERE stem = ? AND term != ? ORDER BY length, term LIMIT 8",
            (word_stem, word),
        )
        return [str(r[0]) for r in rows]

    def latin_of_length(self, low: int, high: int, first: str | None) -> list[str]:
        """Latin words of ``low``..``high`` characters, starting with ``first`` if given:
        the candidates a typo is compared with."""
        if first is not None:
            rows = self._rows(
                f"SELECT term FROM {_TABLE} WHERE term >= ? AND term < ? "
                "AND script = 'latin' AND length BETWEEN ? AND ?",
                (first, first + "\U0010ffff", low, high),
            )
        else:
            rows = self._rows(
                f"SELECT term FROM {_TABLE} WHERE script = 'latin' AND length BETWEEN ? AND ?",
                (low, high),
            )
        return [str(r[0]) for r in rows]

    def completions(self, prefix: str, limit: int) -> list[str]:
        """Longer Latin words that begin with ``prefix``, shortest first."""
        rows = self._rows(
            f"SELECT term FROM {_TABLE} WHERE term > ? AND term < ? AND script = 'latin' "
            "ORDER BY length, term LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [str(r[0]) for r in rows]
