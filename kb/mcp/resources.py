"""Resources: each note as ``kb://note/{path}`` (text/markdown, listed in pages) and the
tag list as ``kb://tags`` (JSON)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
)

from kb.errors import KbError, UsageError

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.mcp.server import KbServer

NOTE_URI = "kb://note/{+path}"
TAGS_URI = "kb://tags"
PAGE = 200  # notes in one page of resources/list


def note_uri(path: str) -> str:
    return "kb://note/" + quote(path, safe="/")


def add_resources(server: KbServer, kb: KnowledgeBase) -> None:
    @server.resource(
        NOTE_URI,
        name="note",
        title="A note",
        description="A note's Markdown as written, by its path inside the notes roots "
        "(as search and list_notes give it)",
        mime_type="text/markdown",
    )
    def note(path: str) -> str:
        try:
            source = kb.guarded.source(path)
        except UsageError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except KbError as exc:
            raise ResourceError(str(exc)) from None
        if source.note.path not in (path, f"{path}.md"):  # a resource is named exactly
            raise ResourceNotFoundError(f"no note at {path!r}; did you mean {source.note.path!r}?")
        return source.markdown

    @server.resource(
        TAGS_URI,
        name="tags",
        title="Tags",
        description="Every tag in the notes with its number of notes, most used first",
        mime_type="application/json",
    )
    def tag_list() -> str:
        from kb.text import json_text  # deferred: on first use

        try:
            counts = kb.guarded.tag_counts("count")
        except KbError as exc:
            raise ResourceError(str(exc)) from None
        return json_text([{"tag": tag, "count": count} for tag, count in counts])

    def shown_choices() -> list[Any]:
        hidden = kb.guarded.hidden()
        return [c for c in kb.note_choices() if c.id not in hidden]

    async def list_resources(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:

        # deferred: 2 modules more
        from kb.notes.paging import cursor_offset, decode_cursor, encode_cursor

        offset = 0
        if params.cursor:
            try:
                offset = cursor_offset(decode_cursor(params.cursor, "resources/list"))
            except KbError as exc:
                raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        try:
            choices = await anyio.to_thread.run_sync(shown_choices)
        except KbError as exc:  # no store yet, or a damaged one: say so, log nothing
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from None
        page = choices[offset : offset + PAGE]
        # A note replaced by a link out of the roots since the ingest is left out.
        page = await anyio.to_thread.run_sync(lambda: [c for c in page if kb.guarded.shown(c.path)])
        listed = [
            Resource(
                uri=note_uri(choice.path),
                name=choice.path,
                title=choice.title,
                mime_type="text/markdown",
            )
            for choice in page
        ]
        if offset == 0:
            listed.insert(
                0, Resource(uri=TAGS_URI, name="tags", title="Tags", mime_type="application/json")
            )
        more = offset + PAGE < len(choices)
        next_cursor = encode_cursor("resources/list", offset=offset + PAGE) if more else None
        return ListResourcesResult(resources=listed, next_cursor=next_cursor)

    server.lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
