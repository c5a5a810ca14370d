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
    from kb.connections import CheckProblem, Connections, Mention, NoteRef, Related
    from kb.engines import SearchEngine
    from kb.graph import Graph
    from kb.ingest import IngestStats
    from kb.search import SearchResults

ProgressCallback = Callable[[int, int], None]


class KnowledgeBase:
    """A knowledge base folder: its settings, its notes roots and its store."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._store: Store | None = None
        self._related_cache: dict[tuple[int, int, int], list[Related]] = {}

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
            stats = Ingester(self.config, store, progress).run(paths, rebuild=rebuild)
            if rebuild:
                store.vacuum()  # give back the pages the old notes used
            return stats
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

    # -- connections ------------------------------------------------------------------

    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef:
        """A note from a path (relative to ``cwd`` or a notes root), a title or an alias."""
        from kb.connections import find_note

        roots = {root.name: root.path for root in self.config.roots}
        return find_note(self.store, ref, roots, cwd or Path.cwd(), self.config.prefixed)

    def connections(self, note: NoteRef, related_limit: int = 10) -> Connections:
        """Outgoing links, backlinks, unlinked mentions and related notes of one note."""
        from kb.connections import Connections, backlinks, outgoing

        return Connections(
            note,
            outgoing=outgoing(self.store, note.id),
            backlinks=backlinks(self.store, note.id),
            mentions=self.mentions(note.id),
            related=self.related(note.id, related_limit),
        )

    def mentions(self, note_id: int) -> list[Mention]:
        from kb.connections import mentions

        return mentions(
            self.store, self.engine(), note_id, self.note_file, self._mention_terms(note_id)
        )

    def related(self, note_id: int, limit: int = 10) -> list[Related]:
        """Related notes with reasons; cached until the store changes."""
        from kb.connections import related

        key = (note_id, limit, self.store.generation)
        if key not in self._related_cache:
            self._related_cache[key] = related(self.store, self.engine(), note_id, limit)
        return self._related_cache[key]

    def check(self) -> list[CheckProblem]:
        from kb.connections import check

        return check(self.store)

    def graph(self, with_mentions: bool = False, with_related: bool = False) -> Graph:
        """The link graph; mentions and related notes on request (they cost a query each)."""
        from kb.graph import Graph, GraphEdge, GraphNode
        from kb.text import one_line

        graph = Graph(
            [
                GraphNode(row["id"], row["path"], one_line(row["title"]))
                for row in self.store.notes()
            ]
        )
        by_path = {node.path: node.id for node in graph.nodes}
        graph.edges = [
            GraphEdge(row["source_id"], row["target_id"], row["rel"] or "link")
            for row in self.store.graph_edges()
        ]
        for node in graph.nodes:
            if with_mentions:
                graph.edges += [
                    GraphEdge(by_path[m.path], node.id, "mention") for m in self.mentions(node.id)
                ]
            if with_related:
                graph.edges += [
                    GraphEdge(node.id, by_path[r.path], "related") for r in self.related(node.id, 3)
                ]
        return graph

    def _mention_terms(self, note_id: int) -> list[str]:
        """Configured terms (``mention_terms`` in kb.yaml) that name this note."""
        terms = []
        for term, ref in self.config.mention_terms.items():
            try:
                if self.find_note(ref, cwd=self.home).id == note_id:
                    terms.append(term)
            except KbError:
                continue
        return terms

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
