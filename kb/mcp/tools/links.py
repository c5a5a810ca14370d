"""The tools that follow a note's connections and the problems in them: links and check."""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kb.knowledge_base import KnowledgeBase  # at run time: the SDK reads the signatures
from kb.mcp import render
from kb.mcp.answers import answer, capped, fitting, guarded
from kb.mcp.tools.arguments import Cursor, NoteName, page_offset
from kb.notes.paging import encode_cursor


@guarded
def links(
    kb: KnowledgeBase,
    note: NoteName,
    limit: Annotated[
        int, Field(ge=1, le=200, description="Most entries shown in each of the four lists")
    ] = 30,
) -> CallToolResult:
    """How one note connects to the others: the notes it links to (and its broken
    links), the backlinks from other notes with the line each link is on, unlinked
    mentions (notes that name it without linking), and related notes with the reason
    each is related (shared tags, links in common, similar words). Use it to follow a
    topic across notes or to find what else the user wrote about it."""
    found = kb.guarded.connections(kb.guarded.source(note).note, min(limit, 100))
    text = capped(render.links_text(found, limit), "call links with a smaller limit")
    return answer(text, render.links_data(found, limit))


@guarded
def check(
    kb: KnowledgeBase,
    kind: Annotated[
        str | None,
        Field(
            description="Only problems of this kind: broken-link, missing-file, "
            "missing-heading, ambiguous-link, duplicate-title, parse-warning, ..."
        ),
    ] = None,
    path: Annotated[
        str | None, Field(description="Only problems in notes whose path contains this")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=1000, description="Problems per page")] = 100,
    cursor: Cursor = None,
) -> CallToolResult:
    """Problems in the notes, as `kb check` reports them: broken links (with the
    notes they may have meant), links to missing files or headings, ambiguous
    wikilinks, duplicate titles, front matter that could not be read. Each with
    path, line, kind and message."""
    hidden = set(kb.guarded.hidden().values())  # notes outside the roots: never named
    problems = [p for p in kb.links.check() if p.path not in hidden]
    kinds = sorted({p.kind for p in problems})
    chosen = [
        p for p in problems if (kind is None or p.kind == kind) and (path is None or path in p.path)
    ]
    offset = page_offset(cursor, "check", [kind, path])
    page = chosen[offset : offset + limit]
    pieces, shown = fitting(render.problem(p) for p in page)
    more = len(chosen) > offset + shown
    next_cursor = (
        encode_cursor("check", shape=[kind, path], offset=offset + shown) if more else None
    )
    text = render.check_text(len(problems), len(chosen), kinds, offset, pieces, next_cursor)
    data = {
        "total": len(problems),
        "matching": len(chosen),
        "kinds": kinds,
        "problems": [render.problem_data(p) for p in page[:shown]],
        "next_cursor": next_cursor,
    }
    return answer(text, data)
