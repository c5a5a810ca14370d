"""What the tools share: the arguments several take (a note's name, a cursor, a content
hash), the annotations that say whether a tool changes notes, and the cursor of a paged
answer."""

from __future__ import annotations

from typing import Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import Field

from kb.errors import UsageError
from kb.notes.paging import cursor_offset, decode_cursor

READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

NoteName = Annotated[
    str,
    Field(
        description="The note: its path as search returns it (notes/redis.md or redis), its "
        "title, an alias, a close misspelling, or the pinyin of a Chinese title (xcgs)",
        min_length=1,
        max_length=1000,
    ),
]
Cursor = Annotated[
    str | None,
    Field(description="next_cursor from the previous answer, to get the next page"),
]
Hash = Annotated[
    str,
    Field(
        description="content_hash of the note as you last read it (read_note gives it); "
        "the change is refused if the file changed since",
        min_length=4,
        max_length=64,
    ),
]


def page_offset(cursor: str | None, kind: str, shape: list[Any]) -> int:
    """Where the page ``cursor`` asks for starts; the cursor must come from a ``kind``
    call with the same arguments (``shape``)."""
    if not cursor:
        return 0
    fields = decode_cursor(cursor, kind)
    if fields.get("shape") != shape:
        raise UsageError(f"that cursor belongs to another {kind} call; repeat its arguments")
    return cursor_offset(fields)
