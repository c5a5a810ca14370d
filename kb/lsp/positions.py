"""Positions as an editor counts them ↔ positions in Python text.

LSP positions are (line, character) where ``character`` counts code units of the
negotiated encoding: UTF-16 unless the client offers UTF-8 or UTF-32 in
``general.positionEncodings``. Python indexes strings by code point, so a line holding
Chinese (3 UTF-8 bytes, 1 UTF-16 unit) or an emoji (4 bytes, 2 units, a surrogate pair)
needs converting both ways. Lines end at ``\\r\\n``, ``\\n`` or ``\\r`` (the protocol's
rule). A position past the end of a line or of the text is clamped, never an error, and
a position inside a surrogate pair or a UTF-8 sequence moves to the character's start.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
ENCODINGS = (UTF8, UTF16, UTF32)
_LINE_END = re.compile(r"\r\n|\n|\r")


class Position(NamedTuple):
    """A 0-based line and a column in code units of some encoding."""

    line: int
    character: int


def choose_encoding(offered: list[str] | None) -> str:
    """The encoding to use: the client's first offer kb knows, else UTF-16 (the default
    every client must accept)."""
    for name in offered or []:
        if name in ENCODINGS:
            return name
    return UTF16


def char_units(char: str, encoding: str) -> int:
    """How many code units one character takes in ``encoding``."""
    code = ord(char)
    if encoding == UTF32:
        return 1
    if encoding == UTF16:
        return 2 if code > 0xFFFF else 1
    if code < 0x80:
        return 1
    if code < 0x800:
        return 2
    return 3 if code < 0x10000 else 4


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in code units."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def index_of_column(line: str, column: int, encoding: str) -> int:
    """The string index in ``line`` (without its line end) of a column in code units.

    Past the end: the end. Inside a character (half a surrogate pair, part of a UTF-8
    sequence): that character's start."""
    if column <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(column, len(line))
    counted = 0
    for index, char in enumerate(line):
        counted += char_units(char, encoding)
        if counted > column:
            return index
        if counted == column:
            return index + 1
    return len(line)


def column_of_index(line: str, index: int, encoding: str) -> int:
    """The column in code units of the string index ``index`` in ``line``."""
    index = max(0, min(index, len(line)))
    return units(line[:index], encoding)


class LineIndex:
    """Where each line of a text starts, to turn offsets into positions and back."""

    __slots__ = ("ends", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        self.ends: list[int] = []  # where each line's text ends (before its line end)
        for match in _LINE_END.finditer(text):
            self.ends.append(match.start())
            self.starts.append(match.end())
        self.ends.append(len(text))

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, number: int) -> str:
        """A line's text without its line end; '' past the last line."""
        if not 0 <= number < len(self.starts):
            return ""
        return self.text[self.starts[number] : self.ends[number]]

    def offset(self, position: Position, encoding: str) -> int:
        """The string offset of an editor's position, clamped into the text."""
        if position.line < 0:
            return 0
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        return start + index_of_column(self.line(position.line), position.character, encoding)

    def position(self, offset: int, encoding: str) -> Position:
        """The editor's position of a string offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        number = bisect_right(self.starts, offset) - 1
        start = self.starts[number]
        index = min(offset, self.ends[number]) - start  # inside a \r\n: the line's end
        return Position(number, column_of_index(self.line(number), index, encoding))

    def line_and_index(self, position: Position, encoding: str) -> tuple[int, int]:
        """The line (clamped) and the string index in it of an editor's position."""
        number = max(0, min(position.line, len(self.starts) - 1))
        if position.line >= len(self.starts):
            return number, len(self.line(number))
        return number, index_of_column(self.line(number), position.character, encoding)

    def column(self, line: int, index: int, encoding: str) -> int:
        """The column in code units of string index ``index`` on line ``line``."""
        return column_of_index(self.line(line), index, encoding)
