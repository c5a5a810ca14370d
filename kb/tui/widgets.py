"""Widgets that show core data as plain text (never markup, never terminal controls) and
post what the user wants."""

from __future__ import annotations

from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from rich.cells import cell_len
from rich.text import Text
from textual.content import Content
from textual.widget import Widget
from textual.widgets import OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from kb.links.connections import Backlink, Mention, Related
from kb.notes.views import NoteSummary, PageLink, TagNode
from kb.search.run import SearchHit
from kb.text import one_line, shown_url, strip_controls
from kb.tui.hanging import Hanging, Prefix
from kb.tui.images import IMAGE_LINK, image_label, image_links
from kb.tui.messages import FilterByTag, FollowLink, OpenNote

HIGHLIGHT = "bold $accent"
DIM = "dim"


def highlighted(text: str, spans: list[tuple[int, int]], style: str = "") -> Content:
    """Note text as Content, with matches styled: the text is never parsed as markup.
    It is made safe piece by piece, so the spans still fit it."""
    pieces, safe_spans, length, last = [], [], 0, 0
    for start, end in spans:
        before, match = strip_controls(text[last:start]), strip_controls(text[start:end])
        pieces += [before, match]
        length += len(before)
        safe_spans.append((length, length + len(match)))
        length += len(match)
        last = end
    pieces.append(strip_controls(text[last:]))
    content = Content("".join(pieces))
    if style:
        content = content.stylize(style)
    for start, end in safe_spans:
        content = content.stylize(HIGHLIGHT, start, end)
    return content


def breadcrumb(trail: list[str], title: str, width: int, back: bool, forward: bool) -> Content:
    """The trail of notes that led here, then the current note's title, in ``width`` cells.
    The title is always whole (unless it alone is wider than the line); the trail gives way
    from the left, oldest first, so the line always ends with the note on screen."""
    head = "◀ " if back else ""
    tail = " ▶" if forward else ""
    title = one_line(title)
    path = "".join(f"{one_line(t)} › " for t in trail)
    room = width - cell_len(head + title + tail)
    if cell_len(path) > room:
        path = "…" + _right_cells(path, room - 1) if room > 1 else ""
    if room < 0:  # a title wider than the line: its start matters most
        title = _left_cells(title, width - cell_len(head + tail) - 1) + "…"
    return Content.assemble(head, (path, DIM), (title, "bold"), tail)


def _right_cells(text: str, cells: int) -> str:
    """The end of ``text`` that fits in ``cells``."""
    while cell_len(text) > cells:
        text = text[1:]
    return text


def _left_cells(text: str, cells: int) -> str:
    """The start of ``text`` that fits in ``cells``."""
    while text and cell_len(text) > cells:
        text = text[:-1]
    return text


def plural(count: int, noun: str) -> str:
    """``1 note``, ``2 notes``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class PathRow(NamedTuple):
    """A row of a list entry that holds a path (or a URL): in a narrow pane it is cut in
    the middle with ``…``, never wrapped; what comes after it gives way first when it
    ``yields`` (tags), else stays (a line number)."""

    before: Content
    path: str
    after: Content = Content()
    yields: bool = False


def entry(rows: list[Content | PathRow], wrap: bool = True) -> Hanging:
    """A list entry: rows of text (wrapped by kb's line breaker, or cut with ``…`` when
    not ``wrap``) and path rows (see ``PathRow``)."""
    lines: list[Content] = []
    prefixes: list[Prefix] = []
    for row in rows:
        if isinstance(row, PathRow):
            path = Content.styled(one_line(row.path), DIM)
            start = len(row.before.plain)
            lines.append(row.before + path + row.after)
            prefixes.append(
                Prefix(Content(), Content(), False, True, (start, start + len(path)), row.yields)
            )
        else:
            lines.append(row)
            prefixes.append(Prefix(Content(), Content(), wrap))
    return Hanging(None, prefixes, lines)


def note_rows(
    title: Content, path: str, date: str | None, tags: list[str]
) -> list[Content | PathRow]:
    """A note's title, then its date, path and tags (the tags give way to the path)."""
    day = (date or "")[:10]
    tag_text = " ".join(f"#{one_line(t)}" for t in tags)
    return [
        title,
        PathRow(
            Content.styled(f"{day}  " if day else "", DIM),
            path,
            Content.styled(f"  {tag_text}" if tag_text else "", DIM),
            yields=True,
        ),
    ]


def note_line(title: str, path: str, date: str | None, tags: list[str]) -> Hanging:
    return entry(note_rows(Content.styled(one_line(title), "bold"), path, date, tags))


def markdown_parser() -> MarkdownIt:
    """The reader's Markdown parser: Textual's own, plus a rule that makes each image a
    titled placeholder (kb.tui.images), and one that makes the parsed text safe, since
    entities such as ``&#x202e;`` decode to characters only while parsing."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("kb_image_links", image_links)
    parser.core.ruler.push("kb_strip_controls", _strip_token_controls)
    return parser


def _strip_token_controls(state: StateCore) -> None:
    tokens = list(state.tokens)
    while tokens:
        token = tokens.pop()
        token.content = strip_controls(token.content)
        token.info = strip_controls(token.info)
        token.attrs = {
            key: strip_controls(value) if isinstance(value, str) else value
            for key, value in token.attrs.items()
        }
        tokens += token.children or []


class ResultList(OptionList):
    """Search results, or the newest notes when the search box is empty."""

    def show_hits(self, hits: list[SearchHit]) -> None:
        self.clear_options()
        wrap = self.has_class("-full")  # compact entries: one row each, cut with …
        options = []
        for hit in hits:
            title, meta = note_rows(
                highlighted(hit.title, hit.title_highlights, "bold"), hit.path, hit.date, hit.tags
            )
            assert isinstance(meta, PathRow)
            meta = meta._replace(after=meta.after + Content.styled(_lacking(hit.missing), DIM))
            # Found by meaning: the passage nearest the query, marked ≈.
            text = (
                Content.styled(f"≈ {hit.snippet}", "$text-accent")
                if hit.near
                else highlighted(hit.snippet, hit.highlights)
            )
            rows = [title, meta, text]
            options.append(Option(entry(rows, wrap), id=str(hit.note_id)))
        self.add_options(options)
        if hits:
            self.highlighted = 0

    def show_notes(self, notes: list[NoteSummary]) -> None:
        self.clear_options()
        wrap = self.has_class("-full")
        self.add_options(
            Option(
                entry(
                    [
                        *note_rows(
                            Content.styled(one_line(n.title), "bold"), n.path, n.date, n.tags
                        ),
                        Content(strip_controls(n.summary)),
                    ],
                    wrap,
                ),
                id=str(n.id),
            )
            for n in notes
        )
        if notes:
            self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(OpenNote(int(event.option.id)))


def _lacking(missing: list[str]) -> str:
    """A result that holds only some of the query's words says which it lacks, dimmed."""
    return f"  · without {', '.join(one_line(w) for w in missing)}" if missing else ""


class TagChip(Static):
    """The tag the results are filtered by, beside the search box; a click removes it."""

    def show_tag(self, tag: str | None) -> None:
        self.display = bool(tag)
        self.update(Content.assemble(("#", DIM), one_line(tag or ""), (" ✕", "bold")))

    def on_mount(self) -> None:
        self.display = False

    def on_click(self) -> None:
        self.post_message(FilterByTag(None))


class TagTree(Tree[str]):
    """Hierarchical tags with counts; choosing one filters the results."""

    def show_tags(self, nodes: list[TagNode]) -> None:
        self.clear()
        self.root.set_label(Text("All notes"))
        self.root.data = ""
        for node in nodes:
            self._add(self.root, node)
        self.root.expand()

    def _add(self, parent: TreeNode[str], node: TagNode) -> None:
        label = Text.assemble(one_line(node.name), (f"  {node.count}", "dim"))
        if node.children:
            branch = parent.add(label, data=node.tag)
            for child in node.children:
                self._add(branch, child)
        else:
            parent.add_leaf(label, data=node.tag)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        self.post_message(FilterByTag(event.node.data or None))


class LinkList(OptionList):
    """The links of the open note, selectable from the keyboard."""

    def show_links(self, links: list[PageLink], images: list[tuple[str, str]]) -> None:
        """The note's links, then its images (``(alt, src)``: Enter opens one)."""
        self.links = links
        self.images = images
        self.clear_options()
        for index, link in enumerate(links):
            label = f"{one_line(link.rel)}: " if link.rel else ""
            text, target = one_line(link.text), link.target
            at = Content.styled(f"  :{link.line}", DIM)
            rows: list[Content | PathRow]
            if link.url:
                # Shown decoded (/wiki/二阶段提交), copied as written (ctrl+y).
                rows = [
                    Content(f"{label}{text}"),
                    PathRow(Content("↗ "), one_line(shown_url(link.url))),
                ]
            elif link.note_id is not None:
                flag = {"missing-heading": "  (no such heading)", "ambiguous": "  (ambiguous)"}.get(
                    link.status, ""
                )
                rows = [
                    Content.assemble(
                        (f"{label}{one_line(link.note_title or '')}", "bold"), (flag, "$warning")
                    ),
                    PathRow(Content.styled("→ ", DIM), target, at),
                ]
            elif link.status in ("attachment", "tag", "category"):
                what = {"tag": "notes with this tag", "category": "notes in this category"}
                rows = [
                    Content.assemble(
                        f"{label}{text}", (f"  ({what.get(link.status, 'file')})", DIM)
                    ),
                    PathRow(Content.styled("· ", DIM), target),
                ]
            else:
                rows = [
                    Content.assemble((f"{label}{text}", "$error"), ("  (unresolved)", DIM)),
                    PathRow(Content.styled("✗ ", DIM), target, at),
                ]
            self.add_option(Option(entry(rows), id=str(index)))
        for index, (alt, src) in enumerate(images):
            line = entry(
                [Content(image_label(alt, src)), PathRow(Content.styled("image ", DIM), src)]
            )
            self.add_option(Option(line, id=f"image-{index}"))
        if links or images:
            self.highlighted = 0
        else:
            self.add_option(Option(Content(EMPTY_LISTS["links"]), disabled=True))

    def highlighted_target(self) -> str:
        """The highlighted link's URL or target, or image's source ('' for none)."""
        if self.highlighted is None or not self.option_count:
            return ""
        option_id = self.get_option_at_index(self.highlighted).id or ""
        if option_id.startswith("image-"):
            return self.images[int(option_id.removeprefix("image-"))][1]
        if not option_id:  # the note links to nothing
            return ""
        link = self.links[int(option_id)]
        return link.url or link.target

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or "0"
        if option_id.startswith("image-"):
            src = self.images[int(option_id.removeprefix("image-"))][1]
            self.post_message(FollowLink(IMAGE_LINK + src))
            return
        link = self.links[int(option_id)]
        if link.note_id is not None:
            anchor = link.target.partition("#")[2]
            self.post_message(OpenNote(link.note_id, anchor))
        else:
            self.post_message(FollowLink(link.url or link.target))


# What an empty list of the note screen says, by the list's id.
EMPTY_LISTS = {
    "links": "This note links to nothing.",
    "backlinks": "No note links here.",
    "mentions": "No note mentions this one's title without linking it.",
    "related": "No related notes.",
    "series": "This note is in no series.",
}


class ConnectionList(OptionList):
    """Backlinks, mentions, related notes or a series: each entry opens a note."""

    def show_backlinks(self, backlinks: list[Backlink]) -> None:
        self._show(
            [
                (
                    b.id,
                    entry(
                        [
                            Content.styled(
                                one_line((f"{b.rel}: " if b.rel else "") + b.title), "bold"
                            ),
                            PathRow(Content(), b.path, Content.styled(f":{b.line}", DIM)),
                        ]
                    ),
                )
                for b in backlinks
            ]
        )

    def show_mentions(self, mentions: list[Mention]) -> None:
        self._show(
            [
                (
                    m.id,
                    entry(
                        [
                            Content.styled(one_line(m.title), "bold"),
                            PathRow(Content(), f"{m.path}:{m.line or ''}"),
                            Content.styled(f"“{one_line(m.context)}”", DIM),
                        ]
                    ),
                )
                for m in mentions
            ]
        )

    def show_related(self, related: list[Related]) -> None:
        self._show(
            [
                (
                    r.id,
                    # One line however narrow the pane: the title, then its reason cut with …
                    entry(
                        [
                            Content.assemble(
                                (one_line(r.title), "bold"), ("  " + one_line(r.reason), DIM)
                            )
                        ],
                        wrap=False,
                    ),
                )
                for r in related
            ]
        )

    def show_series(self, notes: list[NoteSummary], current: int) -> None:
        self._show(
            [
                (
                    n.id,
                    Content.assemble(
                        ("▶ " if n.id == current else "  ", "bold"),
                        (one_line(n.title), "bold" if n.id == current else ""),
                        ("  " + one_line((n.date or "")[:10]), DIM),
                    ),
                )
                for n in notes
            ]
        )
        for index, note in enumerate(notes):
            if note.id == current:
                self.highlighted = index

    def _show(self, entries: list[tuple[int | None, Content | Hanging]]) -> None:
        # A note can appear several times (one backlink per line): ids go in a list,
        # not in option ids, which must be unique.
        self.note_ids = [note_id for note_id, _ in entries]
        self.clear_options()
        self.add_options(Option(line) for _, line in entries)
        if entries:
            self.highlighted = 0
        else:
            self.add_option(Option(Content(EMPTY_LISTS.get(self.id or "", "")), disabled=True))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        note_id = self.note_ids[event.option_index]
        if note_id is not None:
            self.post_message(OpenNote(note_id))


class Finder:
    """Find in a rendered note: the matches of a text, the current one highlighted.

    It searches what the reader shows (each paragraph, heading, table cell and code block
    as rendered), ignoring case, Chinese included, and highlights by restyling the widget's
    own Content, so the note text is never changed."""

    def __init__(self) -> None:
        self.needle = ""
        self.matches: list[tuple[Static, Content, int, int]] = []
        self.index = 0
        self._lit: tuple[Static, Content] | None = None

    def find(self, root: Widget, needle: str) -> None:
        self.forget()
        self.needle = needle
        if not needle:
            return
        wanted = needle.lower()
        for widget in root.query(Static):
            content = widget.content
            if widget.children or not isinstance(content, Content):
                continue
            plain = content.plain
            folded = plain.lower() if len(plain.lower()) == len(plain) else plain
            start = folded.find(wanted)
            while start >= 0:
                self.matches.append((widget, content, start, start + len(needle)))
                start = folded.find(wanted, start + len(needle))

    def step(self, step: int) -> Static | None:
        """Move ``step`` matches on (0: stay), highlight it, and return its widget."""
        self._unlight()
        if not self.matches:
            return None
        self.index = (self.index + step) % len(self.matches)
        widget, content, start, end = self.matches[self.index]
        widget.update(content.stylize("reverse", start, end), layout=False)
        self._lit = (widget, content)
        return widget

    def forget(self) -> None:
        self._unlight()
        self.needle, self.matches, self.index = "", [], 0

    def _unlight(self) -> None:
        if self._lit is not None:
            widget, content = self._lit
            widget.update(content, layout=False)
            self._lit = None
