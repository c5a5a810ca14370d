"""A note's links as the facade offers them, its part ``links``: ``connections`` (links
out, backlinks, unlinked mentions, related notes), ``mentions``, ``related`` (kept until
the store changes), ``check`` (what kb check reports) and ``graph`` (kb graph).

Each answer is computed by its module here in ``kb/links``; this part hands them this
thread's store, the search engine, the notes' files and the notes near in meaning.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError

if TYPE_CHECKING:
    from kb.config import Config
    from kb.engines.contract import SearchEngine
    from kb.links.check import CheckProblem
    from kb.links.connections import Connections, FileOf, Mention, Related
    from kb.links.graph import Graph
    from kb.links.related import NearInMeaning
    from kb.notes.naming import NoteRef
    from kb.store import Store


class NoteLinks:
    """The links of one knowledge base's notes. ``store`` and ``engine`` read through this
    thread's reader; ``epoch`` changes when every reader is opened again (a store rebuilt),
    which drops the related notes kept."""

    def __init__(
        self,
        config: Config,
        store: Callable[[], Store],
        engine: Callable[[], SearchEngine],
        epoch: Callable[[], int],
        note_file: FileOf,
        find_note: Callable[[str, Path], NoteRef],
        near: Callable[[], NearInMeaning | None],
    ) -> None:
        self._config = config
        self._store = store
        self._engine = engine
        self._epoch = epoch
        self._note_file = note_file
        self._find_note = find_note
        self._near = near
        self._lock = threading.Lock()  # any thread may ask: guards the cache below
        self._related: tuple[int, dict[tuple[int, int, int, int], list[Related]]] = (-1, {})

    def connections(
        self, note: NoteRef, related_limit: int = 10, file_of: FileOf | None = None
    ) -> Connections:
        """Outgoing links, backlinks, unlinked mentions and related notes of one note; the
        lines around links and mentions are read from the files ``file_of`` gives (a
        note's file by default; None: not read)."""
        from kb.links.connections import Connections, backlinks, outgoing  # deferred: on first use

        reader = file_of or self._note_file
        store = self._store()
        return Connections(
            note,
            outgoing=outgoing(store, note.id),
            backlinks=backlinks(store, note.id, reader),
            mentions=self.mentions(note.id, reader),
            related=self.related(note.id, related_limit),
        )

    def mentions(self, note_id: int, file_of: FileOf | None = None) -> list[Mention]:
        """Notes whose prose names this note without linking to it (kb.links.mentions)."""
        from kb.links.mentions import mentions  # deferred: 5 modules more

        return mentions(
            self._store(),
            self._engine(),
            note_id,
            file_of or self._note_file,
            self._mention_terms(note_id),
            self._config.mention_ignore,
        )

    def related(self, note_id: int, limit: int = 10) -> list[Related]:
        """Related notes with reasons; kept until the store changes."""
        from kb.links.related import related  # deferred: 4 modules more

        store = self._store()
        key = (note_id, limit, store.generation, store.vectors.stamp())
        epoch = self._epoch()
        with self._lock:
            if self._related[0] != epoch:  # a store rebuilt may count generations anew
                self._related = (epoch, {})
            found = self._related[1].get(key)
        if found is None:
            roots = self._config.roots
            folders = {r.name for r in roots} | {r.path.name for r in roots}
            found = related(store, self._engine(), note_id, limit, self._near(), folders)
            with self._lock:
                if self._related[0] == epoch:
                    self._related[1][key] = found
        return found

    def forget(self) -> None:
        """Drop the related notes kept (a test or a benchmark that changes the ranking)."""
        with self._lock:
            self._related = (-1, {})

    def check(self) -> list[CheckProblem]:
        """What kb check reports: broken, missing, ambiguous links; duplicate titles; notes
        whose front matter or text kb read with a warning."""
        from kb.links.check import check  # deferred: 3 modules more

        return check(self._store())

    def graph(self, with_mentions: bool = False, with_related: bool = False) -> Graph:
        """The link graph; mentions and related notes on request (they cost a query each)."""
        from kb.links.graph import link_graph  # deferred: on first use

        return link_graph(
            self._store(),
            mentions=self.mentions if with_mentions else None,
            related=(lambda note_id: self.related(note_id, 3)) if with_related else None,
        )

    def _mention_terms(self, note_id: int) -> list[str]:
        """Configured terms (``mention_terms`` in kb.yaml) that name this note."""
        terms = []
        for term, ref in self._config.mention_terms.items():
            try:
                if self._find_note(ref, self._config.home).id == note_id:
                    terms.append(term)
            except KbError:
                continue
        return terms
