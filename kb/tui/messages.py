"""Messages widgets post to say what the user wants; screens act on them."""

from __future__ import annotations

from textual.message import Message


class OpenNote(Message):
    """Show this note (from a result, a connection, a series, the palette)."""

    def __init__(self, note_id: int, anchor: str = "") -> None:
        super().__init__()
        self.note_id = note_id
        self.anchor = anchor


class FollowLink(Message):
    """Follow a link written in the current note (clicked or chosen in the link list)."""

    def __init__(self, href: str) -> None:
        super().__init__()
        self.href = href


class FilterByTag(Message):
    """Narrow the results to a tag (and the tags below it)."""

    def __init__(self, tag: str | None) -> None:
        super().__init__()
        self.tag = tag


class NotesChanged(Message):
    """The store changed (an ingest ran): what is on screen may be stale."""


class IngestProgress(Message):
    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total
