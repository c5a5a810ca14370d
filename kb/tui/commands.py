"""The command palette opens any note by its title (fuzzy, Chinese titles included)."""

from __future__ import annotations

import asyncio
from functools import partial

from textual.command import Hit, Hits, Provider
from textual.content import Content

from kb.text import one_line
from kb.tui.messages import OpenNote


class NoteCommands(Provider):
    """Every note, by title and path."""

    async def startup(self) -> None:
        # In a thread: the store's lock may be held by an ingest; the palette must open.
        self.notes = await asyncio.to_thread(self._load)

    def _load(self) -> list[tuple[int, str, str]]:
        app = self.app
        with app.kb_lock:  # type: ignore[attr-defined]
            return [
                (row["id"], one_line(row["title"]), one_line(row["path"]))
                for row in app.kb.store.notes()  # type: ignore[attr-defined]
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
    def _highlight(matcher, candidate: str) -> Content:
        # Matcher.highlight parses its text as markup; note titles must never be markup.
        content = Content(candidate)
        _, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
        for offset in offsets:
            content = content.stylize("bold $accent", offset, offset + 1)
        return content
