"""What the store returns and takes: frozen rows named for what they hold.

Nothing outside ``kb.store`` sees a ``sqlite3.Row``; each query builds one of these.

Rows are ``typing.NamedTuple``: frozen and typed like a frozen dataclass, but about ten
times cheaper to define, and this module is imported by every command (each
``@dataclass(frozen=True, slots=True)`` cost 1.5 ms of start-up). A NamedTuple has no
inherited fields, so a row that extends another repeats its fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kb.models import ParsedNote


# (path, size, mtime_ns, is_note) of a stored file: a plain tuple, as SQLite returns it,
# because a no-op ingest of 100,000 notes reads one per note (see NoteDao.stat_stamps).
StatStamp = tuple[str, int, int, int]


class FileStamp(NamedTuple):
    """What the store remembers of a file, to tell unchanged files with one stat."""

    note_id: int | None  # None for a skipped (non-note) file
    size: int
    mtime_ns: int
    hash: str


class NoteRecord(NamedTuple):
    """A parsed note with the facts about its file, ready to write."""

    path: str
    root: str
    rel: str
    hash: str
    mtime_ns: int
    size: int
    encoding: str
    parsed: ParsedNote
    streams: tuple[str, ...] | None = None  # search tokens, made in the worker process
    packed: tuple[bytes, bytes] | None = None  # text and code packed (pack_text) there too


class NoteRow(NamedTuple):
    """A stored note: every column of ``notes``."""

    id: int
    path: str  # relative to its root's parent: the note's identity
    root: str
    rel: str  # path inside the root
    title: str
    date: str | None
    draft: bool
    slug: str | None
    hash: str
    mtime_ns: int
    size: int
    encoding: str
    word_count: int
    summary: str
    front_matter: str  # JSON
    generation: int  # the store generation that last changed it


class NoteText(NamedTuple):
    """A stored note with its plain text and its code blocks, unpacked: ``NoteRow``'s
    fields, then two."""

    id: int
    path: str  # relative to its root's parent: the note's identity
    root: str
    rel: str  # path inside the root
    title: str
    date: str | None
    draft: bool
    slug: str | None
    hash: str
    mtime_ns: int
    size: int
    encoding: str
    word_count: int
    summary: str
    front_matter: str  # JSON
    generation: int  # the store generation that last changed it

    text: str
    code: str


class ChoiceRow(NamedTuple):
    """A note as one is chosen by name: id, title and path."""

    id: int
    title: str
    path: str


class NoteListRow(NamedTuple):
    """A note in a listing (all notes, a series)."""

    id: int
    path: str
    title: str
    date: str | None
    draft: bool
    word_count: int


class ListedRow(NamedTuple):
    """A note as ``kb list`` filters and sorts it."""

    id: int
    path: str
    root: str
    rel: str
    title: str
    date: str | None
    draft: bool
    word_count: int
    mtime_ns: int


class RecentRow(NamedTuple):
    """A note among the newest, with its summary."""

    id: int
    path: str
    title: str
    date: str | None
    summary: str


class HeadingRow(NamedTuple):
    level: int
    text: str
    slug: str
    line: int


class AliasRow(NamedTuple):
    alias: str
    kind: str  # name | url


class LinkRow(NamedTuple):
    """A link as written in its source note, with where it was resolved to."""

    id: int
    source_id: int
    target: str  # as written, without the #anchor
    anchor: str
    kind: str
    rel: str  # front-matter key of a typed link, else ''
    text: str
    line: int
    target_id: int | None  # None when it leads to no note
    status: str  # resolved | ambiguous | missing-heading | broken | external | attachment | new


class OutgoingLinkRow(NamedTuple):
    """A link from a note, with the note it leads to (if any): ``LinkRow``'s fields, then two."""

    id: int
    source_id: int
    target: str  # as written, without the #anchor
    anchor: str
    kind: str
    rel: str  # front-matter key of a typed link, else ''
    text: str
    line: int
    target_id: int | None  # None when it leads to no note
    status: str  # resolved | ambiguous | missing-heading | broken | external | attachment | new

    target_path: str | None
    target_title: str | None


class BacklinkRow(NamedTuple):
    """A link to a note, with the note it comes from: ``LinkRow``'s fields, then two."""

    id: int
    source_id: int
    target: str  # as written, without the #anchor
    anchor: str
    kind: str
    rel: str  # front-matter key of a typed link, else ''
    text: str
    line: int
    target_id: int | None  # None when it leads to no note
    status: str  # resolved | ambiguous | missing-heading | broken | external | attachment | new

    source_path: str
    source_title: str


class LinkProblemRow(NamedTuple):
    """A broken, ambiguous or missing-heading link, for ``kb check``."""

    path: str  # of the note that holds the link
    line: int
    kind: str
    target: str
    anchor: str
    status: str
    target_path: str | None  # the note chosen (ambiguous) or lacking the heading


class ProblemRow(NamedTuple):
    """A warning about a note or a file that could not become one."""

    path: str
    kind: str
    message: str
    line: int | None


class GraphEdgeRow(NamedTuple):
    """A resolved link between two different notes (one per kind and relation)."""

    source_id: int
    target_id: int
    kind: str
    rel: str


class SharedTerm(NamedTuple):
    """Another note with a tag (or series, category) of this one, and how common it is."""

    note_id: int
    name: str
    notes_with_it: int


class CoLinked(NamedTuple):
    """Another note linking to the same note as this one, or linked from the same note."""

    note_id: int
    shared_id: int
    shared_degree: int  # how many links the shared note has on that side
