"""The command palette opens any note by kb's naming rule (``kb.notes.naming``): its title
or path (Textual's fuzzy letters), an alias, the pinyin of a Chinese title in full or as
initials (``miaosha``, ``xcgs``) and a typo (``redis studdy``). Empty, it offers the notes
changed last and says that typing opens a note."""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from kb.errors import KbError
from kb.knowledge_base import KnowledgeBase
from kb.names.resolve import NoteName
from kb.text import one_line
from kb.tui.messages import OpenNote

if TYPE_CHECKING:
    from kb.names.resolve import NoteName
    from kb.notes.views import NoteChoice
    from kb.tui.app import KbApp

PLACEHOLDER = "Open a note: title, path, alias or pinyin (xcgs)…  also: theme, keys, quit"
DISCOVERED = 8  # notes offered by the empty palette: the ones changed last
# Hits in tiers (Textual sorts by score): the query whole in a title or path, then a note
# it names another way (alias, pinyin, typo), then the titles holding its letters apart.
_TIER = 1000.0


@dataclass(slots=True)
class PaletteNotes:
    """The notes as the palette matches them, read once per store generation."""

    choices: list[NoteChoice]
    texts: list[str]  # each "title  path", as shown
    folded: list[str]  # ... lower-cased, for finding the query in it
    aliases: list[list[str]]  # each note's aliases, lower-cased
    _pinyin: list[tuple[str, str]] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, choices: list[NoteChoice]) -> PaletteNotes:
        texts = [f"{one_line(c.title)}  {one_line(c.path)}" for c in choices]
        return cls(
            choices,
            texts,
            [text.lower() for text in texts],
            [[a.lower() for a in c.aliases] for c in choices],
        )

    def pinyin(self) -> list[tuple[str, str]]:
        """Each title's pinyin (kb.notes.naming.pinyin_keys), computed on the first query
        that needs it: pypinyin takes 0.2 s to import and 150 µs a Chinese title."""
        if self._pinyin is None:
            from kb.notes.naming import pinyin_keys  # deferred: 2 modules more

            self._pinyin = pinyin_keys([c.title for c in self.choices])
        return self._pinyin


class NoteDiscoveryHit(DiscoveryHit):
    """A note in the empty palette. Textual orders the palette by score, and every
    discovery hit scores 0, so Textual's own commands (Keys, Quit, Theme), which arrive
    first, came before any note; a note scores above them."""

    @property
    def score(self) -> float:
        return 1.0


class NoteCommands(Provider):
    """Every note, by title, path, alias and pinyin."""

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
        loaded = PaletteNotes.of(self.kb.note_choices())
        app.palette_notes = (generation, loaded)
        return loaded

    async def discover(self) -> Hits:
        """The empty palette: the notes changed last, each saying it opens that note."""
        try:
            notes = await asyncio.to_thread(self.kb.recent, DISCOVERED, True)
        except KbError:  # a damaged store: the search screen says so
            return
        for note in notes:
            yield NoteDiscoveryHit(
                Content(f"{one_line(note.title)}  {one_line(note.path)}"),
                partial(self.app.post_message, OpenNote(note.id)),
                text=one_line(note.title),
                help="open note (changed lately); type to find any note",
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        # Found off the UI thread, and only the likeliest scored: Textual's matcher tries
        # every way the letters fit, 0.3 ms a note (33 s for 100,000 notes on one key).
        notes = await self._choices()
        chosen = await asyncio.to_thread(fuzzy_candidates, notes.folded, query)
        wanted = query.lower()
        for index in chosen:
            candidate = notes.texts[index]
            score = matcher.match(candidate)
            if score > 0:
                tier = 2 if wanted in notes.folded[index] else 0
                yield self._hit(
                    notes.choices[index],
                    tier * _TIER + min(score, _TIER - 1),
                    self._highlight(matcher, candidate),
                    "open note",
                )
        if len(chosen) >= SCORED:
            return  # the list is full: the other rules come after these in kb's order
        named = await asyncio.to_thread(named_otherwise, notes, query, set(chosen))
        for rank, (index, why) in enumerate(named):
            yield self._hit(
                notes.choices[index],
                _TIER + (_TIER - 1) / (rank + 1),
                Content(notes.texts[index]),
                f"open note ({why})",
            )

    def _hit(self, choice: NoteChoice, score: float, shown: Content, why: str) -> Hit:
        return Hit(
            score,
            shown,
            partial(self.app.post_message, OpenNote(choice.id)),
            text=one_line(choice.title),
            help=why,
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


def named_otherwise(
    notes: PaletteNotes, query: str, found: set[int], keep: int = SCORED
) -> list[tuple[int, str]]:
    """The notes ``query`` names by kb's other rules (kb.notes.naming), each with why, in
    the rules' order: an alias holding it, the title's pinyin starting with it (in full or
    as initials), a close spelling of a title, alias or file name; none in ``found``."""
    from kb.notes.naming import FUZZY_MATCH, fuzzy_scores, pinyin_query  # deferred: 2 modules more

    wanted = " ".join(query.lower().split())
    if not wanted:
        return []
    named: dict[int, str] = {}
    for index, aliases in enumerate(notes.aliases):
        alias = next((a for a in aliases if wanted in a), None)
        if alias is not None and index not in found:
            named.setdefault(index, f"alias: {one_line(alias)}")
    spelled = pinyin_query(query)
    if spelled:
        for index, (full, initials) in enumerate(notes.pinyin()):
            if index in found or not full:
                continue
            if full.startswith(spelled) or initials.startswith(spelled):
                named.setdefault(index, f"pinyin: {spelled}")
    if len(named) + len(found) < keep and len(wanted) >= 3:
        names = [_note_name(index, choice) for index, choice in enumerate(notes.choices)]
        scores = fuzzy_scores(names, query)
        for index in sorted(scores, key=lambda i: -scores[i]):
            if scores[index] >= FUZZY_MATCH and index not in found:
                named.setdefault(index, "close spelling")
    return list(named.items())[: max(0, keep - len(found))]


def _note_name(index: int, choice: NoteChoice) -> NoteName:

    return NoteName(index, "", choice.path, choice.title, aliases=choice.aliases)
