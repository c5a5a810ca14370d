"""Output that fits the terminal: tables padded by display width, titles cut at the end and
paths cut in the middle with ``…``, text wrapped by kb's own line breaker.

Only output to a terminal is laid out. Piped, every command prints what it always did: one
record a line, unpadded and uncut, so scripts and ``grep`` see whole paths (docs/terminal-
output.md). The width is the terminal's (``COLUMNS`` first, as ``shutil`` reads it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from functools import cache

import click

from kb.cli.output import highlight

MIN_WIDTH = 20  # narrower than this, lay out as if it were this wide
GAP = "  "  # between the columns of a table


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (the one seam the layout tests patch)."""
    return sys.stdout.isatty()


def terminal_width() -> int | None:
    """The width to lay out for, or None when stdout is not a terminal (print records
    whole, one a line)."""
    if not stdout_is_terminal():
        return None
    return columns()


def columns() -> int:
    """The terminal's width in cells: ``COLUMNS``, else the terminal's own, else 80."""
    import shutil  # deferred: 7 modules more

    return max(shutil.get_terminal_size((80, 24)).columns, MIN_WIDTH)


def share_widths(wanted: Sequence[int], room: int, least: Sequence[int]) -> list[int]:
    """Widths for columns that want ``wanted`` cells in ``room`` cells in all: each gets
    what it wants when they fit; otherwise the widest gives way first, down to ``least``
    (its share then), so a short column is never cut to spare a long one."""
    widths = list(wanted)
    while sum(widths) > room:
        widest = max(range(len(widths)), key=lambda i: widths[i] - least[i])
        if widths[widest] <= least[widest]:
            break  # nothing left to give: the line will be too wide
        widths[widest] -= 1
    return widths


def wrapped_lines(
    text: str,
    width: int,
    indent: str = "",
    spans: Sequence[tuple[int, int]] = (),
    color: bool = False,
    first_indent: str | None = None,
    keep: Sequence[tuple[int, int]] = (),
) -> list[str]:
    """``text`` wrapped at ``width`` cells by kb's line breaker (never inside a Latin word,
    a number or a path, nor inside the spans in ``keep``), each line after ``indent`` (the
    first after ``first_indent`` when given), with the matches in ``spans`` highlighted
    and the text made safe."""
    from kb.linebreak import break_lines, cell_width  # deferred: 4 modules more

    first = indent if first_indent is None else first_indent
    room = max(width - max(cell_width(indent), cell_width(first)), 1)
    text = text.replace("\t", " ")  # one cell, as the breaker counts it; spans stay put
    lines = []
    keep = [*keep, *(match.span() for match in _path_like().finditer(text))]
    for number, (start, end) in enumerate(break_lines(text, room, keep)):
        piece = text[start:end].rstrip(" \n")
        inside = [
            (max(s, start) - start, min(e, start + len(piece)) - start)
            for s, e in spans
            if s < start + len(piece) and e > start
        ]
        lines.append((first if number == 0 else indent) + highlight(piece, inside, color))
    return lines


@cache
def _path_like() -> re.Pattern[str]:
    """A path or URL in running text (``../a/b.md``, ``redis.md#跳表``, ``https://…``): an
    ASCII name up to a ``/`` or ``#``, then anything but spaces, brackets and Chinese
    punctuation. kb's breaker may break between two Chinese characters; not in these."""
    stop = r"\s()\[\]<>{}\"'“”‘’，。；：！？、（）【】《》「」"
    return re.compile(
        rf"(?:[A-Za-z][A-Za-z0-9+.-]*://|\.{{0,2}}/|[A-Za-z0-9_.~%+-]*[A-Za-z0-9][/#])[^{stop}]+"
    )


def echo_lines(lines: Sequence[str], color: bool) -> None:
    """Lines in one write (a long listing is thousands of them)."""
    click.echo("".join(f"{line}\n" for line in lines), nl=False, color=color)
