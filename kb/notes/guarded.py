"""The notes for a caller that cannot be trusted with paths (the assistant server).

Every file read or written is checked to lie inside the notes roots (``kb.notes.safe_paths``),
and so is every note an answer names (``shown``): text from outside the roots reaches no
answer, whatever the store holds. Every write names the content hash it read
(``kb.notes.writing``) and holds kb's write lock on the note from that check to the
rename (``kb.notes.note_lock``), so a write never lands over a save made since. The
facade keeps one-line methods over this class.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kb.errors import KbError, UsageError
from kb.notes.note_lock import note_locks
from kb.notes.safe_paths import (
    checked_file,
    folder_inside,
    real_roots,
    refuse_outside,
)
from kb.notes.source import NoteSource, Written, front_matter_fields
from kb.notes.writing import (
    appended,
    check_version,
    content_hash,
    keeping_newlines,
    new_note_file,
    read_versioned,
    replaced_once,
    utf8_text,
    write_if_unchanged,
)
from kb.parse.decode import BinaryFile, decode_note
from kb.text import clean_line

if TYPE_CHECKING:
    from kb.config import Config
    from kb.ingest.run import IngestStats
    from kb.links.connections import Connections
    from kb.links.moves import Moves
    from kb.links.moving import MovePlan
    from kb.links.note_links import NoteLinks
    from kb.notes.listing import NoteDetails
    from kb.notes.naming import NoteRef
    from kb.notes.views import NoteChoice, TagNode


class Notebook(Protocol):
    """What GuardedNotes needs of the facade."""

    config: Config

    @property
    def home(self) -> Path: ...
    @property
    def notes_root(self) -> Path: ...
    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef: ...
    def stored_file(self, note_id: int) -> Path | None: ...
    def note_file(self, root: str, rel: str) -> Path: ...
    def note_ref(self, note_id: int) -> NoteRef: ...
    def note_choices(self) -> list[NoteChoice]: ...
    def generation(self) -> int: ...
    def tag_counts(self, sort: str = "count") -> list[tuple[str, int]]: ...
    @property
    def links(self) -> NoteLinks: ...
    def note_details(self, note: NoteRef) -> NoteDetails: ...
    def ingest_file(self, path: Path) -> IngestStats: ...
    @property
    def moves(self) -> Moves: ...


class GuardedNotes:
    def __init__(self, notebook: Notebook) -> None:
        self._notebook = notebook
        self._hidden: tuple[int, dict[int, str]] | None = None  # (store generation, notes)

    def _roots(self) -> list[Path]:
        return [root.path for root in self._notebook.config.roots]

    def source(self, ref: str) -> NoteSource:
        """The note ``ref`` names (kb's naming rule, from the knowledge base's folder) with
        its file's Markdown and content hash; a UsageError, nothing read, when the name
        or the note's file leads outside the notes roots."""
        book = self._notebook
        refuse_outside(ref, self._roots(), book.home)
        note = book.find_note(ref, cwd=book.home)
        stored = book.stored_file(note.id)
        if stored is None:
            raise KbError(f"{note.path} is no longer in the store; run 'kb ingest'")
        file = checked_file(stored, self._roots())
        data, digest = read_versioned(file)
        try:
            markdown = decode_note(data).text
        except BinaryFile:
            raise UsageError(f"{note.path} is not a text file") from None
        details = book.note_details(note)
        return NoteSource(note, file, markdown, digest, front_matter_fields(markdown), details)

    # -- one confinement for every answer ------------------------------------------------
    # What a caller gets of a note (its text, title, tags, a line around a link) comes
    # only from a note whose file lies inside the notes roots when it is asked: a note
    # replaced by a link to elsewhere after the ingest, or one reached through a link
    # out (follow_external_symlinks), is left out of every answer.

    def readable(self, file: Path | None) -> bool:
        """Whether ``file`` (a note's file) leads inside the notes roots now."""
        if file is None:
            return False
        real = os.path.realpath(file)  # strings: asked for every note an answer names
        return any(real == root or real.startswith(below) for root, below in self._real_roots)

    @functools.cached_property
    def _real_roots(self) -> list[tuple[str, str]]:
        # A root with its trailing separator, for a prefix test (a Path drops the separator).
        return [(str(root), os.path.join(root, "")) for root in real_roots(self._roots())]  # noqa: PTH118

    def shown(self, path: str) -> bool:
        """Whether the stored note at ``path`` (as answers name it) may be named in an
        answer: its file leads inside the roots now."""
        config = self._notebook.config
        root, rel = (config.roots[0].name, path)
        if config.prefixed:
            root, _, rel = path.partition("/")
        try:
            return self.readable(self._notebook.note_file(root, rel))
        except KbError:  # a root no longer in kb.yaml
            return False

    def confined_file(self, root: str, rel: str) -> Path | None:
        """The file of a note when it leads inside the roots, else None (not read)."""
        file = self._notebook.note_file(root, rel)
        return file if self.readable(file) else None

    def connections(self, note: NoteRef, related_limit: int) -> Connections:
        """``note``'s links, backlinks, mentions and related notes, each other note only
        when its file lies inside the roots, and read only then."""
        from dataclasses import replace  # deferred: on first use

        found = self._notebook.links.connections(note, related_limit, self.confined_file)
        outgoing = []
        for link in found.outgoing:
            if link.path is not None and not self.shown(link.path):
                outgoing.append(
                    replace(link, path=None, title=None, resolved=False, status="outside")
                )
            else:
                outgoing.append(link)
        return replace(
            found,
            outgoing=outgoing,
            backlinks=[b for b in found.backlinks if self.shown(b.path)],
            mentions=[m for m in found.mentions if self.shown(m.path)],
            related=[r for r in found.related if self.shown(r.path)],
        )

    def hidden(self) -> dict[int, str]:
        """The stored notes (id: path) whose files lead outside the roots. Only a store
        that followed links out (follow_external_symlinks) holds text from outside: else
        none (a note replaced by a link out since the ingest is caught by ``shown``)."""
        book = self._notebook
        if not book.config.follow_external_symlinks:
            return {}
        generation = book.generation()  # a link re-pointed since is caught by ``shown``
        if self._hidden is None or self._hidden[0] != generation:
            outside = {c.id: c.path for c in book.note_choices() if not self.shown(c.path)}
            self._hidden = (generation, outside)
        return self._hidden[1]

    def tag_tree(self) -> list[TagNode]:
        """The tags as a tree, the notes outside the roots not counted."""
        from kb.notes.views import tag_tree  # deferred: 8 modules more

        return tag_tree(self.tag_counts("name"))

    def tag_counts(self, sort: str) -> list[tuple[str, int]]:
        """Every tag with its number of notes, the notes outside the roots not counted."""
        counts = self._notebook.tag_counts(sort)
        hidden = self.hidden()
        if not hidden:
            return counts
        left = dict(counts)
        for note_id in hidden:
            for tag in self._notebook.note_details(self._notebook.note_ref(note_id)).tags:
                if tag in left:
                    left[tag] -= 1
        return [(tag, left[tag]) for tag, _ in counts if left[tag] > 0]

    def append(self, ref: str, text: str, expected_hash: str) -> Written:
        return self._edit(ref, expected_hash, lambda before: appended(before, text))

    def replace(self, ref: str, old: str, new: str, expected_hash: str) -> Written:
        return self._edit(ref, expected_hash, lambda before: replaced_once(before, old, new))

    def _edit(self, ref: str, expected_hash: str, change: Callable[[str], str]) -> Written:
        source = self.source(ref)
        real = Path(os.path.realpath(source.file))  # a link inside the roots: edit its target
        # From the hash check to the rename no other kb writer touches the note.
        with note_locks(self._notebook.config.index_dir, [real]):
            data, _ = read_versioned(real)
            check_version(real, data, expected_hash)
            edited = keeping_newlines(utf8_text(real, data), change)
            digest = write_if_unchanged(real, expected_hash, edited)
        return Written(source.note, digest, self._index(source.file))

    def _index(self, file: Path) -> str:
        """Bring the store up to date with a file just written; '' when done, else why
        not (the note is written either way: the next ingest catches up)."""
        try:
            self._notebook.ingest_file(file)
        except KbError as exc:
            return str(exc)
        return ""

    def create(self, title: str, folder: str | None, tags: list[str]) -> Written:
        """A new note from kb's template in ``folder`` (relative to the notes root), which
        must be a folder kb reads: inside the roots, not hidden, not excluded."""
        book = self._notebook
        chosen = folder if folder is not None else book.config.new_notes_folder
        target = folder_inside(chosen or ".", book.notes_root, self._roots())
        skipped = self._unread_folder(target)
        if skipped:
            raise UsageError(
                f"folder {clean_line(chosen or '.')!r} is one kb does not read ({skipped}); "
                "give a folder whose notes kb ingests"
            )
        made = [f for f in (target, *target.parents) if not f.exists()]  # innermost first
        path = new_note_file(target, title, tags)
        skipped = self._unread_folder(Path(os.path.realpath(path)))
        if skipped:  # the name itself is one exclude: names (a title like x.tmp)
            path.unlink()
            for empty in made:
                empty.rmdir()
            raise UsageError(
                f"a note titled {clean_line(title)!r} would be {clean_line(path.name)}, which "
                f"kb does not read ({skipped}); nothing was created, choose another title"
            )
        unindexed = self._index(path)
        note = self._created(path)
        return Written(note, content_hash(path.read_bytes()), unindexed)

    def _unread_folder(self, target: Path) -> str:
        """Why kb's walk skips the (real) folder or file ``target``; '' when it reads it."""
        from kb.ingest.walk import exclusion_rule  # deferred: the walk's rules, on first use

        config = self._notebook.config
        for root, real in zip(config.roots, real_roots(self._roots()), strict=True):
            if target == real or real in target.parents:
                rel = target.relative_to(real).as_posix()
                inner = next((i for i in root.inner if f"{rel}/".startswith(f"{i}/")), None)
                if inner is not None:
                    continue  # a nested root's folder: that root decides
                return exclusion_rule(rel, config) if rel != "." else ""
        return "it is not inside a notes root"

    def _created(self, path: Path) -> NoteRef:
        """The stored note of the file just created, found by its file, never by a
        name that could mean another note."""
        book = self._notebook
        real = os.path.realpath(path)
        try:
            note = book.find_note(str(path), cwd=book.home)
        except KbError:
            note = None
        stored = book.stored_file(note.id) if note is not None else None
        if note is None or stored is None or os.path.realpath(stored) != real:
            raise KbError(
                f"{clean_line(str(path))} was created, but the store does not hold it yet; "
                "run 'kb ingest'"
            )
        return note

    def move(self, ref: str, new_path: str, expected_hash: str) -> tuple[MovePlan, IngestStats]:
        book = self._notebook
        refuse_outside(new_path, self._roots(), book.notes_root)
        source = self.source(ref)

        def unchanged(plan: MovePlan) -> None:  # under the notes' write locks
            check_version(plan.source, plan.source.read_bytes(), expected_hash)

        check_version(source.file, source.file.read_bytes(), expected_hash)
        # kb mv reads NEW_PATH from the current folder; a caller means the notes root.
        tail = "/" if new_path.endswith("/") else ""
        return book.moves.move(source.note, str(book.notes_root / new_path) + tail, unchanged)
