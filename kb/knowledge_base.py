"""The facade: the one object the CLI, the TUI and the tests construct to use kb."""

from __future__ import annotations

from pathlib import Path

from kb.config import Config, load_config
from kb.ingest import Ingester, IngestStats, ProgressCallback, ingest_lock
from kb.locations import find_knowledge_base
from kb.store import Store


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
        with ingest_lock(self.config, lock_wait):
            store = Store.open(self.config.store_path, create=True)
            try:
                return Ingester(self.config, store, progress).run(paths, rebuild=rebuild)
            finally:
                store.close()
                self._reset_reader()

    def ingest_file(self, path: Path) -> IngestStats:
        """Refresh one note file (the editing loop calls this after ``$EDITOR`` returns)."""
        return self.ingest([path])

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
