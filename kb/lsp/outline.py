"""What needs no store, or only kb's search: the heading outline, folding, clickable
links, diagnostics of the open text, and workspace symbols."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from kb.lsp.document import (
    Open,
    heading_line,
    note_uri,
    opened,
    uri_of,
)
from kb.names.resolve import fold
from kb.notes.editor import outline

if TYPE_CHECKING:
    from kb.lsp.server import KbLanguageServer


_SEVERITY = {
    "broken-link": types.DiagnosticSeverity.Warning,
    "missing-file": types.DiagnosticSeverity.Warning,
    "missing-heading": types.DiagnosticSeverity.Warning,
    "ambiguous-link": types.DiagnosticSeverity.Information,
    "duplicate-title": types.DiagnosticSeverity.Information,
    "parse-warning": types.DiagnosticSeverity.Information,
}


def diagnostics(ls: KbLanguageServer, uri: str, text: str) -> list[types.Diagnostic]:
    """What kb check reports for the open (unsaved) text, as diagnostics."""
    kb = ls.kb
    document = Open(ls, uri, text)
    if kb is None or document.file is None or kb.editor.file_place(document.file) is None:
        return []
    try:
        problems = kb.editor.buffer_problems(document.buffer)
    except Exception as exc:  # the store missing or being built: nothing to say yet
        import logging  # deferred: 6 modules more

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
        where = note_uri(kb, link.target_id)
        if where is None:
            continue
        target = where[0]
        line = heading_line(kb, link.target_id, link.placed.anchor)
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


_SYMBOLS = 30


def workspace_symbols(
    ls: KbLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    kb = ls.kb
    if kb is None or not params.query.strip():
        return []

    results = kb.search(params.query, limit=_SYMBOLS, prefix=True)
    if not results.hits:  # the words found nothing: the notes nearest in meaning (≈)
        results = kb.search(params.query, limit=_SYMBOLS)
    wanted = fold(params.query)
    found = []
    for hit in results.hits:
        uri = uri_of(kb.note_file(hit.root, hit.rel))
        top = types.Position(0, 0)
        found.append(
            types.SymbolInformation(
                name=f"≈ {hit.title}" if hit.near else hit.title,
                kind=types.SymbolKind.File,
                location=types.Location(uri, types.Range(top, top)),
                container_name=hit.path,
            )
        )
        for _level, text, _slug, line in kb.editor.note_headings(hit.note_id):
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
