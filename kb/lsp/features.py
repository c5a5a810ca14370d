"""The editor server's requests: each converts positions, asks the facade, and renders
the answer in lsprotocol types. No note logic here: kb.editor and kb.buffer (through the
facade) answer every question."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from kb.errors import KbError
from kb.lsp.positions import LineIndex, Position, column_of_index
from kb.notes.buffer import Buffer, BufferLink, normalise
from kb.notes.editor import (
    HUGO_REF,
    TAG,
    WIKILINK,
    completion_context,
    front_matter_key,
    heading_at,
    link_at,
    outline,
    relative_target,
    tag_at,
    wikilink_name,
)

REQUEST_FAILED = -32803  # LSP's RequestFailed: a request understood and refused


class RequestRefused(JsonRpcException):
    """A request kb understood and will not carry out (a rename the client cannot apply
    atomically): the protocol's RequestFailed error with kb's reason."""

    CODE = REQUEST_FAILED


if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.lsp.server import KbLanguageServer

_SEVERITY = {
    "broken-link": types.DiagnosticSeverity.Warning,
    "missing-file": types.DiagnosticSeverity.Warning,
    "missing-heading": types.DiagnosticSeverity.Warning,
    "ambiguous-link": types.DiagnosticSeverity.Information,
    "duplicate-title": types.DiagnosticSeverity.Information,
    "parse-warning": types.DiagnosticSeverity.Information,
}
_COMPLETIONS = 50
_SYMBOLS = 30


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
                from kb.models import DEFAULT_TYPED_LINK_KEYS
                from kb.notes.buffer import read_buffer

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


def _uri(file: Path) -> str:
    return from_fs_path(str(file)) or file.as_uri()


def _note_uri(kb: KnowledgeBase, note_id: int) -> tuple[str, Path] | None:
    name = kb.note_name(note_id)
    if name is None:
        return None
    file = kb.note_file(name.root, name.rel)
    return _uri(file), file


# -- diagnostics ---------------------------------------------------------------------------


def diagnostics(ls: KbLanguageServer, uri: str, text: str) -> list[types.Diagnostic]:
    """What kb check reports for the open (unsaved) text, as diagnostics."""
    kb = ls.kb
    document = Open(ls, uri, text)
    if kb is None or document.file is None or kb.file_place(document.file) is None:
        return []
    try:
        problems = kb.buffer_problems(document.buffer)
    except Exception as exc:  # the store missing or being built: nothing to say yet
        import logging

        logging.getLogger("kb.lsp").info("diagnostics: %s", exc)
        return []
    found = []
    for problem in problems:
        if problem.end > problem.start:
            where = document.range(problem.line, problem.start, problem.end)
        else:
            where = document.whole_line(problem.line)
        found.append(
            types.Diagnostic(
                range=where,
                message=problem.message,
                severity=_SEVERITY.get(problem.kind, types.DiagnosticSeverity.Information),
                code=problem.kind,
                source="kb",
            )
        )
    return found


# -- completion ----------------------------------------------------------------------------


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
    place = kb.file_place(document.file)
    items = []
    for rank, found in enumerate(kb.complete_notes(typed, _COMPLETIONS)):
        note = found.note
        if kind == WIKILINK:
            insert = wikilink_name(note, kb.stem_is_unique(note))
        elif kind == HUGO_REF:
            insert = note.rel
        elif place is not None and place[0] == note.root:
            insert = relative_target(place[1], note.rel)
        else:
            import os

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
        headings = [(level, text, slug) for level, text, slug, _ in kb.note_headings(target)]
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
    buffer = kb.read_buffer(document.file, f"{probe}\n")
    return next((link.target_id for link in buffer.links if link.target_id is not None), None)


def completion_resolve(ls: KbLanguageServer, item: types.CompletionItem) -> types.CompletionItem:
    kb = ls.kb
    data = item.data if isinstance(item.data, dict) else {}
    note_id = data.get("note")
    if kb is not None and isinstance(note_id, int):
        try:
            card = kb.note_card(note_id)
        except KbError:  # the note went away since it was offered: the item as it was
            return item
        item.documentation = types.MarkupContent(types.MarkupKind.Markdown, _card_markdown(card))
    return item


# -- definition, hover, references -------------------------------------------------------


def _link_under(document: Open, position: types.Position) -> BufferLink | None:
    line, index = document.cursor(position)
    placed = link_at([link.placed for link in document.buffer.links], line, index)
    if placed is None:
        return None
    return next(link for link in document.buffer.links if link.placed is placed)


def definition(ls: KbLanguageServer, params: types.DefinitionParams) -> list[types.Location] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None:
        return None
    kb = document.kb
    link = _link_under(document, params.position)
    if link is not None:
        if link.target_id is None:
            return None
        where = _note_uri(kb, link.target_id)
        if where is None:
            return None
        line = _heading_line(kb, link.target_id, link.placed.anchor)
        start = types.Position(line, 0)
        return [types.Location(where[0], types.Range(start, start))]
    tag = _tag_under(document, params.position)
    if tag:
        return _tag_locations(kb, tag)
    return None


def _heading_line(kb: KnowledgeBase, note_id: int, anchor: str) -> int:
    if not anchor:
        return 0
    from urllib.parse import unquote

    from kb.text import slugify

    wanted = unquote(anchor).strip().casefold()
    for _level, text, slug, line in kb.note_headings(note_id):
        if wanted in (slug.casefold(), text.casefold()) or slugify(wanted) == slug:
            return max(line - 1, 0)
    return 0


def _tag_under(document: Open, position: types.Position) -> str:
    line, index = document.cursor(position)
    key = front_matter_key(document.text.split("\n"), line)
    return tag_at(document.lines.line(line), index, key)


def _tag_locations(kb: KnowledgeBase, tag: str) -> list[types.Location]:
    start = types.Position(0, 0)
    return [
        types.Location(_uri(kb.note_file(*_root_rel(kb, note.path))), types.Range(start, start))
        for note in kb.notes_tagged(tag)
    ]


def _root_rel(kb: KnowledgeBase, path: str) -> tuple[str, str]:
    if kb.config.prefixed:
        root, _, rel = path.partition("/")
        return root, rel
    return kb.config.roots[0].name, path


def hover(ls: KbLanguageServer, params: types.HoverParams) -> types.Hover | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None:
        return None
    kb = document.kb
    link = _link_under(document, params.position)
    if link is not None:
        where = document.range(link.placed.line, link.placed.outer_start, link.placed.outer_end)
        if link.target_id is not None and link.status in ("resolved", "ambiguous"):
            text = _card_markdown(kb.note_card(link.target_id))
        else:
            text = _problem_text(kb, document, link)
        if not text:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), where)
    tag = _tag_under(document, params.position)
    if tag:
        count = len(kb.notes_tagged(tag))
        text = f"#{tag}: {count} note{'s' if count != 1 else ''}"
        return types.Hover(types.MarkupContent(types.MarkupKind.PlainText, text))
    return None


def _problem_text(kb: KnowledgeBase, document: Open, link: BufferLink) -> str:
    """Why a link is not fine, in kb check's words; '' for a link that is fine."""
    for problem in kb.buffer_problems(document.buffer):
        if problem.line == link.placed.line and problem.start == link.placed.start:
            return f"**{problem.kind}**: {problem.message}"
    if link.status == "external":
        return ""
    return ""


def _card_markdown(card: Any) -> str:
    facts = [f"`{card.path}`"]
    if card.date:
        facts.append(str(card.date)[:10])
    if card.tags:
        facts.append(" ".join(f"#{t}" for t in card.tags))
    backlinks = f"{card.backlinks} backlink{'s' if card.backlinks != 1 else ''}"
    parts = [f"**{_escape(card.title)}**", " · ".join(facts)]
    if card.summary:
        parts.append(_escape(card.summary))
    parts.append(backlinks)
    return "\n\n".join(parts)


def _escape(text: str) -> str:
    """Note text shown as Markdown stays text: no link, HTML or emphasis of its own."""
    out = []
    for char in text:
        out.append("\\" + char if char in "\\`*_{}[]<>()#+-.!|~" else char)
    return "".join(out)


def references(ls: KbLanguageServer, params: types.ReferenceParams) -> list[types.Location] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None or document.file is None:
        return None
    kb = document.kb
    link = _link_under(document, params.position)
    anchor: str | None = None
    if link is not None:
        target = link.target_id
    else:
        tag = _tag_under(document, params.position)
        if tag:
            return _tag_locations(kb, tag)
        stored = kb.stored_note_at(document.file)
        target = stored.id if stored else None
        line, _ = document.cursor(params.position)
        heading = heading_at(document.buffer.parsed.headings, line)
        if heading is not None:
            anchor = heading.slug
    if target is None:
        return []
    places = kb.backlink_places(target, ls.text_at)
    if anchor is not None:
        from kb.text import slugify

        places = [
            p
            for p in places
            if p.anchor and (p.anchor.casefold() == anchor or slugify(p.anchor) == anchor)
        ]
    encoding = ls.encoding
    return [
        types.Location(
            _uri(p.file),
            types.Range(
                types.Position(p.line, column_of_index(p.text, p.start, encoding)),
                types.Position(p.line, column_of_index(p.text, p.end, encoding)),
            ),
        )
        for p in places
    ]


# -- symbols, links, folding -------------------------------------------------------------


def document_symbols(
    ls: KbLanguageServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | None:
    document = opened(ls, params.text_document.uri)
    if document is None:
        return None

    def symbol(section: Any) -> types.DocumentSymbol:
        heading = section.heading
        line = heading.line - 1
        last = max(section.last, line)
        return types.DocumentSymbol(
            name=heading.text or "#" * heading.level,
            kind=types.SymbolKind.String,
            range=types.Range(
                types.Position(line, 0),
                types.Position(
                    last, document.lines.column(last, len(document.lines.line(last)), ls.encoding)
                ),
            ),
            selection_range=document.whole_line(line),
            detail="#" * heading.level,
            children=[symbol(child) for child in section.children],
        )

    return [symbol(s) for s in outline(document.buffer.parsed.headings, document.lines.line_count)]


def folding_ranges(
    ls: KbLanguageServer, params: types.FoldingRangeParams
) -> list[types.FoldingRange] | None:
    document = opened(ls, params.text_document.uri)
    if document is None:
        return None
    found: list[types.FoldingRange] = []

    def walk(sections: Any) -> None:
        for section in sections:
            if section.last > section.first:
                found.append(
                    types.FoldingRange(
                        section.first, section.last, kind=types.FoldingRangeKind.Region
                    )
                )
            walk(section.children)

    walk(outline(document.buffer.parsed.headings, document.lines.line_count))
    return found


def document_links(
    ls: KbLanguageServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink] | None:
    document = opened(ls, params.text_document.uri)
    if document is None or document.kb is None:
        return None
    kb = document.kb
    found = []
    for link in document.buffer.links:
        if link.target_id is None:
            continue
        where = _note_uri(kb, link.target_id)
        if where is None:
            continue
        target = where[0]
        line = _heading_line(kb, link.target_id, link.placed.anchor)
        if line:
            target += f"#L{line + 1}"
        found.append(
            types.DocumentLink(
                range=document.range(link.placed.line, link.placed.start, link.placed.end),
                target=target,
                tooltip=str(where[1]),
            )
        )
    return found


def workspace_symbols(
    ls: KbLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    kb = ls.kb
    if kb is None or not params.query.strip():
        return []
    from kb.links.resolve import fold

    results = kb.search(params.query, limit=_SYMBOLS, prefix=True)
    wanted = fold(params.query)
    found = []
    for hit in results.hits:
        uri = _uri(kb.note_file(hit.root, hit.rel))
        top = types.Position(0, 0)
        found.append(
            types.SymbolInformation(
                name=hit.title,
                kind=types.SymbolKind.File,
                location=types.Location(uri, types.Range(top, top)),
                container_name=hit.path,
            )
        )
        for _level, text, _slug, line in kb.note_headings(hit.note_id):
            if wanted and wanted in fold(text):
                at = types.Position(max(line - 1, 0), 0)
                found.append(
                    types.SymbolInformation(
                        name=text,
                        kind=types.SymbolKind.String,
                        location=types.Location(uri, types.Range(at, at)),
                        container_name=hit.title,
                    )
                )
    return found


# -- progress ------------------------------------------------------------------------------


class Progress:
    """Work-done progress of a background ingest, sent from the server's loop; nothing
    when the client did not ask for it or the ingest ends within half a second."""

    def __init__(self, ls: KbLanguageServer, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token = f"kb-{uuid.uuid4()}"
        self.started = time.monotonic()
        self.begun = False
        self.last = 0.0
        window = ls.client_capabilities.window if ls.loop else None
        self.enabled = bool(window and window.work_done_progress)

    def _send(self, call: Callable[[], None]) -> None:
        if self.enabled and self.ls.loop is not None:
            self.ls.loop.call_soon_threadsafe(call)

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.started < 0.5 or now - self.last < 0.2:
            return
        self.last = now
        message = f"{done}/{total} notes"
        percentage = int(100 * done / total) if total else None
        if not self.begun:
            self.begun = True
            progress = self.ls.work_done_progress
            begin = types.WorkDoneProgressBegin(self.title, message=message, percentage=percentage)

            def start() -> None:
                progress.create(self.token)
                progress.begin(self.token, begin)

            self._send(start)
        else:
            report = types.WorkDoneProgressReport(message=message, percentage=percentage)
            self._send(lambda: self.ls.work_done_progress.report(self.token, report))

    def done(self, message: str) -> None:
        if self.begun:
            end = types.WorkDoneProgressEnd(message=message)
            self._send(lambda: self.ls.work_done_progress.end(self.token, end))


# -- registration --------------------------------------------------------------------------


def register(server: Any, safely: Callable[[Callable[[], Any]], Callable[[Any], Any]]) -> None:
    """Every request handler above, each answering an empty result on failure."""

    def none() -> None:
        return None

    def empty() -> list[Any]:
        return []

    table: list[tuple[str, Any, Callable[..., Any], Callable[[], Any]]] = [
        (
            types.TEXT_DOCUMENT_COMPLETION,
            types.CompletionOptions(
                trigger_characters=["[", "(", "#", '"', "/"], resolve_provider=True
            ),
            completion,
            none,
        ),
        (types.COMPLETION_ITEM_RESOLVE, None, completion_resolve, none),
        (types.TEXT_DOCUMENT_DEFINITION, None, definition, none),
        (types.TEXT_DOCUMENT_HOVER, None, hover, none),
        (types.TEXT_DOCUMENT_REFERENCES, None, references, empty),
        (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, None, document_symbols, empty),
        (types.TEXT_DOCUMENT_DOCUMENT_LINK, None, document_links, empty),
        (types.TEXT_DOCUMENT_FOLDING_RANGE, None, folding_ranges, empty),
        (types.WORKSPACE_SYMBOL, None, workspace_symbols, empty),
        (types.TEXT_DOCUMENT_CODE_ACTION, None, code_actions, empty),
        (types.TEXT_DOCUMENT_PREPARE_RENAME, None, prepare_rename, none),
        (types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True), rename, none),
    ]
    for method, options, handler, default in table:
        server.feature(method, options)(safely(default)(handler))


# -- code actions and rename -------------------------------------------------------------


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
    link = _link_under(document, params.range.start)
    if link is not None and link.status == "broken":
        place = kb.file_place(document.file)
        for note in kb.suggested_notes(link.placed.target, link.placed.kind):
            new = _written_target(kb, link.placed.kind, note, place, document.file)
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
        note = _named_exactly(kb, selected)
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


def _named_exactly(kb: KnowledgeBase, text: str) -> Any:
    from kb.links.resolve import fold

    wanted = fold(text)
    if not wanted:
        return None
    for found in kb.complete_notes(text, 10):
        note = found.note
        if wanted in (fold(note.title), fold(note.stem), *(fold(a) for a in note.aliases)):
            return note
    return None


def _written_target(
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
    target = _rename_target(document, params.position)
    if target is None:
        return None
    note_id, where = target
    name = document.kb.note_name(note_id)
    if name is None:
        return None
    return types.PrepareRenamePlaceholder(range=where, placeholder=name.rel)


def _rename_target(document: Open, position: types.Position) -> tuple[int, types.Range] | None:
    kb = document.kb
    assert kb is not None and document.file is not None
    link = _link_under(document, position)
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
    target = _rename_target(document, params.position)
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
                    uri=_uri(file_edit.path), version=None
                ),
                edits=edits,
            )
        )
    changes.append(types.RenameFile(old_uri=_uri(plan.source), new_uri=_uri(plan.destination)))
    return types.WorkspaceEdit(document_changes=changes)
