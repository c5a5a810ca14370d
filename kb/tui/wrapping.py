"""kb's line breaker (kb.linebreak) for everything Textual and Rich wrap in the app.

Textual wraps every ``Content`` (Markdown paragraphs, table cells, option-list entries,
``Static``) and Rich every ``Text`` with ``rich._wrap.divide_line``, which breaks only at
spaces: Chinese lines end half empty and a Latin word glued to Chinese is folded mid-word.
Neither offers a hook, and both call the function through their own module's name, so
``install`` points those names at ``divide_line`` below. It only chooses where lines break
(the offsets ``Content.divide`` splits at): the text is never changed, so what a user copies
or searches is the note's own text.
"""

from __future__ import annotations

from functools import lru_cache

import rich._wrap
import rich.text
import textual.content
from rich.cells import cell_len

from kb.linebreak import break_lines

_rich_divide_line = rich._wrap.divide_line


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where to start each line after the first (``rich._wrap.divide_line``'s contract):
    ``text`` is one line (no ``\\n``), ``width`` is in cells."""
    # Rich's own breaker where kb's rules change nothing, and it is ~3x faster: a line of
    # ASCII breaks at spaces either way (Textual wraps each paragraph several times).
    if width < 1 or text.isascii():
        return _rich_divide_line(text, width, fold)
    if cell_len(text) <= width:
        return []
    return list(_line_starts(text, width))


@lru_cache(maxsize=8192)
def _line_starts(text: str, width: int) -> tuple[int, ...]:
    # Textual lays a paragraph out several times at the same width (measuring, then
    # rendering each pass): the breaks of a (text, width) are worked out once.
    return tuple(start for start, _ in break_lines(text, width)[1:])


def install() -> None:
    """Break lines the kb way in this process's Textual and Rich (idempotent)."""
    textual.content.divide_line = divide_line
    rich.text.divide_line = divide_line
