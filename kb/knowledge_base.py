"""The facade: the one object the CLI, the TUI and the tests construct to use kb."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from kb.config import CONFIG_NAME, Config, load_config
from kb.errors import KbError, StoreError, UsageError, os_error_message
from kb.locations import find_knowledge_base
from kb.store import Store, check_location, store_errors

if TYPE_CHECKING:
    from kb.browse import Follow, NotePage, NoteSummary, TagNode
    from kb.connections import CheckProblem, Connections, Mention, NoteRef, Related
    from kb.engines import SearchEngine
    from kb.graph import Graph
    from kb.ingest import IngestStats
    from kb.links import LinkIndex
    from kb.search import SearchResults

ProgressCallback = Callable[[int, int], None]
P = ParamSpec("P")
R = TypeVar("R")


def _store_errors(
    method: Callable[Concatenate[KnowledgeBase, P], R],
) -> Callable[Concatenate[KnowledgeBase, P], R]:
    """Database errors in a reading method become StoreErrors that tell their cause."""

    @functools.wraps(method)
    def wrapper(self: KnowledgeBase, *args: P.args, **kwargs: P.kwargs) -> R:
        with store_errors(self.config.store_path):
            return method(self, *args, **kwargs)

    return wrapper


class KnowledgeBase:
    """A knowledge base folder: its settings, its notes roots and its store."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._store: Store | None = None
        self._related_cache: dict[tuple[int, int, int], list[Related]] = {}
        self._links_cache: tuple[int, LinkIndex] | None = None
        self._engine_cache: tuple[tuple[str, int], SearchEngine] | None = None

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
        engine: str | None = None,
    ) -> IngestStats:
        """Bring the store up to date with the notes (all roots, or only ``paths``).

        ``engine`` (with ``rebuild``) switches the search engine: ``fts5`` or ``whoosh``."""
        if engine is not None and not rebuild:
            raise UsageError("--engine takes effect with --rebuild")
        from kb.ingest import ingest_lock

        path = self.config.store_path
        check_location(path)
        try:
            with ingest_lock(self.config, lock_wait):
                self._reset_reader()
                _remove_database(_beside(path))  # left by a rebuild that was killed
                if rebuild:
                    return self._rebuild(progress, engine)
                return self._ingest_locked(path, paths, False, progress, None)
        except OSError as exc:
            raise StoreError(os_error_message(exc)) from exc

    def _rebuild(self, progress: ProgressCallback | None, engine: str | None) -> IngestStats:
        """Build a new store beside the old one and swap it in only when it is complete:
        a rebuild that fails (disk full, Ctrl-C) leaves the old store as it was. The old
        store is never opened for writing, so a damaged one is no obstacle."""
        path = self.config.store_path
        fresh = _beside(path)
        try:
            stats = self._ingest_locked(fresh, None, True, progress, engine or _chosen_engine(path))
            # The old store's journal files must not meet the new store: remove them first.
            _remove_database(path, main=False)
            fresh.replace(path)  # atomic: readers see the old store or the new one
        except BaseException:
            _remove_database(fresh)
            raise
        return stats

    def _ingest_locked(
        self,
        path: Path,
        paths: list[Path] | None,
        rebuild: bool,
        progress: ProgressCallback | None,
        engine: str | None,
    ) -> IngestStats:
        from kb.ingest import Ingester

        store = Store.open(path, create=True)
        try:
            with store_errors(path):
                if engine is not None:
                    store.set_meta("engine", engine)  # --engine on a rebuild: the new choice
                name = self._engine_name(store)
                ingester = Ingester(self.config, store, progress, engine=name)
                stats = ingester.run(paths, rebuild=rebuild)
                if name == "whoosh":
                    from kb.engines.whoosh import WhooshIndex

                    # After the store's commit: a crash between the two leaves the index
                    # behind, and the next ingest catches it up from the store's generations.
                    WhooshIndex(self.config.index_dir).sync(store, ingester.streams, rebuild)
                if rebuild:
                    store.seal()
            return stats
        finally:
            store.close()

    def _engine_name(self, store: Store) -> str:
        """kb.yaml's `engine` when set, else the one chosen with `--engine`, else FTS5."""
        name = str(self.config.raw.get("engine") or store.get_meta("engine") or "fts5")
        if name not in ("fts5", "whoosh"):
            raise KbError(f"unknown search engine {name!r} (known: fts5, whoosh)")
        return name

    def ingest_file(self, path: Path) -> IngestStats:
        """Refresh one note file (the editing loop calls this after ``$EDITOR`` returns)."""
        return self.ingest([path])

    @_store_errors
    def engine(self) -> SearchEngine:
        """The search engine in use (see ``_engine_name``), kept while the store is
        unchanged: whoosh opens its index once, not on every keystroke."""
        key = (self._engine_name(self.store), self.store.generation)
        if self._engine_cache is None or self._engine_cache[0] != key:
            if key[0] == "whoosh":
                from kb.engines.whoosh import WhooshEngine

                engine: SearchEngine = WhooshEngine(self.config.index_dir, self.store)
            else:
                from kb.engines.fts5 import Fts5Engine

                engine = Fts5Engine(self.store.conn)
            self._engine_cache = (key, engine)
        return self._engine_cache[1]

    @_store_errors
    def search(self, text: str, limit: int = 20, prefix: bool = False) -> SearchResults:
        """Search the notes with kb's query language.

        With ``prefix`` (search as you type) an unfinished last word of 3 or more
        characters counts as a prefix. Raises QuerySyntaxError for bad syntax.
        """
        from kb.search import run_search

        return run_search(self.store, self.engine(), text, limit=limit, prefix_last=prefix)

    # -- connections ------------------------------------------------------------------

    @_store_errors
    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef:
        """A note from a path (relative to ``cwd`` or a notes root), a title or an alias."""
        from kb.connections import find_note

        roots = {root.name: root.path for root in self.config.roots}
        return find_note(self.store, ref, roots, cwd or Path.cwd(), self.config.prefixed)

    @_store_errors
    def note_ref(self, note_id: int) -> NoteRef:
        from kb.connections import NoteRef
        from kb.text import clean_line

        row = self.store.note_by_id(note_id)
        if row is None:
            raise KbError(f"note {note_id} is no longer in the store")
        return NoteRef(note_id, row["path"], clean_line(row["title"]))

    @_store_errors
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

    @_store_errors
    def mentions(self, note_id: int) -> list[Mention]:
        from kb.connections import mentions

        return mentions(
            self.store, self.engine(), note_id, self.note_file, self._mention_terms(note_id)
        )

    @_store_errors
    def related(self, note_id: int, limit: int = 10) -> list[Related]:
        """Related notes with reasons; cached until the store changes."""
        from kb.connections import related

        key = (note_id, limit, self.store.generation)
        if key not in self._related_cache:
            self._related_cache[key] = related(self.store, self.engine(), note_id, limit)
        return self._related_cache[key]

    @_store_errors
    def check(self) -> list[CheckProblem]:
        from kb.connections import check

        return check(self.store)

    @_store_errors
    def graph(self, with_mentions: bool = False, with_related: bool = False) -> Graph:
        """The link graph; mentions and related notes on request (they cost a query each)."""
        from kb.graph import Graph, GraphEdge, GraphNode
        from kb.text import clean_line

        graph = Graph(
            [
                GraphNode(row["id"], row["path"], clean_line(row["title"]))
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

    # -- browsing (what the TUI shows) -----------------------------------------------

    @_store_errors
    def recent(self, limit: int = 50) -> list[NoteSummary]:
        from kb.browse import NoteSummary
        from kb.text import clean_line

        return [
            NoteSummary(
                row["id"],
                row["path"],
                clean_line(row["title"]),
                row["date"],
                [clean_line(t) for t in self.store.terms("tags", row["id"])],
                clean_line(row["summary"]),
            )
            for row in self.store.recent_notes(limit)
        ]

    @_store_errors
    def note_page(self, note_id: int) -> NotePage:
        """A note as the reader shows it: its Markdown read from the file (the truth), its
        outline and its links. Falls back to the stored text if the file is gone."""
        from kb.browse import NotePage, PageLink, display_markdown, external_url
        from kb.parse.decode import BinaryFile, decode_note
        from kb.parse.frontmatter import split_front_matter
        from kb.text import clean_line

        row = self.store.note_by_id(note_id)
        if row is None:
            raise KbError(f"note {note_id} is no longer in the store")
        file = self.note_file(row["root"], row["rel"])
        try:
            body = split_front_matter(decode_note(file.read_bytes()).text).body
        except (OSError, BinaryFile):
            body = row["text"]
        links = [
            PageLink(
                text=clean_line(link["text"]) or clean_line(link["target"]),
                target=link["target"] + (f"#{link['anchor']}" if link["anchor"] else ""),
                kind=link["kind"],
                rel=link["rel"],
                line=link["line"],
                status=link["status"],
                note_id=link["target_id"],
                note_title=clean_line(link["target_title"]) if link["target_title"] else None,
                url=external_url(link["target"]) if link["status"] == "external" else None,
            )
            for link in self.store.outgoing_links(note_id)
            if link["kind"] not in ("anchor", "image")
        ]
        return NotePage(
            id=note_id,
            path=row["path"],
            file=file,
            title=clean_line(row["title"]),
            date=row["date"],
            tags=[clean_line(t) for t in self.store.terms("tags", note_id)],
            series=[clean_line(s) for s in self.store.terms("series", note_id)],
            markdown=display_markdown(body),
            headings=[
                (h["level"], clean_line(h["text"]), h["slug"]) for h in self.store.headings(note_id)
            ],
            links=links,
        )

    @_store_errors
    def follow(self, note_id: int, href: str) -> Follow:
        """Where a link in a note leads, by the same rules as ingest: another note, a
        heading of this one, an external URL (shown, never opened), or nowhere."""
        from kb.browse import Follow, external_url, parse_kb_href
        from kb.links import LinkToResolve

        kb_link = parse_kb_href(href)
        if kb_link is not None:
            kind, target, anchor = kb_link
        else:
            target, _, anchor = href.partition("#")
            kind = "url" if external_url(target) else "markdown"
            if not target and anchor:
                return Follow("anchor", note_id, anchor)
        found = self._link_index().resolve(LinkToResolve(0, note_id, target, anchor, kind))
        if found.target_id is not None:
            if found.target_id == note_id and anchor:
                return Follow("anchor", note_id, anchor)
            return Follow("note", found.target_id, anchor)
        if found.status == "external":
            return Follow("external", url=href)
        return Follow("unresolved", target=href)

    def _link_index(self) -> LinkIndex:
        from kb.links import LinkIndex

        generation = self.store.generation
        if self._links_cache is None or self._links_cache[0] != generation:
            index = LinkIndex.build(
                self.store.note_names(), self.config.site_url, self.store.heading_slugs
            )
            self._links_cache = (generation, index)
        return self._links_cache[1]

    @_store_errors
    def tag_tree(self) -> list[TagNode]:
        from kb.browse import tag_tree

        return tag_tree(self.store.term_counts("tags"))

    @_store_errors
    def series(self, note_id: int) -> list[tuple[str, list[NoteSummary]]]:
        """Each series the note is in, with its notes in date order."""
        from kb.browse import NoteSummary
        from kb.text import clean_line

        return [
            (
                clean_line(name),
                [
                    NoteSummary(r["id"], r["path"], clean_line(r["title"]), r["date"], [], "")
                    for r in self.store.series_notes(name)
                ],
            )
            for name in self.store.terms("series", note_id)
        ]

    def new_note(self, title: str, folder: str | None = None) -> Path:
        """Create a note file with a front-matter template; returns its path. The folder is
        ``folder``, else ``new_notes_folder`` from kb.yaml, inside the first notes root."""
        from kb.browse import new_note_name, new_note_text

        if not title.strip():
            raise UsageError("a new note needs a title")
        root = self.config.roots[0].path
        chosen = folder or self.config.new_notes_folder
        target = (root / chosen).resolve()
        if target != root and root not in target.parents:
            setting = "--folder" if folder else f"new_notes_folder in {self.home / CONFIG_NAME}"
            raise UsageError(f"{setting}: {chosen!r} is outside the notes root {root}")
        target.mkdir(parents=True, exist_ok=True)
        existing = {p.name.casefold() for p in target.iterdir()}
        path = target / new_note_name(title, existing)
        path.write_text(new_note_text(title), encoding="utf-8")
        return path

    def note_file(self, root: str, rel: str) -> Path:
        """The file of a note, from its root's name and its path inside the root."""
        for notes_root in self.config.roots:
            if notes_root.name == root:
                return notes_root.path / rel
        raise KbError(f"notes root {root!r} is no longer in kb.yaml: run 'kb ingest'")

    def _reset_reader(self) -> None:
        self._engine_cache = None
        self._links_cache = None  # it holds the old store's heading lookup
        if self._store is not None:
            self._store.close()
            self._store = None

    def close(self) -> None:
        self._reset_reader()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _beside(path: Path) -> Path:
    """Where a rebuild builds the new store."""
    return path.with_name(path.name + ".new")


def _remove_database(path: Path, main: bool = True) -> None:
    """Remove a database file (unless not ``main``) and its journal files."""
    for suffix in ("-wal", "-shm", "-journal", *([""] if main else [])):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _chosen_engine(path: Path) -> str | None:
    """The engine chosen with ``--engine`` in the old store, which a rebuild keeps; None
    when the old store cannot tell (missing or damaged)."""
    try:
        store = Store.open(path, create=False)
    except KbError:
        return None
    try:
        with store_errors(path):
            return store.get_meta("engine")
    except KbError:
        return None
    finally:
        store.close()
