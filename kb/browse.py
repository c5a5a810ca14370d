"""Browsing: what the terminal UI shows, computed here so it is tested without a UI.

A note's page (its Markdown prepared for display, its outline and links), following a
link from it, browser-style history, the tag tree, series order, and new notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import quote, unquote

from kb.fences import code_lines
from kb.text import clean_line, clean_text, slugify

KB_SCHEME = "kb:"
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_REF_IN_LINK = re.compile(r"\]\(\s*\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}\s*\)")
_REF = re.compile(r"\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class NoteSummary:
    id: int
    path: str
    title: str
    date: str | None
    tags: list[str]
    summary: str


@dataclass(frozen=True, slots=True)
class NoteChoice:
    """A note as the command palette lists it."""

    id: int
    title: str
    path: str


@dataclass(frozen=True, slots=True)
class NotePreview:
    """A note's stored plain text, cheap to show beside the search results."""

    id: int
    title: str
    path: str
    text: str


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


@dataclass(slots=True)
class NotePage:
    id: int
    path: str
    file: Path
    title: str
    date: str | None
    tags: list[str]
    series: list[str]
    markdown: str  # the body, prepared for display (see display_markdown)
    headings: list[tuple[int, str, str]]  # (level, text, slug)
    links: list[PageLink] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Follow:
    """Where following a link leads."""

    kind: str  # note | external | anchor | unresolved
    note_id: int | None = None
    anchor: str = ""
    url: str = ""
    target: str = ""


def display_markdown(body: str) -> str:
    """A note body ready for a Markdown widget: control characters stripped (bidi controls
    are kept, as a link target may hold them: the widget shows them), and wikilinks
    and Hugo ``ref`` shortcodes (which no Markdown renderer knows) turned into ``kb:``
    links that the UI hands back to ``follow``. Code is left exactly as written."""
    return "\n".join(
        line if is_code else _rewrite_links(line)
        for line, is_code in code_lines(clean_text(body).split("\n"))
    )


def _rewrite_links(line: str) -> str:
    # Split on inline code spans so `[[x]]` in backticks stays text.
    parts = re.split(r"(`+[^`]*`+)", line)
    for index in range(0, len(parts), 2):
        part = _REF_IN_LINK.sub(lambda m: f"]({KB_SCHEME}ref/{quote(m.group(1))})", parts[index])
        part = _REF.sub(lambda m: f"[{m.group(1)}]({KB_SCHEME}ref/{quote(m.group(1))})", part)
        parts[index] = _WIKILINK.sub(_wikilink_to_markdown, part)
    return "".join(parts)


def _wikilink_to_markdown(match: re.Match[str]) -> str:
    inner = match.group(2).replace("\\|", "|")
    target, _, label = inner.partition("|")
    label = (label or target).strip().replace("[", "(").replace("]", ")")
    prefix = "↪ " if match.group(1) else ""
    return f"[{prefix}{label}]({KB_SCHEME}wiki/{quote(target.strip())})"


def parse_kb_href(href: str) -> tuple[str, str, str] | None:
    """``kb:wiki/name#heading`` → (kind, target, anchor); None for other hrefs."""
    if not href.startswith(KB_SCHEME):
        return None
    kind, _, rest = href[len(KB_SCHEME) :].partition("/")
    target, _, anchor = unquote(rest).partition("#")
    return ("wikilink" if kind == "wiki" else "hugo-ref"), target, anchor


def split_for_display(markdown: str, chunk_chars: int = 2500) -> list[str]:
    """Cut Markdown into pieces at blank lines outside code, so a long note can be shown
    piece by piece (the first screen appears at once) without breaking a block."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line, is_code in code_lines(markdown.split("\n")):
        current.append(line)
        size += len(line) + 1
        if not is_code and not line.strip() and size >= chunk_chars:
            pieces.append("\n".join(current))
            current, size = [], 0
    if current:
        pieces.append("\n".join(current))
    return pieces or [""]


class History:
    """Browser-style history of visited notes: back, forward, and a breadcrumb."""

    def __init__(self) -> None:
        self._items: list[int] = []
        self._position = -1

    @property
    def current(self) -> int | None:
        return self._items[self._position] if self._position >= 0 else None

    @property
    def can_go_back(self) -> bool:
        return self._position > 0

    @property
    def can_go_forward(self) -> bool:
        return self._position < len(self._items) - 1

    def visit(self, note_id: int) -> None:
        if self.current == note_id:
            return
        del self._items[self._position + 1 :]
        self._items.append(note_id)
        self._position = len(self._items) - 1

    def back(self) -> int | None:
        if self.can_go_back:
            self._position -= 1
        return self.current

    def forward(self) -> int | None:
        if self.can_go_forward:
            self._position += 1
        return self.current

    def trail(self, length: int = 5) -> list[int]:
        """The notes that led here, oldest first, ending with the current one."""
        return self._items[max(0, self._position - length + 1) : self._position + 1]


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


def new_note_text(title: str, today: date | None = None, tags: list[str] | None = None) -> str:
    """The front-matter template of a new note."""
    today = today or date.today()
    safe_title = clean_line(title).replace('"', '\\"')
    tag_list = ", ".join(tags or [])
    return (
        f'---\ntitle: "{safe_title}"\ndate: {today.isoformat()}\ntags: [{tag_list}]\n'
        f"---\n\n# {clean_line(title)}\n\n"
    )


def new_note_name(title: str, existing: set[str]) -> str:
    """A file name for a new note: the title's slug (Chinese kept), never an existing one."""
    stem = slugify(title)[:80].strip("-") or "untitled"
    name = f"{stem}.md"
    number = 2
    while name.casefold() in existing:
        name = f"{stem}-{number}.md"
        number += 1
    return name


def editor_command(path: Path) -> list[str]:
    """``$VISUAL``, else ``$EDITOR``, else vi, split as a shell would, with the note's path."""
    import os
    import shlex

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return [*shlex.split(editor), str(path)]


def external_url(target: str) -> str | None:
    return target if _SCHEME.match(target) and not target.startswith(KB_SCHEME) else None
