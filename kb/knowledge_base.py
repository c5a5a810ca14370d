"""The facade: the one object the CLI, the TUI and the tests construct to use kb."""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar, cast

from kb.config import CONFIG_NAME, Config, load_config
from kb.errors import KbError, StoreError, UsageError, os_error_message
from kb.locations import find_knowledge_base
from kb.store import Store, check_location, store_errors

if TYPE_CHECKING:
    from kb.engines.contract import EngineEntry, SearchEngine
    from kb.ingest.run import IngestStats, ProgressCallback
    from kb.links.check import CheckProblem, Suggestions
    from kb.links.connections import Connections, Mention, Related
    from kb.links.graph import Graph
    from kb.links.moving import MovePlan
    from kb.links.resolve import LinkIndex, NoteName
    from kb.locations import InitResult
    from kb.meaning.hybrid import Meaning
    from kb.notes.browse import Follow
    from kb.notes.buffer import Buffer, BufferProblem, LinkPlace, NoteCard
    from kb.notes.editor import RankedNote
    from kb.notes.guarded import GuardedNotes
    from kb.notes.listing import KbStats, ListedNote, ListFilters, NoteDetails
    from kb.notes.naming import NoteRef
    from kb.notes.source import NoteSource
    from kb.notes.views import NoteChoice, NotePage, NoteSummary, TagNode
    from kb.query.glossary import Glossary
    from kb.query.search import SearchResults
    from kb.store.sql import QueryResult

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


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
        # Each thread reads through its own connection (SQLite WAL lets readers run side by
        # side and never wait for the writer), so any thread may call any method.
        self._local = threading.local()
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        self._glossary: Glossary | None = None
        self._epoch = 0  # bumped when every thread must reopen its reader (a store rebuilt)
        self._lock = threading.Lock()  # guards the shared caches below and _readers
        self._related_cache: dict[tuple[int, int, int], list[Related]] = {}
        self._editor_values: dict[tuple[str, int, int], object] = {}  # for kb lsp
        self._pinyin: dict[str, tuple[str, str]] = {}  # for kb lsp: titles in pinyin

    @classmethod
    def open(cls, home: Path | str | None = None, cwd: Path | None = None) -> KnowledgeBase:
        """Find the knowledge base by the README's rules and read its settings."""
        return cls(load_config(find_knowledge_base(home, cwd)))

    @staticmethod
    def locate(home: Path | str | None = None, cwd: Path | None = None) -> tuple[Path, str]:
        """The knowledge base folder ``open`` would use, and which rule found it."""
        from kb.locations import locate_knowledge_base

        return locate_knowledge_base(home, cwd)

    @property
    def home(self) -> Path:
        return self.config.home

    @property
    def _store(self) -> Store:
        """This thread's store, read-only: searching and browsing never write."""
        return self._reader().store

    def _reader(self) -> _Reader:
        reader: _Reader | None = getattr(self._local, "reader", None)
        if reader is None or reader.epoch != self._epoch:
            if reader is not None:
                reader.store.close()
                self._local.reader = None
            epoch = self._epoch
            reader = _Reader(Store.open(self.config.store_path, create=False), epoch)
            self._local.reader = reader
            with self._lock:
                self._readers.add(reader)
        return reader

    def ingest(
        self,
        paths: list[Path] | None = None,
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        lock_wait: float | None = None,
        engine: str | None = None,
    ) -> IngestStats:
        """Bring the store up to date with the notes (all roots, or only ``paths``).

        ``engine`` (with ``rebuild``) switches the search engine to one the registry
        (``kb.engines.registry``) names."""
        if engine is not None and not rebuild:
            raise UsageError("--engine takes effect with --rebuild")
        from kb.ingest.lock import ingest_lock

        path = self.config.store_path
        check_location(path)
        try:
            with ingest_lock(self.config, lock_wait):
                try:
                    _remove_database(_beside(path))  # left by a rebuild that was killed
                    if rebuild:
                        stats = self._rebuild(progress, engine)
                    else:
                        # Readers need not reopen: WAL readers see the commit on their next
                        # read, and the caches are keyed by the store's generation.
                        stats = self._ingest_locked(path, paths, False, progress, None)
                    self._embed(path, stats, progress)
                    return stats
                finally:
                    if rebuild:  # readers opened meanwhile hold the store it replaced
                        self._reset_readers()
        except OSError as exc:
            raise StoreError(os_error_message(exc)) from exc

    def _embed(self, path: Path, stats: IngestStats, progress: ProgressCallback | None) -> None:
        """After the words are committed: embed the notes that changed for search by
        meaning (kb/meaning), each batch committed, so a search never waits for it."""
        from kb.meaning.embedder import EmbedderError, configured
        from kb.models import Problem

        settings = str(self.config.home / "kb.yaml")
        try:
            choice = configured(self.config.raw)
            if choice is None:
                return
            from kb.meaning.hybrid import Meaning
            from kb.meaning.index import embed_pending

            store = Store.open(path, create=True)
            try:
                with store_errors(path):
                    done = embed_pending(store, Meaning(choice).embedder(), progress)
            finally:
                store.close()
        except EmbedderError as exc:
            stats.problems.append((settings, Problem("meaning", str(exc))))
            stats.warnings += 1
            return
        stats.embedded = done.notes
        stats.embed_seconds = done.seconds
        for note, why in done.failed:
            message = f"search by meaning skips this note (the embedder failed: {why})"
            stats.problems.append((note, Problem("meaning", message)))
            stats.warnings += 1

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
        from kb.ingest.run import Ingester

        store = Store.open(path, create=True)
        try:
            with store_errors(path):
                if engine is not None:
                    store.meta.set("engine", engine)  # --engine on a rebuild: the new choice
                entry = self._engine_entry(store)
                ingester = Ingester(self.config, store, progress, engine=entry)
                stats = ingester.run(paths, rebuild=rebuild)
                entry.after_commit(self.config.index_dir, store, ingester.streams, rebuild)
                if not entry.in_store:  # its index may have been rebuilt: open it again
                    self._reset_readers()
                if rebuild:
                    store.seal()
            return stats
        finally:
            store.close()

    def _engine_entry(self, store: Store) -> EngineEntry:
        """kb.yaml's `engine` when set, else the one chosen with `--engine`, else the
        registry's default; KbError for a name the registry does not know."""
        from kb.engines.registry import DEFAULT_ENGINE, engine_entry

        name = self.config.raw.get("engine") or store.meta.get("engine") or DEFAULT_ENGINE
        return engine_entry(str(name))

    def ingest_changed(
        self,
        paths: list[Path],
        lock_wait: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> IngestStats:
        """Bring the store up to date after the system said ``paths`` changed: only those
        when each is a note file (a fraction of a second, where a walk of every note takes
        1.7 s at 100,000), else every note (a folder, or a file that is not a note, may
        stand for notes anywhere under it)."""
        from kb.ingest.walk import is_note_name

        named = sorted(set(paths))
        if not named or not all(is_note_name(path.name) for path in named):
            return self.ingest(lock_wait=lock_wait, progress=progress)
        return self.ingest(named, lock_wait=lock_wait, progress=progress)

    def ingest_file(self, path: Path) -> IngestStats:
        """Refresh one note file (the editing loop calls this after ``$EDITOR`` returns)."""
        return self.ingest([path])

    @_store_errors
    def engine(self) -> SearchEngine:
        """The search engine in use (see ``_engine_entry``), kept while the store is
        unchanged: whoosh opens its index once, not on every keystroke."""
        reader = self._reader()  # the engine reads through this thread's connection
        store = reader.store
        entry = self._engine_entry(store)
        key = (entry.name, store.generation)
        if reader.engine is None or reader.engine[0] != key:
            reader.engine = (key, entry.reader(self.config.index_dir, store))
        return reader.engine[1]

    @_store_errors
    def search(
        self,
        text: str,
        limit: int = 20,
        prefix: bool = False,
        exact: bool = False,
        lexical: bool = False,
    ) -> SearchResults:
        """Search the notes with kb's query language.

        With ``prefix`` (search as you type) an unfinished last word of 3 or more
        characters counts as a prefix. ``exact`` turns off typos, partial words, stems
        and the glossary; ``exact`` or ``lexical`` leave meaning out (kb/meaning). Raises
        QuerySyntaxError for bad syntax.
        """
        from kb.query.search import run_search

        return run_search(
            self._store,
            self.engine(),
            text,
            limit=limit,
            prefix_last=prefix,
            exact=exact,
            glossary=None if exact else self.glossary(),
            meaning=None if exact or lexical or prefix else self.meaning(),
        )

    def meaning(self) -> Meaning | None:
        """Search by meaning as kb.yaml's ``semantic:`` sets it (kb/meaning), or None: off,
        or its package not installed. Finding that out imports no numpy."""
        from kb.meaning.embedder import EmbedderError, configured

        try:
            choice = configured(self.config.raw)
        except EmbedderError:  # kb ingest says what is wrong; a search keeps the words
            return None
        if choice is None:
            return None
        from kb.meaning.hybrid import Meaning

        return Meaning(choice)

    def glossary(self) -> Glossary:
        """The shipped Chinese↔English glossary with kb.yaml's ``synonyms:``, loaded once."""
        if self._glossary is None:
            from kb.query.glossary import load_glossary

            self._glossary = load_glossary(self.config.synonyms)
        return self._glossary

    # -- the command line's lists: kb list, recent, tags, stats, show -------------------

    @_store_errors
    def list_notes(
        self,
        filters: ListFilters,
        query: str | None = None,
        sort: str | None = None,
        reverse: bool = False,
        limit: int | None = None,
    ) -> list[ListedNote]:
        """Notes that pass ``filters`` (and match ``query``, in rank order unless
        ``sort``), see ``kb.listing.list_notes``."""
        from kb.notes.listing import list_notes

        among = None
        if query:
            among = [hit.note_id for hit in self.search(query, limit=2**31 - 1).hits]
        return list_notes(self._store, filters, sort, reverse, limit, among)

    @_store_errors
    def tag_counts(self, sort: str = "count") -> list[tuple[str, int]]:
        from kb.notes.listing import tag_counts

        return tag_counts(self._store, sort)

    @_store_errors
    def term_counts(self, kind: str) -> list[tuple[str, int]]:
        """Every tag (``kind`` "tags"), series or category with its number of notes."""
        return self._store.terms.counts(kind)

    @_store_errors
    def engine_name(self) -> str:
        """The search engine this knowledge base uses (kb.yaml, else the store's choice)."""
        return self._engine_entry(self._store).name

    @_store_errors
    def stats(self) -> KbStats:
        """Totals from stored counts (``kb stats``)."""
        from kb.notes.listing import kb_stats

        store = self._store
        engine = self._engine_entry(store).name
        return kb_stats(store, self.config.store_path, self.config.index_dir, engine)

    @_store_errors
    def note_details(self, note: NoteRef) -> NoteDetails:
        """A note's fields and its file's Markdown (``kb show``)."""
        from kb.notes.listing import note_details

        row = self._store.notes.by_id(note.id)
        if row is None:
            raise KbError(f"{note.path} is no longer in the store")
        return note_details(self._store, note.id, self.note_file(row.root, row.rel))

    # -- kb mv ----------------------------------------------------------------------------

    @_store_errors
    def plan_move(self, note: NoteRef, new_path: str) -> MovePlan:
        """What moving ``note`` to ``new_path`` changes: the new bytes of every file that
        links to it (and of the note, for its own relative links), and the links left as
        they are. Reads the store and the files; writes nothing."""
        from kb.links.moving import plan_move

        return plan_move(self._store, self.config, note, new_path)

    def move(self, note: NoteRef, new_path: str) -> tuple[MovePlan, IngestStats]:
        """Move ``note`` to ``new_path`` and rewrite every link to it, as one transaction
        (``kb.move_transaction``), then ingest. The store is brought up to date first, so
        the plan reads the links as the files hold them."""
        from kb.links.move_transaction import FileChange, move_lock, run_move

        with move_lock(self.config.index_dir):
            self.ingest()
            plan = self.plan_move(note, new_path)
            changes = [FileChange(f.path, f.before, f.after) for f in plan.files]
            run_move(self.config.move_journal, plan.source, plan.destination, changes)
        return plan, self.ingest()

    def finish_interrupted_move(self) -> str | None:
        """Finish or undo a ``kb mv`` a kill interrupted (every file wholly before or
        wholly after); what was done, in one line, or None when there was none."""
        if not self.config.move_journal.exists():
            return None  # every command asks: a stat, not an import
        from kb.links.move_transaction import recover

        return recover(self.config.move_journal)

    # -- kb sql ---------------------------------------------------------------------------

    def sql(self, query: str) -> QueryResult:
        """One read-only SQL statement over the store's documented views (``kb sql``)."""
        from kb.store.sql import read_only_query

        return read_only_query(self.config.store_path, query)

    # -- connections ------------------------------------------------------------------

    @_store_errors
    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef:
        """A note from a path (relative to ``cwd`` or a notes root), a title or an alias."""
        from kb.notes.naming import find_note

        roots = {root.name: root.path for root in self.config.roots}
        return find_note(self._store, ref, roots, cwd or Path.cwd(), self.config.prefixed)

    @_store_errors
    def note_ref(self, note_id: int) -> NoteRef:
        from kb.notes.naming import note_ref

        return note_ref(self._store, note_id)

    @_store_errors
    def connections(self, note: NoteRef, related_limit: int = 10) -> Connections:
        """Outgoing links, backlinks, unlinked mentions and related notes of one note."""
        from kb.links.connections import Connections, backlinks, outgoing

        return Connections(
            note,
            outgoing=outgoing(self._store, note.id),
            backlinks=backlinks(self._store, note.id, self.note_file),
            mentions=self.mentions(note.id),
            related=self.related(note.id, related_limit),
        )

    @_store_errors
    def mentions(self, note_id: int) -> list[Mention]:
        from kb.links.mentions import mentions

        return mentions(
            self._store,
            self.engine(),
            note_id,
            self.note_file,
            self._mention_terms(note_id),
            self.config.mention_ignore,
        )

    @_store_errors
    def related(self, note_id: int, limit: int = 10) -> list[Related]:
        """Related notes with reasons; cached until the store changes."""
        from kb.links.related import related

        key = (note_id, limit, self._store.generation)
        with self._lock:
            found = self._related_cache.get(key)
        if found is None:
            found = related(self._store, self.engine(), note_id, limit)
            with self._lock:
                self._related_cache[key] = found
        return found

    @_store_errors
    def check(self) -> list[CheckProblem]:
        from kb.links.check import check

        return check(self._store)

    @_store_errors
    def graph(self, with_mentions: bool = False, with_related: bool = False) -> Graph:
        """The link graph; mentions and related notes on request (they cost a query each)."""
        from kb.links.graph import link_graph

        return link_graph(
            self._store,
            mentions=self.mentions if with_mentions else None,
            related=(lambda note_id: self.related(note_id, 3)) if with_related else None,
        )

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
    def recent(self, limit: int = 50, modified: bool = False) -> list[NoteSummary]:
        from kb.notes.views import recent

        return recent(self._store, limit, modified)

    @_store_errors
    def note_page(self, note_id: int) -> NotePage:
        """A note as the reader shows it (see ``kb.views.note_page``)."""
        from kb.notes.views import note_page

        return note_page(self._store, note_id, self.note_file)

    @_store_errors
    def follow(self, note_id: int, href: str) -> Follow:
        """Where a link in a note leads (see ``kb.browse.follow``)."""
        from dataclasses import replace

        from kb.notes.browse import follow, taxonomy_term

        where = follow(self._link_index(), note_id, href)
        terms = {"tag": "tags", "category": "categories"}.get(where.kind)
        if terms and where.target:  # a site's list page of one: kb's tag or category
            names = [name for name, _ in self._store.terms.counts(terms)]
            where = replace(where, target=taxonomy_term(names, where.target))
        return where

    def _link_index(self) -> LinkIndex:
        """A link index over this thread's reader that loads only the names a lookup asks
        for (kb.store.names): it answers as one built over every note would, without
        reading every note's names first (a second at 100,000 notes)."""
        from kb.links.resolve import host_of_url
        from kb.sites import find_site, site_links
        from kb.store.names import StoreLinkIndex

        names = self._store.names
        index = StoreLinkIndex(host_of_url(self.config.site_url), self._heading_slugs, names=names)
        index.site = site_links(self.config, find_site(self.config))
        return index

    def _heading_slugs(self, note_id: int) -> set[str]:
        return self._store.notes.heading_slugs(note_id)

    @_store_errors
    def tag_tree(self) -> list[TagNode]:
        from kb.notes.views import tag_tree

        return tag_tree(self._store.terms.counts("tags"))

    @_store_errors
    def series(self, note_id: int) -> list[tuple[str, list[NoteSummary]]]:
        """Each series the note is in, with its notes in date order."""
        from kb.notes.views import series

        return series(self._store, note_id)

    def new_note(self, title: str, folder: str | None = None) -> Path:
        """Create a note file with a front-matter template; returns its path. The folder is
        ``folder``, else ``new_notes_folder`` from kb.yaml, inside the first notes root."""
        from kb.notes.editing import create_note

        setting = "--folder" if folder else f"new_notes_folder in {self.home / CONFIG_NAME}"
        chosen = folder or self.config.new_notes_folder
        return create_note(self.notes_root, chosen, title, setting)

    def note_file(self, root: str, rel: str) -> Path:
        """The file of a note, from its root's name and its path inside the root."""
        for notes_root in self.config.roots:
            if notes_root.name == root:
                return notes_root.path / rel
        raise KbError(f"notes root {root!r} is no longer in kb.yaml: run 'kb ingest'")

    def _reset_readers(self) -> None:
        """Every thread opens its reader again on its next read; a thread closes its own
        old one then, so a read under way in another thread is never cut off."""
        with self._lock:
            self._epoch += 1
            self._related_cache.clear()

    def close(self) -> None:
        """Close every thread's reader (call it when no thread reads any more)."""
        self._reset_readers()
        with self._lock:
            readers = list(self._readers)
            self._readers.clear()
        for reader in readers:
            reader.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- for the terminal UI: what it shows, without reaching into the store -----------

    @_store_errors
    def check_ready(self) -> None:
        """Open the store now: raises StoreError when there is none yet or it comes from an
        older kb (the first ingest builds or upgrades it)."""
        self._store  # noqa: B018 - opening it checks its version

    @staticmethod
    def init(directory: Path, make_default: bool = False) -> InitResult:
        """Create a knowledge base in ``directory`` (kb.yaml, notes/, index/); with
        ``make_default``, also name it in the user config as the one used from anywhere."""
        from kb.locations import init_knowledge_base

        return init_knowledge_base(directory, make_default)

    def markdown_elsewhere(self) -> str:
        """When the roots hold no notes: where in the knowledge base's folder Markdown
        files are, and how to read them; '' when there are none."""
        from kb.sites.layout import describe_markdown_elsewhere, markdown_folders

        if any(root.path == self.home for root in self.config.roots):
            return ""
        found = markdown_folders(self.home)
        if not found:
            return ""
        roots = ", ".join(f"{r.path.name}/" for r in self.config.roots)
        return (
            f"no notes in {roots}, but Markdown files are elsewhere in {self.home}: "
            f"{describe_markdown_elsewhere(found)}; name their folder in 'roots' in "
            f"{self.home / 'kb.yaml'}"
        )

    @property
    def notes_root(self) -> Path:
        """The first notes root, where new notes go."""
        return self.config.roots[0].path

    @_store_errors
    def titles(self, note_ids: Iterable[int]) -> dict[int, str]:
        """The titles of those notes still in the store (the others are left out)."""
        from kb.notes.views import titles

        return titles(self._store, note_ids)

    @_store_errors
    def generation(self) -> int:
        """Counts up with every ingest that changes something: what a copy of the notes
        kept by a caller (the app's palette) is checked against."""
        return self._store.generation

    @_store_errors
    def note_choices(self) -> list[NoteChoice]:
        """Every note, by path, for choosing one by its title."""
        from kb.notes.views import note_choices

        return note_choices(self._store)

    # -- for kb mcp --------------------------------------------------------------------
    # The assistant server names notes for a caller it cannot trust with paths: reads and
    # writes go through kb.notes.guarded (inside the roots, each write naming its hash).

    @functools.cached_property
    def _guarded(self) -> GuardedNotes:
        from kb.notes.guarded import GuardedNotes  # only kb mcp asks; not on search's path

        return GuardedNotes(self)

    def stored_file(self, note_id: int) -> Path | None:
        """The file of a stored note, or None when the store no longer holds it."""
        row = self._store.notes.by_id(note_id)
        return None if row is None else self.note_file(row.root, row.rel)

    @_store_errors
    def note_source(self, ref: str) -> NoteSource:
        """The note ``ref`` names, its Markdown as written and its content hash; refused
        (nothing read) when the name or the file leads outside the notes roots."""
        return self._guarded.source(ref)

    def append_to_note(self, ref: str, text: str, expected_hash: str) -> tuple[NoteRef, str]:
        """Add ``text`` at the end of the note, when its file still has ``expected_hash``;
        the note is ingested. Returns the note and its new hash."""
        return self._guarded.append(ref, text, expected_hash)

    def replace_in_note(
        self, ref: str, old: str, new: str, expected_hash: str
    ) -> tuple[NoteRef, str]:
        """Replace the one occurrence of ``old`` with ``new`` in the note, when its file
        still has ``expected_hash``; the note is ingested."""
        return self._guarded.replace(ref, old, new, expected_hash)

    def create_note(self, title: str, folder: str | None, tags: list[str]) -> Path:
        """A new note from ``kb new``'s template in ``folder`` (inside the first root;
        default ``new_notes_folder``), ingested; its path."""
        return self._guarded.create(title, folder, tags)

    def move_checked(
        self, ref: str, new_path: str, expected_hash: str
    ) -> tuple[MovePlan, IngestStats]:
        """``move`` for a caller that read the note at ``expected_hash``, ``new_path``
        relative to the first notes root: refused when the file changed since, or when
        either place leads outside the notes roots."""
        return self._guarded.move(ref, new_path, expected_hash)

    # -- for kb lsp --------------------------------------------------------------------
    # What the editor server asks: the open note (unsaved text) resolved and checked as
    # ingest and kb check would, names for completion, a note's card, its backlinks.

    def file_place(self, file: Path) -> tuple[str, str] | None:
        """The (root name, path in the root) of a file in a notes root; None outside."""
        from kb.notes.buffer import file_place

        return file_place(file, {root.name: root.path for root in self.config.roots})

    @_store_errors
    def stored_note_at(self, file: Path) -> NoteRef | None:
        """The stored note whose file is ``file``; None when there is none."""
        place = self.file_place(file)
        if place is None:
            return None
        path = f"{place[0]}/{place[1]}" if self.config.prefixed else place[1]
        note_id = self._store.notes.ids_of([path]).get(path)
        return None if note_id is None else self.note_ref(note_id)

    @_store_errors
    def read_buffer(self, file: Path, text: str) -> Buffer:
        """The open note ``file`` as the editor holds it, its links resolved."""
        from kb.notes.buffer import read_buffer

        place = self.file_place(file)
        stored = self.stored_note_at(file) if place else None
        index = self._editor_link_index() if place else None
        name = index.notes.get(stored.id) if index is not None and stored else None
        return read_buffer(text, place, name, index, self.config.typed_link_keys)

    @_store_errors
    def buffer_problems(self, buffer: Buffer) -> list[BufferProblem]:
        """What kb check reports for the open note, placed in its text."""
        from kb.links.check import link_problem
        from kb.notes.buffer import buffer_problems

        store = self._store
        suggest = self._editor_cache("suggestions", lambda: _check_suggestions(store))

        def word(row: object) -> tuple[str, str]:
            problem = link_problem(row, store, suggest)  # type: ignore[arg-type]
            return problem.kind, problem.message

        path = None
        if buffer.root is not None and buffer.rel is not None:
            path = f"{buffer.root}/{buffer.rel}" if self.config.prefixed else buffer.rel
        return buffer_problems(buffer, store, word, path)

    @_store_errors
    def complete_notes(self, typed: str, limit: int = 50) -> list[RankedNote]:
        """Notes for what was typed after ``[[`` (or ``](``), ranked by the naming rule."""
        from kb.notes.editor import name_keys, rank_notes
        from kb.notes.naming import title_pinyin

        names = self._editor_cache("keys", lambda: name_keys(self.editor_names()))
        pinyin = self._pinyin  # by title, kept across ingests: a title's pinyin never changes

        def pinyin_of(note: NoteName) -> tuple[str, str]:
            found = pinyin.get(note.title)
            if found is None:
                found = pinyin[note.title] = title_pinyin(note.title)
            return found

        return rank_notes(names, typed, pinyin_of, limit)

    @_store_errors
    def editor_names(self) -> list[NoteName]:
        """Every note's names, kept until the store changes."""
        return self._editor_cache("names", self._store.notes.names)

    @_store_errors
    def stem_is_unique(self, note: NoteName) -> bool:
        from kb.links.resolve import fold

        counts = self._editor_cache("stems", lambda: _stem_counts(self.editor_names()))
        return counts.get(fold(note.stem), 0) <= 1

    @_store_errors
    def note_name(self, note_id: int) -> NoteName | None:
        found = self._store.notes.names([note_id])
        return found[0] if found else None

    @_store_errors
    def note_headings(self, note_id: int) -> list[tuple[int, str, str, int]]:
        """A note's headings: (level, text, slug, 1-based line)."""
        return [tuple(h) for h in self._store.notes.headings(note_id)]  # type: ignore[misc]

    @_store_errors
    def note_card(self, note_id: int) -> NoteCard:
        """What hovering a link to a note shows."""
        from kb.notes.buffer import note_card

        return note_card(self._store, note_id, self.note_file)

    @_store_errors
    def backlink_places(
        self, note_id: int, text_of: Callable[[Path], str | None]
    ) -> list[LinkPlace]:
        """Every link to a note, placed in its file (``text_of`` gives an open file's
        unsaved text, else None and the file is read)."""
        from kb.links.check import file_of
        from kb.notes.buffer import backlink_places

        rows = self._store.links.backlinks(note_id)
        return backlink_places(rows, lambda path: file_of(self.config, path), text_of)

    @_store_errors
    def notes_tagged(self, tag: str) -> list[NoteRef]:
        """The notes carrying ``tag`` (any case), by path."""
        ids = self._store.notes.filter_ids("tag", tag)
        return sorted((self.note_ref(i) for i in ids), key=lambda n: n.path)

    @_store_errors
    def suggested_notes(self, target: str, kind: str) -> list[NoteName]:
        """The notes kb check suggests for a broken link to ``target``."""
        store = self._store
        suggest = self._editor_cache("suggestions", lambda: _check_suggestions(store))
        paths = suggest.close_to(target, kind)
        ids = store.notes.ids_of(paths)
        return store.notes.names([ids[p] for p in paths if p in ids])

    def _editor_link_index(self) -> LinkIndex:
        """A link index for this thread, kept until the store changes (it fills itself
        from the store as links ask, so a new one per keystroke would read them again)."""
        generation = self.generation()
        kept = getattr(self._local, "editor_index", None)
        if kept is None or kept[0] != (generation, self._epoch):
            kept = ((generation, self._epoch), self._link_index())
            self._local.editor_index = kept
        return kept[1]

    def _editor_cache(self, name: str, build: Callable[[], T]) -> T:
        """A value kept for every thread until the store changes."""
        key = (name, self.generation(), self._epoch)
        with self._lock:
            if key in self._editor_values:
                return cast(T, self._editor_values[key])
        value = build()
        with self._lock:
            stale = [k for k in self._editor_values if k[0] == name]
            for old in stale:
                del self._editor_values[old]
            self._editor_values[key] = value
        return value


class _Reader:
    """One thread's read connection, and the engine built on it."""

    __slots__ = ("__weakref__", "engine", "epoch", "store")

    def __init__(self, store: Store, epoch: int) -> None:
        self.store = store
        self.epoch = epoch
        self.engine: tuple[tuple[str, int], SearchEngine] | None = None


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
        store = Store.open(path, create=False, check=False)  # a damaged store may tell
    except KbError:
        return None
    try:
        with store_errors(path):
            return store.meta.get("engine")
    except KbError:
        return None
    finally:
        store.close()


def _check_suggestions(store: Store) -> Suggestions:
    """kb check's suggestions for broken links (for kb lsp: built once per store change)."""
    from kb.links.check import Suggestions

    return Suggestions(store)


def _stem_counts(names: list[NoteName]) -> dict[str, int]:
    from kb.links.resolve import fold

    counts: dict[str, int] = {}
    for name in names:
        key = fold(name.stem)
        counts[key] = counts.get(key, 0) + 1
    return counts
