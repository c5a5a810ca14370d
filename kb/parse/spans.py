"""Where each link target stands in a note's text, to the character: what ``kb mv`` edits.

The positions come from the parser that ingest uses (``kb.parse.markdown``'s inline rules
note them when asked), so a look-alike in code, in link text or in prose is never taken
for a link: only what kb read as a link target is ever rewritten. Reference-style links
are found where they are defined (``[r]: target``), typed front-matter links in the value
of their key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from kb.models import DEFAULT_TYPED_LINK_KEYS
from kb.parse.frontmatter import split_front_matter
from kb.parse.limits import body_over_limit
from kb.parse.markdown import parse_for_spans
from kb.parse.note import typed_link_values

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


class TargetSpan(NamedTuple):
    """A link target as written at ``text[start:end]`` (without its ``#anchor``).

    ``kind`` is the stored link's kind (``reference`` for a definition), ``target`` the
    target as ingest stores it, ``line`` its 1-based line."""

    kind: str
    target: str
    start: int
    end: int
    line: int


def link_spans(
    text: str, typed_link_keys: Iterable[str] = DEFAULT_TYPED_LINK_KEYS, urls: bool = False
) -> list[TargetSpan]:
    """Every rewritable link target in a note's (newline-normalised) text, in order.

    With ``urls``, inline links to a URL too (kind ``url``, the whole URL as ingest
    stores it): the editor places them, ``kb mv`` never rewrites them.
    A span kb cannot place exactly (the parser's source and the text disagree) is left
    out, so the caller finds the link missing rather than edits the wrong bytes."""
    front = split_front_matter(text)
    body = front.body
    body_offset = len(text) - len(body)
    spans = _front_matter_spans(text, body_offset, front.data, typed_link_keys)
    if body_over_limit(body) is None:
        spans.extend(_body_spans(text, body, body_offset, urls))
    spans = [s for s in spans if s.end > s.start]
    return sorted(set(spans), key=lambda s: (s.start, s.end))


def _body_spans(text: str, body: str, body_offset: int, urls: bool) -> list[TargetSpan]:
    try:
        tokens, env = parse_for_spans(body)
    except RecursionError:
        return []
    starts = _line_starts(body)
    locate = _Locator(body, starts)
    found: list[TargetSpan] = []
    for token in tokens:
        if token.type != "inline" or not token.map or not token.children:
            continue
        columns: list[int | None] | None = None
        for child in token.children:
            span = child.meta.get("span") if child.meta else None
            if span is None:
                continue
            kind, target = _kind_and_target(child, urls)
            if kind is None:
                continue
            if columns is None:
                columns = locate.columns(token.content, token.map[0])
            place = locate.place(token.content, columns, span)
            if place is None:
                continue
            start, end = place
            raw = body[start:end]
            whole = kind in ("wikilink", "url")  # a URL is stored with its #fragment
            written = raw if whole else raw.partition("#")[0].rstrip()
            if not written:
                continue
            end = start + len(written)
            found.append(_span(text, kind, target, body_offset + start, body_offset + end))
    found.extend(_definition_spans(text, body, body_offset, starts, env))
    return found


def _kind_and_target(token: object, urls: bool = False) -> tuple[str | None, str]:
    """The stored kind and target of an inline token that carries a span (a link to a
    URL: only when ``urls``)."""
    kind_of = {"link_open": "markdown", "image": "image", "hugo_ref": "hugo-ref"}
    token_type = getattr(token, "type", "")
    if token_type == "wikilink":
        meta = getattr(token, "meta", {})
        inner = str(getattr(token, "content", "")).replace("\\|", "|")
        name = inner.partition("|")[0].partition("#")[0].strip()
        return ("embed" if meta.get("embed") else "wikilink"), name
    kind = kind_of.get(token_type)
    if kind is None:
        return None, ""
    attrs = getattr(token, "attrs", {})
    href = str(attrs.get("src" if kind == "image" else "href", "")) if kind != "hugo-ref" else ""
    if kind == "hugo-ref":
        href = str(getattr(token, "content", ""))
    href = href.strip()
    if _SCHEME.match(href) or href.startswith("//"):
        return ("url", href) if urls and kind == "markdown" else (None, "")
    return kind, href.partition("#")[0]


def _definition_spans(
    text: str, body: str, body_offset: int, starts: list[int], env: dict
) -> list[TargetSpan]:
    """Reference definitions (``[label]: target``), placed in the lines the parser says
    hold them."""
    found = []
    for label, ref in (env.get("references") or {}).items():
        line_range = ref.get("map")
        href = str(ref.get("href", ""))
        if not line_range or not href or _SCHEME.match(href) or href.startswith("//"):
            continue
        first, last = line_range
        region_start = starts[first]
        region_end = starts[last] if last < len(starts) else len(body)
        region = body[region_start:region_end]
        label_at = _find_label(region, label)
        if label_at is None:
            continue
        target = href.partition("#")[0]
        match = re.compile(r"\]:[ \t]*(?:\n[ \t>]*)?<?(" + re.escape(target) + ")").match(
            region, label_at
        )
        if match is None:
            continue
        start = body_offset + region_start + match.start(1)
        found.append(_span(text, "reference", target, start, start + len(target)))
    return found


def _find_label(region: str, label: str) -> int | None:
    """Where the ``]`` closing a definition's label stands, the label matched as
    markdown-it matches it (case- and space-folded)."""
    for match in re.finditer(r"\[((?:[^\[\]\\]|\\.)+)\]:", region):
        if " ".join(match.group(1).split()).casefold() == " ".join(label.split()).casefold():
            return match.end() - 2
    return None


def _front_matter_spans(
    text: str, body_offset: int, data: dict, keys: Iterable[str]
) -> list[TargetSpan]:
    """Typed links: each target inside its key's value, as a whole YAML/TOML scalar."""
    if not data or body_offset == 0:
        return []
    header = text[:body_offset]
    found = []
    for key in keys:
        region = _key_region(header, key)
        if region is None:
            continue
        start, end = region
        for value in typed_link_values(data, key):
            name = value.partition("#")[0].strip()
            if not name:
                continue
            pattern = re.compile(r"(?<=[\[\s,'\"])" + re.escape(name) + r"(?=[\]\s,'\"#]|$)")
            for match in pattern.finditer(header, start, end):
                found.append(_span(text, "front-matter", name, match.start(), match.end()))
    return found


def _key_region(header: str, key: str) -> tuple[int, int] | None:
    """Where a top-level key's value stands in the front matter: from after ``key:`` to
    the next line that starts another key."""
    match = re.compile(rf"^{re.escape(key)}[ \t]*[:=]", re.MULTILINE).search(header)
    if match is None:
        return None
    following = re.compile(r"^(?![ \t\-]|$)", re.MULTILINE).search(header, match.end() + 1)
    return match.end(), following.start() if following else len(header)


class _Locator:
    """Turns a position in an inline token's source into a position in the body.

    markdown-it hands each inline rule the block's text with container markers and
    indentation taken off; each of its lines is still found, whole, on the body line the
    block's map names. Consecutive tokens on one line (table cells) are found left to right.
    """

    def __init__(self, body: str, starts: list[int]) -> None:
        self.body = body
        self.starts = starts
        self.cursor: dict[int, int] = {}

    def columns(self, content: str, first_line: int) -> list[int | None]:
        """Where each line of an inline token's source starts in the body (None: not found)."""
        placed: list[int | None] = []
        lines = content.split("\n")
        for index, line in enumerate(lines):
            body_line = first_line + index
            if body_line >= len(self.starts):
                placed.append(None)
                continue
            line_start = self.starts[body_line]
            line_end = (
                self.starts[body_line + 1] if body_line + 1 < len(self.starts) else len(self.body)
            )
            column = self.body.find(line, line_start + self.cursor.get(body_line, 0), line_end)
            placed.append(column if column != -1 else None)
            if column != -1 and index == len(lines) - 1:  # later tokens on this line follow
                self.cursor[body_line] = column - line_start + len(line)
        return placed

    def place(
        self, content: str, columns: list[int | None], span: tuple[int, int]
    ) -> tuple[int, int] | None:
        start, end = span
        line_index = content.count("\n", 0, start)
        if content.count("\n", 0, end) != line_index or columns[line_index] is None:
            return None  # a target never spans lines
        column = columns[line_index]
        assert column is not None
        placed = column + start - (content.rfind("\n", 0, start) + 1)
        placed_end = placed + end - start
        if self.body[placed:placed_end] != content[start:end]:
            return None
        return placed, placed_end


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def _span(text: str, kind: str, target: str, start: int, end: int) -> TargetSpan:
    return TargetSpan(kind, target, start, end, text.count("\n", 0, start) + 1)
