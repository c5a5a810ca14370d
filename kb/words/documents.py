"""The search document of a note: the fields every engine indexes, built the same way
from a fresh parse and from the store, so an engine can always remove what it added."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from kb.words.tokenize import normalise

if TYPE_CHECKING:
    from kb.models import ParsedNote

FIELDS = ("title", "meta", "headings", "body", "code")
_PATH_SEPARATORS = re.compile(r"[-_/\\.]+")


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
    described: Iterable[str] = (),
    rel: str = "",
) -> SearchDocument:
    """``described``: the front matter's description, summary and keywords, and ``rel``
    the file's path in its root, both searched like headings."""
    # One entry per folded name, sorted: neither the order a table returns them in nor
    # the spelling it kept (tags are unique without case) can change the tokens.
    meta: dict[str, str] = {}
    for name in (*aliases, *tags, *series, *categories):
        meta.setdefault(normalise(name), name)
    names = [meta[key] for key in sorted(meta)]
    heads = [*headings, *described, path_words(rel)] if rel else [*headings, *described]
    return SearchDocument(title, "\n".join(names), "\n".join(heads), text, code)


def path_words(rel: str) -> str:
    """A file's folders and name as words: ``posts/torch-cupy-import-order.md`` →
    posts torch cupy import order."""
    stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
    return " ".join(_PATH_SEPARATORS.sub(" ", stem).split())


def described(front_matter: Mapping[str, object]) -> list[str]:
    """What the front matter says the note is about besides its title and tags: its
    description, summary and keywords (a list or a string), as text."""
    found: list[str] = []
    for key in ("description", "summary", "keywords"):
        value = front_matter.get(key)
        items = value if isinstance(value, list) else [value]
        found.extend(str(v).strip() for v in items if isinstance(v, str | int | float))
    return [text for text in found if text]


def document_of(note: ParsedNote, rel: str = "") -> SearchDocument:
    return search_document(
        note.title,
        note.name_aliases,
        note.tags,
        note.series,
        note.categories,
        (h.text for h in note.headings),
        note.text,
        note.code,
        described(note.front_matter),
        rel,
    )
