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

from collections.abc import Iterable
from typing import NamedTuple

from markdown_it.token import Token
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBulletList,
    MarkdownList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
)

from kb.tui.widgets import markdown_parser
from kb.tui.wrapping import divide_line

BULLET_STYLE = "$text-primary"


class Prefix(NamedTuple):
    """What goes before a line: on its first row, and on each row it wraps to. A line that
    does not wrap (code) is cut at the width, with an ellipsis unless told not to."""

    first: Content
    rest: Content
    wrap: bool = True
    ellipsis: bool = True


Line = tuple[Content, Prefix]
NO_PREFIX = Prefix(Content(), Content())


class Hanging(Visual):
    """Lines of text, each wrapped in the width its prefix leaves: a list item's text wraps
    under its own first word, not under the bullet."""

    def __init__(self, content: Content, prefixes: list[Prefix]) -> None:
        self.content = content
        self.prefixes = prefixes
        self._laid_out: tuple[int, Content, list[int]] | None = None

    def lay_out(self, width: int) -> tuple[Content, list[int]]:
        """The rows at ``width``, and the offset in ``content`` where each row starts."""
        if self._laid_out is not None and self._laid_out[0] == width:
            return self._laid_out[1], self._laid_out[2]
        rows: list[Content] = []
        starts: list[int] = []
        offset = 0
        for line, (first, rest, wrap, ellipsis) in zip(self._lines(), self.prefixes, strict=False):
            room = max(1, width - first.cell_length)
            if not wrap:
                rows.append(first + line.truncate(room, ellipsis=ellipsis))
                starts.append(offset)
                offset += len(line) + 1
                continue
            breaks = divide_line(line.plain, room)
            for index, row in enumerate(line.divide(breaks)):
                rows.append((rest if index else first) + row.rstrip())
            starts += [offset, *(offset + start for start in breaks)]
            offset += len(line) + 1
        laid_out = Content("\n").join(rows)
        self._laid_out = (width, laid_out, starts)
        return laid_out, starts

    def _lines(self) -> list[Content]:
        return self.content.split("\n", allow_blank=True)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.lay_out(width)[0].render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lay_out(width)[1])


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

    def row_of(self, offset: int) -> int:
        """The row (0 first) that shows the character at ``offset`` of the text."""
        starts = self.render().lay_out(self.content_region.width or 80)[1]
        return sum(1 for start in starts[1:] if start <= offset)


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


class Reader(Markdown):
    """The note reader's Markdown widget."""

    BLOCKS = {
        **Markdown.BLOCKS,
        "bullet_list_open": FlatBulletList,
        "ordered_list_open": FlatOrderedList,
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
