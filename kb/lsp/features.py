"""The editor server's requests, registered: each converts positions, asks the facade,
and renders the answer in lsprotocol types (one module per group of requests: completion,
navigation, outline, edits). No note logic here: kb.notes.editor and kb.notes.buffer
(through the facade) answer every question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from kb.lsp.actions import code_actions
from kb.lsp.completion import completion, completion_resolve
from kb.lsp.edits import FILE_RENAMES, prepare_rename, rename, will_rename_files
from kb.lsp.navigation import definition, hover, references
from kb.lsp.outline import document_links, document_symbols, folding_ranges, workspace_symbols


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
        (types.WORKSPACE_WILL_RENAME_FILES, FILE_RENAMES, will_rename_files, none),
    ]
    for method, options, handler, default in table:
        server.feature(method, options)(safely(default)(handler))
