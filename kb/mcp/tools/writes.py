"""The tools that change notes, offered only by ``kb mcp --write``: new_note,
append_to_note, replace_in_note and move_note. Each names the content_hash it read and
goes through ``kb.notes.guarded``, which takes kb's write lock on the note."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from kb.knowledge_base import KnowledgeBase  # at run time: the SDK reads the signatures
from kb.mcp.answers import answer, guarded
from kb.mcp.tools.arguments import Hash, NoteName
from kb.text import clean_line, one_line

if TYPE_CHECKING:
    from kb.notes.source import Written


@guarded
def new_note(
    kb: KnowledgeBase,
    title: Annotated[str, Field(min_length=1, max_length=300, description="The title")],
    folder: Annotated[
        str | None,
        Field(description="Folder inside the notes root (default: the configured one)"),
    ] = None,
    tags: Annotated[list[str], Field(description="Tags for the front matter")] = [],  # noqa: B006
) -> CallToolResult:
    """Create a new note from kb's template (front matter with title, today's date
    and tags, then a heading), in a folder inside the notes root; returns its path
    and content_hash, ready for append_to_note. Search first: the user may already
    have a note on this."""
    return _written("created", kb.guarded.create(title, folder, tags))


@guarded
def append_to_note(
    kb: KnowledgeBase,
    note: NoteName,
    text: Annotated[str, Field(min_length=1, description="Markdown to add at the end")],
    content_hash: Hash,
) -> CallToolResult:
    """Add Markdown at the end of a note. Name the content_hash read_note gave; if
    the user changed the file since, nothing is written and you must read it again."""
    return _written("appended to", kb.guarded.append(note, text, content_hash))


@guarded
def replace_in_note(
    kb: KnowledgeBase,
    note: NoteName,
    old_text: Annotated[
        str,
        Field(
            min_length=1,
            description="Text copied exactly from the note; it must "
            "occur exactly once (include surrounding words to make it unique)",
        ),
    ],
    new_text: Annotated[str, Field(description="What replaces it (empty deletes it)")],
    content_hash: Hash,
) -> CallToolResult:
    """Replace one exact passage of a note with new text. old_text must occur once in
    the note as read_note returned it; name that content_hash. Refused, with nothing
    written, when the text occurs zero or several times or the file changed since."""
    return _written("replaced in", kb.guarded.replace(note, old_text, new_text, content_hash))


@guarded
def move_note(
    kb: KnowledgeBase,
    note: NoteName,
    new_path: Annotated[
        str,
        Field(
            min_length=1,
            description="New path inside the notes root "
            "(ideas/redis.md), or a folder ending in / to move it into",
        ),
    ],
    content_hash: Hash,
) -> CallToolResult:
    """Move or rename a note as `kb mv` does, rewriting every link to it in other
    notes (one transaction: all files changed or none). Name the content_hash."""
    plan, _ = kb.guarded.move(note, new_path, content_hash)
    moved = kb.guarded.source(str(plan.destination))
    files = [str(edit.path) for edit in plan.files]
    text = (
        f"moved to {moved.note.path}; links rewritten in {len(files)} file(s)\n"
        f"content_hash: {moved.hash}\n"
    )
    return answer(
        text, {"path": moved.note.path, "content_hash": moved.hash, "files_changed": len(files)}
    )


def _written(what: str, done: Written) -> CallToolResult:
    """The answer to a write: the note written and its new content_hash, and, when the
    store could not take the change, that the note is written all the same."""
    text = f"{what} {one_line(done.note.path)}\ncontent_hash: {done.content_hash}\n"
    data: dict[str, Any] = {"path": done.note.path, "content_hash": done.content_hash}
    if done.unindexed:
        notice = (
            f"the note is written, but search does not see the change yet "
            f"({clean_line(done.unindexed)}); 'kb ingest' catches up"
        )
        text += f"notice: {notice}\n"
        data["notice"] = notice
    return answer(text, data)
