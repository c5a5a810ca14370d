"""The facade: the one object the CLI, the TUI and the tests construct to use kb."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kb.config import Config, load_config
from kb.errors import KbError, StoreError
from kb.locations import find_knowledge_base
from kb.store import Store

if TYPE_CHECKING:
    from kb.engines import SearchEngine
    from kb.ingest import IngestStats
    from kb.search import SearchResults

ProgressCallback = Callable[[int, int], None]


class KnowledgeBase:
    """A knowledge base folder: its settings, its notes roots and its store."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._store: Store | None = None

    @classmethod
    def open(cls, home: Path | str | None = None, cwd: Path | None = None) -> KnowledgeBase:
        """Find the knowledge base by the README's rules and read its settings."""
        return cls(load_config(find_knowledge_base(home, cwd)))

    @property
    def home(self) -> Path:
        return self.config.home

    @property
    def store(self) -> Store:
        """The store, read-only: searching and browsing never write."""
        if self._store is None:
            self._store = Store.open(self.config.store_path, create=False)
        return self._store

    def ingest(
        self,
        paths: list[Path] | None = None,
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        lock_wait: float | None = None,
    ) -> IngestStats:
        """Bring the store up to date with the notes (all roots, or only ``paths``)."""
        from kb.ingest import ingest_lock

        with ingest_lock(self.config, lock_wait):
            self._reset_reader()
            try:
                return self._ingest_locked(paths, rebuild, progress)
            except (StoreError, sqlite3.DatabaseError):
                if not rebuild:
                    raise
            # Starting over must work whatever state the database is in: remove it.
            self._delete_store_files()
            return self._ingest_locked(paths, rebuild, progress)

    def _ingest_locked(
        self, paths: list[Path] | None, rebuild: bool, progress: ProgressCallback | None
    ) -> IngestStats:
        from kb.ingest import Ingester

        store = Store.open(self.config.store_path, create=True)
        try:
            return Ingester(self.config, store, progress).run(paths, rebuild=rebuild)
        finally:
            store.close()

    def _delete_store_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.config.store_path}{suffix}").unlink(missing_ok=True)

    def ingest_file(self, path: Path) -> IngestStats:
        """Refresh one note file (the editing loop calls this after ``$EDITOR`` returns)."""
        return self.ingest([path])

    def engine(self) -> SearchEngine:
        """The search engine named by the ``engine`` setting."""
        if self.config.engine == "fts5":
            from kb.engines.fts5 import Fts5Engine

            return Fts5Engine(self.store.conn)
        raise KbError(f"unknown search engine {self.config.engine!r} in kb.yaml (known: fts5)")

    def search(self, text: str, limit: int = 20, prefix: bool = False) -> SearchResults:
        """Search the notes with kb's query language.

        With ``prefix`` (search as you type) an unfinished last word of 3 or more
        characters counts as a prefix. Raises QuerySyntaxError for bad syntax.
        """
        from kb.search import run_search

        return run_search(self.store, self.engine(), text, limit=limit, prefix_last=prefix)

    def note_file(self, root: str, rel: str) -> Path:
        """The file of a note, from its root's name and its path inside the root."""
        for notes_root in self.config.roots:
            if notes_root.name == root:
                return notes_root.path / rel
        raise KbError(f"notes root {root!r} is no longer in kb.yaml: run 'kb ingest'")

    def _reset_reader(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def close(self) -> None:
        self._reset_reader()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
