"""Code actions: edits only, never a command (note text never becomes one).

On a broken link: replace it with a note kb check suggests, or create the missing note
(``kb new``'s template) where the link points. On an unlinked mention of a note (kb's
mention rules): link this mention, or every mention of that note in this file. On a
selection: link it to the note it names, or create a note titled by it and link it.
Anywhere else in a stored note: add a link to one of its related notes, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from kb.lsp.document import Open, applies_file_operation, link_under, opened, uri_of
from kb.names.resolve import NoteName, fold
from kb.notes.buffer import BufferLink
from kb.notes.editor import (
    WIKILINK,
    link_label,
    link_text,
    preferred_style,
    relative_target,
    title_from_target,
    wikilink_name,
)

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer

RELATED_OFFERED = 5  # related notes offered as links at the cursor


def code_actions(
    ls: KbLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    kb = document.kb
    place = kb.editor.file_place(document.file)
    if place is None:
        return []
    actions: list[types.CodeAction] = []
    start = document.cursor(params.range.start)
    end = document.cursor(params.range.end)
    link = link_under(document, params.range.start)
    if link is not None:
        if link.status == "broken":
            actions += _replace_broken(document, link, place)
            actions += _create_missing(ls, document, link, place)
        return actions
    if start[0] == end[0] and end[1] > start[1]:
        actions += _link_selection(ls, document, start[0], start[1], end[1], place)
        return actions
    actions += _link_mentions(document, start[0], start[1], place)
    actions += _link_related(document, start[0], start[1], place)
    return actions


def _edit(uri: str, *edits: types.TextEdit) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: list(edits)})


def _replace_broken(
    document: Open, link: BufferLink, place: tuple[str, str]
) -> list[types.CodeAction]:
    kb = document.kb
    assert kb is not None and document.file is not None
    where = document.range(link.placed.line, link.placed.start, link.placed.end)
    return [
        types.CodeAction(
            title=f"Link to {note.title} ({note.rel})",
            kind=types.CodeActionKind.QuickFix,
            edit=_edit(
                document.uri,
                types.TextEdit(where, written_target(kb, link.placed.kind, note, place)),
            ),
        )
        for note in kb.editor.suggested_notes(link.placed.target, link.placed.kind)
    ]


def _can_create_files(ls: KbLanguageServer) -> bool:
    """The client applies a file creation with text edits as one workspace edit."""
    return applies_file_operation(ls, types.ResourceOperationKind.Create)


def _creation(file: Path, text: str, *more: types.TextDocumentEdit) -> types.WorkspaceEdit:
    """Create ``file`` holding ``text`` (refused by the client if it exists), then ``more``."""
    uri = uri_of(file)
    top = types.Range(types.Position(0, 0), types.Position(0, 0))
    return types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[types.TextEdit(top, text)],
            ),
            *more,
        ]
    )


def _create_missing(
    ls: KbLanguageServer, document: Open, link: BufferLink, place: tuple[str, str]
) -> list[types.CodeAction]:
    """The note a broken link points to, created where it points (the link then resolves
    as written: a wikilink by the new note's title, a path by its path)."""
    kb = document.kb
    assert kb is not None
    if not _can_create_files(ls) or link.placed.kind not in (
        "wikilink", "embed", "markdown", "reference", "hugo-ref",
    ):  # fmt: skip
        return []
    placed = link.placed
    label = link_label(document.lines.line(placed.line), placed)
    if placed.kind in ("wikilink", "embed") and "/" not in placed.target:
        title = placed.target.strip()
    else:
        title = label or title_from_target(placed.target)
    draft = kb.editor.new_note_draft(placed.kind, placed.target, title, place)
    if draft is None:
        return []
    file, text = draft
    ls.expect_changes([file])
    where = kb.editor.file_place(file)
    shown = where[1] if where else file.name
    return [
        types.CodeAction(
            title=f"Create the note {shown} (kb new) for this link",
            kind=types.CodeActionKind.QuickFix,
            edit=_creation(file, text),
        )
    ]


def _link_selection(
    ls: KbLanguageServer, document: Open, line: int, start: int, end: int, place: tuple[str, str]
) -> list[types.CodeAction]:
    """A selection that names a note made a link to it; one that names none, a new note
    titled by it and a link to that."""
    kb = document.kb
    assert kb is not None
    selected = document.lines.line(line)[start:end]
    if not selected.strip():
        return []
    style = preferred_style(document.buffer.parsed.links)
    where = document.range(line, start, end)
    note = named_exactly(kb, selected)
    if note is not None:
        written = link_text(style, selected, note, place[1], kb.editor.stem_is_unique(note))
        return [
            types.CodeAction(
                title=f"Link this mention to {note.title}",
                kind=types.CodeActionKind.RefactorRewrite,
                edit=_edit(document.uri, types.TextEdit(where, written)),
            )
        ]
    if not _can_create_files(ls) or "\n" in selected or "]" in selected or "[" in selected:
        return []
    title = " ".join(selected.split())
    draft = kb.editor.new_note_draft("wikilink", title, title, place)
    if draft is None:
        return []
    file, text = draft
    ls.expect_changes([file])
    new_place = kb.editor.file_place(file)
    if new_place is None:
        return []
    if style == WIKILINK:
        written = f"[[{title}]]"
    elif new_place[0] == place[0]:
        written = f"[{selected}]({relative_target(place[1], new_place[1])})"
    else:
        return []
    link_edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=None),
        edits=[types.TextEdit(where, written)],
    )
    return [
        types.CodeAction(
            title=f"Create the note {new_place[1]} (kb new) and link it",
            kind=types.CodeActionKind.RefactorExtract,
            edit=_creation(file, text, link_edit),
        )
    ]


def _link_mentions(
    document: Open, line: int, index: int, place: tuple[str, str]
) -> list[types.CodeAction]:
    """The note named under the cursor without a link (kb's mentions): link it here, or
    everywhere this file names it."""
    kb = document.kb
    assert kb is not None
    actions = []
    style = preferred_style(document.buffer.parsed.links)
    for mention in kb.editor.buffer_mentions(document.buffer, line, index)[:3]:
        note = mention.note
        unique = kb.editor.stem_is_unique(note)

        def edit_at(
            where: tuple[int, int, int], note: NoteName = note, unique: bool = unique
        ) -> types.TextEdit:
            number, start, end = where
            label = document.lines.line(number)[start:end]
            written = link_text(style, label, note, place[1], unique)
            return types.TextEdit(document.range(number, start, end), written)

        actions.append(
            types.CodeAction(
                title=f"Link this mention to {note.title}",
                kind=types.CodeActionKind.RefactorRewrite,
                edit=_edit(document.uri, edit_at(mention.here)),
            )
        )
        if len(mention.places) > 1:
            actions.append(
                types.CodeAction(
                    title=f"Link every mention of {note.title} in this file "
                    f"({len(mention.places)})",
                    kind=types.CodeActionKind.RefactorRewrite,
                    edit=_edit(document.uri, *(edit_at(p) for p in mention.places)),
                )
            )
    return actions


def _link_related(
    document: Open, line: int, index: int, place: tuple[str, str]
) -> list[types.CodeAction]:
    """A link to one of the note's related notes (kb's related, with the reason),
    written at the cursor in the file's link style."""
    kb = document.kb
    note_id = document.buffer.note_id
    if kb is None or note_id is None:
        return []
    linked = {link.target_id for link in document.buffer.links}
    style = preferred_style(document.buffer.parsed.links)
    at = document.range(line, index, index)
    actions = []
    for related in kb.links.related(note_id, RELATED_OFFERED + len(linked)):
        if related.id in linked:
            continue
        note = kb.editor.note_name(related.id)
        if note is None:
            continue
        written = link_text(style, note.title, note, place[1], kb.editor.stem_is_unique(note))
        actions.append(
            types.CodeAction(
                title=f"Add a link to a related note: {note.title} ({related.reason})",
                kind=types.CodeActionKind.Refactor,
                edit=_edit(document.uri, types.TextEdit(at, written)),
            )
        )
        if len(actions) == RELATED_OFFERED:
            break
    return actions


def named_exactly(kb: KnowledgeBase, text: str) -> NoteName | None:
    """The note whose title, stem or alias is ``text`` (folded)."""
    wanted = fold(text)
    if not wanted:
        return None
    for found in kb.editor.complete_notes(text, 10):
        note = found.note
        if wanted in (fold(note.title), fold(note.stem), *(fold(a) for a in note.aliases)):
            return note
    return None


def written_target(kb: KnowledgeBase, kind: str, note: Any, place: tuple[str, str] | None) -> str:
    """A link's target part naming ``note``, as a link of ``kind`` writes it."""
    if kind in ("wikilink", "embed"):
        return wikilink_name(note, kb.editor.stem_is_unique(note))
    if kind in ("hugo-ref", "front-matter"):
        return note.rel
    if place is not None and place[0] == note.root:
        return relative_target(place[1], note.rel)
    return note.rel
