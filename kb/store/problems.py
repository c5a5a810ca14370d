"""Warnings about notes and about files that could not become notes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from kb.models import Problem
from kb.store.rows import ProblemRow


class ProblemDao:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def all(self) -> list[ProblemRow]:
        return [
            ProblemRow(*row)
            for row in self.conn.execute(
                "SELECT path, kind, message, line FROM problems ORDER BY path, line"
            )
        ]

    def of(self, path: str) -> list[ProblemRow]:
        return [
            ProblemRow(*row)
            for row in self.conn.execute(
                "SELECT path, kind, message, line FROM problems WHERE path = ? ORDER BY line",
                (path,),
            )
        ]

    def replace(self, path: str, problems: Iterable[Problem]) -> None:
        self.conn.execute("DELETE FROM problems WHERE path = ?", (path,))
        self.conn.executemany(
            "INSERT INTO problems(path, kind, message, line) VALUES (?, ?, ?, ?)",
            [(path, p.kind, p.message, p.line) for p in problems],
        )

    def clear(self, prefix: str, kinds: Iterable[str]) -> None:
        """Forget problems of these kinds under a path prefix (a scan finds them again)."""
        kinds = list(kinds)
        marks = ", ".join("?" for _ in kinds)
        self.conn.execute(
            f"DELETE FROM problems WHERE substr(path, 1, ?) = ? AND kind IN ({marks})",
            (len(prefix), prefix, *kinds),
        )
