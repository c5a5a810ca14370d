"""Definition, hover and references: where a link leads, what it leads to, what links
to a note, a heading or a tag."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from kb.lsp.document import (
    Open,
    card_markdown,
    heading_line,
    link_under,
    note_uri,
    opened,
    root_rel,
    tag_under,
    uri_of,
)
from kb.lsp.positions import column_of_index
from kb.notes.buffer import BufferLink
from kb.notes.editor import heading_at
from kb.text import slugify

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer


def definition(ls: KbLanguageServer, params: types.DefinitionParams) -> list[types.Location] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None:
        return None
    kb = document.kb
    link = link_under(document, params.position)
    if link is not None:
        if link.target_id is None:
            return None
        where = note_uri(kb, link.target_id)
        if where is None:
            return None
        line = heading_line(kb, link.target_id, link.placed.anchor)
        start = types.Position(line, 0)
        return [types.Location(where[0], types.Range(start, start))]
    tag = tag_under(document, params.position)
    if tag:
        return tag_locations(kb, tag)
    return None


def tag_locations(kb: KnowledgeBase, tag: str) -> list[types.Location]:
    start = types.Position(0, 0)
    return [
        types.Location(uri_of(kb.note_file(*root_rel(kb, note.path))), types.Range(start, start))
        for note in kb.editor.notes_tagged(tag)
    ]


def hover(ls: KbLanguageServer, params: types.HoverParams) -> types.Hover | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None:
        return None
    kb = document.kb
    link = link_under(document, params.position)
    if link is not None:
        where = document.range(link.placed.line, link.placed.outer_start, link.placed.outer_end)
        if link.target_id is not None and link.status in ("resolved", "ambiguous"):
            text = card_markdown(kb.editor.note_card(link.target_id))
        else:
            text = _problem_text(kb, document, link)
        if not text:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), where)
    tag = tag_under(document, params.position)
    if tag:
        count = len(kb.editor.notes_tagged(tag))
        text = f"#{tag}: {count} note{'s' if count != 1 else ''}"
        return types.Hover(types.MarkupContent(types.MarkupKind.PlainText, text))
    return None


def _problem_text(kb: KnowledgeBase, document: Open, link: BufferLink) -> str:
    """Why a link is not fine, in kb check's words; '' for a link that is fine."""
    for problem in kb.editor.buffer_problems(document.buffer):
        if problem.line == link.placed.line and problem.start == link.placed.start:
            return f"**{problem.kind}**: {problem.message}"
    if link.status == "external":
        return ""
    return ""


def references(ls: KbLanguageServer, params: types.ReferenceParams) -> list[types.Location] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    kb = document.kb
    link = link_under(document, params.position)
    anchor: str | None = None
    if link is not None:
        target = link.target_id
    else:
        tag = tag_under(document, params.position)
        if tag:
            return tag_locations(kb, tag)
        stored = kb.editor.stored_note_at(document.file)
        target = stored.id if stored else None
        line, _ = document.cursor(params.position)
        parsed = document.buffer.parsed
        heading = heading_at(parsed.headings, line)
        # On a section's heading: the links to that section; on the title, to the note.
        if heading is not None and not (heading.level == 1 and heading.text == parsed.title):
            anchor = heading.slug
    if target is None:
        return []
    places = kb.editor.backlink_places(target, ls.open_files())
    if anchor is not None:
        places = [
            p
            for p in places
            if p.anchor and (p.anchor.casefold() == anchor or slugify(p.anchor) == anchor)
        ]
    encoding = ls.encoding
    return [
        types.Location(
            uri_of(p.file),
            types.Range(
                types.Position(p.line, column_of_index(p.text, p.start, encoding)),
                types.Position(p.line, column_of_index(p.text, p.end, encoding)),
            ),
        )
        for p in places
    ]
