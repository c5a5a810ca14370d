"""The reader's Markdown widget: Textual's, with far fewer widgets.

Textual's Markdown mounts a widget for every paragraph and four for every list item (a row,
its bullet, a column, the paragraph). A note full of lists became about a thousand widgets,
and Textual's layout and styling grow with that count: the 30 KB benchmark note took
seconds to lay out. Here each run of paragraphs and lists between other blocks (headings,
code, quotes, tables) is one widget, a ``Flow``, which wraps each list item under its own
first word. A list that holds code, a quote or a table is left to Textual.

A flow's text is one ``Content``, a line per paragraph line (a blank one between blocks),
so find-in-note and links work on it as on a paragraph, and the text is never changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it.token import Token
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.content import Content
from textual.selection import Selection
from textual.widgets import Markdown, Static
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBulletList,
    MarkdownList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
    MarkdownTable,
)

from kb.tui.hanging import NO_PREFIX, Hanging, Layout, Line, Prefix
from kb.tui.widgets import markdown_parser
from kb.tui.wrapping import divide_line

BULLET_STYLE = "$text-primary"
BORDER_STYLE = "$primary"


class Flow(MarkdownBlock):
    """Paragraphs and lists drawn by one widget (see the module's docstring)."""

    DEFAULT_CSS = """
    Flow {
        margin: 0 0 1 0;
    }
    """

    def __init__(self, markdown: Markdown, token: Token, lines: list[Line]) -> None:
        super().__init__(markdown, token)
        self.prefixes = [prefix for _, prefix in lines]
        self.set_content(Content("\n").join(line for line, _ in lines))

    def render(self) -> Hanging:
        content = self.content
        assert isinstance(content, Content)  # Static.update is given Content only
        return Hanging(content, self.prefixes)

    def _layout(self) -> Layout:
        return self.render().lay_out(self.content_region.width or 80)

    def row_of(self, offset: int) -> int:
        """The row (0 first) that shows the character at ``offset`` of the text."""
        return sum(1 for start in self._layout().starts[1:] if start <= offset)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """What a mouse selection copies: the note's text between its ends, without the
        bullets, and without a line break where a line was only wrapped."""
        layout = self._layout()
        text = self.render().content.plain
        start = 0 if selection.start is None else layout.source_offset(*selection.start)
        end = len(text) if selection.end is None else layout.source_offset(*selection.end)
        return text[start:end], "\n"


class FlatList(MarkdownList):
    """A list while parsing: its items' text goes into a flow; a list that holds code, a
    quote or a table composes as Textual's."""


class FlatBulletList(FlatList, MarkdownBulletList):
    pass


class FlatOrderedList(FlatList, MarkdownOrderedList):
    pass


def block_lines(block: MarkdownBlock) -> list[Line] | None:
    """A paragraph's or a list's lines for a flow; None for any other block."""
    if isinstance(block, MarkdownParagraph):
        return [(line, NO_PREFIX) for line in block._content.split("\n", allow_blank=True)]
    if isinstance(block, FlatList):
        return list_lines(block, Content())
    return None


def list_lines(block: MarkdownBlock, indent: Content) -> list[Line] | None:
    """The lines of a parsed list (its items' paragraphs, nested lists indented), each with
    its prefix; None when an item holds a block other than a paragraph or a list."""
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    lines: list[Line] = []
    for item, symbol in zip(items, _symbols(block, items), strict=True):
        hang = indent + " " * symbol.cell_length
        first = indent + symbol
        for child in item._blocks:
            if isinstance(child, MarkdownParagraph):
                for line in child._content.split("\n", allow_blank=True):
                    lines.append((line, Prefix(first, hang)))
                    first = hang
            elif isinstance(child, MarkdownList):
                nested = list_lines(child, hang)
                if nested is None:
                    return None
                lines += nested
                first = hang
            else:
                return None
        if not item._blocks:
            lines.append((Content(), Prefix(first, hang)))
    return lines


def _symbols(block: MarkdownBlock, items: list[MarkdownListItem]) -> list[Content]:
    """Each item's bullet, or its number right-aligned, as Textual's lists show them."""
    if not isinstance(block, MarkdownOrderedList):
        return [Content.styled(item.bullet, BULLET_STYLE) for item in items]
    try:
        start = int(items[0].bullet) if items else 1
    except ValueError:
        start = 1
    numbers = [f"{number}. " for number in range(start, start + len(items))]
    size = max((len(number) for number in numbers), default=0)
    return [Content.styled(number.rjust(size + 1), BULLET_STYLE) for number in numbers]


class Table(MarkdownTable):
    """A table drawn by one widget (Textual's makes one per cell): columns as wide as their
    text when the page allows, else narrowed down to their longest word, and wider than the
    page only then, scrolling sideways."""

    DEFAULT_CSS = """
    Table {
        height: auto;
        overflow-x: auto;
        overflow-y: hidden;
        scrollbar-size-horizontal: 1;
    }
    Table > TableText {
        width: auto;
        text-wrap: nowrap;
    }
    """

    def compose(self) -> ComposeResult:
        self._headers, self._rows = self._get_headers_and_rows()
        yield TableText()

    def on_resize(self) -> None:
        width = self.content_region.width
        if width:
            text = self.query_one(TableText)
            text.update(table_text(self._headers, self._rows, width), layout=True)


class TableText(Static):
    """The text of a table, box drawing and all (so find-in-note searches it)."""

    async def action_link(self, href: str) -> None:
        self.post_message(Markdown.LinkClicked(self.query_ancestor(Markdown), href))


MIN_COLUMN = 2  # cells: a Chinese character
MAX_WORD = 24  # cells: a longer word (a URL) may be folded rather than widen its column
# What kb's line breaker keeps on one line: a number with its unit, a run of printable ASCII,
# each with the closing punctuation that may not start the next line.
_WORD = re.compile(r"(?:\d[\d.,]*\s?(?:[A-Za-z/%]+|[\u4e00-\u9fff])|[!-~]+)[。，、；：！？）」』]?")


def column_widths(rows: list[list[Content]], room: int) -> list[int]:
    """Each column's width: as wide as its widest cell if all fit in ``room`` cells (the
    page less the borders); else at least its longest word, the room left shared out by
    how much each column wants more; the minimums even if they do not fit (the table then
    scrolls)."""
    columns = max((len(row) for row in rows), default=0)
    cells = [[row[c].plain if c < len(row) else "" for row in rows] for c in range(columns)]
    natural = [max((cell_len(text) for text in column), default=0) for column in cells]
    if sum(natural) <= room:
        return natural
    least = [
        min(natural[c], max(MIN_COLUMN, *(min(MAX_WORD, cell_len(w)) for w in _words(column))))
        for c, column in enumerate(cells)
    ]
    spare = room - sum(least)
    wants = [n - m for n, m in zip(natural, least, strict=True)]
    if spare <= 0 or not sum(wants):
        return least
    widths = [m + spare * w // sum(wants) for m, w in zip(least, wants, strict=True)]
    # The cells rounding left over go to the columns that want the most.
    for c in sorted(range(columns), key=lambda c: natural[c] - widths[c], reverse=True):
        if sum(widths) < room and widths[c] < natural[c]:
            widths[c] += 1
    return widths


def _words(column: list[str]) -> list[str]:
    return [word for text in column for word in _WORD.findall(text)] or [""]


def table_text(headers: list[Content], rows: list[list[Content]], width: int) -> Content:
    """A table in box drawing, its cells wrapped (kb's line breaking) to fit ``width`` cells
    when they can."""
    body = [headers, *rows] if headers else rows
    columns = max((len(row) for row in body), default=0)
    if not columns:
        return Content()
    widths = column_widths(body, width - 3 * columns - 1)
    lines = [_rule("┌", "┬", "┐", widths)]
    for number, row in enumerate(body):
        if number:
            lines.append(_rule("├", "┼", "┤", widths))
        cells = [row[c] if c < len(row) else Content() for c in range(columns)]
        if headers and number == 0:
            cells = [cell.stylize("bold") for cell in cells]
        wrapped = [_wrap(cell, w) for cell, w in zip(cells, widths, strict=True)]
        for y in range(max(len(cell) for cell in wrapped)):
            parts = [
                cell[y].pad_right(max(0, w - cell[y].cell_length))
                if y < len(cell)
                else Content(" " * w)
                for cell, w in zip(wrapped, widths, strict=True)
            ]
            lines.append(_BAR + _INNER.join(parts) + _END)
    lines.append(_rule("└", "┴", "┘", widths))
    return Content("\n").join(lines)


_BAR = Content.styled("│ ", BORDER_STYLE)
_INNER = Content.styled(" │ ", BORDER_STYLE)
_END = Content.styled(" │", BORDER_STYLE)


def _rule(left: str, middle: str, right: str, widths: list[int]) -> Content:
    return Content.styled(left + middle.join("─" * (w + 2) for w in widths) + right, BORDER_STYLE)


def _wrap(cell: Content, width: int) -> list[Content]:
    line = cell.split("\n")[0] if cell.plain else Content()
    return [row.rstrip() for row in line.divide(divide_line(line.plain, max(width, 1)))]


class Reader(Markdown):
    """The note reader's Markdown widget."""

    BLOCKS = {
        **Markdown.BLOCKS,
        "bullet_list_open": FlatBulletList,
        "ordered_list_open": FlatOrderedList,
        "table_open": Table,
    }

    def _parse_markdown(self, tokens: Iterable[Token]) -> Iterable[MarkdownBlock]:
        """Textual's blocks, each run of paragraphs and lists joined into a flow."""
        run: list[tuple[MarkdownBlock, list[Line]]] = []
        for block in super()._parse_markdown(tokens):
            lines = block_lines(block)
            if lines is not None:
                run.append((block, lines))
                continue
            if run:
                yield self._flow(run)
                run = []
            yield block
        if run:
            yield self._flow(run)

    def _flow(self, run: list[tuple[MarkdownBlock, list[Line]]]) -> MarkdownBlock:
        if len(run) == 1 and isinstance(run[0][0], MarkdownParagraph):
            return run[0][0]  # a lone paragraph: Textual's own widget does
        lines: list[Line] = []
        for _, more in run:
            if lines:
                lines.append((Content(), NO_PREFIX))  # the blank line between blocks
            lines += more
        flow = Flow(self, run[0][0]._token, lines)
        flow.source_range = (run[0][0].source_range[0], run[-1][0].source_range[1])
        return flow

    async def add_rest(self, markdown: str) -> None:
        """Add the rest of a note shown by ``update`` with its first part (the note cut at
        a blank line outside code): its blocks are mounted in one go."""
        parser = (self._parser_factory or markdown_parser)()
        lines_before = self.source.count("\n") + 2
        self._markdown = self.source + "\n\n" + markdown
        async with self.lock:
            blocks = list(self._parse_markdown(parser.parse(markdown)))
            for block in blocks:
                start, end = block.source_range
                block.source_range = (start + lines_before, end + lines_before)
            if blocks:
                await self.mount_all(blocks)
        self._table_of_contents = None
