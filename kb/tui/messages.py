"""Messages widgets post to say what the user wants; screens act on them.

Dataclasses (as posting does): the fields are the message's whole meaning, and Textual's
``Message.__post_init__`` sets up the rest."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class OpenNote(Message):
    """Show this note (from a result, a connection, a series, the palette)."""

    note_id: int
    anchor: str = ""


@dataclass
class FollowLink(Message):
    """Follow a link written in the current note (clicked or chosen in the link list)."""

    href: str


@dataclass
class FilterByTag(Message):
    """Narrow the results to a tag (and the tags below it); None shows every note."""

    tag: str | None


@dataclass
class ListTerm(Message):
    """Show the notes with this tag or category (a link to a site's list page of it); an
    empty ``name``: every tag (the tag tree)."""

    kind: str  # tag | category
    name: str


@dataclass
class NotesChanged(Message):
    """The store changed (an ingest ran): what is on screen may be stale."""


@dataclass
class IngestProgress(Message):
    """An ingest has read ``done`` of ``total`` note files."""

    done: int
    total: int
    doing: str = "indexing"  # or "embedding for meaning" (kb/meaning, after the words)

    def can_replace(self, message: Message) -> bool:
        # One a file: a newer count waiting in the queue makes this one moot.
        return isinstance(message, IngestProgress)
