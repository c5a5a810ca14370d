"""The reader's tables (kb.tui.reader): columns as wide as their text when the page allows,
narrowed to their longest word otherwise, never narrower (the table then scrolls)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.content import Content

from kb.tui.reader import column_widths, table_text


def cells(*rows: tuple[str, ...]) -> list[list[Content]]:
    return [[Content(text) for text in row] for row in rows]


@pytest.mark.parametrize(
    ("rows", "room", "widths"),
    [
        ((("a", "bb"), ("ccc", "d")), 20, [3, 2]),  # all fits: natural widths
        ((("Registers 寄存器", "x"),), 10, [9, 1]),  # the longest word, not less
        ((("一二三四五六", "x"),), 4, [3, 1]),  # Chinese breaks anywhere; spare room given
        ((("约 19 TB/s", "x"),), 4, [7, 1]),  # a number keeps its unit
        ((("（每个 SM）", "x"),), 4, [4, 1]),  # and a word its closing punctuation
        ((("aaaa bbbb cccc", "dd dd dd dd"),), 16, [10, 6]),  # spare room shared by want
        ((("x" * 60, "y"),), 10, [24, 1]),  # a very long word may be folded
    ],
)
def test_column_widths(rows, room, widths) -> None:
    assert column_widths(cells(*rows), room) == widths


def test_the_room_is_used_to_the_last_cell() -> None:
    rows = cells(("a " * 20, "b " * 20, "c " * 20))
    assert sum(column_widths(rows, 50)) == 50


def test_table_text_draws_every_row_whole() -> None:
    text = table_text(
        [Content("存储"), Content("带宽")], cells(("Registers 寄存器", "100 TB/s")), 20
    ).plain.split("\n")
    assert text[0].startswith("┌") and text[-1].startswith("└")
    assert all(line.endswith(("┐", "│", "┤", "┘")) for line in text)
    assert len({cell_len(line) for line in text}) == 1  # one width: a rectangle
    assert any("Registers" in line for line in text)
    assert any("100 TB/s" in line for line in text)
