"""Where to break lines of mixed Chinese/English text for a terminal, without changing it.

``break_lines(text, width)`` returns each line as a ``(start, end)`` span into ``text``. The
spans are contiguous and cover the text, so ``"".join(text[s:e] for s, e in spans) == text``:
a line keeps the spaces it broke at and its ``\\n``; nothing is inserted (no zero-width spaces,
no newlines), so what a user copies or searches is the note's own text. A renderer shows
``text[s:e]`` without its trailing whitespace (Rich: ``Text.divide`` at the starts, then
``rstrip_end(width)``); ``wrap`` does that for plain strings.

The rules, a small subset of UAX #14 with the common Chinese kinsoku:

- a line may break between two East Asian wide characters, between a wide character and a
  Latin one, and after spaces (which hang past the width and are not counted);
- a run of narrow characters (a word, an identifier, a URL, ``0.35``) never breaks inside,
  unless it is wider than the line: then it is split by grapheme where it overflows;
- a number stays with the first character of its unit, spaced or not (``36 秒``, ``8分钟``,
  ``16 GB``);
- closing punctuation (``。，、；：！？）」』`` and the like, half-width ``,.;:!?)]}``) and
  small kana never start a line; opening brackets (``（「『`` and ``([{``) never end one;
  ``——`` and ``……`` stay whole;
- ``\\n`` is a hard break; lines end there as ``str.splitlines`` ends them.

Widths are terminal cells as Rich measures them (``rich.cells``: wide characters are two cells,
combining marks none), the measure Textual renders with, so a line never overflows there.
Tabs count as one cell: expand them first. Rich is imported on the first call, never at import.

uniseg (a full UAX #14) was measured and not used: 4.2 s for a 30 KB note, this takes ~20 ms.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

# Never at the start of a line (UAX #14 CL, CP, IS, EX and NS, restricted to what notes use).
_NO_START = frozenset(
    "。，、；：！？）」』】〕〉》〗〙〛｝］｠”’．｡､｣"
    ",.;:!?)]}%"
    "ー々〻ゝゞヽヾ・ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶ"
    "…‥"
)
# Never at the end of a line (UAX #14 OP and the opening quotes).
_NO_END = frozenset("（「『【〔〈《〖〘〚｛［｟“‘｢([{")
# Never split between two of the same (UAX #14 B2, and IN for the ellipsis).
_PAIRED = frozenset("—…‥")

_ZWJ = "\u200d"

# Character kinds, as bit flags.
_SPACE = 1
_WIDE = 2  # East Asian wide or fullwidth: breaks around it are allowed
_LETTER = 4  # a wide letter (Han, kana, Hangul): what a number's unit starts with
_DIGIT = 8
_EXTEND = 16  # combining mark, variation selector, emoji modifier: never starts a line
_NARROW_OR_WORD = 32  # anything else that is printed: part of a word


def _kind(char: str, width: int) -> int:
    if char in " \t":
        return _SPACE
    category = unicodedata.category(char)
    if category in ("Mn", "Me", "Mc") or _is_extender(char):
        return _EXTEND
    if width == 2:
        return _WIDE | (_LETTER if category[0] == "L" else 0)
    if category == "Nd":
        return _DIGIT
    return _NARROW_OR_WORD


def _is_extender(char: str) -> bool:
    code = ord(char)
    return (
        char == _ZWJ
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
    )


def _measure() -> Callable[[str], int]:
    from rich.cells import get_character_cell_size  # deferred: loads rich

    return get_character_cell_size


def break_lines(
    text: str, width: int, keep: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """Lines of ``text`` at most ``width`` cells wide (trailing spaces not counted), as
    contiguous ``(start, end)`` spans covering ``text``. At least one span, ``(0, 0)`` for
    empty text; a final ``\\n`` ends the last line rather than starting an empty one.

    ``keep`` are ``(start, end)`` spans never broken inside (a path or URL with Chinese in
    it, ``a.md#跳表``, where a break between wide characters would otherwise be allowed),
    unless one is wider than the line."""
    if width < 1:
        raise ValueError(f"width must be at least 1, not {width}")
    kept = bytearray(len(text) + 1) if keep else None
    if kept is not None:
        for keep_start, keep_end in keep:
            kept[keep_start + 1 : keep_end] = b"\1" * max(keep_end - keep_start - 1, 0)
    cell_size = _measure()
    info: dict[str, tuple[int, int]] = {}
    spans: list[tuple[int, int]] = []
    start = 0  # where the current line starts
    column = 0  # cells of text[start:i], trailing spaces included
    last_break = -1  # the last position after start where the line may break
    column_at_break = 0
    before_spaces = 0  # kind of the last non-space character on this line (0: none yet)
    last_printed = ""  # that character
    prev_kind = 0
    prev = ""
    for i, char in enumerate(text):
        if char == "\n":
            spans.append((start, i + 1))
            start, column, last_break, before_spaces, last_printed, prev_kind, prev = (
                i + 1, 0, -1, 0, "", 0, ""
            )  # fmt: skip
            continue
        known = info.get(char)
        if known is None:
            size = max(cell_size(char), 0)
            known = info[char] = (size, _kind(char, size))
        size, kind = known
        if kind == _SPACE:
            column += size
            prev_kind, prev = kind, char
            continue
        if (
            i > start
            and not (kept is not None and kept[i])
            and _may_break(prev, prev_kind, char, kind, last_printed, before_spaces)
        ):
            last_break, column_at_break = i, column
        if column + size > width and i > start and kind != _EXTEND and prev != _ZWJ:
            if last_break > start:
                spans.append((start, last_break))
                start, column = last_break, column - column_at_break
            if column + size > width and i > start:  # a word wider than the line
                cut = _split_point(text, start, i, info)
                spans.append((start, cut))
                start, column = cut, sum(info[c][0] for c in text[cut:i])
        column += size
        prev_kind, prev = kind, char
        last_printed, before_spaces = char, kind
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


def _split_point(text: str, start: int, i: int, info: dict[str, tuple[int, int]]) -> int:
    """Where to split a word that overflows at ``i``: the last grapheme boundary after
    ``start`` that leaves no closing punctuation first and no opening bracket last, else
    ``i`` (the width is the harder limit)."""
    for cut in range(i, start, -1):
        char, prev = text[cut], text[cut - 1]
        if not (char in _NO_START or info[char][1] == _EXTEND or prev in _NO_END or prev == _ZWJ):
            return cut
    return i


def _may_break(
    prev: str, prev_kind: int, char: str, kind: int, last_printed: str, before_spaces: int
) -> bool:
    """May a line start at ``char`` (not a space), after ``prev``? ``last_printed`` is the
    last non-space character before it on the line (``before_spaces`` its kind)."""
    if char in _NO_START or kind == _EXTEND:
        return False
    if prev_kind == _SPACE:
        if not before_spaces or last_printed in _NO_END:
            return False
        # A number keeps its unit: "36 秒", "16 GB".
        return not (before_spaces == _DIGIT and kind & (_LETTER | _NARROW_OR_WORD))
    if prev in _NO_END or prev == _ZWJ or (prev == char and char in _PAIRED):
        return False
    if prev_kind == _DIGIT and kind & _LETTER:
        return False  # "36秒"
    return bool((prev_kind | kind) & _WIDE)


def wrap(text: str, width: int) -> list[str]:
    """The lines ``break_lines`` finds, as a renderer shows them: without the spaces they
    broke at and without their ``\\n``."""
    return [text[start:end].rstrip(" \t\n") for start, end in break_lines(text, width)]


# -- fitting a line into cells: what tables and narrow panes need --------------------------


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes (a Chinese character two, a combining mark none)."""
    if text.isascii() and text.isprintable():  # one cell each: most paths (kb list: 10,000)
        return len(text)
    if "\u200d" in text or "\ufe0f" in text:  # emoji sequences: Rich knows them
        from rich.cells import cell_len  # deferred: loads rich

        return int(cell_len(text))
    return sum(_cells(text))  # as Rich sums them, from a table of the characters met


_SIZES: dict[str, int] = {chr(code): 1 for code in range(0x20, 0x7F)}


def _cells(text: str) -> list[int]:
    """Each character's cells (Rich's measure, kept in ``_SIZES``: a title is measured
    and cut without a Python call per character)."""
    try:
        return list(map(_SIZES.__getitem__, text))
    except KeyError:
        measure = _measure()
        for char in set(text).difference(_SIZES):
            _SIZES[char] = max(measure(char), 0)
        return list(map(_SIZES.__getitem__, text))


def pad(text: str, width: int, cells: int | None = None) -> str:
    """``text`` with spaces after it up to ``width`` cells (``str.ljust`` counts
    characters, so a column of Chinese titles would not line up); ``cells`` is its width
    when the caller has measured it."""
    return text + " " * max(width - (cell_width(text) if cells is None else cells), 0)


def _fitting(text: str, cells: int, from_end: bool) -> int:
    """How many characters of ``text``, from its start (or its end), fit in ``cells``,
    never parting a character from the combining marks after it."""
    sizes = _cells(text[::-1] if from_end else text)
    count = bisect_right(list(accumulate(sizes)), cells)  # the most that fit

    def is_mark(char: str) -> bool:
        return char >= "\u0300" and _kind(char, _SIZES[char]) == _EXTEND

    if from_end:  # a tail must not start with a mark whose base was left out
        while count and is_mark(text[len(text) - count]):
            count -= 1
    else:  # a head must not end before the marks of its last character
        while 0 < count < len(text) and is_mark(text[count]):
            count -= 1
    return count


def cut_end(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: whole when it fits, else its start and ``…``
    (a title: its start says most)."""
    if cell_width(text) <= width:
        return text
    if width < 1:
        return ""
    return text[: _fitting(text, width - 1, from_end=False)].rstrip() + "…"


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: whole when it fits, else its start, ``…`` and
    its end (a path: the folder it starts in and the file name both show). The end gets
    the larger share, and the cut falls after a ``/`` when one is near."""
    if cell_width(text) <= width:
        return text
    if width < 3:
        return cut_end(text, width)
    room = width - 1
    tail_cells = room - room * 2 // 5
    tail_count = _fitting(text, tail_cells, from_end=True)
    tail = text[len(text) - tail_count :] if tail_count else ""
    slash = tail.find("/")
    if 0 <= slash < len(tail) // 3:  # start the end at a folder boundary, when one is near
        tail = tail[slash:]
    head_cells = room - cell_width(tail)
    head = text[: _fitting(text, head_cells, from_end=False)]
    return head + "…" + tail
