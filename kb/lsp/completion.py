"""Completion inside ``[[…``, ``](…``, Hugo ``{{< ref "…`` and after ``#``: notes ranked by
kb's naming rule, a note's headings, tags; the inserted text follows the link's kind."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types

from kb.errors import KbError
from kb.lsp.document import (
    Open,
    card_markdown,
    opened,
)
from kb.notes.editor import (
    HUGO_REF,
    TAG,
    WIKILINK,
    completion_context,
    front_matter_key,
    relative_target,
    wikilink_name,
)

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer


_COMPLETIONS = 50


def completion(ls: KbLanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
    document = opened(ls, params.text_document.uri)
    if document is None:
        return None
    line, index = document.cursor(params.position)
    line_text = document.lines.line(line)
    key = front_matter_key(document.text.split("\n"), line)
    context = completion_context(line_text, index, key)
    if context is None:
        return None
    replace = document.range(line, context.start, index)
    kb = document.kb
    if context.kind == TAG:
        items = _tag_items(kb, context.prefix, replace)
    elif context.kind == "heading":
        items = _heading_items(document, context.note, context.link_kind, context.prefix, replace)
    else:
        items = _note_items(document, context.kind, context.prefix, replace)
    return types.CompletionList(is_incomplete=True, items=items)


def _tag_items(
    kb: KnowledgeBase | None, typed: str, replace: types.Range
) -> list[types.CompletionItem]:
    if kb is None:
        return []
    wanted = typed.casefold()
    counts = sorted(kb.tag_counts(), key=lambda item: -item[1])
    return [
        types.CompletionItem(
            label=tag,
            kind=types.CompletionItemKind.Keyword,
            detail=f"{count} notes",
            filter_text=tag,
            sort_text=f"{rank:05d}",
            text_edit=types.TextEdit(replace, tag),
        )
        for rank, (tag, count) in enumerate((t, c) for t, c in counts if wanted in t.casefold())
        if rank < 200
    ]


def _note_items(
    document: Open, kind: str, typed: str, replace: types.Range
) -> list[types.CompletionItem]:
    kb = document.kb
    if kb is None or document.file is None:
        return []
    place = kb.editor.file_place(document.file)
    items = []
    for rank, found in enumerate(kb.editor.complete_notes(typed, _COMPLETIONS)):
        note = found.note
        if kind == WIKILINK:
            insert = wikilink_name(note, kb.editor.stem_is_unique(note))
        elif kind == HUGO_REF:
            insert = note.rel
        elif place is not None and place[0] == note.root:
            insert = relative_target(place[1], note.rel)
        else:
            target = os.path.relpath(kb.note_file(note.root, note.rel), document.file.parent)
            insert = target.replace(" ", "%20")
        items.append(
            types.CompletionItem(
                label=note.title,
                kind=types.CompletionItemKind.File,
                detail=f"{note.root}/{note.rel}" if kb.config.prefixed else note.rel,
                # The editor filters by this: the typed text itself, so a pinyin or fuzzy
                # match is kept; kb has ranked them already (sort_text).
                filter_text=typed,
                sort_text=f"{rank:05d}",
                text_edit=types.TextEdit(replace, insert),
                data={"note": note.id},
            )
        )
    return items


def _heading_items(
    document: Open, note: str, link_kind: str, typed: str, replace: types.Range
) -> list[types.CompletionItem]:
    kb = document.kb
    if not note.strip():
        headings = [(h.level, h.text, h.slug) for h in document.buffer.parsed.headings]
    else:
        target = _named_note(document, note, link_kind)
        if target is None or kb is None:
            return []
        headings = [(level, text, slug) for level, text, slug, _ in kb.editor.note_headings(target)]
    wanted = typed.casefold()
    items = []
    for rank, (level, text, slug) in enumerate(headings):
        if wanted and wanted not in text.casefold() and wanted not in slug:
            continue
        insert = text if link_kind == WIKILINK else slug
        items.append(
            types.CompletionItem(
                label=text,
                kind=types.CompletionItemKind.Reference,
                detail="#" * level,
                filter_text=typed or text,
                sort_text=f"{rank:05d}",
                text_edit=types.TextEdit(replace, insert),
            )
        )
    return items


def _named_note(document: Open, note: str, link_kind: str) -> int | None:
    """The note a link's target part names, resolved as kb resolves such a link."""
    kb = document.kb
    if kb is None or document.file is None:
        return None
    probe = {WIKILINK: f"[[{note}]]", HUGO_REF: f'{{{{< ref "{note}" >}}}}'}.get(
        link_kind, f"[x]({note})"
    )
    buffer = kb.editor.read_buffer(document.file, f"{probe}\n")
    return next((link.target_id for link in buffer.links if link.target_id is not None), None)


def completion_resolve(ls: KbLanguageServer, item: types.CompletionItem) -> types.CompletionItem:
    kb = ls.kb
    data = item.data if isinstance(item.data, dict) else {}
    note_id = data.get("note")
    if kb is not None and isinstance(note_id, int):
        try:
            card = kb.editor.note_card(note_id)
        except KbError:  # the note went away since it was offered: the item as it was
            return item
        item.documentation = types.MarkupContent(types.MarkupKind.Markdown, card_markdown(card))
    return item
