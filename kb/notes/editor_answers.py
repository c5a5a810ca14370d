"""What the editor server (``kb lsp``) asks the knowledge base, answered over its store.

The open note (unsaved text) resolved and checked as ingest and ``kb check`` would,
names for completion, a note's card and headings, its backlinks placed in their files.
The facade keeps one-line methods over one ``EditorAnswers``; the values it keeps (the
names folded for completion, kb check's suggestions, a link index per thread) last until
the store changes, the titles' pinyin for good (a title's pinyin never changes).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from kb.notes.buffer import (
    Buffer,
    BufferProblem,
    LinkPlace,
    NoteCard,
    backlink_places,
    buffer_problems,
    file_place,
    note_card,
    read_buffer,
)

if TYPE_CHECKING:
    from kb.config import Config
    from kb.links.check import Suggestions
    from kb.links.resolve import LinkIndex, NoteName
    from kb.notes.editor import RankedNote
    from kb.notes.naming import NoteRef
    from kb.store import Store

T = TypeVar("T")


class EditorAnswers:
    """The editor's questions over one knowledge base, from any thread.

    ``store`` gives this thread's read-only store, ``epoch`` counts the facade's reader
    resets (a rebuilt store), ``link_index`` builds a link index over this thread's
    store, ``note_ref`` and ``note_file`` are the facade's."""

    def __init__(
        self,
        config: Config,
        store: Callable[[], Store],
        epoch: Callable[[], int],
        link_index: Callable[[], LinkIndex],
        note_ref: Callable[[int], NoteRef],
        note_file: Callable[[str, str], Path],
    ) -> None:
        self.config = config
        self._store = store
        self._epoch = epoch
        self._link_index = link_index
        self.note_ref = note_ref
        self.note_file = note_file
        self._local = threading.local()
        self._lock = threading.Lock()
        self._values: dict[tuple[str, int, int], object] = {}
        self._pinyin: dict[str, tuple[str, str]] = {}  # by title, kept across ingests

    def file_place(self, file: Path) -> tuple[str, str] | None:
        """The (root name, path in the root) of a file in a notes root; None outside."""
        return file_place(file, {root.name: root.path for root in self.config.roots})

    def stored_note_at(self, file: Path) -> NoteRef | None:
        """The stored note whose file is ``file``; None when there is none."""
        place = self.file_place(file)
        if place is None:
            return None
        path = f"{place[0]}/{place[1]}" if self.config.prefixed else place[1]
        note_id = self._store().notes.ids_of([path]).get(path)
        return None if note_id is None else self.note_ref(note_id)

    def read_buffer(self, file: Path, text: str) -> Buffer:
        """The open note ``file`` as the editor holds it, its links resolved."""
        place = self.file_place(file)
        stored = self.stored_note_at(file) if place else None
        index = self.link_index() if place else None
        name = index.notes.get(stored.id) if index is not None and stored else None
        return read_buffer(text, place, name, index, self.config.typed_link_keys)

    def buffer_problems(self, buffer: Buffer) -> list[BufferProblem]:
        """What kb check reports for the open note, placed in its text."""
        from kb.links.check import link_problem

        store = self._store()
        suggest = self.suggestions()

        def word(row: object) -> tuple[str, str]:
            problem = link_problem(row, store, suggest)  # type: ignore[arg-type]
            return problem.kind, problem.message

        path = None
        if buffer.root is not None and buffer.rel is not None:
            path = f"{buffer.root}/{buffer.rel}" if self.config.prefixed else buffer.rel
        return buffer_problems(buffer, store, word, path)

    def complete_notes(self, typed: str, limit: int = 50) -> list[RankedNote]:
        """Notes for what was typed after ``[[`` (or ``](``), ranked by the naming rule."""
        from kb.notes.editor import name_keys, rank_notes
        from kb.notes.naming import title_pinyin

        names = self.kept("keys", lambda: name_keys(self.names()))
        pinyin = self._pinyin

        def pinyin_of(note: NoteName) -> tuple[str, str]:
            found = pinyin.get(note.title)
            if found is None:
                found = pinyin[note.title] = title_pinyin(note.title)
            return found

        return rank_notes(names, typed, pinyin_of, limit)

    def names(self) -> list[NoteName]:
        """Every note's names, kept until the store changes."""
        return self.kept("names", self._store().notes.names)

    def stem_is_unique(self, note: NoteName) -> bool:
        from kb.links.resolve import fold

        counts = self.kept("stems", lambda: _stem_counts(self.names()))
        return counts.get(fold(note.stem), 0) <= 1

    def note_name(self, note_id: int) -> NoteName | None:
        found = self._store().notes.names([note_id])
        return found[0] if found else None

    def note_headings(self, note_id: int) -> list[tuple[int, str, str, int]]:
        """A note's headings: (level, text, slug, 1-based line)."""
        return [tuple(h) for h in self._store().notes.headings(note_id)]  # type: ignore[misc]

    def note_card(self, note_id: int) -> NoteCard:
        """What hovering a link to a note shows."""
        return note_card(self._store(), note_id, self.note_file)

    def backlink_places(
        self, note_id: int, text_of: Callable[[Path], str | None]
    ) -> list[LinkPlace]:
        """Every link to a note, placed in its file (``text_of`` gives an open file's
        unsaved text, else None and the file is read)."""
        from kb.links.check import file_of

        rows = self._store().links.backlinks(note_id)
        return backlink_places(rows, lambda path: file_of(self.config, path), text_of)

    def notes_tagged(self, tag: str) -> list[NoteRef]:
        """The notes carrying ``tag`` (any case), by path."""
        ids = self._store().notes.filter_ids("tag", tag)
        return sorted((self.note_ref(i) for i in ids), key=lambda n: n.path)

    def suggested_notes(self, target: str, kind: str) -> list[NoteName]:
        """The notes kb check suggests for a broken link to ``target``."""
        store = self._store()
        paths = self.suggestions().close_to(target, kind)
        ids = store.notes.ids_of(paths)
        return store.notes.names([ids[p] for p in paths if p in ids])

    def suggestions(self) -> Suggestions:
        """kb check's suggestions for broken links, built once per store change."""
        from kb.links.check import Suggestions

        store = self._store()
        return self.kept("suggestions", lambda: Suggestions(store))

    def link_index(self) -> LinkIndex:
        """A link index for this thread, kept until the store changes (it fills itself
        from the store as links ask, so a new one per keystroke would read them again)."""
        stamp = (self._store().generation, self._epoch())
        kept = getattr(self._local, "index", None)
        if kept is None or kept[0] != stamp:
            kept = (stamp, self._link_index())
            self._local.index = kept
        return cast("LinkIndex", kept[1])

    def kept(self, name: str, build: Callable[[], T]) -> T:
        """A value kept for every thread until the store changes."""
        key = (name, self._store().generation, self._epoch())
        with self._lock:
            if key in self._values:
                return cast(T, self._values[key])
        value = build()
        with self._lock:
            for old in [k for k in self._values if k[0] == name]:
                del self._values[old]
            self._values[key] = value
        return value


def _stem_counts(names: list[NoteName]) -> dict[str, int]:
    from kb.links.resolve import fold

    counts: dict[str, int] = {}
    for name in names:
        key = fold(name.stem)
        counts[key] = counts.get(key, 0) + 1
    return counts
