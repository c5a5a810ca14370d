"""Plain data that flows from the parser to the store.

The frozen records are ``typing.NamedTuple``: every command imports this module, and a
NamedTuple costs a tenth of a frozen dataclass to define (and less to build and pickle)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

NOTE_SUFFIXES = (".md", ".markdown")  # what makes a file a note (kb.ingest.walk, kb.links)

# Front-matter keys whose values are links to other notes ("typed links").
# Bump when the parser reads the same file differently (what text, headings or links it
# finds): the settings signature carries it, so the next ingest reads every note again.
PARSER_VERSION = "3"  # 2: site-generator markup is not text; 3: `[[ ` + space is no wikilink
DEFAULT_TYPED_LINK_KEYS = ("related", "see_also", "uses", "lecture", "project")


class Heading(NamedTuple):
    level: int
    text: str
    slug: str
    line: int


# How a link was written: [t](x.md), [[x]], ![[x]], {{< ref "x" >}}, [t][r] with its
# definition, a typed front-matter key (related: x), an external URL, an image, or an
# anchor in the same note ([t](#h), [[#h]]).
LinkKind = Literal[
    "markdown",
    "wikilink",
    "embed",
    "hugo-ref",
    "reference",
    "front-matter",
    "url",
    "image",
    "anchor",
]


class Link(NamedTuple):
    """One link as written; resolution to a note happens later, in the store."""

    target: str  # as written (after unescaping), without the #anchor
    kind: LinkKind
    line: int
    anchor: str = ""
    text: str = ""
    rel: str = ""  # front-matter key for typed links (related, uses, ...), else ""


class Problem(NamedTuple):
    kind: str
    message: str
    line: int | None = None


@dataclass(slots=True)
class FrontMatter:
    data: dict[str, Any] = field(default_factory=dict)
    format: str = ""  # "yaml", "toml" or "" when absent
    body_start_line: int = 1  # 1-based line where the Markdown body starts
    body: str = ""
    problems: list[Problem] = field(default_factory=list)


@dataclass(slots=True)
class ParsedNote:
    """Everything the parser knows about one note, independent of where it is stored."""

    title: str
    date: str | None
    draft: bool
    slug: str | None
    tags: list[str]
    categories: list[str]
    series: list[str]
    keywords: list[str]
    name_aliases: list[str]
    url_aliases: list[str]
    headings: list[Heading]
    links: list[Link]
    text: str
    code: str
    summary: str
    word_count: int
    front_matter: dict[str, Any]
    problems: list[Problem]
