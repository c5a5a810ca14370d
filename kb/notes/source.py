"""A note as a server hands it to a caller: the file's Markdown exactly as written, its
front matter as fields, its stored facts, and the content hash a later write names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from kb.notes.listing import NoteDetails
    from kb.notes.naming import NoteRef


@dataclass(frozen=True, slots=True)
class NoteSource:
    note: NoteRef
    file: Path
    markdown: str  # decoded, line endings as \\n
    hash: str  # of the file's bytes (kb.notes.writing.content_hash)
    front_matter: dict[str, Any]
    details: NoteDetails


class Written(NamedTuple):
    """A note a caller changed or created, its new content hash, and why the store could
    not take the change yet ('' when it did)."""

    note: NoteRef
    content_hash: str
    unindexed: str


def front_matter_fields(markdown: str) -> dict[str, Any]:
    """The front matter as a JSON-safe mapping ({} when there is none or it is invalid)."""
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml

    return dict(split_front_matter(markdown).data)
