"""The notes for a caller that cannot be trusted with paths (the assistant server).

Every file read or written is checked to lie inside the notes roots (``kb.notes.safe_paths``)
and every write names the content hash it read (``kb.notes.writing``), so a write never
lands over a save made since. The facade keeps one-line methods over this class.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kb.errors import KbError, UsageError
from kb.notes.safe_paths import checked_file, folder_inside, refuse_outside
from kb.notes.source import NoteSource, front_matter_fields
from kb.parse.decode import BinaryFile, decode_note
from kb.notes.writing import (
    appended,
    check_version,
    keeping_newlines,
    new_note_file,
    read_versioned,
    replaced_once,
    utf8_text,
    write_if_unchanged,
)

if TYPE_CHECKING:
    from kb.config import Config
    from kb.ingest.run import IngestStats
    from kb.links.moving import MovePlan
    from kb.notes.listing import NoteDetails
    from kb.notes.naming import NoteRef


class Notebook(Protocol):
    """What GuardedNotes needs of the facade."""

    config: Config

    @property
    def home(self) -> Path: ...
    @property
    def notes_root(self) -> Path: ...
    def find_note(self, ref: str, cwd: Path | None = None) -> NoteRef: ...
    def stored_file(self, note_id: int) -> Path | None: ...
    def note_details(self, note: NoteRef) -> NoteDetails: ...
    def ingest_file(self, path: Path) -> IngestStats: ...
    def move(self, note: NoteRef, new_path: str) -> tuple[MovePlan, IngestStats]: ...


class GuardedNotes:
    def __init__(self, notebook: Notebook) -> None:
        self._notebook = notebook

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

    def append(self, ref: str, text: str, expected_hash: str) -> tuple[NoteRef, str]:
        return self._edit(ref, expected_hash, lambda before: appended(before, text))

    def replace(self, ref: str, old: str, new: str, expected_hash: str) -> tuple[NoteRef, str]:
        return self._edit(ref, expected_hash, lambda before: replaced_once(before, old, new))

    def _edit(
        self, ref: str, expected_hash: str, change: Callable[[str], str]
    ) -> tuple[NoteRef, str]:
        source = self.source(ref)
        real = Path(os.path.realpath(source.file))  # a link inside the roots: edit its target
        data = real.read_bytes()
        check_version(real, data, expected_hash)
        edited = keeping_newlines(utf8_text(real, data), change)
        digest = write_if_unchanged(real, expected_hash, edited)
        self._notebook.ingest_file(source.file)
        return source.note, digest

    def create(self, title: str, folder: str | None, tags: list[str]) -> Path:
        book = self._notebook
        chosen = folder if folder is not None else book.config.new_notes_folder
        target = folder_inside(chosen or ".", book.notes_root, self._roots())
        path = new_note_file(target, title, tags)
        book.ingest_file(path)
        return path

    def move(self, ref: str, new_path: str, expected_hash: str) -> tuple[MovePlan, IngestStats]:
        book = self._notebook
        refuse_outside(new_path, self._roots(), book.notes_root)
        source = self.source(ref)
        check_version(source.file, source.file.read_bytes(), expected_hash)
        # kb mv reads NEW_PATH from the current folder; a caller means the notes root.
        tail = "/" if new_path.endswith("/") else ""
        return book.move(source.note, str(book.notes_root / new_path) + tail)
