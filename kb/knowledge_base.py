"""The facade: the one object the CLI, the TUI and the tests construct to use kb."""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from kb.config import CONFIG_NAME, Config, load_config
from kb.errors import KbError, UsageError
from kb.locations import (
    find_knowledge_base,
    init_knowledge_base,
    locate_knowledge_base,
    shown_file,
    shown_note_path,
)
from kb.names.resolve import host_of_url
from kb.store import Store, store_errors, telling_store_errors
from kb.store.names import StoreLinkIndex

if TYPE_CHECKING:
    from kb.engines.contract import EngineEntry, SearchEngine
    from kb.ingest.changes import NoteChanges
    from kb.ingest.run import IngestStats, ProgressCallback
    from kb.links.moves import Moves
    from kb.links.note_links import NoteLinks
    from kb.locations import InitResult
    from kb.meaning.by_meaning import ByMeaning
    from kb.names.resolve import LinkIndex
    from kb.notes.browse import Follow
    from kb.notes.editor_answers import EditorAnswers
    from kb.notes.guarded import GuardedNotes
    from kb.notes.listing import KbStats, ListedNote, ListFilters, NoteDetails
    from kb.notes.naming import NoteRef
    from kb.notes.views import NoteChoice, NotePage, NoteSummary, TagNode
    from kb.query.glossary import Glossary
    from kb.search.run import SearchResults
    from kb.store.sql import QueryResult

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
        # Each thread reads through its own connection (SQLite WAL lets readers run side by
        # side and never wait for the writer), so any thread may call any method.
        self._local = threading.local()
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        self._glossary: Glossary | None = None
        self._epoch = 0  # bumped when every thread must reopen its reader (a store rebuilt)
        self._lock = threading.Lock()  # guards _readers and _epoch

    @classmethod
    def open(cls, home: Path | str | None = None, cwd: Path | None = None) -> KnowledgeBase:
        """Find the knowledge base by the README's rules and read its settings."""
        return cls(load_config(find_knowledge_base(home, cwd)))

    @staticmethod
    def locate(home: Path | str | None = None, cwd: Path | None = None) -> tuple[Path, str]:
        """The knowledge base folder ``open`` would use, and which rule found it."""

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
        embed: bool = True,
    ) -> IngestStats:
        """Bring the store up to date with the notes (all roots, or only ``paths``);
        ``engine`` (with ``rebuild``) switches to one the registry names; ``embed=False``
        leaves search by meaning's embedding to ``embed()`` (the app's own worker)."""
        if engine is not None and not rebuild:
            raise UsageError("--engine takes effect with --rebuild")
        from kb.ingest.session import write_store  # deferred: the ingest machinery

        try:
            return write_store(
                self.config, paths, rebuild, progress, lock_wait, engine, self._reset_readers, embed
            )
        finally:
            if rebuild:  # readers opened meanwhile hold the store it replaced
                self._reset_readers()

    @_store_errors
    def changes_since_ingest(self, as_configured: bool = False) -> NoteChanges | None:
        """The files the next ingest would add, read again or remove, by a stat of each
        (``kb.ingest.changes``): what a command that reads notes looks at first. With
        ``as_configured``, None when kb.yaml's ``changed_notes`` says not to look."""
        from kb.ingest import changes  # deferred: loads the walk

        if as_configured:
            return changes.changes_to_catch_up(self.config, self._store)
        return changes.changes_since_ingest(self.config, self._store)

    def embed(
        self,
        progress: ProgressCallback | None = None,
        stop: Callable[[], bool] | None = None,
        lock_wait: float | None = 0,
    ) -> IngestStats:
        """Embed the notes whose vectors are missing or stale (search by meaning), after
        an ``ingest(embed=False)``: kb.ingest.session.embed_store."""
        from kb.ingest.session import embed_store  # deferred: the ingest machinery

        return embed_store(self.config, progress, stop, lock_wait)

    def _engine_entry(self, store: Store) -> EngineEntry:
        from kb.engines.registry import configured_entry  # deferred: loads the registry

        return configured_entry(self.config, store)

    def ingest_changed(
        self,
        paths: list[Path],
        lock_wait: float | None = None,
        progress: ProgressCallback | None = None,
        embed: bool = True,
    ) -> IngestStats:
        """Bring the store up to date after the system said ``paths`` changed: only those
        when each is a note file (a fraction of a second, where a walk of every note takes
        1.7 s at 100,000), else every note (a folder, or a file that is not a note, may
        stand for notes anywhere under it)."""
        from kb.ingest.walk import is_note_name  # deferred: 2 modules more

        named = sorted(set(paths))
        if not named or not all(is_note_name(path.name) for path in named):
            return self.ingest(lock_wait=lock_wait, progress=progress, embed=embed)
        return self.ingest(named, lock_wait=lock_wait, progress=progress, embed=embed)

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
        explain: bool = False,
    ) -> SearchResults:
        """Search the notes with kb's query language.

        With ``prefix`` (search as you type) an unfinished last word of 3 or more
        characters counts as a prefix. ``exact`` turns off typos, partial words, stems
        and the glossary; ``exact`` or ``lexical`` leave meaning out (kb/meaning);
        ``explain`` tells each hit how it was ranked (its ``why``). Raises
        QuerySyntaxError for bad syntax.
        """
        from kb.search.run import run_search  # deferred: 12 modules more

        return run_search(
            self._store,
            self.engine(),
            text,
            limit=limit,
            prefix_last=prefix,
            exact=exact,
            glossary=None if exact else self.glossary(),
            meaning=None if exact or lexical or prefix else self.by_meaning.configured(),
            explain=explain,
        )

    def glossary(self) -> Glossary:
        """The shipped Chinese↔English glossary with kb.yaml's ``synonyms:``, loaded once."""
        if self._glossary is None:
            from kb.query.glossary import load_glossary  # deferred: on first use

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
        ``sort``), see ``kb.notes.listing.list_notes``."""
        from kb.notes.listing import list_notes  # deferred: 5 modules more

        among = None
        if query:
            among = [hit.note_id for hit in self.search(query, limit=2**31 - 1).hits]
        return list_notes(self._store, filters, sort, reverse, limit, among)

    @_store_errors
    def tag_counts(self, sort: str = "count") -> list[tuple[str, int]]:
        from kb.notes.listing import tag_counts  # deferred: 5 modules more

        return tag_counts(self._store, sort)

    @_store_errors
    def term_counts(self, kind: str) -> list[tuple[str, int]]:
        """Every tag (``kind`` "tags"), series, category or date (year, month) with its
        number of notes."""
        if kind == "dates":
            return self._store.notes.date_counts()
        return self._store.terms.counts(kind)

    @_store_errors
    def engine_name(self) -> str:
        """The search engine this knowledge base uses (kb.yaml, else the store's choice)."""
        return self._engine_entry(self._store).name

    @_store_errors
    def stats(self) -> KbStats:
        """Totals from stored counts (``kb stats``)."""
        from kb.notes.listing import kb_stats  # deferred: 5 modules more

        store = self._store
        engine = self._engine_entry(store).name
        return kb_stats(store, self.config.store_path, self.config.index_dir, engine)

    @_store_errors
    def note_details(self, note: NoteRef) -> NoteDetails:
        """A note's fields and its file's Markdown (``kb show``)."""
        from kb.notes.listing import note_details  # deferred: 5 modules more

        row = self._store.notes.by_id(note.id)
        if row is None:
            raise KbError(f"{note.path} is no longer in the store")
        return note_details(self._store, note.id, self.note_file(row.root, row.rel))

    # -- kb mv: planning and moving are the part `moves`, below ----------------------------

    def finish_interrupted_move(self) -> str | None:
        """Finish or undo a ``kb mv`` a kill interrupted (every file wholly before or
        wholly after); what was done, in one line, or None when there was none."""
        if not self.config.move_journal.exists():
            return None  # every command asks: a stat, not an import
        from kb.links.move_transaction import recover  # deferred: 5 modules more

        return recover(self.config.move_journal)

    # -- kb sql ---------------------------------------------------------------------------

    def sql(self, query: str) -> QueryResult:
        """One read-only SQL statement over the store's documented views (``kb sql``)."""
        from kb.store.sql import read_only_query  # deferred: on first use

        settings = self.config
        return read_only_query(
            settings.store_path, query, settings.sql_time_limit, settings.sql_max_rows
        )

    # -- naming notes (a note's links are the part `links`, below) --------------------

    @_store_errors
    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef:
        """A note from a path (relative to ``cwd`` or a notes root), a title or an alias."""
        from kb.notes.naming import find_note  # deferred: 2 modules more

        roots = {root.name: root.path for root in self.config.roots}
        return find_note(self._store, ref, roots, cwd or Path.cwd(), self.config.prefixed)

    @_store_errors
    def note_ref(self, note_id: int) -> NoteRef:
        from kb.notes.naming import note_ref  # deferred: 2 modules more

        return note_ref(self._store, note_id)

    # -- browsing (what the TUI shows) -----------------------------------------------

    @_store_errors
    def recent(self, limit: int = 50, modified: bool = False) -> list[NoteSummary]:
        from kb.notes.views import recent  # deferred: 8 modules more

        return recent(self._store, limit, modified)

    @_store_errors
    def note_page(self, note_id: int) -> NotePage:
        """A note as the reader shows it (see ``kb.notes.views.note_page``)."""
        from kb.notes.views import note_page  # deferred: 8 modules more

        return note_page(self._store, note_id, self.note_file)

    @_store_errors
    def follow(self, note_id: int, href: str) -> Follow:
        """Where a link in a note leads (see ``kb.notes.browse.follow``)."""
        from kb.notes.browse import follow  # deferred: 6 modules more

        names = self._store.terms.counts
        return follow(self._link_index(), note_id, href, lambda t: [n for n, _ in names(t)])

    def _link_index(self) -> LinkIndex:
        """A link index over this thread's reader that loads only the names a lookup asks
        for (kb.store.names): reading every note's names first takes a second at 100,000."""
        from kb.sites import find_site, site_links  # deferred: 5 modules more

        names = self._store.names
        index = StoreLinkIndex(host_of_url(self.config.site_url), self._heading_slugs, names=names)
        index.site = site_links(self.config, find_site(self.config))
        return index

    def _heading_slugs(self, note_id: int) -> set[str]:
        return self._store.notes.heading_slugs(note_id)

    @_store_errors
    def tag_tree(self) -> list[TagNode]:
        from kb.notes.views import tag_tree  # deferred: 8 modules more

        return tag_tree(self._store.terms.counts("tags"))

    @_store_errors
    def series(self, note_id: int) -> list[tuple[str, list[NoteSummary]]]:
        """Each series the note is in, with its notes in date order."""
        from kb.notes.views import series  # deferred: 8 modules more

        return series(self._store, note_id)

    def new_note(self, title: str, folder: str | None = None) -> Path:
        """Create a note file with a front-matter template; returns its path. The folder is
        ``folder``, else ``new_notes_folder`` from kb.yaml, inside the first notes root."""
        from kb.notes.editing import create_note  # deferred: 3 modules more

        setting = "--folder" if folder else f"new_notes_folder in {self.home / CONFIG_NAME}"
        chosen = folder or self.config.new_notes_folder
        return create_note(self.notes_root, chosen, title, setting)

    def note_file(self, root: str, rel: str) -> Path:
        """The file of a note, from its root's name and its path inside the root."""
        for notes_root in self.config.roots:
            if notes_root.name == root:
                return notes_root.path / rel
        raise KbError(f"notes root {root!r} is no longer in kb.yaml: run 'kb ingest'")

    def shown_path(self, note_path: str) -> str:
        """A note's file as every command prints it: from the current folder when that is
        inside the knowledge base, else whole (kb.locations.shown_note_path)."""
        return shown_note_path(self.config, note_path)

    def shown_file(self, file: Path | str) -> str:
        """Any file of the knowledge base printed as ``shown_path`` prints a note's."""
        return shown_file(self.config, file)

    def _reset_readers(self) -> None:
        """Every thread opens its reader again on its next read; a thread closes its own
        old one then, so a read under way in another thread is never cut off. The parts
        that keep answers (``links``'s related notes) drop them on the new epoch."""
        with self._lock:
            self._epoch += 1

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

        return init_knowledge_base(directory, make_default)

    @_store_errors
    def engine_advice(self, added: int) -> str:
        """After an ingest that added ``added`` notes: a line suggesting the faster engine
        for a large knowledge base on FTS5, or '' (kb.engines.registry.engine_advice)."""
        from kb.engines import registry  # deferred: on first use

        if added < registry.ADVISE_AFTER_ADDING:
            return ""  # an ordinary ingest asks nothing more of the store
        if self.config.raw.get("engine") or self._store.meta.get("engine"):
            return ""  # chosen on purpose (kb.yaml, or --engine on a rebuild): not advised
        from kb.engines.tantivy_index import available  # deferred: asked only if large

        name = self.engine().name
        return registry.engine_advice(name, self._store.notes.count(), added, available)

    def markdown_elsewhere(self) -> str:
        """When the roots hold no notes: where in the knowledge base's folder Markdown
        files are, and how to read them; '' when there are none."""
        from kb.sites.layout import markdown_elsewhere  # deferred: walks the folder

        return markdown_elsewhere(self.home, [root.path for root in self.config.roots])

    @property
    def notes_root(self) -> Path:
        """The first notes root, where new notes go."""
        return self.config.roots[0].path

    @_store_errors
    def titles(self, note_ids: Iterable[int]) -> dict[int, str]:
        """The titles of those notes still in the store (the others are left out)."""
        from kb.notes.views import titles  # deferred: 8 modules more

        return titles(self._store, note_ids)

    @_store_errors
    def generation(self) -> int:
        """Counts up with every ingest that changes something: what a copy of the notes
        kept by a caller (the app's palette) is checked against."""
        return self._store.generation

    @_store_errors
    def note_choices(self) -> list[NoteChoice]:
        """Every note, by path, for choosing one by its title."""
        from kb.notes.views import note_choices  # deferred: 8 modules more

        return note_choices(self._store)

    # -- the facade's named parts ----------------------------------------------------------
    # Each answers one concern's questions (in its own module, out of every other command's
    # start), each call's database errors told as StoreErrors.

    @functools.cached_property
    def links(self) -> NoteLinks:
        """A note's links (kb/links/note_links.py): ``connections``, ``mentions``,
        ``related``, ``check``, ``graph``."""
        from kb.links.note_links import NoteLinks  # deferred: only the link commands ask

        links = NoteLinks(
            self.config, lambda: self._store, self.engine, lambda: self._epoch,
            self.note_file, self.find_note, self.by_meaning.near,
        )  # fmt: skip
        return telling_store_errors(links, self.config.store_path)

    @functools.cached_property
    def moves(self) -> Moves:
        """kb mv (kb/links/moves.py): ``plan`` what a move changes, ``move`` a note."""
        from kb.links.moves import Moves  # deferred: only kb mv and the servers move

        moves = Moves(self.config, lambda: self._store, self.ingest)
        return telling_store_errors(moves, self.config.store_path)

    @functools.cached_property
    def by_meaning(self) -> ByMeaning:
        """Search by meaning (kb/meaning/by_meaning.py): the ``configured`` meaning or
        None, its ``status``, the model's ``scores`` for a text, the notes ``near`` one."""
        from kb.meaning.by_meaning import ByMeaning  # deferred: search, kb info, related ask

        return telling_store_errors(
            ByMeaning(self.config, lambda: self._store), self.config.store_path
        )

    @functools.cached_property
    def guarded(self) -> GuardedNotes:
        """The notes for a caller that cannot be trusted with paths (kb mcp): every file
        read or written inside the notes roots, every write naming the hash it read
        (kb/notes/guarded.py)."""
        from kb.notes.guarded import GuardedNotes  # deferred: only kb mcp asks

        return telling_store_errors(GuardedNotes(self), self.config.store_path)

    @functools.cached_property
    def editor(self) -> EditorAnswers:
        """What the editor server asks (kb/notes/editor_answers.py): the open note (unsaved
        text) resolved and checked as ingest and kb check would, names for completion, a
        note's card, its backlinks, rename and code-action edits."""
        from kb.notes.editor_answers import EditorAnswers  # deferred: only kb lsp asks

        answers = EditorAnswers(
            self.config, lambda: self._store, lambda: self._epoch, self._link_index,
            self.note_ref, self.note_file,
        )  # fmt: skip
        return telling_store_errors(answers, self.config.store_path)

    def stored_file(self, note_id: int) -> Path | None:
        """The file of a stored note, or None when the store no longer holds it."""
        row = self._store.notes.by_id(note_id)
        return None if row is None else self.note_file(row.root, row.rel)


class _Reader:
    """One thread's read connection, and the engine built on it."""

    __slots__ = ("__weakref__", "engine", "epoch", "store")

    def __init__(self, store: Store, epoch: int) -> None:
        self.store = store
        self.epoch = epoch
        self.engine: tuple[tuple[str, int], SearchEngine] | None = None
