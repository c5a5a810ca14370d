"""Which note does this text name: a path, a title, an alias or a file name.

The rule the CLI (``kb links NOTE``) and ``mention_terms`` in kb.yaml use to turn what
the user typed into one note; fuzzy and pinyin matching would extend it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError, UsageError
from kb.links import NoteName, fold
from kb.text import clean_line

if TYPE_CHECKING:
    from kb.store import Store


@dataclass(slots=True)
class NoteRef:
    id: int
    path: str
    title: str


def note_ref(store: Store, note_id: int) -> NoteRef:
    """The note with this id; KbError when an ingest has removed it meanwhile."""
    row = store.notes.by_id(note_id)
    if row is None:
        raise KbError(f"note {note_id} is no longer in the store")
    return NoteRef(note_id, row.path, clean_line(row.title))


def find_note(store: Store, ref: str, roots: dict[str, Path], cwd: Path, prefixed: bool) -> NoteRef:
    """A note from a path (relative to ``cwd`` or to the notes root), a title or an alias.

    Raises UsageError when nothing matches or when several notes do (listing them)."""
    names = store.notes.names()
    try:
        candidate = (cwd / ref).resolve()
    except RuntimeError:  # a symlink loop (before Python 3.13): it names no file
        candidate = cwd / ref
    for root_name, root_path in roots.items():
        if candidate.is_file() and root_path in candidate.parents:
            rel = candidate.relative_to(root_path).as_posix()
            for note in names:
                if note.root == root_name and note.rel == rel:
                    return note_ref(store, note.id)
    wanted = fold(ref.strip().strip("/"))
    for matches in (
        [n for n in names if fold(_note_path(n, prefixed)) in (wanted, f"{wanted}.md")],
        [n for n in names if fold(n.title) == wanted],
        [n for n in names if wanted in (fold(a) for a in n.aliases)],
        [n for n in names if fold(n.stem) == wanted],
    ):
        unique = {n.id: n for n in matches}
        if len(unique) == 1:
            return note_ref(store, next(iter(unique)))
        if len(unique) > 1:
            listing = "; ".join(
                f"{_note_path(n, prefixed)} ({clean_line(n.title)})"
                for n in sorted(unique.values(), key=lambda n: n.rel)
            )
            raise UsageError(f"{ref!r} names {len(unique)} notes: {listing}")
    raise UsageError(f"no note matches {ref!r}: give its path, title or alias")


def _note_path(note: NoteName, prefixed: bool) -> str:
    return f"{note.root}/{note.rel}" if prefixed else note.rel
