"""Code actions and rename: edits only (never a command), one WorkspaceEdit or a
refusal, never half of one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from kb.errors import KbError, os_error_message
from kb.lsp.document import (
    Open,
    applies_document_changes,
    applies_file_operation,
    link_under,
    opened,
    uri_of,
)
from kb.lsp.positions import LineIndex, column_of_index
from kb.models import NOTE_SUFFIXES, Heading
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
    """The heading and every anchor that points to it, in one WorkspaceEdit, computed on
    the editor's open files as it holds them."""
    kb = document.kb
    assert kb is not None and document.file is not None
    open_files = ls.open_documents()
    changes = kb.editor.rename_heading(
        document.file,
        document.buffer,
        heading.line - 1,
        new_name,
        {file: text for file, (_, text, _) in open_files.items()},
    )
    by_file: dict[Path, list[types.TextEdit]] = {}
    for change in changes:
        start = column_of_index(change.text, change.start, ls.encoding)
        end = column_of_index(change.text, change.end, ls.encoding)
        where = types.Range(types.Position(change.line, start), types.Position(change.line, end))
        by_file.setdefault(change.file, []).append(types.TextEdit(where, change.new))
    ls.expect_changes(list(by_file))
    if not applies_document_changes(ls):  # an old client: unversioned edits
        uris = {file: document.uri if file == document.file else uri_of(file) for file in by_file}
        return types.WorkspaceEdit(changes={uris[file]: edits for file, edits in by_file.items()})
    return types.WorkspaceEdit(
        document_changes=[
            versioned(open_files, file, edits, document) for file, edits in by_file.items()
        ]
    )


def versioned(
    open_files: dict[Path, tuple[str, str, int | None]],
    file: Path,
    edits: list[types.TextEdit],
    document: Open | None = None,
) -> types.TextDocumentEdit:
    """The edits of one file, for the version of it the client sent when it is open (the
    client refuses them if the buffer changed since), for the file on disk when not."""
    held = open_files.get(file)
    if held is not None:
        uri, version = held[0], held[2]
    else:
        uri = document.uri if document is not None and file == document.file else uri_of(file)
        version = None
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(edits),
    )


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
    """Move the note as kb mv would (``kb.notes.editor_answers.EditorAnswers.plan_rename``),
    on the editor's open files as it holds them: one WorkspaceEdit with every link's text
    edit (versioned for an open file) and the file rename, or a refusal with its reason;
    never half of it."""

    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        raise RequestRefused("kb: this file is not a note kb can rename")
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
        raise RequestRefused("kb: the note is no longer in the store; save it and try again")
    destination = new_location(kb, name.root, kb.note_file(name.root, name.rel), params.new_name)
    open_files = ls.open_documents()
    try:
        plan = kb.editor.plan_rename(
            target[0], destination, {file: text for file, (_, text, _) in open_files.items()}
        )
    except KbError as exc:
        raise RequestRefused(f"kb: {exc}") from None
    except OSError as exc:  # a file that went away or cannot be read meanwhile
        raise RequestRefused(f"kb: {os_error_message(exc)}; nothing was renamed") from None
    changes: list[Any] = [*link_edits(ls, plan, open_files)]
    changes.append(types.RenameFile(old_uri=uri_of(plan.source), new_uri=uri_of(plan.destination)))
    ls.expect_changes([plan.source, plan.destination, *(f.path for f in plan.files)])
    return types.WorkspaceEdit(document_changes=changes)


def new_location(kb: Any, root_name: str, source: Path, new_name: str) -> str:
    """Where a rename's new name puts the note, as ``kb mv``'s NEW_PATH: a name with a
    ``/`` from the note's root, else beside the note; ending in ``/``, into that folder
    under the note's own file name."""
    new_name = new_name.strip()
    if not new_name or new_name in (".", ".."):
        raise RequestRefused("kb: the new name is empty")
    if "/" in new_name:
        root = next(r.path for r in kb.config.roots if r.name == root_name)
        destination = root / new_name.lstrip("/")
    else:
        destination = source.parent / new_name
    return str(destination) + ("/" if new_name.endswith("/") else "")


def link_edits(
    ls: KbLanguageServer, plan: Any, open_files: dict[Path, tuple[str, str, int | None]]
) -> list[types.TextDocumentEdit]:
    """Each file's link edits of a move plan, versioned when the file is open."""
    return [versioned(open_files, file, edits) for file, edits in text_edits(ls, plan).items()]


def text_edits(ls: KbLanguageServer, plan: Any) -> dict[Path, list[types.TextEdit]]:
    """Each file's link edits of a move plan, in the editor's units."""
    found = {}
    for file_edit in plan.files:
        lines = LineIndex(normalise(file_edit.before.decode("utf-8", errors="replace")))
        edits = []
        for link in file_edit.links:
            line = link.line - 1
            start = lines.column(line, link.column, ls.encoding)
            end = lines.column(line, link.column + len(link.old), ls.encoding)
            where = types.Range(types.Position(line, start), types.Position(line, end))
            edits.append(types.TextEdit(where, link.new))
        found[file_edit.path] = edits
    return found


NOTE_FILES = "**/*.{md,markdown}"  # kb's note suffixes (kb.models.NOTE_SUFFIXES)
FILE_RENAMES = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(
            pattern=types.FileOperationPattern(
                glob=NOTE_FILES, matches=types.FileOperationPatternKind.File
            ),
            scheme="file",
        )
    ]
)


def will_rename_files(
    ls: KbLanguageServer, params: types.RenameFilesParams
) -> types.WorkspaceEdit | None:
    """Notes renamed or moved in the editor's file tree: the edit of every link to them
    (as ``kb mv`` would rewrite it, on the open files as the editor holds them), which
    the editor applies before it renames the files. A note kb cannot move that way is
    left out, with one message saying why; a folder is left as it is."""
    kb = ls.kb
    if kb is None:
        return None
    open_files = ls.open_documents()
    texts = {file: text for file, (_, text, _) in open_files.items()}
    by_file: dict[Path, list[types.TextEdit]] = {}
    touched: list[Path] = []
    refused = []
    for renamed in params.files:
        old, new = to_fs_path(renamed.old_uri), to_fs_path(renamed.new_uri)
        note = kb.editor.stored_note_at(Path(old)) if old and new else None
        if note is None or new is None:
            continue  # not a stored note (a folder, another file): nothing links to it
        if not new.lower().endswith(NOTE_SUFFIXES):
            refused.append(f"{Path(new).name} is not a note file, so its links were left")
            continue
        try:
            plan = kb.editor.plan_rename(note.id, new, texts)
        except KbError as exc:
            refused.append(str(exc))
            continue
        except OSError as exc:
            refused.append(os_error_message(exc))
            continue
        for file, edits in text_edits(ls, plan).items():
            taken = by_file.setdefault(file, [])
            # Two notes moved together may both rewrite one link: the first edit stands.
            taken += [e for e in edits if not any(_overlap(e, t) for t in taken)]
        touched += [plan.source, plan.destination, *(f.path for f in plan.files)]
    if refused:
        ls.window_show_message(
            types.ShowMessageParams(types.MessageType.Warning, "kb: " + "; ".join(refused))
        )
    if not by_file:
        return None
    ls.expect_changes(touched)
    if not applies_document_changes(ls):  # an old client: unversioned edits
        changes = {versioned(open_files, f, e).text_document.uri: e for f, e in by_file.items()}
        return types.WorkspaceEdit(changes=changes)
    return types.WorkspaceEdit(
        document_changes=[versioned(open_files, file, edits) for file, edits in by_file.items()]
    )


def _overlap(one: types.TextEdit, other: types.TextEdit) -> bool:
    a, b = one.range, other.range
    return (a.start.line, a.start.character) < (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) < (a.end.line, a.end.character)
