"""Browsing: reading a note in the terminal UI, computed here so it is tested without a UI.

A note's Markdown prepared for display (wikilinks and Hugo refs made followable, cut
into pieces), following a link from it, and browser-style history. What a page holds is
built in ``kb.notes.views``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from kb.names.resolve import LinkIndex, LinkToResolve, site_path, taxonomy_page
from kb.parse.fences import code_lines
from kb.parse.site_markup import SiteMarkup
from kb.text import clean_text

KB_SCHEME = "kb:"
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_REF_IN_LINK = re.compile(r"\]\(\s*\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}\s*\)")
_REF = re.compile(r"\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class Follow:
    """Where following a link leads."""

    kind: str  # note | external | anchor | tag | category | unresolved
    note_id: int | None = None
    anchor: str = ""
    url: str = ""
    target: str = ""


def follow(
    index: LinkIndex,
    note_id: int,
    href: str,
    term_names: Callable[[str], list[str]] | None = None,
) -> Follow:
    """Where a link in a note leads, by the same rules as ingest: another note, a heading
    of this one, an external URL (shown, never opened), a site's page of one tag or
    category (named as kb names it among ``term_names("tags"|"categories")``), or
    nowhere."""
    kb_link = parse_kb_href(href)
    if kb_link is not None:
        kind, target, anchor = kb_link
    else:
        target, _, anchor = href.partition("#")
        kind = "url" if external_url(target) else "markdown"
        if not target and anchor:
            return Follow("anchor", note_id, anchor)
    found = index.resolve(LinkToResolve(0, note_id, target, anchor, kind))
    if found.target_id is not None:
        if found.target_id == note_id and anchor:
            return Follow("anchor", note_id, anchor)
        return Follow("note", found.target_id, anchor)
    if found.status == "external":
        return Follow("external", url=href)
    if found.status in ("tag", "category"):
        page = taxonomy_page(_without_host(target, index))
        written = page[1] if page else ""
        terms = "tags" if found.status == "tag" else "categories"
        if written and term_names is not None:
            written = taxonomy_term(term_names(terms), written)
        return Follow(found.status, target=written)
    return Follow("unresolved", target=href)


def _without_host(target: str, index: LinkIndex) -> str:
    path = site_path(target)
    base = index.site.base_path.strip("/").lower()
    return path[len(base) :] if base and path.startswith(base + "/") else path


def taxonomy_term(names: list[str], written: str) -> str:
    """The tag or category among ``names`` that a site's list page ``/tags/WRITTEN/`` shows:
    the one whose URL form is ``written`` (Hugo lower-cases and urlizes: ``Redis 学习`` is
    ``redis-学习``); ``written`` itself when none is (the app lists what matches it)."""
    from kb.sites.hugo import urlize  # deferred: 12 modules more

    wanted = unquote(written).strip("/").casefold()
    for name in names:
        if wanted in (
            name.casefold(),
            urlize(name).casefold(),
            urlize(name.replace("/", "-")).casefold(),
        ):
            return name
    return unquote(written)


def display_markdown(body: str) -> str:
    """A note body ready for a Markdown widget: control characters stripped (bidi controls
    are kept, as a link target may hold them: the widget shows them), wikilinks and Hugo
    ``ref`` shortcodes (which no Markdown renderer knows) turned into ``kb:`` links that
    the UI hands back to ``follow``, and the rest of a site's markup (Liquid, shortcodes)
    shown as the site shows it (``kb.parse.site_markup``). Code is left exactly as
    written (but for Liquid's raw tags)."""
    lines = code_lines(clean_text(body).split("\n"))
    linked = ((line if is_code else _rewrite_links(line), is_code) for line, is_code in lines)
    return "\n".join(SiteMarkup().lines(linked))


def _rewrite_links(line: str) -> str:
    # Split on inline code spans so `[[x]]` in backticks stays text.
    parts = re.split(r"(`+[^`]*`+)", line)
    for index in range(0, len(parts), 2):
        part = _REF_IN_LINK.sub(lambda m: f"]({KB_SCHEME}ref/{quote(m.group(1))})", parts[index])
        part = _REF.sub(lambda m: f"[{m.group(1)}]({KB_SCHEME}ref/{quote(m.group(1))})", part)
        parts[index] = _WIKILINK.sub(_wikilink_to_markdown, part)
    return "".join(parts)


def _wikilink_to_markdown(match: re.Match[str]) -> str:
    inner = match.group(2).replace("\\|", "|")
    target, _, label = inner.partition("|")
    label = (label or target).strip().replace("[", "(").replace("]", ")")
    prefix = "↪ " if match.group(1) else ""
    return f"[{prefix}{label}]({KB_SCHEME}wiki/{quote(target.strip())})"


def parse_kb_href(href: str) -> tuple[str, str, str] | None:
    """``kb:wiki/name#heading`` → (kind, target, anchor); None for other hrefs."""
    if not href.startswith(KB_SCHEME):
        return None
    kind, _, rest = href[len(KB_SCHEME) :].partition("/")
    target, _, anchor = unquote(rest).partition("#")
    return _KB_LINK_KINDS.get(kind, "hugo-ref"), target, anchor


# kb:KIND/target → the link kind resolution knows (kb.parse.site_markup writes link, post).
_KB_LINK_KINDS = {
    "wiki": "wikilink",
    "ref": "hugo-ref",
    "link": "liquid-link",
    "post": "liquid-post",
}


def split_for_display(markdown: str, chunk_chars: int = 2500) -> list[str]:
    """Cut Markdown into pieces at blank lines outside code, so a long note can be shown
    piece by piece (the first screen appears at once) without breaking a block."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line, is_code in code_lines(markdown.split("\n")):
        current.append(line)
        size += len(line) + 1
        if not is_code and not line.strip() and size >= chunk_chars:
            pieces.append("\n".join(current))
            current, size = [], 0
    if current:
        pieces.append("\n".join(current))
    return pieces or [""]


class History:
    """Browser-style history of visited notes: back, forward, and a breadcrumb."""

    def __init__(self) -> None:
        self._items: list[int] = []
        self._position = -1

    @property
    def current(self) -> int | None:
        return self._items[self._position] if self._position >= 0 else None

    @property
    def can_go_back(self) -> bool:
        return self._position > 0

    @property
    def can_go_forward(self) -> bool:
        return self._position < len(self._items) - 1

    def visit(self, note_id: int) -> None:
        if self.current == note_id:
            return
        del self._items[self._position + 1 :]
        self._items.append(note_id)
        self._position = len(self._items) - 1

    def back(self) -> int | None:
        if self.can_go_back:
            self._position -= 1
        return self.current

    def forward(self) -> int | None:
        if self.can_go_forward:
            self._position += 1
        return self.current

    def trail(self, length: int = 5) -> list[int]:
        """The notes that led here, oldest first, ending with the current one."""
        return self._items[max(0, self._position - length + 1) : self._position + 1]


def external_url(target: str) -> str | None:
    return target if _SCHEME.match(target) and not target.startswith(KB_SCHEME) else None
