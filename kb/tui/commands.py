"""The command palette opens any note by its title (fuzzy, Chinese titles included)."""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import Hit, Hits, Matcher, Provider
from textual.content import Content

from kb.knowledge_base import KnowledgeBase
from kb.text import one_line
from kb.tui.messages import OpenNote

if TYPE_CHECKING:
    from kb.tui.app import KbApp

# (note id, title, title and path) per note, and each "title  path" lower-cased.
PaletteNotes = tuple[list[tuple[int, str, str]], list[str]]


class NoteCommands(Provider):
    """Every note, by title and path."""

    @property
    def kb(self) -> KnowledgeBase:
        return self.kb_app.kb

    @property
    def kb_app(self) -> KbApp:
        return cast("KbApp", self.app)  # the palette only opens inside kb's app

    _loading: asyncio.Future[PaletteNotes] | None = None

    async def _choices(self) -> PaletteNotes:
        # Read on the first key, not when the palette opens: in a thread, yet at 100,000
        # notes it holds the interpreter long enough to slow the opening 0.35 s → 1.1 s.
        # Shared, and shielded from the search that started it: each key cancels the last.
        if self._loading is None:
            self._loading = asyncio.ensure_future(asyncio.to_thread(self._load))
        return await asyncio.shield(self._loading)

    def _load(self) -> PaletteNotes:
        """The notes as the palette matches them; kept by the app until an ingest changes
        the store (reading 100,000 titles takes about a second)."""
        app = self.kb_app
        generation = self.kb.generation()
        if app.palette_notes is not None and app.palette_notes[0] == generation:
            return app.palette_notes[1]
        notes = [
            (note.id, one_line(note.title), f"{one_line(note.title)}  {one_line(note.path)}")
            for note in self.kb.note_choices()
        ]
        loaded: PaletteNotes = notes, [candidate.lower() for _, _, candidate in notes]
        app.palette_notes = (generation, loaded)
        return loaded

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        # Found off the UI thread, and only the likeliest scored: Textual's matcher tries
        # every way the letters fit, 0.3 ms a note (33 s for 100,000 notes on one key).
        notes, folded = await self._choices()
        chosen = await asyncio.to_thread(fuzzy_candidates, folded, query)
        for index in chosen:
            note_id, title, candidate = notes[index]
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


SCORED = 100  # candidates the palette scores on a key (~0.3 ms each, on the UI thread)


def fuzzy_candidates(folded: Sequence[str], query: str, keep: int = SCORED) -> list[int]:
    """Which of the lower-cased ``folded`` texts Textual's fuzzy matcher can match (they
    hold the query's characters in order), at most ``keep`` of them, likeliest first:
    those holding the query whole (where it starts earliest, then the shortest), then
    the rest, shortest first. Below ``keep`` matches this is every one of them."""
    wanted = query.lower()
    if not wanted:
        return []
    whole = [i for i, text in enumerate(folded) if wanted in text]
    if len(whole) >= keep:
        return heapq.nsmallest(keep, whole, key=lambda i: (folded[i].find(wanted), len(folded[i])))
    letters = re.compile(".*?".join(map(re.escape, wanted)), re.DOTALL)
    held = set(whole)
    scattered = [i for i, text in enumerate(folded) if i not in held and letters.search(text)]
    whole.sort(key=lambda i: (folded[i].find(wanted), len(folded[i])))
    rest = heapq.nsmallest(keep - len(whole), scattered, key=lambda i: len(folded[i]))
    return whole + rest
