"""What the terminal UI shows of the notes, built from the store's rows: recent notes,
a note's page, its series, the tag tree, the palette's choices and the preview.

The facade opens the reader and calls these; they are tested without a UI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kb.errors import KbError
from kb.notes.browse import display_markdown, external_url
from kb.notes.facts import NoteFacts, read_facts
from kb.text import clean_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from kb.store import Store

    FileOf = Callable[[str, str], Path]  # (root name, path inside the root) -> the note's file


@dataclass(frozen=True, slots=True)
class NoteSummary:
    id: int
    path: str
    title: str
    date: str | None
    tags: list[str]
    summary: str


class NoteChoice(NamedTuple):
    """A note as the command palette lists it (a NamedTuple: the app makes 100,000)."""

    id: int
    title: str
    path: str
    aliases: tuple[str, ...] = ()  # its name aliases (front matter), for the palette


@dataclass(frozen=True, slots=True)
class PageLink:
    """One link of a page, as the link list shows it."""

    text: str
    target: str  # as written, with #anchor
    kind: str
    rel: str
    line: int
    status: str
    note_id: int | None
    note_title: str | None
    url: str | None  # an external URL (never opened by kb, only shown and copied)


@dataclass(frozen=True, slots=True)
class NotePage(NoteFacts):
    """A note as the app's reader shows it: its facts cleaned for a screen, its body
    prepared for display and its links."""

    markdown: str  # the body, prepared for display (see display_markdown)
    links: list[PageLink] = field(default_factory=list)


@dataclass(slots=True)
class TagNode:
    name: str  # this level's name (``lecture``)
    tag: str  # the full tag (``cs336/lecture``)
    count: int  # notes with this tag or one below it
    children: list[TagNode] = field(default_factory=list)


def tag_tree(counts: list[tuple[str, int]]) -> list[TagNode]:
    """Hierarchical tags (``cs336/lecture``) as a tree; a parent counts its children's notes
    too (an upper bound when a note has several tags below one parent)."""
    roots: list[TagNode] = []
    nodes: dict[str, TagNode] = {}
    for tag, count in sorted(counts, key=lambda item: item[0].casefold()):
        parent: TagNode | None = None
        path = ""
        for part in (p for p in tag.split("/") if p):
            path = f"{path}/{part}" if path else part
            node = nodes.get(path.casefold())
            if node is None:
                node = nodes[path.casefold()] = TagNode(part, path, 0)
                (parent.children if parent else roots).append(node)
            node.count += count
            parent = node
    return roots


def recent(store: Store, limit: int, modified: bool = False) -> list[NoteSummary]:
    """The newest notes by date, or with ``modified`` the files changed last."""
    return [
        NoteSummary(
            row.id,
            row.path,
            clean_line(row.title),
            row.date,
            [clean_line(t) for t in store.terms.of_note("tags", row.id)],
            clean_line(row.summary),
        )
        for row in store.notes.recent(limit, modified)
    ]


def note_page(store: Store, note_id: int, file_of: FileOf) -> NotePage:
    """A note as the reader shows it: its Markdown read from the file (the truth), its
    outline and its links. Falls back to the stored text if the file is gone."""
    from kb.parse.decode import BinaryFile, decode_note  # deferred: on first use
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml

    row = store.notes.by_id(note_id)
    if row is None:
        raise KbError(f"note {note_id} is no longer in the store")
    file = file_of(row.root, row.rel)
    try:
        body = split_front_matter(decode_note(file.read_bytes()).text).body
    except (OSError, BinaryFile):
        body = row.text
    links = [
        PageLink(
            text=clean_line(link.text) or clean_line(link.target),
            target=link.target + (f"#{link.anchor}" if link.anchor else ""),
            kind=link.kind,
            rel=link.rel,
            line=link.line,
            status=link.status,
            note_id=link.target_id,
            note_title=clean_line(link.target_title) if link.target_title else None,
            url=external_url(link.target) if link.status == "external" else None,
        )
        for link in store.links.outgoing(note_id)
        if link.kind not in ("anchor", "image")
    ]
    facts = read_facts(store, row, file, clean=True)
    return NotePage(
        **{name: getattr(facts, name) for name in NoteFacts.__slots__},
        markdown=display_markdown(body),
        links=links,
    )


def series(store: Store, note_id: int) -> list[tuple[str, list[NoteSummary]]]:
    """Each series the note is in, with its notes in date order."""
    return [
        (
            clean_line(name),
            [
                NoteSummary(r.id, r.path, clean_line(r.title), r.date, [], "")
                for r in store.terms.notes_in_series(name)
            ],
        )
        for name in store.terms.of_note("series", note_id)
    ]


def titles(store: Store, note_ids: Iterable[int]) -> dict[int, str]:
    """The titles of those notes still in the store (the others are left out)."""
    return {i: clean_line(title) for i, title in store.notes.titles(note_ids).items()}


def note_choices(store: Store) -> list[NoteChoice]:
    """Every note, by path, for choosing one by its title, path or alias."""
    aliases = store.notes.name_aliases()
    return [
        NoteChoice(
            row.id,
            clean_line(row.title),
            row.path,
            tuple(clean_line(a) for a in aliases.get(row.id, ())),
        )
        for row in store.notes.choices()
    ]
