"""A note as an editor holds it: its unsaved text parsed as ingest parses a file, its
links resolved against the store, and what ``kb check`` would report for it.

The editor server (``kb lsp``) asks the facade, which calls these; the text need not be
saved, and the note need not be in the store yet (a new file links and is checked as if
it were).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError
from kb.models import DEFAULT_TYPED_LINK_KEYS, ParsedNote
from kb.names.resolve import LinkIndex, LinkToResolve, NoteName
from kb.notes.editor import PlacedLink, placed_links
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
    return parsed, placed_links(text, typed_link_keys)


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
    typed_link_keys: Iterable[str] = DEFAULT_TYPED_LINK_KEYS,
) -> list[LinkPlace]:
    """Each backlink row placed in its source file as saved (the store read that text):
    where the parser's spans put the link's target, else the whole line."""
    from kb.parse.decode import BinaryFile, decode_note  # deferred: 2 modules more

    by_file: dict[Path, list] = {}
    for row in rows:
        by_file.setdefault(file_of(row.source_path), []).append(row)
    found: list[LinkPlace] = []
    for file, links in sorted(by_file.items()):
        try:
            text = decode_note(file.read_bytes()).text
        except (OSError, BinaryFile):
            text = ""
        found.extend(place_rows(file, links, normalise(text), typed_link_keys))
    return sorted(found, key=lambda p: (str(p.file), p.line, p.start))


def place_rows(
    file: Path, rows: list, text: str, typed_link_keys: Iterable[str] = DEFAULT_TYPED_LINK_KEYS
) -> list[LinkPlace]:
    """The stored links ``rows`` (kind, target, anchor, 1-based line) of the note whose
    normalised text is ``text``, placed by the parser's spans: the n-th row of a line
    with a given kind, target and anchor is the n-th such link on that line (a target's
    text written earlier on the line, in prose or in another link, is never taken for
    it). A reference-style link (its target is written elsewhere, in its definition)
    and a row kb cannot place stand for their whole line.

    Each line is parsed alone first (a note with a thousand backlinks answers at once);
    the whole text is parsed only for a line where that does not give as many links of
    each kind, target and anchor as the store has there (a link in a construct that
    spans lines, or in front matter)."""
    lines = text.split("\n")
    by_line: dict[int, list] = {}
    for row in sorted(rows, key=lambda r: (r.line, r.id)):
        by_line.setdefault(max(row.line - 1, 0), []).append(row)
    found: list[LinkPlace] = []
    left: list = []
    for line, line_rows in by_line.items():
        line_text = lines[line] if line < len(lines) else ""
        placed = [r for r in line_rows if r.kind != "reference"]
        for row in line_rows:
            if row.kind == "reference":
                found.append(_place(file, row, line, 0, len(line_text), line_text))
        if not placed:
            continue
        alone = [p for p in placed_links(line_text, typed_link_keys) if p.line == 0]
        written = [(p.kind, p.target, p.anchor) for p in alone]
        if any(_keys(placed).count(key) != written.count(key) for key in _keys(placed)):
            left.extend(placed)
            continue
        for row in placed:
            link = alone.pop(written.index(_key(row)))
            written.remove(_key(row))
            found.append(_place(file, row, line, link.start, link.end, line_text))
    if left:
        found.extend(_place_in_text(file, left, text, lines, typed_link_keys))
    return found


def _key(row: object) -> tuple[str, str, str]:
    return (row.kind, row.target, row.anchor)  # type: ignore[attr-defined]


def _keys(rows: list) -> list[tuple[str, str, str]]:
    return [_key(row) for row in rows]


def _place(file: Path, row: object, line: int, start: int, end: int, text: str) -> LinkPlace:
    kind, target, anchor = _key(row)
    return LinkPlace(file, line, start, end, kind, target, anchor, text)


def _place_in_text(
    file: Path, rows: list, text: str, lines: list[str], typed_link_keys: Iterable[str]
) -> list[LinkPlace]:
    """``place_rows`` over the whole text, parsed once."""
    placed = placed_links(text, typed_link_keys)
    free: dict[int, list[PlacedLink]] = {}  # by line, the links no row has taken yet
    for each in placed:
        free.setdefault(each.line, []).append(each)
    found = []
    for row in rows:
        line = max(row.line - 1, 0)
        on_line = free.get(line, [])
        same = [p for p in on_line if (p.kind, p.target) == (row.kind, row.target)]
        link: PlacedLink | None = next(
            (p for p in same if p.anchor == row.anchor), same[0] if same else None
        )
        if link is not None:
            on_line.remove(link)
            line, start, end = link.line, link.start, link.end
        else:
            start, end = 0, len(lines[line]) if line < len(lines) else 0
        line_text = lines[line] if line < len(lines) else ""
        found.append(_place(file, row, line, start, end, line_text))
    return found
