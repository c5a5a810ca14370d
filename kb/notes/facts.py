"""What every view of one note starts from: its place, title, date, tags, series and
headings, read from the store once (``kb show``'s details and the app's page share it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb.text import clean_line

if TYPE_CHECKING:
    from kb.store import NoteText, Store


@dataclass(frozen=True, slots=True)
class NoteFacts:
    id: int
    path: str
    file: Path
    title: str
    date: str | None
    tags: list[str]
    series: list[str]
    headings: list[tuple[int, str, str]]  # (level, text, slug)


def read_facts(store: Store, row: NoteText, file: Path, clean: bool) -> NoteFacts:
    """The facts of the stored note ``row``; ``clean`` makes its text safe for a screen
    (kb.text.clean_line), as the app needs; ``kb show`` cleans when it prints."""

    def text(value: str) -> str:
        return clean_line(value) if clean else value

    return NoteFacts(
        id=row.id,
        path=row.path,
        file=file,
        title=text(row.title),
        date=row.date,
        tags=[text(t) for t in store.terms.of_note("tags", row.id)],
        series=[text(s) for s in store.terms.of_note("series", row.id)],
        headings=[(h.level, text(h.text), h.slug) for h in store.notes.headings(row.id)],
    )
