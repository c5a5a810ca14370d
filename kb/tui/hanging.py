"""Lines laid out in a width by kb's line breaker: a list item's text wrapping under its own
first word (the reader's flows, the preview), a path cut in the middle with ``…`` (list
entries in narrow panes). One ``Visual``, so one widget draws any number of lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rich.cells import cell_len
from textual.content import Content, Span
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

from kb.tui.wrapping import divide_line


class Prefix(NamedTuple):
    """What goes before a line: on its first row, and on each row it wraps to. A line that
    does not wrap (code) is cut at the width, with an ellipsis unless told not to; one with
    a ``cut`` span (a path: its start and end offsets) is cut there, in the middle, and
    what follows the span gives way first when it ``yields`` (tags after a path)."""

    first: Content
    rest: Content
    wrap: bool = True
    ellipsis: bool = True
    cut: tuple[int, int] | None = None
    yields: bool = False


Line = tuple[Content, Prefix]
NO_PREFIX = Prefix(Content(), Content())


class Layout(NamedTuple):
    """Lines laid out at a width: the rows, and for each row where its text starts in the
    lines (an offset into their ``Content``) and how many characters of prefix it has."""

    rows: Content
    starts: list[int]
    prefixes: list[int]

    def source_offset(self, x: int, y: int) -> int:
        """The offset in the lines of the character drawn at ``x`` of row ``y``."""
        y = max(0, min(y, len(self.starts) - 1))
        return self.starts[y] + max(0, x - self.prefixes[y])


class Hanging(Visual):
    """Lines of text, each wrapped in the width its prefix leaves: a list item's text wraps
    under its own first word, not under the bullet."""

    def __init__(
        self, content: Content | None, prefixes: list[Prefix], lines: list[Content] | None = None
    ) -> None:
        """The text as one ``content`` (its lines split at ``\\n``), or as its ``lines``
        (a list entry: joined only if asked for, as a search's 30 entries are laid out on
        each keystroke)."""
        self._content = content
        self._given_lines = lines
        self.prefixes = prefixes
        self._laid_out: tuple[int, Layout] | None = None

    @property
    def content(self) -> Content:
        if self._content is None:
            self._content = Content("\n").join(self._given_lines or [])
        return self._content

    def __str__(self) -> str:
        return self.content.plain

    @property
    def spans(self) -> Sequence[Span]:
        """The styled spans of its text, as its ``Content``'s."""
        return self.content.spans

    def lay_out(self, width: int) -> Layout:
        if self._laid_out is not None and self._laid_out[0] == width:
            return self._laid_out[1]
        rows: list[Content] = []
        starts: list[int] = []
        prefixes: list[int] = []
        offset = 0
        for line, (first, rest, wrap, ellipsis, cut, yields) in zip(
            self._lines(), self.prefixes, strict=False
        ):
            room = max(1, width - first.cell_length)
            if not wrap:
                shown = fitted(line, room, cut, yields) if cut else line
                if shown.cell_length > room:
                    shown = shown.truncate(room, ellipsis=ellipsis)
                rows.append(first + shown if first else shown)
                starts.append(offset)
                prefixes.append(len(first))
                offset += len(line) + 1
                continue
            breaks = divide_line(line.plain, room)
            for index, row in enumerate(line.divide(breaks)):
                before = rest if index else first
                rows.append(before + row.rstrip())
                prefixes.append(len(before))
            starts += [offset, *(offset + start for start in breaks)]
            offset += len(line) + 1
        layout = Layout(Content("\n").join(rows), starts, prefixes)
        self._laid_out = (width, layout)
        return layout

    def _lines(self) -> list[Content]:
        if self._given_lines is not None:
            return self._given_lines
        return self.content.split("\n", allow_blank=True)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.lay_out(width).rows.render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lay_out(width).starts)


MIN_CUT = 12  # cells a path cut in the middle keeps: enough for its start and its name


def fitted(line: Content, room: int, cut: tuple[int, int], yields: bool) -> Content:
    """``line`` in ``room`` cells: whole if it fits; else what follows the ``cut`` span
    gives way first, word by word (when it ``yields``), then the span is cut in the middle
    (down to MIN_CUT cells); a line still too wide is cut at its end by the caller."""
    if line.cell_length <= room:
        return line
    start, end = cut
    before, span, after = line[:start], line[start:end], line[end:]
    # What yields gives way a word at a time from its end (a tag is never cut in two).
    while (
        yields
        and after.cell_length
        and (before.cell_length + span.cell_length + after.cell_length > room)
    ):
        after = after[: max(0, after.plain.rstrip().rfind(" "))].rstrip()
    over = before.cell_length + span.cell_length + after.cell_length - room
    if over > 0:
        span = middle_cut(span, max(MIN_CUT, span.cell_length - over))
    return before + span + after


def middle_cut(text: Content, cells: int) -> Content:
    """``text`` in at most ``cells`` cells: its start and its end (a path's file name, a
    little the longer) with ``…`` between. Chinese counts two cells."""
    if text.cell_length <= cells:
        return text
    if cells < 3:
        return text.truncate(cells, ellipsis=True)
    room = cells - 1
    head = _chars_in(text.plain, room // 2)
    tail = _chars_in(text.plain[::-1], room - cell_len(text.plain[:head]))
    return text[:head] + Content("…") + text[len(text.plain) - tail :]


def _chars_in(text: str, cells: int) -> int:
    """How many of ``text``'s first characters fit in ``cells`` cells."""
    used = 0
    for count, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return count
    return len(text)
