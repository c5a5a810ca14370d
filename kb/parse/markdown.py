"""Markdown body → headings, links, tags, plain text and code, from markdown-it-py tokens.

markdown-it-py tells code from text; what it does not know (wikilinks, Hugo ``ref``
shortcodes, inline ``#tags``) is added as inline rules, so look-alikes inside code
never become links or tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline import image as commonmark_image
from markdown_it.rules_inline import link as commonmark_link
from markdown_it.token import Token

from kb.models import Heading, Link, LinkKind
from kb.parse.limits import MAX_NESTING
from kb.text import slugify

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# What a `[[ … ]]` holds in shell scripts written in prose: bash's test needs a space after
# `[[` (`[[ 2 < 10 ]]`), where a wikilink is written tight (`[[name]]`, as Obsidian, Foam and
# zk write them); a test flag (-f x, ! -d y), a variable or an operator. Such text names no note.
_SHELL_TEST = re.compile(
    r"^\s|^(?:!\s+)?-[A-Za-z]{1,2}(?:\s|$)|\$|==|!=|=~|&&|\|\||\s[<>]\s|\s-(?:eq|ne|lt|le|gt|ge|nt|ot|ef)\s"
)
_HUGO_REF = re.compile(r"\{\{([<%])\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}")
_HUGO_REF_LINK = re.compile(
    r"\[([^\[\]\n]*)\]\(\s*\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s]+?)\"?\s*[>%]\}\}\s*\)"
)
# Jekyll links written with Liquid, which CommonMark does not take for links (the
# destination has spaces): [t]({{ site.baseurl }}{% link _posts/a.md %}),
# [t]({% post_url 2017-09-13-name %}), [t]({{ site.url }}{{ site.baseurl }}/docs/a/).
_LIQUID_LINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*"
    r"((?:\{\{\s*site\.(?:url|baseurl)\s*\}\}\s*)*)"
    r"(?:\{%\s*(link|post_url)\s+([^%\s]+)\s*%\}|([^()\s]*))\s*\)"
)
# A tag starts after whitespace or opening punctuation; it holds letters (any script),
# digits, `_`, `-` and `/` for hierarchy, and is not all digits (#1 is an issue number).
_HASHTAG = re.compile(r"#([^\W_][\w\-/]*)")
_TAG_PREFIX_OK = frozenset(" \t\n(（【「『，、：;；,")
_HEX_COLOUR = re.compile(r"[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(\S+)")
_SUMMARY_CHARS = 280
# A key in markdown-it's env: the inline rules note where each link target stands in the
# inline source (``kb.parse.spans`` asks, for ``kb mv``); ingest does not pay for it.
_WANTS_SPANS = "kb_spans"


class TooDeep(ValueError):
    """The body nests blocks as deep as markdown-it parses, so part of it may be missing."""


@dataclass(slots=True)
class MarkdownParts:
    headings: list[Heading] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    text: str = ""
    code: str = ""
    summary: str = ""
    first_h1: str = ""


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] not in "[!":
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None or not _names_a_note(match, state):
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match.group(2)
        token.meta = {"embed": bool(match.group(1))}
        if _WANTS_SPANS in state.env:
            token.meta["span"] = _wikilink_name_span(match)
    state.pos = match.end()
    return True


def _wikilink_name_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the note's name stands in ``[[name#anchor|label]]``, spaces around it left out."""
    inner, start = match.group(2), match.start(2)
    end = len(inner)
    for mark in ("\\|", "|", "#"):
        found = inner.find(mark)
        if found != -1:
            end = min(end, found)
    name = inner[:end]
    lead = len(name) - len(name.lstrip())
    return start + lead, start + len(name.rstrip())


def _names_a_note(match: re.Match[str], state: StateInline) -> bool:
    """Whether a `[[ … ]]` is a wikilink: not empty, not shell syntax (`[[ -f x ]]`), not
    a Markdown link whose text is in brackets (`[[asc]](url)`) and not a bracketed
    reference link (`[[1]]` with `[1]: url` defined)."""
    inner = match.group(2)
    if not inner.strip() or _SHELL_TEST.search(inner):
        return False
    if state.src[match.end() : match.end() + 1] in ("(", "["):
        return False
    references = state.env.get("references", {}) if isinstance(state.env, dict) else {}
    return not (references and normalizeReference(inner) in references)


def _link_rule(state: StateInline, silent: bool) -> bool:
    """CommonMark's link rule, marking links written reference-style (``[text][label]``)."""
    start, tokens_before = state.pos, len(state.tokens)
    if not commonmark_link(state, silent):
        return False
    if not silent:
        opening = next((t for t in state.tokens[tokens_before:] if t.type == "link_open"), None)
        if opening is not None:
            if not state.src[start : state.pos].endswith(")"):
                opening.meta["reference"] = True
            elif _WANTS_SPANS in state.env:
                opening.meta["span"] = _destination_span(state, start)
    return True


def _image_rule(state: StateInline, silent: bool) -> bool:
    """CommonMark's image rule, noting where an inline image's source stands when asked."""
    start, tokens_before = state.pos, len(state.tokens)
    if not commonmark_image(state, silent):
        return False
    if not silent and _WANTS_SPANS in state.env and state.src[start : state.pos].endswith(")"):
        image = next((t for t in state.tokens[tokens_before:] if t.type == "image"), None)
        if image is not None:
            image.meta["span"] = _destination_span(state, start + 1)
    return True


def _destination_span(state: StateInline, label_start: int) -> tuple[int, int] | None:
    """Where the destination of the inline link whose label opens at ``label_start``
    stands in ``state.src`` (inside ``<…>`` when written so), as markdown-it found it."""
    label_end = state.md.helpers.parseLinkLabel(state, label_start, True)
    if label_end < 0 or state.src[label_end + 1 : label_end + 2] != "(":
        return None
    pos = label_end + 2
    while pos < state.posMax and state.src[pos] in " \t\n":
        pos += 1
    found = state.md.helpers.parseLinkDestination(state.src, pos, state.posMax)
    if not found.ok:
        return None
    if state.src[pos : pos + 1] == "<":
        return pos + 1, found.pos - 1
    return pos, found.pos


def _liquid_link_rule(state: StateInline, silent: bool) -> bool:
    # ![alt]({{ site.url }}/a.png) is an image, as on the site.
    image = state.src.startswith("![", state.pos)
    if state.src[state.pos] != "[" and not image:
        return False
    match = _LIQUID_LINK.match(state.src, state.pos + image)
    if match is None or not (match.group(2) or match.group(3)):
        return False
    if not silent:
        token = state.push("liquid_link", "", 0)
        tag, name, path = match.group(3), match.group(4), match.group(5)
        token.content = name or path or ""
        kinds = {"link": "liquid-link", "post_url": "liquid-post"}
        token.meta = {
            "text": match.group(1),
            "kind": "image" if image and not tag else kinds.get(tag or "", "markdown"),
        }
    state.pos = match.end()
    return True


def _hugo_ref_rule(state: StateInline, silent: bool) -> bool:
    char = state.src[state.pos]
    if char == "[":
        match = _HUGO_REF_LINK.match(state.src, state.pos)
        text_group, target_group = 1, 2
    elif char == "{":
        match = _HUGO_REF.match(state.src, state.pos)
        text_group, target_group = 0, 2
    else:
        return False
    if match is None:
        return False
    if not silent:
        token = state.push("hugo_ref", "", 0)
        token.content = match.group(target_group)
        token.meta = {"text": match.group(text_group) if text_group else ""}
        if _WANTS_SPANS in state.env:
            token.meta["span"] = (match.start(target_group), match.end(target_group))
    state.pos = match.end()
    return True


def _hashtag_rule(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if state.src[pos] != "#" or (pos > 0 and state.src[pos - 1] not in _TAG_PREFIX_OK):
        return False
    match = _HASHTAG.match(state.src, pos)
    if match is None:
        return False
    tag = match.group(1).rstrip("/-")
    if tag.isdigit() or (_HEX_COLOUR.fullmatch(tag) and any(c.isdigit() for c in tag)):
        return False
    if not silent:
        token = state.push("hashtag", "", 0)
        token.content = tag
    state.pos = pos + 1 + len(tag)
    return True


@cache
def markdown_parser() -> MarkdownIt:
    from mdit_py_plugins.footnote import footnote_plugin  # deferred: loads mdit_py_plugins

    # markdown-it drops the rest of a block nested deeper than maxNesting (20 by default, and
    # real notes reach 13): kb raises it, and keeps a body that reaches it as plain text.
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin)
    md.inline.ruler.at("link", _link_rule)
    md.inline.ruler.at("image", _image_rule)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "liquid_link", _liquid_link_rule)
    md.inline.ruler.before("wikilink", "hugo_ref", _hugo_ref_rule)
    md.inline.ruler.after("text", "hashtag", _hashtag_rule)
    # Keep link targets as written (no percent-encoding); resolution decodes them itself.
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]
    return md


def parse_markdown(body: str, first_line: int = 1) -> MarkdownParts:
    """Parse a Markdown body whose first line is line ``first_line`` of the file.

    Raises ``TooDeep`` rather than return a body with missing parts."""
    env: dict = {}
    tokens = markdown_parser().parse(body, env)
    if any(token.level >= MAX_NESTING - 1 for token in tokens):
        raise TooDeep(f"blocks nested {MAX_NESTING} levels deep, the limit")
    walker = _Walker(first_line)
    walker.walk(tokens)
    walker.add_unused_references(env.get("references", {}), body)
    return walker.result()


def parse_for_spans(body: str) -> tuple[list[Token], dict]:
    """The body's tokens and env as ``parse_markdown`` sees them, each link token noting
    in ``meta["span"]`` where its target stands in its inline source (``kb.parse.spans``)."""
    env: dict = {_WANTS_SPANS: True}
    return markdown_parser().parse(body, env), env


def plain_parts(body: str) -> MarkdownParts:
    """A body kept as plain text, unparsed: searchable, with no headings, links or tags."""
    # Only the head becomes the summary: splitting megabytes into words would cost memory.
    head = " ".join(body[: _SUMMARY_CHARS * 4].split())
    return MarkdownParts(text=body, summary=_shorten(head, _SUMMARY_CHARS))


class _Walker:
    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.parts = MarkdownParts()
        self.blocks: list[str] = []
        self.code_blocks: list[str] = []
        self.slug_counts: dict[str, int] = {}
        self.used_hrefs: set[str] = set()
        self.tags_seen: set[str] = set()

    def walk(self, tokens: list[Token]) -> None:
        heading_level = 0
        paragraph_depth = -1
        for token in tokens:
            line = self.first_line + token.map[0] if token.map else self.first_line
            if token.type == "heading_open":
                heading_level = int(token.tag[1])
            elif token.type == "heading_close":
                heading_level = 0
            elif token.type == "paragraph_open" and not self.parts.summary:
                paragraph_depth = token.level
            elif token.type == "inline":
                text = self.walk_inline(token.children or [], line)
                if heading_level:
                    self.add_heading(heading_level, text, line)
                elif token.level == paragraph_depth + 1 and not self.parts.summary and text:
                    self.parts.summary = _shorten(" ".join(text.split()), _SUMMARY_CHARS)
                if text:
                    self.blocks.append(text)
            elif token.type in ("fence", "code_block"):
                self.code_blocks.append(token.content)
            elif token.type == "html_block":
                # Liquid between HTML tags (a Jekyll page's loops) is no more text than the tags.
                text = strip_site_markup(_strip_tags(token.content)).strip()
                if text:
                    self.blocks.append(text)

    def walk_inline(self, children: list[Token], line: int) -> str:
        out: list[str] = []
        in_link = 0
        for index, child in enumerate(children):
            kind = child.type
            if kind == "text":
                out.append(strip_site_markup(child.content))
            elif kind == "code_inline":
                out.append(child.content)
            elif kind in ("softbreak", "hardbreak"):
                out.append("\n")
                line += 1
            elif kind == "link_open":
                in_link += 1
                link_kind: LinkKind = "reference" if child.meta.get("reference") else "markdown"
                href = str(child.attrs.get("href", ""))
                self.add_href(href, link_kind, line, _link_text(children, index))
            elif kind == "link_close":
                in_link = max(0, in_link - 1)
            elif kind == "image":
                self.add_href(str(child.attrs.get("src", "")), "image", line, child.content)
                out.append(child.content)
            elif kind == "wikilink":
                out.append(self.add_wikilink(child, line))
            elif kind == "liquid_link":
                text = child.meta["text"]
                self.add_link(child.content, child.meta["kind"], line, text)
                out.append(text)
            elif kind == "hugo_ref":
                target = child.content
                text = child.meta.get("text", "")
                self.add_link(target, "hugo-ref", line, text)
                out.append(text)
            elif kind == "hashtag":
                out.append("#" + child.content)
                if not in_link:
                    self.add_tag(child.content)
        return "".join(out).strip()

    def add_href(self, href: str, kind: LinkKind, line: int, text: str) -> None:
        self.used_hrefs.add(href)
        self.add_link(href, kind, line, text)

    def add_link(self, href: str, kind: LinkKind, line: int, text: str = "") -> None:
        href = href.strip()
        if kind != "image" and (_SCHEME.match(href) or href.startswith("//")):
            self.parts.links.append(Link(href, "url", line, "", text))
            return
        target, _, anchor = href.partition("#")
        if not target and anchor and kind != "image":
            kind = "anchor"
        self.parts.links.append(Link(target, kind, line, anchor, text))

    def add_wikilink(self, token: Token, line: int) -> str:
        inner = token.content.replace("\\|", "|")
        target, _, label = inner.partition("|")
        name, _, anchor = target.partition("#")
        name, anchor, label = name.strip(), anchor.strip(), label.strip()
        kind: LinkKind = "embed" if token.meta.get("embed") else "wikilink"
        if not name and anchor:
            kind = "anchor"
        self.parts.links.append(Link(name, kind, line, anchor, label))
        return label or name

    def add_heading(self, level: int, text: str, line: int) -> None:
        text, custom_id = _split_heading_id(" ".join(text.split()))
        slug = custom_id or slugify(text)
        seen = self.slug_counts.get(slug, 0)
        self.slug_counts[slug] = seen + 1
        if seen:
            slug = f"{slug}-{seen}"
        self.parts.headings.append(Heading(level, text, slug, line))
        if level == 1 and not self.parts.first_h1:
            self.parts.first_h1 = text

    def add_tag(self, tag: str) -> None:
        if tag.lower() not in self.tags_seen:
            self.tags_seen.add(tag.lower())
            self.parts.tags.append(tag)

    def add_unused_references(self, references: dict, body: str) -> None:
        """Reference definitions that no link used still name a target (Foam writes these)."""
        if not references:
            return
        lines_by_label: dict[str, int] = {}
        for index, text in enumerate(body.split("\n")):
            match = _REFERENCE_DEF.match(text)
            if match:
                lines_by_label.setdefault(match.group(1).strip().upper(), self.first_line + index)
        for label, ref in references.items():
            href = str(ref.get("href", ""))
            if href in self.used_hrefs:
                continue
            line = lines_by_label.get(label.upper(), self.first_line)
            self.add_link(href, "reference", line, ref.get("title") or label.title())

    def result(self) -> MarkdownParts:
        self.parts.text = "\n".join(self.blocks)
        self.parts.code = "\n".join(self.code_blocks)
        return self.parts


def _link_text(siblings: list[Token], start: int) -> str:
    """The text of the link opened at ``siblings[start]`` (by index: finding the token by
    equality was quadratic in the links of a paragraph)."""
    words = []
    for index in range(start + 1, len(siblings)):
        if siblings[index].type == "link_close":
            break
        words.append(siblings[index].content)
    return "".join(words)


def _split_heading_id(text: str) -> tuple[str, str]:
    """``Title {#my-id .class}`` → ``("Title", "my-id")``, the Hugo/Pandoc custom id; else
    ``(text, "")``. String scanning, linear: the regex it replaces was cubic on ``{###…``."""
    if not text.endswith("}"):
        return text, ""
    brace = text.rfind("{")
    inner = text[brace + 1 : -1]
    if brace == -1 or "}" in inner:
        return text, ""
    # The first `#` followed by a character of the id; the id runs to the next space.
    hash_at = inner.find("#")
    while hash_at != -1 and (hash_at + 1 == len(inner) or inner[hash_at + 1].isspace()):
        hash_at = inner.find("#", hash_at + 1)
    if hash_at == -1:
        return text, ""
    return text[:brace].rstrip(), inner[hash_at + 1 :].split(maxsplit=1)[0]


# What a site generator reads and a reader never sees: kramdown attribute lists
# ({: .prompt-info }), Hugo shortcodes ({{< figure src="x" >}}, {{% notice %}}), Liquid
# tags ({% include x.html %}) and the Liquid objects of a Jekyll site ({{ site.url }}).
# Bounded: each runs to the first closing mark on its line.
_SITE_MARKUP = re.compile(
    r"\{:[^{}\n]{0,200}\}|\{\{[<%][^\n]{0,500}?[>%]\}\}|\{%[^\n]{0,500}?%\}"
    r"|\{\{-?\s*(?:site|page|post|layout|include|paginator|jekyll|content|forloop)\b"
    r"[^{}\n]{0,300}?\}\}"
)


def strip_site_markup(text: str) -> str:
    """Text without site-generator markup, each piece replaced by one space."""
    if "{" not in text:
        return text
    return _SITE_MARKUP.sub(" ", text)


def _strip_tags(html: str) -> str:
    """Each ``<…>`` tag replaced by a space, as ``re.sub("<[^>]*>", " ", html)`` would, in
    linear time: that regex rescans to the end from every ``<`` when no ``>`` follows."""
    out = []
    pos = 0
    while (start := html.find("<", pos)) != -1:
        end = html.find(">", start + 1)
        if end == -1:
            break
        out.append(html[pos:start])
        out.append(" ")
        pos = end + 1
    out.append(html[pos:])
    return "".join(out)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"
