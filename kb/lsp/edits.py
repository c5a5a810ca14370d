"""Code actions and rename: edits only (never a command), one WorkspaceEdit or a
refusal, never half of one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from kb.errors import KbError
from kb.lsp.document import (
    Open,
    applies_file_operation,
    link_under,
    opened,
    uri_of,
)
from kb.lsp.positions import LineIndex, column_of_index
from kb.models import Heading
from kb.notes.buffer import normalise
from kb.notes.editor import heading_at, heading_text_extent

if TYPE_CHECKING:
    from kb.lsp.server import KbLanguageServer


REQUEST_FAILED = -32803  # LSP's RequestFailed: a request understood and refused


class RequestRefused(JsonRpcException):
    """A request kb understood and will not carry out (a rename the client cannot apply
    atomically): the protocol's RequestFailed error with kb's reason."""

    CODE = REQUEST_FAILED


def prepare_rename(ls: KbLanguageServer, params: types.PrepareRenameParams) -> Any:
    """On a link: the note it leads to; elsewhere in a stored note: the note itself. The
    placeholder is the note's path in its root, which the new name replaces."""
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    heading = heading_under(document, params.position)
    if heading is not None:
        line = heading.line - 1
        extent = heading_text_extent(document.lines.line(line), heading)
        if extent is not None:
            return types.PrepareRenamePlaceholder(
                range=document.range(line, *extent), placeholder=heading.text
            )
    target = rename_target(document, params.position)
    if target is None:
        return None
    note_id, where = target
    name = document.kb.editor.note_name(note_id)
    if name is None:
        return None
    return types.PrepareRenamePlaceholder(range=where, placeholder=name.rel)


def heading_under(document: Open, position: types.Position) -> Heading | None:
    """The heading on the cursor's line, unless the cursor is on a link or the heading
    is the note's title (renaming that moves the note)."""
    if link_under(document, position) is not None:
        return None
    line, _ = document.cursor(position)
    parsed = document.buffer.parsed
    heading = heading_at(parsed.headings, line)
    if heading is None or (heading.level == 1 and heading.text == parsed.title):
        return None
    return heading


def rename_heading(
    ls: KbLanguageServer, document: Open, heading: Heading, new_name: str
) -> types.WorkspaceEdit:
    """The heading and every anchor that points to it, in one WorkspaceEdit."""
    kb = document.kb
    assert kb is not None and document.file is not None
    changes = kb.editor.rename_heading(
        document.file, document.buffer, heading.line - 1, new_name, ls.text_at
    )
    by_file: dict[Path, list[types.TextEdit]] = {}
    for change in changes:
        start = column_of_index(change.text, change.start, ls.encoding)
        end = column_of_index(change.text, change.end, ls.encoding)
        where = types.Range(types.Position(change.line, start), types.Position(change.line, end))
        by_file.setdefault(change.file, []).append(types.TextEdit(where, change.new))
    uris = {file: document.uri if file == document.file else uri_of(file) for file in by_file}
    ls.expect_changes(list(by_file))
    return types.WorkspaceEdit(changes={uris[file]: edits for file, edits in by_file.items()})


def rename_target(document: Open, position: types.Position) -> tuple[int, types.Range] | None:
    kb = document.kb
    assert kb is not None and document.file is not None
    link = link_under(document, position)
    if link is not None:
        if link.target_id is None:
            return None
        return link.target_id, document.range(link.placed.line, link.placed.start, link.placed.end)
    stored = kb.editor.stored_note_at(document.file)
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
    heading = heading_under(document, params.position)
    if heading is not None:
        try:
            return rename_heading(ls, document, heading, params.new_name)
        except KbError as exc:
            raise RequestRefused(f"kb: {exc}") from None
    if not applies_file_operation(ls, types.ResourceOperationKind.Rename):
        raise RequestRefused(
            "kb: this editor cannot rename a file inside one workspace edit, so the rename "
            "would be half done; use 'kb mv' in a terminal"
        )
    target = rename_target(document, params.position)
    if target is None:
        raise RequestRefused("kb: nothing here names a note to rename")
    name = kb.editor.note_name(target[0])
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
    ls.expect_changes([plan.source, plan.destination, *(f.path for f in plan.files)])
    return types.WorkspaceEdit(document_changes=changes)
