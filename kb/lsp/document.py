"""One open document as a request sees it, and what several requests share: the
file URI of a note, the link or tag under the cursor, a note's card as Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from kb.lsp.positions import LineIndex, Position
from kb.models import DEFAULT_TYPED_LINK_KEYS
from kb.notes.buffer import Buffer, BufferLink, normalise, read_buffer
from kb.notes.editor import (
    front_matter_key,
    link_at,
    tag_at,
)
from kb.text import slugify

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer


class Open:
    """One document as a request sees it: its text, lines, and the buffer kb read."""

    def __init__(self, ls: KbLanguageServer, uri: str, text: str) -> None:
        self.ls = ls
        self.uri = uri
        self.text = normalise(text)
        self.lines = LineIndex(self.text)
        path = to_fs_path(uri)
        self.file = Path(path) if path else None
        self._buffer: Buffer | None = None

    @property
    def kb(self) -> KnowledgeBase | None:
        return self.ls.kb

    @property
    def buffer(self) -> Buffer:
        if self._buffer is None:
            kb = self.kb
            if kb is not None and self.file is not None:
                self._buffer = self.ls.buffer_for(self.uri, self.file, self.text)
            else:
                self._buffer = read_buffer(self.text, None, None, None, DEFAULT_TYPED_LINK_KEYS)
        return self._buffer

    def cursor(self, position: types.Position) -> tuple[int, int]:
        return self.lines.line_and_index(
            Position(position.line, position.character), self.ls.encoding
        )

    def range(self, line: int, start: int, end: int) -> types.Range:
        column = self.lines.column
        encoding = self.ls.encoding
        return types.Range(
            types.Position(line, column(line, start, encoding)),
            types.Position(line, column(line, end, encoding)),
        )

    def whole_line(self, line: int) -> types.Range:
        return self.range(line, 0, len(self.lines.line(line)))


def opened(ls: KbLanguageServer, uri: str) -> Open | None:
    text = ls.document_text(uri)
    return None if text is None else Open(ls, uri, text)


def uri_of(file: Path) -> str:
    return from_fs_path(str(file)) or file.as_uri()


def note_uri(kb: KnowledgeBase, note_id: int) -> tuple[str, Path] | None:
    name = kb.editor.note_name(note_id)
    if name is None:
        return None
    file = kb.note_file(name.root, name.rel)
    return uri_of(file), file


def link_under(document: Open, position: types.Position) -> BufferLink | None:
    line, index = document.cursor(position)
    placed = link_at([link.placed for link in document.buffer.links], line, index)
    if placed is None:
        return None
    return next(link for link in document.buffer.links if link.placed is placed)


def tag_under(document: Open, position: types.Position) -> str:
    line, index = document.cursor(position)
    key = front_matter_key(document.text.split("\n"), line)
    return tag_at(document.lines.line(line), index, key)


def heading_line(kb: KnowledgeBase, note_id: int, anchor: str) -> int:
    if not anchor:
        return 0

    wanted = unquote(anchor).strip().casefold()
    for _level, text, slug, line in kb.editor.note_headings(note_id):
        if wanted in (slug.casefold(), text.casefold()) or slugify(wanted) == slug:
            return max(line - 1, 0)
    return 0


def root_rel(kb: KnowledgeBase, path: str) -> tuple[str, str]:
    if kb.config.prefixed:
        root, _, rel = path.partition("/")
        return root, rel
    return kb.config.roots[0].name, path


def card_markdown(card: Any) -> str:
    facts = [f"`{card.path}`"]
    if card.date:
        facts.append(str(card.date)[:10])
    if card.tags:
        facts.append(" ".join(f"#{t}" for t in card.tags))
    backlinks = f"{card.backlinks} backlink{'s' if card.backlinks != 1 else ''}"
    parts = [f"**{escape_markdown(card.title)}**", " · ".join(facts)]
    if card.summary:
        parts.append(escape_markdown(card.summary))
    parts.append(backlinks)
    return "\n\n".join(parts)


def escape_markdown(text: str) -> str:
    """Note text shown as Markdown stays text: no link, HTML or emphasis of its own."""
    out = []
    for char in text:
        out.append("\\" + char if char in "\\`*_{}[]<>()#+-.!|~" else char)
    return "".join(out)


def applies_file_operation(ls: KbLanguageServer, operation: types.ResourceOperationKind) -> bool:
    """The client applies ``operation`` (create, rename) with text edits as one workspace
    edit. Resource operations exist only inside ``documentChanges``, so a client naming
    them applies those even when it does not also say ``documentChanges: true``
    (Neovim 0.7 does not)."""
    workspace = ls.client_capabilities.workspace
    caps = workspace.workspace_edit if workspace else None
    return bool(caps and operation in (caps.resource_operations or []))


def applies_document_changes(ls: KbLanguageServer) -> bool:
    """The client takes ``documentChanges`` (versioned edits): it says so, or it names
    resource operations, which exist only there."""
    workspace = ls.client_capabilities.workspace
    caps = workspace.workspace_edit if workspace else None
    return bool(caps and (caps.document_changes or caps.resource_operations))
