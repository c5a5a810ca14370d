"""What an editor asks about the note being written, answered from its text alone.

Pure functions over a buffer's (newline-normalised) text and a cursor, for the editor
server (``kb lsp``): which completion the cursor is in and which prefix it replaces,
where each link stands on its line, the heading outline, the text a link to a note is
written with, and the ranking of note names for what was typed (kb's one naming rule:
folded names first, then pinyin in full or initials, then fuzzy). Positions here are
0-based lines and string indexes in a line; the server converts them to the editor's
code units.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import quote, unquote

from kb.models import DEFAULT_TYPED_LINK_KEYS, Heading, Link
from kb.names.resolve import NoteName, fold
from kb.notes.naming import fuzzy_scores
from kb.text import slugify

# A fuzzy score (rapidfuzz WRatio) from which a name is offered as you type: above the
# naming rule's "close" (55), which lets four letters match any name sharing two.
FUZZY_OFFERED = 75

# -- completion: where the cursor is ---------------------------------------------------

WIKILINK = "wikilink"
MARKDOWN = "markdown"
HUGO_REF = "hugo-ref"
TAG = "tag"

_HUGO_OPEN = re.compile(r"\{\{[<%]\s*(?:rel)?ref\s+\"([^\"]*)$")
_TAG_BEFORE = re.compile(r"(?:^|(?<=[\s(（【「『，、：;；,]))#([^\W_][\w\-/]*|)$")
_FRONT_TAGS = re.compile(r"^\s*(?:tags|tag)\s*:\s*(.*)$")
_FRONT_ITEM = re.compile(r"^\s*-\s+(.*)$")
_TAG_CHARS = re.compile(r"[\w\-/]*$")
_HASHTAG_IN_LINE = re.compile(r"#([^\W_][\w\-/]*)")
_TAG_OPENERS = frozenset(" \t(（【「『，、：;；,")


class CompletionContext(NamedTuple):
    """What is being completed: ``kind`` (wikilink, markdown, hugo-ref, tag, or a
    ``heading`` of ``note``), the typed prefix, and where on the line it starts."""

    kind: str
    prefix: str
    start: int
    note: str = ""  # for headings: the note part typed before '#'
    link_kind: str = ""  # for headings: the kind of the link they are in


def completion_context(line: str, index: int, front_matter: str = "") -> CompletionContext | None:
    """The completion the cursor at ``index`` of ``line`` is in, if any.

    ``front_matter`` is the front-matter key the line belongs to ('' in the body, or for
    a line outside any key): in ``tags:`` a tag is completed without ``#``."""
    before = line[:index]
    if front_matter in ("tags", "tag"):
        return _front_matter_tag(before)
    found = _open_link(before)
    if found is not None:
        kind, start = found
        typed = before[start:]
        note, hash_, heading = typed.partition("#")
        if hash_:
            return CompletionContext("heading", heading, start + len(note) + 1, note, kind)
        return CompletionContext(kind, typed, start)
    tag = _TAG_BEFORE.search(before)
    if tag is not None:
        return CompletionContext(TAG, tag.group(1), tag.start(1))
    return None


def _open_link(before: str) -> tuple[str, int] | None:
    """The link left open before the cursor, and where its target starts."""
    wiki = before.rfind("[[")
    if wiki != -1:
        inside = before[wiki + 2 :]
        if "]]" not in inside and "|" not in inside and "[" not in inside:
            return WIKILINK, wiki + 2
    hugo = _HUGO_OPEN.search(before)
    if hugo is not None:
        return HUGO_REF, hugo.start(1)
    paren = before.rfind("](")
    if paren != -1:
        inside = before[paren + 2 :]
        if not any(ch in inside for ch in ")( \t<") and "://" not in inside:
            return MARKDOWN, paren + 2
    return None


def _front_matter_tag(before: str) -> CompletionContext | None:
    item = _FRONT_ITEM.match(before)
    value = item.group(1) if item else before
    tags = _FRONT_TAGS.match(value)
    if tags is not None:
        value = tags.group(1)
    if tags is None and item is None:
        return None
    typed = _TAG_CHARS.search(value)
    prefix = typed.group() if typed else ""
    return CompletionContext(TAG, prefix, len(before) - len(prefix))


def tag_at(line: str, index: int, front_matter: str = "") -> str:
    """The tag the cursor is on: ``#tag`` in the body, a value of ``tags:``; '' if none."""
    if front_matter in ("tags", "tag"):
        value = _FRONT_ITEM.match(line)
        rest = line if value is None else value.group(1)
        start = len(line) - len(rest)
        for match in re.finditer(r"[^\s\[\],'\"]+", rest):
            if match.start() + start <= index <= match.end() + start and ":" not in match.group():
                return match.group().lstrip("#")
        return ""
    for match in _HASHTAG_IN_LINE.finditer(line):
        if match.start() <= index <= match.end():
            before = line[match.start() - 1] if match.start() else " "
            if match.start() == 0 or before in _TAG_OPENERS:
                return match.group(1)
    return ""


def front_matter_key(lines: list[str], number: int) -> str:
    """The top-level front-matter key line ``number`` belongs to; '' outside the front
    matter or before any key."""
    if not lines or lines[0].strip() not in ("---", "+++") or number == 0:
        return ""
    fence = lines[0].strip()
    key = ""
    for at, line in enumerate(lines[1:], start=1):
        if line.strip() == fence:
            return key if at > number else ""
        match = re.match(r"^([A-Za-z_][\w-]*)\s*[:=]", line)
        if match:
            key = match.group(1)
        if at == number:
            return key
    return ""


# -- the text a link to a note is written with -----------------------------------------


def wikilink_name(note: NoteName, stem_is_unique: bool) -> str:
    """What ``[[…]]`` names a note by: its file stem when no other note shares it, else
    its path without the suffix (kb resolves a wikilink by path suffix)."""
    if stem_is_unique:
        return note.stem
    return posixpath.splitext(note.rel)[0]


def relative_target(from_rel: str, to_rel: str) -> str:
    """A Markdown link's target from the note at ``from_rel`` to the one at ``to_rel``
    (both inside one root), with spaces and parentheses %-encoded as CommonMark needs."""
    target = posixpath.relpath(to_rel, posixpath.dirname(from_rel) or ".")
    return target.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def preferred_style(links: Iterable[Link]) -> str:
    """How this file writes links to notes: wikilinks when most of them are, else
    Markdown (the default for a file with none)."""
    wiki = markdown = 0
    for link in links:
        if link.kind in ("wikilink", "embed"):
            wiki += 1
        elif link.kind in ("markdown", "reference"):
            markdown += 1
    return WIKILINK if wiki > markdown else MARKDOWN


def link_text(style: str, label: str, note: NoteName, from_rel: str, stem_unique: bool) -> str:
    """A whole link to ``note`` labelled ``label``, in ``style``."""
    if style == WIKILINK:
        name = wikilink_name(note, stem_unique)
        return f"[[{name}]]" if fold(name) == fold(label) else f"[[{name}|{label}]]"
    return f"[{label}]({relative_target(from_rel, note.rel)})"


# -- ranking note names for what was typed ---------------------------------------------


class RankedNote(NamedTuple):
    note: NoteName
    rule: str  # name | pinyin | fuzzy: which rule of the naming rule found it


class NameKeys(NamedTuple):
    """A note's names folded once (kept by the caller until the store changes)."""

    note: NoteName
    keys: tuple[str, ...]  # title, stem, path, aliases: case- and width-folded
    han: bool  # its title has Chinese characters (pinyin can name it)


def name_keys(names: Iterable[NoteName]) -> list[NameKeys]:
    return [
        NameKeys(
            note,
            tuple(fold_width(k) for k in (note.title, note.stem, note.rel, *note.aliases)),
            _has_han(note.title),
        )
        for note in names
    ]


def rank_notes(
    names: list[NameKeys],
    typed: str,
    pinyin_of: Callable[[NoteName], tuple[str, str]],
    limit: int = 50,
) -> list[RankedNote]:
    """Notes for a typed prefix, ranked as the naming rule ranks: a title, alias, stem or
    path that starts with it (case- and width-folded), then one that contains it, then
    pinyin of a Chinese title (full or initials); only when none of these finds a note,
    fuzzy matches by score (a typo: ``redis studdy``). Nothing
    typed: every note, by path."""
    wanted = fold_width(typed.strip())
    if not wanted:
        first = sorted(names, key=lambda n: n.note.rel)[:limit]
        return [RankedNote(n.note, "name") for n in first]
    starts: list[NoteName] = []
    contains: list[NoteName] = []
    for entry in names:
        keys = entry.keys
        if any(k.startswith(wanted) for k in keys):
            starts.append(entry.note)
        elif any(wanted in k for k in keys):
            contains.append(entry.note)
    found = {n.id for n in (*starts, *contains)}
    ranked = [RankedNote(n, "name") for n in sorted(starts, key=_name_order)]
    ranked += [RankedNote(n, "name") for n in sorted(contains, key=_name_order)]
    latin = "".join(wanted.split())
    if len(latin) >= 2 and latin.isascii() and latin.isalnum():
        for entry in names:
            if entry.note.id in found or not entry.han:
                continue
            full, initials = pinyin_of(entry.note)
            if full.startswith(latin) or initials.startswith(latin):
                ranked.append(RankedNote(entry.note, "pinyin"))
                found.add(entry.note.id)
    # As in the naming rule, fuzzy matching only when no name and no pinyin matched.
    if not ranked and len(wanted) >= 3:
        rest = [entry.note for entry in names if entry.note.id not in found]
        scores = fuzzy_scores(rest, typed)
        by_id = {n.id: n for n in rest}
        for note_id, score in sorted(scores.items(), key=lambda item: -item[1]):
            if score >= FUZZY_OFFERED:
                ranked.append(RankedNote(by_id[note_id], "fuzzy"))
    return ranked[:limit]


def _name_order(note: NoteName) -> tuple[int, str]:
    return (len(note.title), note.rel)


def fold_width(text: str) -> str:
    """Case- and width-folded (full-width Ｒｅｄｉｓ is Redis), spaces collapsed."""
    import unicodedata  # deferred: on first use

    return fold(unicodedata.normalize("NFKC", text))


def _has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)


# -- where links and headings stand ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlacedLink:
    """A link of the buffer: its target as written (without ``#anchor``), its kind and
    anchor, its 0-based line, where its target stands on the line (``start``..``end``)
    and the whole link's extent (``outer_start``..``outer_end``), as string indexes."""

    kind: str
    target: str
    anchor: str
    line: int
    start: int
    end: int
    outer_start: int
    outer_end: int


def placed_links(
    text: str, typed_link_keys: Iterable[str] = DEFAULT_TYPED_LINK_KEYS
) -> list[PlacedLink]:
    """Every link of a note's text that kb can place on its line, in order: where the
    parser's spans put each target (``kb.parse.spans``, URLs included), never where the
    target's text first appears on the line."""
    from kb.parse.spans import link_spans  # deferred: loads linkify_it, markdown_it, yaml

    starts = _line_starts(text)
    found: list[PlacedLink] = []
    for span in link_spans(text, typed_link_keys, urls=True):
        line = span.line - 1
        line_start = starts[line]
        line_text = _line(text, starts, line)
        start, end = span.start - line_start, span.end - line_start
        anchor = _anchor_after(line_text, end, span.kind)
        outer = _outer(line_text, start, end, span.kind)
        found.append(PlacedLink(span.kind, span.target, anchor, line, start, end, *outer))
    return sorted(found, key=lambda p: (p.line, p.start))


def _anchor_after(line: str, end: int, kind: str) -> str:
    if end >= len(line) or line[end] != "#":
        return ""
    stops = {"wikilink": "]|", "embed": "]|", "hugo-ref": '"', "front-matter": ",]'\""}
    stop = stops.get(kind, ") \t")
    at = end + 1
    while at < len(line) and line[at] not in stop:
        at += 1
    return line[end + 1 : at].strip()


def _outer(line: str, start: int, end: int, kind: str) -> tuple[int, int]:
    """The whole link around a target: ``[[…]]``, ``[…](…)``, ``{{< ref "…" >}}``."""
    if kind in ("wikilink", "embed"):
        open_at = line.rfind("[[", 0, start)
        close = line.find("]]", end)
        return (open_at if open_at != -1 else start, close + 2 if close != -1 else end)
    if kind == "hugo-ref":
        open_at = line.rfind("{{", 0, start)
        close = line.find("}}", end)
        return (open_at if open_at != -1 else start, close + 2 if close != -1 else end)
    if kind in ("markdown", "image", "url"):
        paren = line.rfind("](", 0, start)
        open_at = line.rfind("[", 0, paren) if paren != -1 else -1
        if open_at > 0 and line[open_at - 1] == "!":
            open_at -= 1
        close = line.find(")", end)
        return (open_at if open_at != -1 else start, close + 1 if close != -1 else end)
    return start, end


def link_at(links: list[PlacedLink], line: int, index: int) -> PlacedLink | None:
    """The link whose extent holds the cursor."""
    for link in links:
        if link.line == line and link.outer_start <= index <= link.outer_end:
            return link
    return None


def heading_at(headings: list[Heading], line: int) -> Heading | None:
    """The heading written on 0-based ``line``."""
    return next((h for h in headings if h.line - 1 == line), None)


class Section(NamedTuple):
    """A heading and the lines its section covers (0-based, ``last`` included)."""

    heading: Heading
    first: int
    last: int
    children: tuple[Section, ...]


def outline(headings: list[Heading], line_count: int) -> list[Section]:
    """The headings as a tree, each section running to the line before the next heading
    of its level or higher (or to the end of the text)."""
    items = sorted(headings, key=lambda h: h.line)

    def build(first: int, stop: int, last_line: int) -> list[Section]:
        sections = []
        at = first
        while at < stop:
            heading = items[at]
            after = at + 1
            while after < stop and items[after].level > heading.level:
                after += 1
            last = items[after].line - 2 if after < stop else last_line
            children = tuple(build(at + 1, after, last))
            sections.append(Section(heading, heading.line - 1, last, children))
            at = after
        return sections

    return build(0, len(items), max(line_count - 1, 0))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _line(text: str, starts: list[int], line: int) -> str:
    if line >= len(starts):
        return ""
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    return text[starts[line] : end]


def link_label(line: str, link: PlacedLink) -> str:
    """The text a link shows: ``[label](…)``'s label, a wikilink's ``|label`` or its
    target; '' when it has none."""
    if link.kind in ("wikilink", "embed"):
        inner = line[link.end : link.outer_end]
        bar = inner.find("|")
        if bar != -1 and inner.endswith("]]"):
            return inner[bar + 1 : -2].strip()
        return link.target.strip()
    if link.kind in ("markdown", "image"):
        close = line.rfind("](", link.outer_start, link.start + 1)
        opener = line.find("[", link.outer_start)
        if close != -1 and opener != -1 and opener < close:
            return line[opener + 1 : close].strip()
    return ""


def title_from_target(target: str) -> str:
    """A title for the note a path names: its file stem, dashes and underscores as spaces."""
    stem = posixpath.splitext(posixpath.basename(target.rstrip("/")))[0]
    return " ".join(stem.replace("-", " ").replace("_", " ").split())


# -- renaming a heading ------------------------------------------------------------------


def anchor_extent(line: str, link: PlacedLink) -> tuple[int, int] | None:
    """Where a link's ``#anchor`` stands on its line (after the ``#``), or None."""
    if not link.anchor or link.end >= len(line) or line[link.end] != "#":
        return None
    start = link.end + 1
    at = line.find(link.anchor, start)
    if at == -1 or line[start:at].strip():
        return None
    return at, at + len(link.anchor)


def own_anchor_extents(line: str, anchor: str) -> list[tuple[int, int]]:
    """Where ``[x](#anchor)`` and ``[[#anchor]]`` (links within the note) name ``anchor``."""
    found = []
    for opener, stops in (("](#", ")"), ("[[#", "]|")):
        at = line.find(opener + anchor)
        while at != -1:
            start = at + len(opener)
            end = start + len(anchor)
            if end == len(line) or line[end] in stops or line[end] in " \t":
                found.append((start, end))
            at = line.find(opener + anchor, end)
    return found


def heading_text_extent(line: str, heading: Heading) -> tuple[int, int] | None:
    """Where a heading's text stands on its ``#`` line."""
    match = re.match(r"^\s{0,3}#{1,6}\s+", line)
    if match is None:
        return None
    at = line.find(heading.text, match.end())
    return None if at == -1 else (at, at + len(heading.text))


def anchor_names_heading(anchor: str, heading: Heading) -> bool:
    """A link's anchor means this heading: its slug, or its text (a wikilink's way)."""

    wanted = unquote(anchor).strip().casefold()
    return wanted in (heading.slug.casefold(), heading.text.casefold()) or (
        slugify(wanted) == heading.slug
    )


def renamed_anchor(anchor: str, kind: str, old: Heading, new: Heading) -> str:
    """What an anchor to ``old`` becomes: the new text where it named the text (a
    wikilink's ``[[note#Heading]]``), else the new slug (%-encoded if it was)."""

    by_text = unquote(anchor).strip().casefold() == old.text.casefold()
    if by_text and kind in ("wikilink", "embed", "anchor"):
        return new.text
    if unquote(anchor) != anchor:  # written %-encoded: so is the new one
        return quote(new.slug, safe="-_.~")
    return new.slug
