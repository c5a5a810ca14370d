"""Code actions and rename: edits only (never a command), one WorkspaceEdit or a
refusal, never half of one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from kb.lsp.document import (
    Open,
    link_under,
    opened,
    uri_of,
)
from kb.lsp.positions import LineIndex
from kb.notes.buffer import normalise
from kb.notes.editor import (
    relative_target,
    wikilink_name,
)

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer


REQUEST_FAILED = -32803  # LSP's RequestFailed: a request understood and refused


class RequestRefused(JsonRpcException):
    """A request kb understood and will not carry out (a rename the client cannot apply
    atomically): the protocol's RequestFailed error with kb's reason."""

    CODE = REQUEST_FAILED


def code_actions(
    ls: KbLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """Edits only (never a command): a broken link replaced by a note kb suggests; a
    selection that names a note made a link to it."""
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    kb = document.kb
    uri = params.text_document.uri
    actions: list[types.CodeAction] = []
    start = document.cursor(params.range.start)
    end = document.cursor(params.range.end)
    link = link_under(document, params.range.start)
    if link is not None and link.status == "broken":
        place = kb.file_place(document.file)
        for note in kb.suggested_notes(link.placed.target, link.placed.kind):
            new = written_target(kb, link.placed.kind, note, place, document.file)
            where = document.range(link.placed.line, link.placed.start, link.placed.end)
            actions.append(
                types.CodeAction(
                    title=f"Link to {note.title} ({note.rel})",
                    kind=types.CodeActionKind.QuickFix,
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(where, new)]}),
                )
            )
    if start[0] == end[0] and end[1] > start[1] and link is None:
        line = document.lines.line(start[0])
        selected = line[start[1] : end[1]]
        note = named_exactly(kb, selected)
        if note is not None:
            from kb.notes.editor import link_text, preferred_style

            place = kb.file_place(document.file)
            style = preferred_style(document.buffer.parsed.links)
            written = link_text(
                style, selected, note, place[1] if place else "", kb.stem_is_unique(note)
            )
            where = document.range(start[0], start[1], end[1])
            actions.append(
                types.CodeAction(
                    title=f"Link this mention to {note.title}",
                    kind=types.CodeActionKind.RefactorRewrite,
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(where, written)]}),
                )
            )
    return actions


def named_exactly(kb: KnowledgeBase, text: str) -> Any:
    from kb.links.resolve import fold

    wanted = fold(text)
    if not wanted:
        return None
    for found in kb.complete_notes(text, 10):
        note = found.note
        if wanted in (fold(note.title), fold(note.stem), *(fold(a) for a in note.aliases)):
            return note
    return None


def written_target(
    kb: KnowledgeBase, kind: str, note: Any, place: tuple[str, str] | None, file: Path
) -> str:
    if kind in ("wikilink", "embed"):
        return wikilink_name(note, kb.stem_is_unique(note))
    if kind in ("hugo-ref", "front-matter"):
        return note.rel
    if place is not None and place[0] == note.root:
        return relative_target(place[1], note.rel)
    return note.rel


def prepare_rename(ls: KbLanguageServer, params: types.PrepareRenameParams) -> Any:
    """On a link: the note it leads to; elsewhere in a stored note: the note itself. The
    placeholder is the note's path in its root, which the new name replaces."""
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    target = rename_target(document, params.position)
    if target is None:
        return None
    note_id, where = target
    name = document.kb.note_name(note_id)
    if name is None:
        return None
    return types.PrepareRenamePlaceholder(range=where, placeholder=name.rel)


def rename_target(document: Open, position: types.Position) -> tuple[int, types.Range] | None:
    kb = document.kb
    assert kb is not None and document.file is not None
    link = link_under(document, position)
    if link is not None:
        if link.target_id is None:
            return None
        return link.target_id, document.range(link.placed.line, link.placed.start, link.placed.end)
    stored = kb.stored_note_at(document.file)
    if stored is None:
        return None
    line, _ = document.cursor(position)
    return stored.id, document.whole_line(line)


def rename(ls: KbLanguageServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    """Move the note as kb mv would (``KnowledgeBase.plan_move``): one WorkspaceEdit with
    every link's text edit and the file rename, or a refusal; never half of it."""

    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    kb = document.kb
    edit_caps = ls.client_capabilities.workspace and ls.client_capabilities.workspace.workspace_edit
    operations = (edit_caps.resource_operations or []) if edit_caps else []
    if not (
        edit_caps
        and edit_caps.document_changes
        and types.ResourceOperationKind.Rename in operations
    ):
        raise RequestRefused(
            "kb: this editor cannot rename a file inside one workspace edit, so the rename "
            "would be half done; use 'kb mv' in a terminal"
        )
    target = rename_target(document, params.position)
    if target is None:
        raise RequestRefused("kb: nothing here names a note to rename")
    name = kb.note_name(target[0])
    if name is None:
        return None
    source = kb.note_file(name.root, name.rel)
    new_name = params.new_name.strip()
    if "/" in new_name:
        root = next(r.path for r in kb.config.roots if r.name == name.root)
        destination = root / new_name
    else:
        destination = source.parent / new_name
    plan = kb.plan_move(kb.note_ref(target[0]), str(destination))
    changes: list[Any] = []
    for file_edit in plan.files:
        unsaved = ls.text_at(file_edit.path)
        before = file_edit.before.decode("utf-8", errors="replace")
        if unsaved is not None and normalise(unsaved) != normalise(before):
            raise RequestRefused(
                f"kb: {file_edit.path} has unsaved changes; save it and rename again"
            )
        lines = LineIndex(normalise(before))
        edits = []
        for link in file_edit.links:
            line = link.line - 1
            start = lines.column(line, link.column, ls.encoding)
            end = lines.column(line, link.column + len(link.old), ls.encoding)
            edits.append(
                types.TextEdit(
                    types.Range(types.Position(line, start), types.Position(line, end)), link.new
                )
            )
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri_of(file_edit.path), version=None
                ),
                edits=edits,
            )
        )
    changes.append(types.RenameFile(old_uri=uri_of(plan.source), new_uri=uri_of(plan.destination)))
    return types.WorkspaceEdit(document_changes=changes)
