"""How a note connects to the others: outgoing links, backlinks, unlinked mentions and
related notes.

Everything the CLI's ``kb links``/``kb graph`` and the TUI's connection panes show comes
from here, tested without either front end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.text import clean_line

# (root name, path inside the root) -> the note's file, or None when it may not be read
FileOf = Callable[[str, str], Path | None]

if TYPE_CHECKING:
    from kb.notes.naming import NoteRef
    from kb.store import Store

# A folder's index note is titled by its folder's subject (高可用架构, Using Foam): text that
# says those words means the subject, not the index page.
INDEX_STEMS = frozenset({"readme", "index", "_index"})
RELATED_LIMIT = 10
CONTEXT_CHARS = 40  # shown each side of a mention or a link


@dataclass(slots=True)
class OutgoingLink:
    target: str  # as written
    anchor: str
    kind: str
    rel: str
    line: int
    status: str
    resolved: bool
    path: str | None  # the target note's path when resolved
    title: str | None


@dataclass(slots=True)
class LinkPlace:
    """One link from another note to this one: where it is written, and its line."""

    line: int
    kind: str
    rel: str
    context: str  # the line the link is on, as text (empty for a front-matter link)


@dataclass(slots=True)
class Backlink:
    """Another note that links here, once, with every place it does."""

    id: int  # the other note
    path: str
    title: str
    kind: str  # of its first link (the places have each one's)
    rel: str  # the first typed-link key among its links, else ''
    line: int  # of its first link
    places: list[LinkPlace] = field(default_factory=list)


@dataclass(slots=True)
class Mention:
    id: int  # the other note
    path: str
    title: str
    name: str  # the title or alias that was named
    line: int
    context: str


@dataclass(slots=True)
class Related:
    id: int  # the other note
    path: str
    title: str
    score: float
    reason: str


@dataclass(slots=True)
class Connections:
    note: NoteRef
    outgoing: list[OutgoingLink] = field(default_factory=list)
    backlinks: list[Backlink] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "note": asdict(self.note),
            "outgoing": [asdict(x) for x in self.outgoing],
            "backlinks": [asdict(x) for x in self.backlinks],
            "mentions": [asdict(x) for x in self.mentions],
            "related": [asdict(x) for x in self.related],
        }


# -- links and backlinks ------------------------------------------------------------------


def outgoing(store: Store, note_id: int) -> list[OutgoingLink]:
    return [
        OutgoingLink(
            target=row.target,
            anchor=row.anchor,
            kind=row.kind,
            rel=row.rel,
            line=row.line,
            status=row.status,
            resolved=row.target_id is not None and row.status != "broken",
            path=row.target_path,
            title=clean_line(row.target_title) if row.target_title else None,
        )
        for row in store.links.outgoing(note_id)
        if row.kind != "anchor"
    ]


def backlinks(store: Store, note_id: int, file_of: FileOf | None = None) -> list[Backlink]:
    """The notes that link here, one entry each (by path), with the line of context around
    every link: ``file_of`` reads it from the source file (else contexts are empty)."""
    grouped: dict[int, Backlink] = {}
    lines: dict[int, list[str]] = {}
    for row in store.links.backlinks(note_id):
        entry = grouped.get(row.source_id)
        if entry is None:
            entry = grouped[row.source_id] = Backlink(
                row.source_id,
                row.source_path,
                clean_line(row.source_title),
                row.kind,
                row.rel,
                row.line,
            )
            lines[row.source_id] = _source_lines(store, row.source_id, file_of)
        if row.rel and not entry.rel:
            entry.rel = row.rel
        text = lines[row.source_id]
        in_text = row.kind != "front-matter" and 0 < row.line <= len(text)
        context = _around(text[row.line - 1], row.text or row.target) if in_text else ""
        place = LinkPlace(row.line, row.kind, row.rel, context)
        if place not in entry.places:
            entry.places.append(place)
    for entry in grouped.values():
        entry.places.sort(key=lambda p: (p.line, p.kind))
    return sorted(grouped.values(), key=lambda b: b.path)


def _source_lines(store: Store, note_id: int, file_of: FileOf | None) -> list[str]:
    row = store.notes.by_id(note_id) if file_of is not None else None
    if row is None or file_of is None:
        return []
    return read_note_file(file_of(row.root, row.rel)).splitlines()


def _around(line: str, written: str, width: int = 2 * CONTEXT_CHARS) -> str:
    """The line, cut to about ``width`` characters around what the link wrote."""
    line = clean_line(line)
    if len(line) <= width + CONTEXT_CHARS:
        return line
    at = max(line.find(written), 0) if written else 0
    start = max(0, min(at - CONTEXT_CHARS, len(line) - width))
    return ("…" if start else "") + line[start : start + width] + "…"


# -- mentions -------------------------------------------------------------------------------


def read_note_file(path: Path | None) -> str:
    if path is None:  # a file the caller may not read (kb mcp: one leading out of the roots)
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# -- related notes ------------------------------------------------------------------------
