"""The search screen's preview: the highlighted result's note, formatted as the reader
formats it (headings, lists, quotes, tables, code, formulas as Unicode), its matched words
highlighted.

It has to be cheap: it changes with every keystroke. So it is built in a worker thread, as
one ``Hanging`` visual that a single ``Static`` shows (no widget per block, as the reader
mounts), and only from the part of the note that fits: its start, or, when the first match
lies below the first screen, the blocks from there on.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from textual.content import Content
from textual.highlight import highlight

from kb.notes.latex import render_math
from kb.text import one_line
from kb.tui.hanging import NO_PREFIX, Hanging, Line, Prefix
from kb.tui.widgets import DIM, HIGHLIGHT, markdown_parser

ROWS = 80  # rows built: about two screens of the preview; the rest of a note is not
BULLETS = ["• ", "▪ ", "‣ ", "⭑ ", "◦ "]  # by depth, as Textual's Markdown draws them
QUOTE = Content.styled("▌ ", DIM)
CODE = Content.styled("▏ ", DIM)
CELL_MAX = 24  # a table column is cut past this many cells: a preview, not the table
HEADING_STYLES = {"h1": "bold underline $accent", "h2": "bold $accent"}


_CUT_PATH = Prefix(Content(), Content(), wrap=False)  # a path is cut in the middle, not wrapped


def preview(
    title: str, path: str, markdown: str, words: list[str], width: int, rows: int = ROWS
) -> Hanging:
    """The preview of a note at ``width`` cells: its title, path, and formatted text."""
    shown, cut = window(markdown, words, width, rows)
    head: list[Line] = [
        (Content.styled(one_line(title), "bold"), NO_PREFIX),
        (Content.styled(one_line(path), DIM), _CUT_PATH._replace(cut=(0, len(one_line(path))))),
        (Content(), NO_PREFIX),
    ]
    if cut:
        head.append((Content.styled("… from the first match", DIM), NO_PREFIX))
    lines = head + markdown_lines(render_math(shown))
    text = highlighted_words(Content("\n").join(line for line, _ in lines), words)
    return Hanging(text, [prefix for _, prefix in lines])


def window(markdown: str, words: list[str], width: int, rows: int) -> tuple[str, bool]:
    """The part of ``markdown`` to show in about ``rows`` rows of ``width`` cells: from the
    top, or from the first block holding a word (with its heading just before it) when
    that block would start below ``rows // 2``. True when the start is cut off."""
    lines = markdown.split("\n")
    blocks = [
        (token.map[0], token.map[1], token.type == "heading_open")
        for token in _block_parser().parse(markdown)
        if token.level == 0 and token.nesting >= 0 and token.map
    ]
    if not blocks:
        return markdown, False

    def height(block: tuple[int, int, bool]) -> int:
        return 1 + sum(cell_len(line) // max(width, 1) + 1 for line in lines[block[0] : block[1]])

    start, above = 0, 0
    folded = [word.casefold() for word in words if word.strip()]
    for index, block in enumerate(blocks):
        text = "\n".join(lines[block[0] : block[1]]).casefold()
        if any(word in text for word in folded):
            if above > rows // 2:
                start = index - 1 if index and blocks[index - 1][2] else index
            break
        above += height(block)
    end, used = start, 0
    while end < len(blocks) and used < rows:
        used += height(blocks[end])
        end += 1
    return "\n".join(lines[blocks[start][0] : blocks[end - 1][1]]), start > 0


@cache
def _block_parser() -> MarkdownIt:
    """Blocks only, for cutting the window (inline parsing is two thirds of the time)."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.enableOnly(["normalize", "block"])
    return parser


def highlighted_words(content: Content, words: list[str]) -> Content:
    """``content`` with each occurrence of each word (any case) highlighted."""
    plain = content.plain.casefold()
    if len(plain) != len(content.plain):  # case folding changed lengths: spans would slip
        plain = content.plain
    for word in {word.casefold() for word in words if word.strip()}:
        start = plain.find(word)
        while start >= 0:
            content = content.stylize(HIGHLIGHT + " underline", start, start + len(word))
            start = plain.find(word, start + len(word))
    return content


def markdown_lines(markdown: str) -> list[Line]:
    """Markdown as lines of text, each with its prefix (bullets, quote bars, code bars)."""
    return _Renderer().render(markdown_parser().parse(markdown))


class _Renderer:
    """Walks markdown-it's tokens, keeping the prefix the next line gets."""

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.indents: list[Content] = []  # one per open list item or quote
        self.first: Content | None = None  # a list item's bullet, for its first line
        self.numbers: list[int | None] = []  # per open list: the next number, or None
        self.table: list[list[Content]] = []

    def render(self, tokens: list[Token]) -> list[Line]:
        inlines = iter(tokens)
        for token in inlines:
            kind = token.type
            if token.level == 0 and token.nesting >= 0 and self.lines:
                self.lines.append((Content(), NO_PREFIX))  # a blank line between blocks
            if kind == "heading_open":
                text = inline_content(next(inlines))
                self.add(text.stylize(HEADING_STYLES.get(token.tag, "bold")))
            elif kind == "inline" and not self.table_open:
                for line in inline_content(token).split("\n", allow_blank=True):
                    self.add(line)
            elif kind in ("bullet_list_open", "ordered_list_open"):
                start = token.attrs.get("start", 1) if kind == "ordered_list_open" else None
                self.numbers.append(int(start) if start is not None else None)
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.numbers.pop()
            elif kind == "list_item_open":
                self.open_item()
            elif kind in ("list_item_close", "blockquote_close"):
                self.indents.pop()
                self.first = None
            elif kind == "blockquote_open":
                self.indents.append(QUOTE)
            elif kind in ("fence", "code_block"):
                self.add_code(token)
            elif kind == "hr":
                self.add(Content.styled("─" * 200, DIM), wrap=False, ellipsis=False)
            elif kind == "html_block":
                for html in token.content.rstrip("\n").split("\n"):
                    self.add(Content.styled(html, DIM), wrap=False)
            else:
                self.table_token(token)
        return self.lines

    @property
    def table_open(self) -> bool:
        return bool(self.table)

    def open_item(self) -> None:
        number = self.numbers[-1] if self.numbers else None
        if number is None:
            depth = sum(1 for n in self.numbers if n is None) - 1
            bullet = BULLETS[depth % len(BULLETS)]
        else:
            bullet = f"{number}. "
            self.numbers[-1] = number + 1
        indent = Content("").join(self.indents)
        self.first = indent + Content.styled(bullet, "$text-primary")
        self.indents.append(Content(" " * cell_len(bullet)))

    def add(self, line: Content, wrap: bool = True, ellipsis: bool = True) -> None:
        indent = Content("").join(self.indents)
        first = self.first if self.first is not None else indent
        self.lines.append((line, Prefix(first, indent, wrap, ellipsis)))
        self.first = None

    def add_code(self, token: Token) -> None:
        language = token.info.split()[0] if token.info.split() else None
        code = highlight(token.content.rstrip("\n"), language=language)
        self.indents.append(CODE)
        for line in code.split("\n", allow_blank=True):
            self.add(line, wrap=False)
        self.indents.pop()

    def table_token(self, token: Token) -> None:
        """Tables: rows of cells, cut to a width, drawn when the table closes."""
        if token.type == "table_open":
            self.table = [[]]
        elif token.type == "tr_close":
            self.table.append([])
        elif token.type == "inline":
            self.table[-1].append(inline_content(token))
        elif token.type == "table_close":
            self.add_table([row for row in self.table if row])
            self.table = []

    def add_table(self, rows: list[list[Content]]) -> None:
        columns = max(len(row) for row in rows) if rows else 0
        widths = [
            min(CELL_MAX, max((row[c].cell_length for row in rows if c < len(row)), default=0))
            for c in range(columns)
        ]
        bar = Content.styled(" │ ", DIM)
        for number, row in enumerate(rows):
            cells = [
                (row[c] if c < len(row) else Content()).truncate(w, ellipsis=True, pad=True)
                for c, w in enumerate(widths)
            ]
            line = bar.join(cells)
            self.add(line.stylize("bold") if number == 0 else line, wrap=False)
            if number == 0:
                rule = Content.styled("─┼─".join("─" * w for w in widths), DIM)
                self.add(rule, wrap=False)


def inline_content(token: Token) -> Content:
    """A paragraph's (or a heading's, a cell's) text with its emphasis, code and links."""
    parts: list[Content] = []
    styles: list[str] = []
    for child in token.children or []:
        kind = child.type
        style = " ".join(styles)
        if kind == "text":
            parts.append(Content.styled(child.content, style))
        elif kind == "softbreak":
            parts.append(Content(" "))
        elif kind == "hardbreak":
            parts.append(Content("\n"))
        elif kind == "code_inline":
            parts.append(Content.styled(child.content, f"{style} $text-warning".strip()))
        elif kind.endswith("_open"):
            styles.append(INLINE_STYLES.get(kind, ""))
        elif kind.endswith("_close") and styles:
            styles.pop()
    return Content("").join(parts)


INLINE_STYLES = {
    "em_open": "italic",
    "strong_open": "bold",
    "s_open": "strike",
    "link_open": "underline",  # an image's placeholder too (kb.tui.images)
}
