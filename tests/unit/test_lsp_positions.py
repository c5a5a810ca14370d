"""Positions as editors count them (UTF-16 by default, UTF-8 or UTF-32 when negotiated)
against Python string indexes: Chinese, emoji (surrogate pairs), CRLF, past the end."""

from __future__ import annotations

import pytest

from kb.lsp.positions import (
    UTF8,
    UTF16,
    UTF32,
    LineIndex,
    Position,
    choose_encoding,
    column_of_index,
    index_of_column,
    units,
)

LINE = "见 [[显存😀x"  # 见=1 unit (3 bytes), 😀=2 UTF-16 units (4 bytes)


@pytest.mark.parametrize(
    ("text", "encoding", "expected"),
    [
        ("abc", UTF16, 3),
        ("显存", UTF16, 2),
        ("显存", UTF8, 6),
        ("显存", UTF32, 2),
        ("😀", UTF16, 2),
        ("😀", UTF8, 4),
        ("😀", UTF32, 1),
        ("é", UTF8, 2),
        (LINE, UTF16, 9),
        (LINE, UTF8, 17),
        (LINE, UTF32, 8),
    ],
)
def test_units(text: str, encoding: str, expected: int) -> None:
    assert units(text, encoding) == expected


@pytest.mark.parametrize(
    ("column", "encoding", "index"),
    [
        (0, UTF16, 0),
        (2, UTF16, 2),  # before [[
        (4, UTF16, 4),  # after [[
        (6, UTF16, 6),  # after 显存
        (8, UTF16, 7),  # after 😀 (two units)
        (7, UTF16, 6),  # inside the surrogate pair: the emoji's start
        (9, UTF16, 8),
        (99, UTF16, 8),  # past the end: the end
        (-3, UTF16, 0),
        (4, UTF8, 2),  # 见 is 3 bytes, then a space
        (5, UTF8, 3),  # after the first [
        (6, UTF8, 4),
        (8, UTF8, 4),  # inside 显: its start
        (12, UTF8, 6),
        (16, UTF8, 7),
        (7, UTF32, 7),
    ],
)
def test_index_of_column(column: int, encoding: str, index: int) -> None:
    assert index_of_column(LINE, column, encoding) == index


@pytest.mark.parametrize(
    ("index", "encoding", "column"),
    [
        (0, UTF16, 0),
        (6, UTF16, 6),
        (7, UTF16, 8),
        (8, UTF16, 9),
        (7, UTF8, 16),
        (7, UTF32, 7),
        (50, UTF16, 9),
    ],
)
def test_column_of_index(index: int, encoding: str, column: int) -> None:
    assert column_of_index(LINE, index, encoding) == column


@pytest.mark.parametrize(
    ("text", "position", "offset"),
    [
        ("a\r\nb😀c\r\n", Position(1, 3), 5),  # after the emoji on line 1, CRLF before it
        ("a\r\nb😀c\r\n", Position(1, 99), 6),  # past the line's end: before its CRLF
        ("a\r\nb😀c\r\n", Position(9, 0), 8),  # past the last line: the text's end
        ("a\rb\nc", Position(1, 1), 3),  # a lone CR ends a line too
        ("", Position(0, 5), 0),
    ],
)
def test_line_index_offsets(text: str, position: Position, offset: int) -> None:
    assert LineIndex(text).offset(position, UTF16) == offset


@pytest.mark.parametrize(
    ("text", "offset", "position"),
    [
        ("a\r\nb😀c", 5, Position(1, 3)),
        ("a\r\nb", 2, Position(0, 1)),  # inside the CRLF: the end of line 0
        ("显存\n估算", 4, Position(1, 1)),
        ("x", 99, Position(0, 1)),
    ],
)
def test_line_index_positions(text: str, offset: int, position: Position) -> None:
    assert LineIndex(text).position(offset, UTF16) == position


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (None, UTF16),
        ([], UTF16),
        (["utf-8", "utf-16"], UTF8),
        (["utf-32"], UTF32),
        (["latin-1", "utf-16"], UTF16),
    ],
)
def test_choose_encoding(offered: list[str] | None, chosen: str) -> None:
    assert choose_encoding(offered) == chosen
