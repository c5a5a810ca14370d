"""The command palette opens any note by its title (fuzzy, Chinese titles included)."""

from __future__ import annotations

import asyncio
from functools import partial

from textual.command import Hit, Hits, Matcher, Provider
from textual.content import Content

from kb.knowledge_base import KnowledgeBase
from kb.text import one_line
from kb.tui.app import KbApp
from kb.tui.messages import OpenNote


class NoteCommands(Provider):
    """Every note, by title and path."""

    @property
    def kb(self) -> KnowledgeBase:
        app = self.app
        assert isinstance(app, KbApp)  # the palette only opens inside kb's app
        return app.kb

    async def startup(self) -> None:
        # In a thread: reading every title is a core call, and the UI must not wait for it.
        self.notes = await asyncio.to_thread(self._load)

    def _load(self) -> list[tuple[int, str, str]]:
        return [
            (note.id, one_line(note.title), one_line(note.path)) for note in self.kb.note_choices()
        ]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for note_id, title, path in self.notes:
            candidate = f"{title}  {path}"
            score = matcher.match(candidate)
            if score > 0:
                yield Hit(
                    score,
                    self._highlight(matcher, candidate),
                    partial(self.app.post_message, OpenNote(note_id)),
                    text=title,
                    help="open note",
                )

    @staticmethod
    def _highlight(matcher: Matcher, candidate: str) -> Content:
        # Matcher.highlight parses its text as markup; note titles must never be markup.
        content = Content(candidate)
        _, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
        for offset in offsets:
            content = content.stylize("bold $accent", offset, offset + 1)
        return content
