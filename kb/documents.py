"""The search document of a note: the fields every engine indexes, built the same way
from a fresh parse and from the store, so an engine can always remove what it added."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from kb.tokenize import normalise

if TYPE_CHECKING:
    from kb.models import ParsedNote

FIELDS = ("title", "meta", "headings", "body", "code")


class SearchDocument(NamedTuple):
    title: str
    meta: str  # name aliases, tags, series and categories
    headings: str
    body: str
    code: str

    def fields(self) -> tuple[str, str, str, str, str]:
        return (self.title, self.meta, self.headings, self.body, self.code)


def search_document(
    title: str,
    aliases: Iterable[str],
    tags: Iterable[str],
    series: Iterable[str],
    categories: Iterable[str],
    headings: Iterable[str],
    text: str,
    code: str,
) -> SearchDocument:
    # One entry per folded name, sorted: neither the order a table returns them in nor
    # the spelling it kept (tags are unique without case) can change the tokens.
    meta: dict[str, str] = {}
    for name in (*aliases, *tags, *series, *categories):
        meta.setdefault(normalise(name), name)
    names = [meta[key] for key in sorted(meta)]
    return SearchDocument(title, "\n".join(names), "\n".join(headings), text, code)


def document_of(note: ParsedNote) -> SearchDocument:
    return search_document(
        note.title,
        note.name_aliases,
        note.tags,
        note.series,
        note.categories,
        (h.text for h in note.headings),
        note.text,
        note.code,
    )
