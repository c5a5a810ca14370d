"""A note as an editor holds it: its unsaved text parsed as ingest parses a file, its
links resolved against the store, and what ``kb check`` would report for it.

The editor server (``kb lsp``) asks the facade, which calls these; the text need not be
saved, and the note need not be in the store yet (a new file links and is checked as if
it were).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb.notes.editor import PlacedLink, placed_links
from kb.links.resolve import LinkIndex, LinkToResolve, NoteName
from kb.models import ParsedNote
from kb.errors import KbError
from kb.text import clean_line

if TYPE_CHECKING:
    from kb.store import Store

# Statuses kb check reports, as its problem kinds.
PROBLEM_KINDS = {
    "broken": "broken-link",
    "missing-file": "missing-file",
    "missing-heading": "missing-heading",
    "ambiguous": "ambiguous-link",
}
UNSTORED_ID = -1  # the id a note not yet in the store resolves its links under


@dataclass(frozen=True, slots=True)
class BufferLink:
    """A link of the buffer with where it leads: ``status`` as the store would record it
    (resolved, broken, missing-heading, ambiguous, external, attachment, missing-file)."""

    placed: PlacedLink
    status: str
    target_id: int | None


@dataclass(slots=True)
class Buffer:
    """The open note: its normalised text, what the parser read, and its links."""

    text: str
    parsed: ParsedNote
    links: list[BufferLink]
    note_id: int | None  # in the store, or None (a new note, or outside the roots)
    root: str | None
    rel: str | None


@dataclass(frozen=True, slots=True)
class BufferProblem:
    """What kb check reports, placed in the buffer (0-based line, string indexes)."""

    kind: str
    message: str
    line: int
    start: int
    end: int


def normalise(text: str) -> str:
    """Line ends as ingest reads a file (``\\n``), so lines and columns stay the same."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_buffer(text: str, rel: str, typed_link_keys: tuple[str, ...]) -> ParsedNote:
    """The buffer parsed as ingest parses a file; an odd text is kept as plain text."""
    # deferred: loads linkify_it, markdown_it, yaml
    from kb.parse.note import fallback_note, parse_note

    try:
        return parse_note(rel, text, typed_link_keys)
    except RecursionError as exc:
        return fallback_note(rel, text, str(exc) or "too deeply nested")


def parse_text(
    text: str, rel: str, typed_link_keys: tuple[str, ...]
) -> tuple[ParsedNote, list[PlacedLink]]:
    """What the store plays no part in: the (normalised) text parsed, its links placed."""
    parsed = parse_buffer(text, rel, typed_link_keys)
    return parsed, placed_links(text, parsed, typed_link_keys)


def read_buffer(
    text: str,
    place: tuple[str, str] | None,
    stored: NoteName | None,
    index: LinkIndex | None,
    typed_link_keys: tuple[str, ...],
    read_text: tuple[ParsedNote, list[PlacedLink]] | None = None,
) -> Buffer:
    """The buffer at ``place`` (root name, path in the root; None outside every root),
    its links resolved through ``index`` (None: no store, every link unresolved).
    ``read_text`` is ``parse_text`` of this text, when the caller kept it."""
    text = normalise(text)
    rel = place[1] if place else "note.md"
    parsed, placed = read_text or parse_text(text, rel, typed_link_keys)
    source: NoteName | None = stored
    if source is None and place is not None and index is not None:
        source = NoteName(UNSTORED_ID, place[0], place[1], parsed.title)
        dict.__setitem__(index.notes, UNSTORED_ID, source)  # past the store's lazy loading
    links = []
    for link in placed:
        if index is None or source is None:
            links.append(BufferLink(link, "unknown", None))
            continue
        found = index.resolve(LinkToResolve(0, source.id, link.target, link.anchor, link.kind))
        target = None if found.target_id == UNSTORED_ID else found.target_id
        links.append(BufferLink(link, found.status, target))
    return Buffer(text, parsed, links, stored.id if stored else None, *(place or (None, None)))


def buffer_problems(
    buffer: Buffer,
    store: Store,
    link_problem: Callable[[object], tuple[str, str]],
    note_path: str | None,
) -> list[BufferProblem]:
    """What kb check reports for this buffer: its links' problems (``link_problem``
    words them as kb check does), a title another note has, the parser's warnings."""
    from kb.store.rows import LinkProblemRow  # deferred: 26 modules more

    problems = []
    for link in buffer.links:
        kind = PROBLEM_KINDS.get(link.status)
        if kind is None:
            continue
        placed = link.placed
        chosen = None
        if link.target_id is not None:
            row = store.notes.by_id(link.target_id)
            chosen = row.path if row else None
        problem_row = LinkProblemRow(
            note_path or "", placed.line + 1, placed.kind, placed.target, placed.anchor,
            link.status, chosen,
        )  # fmt: skip
        kind, message = link_problem(problem_row)
        problems.append(BufferProblem(kind, message, placed.line, placed.start, placed.end))
    others = []
    if buffer.rel is not None:
        same = [i for i in store.notes.ids_titled(buffer.parsed.title) if i != buffer.note_id]
        rows = [store.notes.by_id(i) for i in same[:20]]  # one title shared by hundreds: 20
        others = sorted(row.path for row in rows if row is not None)
    if others:
        line = _title_line(buffer.text)
        message = f"same title as {', '.join(p for p in others if p)}"
        problems.append(BufferProblem("duplicate-title", message, line, 0, 0))
    for warning in buffer.parsed.problems:
        line = max((warning.line or 1) - 1, 0)
        message = f"{warning.kind}: {warning.message}"
        problems.append(BufferProblem("parse-warning", message, line, 0, 0))
    return problems


def _title_line(text: str) -> int:
    """The line that gives the note its title: ``title:`` or the first ``# ``."""
    for number, line in enumerate(text.split("\n")):
        if line.startswith(("title:", "title =", "# ")):
            return number
    return 0


def file_place(file: Path, roots: dict[str, Path]) -> tuple[str, str] | None:
    """The (root name, POSIX path in the root) of a file inside a notes root."""
    for name, root in roots.items():
        try:
            rel = file.relative_to(root)
        except ValueError:
            continue
        return name, rel.as_posix()
    return None


@dataclass(frozen=True, slots=True)
class NoteCard:
    """What hovering a link to a note shows."""

    id: int
    title: str
    path: str
    file: Path
    date: str | None
    tags: list[str]
    summary: str
    backlinks: int


def note_card(store: Store, note_id: int, file_of: Callable[[str, str], Path]) -> NoteCard:

    row = store.notes.by_id(note_id)
    if row is None:
        raise KbError(f"note {note_id} is no longer in the store")
    sources = {b.source_id for b in store.links.backlinks(note_id) if b.source_id != note_id}
    return NoteCard(
        note_id,
        clean_line(row.title),
        row.path,
        file_of(row.root, row.rel),
        row.date,
        [clean_line(t) for t in store.terms.of_note("tags", note_id)],
        clean_line(row.summary),
        len(sources),
    )


@dataclass(frozen=True, slots=True)
class LinkPlace:
    """A link placed in a file: 0-based line, target start and end (string indexes in
    the line; the whole line when kb cannot place the target exactly)."""

    file: Path
    line: int
    start: int
    end: int
    kind: str
    target: str
    anchor: str
    text: str  # the line, for converting the indexes to an editor's units


def backlink_places(
    rows: list,
    file_of: Callable[[str], Path],
    text_of: Callable[[Path], str | None],
) -> list[LinkPlace]:
    """Each backlink row placed on its line of its source (open buffer or file): the
    target where the line holds it as written, else the whole line. Only the lines are
    read, never parsed (a note with a thousand backlinks answers at once)."""
    from kb.parse.decode import BinaryFile, decode_note  # deferred: 2 modules more

    by_file: dict[Path, list] = {}
    for row in rows:
        by_file.setdefault(file_of(row.source_path), []).append(row)
    found: list[LinkPlace] = []
    for file, links in sorted(by_file.items()):
        text = text_of(file)
        if text is None:
            try:
                text = decode_note(file.read_bytes()).text
            except (OSError, BinaryFile):
                text = ""
        lines = normalise(text).split("\n")
        for row in links:
            line = max(row.line - 1, 0)
            line_text = lines[line] if line < len(lines) else ""
            start = line_text.find(row.target) if row.target else -1
            end = start + len(row.target)
            if start == -1:
                start, end = 0, len(line_text)
            found.append(
                LinkPlace(file, line, start, end, row.kind, row.target, row.anchor, line_text)
            )
    return sorted(found, key=lambda p: (str(p.file), p.line, p.start))
